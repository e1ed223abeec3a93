#include "bindersim/io/result_json.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "bindersim/io/console.hpp"

namespace bindersim::io {
namespace {

using nlohmann::ordered_json;
using stats::RunResult;
using stats::SchedClass;
using stats::Tier;

std::vector<std::string> keys_of(const ordered_json& j) {
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  return keys;
}

// A run shaped like the published schd-dbg "tiered" baseline: 10,000 calls per class, every
// call of a tier at that tier's average latency.
RunResult schd_dbg_like() {
  RunResult r;
  r.scenario = "schd-dbg";
  r.topology = "sa8155p";
  r.selector = "fifo";
  r.placement = "gki";
  r.seed = 1;
  r.completed = 20'000;
  r.simulated_ns = 4'000'000'000;  // 4 s
  r.tier(SchedClass::kFifo, Tier::kSameCore).record_n(89'000, 9'963);
  r.tier(SchedClass::kFifo, Tier::kSameCluster).record_n(120'000, 13);
  r.tier(SchedClass::kFifo, Tier::kCrossCluster).record_n(140'000, 24);
  r.tier(SchedClass::kOther, Tier::kSameCore).record_n(130'000, 4'623);
  r.tier(SchedClass::kOther, Tier::kSameCluster).record_n(140'000, 3'290);
  r.tier(SchedClass::kOther, Tier::kCrossCluster).record_n(190'000, 2'087);
  for (const auto& cls : r.tiers) {
    for (const auto& h : cls) r.latency.merge(h);
  }
  r.counters = {.cpu_cycles = 143'150'000'000,
                .cache_refs = 21'830'000'000,
                .cache_misses = 1'078'000'000,
                .migrations = 922'848,
                .context_switches = 1'697'000};
  r.process_counters = {.cpu_cycles = 120'000'000'000,
                        .cache_refs = 20'000'000'000,
                        .cache_misses = 1'000'000'000,
                        .migrations = 800'000,
                        .context_switches = 1'600'000};
  r.selection = {.same_cpu = 15'000,
                 .same_cluster = 3'000,
                 .other = 1'990,
                 .none_idle = 10,
                 .nudges_applied = 0,
                 .nudges_declined = 0};
  r.scheduler.governor = "schedutil";
  r.scheduler.clusters = {{"silver", 1'036'800}, {"gold", 1'804'800}, {"prime", 2'841'600}};
  r.scheduler.frequency_changes = 321;
  r.scheduler.newidle_pulls = 12;
  r.scheduler.balance_pulls = 3;
  r.version = "0.1.0";
  r.fingerprint = 0x00c0ffee12345678ULL;
  r.events = 987'654;
  return r;
}

std::string to_text(const RunResult& r) {
  std::ostringstream out;
  write_result_json(r, out);
  return out.str();
}

TEST(ResultJsonTest, KeysAppearInTheDocumentedOrder) {
  // The written text, parsed back preserving order, has every documented key in order.
  const ordered_json j = ordered_json::parse(to_text(schd_dbg_like()));
  EXPECT_EQ(keys_of(j), (std::vector<std::string>{
                            "schema", "scenario", "topology", "selector", "placement", "seed",
                            "transactions", "latency", "tiers", "counters", "process_counters",
                            "selection", "scheduler", "allocator", "provenance"}));
  EXPECT_EQ(j["schema"], "bindersim.result/1");
  EXPECT_EQ(keys_of(j["transactions"]),
            (std::vector<std::string>{"completed", "per_second", "failed"}));
  EXPECT_EQ(keys_of(j["latency"]), (std::vector<std::string>{"count", "mean_ns", "min_ns", "p50_ns",
                                                             "p90_ns", "p99_ns", "max_ns"}));
  EXPECT_EQ(keys_of(j["tiers"]), (std::vector<std::string>{"sched_fifo", "sched_other"}));
  for (const char* cls : {"sched_fifo", "sched_other"}) {
    ASSERT_EQ(keys_of(j["tiers"][cls]),
              (std::vector<std::string>{"same_core", "same_cluster", "cross_cluster"}));
    for (const auto& tier : j["tiers"][cls]) {
      EXPECT_EQ(keys_of(tier),
                (std::vector<std::string>{"count", "share", "mean_ns", "p50_ns", "p90_ns", "p99_ns",
                                          "max_ns", "breakdown"}));
      EXPECT_EQ(keys_of(tier["breakdown"]),
                (std::vector<std::string>{"kernel_ns", "wakeup_ipi_ns", "idle_exit_ns",
                                          "runqueue_wait_ns", "lock_wait_ns", "cache_refill_ns",
                                          "service_ns", "other_ns"}));
    }
  }
  for (const char* scope : {"counters", "process_counters"}) {
    EXPECT_EQ(keys_of(j[scope]),
              (std::vector<std::string>{"cpu_cycles", "cache_refs", "cache_misses", "migrations",
                                        "context_switches"}));
  }
  EXPECT_EQ(keys_of(j["selection"]), (std::vector<std::string>{"decisions", "nudges"}));
  EXPECT_EQ(keys_of(j["selection"]["decisions"]),
            (std::vector<std::string>{"same_cpu", "same_cluster", "other", "none_idle"}));
  EXPECT_EQ(keys_of(j["selection"]["nudges"]), (std::vector<std::string>{"applied", "declined"}));
  EXPECT_EQ(keys_of(j["provenance"]), (std::vector<std::string>{"version", "fingerprint"}));
}

// The selector's parameters follow its name, only when it had any, keys as given (sorted).
TEST(ResultJsonTest, SelectorParametersFollowTheSelectorWhenGiven) {
  RunResult r = schd_dbg_like();
  r.selector_params = R"({"b":1,"check_caller_idle":false})";
  const ordered_json j = ordered_json::parse(to_text(r));
  EXPECT_EQ(keys_of(j),
            (std::vector<std::string>{"schema", "scenario", "topology", "selector",
                                      "selector_params", "placement", "seed", "transactions",
                                      "latency", "tiers", "counters", "process_counters",
                                      "selection", "scheduler", "allocator", "provenance"}));
  EXPECT_EQ(j["selector_params"].dump(), r.selector_params);
  // The tier table's header shows them beside the selector.
  std::ostringstream table;
  print_tier_table(r, table);
  EXPECT_EQ(table.str().rfind(
                "scenario schd-dbg | selector fifo {\"b\":1,\"check_caller_idle\":false} |", 0),
            0u)
      << table.str();
}

TEST(ResultJsonTest, TextUsesTwoSpaceIndentAndEndsWithNewline) {
  // Pretty-printed with two spaces; one trailing newline.
  const std::string text = to_text(schd_dbg_like());
  EXPECT_EQ(text.rfind("{\n  \"schema\": \"bindersim.result/1\",\n", 0), 0u);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_NE(text.substr(text.size() - 2), "\n\n");
}

TEST(ResultJsonTest, ValuesComeFromTheResult) {
  // Names, counts and counters are copied; latencies are integer nanoseconds.
  const ordered_json j = result_to_json(schd_dbg_like());
  EXPECT_EQ(j["scenario"], "schd-dbg");
  EXPECT_EQ(j["topology"], "sa8155p");
  EXPECT_EQ(j["selector"], "fifo");
  EXPECT_EQ(j["placement"], "gki");
  EXPECT_EQ(j["seed"], 1);
  EXPECT_EQ(j["transactions"]["completed"], 20'000);
  EXPECT_EQ(j["transactions"]["per_second"], 5000.0);  // 20,000 calls in 4 s
  EXPECT_EQ(j["latency"]["count"], 20'000);
  EXPECT_EQ(j["latency"]["min_ns"], 89'000);
  EXPECT_EQ(j["latency"]["max_ns"], 190'000);
  EXPECT_TRUE(j["latency"]["mean_ns"].is_number_integer());
  const ordered_json& fifo_core = j["tiers"]["sched_fifo"]["same_core"];
  EXPECT_EQ(fifo_core["count"], 9'963);
  EXPECT_EQ(fifo_core["mean_ns"], 89'000);
  EXPECT_EQ(fifo_core["max_ns"], 89'000);
  EXPECT_EQ(fifo_core["p50_ns"], 89'000);  // bucket bound clamped to the only value
  EXPECT_EQ(j["tiers"]["sched_other"]["cross_cluster"]["p99_ns"], 190'000);
  EXPECT_EQ(j["counters"]["cpu_cycles"], 143'150'000'000ULL);
  EXPECT_EQ(j["counters"]["migrations"], 922'848);
  EXPECT_EQ(j["process_counters"]["cpu_cycles"], 120'000'000'000ULL);
  EXPECT_EQ(j["process_counters"]["context_switches"], 1'600'000);
  EXPECT_EQ(j["selection"]["decisions"]["none_idle"], 10);
  EXPECT_EQ(j["provenance"]["version"], "0.1.0");
}

TEST(ResultJsonTest, MeanIsRoundedToTheNearestNanosecond) {
  // Samples 100 and 101 ns: the mean 100.5 is written as 101.
  RunResult r;
  r.latency.record(100);
  r.latency.record(101);
  r.tier(SchedClass::kOther, Tier::kSameCore) = r.latency;
  const ordered_json j = result_to_json(r);
  EXPECT_EQ(j["latency"]["mean_ns"], 101);
  EXPECT_EQ(j["tiers"]["sched_other"]["same_core"]["mean_ns"], 101);
  EXPECT_EQ(j["latency"]["p50_ns"], 100);
}

TEST(ResultJsonTest, EachPercentileFieldReadsItsOwnPercentile) {
  // Samples 1..100 ns (exact below 2,048 ns): the nearest-rank p50, p90 and p99 are 50, 90 and
  // 99, in the whole run's latency and in a tier's.
  RunResult r;
  for (std::int64_t ns = 1; ns <= 100; ++ns) r.latency.record(ns);
  r.tier(SchedClass::kFifo, Tier::kSameCluster) = r.latency;
  const ordered_json j = result_to_json(r);
  for (const ordered_json* block : {&j["latency"], &j["tiers"]["sched_fifo"]["same_cluster"]}) {
    EXPECT_EQ((*block)["p50_ns"], 50) << *block;
    EXPECT_EQ((*block)["p90_ns"], 90) << *block;
    EXPECT_EQ((*block)["p99_ns"], 99) << *block;
    EXPECT_EQ((*block)["max_ns"], 100) << *block;
  }
}

TEST(ResultJsonTest, AllSixTiersArePresentAndEmptyTiersAreZero) {
  // Only one tier has calls: the other five are written with zeros.
  RunResult r;
  r.tier(SchedClass::kFifo, Tier::kSameCluster).record(5000);
  const ordered_json j = result_to_json(r);
  int present = 0;
  for (const char* cls : {"sched_fifo", "sched_other"}) {
    for (const char* tier : {"same_core", "same_cluster", "cross_cluster"}) {
      ASSERT_TRUE(j["tiers"][cls].contains(tier)) << cls << "/" << tier;
      ++present;
      if (std::string(cls) == "sched_fifo" && std::string(tier) == "same_cluster") continue;
      const ordered_json& t = j["tiers"][cls][tier];
      for (const char* field : {"count", "mean_ns", "p50_ns", "p90_ns", "p99_ns", "max_ns"}) {
        EXPECT_EQ(t[field], 0) << cls << "/" << tier << "/" << field;
      }
      EXPECT_EQ(t["share"], 0.0);
      ASSERT_EQ(t["breakdown"].size(), kBreakdownParts.size()) << cls << "/" << tier;
      for (const auto& part : t["breakdown"]) EXPECT_EQ(part, 0) << cls << "/" << tier;
    }
  }
  EXPECT_EQ(present, 6);
  EXPECT_EQ(j["tiers"]["sched_fifo"]["same_cluster"]["share"], 1.0);
  EXPECT_EQ(j["tiers"]["sched_fifo"]["same_cluster"]["count"], 1);
}

TEST(ResultJsonTest, BreakdownIsTheMeanPerCallOfEachPart) {
  // A tier of 3 calls: each summed part is divided by 3 and rounded to the nearest
  // nanosecond, halves away from zero (2 calls: 3/2 = 1.5 gives 2, -3/2 gives -2). The JSON
  // writes the same means for every tier, by the documented keys.
  RunResult r;
  r.tier(SchedClass::kOther, Tier::kCrossCluster).record_n(20'000, 3);
  r.tier_breakdown(SchedClass::kOther, Tier::kCrossCluster) = {.kernel_ns = 100,      // 33.3
                                                               .wakeup_ipi_ns = 101,  // 33.7
                                                               .idle_exit_ns = 0,
                                                               .runqueue_wait_ns = 150,
                                                               .cache_refill_ns = 4,
                                                               .service_ns = 59'000,
                                                               .other_ns = -5};  // -1.7
  r.tier(SchedClass::kFifo, Tier::kSameCore).record_n(1'000, 2);
  r.tier_breakdown(SchedClass::kFifo, Tier::kSameCore) = {.kernel_ns = 3, .other_ns = -3};
  // A sum on a tier without calls is not divided by zero: the tier writes zeros.
  r.tier_breakdown(SchedClass::kFifo, Tier::kSameCluster).kernel_ns = 500;

  const ordered_json j = result_to_json(r);
  const ordered_json& cross = j["tiers"]["sched_other"]["cross_cluster"]["breakdown"];
  EXPECT_EQ(cross["kernel_ns"], 33);
  EXPECT_EQ(cross["wakeup_ipi_ns"], 34);
  EXPECT_EQ(cross["idle_exit_ns"], 0);
  EXPECT_EQ(cross["runqueue_wait_ns"], 50);
  EXPECT_EQ(cross["cache_refill_ns"], 1);
  EXPECT_EQ(cross["service_ns"], 19'667);
  EXPECT_EQ(cross["other_ns"], -2);
  const ordered_json& core = j["tiers"]["sched_fifo"]["same_core"]["breakdown"];
  EXPECT_EQ(core["kernel_ns"], 2);
  EXPECT_EQ(core["other_ns"], -2);
  EXPECT_EQ(core["service_ns"], 0);
  EXPECT_EQ(j["tiers"]["sched_fifo"]["same_cluster"]["breakdown"]["kernel_ns"], 0);

  // tier_breakdown_mean() gives the same means the document carries.
  const stats::Breakdown mean = tier_breakdown_mean(r, SchedClass::kOther, Tier::kCrossCluster);
  EXPECT_EQ(mean, (stats::Breakdown{.kernel_ns = 33,
                                    .wakeup_ipi_ns = 34,
                                    .idle_exit_ns = 0,
                                    .runqueue_wait_ns = 50,
                                    .cache_refill_ns = 1,
                                    .service_ns = 19'667,
                                    .other_ns = -2}));
}

TEST(ResultJsonTest, SharesOfAClassSumToOne) {
  // Shares are fractions of the class's calls, rounded to 1e-6.
  RunResult r;
  r.tier(SchedClass::kOther, Tier::kSameCore).record(1000);
  r.tier(SchedClass::kOther, Tier::kSameCluster).record(1000);
  r.tier(SchedClass::kOther, Tier::kCrossCluster).record(1000);
  r.tier(SchedClass::kFifo, Tier::kSameCore).record_n(1000, 3);
  r.tier(SchedClass::kFifo, Tier::kCrossCluster).record_n(1000, 1);
  const ordered_json j = result_to_json(r);
  for (const char* cls : {"sched_fifo", "sched_other"}) {
    double sum = 0;
    for (const auto& tier : j["tiers"][cls]) sum += tier["share"].get<double>();
    EXPECT_NEAR(sum, 1.0, 2e-6) << cls;
  }
  EXPECT_EQ(j["tiers"]["sched_fifo"]["same_core"]["share"], 0.75);
  // One third appears with six decimals in the text.
  EXPECT_NE(to_text(r).find("\"share\": 0.333333,"), std::string::npos);
}

TEST(ResultJsonTest, PerSecondIsRoundedToThreeDecimals) {
  // One call in 3 s is 0.333... calls per second, written as 0.333; no time gives 0.
  RunResult r;
  r.completed = 1;
  r.simulated_ns = 3'000'000'000;
  EXPECT_NE(to_text(r).find("\"per_second\": 0.333,"), std::string::npos);
  r.simulated_ns = 0;
  EXPECT_EQ(result_to_json(r)["transactions"]["per_second"], 0.0);
}

TEST(ResultJsonTest, FingerprintIsSixteenLowercaseHexDigits) {
  RunResult r;
  r.fingerprint = 0x00c0ffee12345678ULL;
  EXPECT_EQ(result_to_json(r)["provenance"]["fingerprint"], "00c0ffee12345678");
}

TEST(ResultJsonTest, ProvenanceRecordsTheInputsBetweenVersionAndFingerprint) {
  RunResult r;
  r.version = "0.1.0";
  r.scenario_hash = "6dc37089a67cc7c6";
  r.topology_hash = "02d70319faa2fed0";
  r.overrides = R"([["clients.*.iterations",300],["kernel.placement","mainline"]])";
  const auto provenance = result_to_json(r)["provenance"];
  std::vector<std::string> keys;
  for (const auto& [key, value] : provenance.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"version", "scenario_hash", "topology_hash",
                                            "overrides", "fingerprint"}));
  EXPECT_EQ(provenance["overrides"].dump(), r.overrides);
  // Unknown inputs (a result read from a file written before they were recorded) stay absent.
  EXPECT_EQ(result_to_json(RunResult{})["provenance"].size(), 2u);
}

TEST(ResultJsonTest, EqualResultsGiveByteIdenticalText) {
  // Two separately built equal results; the engine's event count is not part of the output.
  RunResult a = schd_dbg_like();
  RunResult b = schd_dbg_like();
  b.events = a.events + 1000;
  EXPECT_EQ(to_text(a), to_text(b));
  EXPECT_EQ(to_text(a).find("events"), std::string::npos);
}

TEST(ResultJsonTest, OneDifferentSampleChangesTheText) {
  // The slowest call of a tier taking 1 ns longer changes the document (its max is exact).
  RunResult a = schd_dbg_like();
  RunResult b = schd_dbg_like();
  a.tier(SchedClass::kOther, Tier::kSameCluster).record(150'000);
  b.tier(SchedClass::kOther, Tier::kSameCluster).record(150'001);
  EXPECT_NE(to_text(a), to_text(b));
  // A call landing in another tier changes it too, even with the same latency.
  RunResult c = schd_dbg_like();
  RunResult d = schd_dbg_like();
  c.tier(SchedClass::kFifo, Tier::kSameCore).record(89'000);
  d.tier(SchedClass::kFifo, Tier::kSameCluster).record(89'000);
  EXPECT_NE(to_text(c), to_text(d));
}

// Lines of a console printout.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool contains(const std::string& line, const std::string& what) {
  return line.find(what) != std::string::npos;
}

TEST(ConsoleTest, TierTableReproducesThePublishedLayout) {
  // The schd-dbg-like run prints the published numbers: per tier the average in ms, the
  // calls with thousands separators and the share of the class with one decimal.
  std::ostringstream out;
  print_tier_table(schd_dbg_like(), out);
  const std::vector<std::string> lines = lines_of(out.str());
  // header, column titles, six tiers, breakdown title and column titles, six breakdown rows,
  // selection, scheduler
  ASSERT_EQ(lines.size(), 18u);
  EXPECT_TRUE(contains(lines[0], "schd-dbg"));
  EXPECT_TRUE(contains(lines[0], "fifo"));
  EXPECT_TRUE(contains(lines[0], "gki"));
  EXPECT_TRUE(contains(lines[0], "seed 1"));
  EXPECT_TRUE(contains(lines[0], "20,000 calls"));
  EXPECT_TRUE(contains(lines[0], "5,000.0 calls/s"));
  for (const char* title : {"class", "tier", "avg latency", "calls", "share", "p50", "p99"}) {
    EXPECT_TRUE(contains(lines[1], title)) << title;
  }

  struct Row {
    const char* cls;
    const char* tier;
    const char* avg;
    const char* calls;
    const char* share;
  };
  const Row rows[] = {
      {"SCHED_FIFO", "same core", "0.089 ms", "9,963", "99.6%"},
      {"", "same cluster", "0.120 ms", "13", "0.1%"},
      {"", "cross cluster", "0.140 ms", "24", "0.2%"},
      {"SCHED_OTHER", "same core", "0.130 ms", "4,623", "46.2%"},
      {"", "same cluster", "0.140 ms", "3,290", "32.9%"},
      {"", "cross cluster", "0.190 ms", "2,087", "20.9%"},
  };
  for (std::size_t i = 0; i < 6; ++i) {
    const std::string& line = lines[2 + i];
    // The class is named on its first row only.
    if (rows[i].cls[0] != '\0') {
      EXPECT_EQ(line.rfind(rows[i].cls, 0), 0u) << line;
    } else {
      EXPECT_EQ(line.rfind("  ", 0), 0u) << line;
    }
    for (const char* field : {rows[i].tier, rows[i].avg, rows[i].calls, rows[i].share}) {
      EXPECT_TRUE(contains(line, field)) << "'" << field << "' missing in: " << line;
    }
    // Every call of a tier has the same latency, so p50 and p99 equal the average.
    std::size_t count = 0;
    for (std::size_t pos = line.find(rows[i].avg); pos != std::string::npos;
         pos = line.find(rows[i].avg, pos + 1)) {
      ++count;
    }
    EXPECT_EQ(count, 3u) << line;
  }
  // Columns line up: every tier row and the title row have the same width.
  for (std::size_t i = 2; i < 8; ++i) EXPECT_EQ(lines[i].size(), lines[1].size()) << lines[i];
  EXPECT_EQ(lines[8], "breakdown (mean per call, us)");
  EXPECT_TRUE(contains(lines[16], "same cpu 15,000"));
  EXPECT_TRUE(contains(lines[16], "none idle 10"));
  EXPECT_TRUE(contains(lines[16], "applied 0"));
  // Mean frequencies in MHz per cluster, then the migrations and pulls.
  EXPECT_TRUE(contains(lines[17], "schedutil governor"));
  EXPECT_TRUE(contains(lines[17], "silver 1,037, gold 1,805, prime 2,842"));
  EXPECT_TRUE(contains(lines[17], "frequency changes 321"));
  EXPECT_TRUE(contains(lines[17], "migrations 922,848"));
  EXPECT_TRUE(contains(lines[17], "new-idle 12, balance 3"));
}

TEST(ResultJsonTest, BreakdownSumsBeyond64BitsGiveTheirMeans) {
  // 10,000 calls of 999,000 s of service each (a handler that sleeps that long, in a run of
  // 10^6 s) sum to 9.99e18 ns, past 2^63; other_ns sums as far below zero. The means are exact.
  constexpr std::int64_t kCalls = 10'000;
  constexpr std::int64_t kService = 999'000'000'000'000;
  RunResult r;
  r.tier(SchedClass::kOther, Tier::kSameCore).record_n(1'000'000, kCalls);
  stats::BreakdownSums& sums = r.tier_breakdown(SchedClass::kOther, Tier::kSameCore);
  for (std::int64_t i = 0; i < kCalls; ++i) {
    sums += stats::Breakdown{.service_ns = kService, .other_ns = -kService};
  }
  ASSERT_GT(sums.service_ns, static_cast<Int128>(std::numeric_limits<std::int64_t>::max()));
  const ordered_json j = result_to_json(r);
  const ordered_json& core = j["tiers"]["sched_other"]["same_core"]["breakdown"];
  EXPECT_EQ(core["service_ns"], kService);
  EXPECT_EQ(core["other_ns"], -kService);
}

TEST(ConsoleTest, BreakdownBlockShowsTheMeansOfTiersWithCalls) {
  // Two tiers with calls: one breakdown row each, means in microseconds with 3 decimals
  // (1,500 ns per call of kernel work is 1.500 us; -2 ns is -0.002), in the column order of the
  // JSON; tiers without calls get no row. Rows are as wide as the column titles.
  RunResult r;
  r.tier(SchedClass::kFifo, Tier::kSameCluster).record_n(30'000, 2);
  r.tier_breakdown(SchedClass::kFifo, Tier::kSameCluster) = {.kernel_ns = 3'000,
                                                             .wakeup_ipi_ns = 8'000,
                                                             .idle_exit_ns = 0,
                                                             .runqueue_wait_ns = 250,
                                                             .cache_refill_ns = 2'000,
                                                             .service_ns = 46'754,
                                                             .other_ns = -4};
  r.tier(SchedClass::kOther, Tier::kCrossCluster).record(123'456);
  r.tier_breakdown(SchedClass::kOther, Tier::kCrossCluster).service_ns = 123'456;
  std::ostringstream out;
  print_tier_table(r, out);
  const std::vector<std::string> lines = lines_of(out.str());
  const auto title = std::find(lines.begin(), lines.end(), "breakdown (mean per call, us)");
  ASSERT_NE(title, lines.end());
  ASSERT_GE(lines.end() - title, 5);  // title, column titles, two rows, selection
  const std::string& columns = title[1];
  const std::string& fifo = title[2];
  const std::string& other = title[3];
  EXPECT_EQ(title[4].rfind("selection:", 0), 0u) << title[4];

  const std::vector<std::string> labels = {"kernel", "wakeup+IPI", "idle exit", "rq wait",
                                           "cache",  "service",    "other"};
  std::size_t previous = 0;
  for (const std::string& label : labels) {
    const std::size_t at = columns.find(label);
    ASSERT_NE(at, std::string::npos) << label;
    EXPECT_GT(at, previous) << label;
    previous = at;
  }
  EXPECT_EQ(fifo.rfind("SCHED_FIFO", 0), 0u) << fifo;
  EXPECT_TRUE(contains(fifo, "same cluster"));
  // The values appear in column order.
  previous = 0;
  for (const char* value :
       {" 1.500", " 4.000", " 0.000", " 0.125", " 1.000", " 23.377", " -0.002"}) {
    const std::size_t at = fifo.find(value, previous);
    ASSERT_NE(at, std::string::npos) << value << " in: " << fifo;
    previous = at + 1;
  }
  EXPECT_EQ(other.rfind("SCHED_OTHER", 0), 0u) << other;
  EXPECT_TRUE(contains(other, "cross cluster"));
  EXPECT_TRUE(contains(other, " 123.456"));
  EXPECT_EQ(fifo.size(), columns.size());
  EXPECT_EQ(other.size(), columns.size());
}

TEST(ConsoleTest, BinderThroughputTermsAndBothCounterScopes) {
  // The schd-dbg-like run read as binderThroughputTest with 8 workers and 8 clients: 2,500
  // iterations each in 4 s is 5,000 iterations per sec; the averages and the true percentiles
  // in ms; the older tool's bucket midpoints (p50 130 us in the first bucket: 0.195 ms); then
  // the counters of every task and of the benchmark's threads, per call as well.
  std::ostringstream out;
  print_binder_throughput(schd_dbg_like(), 8, 8, out);
  const std::vector<std::string> lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 7u) << out.str();
  EXPECT_EQ(lines[0], "binderThroughputTest terms (8 workers, 2,500 iterations each)");
  EXPECT_EQ(lines[1], "iterations per sec: 5000.0");
  EXPECT_TRUE(contains(lines[2], "worst: 0.190ms best: 0.089ms")) << lines[2];
  EXPECT_TRUE(contains(lines[4], "50%: 0.195ms")) << lines[4];
  EXPECT_EQ(lines[5].rfind("counters (all tasks): cpu-cycles 143,150,000,000 |", 0), 0u)
      << lines[5];
  EXPECT_TRUE(contains(lines[5], "cpu-migrations 922,848"));
  EXPECT_TRUE(contains(lines[5], "per call: 7157500 cycles, 46.14 migrations, 84.85 switches"))
      << lines[5];
  EXPECT_EQ(lines[6].rfind("counters (benchmark): cpu-cycles 120,000,000,000 |", 0), 0u)
      << lines[6];
  EXPECT_TRUE(contains(lines[6], "per call: 6000000 cycles, 40.00 migrations, 80.00 switches"))
      << lines[6];
}

TEST(ConsoleTest, BinderThroughputTermsWithoutCallsStateNoLatencyAndNoPerCallValue) {
  // A run stopped before its first call: no latency to state, no bucket midpoint to name and
  // nothing to divide the counters by.
  RunResult r;
  r.counters.cpu_cycles = 112'061;
  std::ostringstream out;
  print_binder_throughput(r, 8, 8, out);
  const std::vector<std::string> lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 7u) << out.str();
  EXPECT_EQ(lines[2], "average: - worst: - best: -");
  EXPECT_EQ(lines[3], "percentiles: -");
  EXPECT_EQ(lines[4], "128-bucket midpoints: -");
  EXPECT_TRUE(contains(lines[5], "cpu-cycles 112,061 |")) << lines[5];
  EXPECT_TRUE(contains(lines[5], "| per call: -")) << lines[5];
  EXPECT_TRUE(contains(lines[6], "| per call: -")) << lines[6];
}

TEST(ConsoleTest, NoBreakdownBlockWithoutCalls) {
  // A run without calls prints no breakdown block.
  std::ostringstream out;
  print_tier_table(RunResult{}, out);
  EXPECT_FALSE(contains(out.str(), "breakdown"));
}

TEST(ConsoleTest, EmptyTierShowsNoLatency) {
  // A tier without calls prints 0 calls, 0.0% and "-" instead of latencies.
  RunResult r;
  r.tier(SchedClass::kFifo, Tier::kSameCore).record(50'000);
  std::ostringstream out;
  print_tier_table(r, out);
  const std::vector<std::string> lines = lines_of(out.str());
  ASSERT_GE(lines.size(), 4u);
  EXPECT_TRUE(contains(lines[2], "0.050 ms"));
  EXPECT_TRUE(contains(lines[2], "100.0%"));
  EXPECT_TRUE(contains(lines[3], "same cluster"));
  EXPECT_TRUE(contains(lines[3], " 0.0%"));
  EXPECT_TRUE(contains(lines[3], " - "));
  EXPECT_FALSE(contains(lines[3], "ms"));
}

TEST(ConsoleTest, P50AndP99ColumnsShowTheMedianAndTheTail) {
  // A tier of 90 calls at 50 us and 10 at 500 us: its median is the fast calls' latency and its
  // 99th percentile the slow ones', in the p50 and p99 columns, in that order (in ms).
  RunResult r;
  stats::Histogram& h = r.tier(SchedClass::kFifo, Tier::kSameCore);
  h.record_n(50'000, 90);
  h.record_n(500'000, 10);
  ASSERT_LT(h.percentile(0.50), h.percentile(0.99));
  std::ostringstream out;
  print_tier_table(r, out);
  const std::vector<std::string> lines = lines_of(out.str());
  ASSERT_GE(lines.size(), 3u);
  std::istringstream row(lines[2]);
  std::vector<double> latencies_ms;
  for (std::string word, previous; row >> word; previous = word) {
    if (word == "ms") latencies_ms.push_back(std::stod(previous));
  }
  ASSERT_EQ(latencies_ms.size(), 3u) << lines[2];  // avg, p50, p99
  EXPECT_NEAR(latencies_ms[1], static_cast<double>(h.percentile(0.50)) / 1e6, 5e-4) << lines[2];
  EXPECT_NEAR(latencies_ms[2], static_cast<double>(h.percentile(0.99)) / 1e6, 5e-4) << lines[2];
}

TEST(ConsoleTest, SelectionLineNamesEachCountBesideItsValue) {
  // Every count of the selection line follows its own name.
  RunResult r;
  r.selection = {.same_cpu = 1,
                 .same_cluster = 2,
                 .other = 3,
                 .none_idle = 4,
                 .nudges_applied = 5,
                 .nudges_declined = 6};
  std::ostringstream out;
  print_tier_table(r, out);
  EXPECT_TRUE(contains(out.str(),
                       "selection: same cpu 1, same cluster 2, other 3, none idle 4 | nudges: "
                       "applied 5, declined 6\n"))
      << out.str();
}

TEST(ConsoleTest, NumbersTooWideForTheirColumnsStaySeparate) {
  // Calls of 10^14 ns (28 hours; the histograms hold them as their top value, 2^40 ns) print
  // numbers wider than their columns: each still keeps a space from the one before it, in the
  // tier table and in the breakdown.
  RunResult r;
  r.tier(SchedClass::kOther, Tier::kSameCore).record_n(100'000'000'000'000, 3);
  r.tier_breakdown(SchedClass::kOther, Tier::kSameCore) = {.kernel_ns = 300'000'000'000'000,
                                                           .wakeup_ipi_ns = 3'000'000'000'000};
  std::ostringstream out;
  print_tier_table(r, out);
  const std::vector<std::string> lines = lines_of(out.str());
  const auto row = std::find_if(lines.begin(), lines.end(), [](const std::string& line) {
    return line.rfind("SCHED_OTHER", 0) == 0;
  });
  ASSERT_NE(row, lines.end()) << out.str();
  EXPECT_EQ(*row,
            "SCHED_OTHER  same core       1099511.628 ms            3  100.0% 1099511.628 ms "
            "1099511.628 ms");
  const auto title = std::find(lines.begin(), lines.end(), "breakdown (mean per call, us)");
  ASSERT_LT(title + 2, lines.end());
  EXPECT_TRUE(contains(title[2], " 100000000000.000 1000000000.000 ")) << title[2];
}

TEST(ConsoleTest, ComparisonPutsOneColumnPerRun) {
  // Two runs side by side: headed by their selectors, each row carries both runs' values,
  // and every line has the same width.
  RunResult fifo = schd_dbg_like();
  RunResult ctabs = schd_dbg_like();
  ctabs.selector = "ctabs-nudge";
  ctabs.completed = 1'234'567;
  ctabs.selection.nudges_applied = 4'321;
  const std::vector<RunResult> runs = {fifo, ctabs};
  std::ostringstream out;
  print_comparison(runs, out);
  const std::vector<std::string> lines = lines_of(out.str());
  ASSERT_GT(lines.size(), 2u);
  EXPECT_TRUE(contains(lines[0], "fifo"));
  EXPECT_LT(lines[0].find("fifo"), lines[0].find("ctabs-nudge"));
  for (const std::string& line : lines) EXPECT_EQ(line.size(), lines[0].size()) << line;

  auto row = [&lines](const std::string& label) -> std::string {
    for (const std::string& line : lines) {
      if (line.rfind(label + " ", 0) == 0) return line;
    }
    return "";
  };
  EXPECT_TRUE(contains(row("completed calls"), "20,000"));
  EXPECT_TRUE(contains(row("completed calls"), "1,234,567"));
  EXPECT_TRUE(contains(row("nudges applied"), "4,321"));
  EXPECT_TRUE(contains(row("SCHED_OTHER same cluster share"), "32.9%"));
  EXPECT_TRUE(contains(row("SCHED_FIFO cross cluster mean (ms)"), " 0.140 "));
  EXPECT_TRUE(contains(row("cpu migrations"), "922,848"));
  EXPECT_TRUE(contains(row("context switches"), "1,697,000"));
  EXPECT_TRUE(contains(row("latency p99 (ms)"), " 0.190 "));

  // Printing twice gives the same text.
  std::ostringstream again;
  print_comparison(runs, again);
  EXPECT_EQ(out.str(), again.str());
}

}  // namespace
}  // namespace bindersim::io
