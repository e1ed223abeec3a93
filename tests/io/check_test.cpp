#include "bindersim/io/check.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bindersim/common/error.hpp"
#include "bindersim/io/result_json.hpp"

namespace bindersim::io {
namespace {

using nlohmann::json;
using stats::RunResult;
using stats::SchedClass;
using stats::Tier;

// A run shaped like schd-dbg: 10,000 calls per class. SCHED_FIFO's same_cluster (0.13%) and
// cross_cluster (0.24%) tiers are below the default 1% minimum share; the others are above.
RunResult schd_dbg_like() {
  RunResult r;
  r.scenario = "schd-dbg";
  r.topology = "sa8155p";
  r.selector = "ctabs";
  r.placement = "gki";
  r.seed = 1;
  r.completed = 20'000;
  r.simulated_ns = 4'000'000'000;
  r.tier(SchedClass::kFifo, Tier::kSameCore).record_n(89'000, 9'963);
  r.tier(SchedClass::kFifo, Tier::kSameCluster).record_n(120'000, 13);
  r.tier(SchedClass::kFifo, Tier::kCrossCluster).record_n(140'000, 24);
  r.tier(SchedClass::kOther, Tier::kSameCore).record_n(130'000, 4'623);
  r.tier(SchedClass::kOther, Tier::kSameCluster).record_n(140'000, 3'290);
  r.tier(SchedClass::kOther, Tier::kCrossCluster).record_n(190'000, 2'087);
  // SCHED_OTHER cross_cluster per call: 42 us kernel, 12 wakeup, 22 idle exit, 9 run-queue
  // wait, 56 cache refill, 30 service, and 19 us for the rest.
  r.tier_breakdown(SchedClass::kOther, Tier::kCrossCluster) = {.kernel_ns = 42'000 * 2'087,
                                                               .wakeup_ipi_ns = 12'000 * 2'087,
                                                               .idle_exit_ns = 22'000 * 2'087,
                                                               .runqueue_wait_ns = 9'000 * 2'087,
                                                               .cache_refill_ns = 56'000 * 2'087,
                                                               .service_ns = 30'000 * 2'087,
                                                               .other_ns = 19'000 * 2'087};
  // SCHED_FIFO same_core: the parts overshoot the latency by 1 ns per call.
  r.tier_breakdown(SchedClass::kFifo, Tier::kSameCore) = {
      .kernel_ns = 40'000 * 9'963, .service_ns = 49'001 * 9'963, .other_ns = -1 * 9'963};
  for (const auto& cls : r.tiers) {
    for (const auto& h : cls) r.latency.merge(h);
  }
  r.counters = {.cpu_cycles = 3'581'000'000,
                .cache_refs = 546'000'000,
                .cache_misses = 27'000'000,
                .migrations = 23'071,
                .context_switches = 42'425};
  r.selection = {.same_cpu = 14'586,
                 .same_cluster = 3'307,
                 .other = 2'107,
                 .none_idle = 0,
                 .nudges_applied = 0,
                 .nudges_declined = 0};
  r.version = "0.1.0";
  r.scenario_hash = "6dc37089a67cc7c6";
  r.topology_hash = "02d70319faa2fed0";
  r.overrides = R"([["clients.*.iterations",10000]])";
  r.fingerprint = 0x3f9a0c41d2e7b856ULL;
  return r;
}

// The document as a file holds it: written by the real writer, parsed back from text.
json document_of(const RunResult& r) {
  std::ostringstream text;
  write_result_json(r, text);
  return json::parse(text.str());
}

ResultDocument read(const json& value, const std::string& name = "result.json") {
  return read_result(JsonDocument::from_value(value, name));
}

CheckReport check(const json& result, const json& baseline,
                  const Tolerances& tolerances = default_tolerances()) {
  return check_result(read(result, "result.json"), read(baseline, "baseline.json"), tolerances);
}

Tolerances tolerances_from(const std::string& text) {
  return read_tolerances(JsonDocument::parse_text(text, "tol.json"));
}

std::vector<std::string> failed_metrics(const CheckReport& report) {
  std::vector<std::string> out;
  for (const CheckRow& row : report.rows) {
    if (row.status == CheckStatus::kFail) out.push_back(row.metric);
  }
  return out;
}

CheckStatus status_of(const CheckReport& report, const std::string& metric) {
  const CheckRow* row = report.find(metric);
  EXPECT_NE(row, nullptr) << "no row " << metric;
  return row ? row->status : CheckStatus::kReported;
}

// The message of the ConfigError `f` throws ("" when it throws none).
template <typename F>
std::string config_error(F f) {
  try {
    f();
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "";
}

json& tier(json& doc, const char* cls, const char* t) { return doc["tiers"][cls][t]; }

constexpr std::array<const char*, 2> kClassNames = {"sched_fifo", "sched_other"};
constexpr std::array<const char*, 3> kTierNames = {"same_core", "same_cluster", "cross_cluster"};

// ---- reading --------------------------------------------------------------------------------

TEST(ReadResultTest, ReadsWhatTheWriterWrites) {
  // Every field of a written document comes back with the run's values.
  const RunResult run = schd_dbg_like();
  const ResultDocument doc = read(document_of(run));
  EXPECT_EQ(doc.scenario, "schd-dbg");
  EXPECT_EQ(doc.selector, "ctabs");
  EXPECT_EQ(doc.seed, 1u);
  EXPECT_EQ(doc.completed, 20'000u);
  EXPECT_DOUBLE_EQ(doc.per_second, 5000.0);  // 20,000 calls in 4 s
  EXPECT_EQ(doc.latency.count, 20'000u);
  EXPECT_EQ(doc.latency.min_ns, 89'000u);
  EXPECT_EQ(doc.latency.max_ns, 190'000u);
  const TierFields& other_cross = doc.tier(SchedClass::kOther, Tier::kCrossCluster);
  EXPECT_EQ(other_cross.count, 2'087u);
  EXPECT_DOUBLE_EQ(other_cross.share, 0.2087);
  EXPECT_EQ(other_cross.mean_ns, 190'000u);
  EXPECT_EQ(other_cross.breakdown, (stats::Breakdown{.kernel_ns = 42'000,
                                                     .wakeup_ipi_ns = 12'000,
                                                     .idle_exit_ns = 22'000,
                                                     .runqueue_wait_ns = 9'000,
                                                     .cache_refill_ns = 56'000,
                                                     .service_ns = 30'000,
                                                     .other_ns = 19'000}));
  // A negative rest is read back as it is.
  EXPECT_EQ(doc.tier(SchedClass::kFifo, Tier::kSameCore).breakdown.other_ns, -1);
  EXPECT_EQ(doc.tier(SchedClass::kFifo, Tier::kSameCluster).breakdown, stats::Breakdown{});
  EXPECT_EQ(doc.counters.migrations, 23'071u);
  EXPECT_EQ(doc.selection.same_cluster, 3'307u);
  EXPECT_EQ(doc.version, "0.1.0");
  EXPECT_EQ(doc.scenario_hash, "6dc37089a67cc7c6");
  EXPECT_EQ(doc.topology_hash, "02d70319faa2fed0");
  EXPECT_EQ(doc.overrides, R"([["clients.*.iterations",10000]])");
  EXPECT_EQ(doc.fingerprint, "3f9a0c41d2e7b856");
}

TEST(ReadResultTest, InputsAreReadStrictlyAndMayBeAbsent) {
  // A result written before results recorded their inputs has none of the three keys.
  json old = document_of(schd_dbg_like());
  for (const char* key : {"scenario_hash", "topology_hash", "overrides"}) {
    old["provenance"].erase(key);
  }
  const ResultDocument doc = read(old);
  EXPECT_EQ(doc.scenario_hash, "");
  EXPECT_EQ(doc.topology_hash, "");
  EXPECT_EQ(doc.overrides, "");
  EXPECT_EQ(read(document_of(RunResult{})).overrides, "");  // nothing known, nothing written

  const auto error_with = [&](const char* key, const json& value) {
    json bad = document_of(schd_dbg_like());
    bad["provenance"][key] = value;
    return config_error([&] { read(bad); });
  };
  EXPECT_EQ(error_with("scenario_hash", "6DC37089A67CC7C6"),
            "result.json: /provenance/scenario_hash: expected 16 lowercase hex digits, got "
            "\"6DC37089A67CC7C6\"");
  EXPECT_EQ(error_with("topology_hash", 7),
            "result.json: /provenance/topology_hash: expected a string, got 7");
  EXPECT_EQ(error_with("overrides", "clients.*.iterations=1"),
            "result.json: /provenance/overrides: expected an array, got "
            "\"clients.*.iterations=1\"");
  EXPECT_EQ(error_with("overrides", json::parse(R"([["a", 1], ["b"]])")),
            "result.json: /provenance/overrides/1: expected a [path, value] pair, got an array");
  EXPECT_EQ(error_with("overrides", json::parse(R"([["", 1]])")),
            "result.json: /provenance/overrides/0/0: expected a dotted scenario path, got \"\"");
}

TEST(ReadResultTest, ProcessCountersAreReadAndMayBeAbsent) {
  // The process-scope counters come back; a result written before they existed has none, and
  // reads as zero. A malformed one is an error like any other.
  RunResult run = schd_dbg_like();
  run.process_counters.migrations = 12'345;
  json value = document_of(run);
  EXPECT_EQ(read(value).process_counters.migrations, 12'345u);
  value.erase("process_counters");
  EXPECT_EQ(read(value).process_counters.migrations, 0u);
  value["process_counters"] = {{"cpu_cycles", 1}};
  try {
    read(value);
    ADD_FAILURE() << "accepted an incomplete process_counters";
  } catch (const ConfigError& error) {
    EXPECT_NE(std::string(error.what()).find("/process_counters"), std::string::npos)
        << error.what();
  }
}

TEST(ReadResultTest, ABreakdownWrittenBeforeTheLockWaitPartReadsItAsZero) {
  // Results of earlier versions have no lock_wait_ns (their lock waits are in other_ns): a
  // stored baseline stays readable. Every other part is still required.
  RunResult run = schd_dbg_like();
  run.tier_breakdown(SchedClass::kOther, Tier::kCrossCluster).lock_wait_ns = 7'000 * 2'087;
  json value = document_of(run);
  EXPECT_EQ(read(value).tier(SchedClass::kOther, Tier::kCrossCluster).breakdown.lock_wait_ns,
            7'000);
  for (auto& cls : value["tiers"]) {
    for (auto& tier : cls) tier["breakdown"].erase("lock_wait_ns");
  }
  EXPECT_EQ(read(value).tier(SchedClass::kOther, Tier::kCrossCluster).breakdown.lock_wait_ns, 0);
  value["tiers"]["sched_other"]["same_core"]["breakdown"].erase("kernel_ns");
  try {
    read(value);
    ADD_FAILURE() << "accepted a breakdown without kernel_ns";
  } catch (const ConfigError& error) {
    EXPECT_NE(std::string(error.what()).find("kernel_ns"), std::string::npos) << error.what();
  }
}

TEST(ReadResultTest, RejectsAnythingButTheDocumentedLayout) {
  // Each defect is reported with the file and the JSON pointer where it is.
  const json good = document_of(schd_dbg_like());
  struct Case {
    std::string what;
    json doc;
    std::string expected;  // a part of the message
  };
  std::vector<Case> cases;
  {
    json d = good;
    d["schema"] = "bindersim.compare/1";
    cases.push_back({"another schema", d, "result.json: /schema: expected \"bindersim.result/1\""});
  }
  {
    json d = good;
    d["tiers"]["sched_fifo"].erase("same_cluster");
    cases.push_back({"a missing tier", d,
                     "result.json: /tiers/sched_fifo: missing required key \"same_cluster\""});
  }
  {
    json d = good;
    tier(d, "sched_other", "cross_cluster")["share"] = 1.5;
    cases.push_back({"a share above 1", d, "result.json: /tiers/sched_other/cross_cluster/share"});
  }
  {
    json d = good;
    d["latency"]["p95_ns"] = 1;
    cases.push_back({"an unknown key", d, "result.json: /latency/p95_ns: unknown key"});
  }
  {
    json d = good;
    d["counters"]["migrations"] = -1;
    cases.push_back({"a negative count", d, "result.json: /counters/migrations: expected"});
  }
  {
    json d = good;
    d["latency"]["mean_ns"] = 117487.5;
    cases.push_back({"a fractional latency", d, "result.json: /latency/mean_ns: expected"});
  }
  {
    json d = good;
    d["provenance"]["fingerprint"] = "3F9A0C41D2E7B856";
    cases.push_back({"an upper-case fingerprint", d,
                     "result.json: /provenance/fingerprint: expected 16 lowercase hex digits"});
  }
  {
    json d = good;
    d["transactions"]["per_second"] = "fast";
    cases.push_back({"a string rate", d, "result.json: /transactions/per_second: expected"});
  }
  {
    json d = good;
    tier(d, "sched_other", "same_core").erase("breakdown");
    cases.push_back({"a missing breakdown", d,
                     "result.json: /tiers/sched_other/same_core: missing required key "
                     "\"breakdown\""});
  }
  {
    json d = good;
    tier(d, "sched_fifo", "cross_cluster")["breakdown"].erase("service_ns");
    cases.push_back({"a missing breakdown part", d,
                     "result.json: /tiers/sched_fifo/cross_cluster/breakdown: missing required "
                     "key \"service_ns\""});
  }
  {
    json d = good;
    tier(d, "sched_fifo", "same_core")["breakdown"]["kernel_ns"] = -1;
    cases.push_back({"a negative part other than other_ns", d,
                     "result.json: /tiers/sched_fifo/same_core/breakdown/kernel_ns: expected"});
  }
  {
    json d = good;
    tier(d, "sched_other", "cross_cluster")["breakdown"]["other_ns"] = -0.5;
    cases.push_back({"a fractional part", d,
                     "result.json: /tiers/sched_other/cross_cluster/breakdown/other_ns: expected"});
  }
  {
    json d = good;
    tier(d, "sched_other", "same_cluster")["breakdown"]["irq_ns"] = 0;
    cases.push_back({"an unknown breakdown part", d,
                     "result.json: /tiers/sched_other/same_cluster/breakdown/irq_ns: unknown key"});
  }
  {
    json d = good;
    d["scheduler"] = "garbage";
    cases.push_back({"a scheduler that is no object", d, "result.json: /scheduler: expected"});
  }
  {
    json d = good;
    d["scheduler"].erase("governor");
    cases.push_back({"a scheduler without governor", d,
                     "result.json: /scheduler: missing required key \"governor\""});
  }
  {
    json d = good;
    d["scheduler"]["governor"] = "bogus";
    cases.push_back({"a governor the simulator has not", d,
                     "result.json: /scheduler/governor: expected one of performance, "
                     "powersave, schedutil, got \"bogus\""});
  }
  {
    json d = good;
    d["scheduler"]["cpu_busy_share"][0] = 1.5;
    cases.push_back(
        {"a busy share above 1", d, "result.json: /scheduler/cpu_busy_share/0: expected"});
  }
  {
    json d = good;
    d["allocator"]["x"] = 1;
    cases.push_back({"an unknown allocator key", d, "result.json: /allocator/x: unknown key"});
  }
  {
    json d = good;
    d["allocator"]["alloc_lock"]["wait"]["p50_ns"] = "slow";
    cases.push_back({"a lock wait that is no number", d,
                     "result.json: /allocator/alloc_lock/wait/p50_ns: expected"});
  }
  {
    json d = good;
    d["allocator"]["lock"] = "rwlock";
    cases.push_back({"an unknown lock kind", d, "result.json: /allocator/lock: expected one of"});
  }
  cases.push_back({"an array", json::array(), "result.json: /: expected an object"});
  for (const Case& c : cases) {
    const std::string message = config_error([&] { read(c.doc); });
    EXPECT_NE(message.find(c.expected), std::string::npos)
        << c.what << ": got \"" << message << "\"";
  }
}

TEST(ReadResultTest, ALatencyOfTwoToTheFortyNanosecondsIsTheLargestAccepted) {
  // Latencies are clamped to the histograms' largest value, 2^40 ns (1,099,511,627,776): a
  // document holding exactly that reads back; one nanosecond more is an error at its pointer.
  constexpr std::uint64_t kMaxNs = std::uint64_t{1} << 40;
  json d = document_of(schd_dbg_like());
  d["latency"]["max_ns"] = kMaxNs;
  tier(d, "sched_other", "cross_cluster")["p99_ns"] = kMaxNs;
  const ResultDocument doc = read(d);
  EXPECT_EQ(doc.latency.max_ns, kMaxNs);
  EXPECT_EQ(doc.tier(SchedClass::kOther, Tier::kCrossCluster).p99_ns, kMaxNs);

  d["latency"]["max_ns"] = kMaxNs + 1;
  EXPECT_EQ(config_error([&] { read(d); }),
            "result.json: /latency/max_ns: expected an integer in [0, 1099511627776], got "
            "1099511627777");
}

TEST(ReadResultTest, MalformedJsonNamesLineAndColumn) {
  // A syntax error is reported with the file, the line and the column of the offending byte:
  // here the comma in the value position of line 3, column 15.
  const std::filesystem::path path =
      std::filesystem::path(::testing::TempDir()) / "check_test_malformed.json";
  std::ofstream(path) << "{\n  \"schema\": \"bindersim.result/1\",\n  \"scenario\": ,\n}\n";
  const std::string message = config_error([&] { read_result_file(path); });
  EXPECT_EQ(message.rfind(path.string() + ": line 3, column 15: invalid JSON", 0), 0u) << message;
  std::filesystem::remove(path);
}

// ---- comparison by tolerance -----------------------------------------------------------------

TEST(CheckTest, AResultPassesAgainstItself) {
  // Every gated metric is OK with a zero delta; names match.
  const json doc = document_of(schd_dbg_like());
  const CheckReport report = check(doc, doc);
  EXPECT_TRUE(report.passed());
  EXPECT_EQ(report.failures(), 0u);
  for (const CheckRow& row : report.rows) {
    EXPECT_NE(row.status, CheckStatus::kFail) << row.metric;
    EXPECT_EQ(row.delta, 0.0) << row.metric;
  }
  // Each class × tier has its three rows.
  for (const char* cls : kClassNames) {
    for (const char* t : kTierNames) {
      for (const char* metric : {"share", "mean_ns", "p99_ns"}) {
        EXPECT_NE(report.find(std::string("tiers.") + cls + "." + t + "." + metric), nullptr);
      }
    }
  }
}

TEST(CheckTest, TierMeansGrownByHalfAreARegression) {
  // Tier means 50% higher fail for every tier with at least 1% share in the baseline, and only
  // there: the two small SCHED_FIFO tiers are skipped, the other metrics are untouched.
  const json baseline = document_of(schd_dbg_like());
  json result = baseline;
  for (const char* cls : kClassNames) {
    for (const char* t : kTierNames) {
      json& mean = tier(result, cls, t)["mean_ns"];
      mean = mean.get<std::uint64_t>() * 3 / 2;
    }
  }
  const CheckReport report = check(result, baseline);
  EXPECT_FALSE(report.passed());
  EXPECT_EQ(failed_metrics(report), (std::vector<std::string>{
                                        "tiers.sched_fifo.same_core.mean_ns",
                                        "tiers.sched_other.same_core.mean_ns",
                                        "tiers.sched_other.same_cluster.mean_ns",
                                        "tiers.sched_other.cross_cluster.mean_ns",
                                    }));
  EXPECT_EQ(status_of(report, "tiers.sched_fifo.same_cluster.mean_ns"), CheckStatus::kSkipped);
  EXPECT_EQ(status_of(report, "tiers.sched_fifo.cross_cluster.mean_ns"), CheckStatus::kSkipped);
  EXPECT_DOUBLE_EQ(report.find("tiers.sched_other.same_core.mean_ns")->delta, 50.0);

  // The printed table labels the rows as failures upwards and ends with the verdict.
  std::ostringstream text;
  print_check_report(report, text);
  const std::string printed = text.str();
  const auto line_of = [&](const std::string& metric) {
    const auto at = printed.find("\n" + metric + " ");
    if (at == std::string::npos) return std::string();
    return printed.substr(at + 1, printed.find('\n', at + 1) - at - 1);
  };
  const std::string row = line_of("tiers.sched_other.same_core.mean_ns");
  EXPECT_NE(row.find("130000"), std::string::npos) << row;
  EXPECT_NE(row.find("195000"), std::string::npos) << row;
  EXPECT_NE(row.find("+50.00%"), std::string::npos) << row;
  EXPECT_NE(row.find("±5%"), std::string::npos) << row;
  EXPECT_NE(row.find("FAIL (higher)"), std::string::npos) << row;
  EXPECT_NE(line_of("latency.mean_ns").find("OK"), std::string::npos);
  EXPECT_NE(printed.find("check: REGRESSION: 4 of "), std::string::npos) << printed;
}

TEST(CheckTest, AnImprovementBeyondToleranceFailsToo) {
  // A tier twice as fast is out of tolerance downwards: the baseline must be updated on purpose.
  const json baseline = document_of(schd_dbg_like());
  json result = baseline;
  tier(result, "sched_other", "cross_cluster")["mean_ns"] = 95'000;
  const CheckReport report = check(result, baseline);
  EXPECT_EQ(failed_metrics(report),
            (std::vector<std::string>{"tiers.sched_other.cross_cluster.mean_ns"}));
  std::ostringstream text;
  print_check_report(report, text);
  EXPECT_NE(text.str().find("FAIL (lower)"), std::string::npos);
}

TEST(CheckTest, SharesMovedFivePointsFail) {
  // Five points moved from same_core to cross_cluster exceed the ±2 point share tolerance.
  const json baseline = document_of(schd_dbg_like());
  json result = baseline;
  tier(result, "sched_other", "same_core")["share"] = 0.4123;
  tier(result, "sched_other", "cross_cluster")["share"] = 0.2587;
  const CheckReport report = check(result, baseline);
  EXPECT_EQ(failed_metrics(report), (std::vector<std::string>{
                                        "tiers.sched_other.same_core.share",
                                        "tiers.sched_other.cross_cluster.share",
                                    }));
  EXPECT_NEAR(report.find("tiers.sched_other.same_core.share")->delta, -5.0, 1e-9);
  EXPECT_NEAR(report.find("tiers.sched_other.cross_cluster.share")->delta, 5.0, 1e-9);
}

TEST(CheckTest, MovesWithinToleranceAreOk) {
  // Every metric moved, each less than (or exactly) its default tolerance: the check passes.
  const json baseline = document_of(schd_dbg_like());
  json result = baseline;
  result["transactions"]["per_second"] = 4800.0;  // -4%
  result["latency"]["mean_ns"] = result["latency"]["mean_ns"].get<std::uint64_t>() * 104 / 100;
  tier(result, "sched_fifo", "same_core")["mean_ns"] = 93'450;      // +5% exactly
  tier(result, "sched_other", "same_cluster")["p99_ns"] = 153'860;  // +9.9%
  tier(result, "sched_other", "same_core")["share"] = 0.4773;       // +1.5 points
  tier(result, "sched_other", "cross_cluster")["share"] = 0.1937;   // -1.5 points
  result["counters"]["cache_misses"] = 29'430'000;                  // +9% per call
  result["selection"]["decisions"]["same_cpu"] = 7'000;             // reported, not gated
  const CheckReport report = check(result, baseline);
  EXPECT_TRUE(report.passed()) << failed_metrics(report).size() << " failures";
  EXPECT_EQ(status_of(report, "tiers.sched_fifo.same_core.mean_ns"), CheckStatus::kOk);
  EXPECT_NEAR(report.find("tiers.sched_fifo.same_core.mean_ns")->delta, 5.0, 1e-9);
  EXPECT_EQ(status_of(report, "tiers.sched_other.same_core.share"), CheckStatus::kOk);
  EXPECT_EQ(status_of(report, "counters.cache_misses"), CheckStatus::kOk);
  EXPECT_EQ(status_of(report, "selection.decisions.same_cpu"), CheckStatus::kReported);

  // One nanosecond more than +5% fails.
  tier(result, "sched_fifo", "same_core")["mean_ns"] = 93'451;
  EXPECT_EQ(failed_metrics(check(result, baseline)),
            (std::vector<std::string>{"tiers.sched_fifo.same_core.mean_ns"}));
}

TEST(CheckTest, AShareMovedByExactlyItsToleranceInDoublesStillPasses) {
  // 0.84% to 2.84% is 2 points, the default share tolerance; in doubles (0.0284 - 0.0084) * 100
  // is a hair above 2. The comparison absorbs that rounding: the move passes, a hundredth of a
  // point more fails.
  json baseline = document_of(schd_dbg_like());
  tier(baseline, "sched_fifo", "cross_cluster")["share"] = 0.0084;
  json result = baseline;
  tier(result, "sched_fifo", "cross_cluster")["share"] = 0.0284;
  ASSERT_GT((0.0284 - 0.0084) * 100.0, 2.0);
  const std::string name = "tiers.sched_fifo.cross_cluster.share";
  EXPECT_EQ(status_of(check(result, baseline), name), CheckStatus::kOk);
  tier(result, "sched_fifo", "cross_cluster")["share"] = 0.0285;
  EXPECT_EQ(status_of(check(result, baseline), name), CheckStatus::kFail);
}

TEST(CheckTest, CountersAreComparedPerCompletedCall) {
  // Twice the calls with twice the counters is no change per call; twice the counters alone is.
  const json baseline = document_of(schd_dbg_like());
  json doubled = baseline;
  doubled["transactions"]["completed"] = 40'000;
  doubled["counters"]["cpu_cycles"] = 7'162'000'000;
  const Tolerances any_count = tolerances_from(
      R"({"schema": "bindersim.tolerances/1", "tolerances": {"transactions.completed": null}})");
  EXPECT_EQ(status_of(check(doubled, baseline, any_count), "counters.cpu_cycles"),
            CheckStatus::kOk);
  // transactions.completed is exact by default.
  EXPECT_EQ(status_of(check(doubled, baseline), "transactions.completed"), CheckStatus::kFail);

  json more_cycles = baseline;
  more_cycles["counters"]["cpu_cycles"] = 7'162'000'000;
  EXPECT_EQ(failed_metrics(check(more_cycles, baseline)),
            (std::vector<std::string>{"counters.cpu_cycles"}));
}

TEST(CheckTest, ASingleCallRunIsComparedPerCallToo) {
  // A count per call divides by the completed calls, one included (only a run with none
  // divides by one instead): 100 cycles over 1 call is 200 over 2.
  json baseline = document_of(schd_dbg_like());
  baseline["transactions"]["completed"] = 1;
  baseline["counters"]["cpu_cycles"] = 100;
  json result = baseline;
  result["transactions"]["completed"] = 2;
  result["counters"]["cpu_cycles"] = 200;
  const Tolerances any_count = tolerances_from(
      R"({"schema": "bindersim.tolerances/1", "tolerances": {"transactions.completed": null}})");
  const CheckReport report = check(result, baseline, any_count);
  EXPECT_EQ(status_of(report, "counters.cpu_cycles"), CheckStatus::kOk);
  EXPECT_EQ(report.find("counters.cpu_cycles")->baseline_text, "100.000/call");
  EXPECT_EQ(report.find("counters.cpu_cycles")->result_text, "100.000/call");
}

TEST(CheckTest, TheVerdictCountsOnlyTheGatedRows) {
  // Against itself, schd-dbg has 31 gated rows: 4 names, 3 inputs, 5 headline metrics, 6 tier
  // shares, 8 tier latencies (the two SCHED_FIFO tiers below 1% skip their 2 each) and 5
  // counters. The seed and the 6 selection counts are only reported: not counted.
  const json doc = document_of(schd_dbg_like());
  std::ostringstream text;
  print_check_report(check(doc, doc), text);
  EXPECT_NE(text.str().find("\ncheck: OK: all 31 gated metrics within tolerance\n"),
            std::string::npos)
      << text.str();

  // With one tier mean 50% higher, the regression line counts 1 failure of the same 31.
  json result = doc;
  tier(result, "sched_other", "same_core")["mean_ns"] = 195'000;
  std::ostringstream failed;
  print_check_report(check(result, doc), failed);
  EXPECT_NE(failed.str().find("\ncheck: REGRESSION: 1 of 31 gated metrics"), std::string::npos)
      << failed.str();
}

TEST(CheckTest, NamesMustMatchButTheSeedMayDiffer) {
  // Another selector is another configuration: its row fails. Another seed is only shown.
  const json baseline = document_of(schd_dbg_like());
  json result = baseline;
  result["selector"] = "fifo";
  result["seed"] = 7;
  const CheckReport report = check(result, baseline);
  EXPECT_EQ(failed_metrics(report), (std::vector<std::string>{"selector"}));
  EXPECT_EQ(status_of(report, "seed"), CheckStatus::kReported);
}

// A selector's parameters are part of its configuration: other parameters fail as another
// selector does, absent counts as {}, and runs without them get no row.
TEST(CheckTest, SelectorParametersMustMatch) {
  RunResult with_params = schd_dbg_like();
  with_params.selector_params = R"({"check_caller_idle":false})";
  const json baseline = document_of(schd_dbg_like());
  const json result = document_of(with_params);
  ASSERT_TRUE(result.contains("selector_params"));
  ASSERT_FALSE(baseline.contains("selector_params"));
  EXPECT_EQ(read(result).selector_params, R"({"check_caller_idle":false})");

  const CheckReport report = check(result, baseline);
  EXPECT_EQ(failed_metrics(report), (std::vector<std::string>{"selector_params"}));
  const auto row = std::find_if(report.rows.begin(), report.rows.end(),
                                [](const CheckRow& r) { return r.metric == "selector_params"; });
  ASSERT_NE(row, report.rows.end());
  EXPECT_EQ(row->baseline_text, "{}");
  EXPECT_EQ(row->result_text, R"({"check_caller_idle":false})");

  EXPECT_EQ(status_of(check(result, result), "selector_params"), CheckStatus::kOk);
  const CheckReport none = check(baseline, baseline);
  EXPECT_TRUE(std::none_of(none.rows.begin(), none.rows.end(),
                           [](const CheckRow& r) { return r.metric == "selector_params"; }));
  // The writer leaves the key out when there are none: an empty object is not a result's.
  json empty = baseline;
  empty["selector_params"] = json::object();
  EXPECT_EQ(config_error([&] { read(empty); }),
            "result.json: /selector_params: expected an object of the selector's parameters, not "
            "empty, got an object");
  json bad = baseline;
  bad["selector_params"] = "check_caller_idle";
  EXPECT_EQ(config_error([&] { read(bad); }),
            "result.json: /selector_params: expected an object of the selector's parameters, not "
            "empty, got \"check_caller_idle\"");
}

// What the runs were made from is held to the baseline's like the scenario's name; a baseline
// written before results recorded it is shown as such and not gated.
TEST(CheckTest, TheRunsInputsMustMatchWhereBothRecordThem) {
  const json baseline = document_of(schd_dbg_like());
  EXPECT_EQ(status_of(check(baseline, baseline), "overrides"), CheckStatus::kOk);
  EXPECT_EQ(status_of(check(baseline, baseline), "scenario_hash"), CheckStatus::kOk);

  json other = baseline;
  other["provenance"]["overrides"] =
      json::parse(R"([["clients.*.iterations",10000],["kernel.vruntime_across_rt",false]])");
  other["provenance"]["topology_hash"] = "02d70319faa2fed1";
  const CheckReport report = check(other, baseline);
  EXPECT_EQ(failed_metrics(report), (std::vector<std::string>{"topology_hash", "overrides"}));
  const CheckRow* row = report.find("overrides");
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->baseline_text, R"([["clients.*.iterations",10000]])");
  EXPECT_EQ(row->result_text,
            R"([["clients.*.iterations",10000],["kernel.vruntime_across_rt",false]])");

  json old = baseline;
  old["provenance"].erase("scenario_hash");
  const CheckReport against_old = check(baseline, old);
  EXPECT_TRUE(failed_metrics(against_old).empty());
  EXPECT_EQ(status_of(against_old, "scenario_hash"), CheckStatus::kReported);
  EXPECT_EQ(against_old.find("scenario_hash")->baseline_text, "(not recorded)");
  EXPECT_EQ(against_old.find("scenario_hash")->result_text, "6dc37089a67cc7c6");

  // null in a tolerance file reports an input without gating it.
  const CheckReport relaxed = check(other, baseline, tolerances_from(R"({
    "schema": "bindersim.tolerances/1", "tolerances": {"overrides": null}})"));
  EXPECT_EQ(failed_metrics(relaxed), (std::vector<std::string>{"topology_hash"}));
  EXPECT_EQ(status_of(relaxed, "overrides"), CheckStatus::kReported);
  EXPECT_EQ(relaxed.find("overrides")->result_text, row->result_text);
}

// An input recorded on one side only is shown, not gated, whichever side lacks it (a result or
// a baseline written before results recorded it).
TEST(CheckTest, AnInputRecordedOnOneSideOnlyIsShownNotGated) {
  const json recorded = document_of(schd_dbg_like());
  const std::string hash = recorded["provenance"]["scenario_hash"].get<std::string>();
  json unrecorded = recorded;
  unrecorded["provenance"].erase("scenario_hash");

  const auto expect_shown = [](const CheckReport& report, const std::string& baseline_text,
                               const std::string& result_text) {
    EXPECT_TRUE(report.passed());
    EXPECT_TRUE(failed_metrics(report).empty());
    EXPECT_EQ(status_of(report, "scenario_hash"), CheckStatus::kReported);
    EXPECT_EQ(report.find("scenario_hash")->baseline_text, baseline_text);
    EXPECT_EQ(report.find("scenario_hash")->result_text, result_text);
  };
  expect_shown(check(unrecorded, recorded), hash, "(not recorded)");  // an older result
  expect_shown(check(recorded, unrecorded), "(not recorded)", hash);  // an older baseline
}

// A long list of overrides is printed in full under the table, not in a cell that would widen
// every row.
TEST(CheckTest, LongValuesArePrintedUnderTheTable) {
  RunResult many = schd_dbg_like();
  many.overrides = R"([["clients.*.iterations",10000],["kernel.alloc_lock","spinlock"],)"
                   R"(["kernel.selector_params.ctabs-nudge.check_caller_idle",false]])";
  const CheckReport report = check(document_of(many), document_of(schd_dbg_like()));
  std::ostringstream text;
  print_check_report(report, text);
  std::istringstream lines(text.str());
  std::string line;
  std::size_t widest_row = 0;
  std::vector<std::string> notes;
  while (std::getline(lines, line)) {
    if (line.rfind("[1] ", 0) == 0) notes.push_back(line);
    if (line.rfind("tiers.", 0) == 0) widest_row = std::max(widest_row, line.size());
  }
  EXPECT_LT(widest_row, 130u) << text.str();
  EXPECT_EQ(notes, (std::vector<std::string>{"[1] overrides, result: " + many.overrides}));
  EXPECT_NE(text.str().find(R"(  [["clients.*.iterations",10000]]               [1]   differs)"),
            std::string::npos)
      << text.str();
}

// ---- tolerance files ------------------------------------------------------------------------

TEST(TolerancesTest, AFileOverridesTheDefaultsByName) {
  // Tier means 8% higher fail by default (±5%). A group entry widens all tiers; an entry for
  // one row wins over its group; null reports a metric without gating it.
  const json baseline = document_of(schd_dbg_like());
  json result = baseline;
  for (const char* t : kTierNames) {
    json& mean = tier(result, "sched_other", t)["mean_ns"];
    mean = mean.get<std::uint64_t>() * 108 / 100;
  }
  EXPECT_EQ(failed_metrics(check(result, baseline)).size(), 3u);

  const Tolerances wider = tolerances_from(R"({
    "schema": "bindersim.tolerances/1",
    "tolerances": {"tiers.mean_ns": 10, "tiers.sched_other.same_core.mean_ns": 5,
                   "tiers.sched_other.cross_cluster.mean_ns": null}})");
  const CheckReport report = check(result, baseline, wider);
  EXPECT_EQ(failed_metrics(report),
            (std::vector<std::string>{"tiers.sched_other.same_core.mean_ns"}));
  EXPECT_EQ(status_of(report, "tiers.sched_other.same_cluster.mean_ns"), CheckStatus::kOk);
  EXPECT_EQ(status_of(report, "tiers.sched_other.cross_cluster.mean_ns"), CheckStatus::kReported);
  // Untouched defaults still hold.
  EXPECT_EQ(report.find("latency.p99_ns")->tolerance, 10.0);
}

TEST(TolerancesTest, AFileCanGateSelectionDecisions) {
  // Decisions 20% off are only reported by default; gated at ±10% they fail.
  const json baseline = document_of(schd_dbg_like());
  json result = baseline;
  result["selection"]["decisions"]["other"] = 2'528;  // 2,107 + 20%
  EXPECT_TRUE(check(result, baseline).passed());
  const Tolerances gated = tolerances_from(
      R"({"schema": "bindersim.tolerances/1", "tolerances": {"selection.decisions": 10}})");
  EXPECT_EQ(failed_metrics(check(result, baseline, gated)),
            (std::vector<std::string>{"selection.decisions.other"}));

  // A count that appears from zero is infinitely far from its baseline.
  result = baseline;
  result["selection"]["decisions"]["none_idle"] = 5;
  const CheckReport report = check(result, baseline, gated);
  EXPECT_EQ(failed_metrics(report), (std::vector<std::string>{"selection.decisions.none_idle"}));
  EXPECT_TRUE(std::isinf(report.find("selection.decisions.none_idle")->delta));
}

TEST(TolerancesTest, MinimumTierShareDecidesWhichTierLatenciesAreGated) {
  // Lowered to 0.1%, the 0.13% SCHED_FIFO same_cluster tier is gated (and fails at +50%); the
  // 0.24% cross_cluster tier too, and it is unchanged.
  const json baseline = document_of(schd_dbg_like());
  json result = baseline;
  tier(result, "sched_fifo", "same_cluster")["mean_ns"] = 180'000;
  EXPECT_TRUE(check(result, baseline).passed());
  const Tolerances low = tolerances_from(
      R"({"schema": "bindersim.tolerances/1", "min_tier_share_percent": 0.1, "tolerances": {}})");
  const CheckReport report = check(result, baseline, low);
  EXPECT_EQ(failed_metrics(report),
            (std::vector<std::string>{"tiers.sched_fifo.same_cluster.mean_ns"}));
  EXPECT_EQ(status_of(report, "tiers.sched_fifo.cross_cluster.mean_ns"), CheckStatus::kOk);
}

TEST(TolerancesTest, TheBaselinesShareNotTheResultsDecidesWhetherATierLatencyIsGated) {
  // The minimum share is read from the baseline, where the latency is known to be stable.
  // SCHED_FIFO same_cluster holds 0.13% of the baseline's calls: grown to 5% in the result, its
  // mean 50% higher still skips (its share fails instead). SCHED_OTHER same_core holds 46.23%
  // of the baseline's: shrunk to 0.5% in the result, its mean 50% higher still fails.
  const json baseline = document_of(schd_dbg_like());
  json result = baseline;
  tier(result, "sched_fifo", "same_cluster")["share"] = 0.05;
  tier(result, "sched_fifo", "same_cluster")["mean_ns"] = 180'000;
  tier(result, "sched_other", "same_core")["share"] = 0.005;
  tier(result, "sched_other", "same_core")["mean_ns"] = 195'000;
  const CheckReport report = check(result, baseline);
  EXPECT_EQ(status_of(report, "tiers.sched_fifo.same_cluster.mean_ns"), CheckStatus::kSkipped);
  EXPECT_EQ(status_of(report, "tiers.sched_fifo.same_cluster.share"), CheckStatus::kFail);
  EXPECT_EQ(status_of(report, "tiers.sched_other.same_core.mean_ns"), CheckStatus::kFail);
}

TEST(TolerancesTest, ATierExactlyAtTheMinimumShareIsGated) {
  // 57 of 100 calls: the share 0.57 times 100 is 56.99999999999999 in doubles, and the tier
  // was skipped under a 57% minimum.
  json baseline = document_of(schd_dbg_like());
  tier(baseline, "sched_other", "same_core")["share"] = 0.57;
  json result = baseline;
  tier(result, "sched_other", "same_core")["mean_ns"] =
      tier(baseline, "sched_other", "same_core")["mean_ns"].get<std::int64_t>() * 3 / 2;
  const Tolerances at_share = tolerances_from(
      R"({"schema": "bindersim.tolerances/1", "min_tier_share_percent": 57, "tolerances": {}})");
  EXPECT_EQ(status_of(check(result, baseline, at_share), "tiers.sched_other.same_core.mean_ns"),
            CheckStatus::kFail);
  const Tolerances above = tolerances_from(
      R"({"schema": "bindersim.tolerances/1", "min_tier_share_percent": 57.01, "tolerances": {}})");
  EXPECT_EQ(status_of(check(result, baseline, above), "tiers.sched_other.same_core.mean_ns"),
            CheckStatus::kSkipped);
}

TEST(TolerancesTest, UnknownMetricNameNamesItsPointer) {
  // A misspelt name is an error at its JSON pointer, with the closest valid name.
  const std::string message = config_error([] {
    tolerances_from(R"({"schema": "bindersim.tolerances/1", "tolerances": {"tiers.mean": 8}})");
  });
  EXPECT_EQ(message.rfind("tol.json: /tolerances/tiers.mean: unknown metric name", 0), 0u)
      << message;
  EXPECT_NE(message.find("did you mean \"tiers.mean_ns\"?"), std::string::npos) << message;
}

TEST(TolerancesTest, RejectsBadValuesAndKeys) {
  // Negative tolerances, strings, unknown top-level keys and another schema are errors at
  // their pointers.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"schema": "bindersim.tolerances/1", "tolerances": {"counters": -1}})",
       "tol.json: /tolerances/counters: expected a tolerance >= 0"},
      {R"({"schema": "bindersim.tolerances/1", "tolerances": {"counters": "10%"}})",
       "tol.json: /tolerances/counters: expected a tolerance >= 0"},
      {R"({"schema": "bindersim.tolerances/1", "tolerances": {}, "min_share": 1})",
       "tol.json: /min_share: unknown key"},
      {R"({"schema": "bindersim.result/1", "tolerances": {}})",
       "tol.json: /schema: expected \"bindersim.tolerances/1\""},
      {R"({"schema": "bindersim.tolerances/1"})",
       "tol.json: /: missing required key \"tolerances\""},
      {R"({"schema": "bindersim.tolerances/1", "tolerances": {"overrides": 0}})",
       "tol.json: /tolerances/overrides: expected null (the inputs are equal or not"},
  };
  for (const auto& [text, expected] : cases) {
    const std::string message = config_error([&json = text] { tolerances_from(json); });
    EXPECT_EQ(message.rfind(expected, 0), 0u) << text << " gave \"" << message << "\"";
  }
}

TEST(TolerancesTest, MalformedFileNamesLineAndColumn) {
  // A syntax error in a tolerance file names the file, line and column (the stray "}" on
  // line 2, column 16).
  const std::filesystem::path path =
      std::filesystem::path(::testing::TempDir()) / "check_test_tolerances.json";
  std::ofstream(path) << "{\"schema\": \"bindersim.tolerances/1\",\n \"tolerances\": }\n";
  const std::string message = config_error([&] { read_tolerances_file(path); });
  EXPECT_EQ(message.rfind(path.string() + ": line 2, column 16: invalid JSON", 0), 0u) << message;
  std::filesystem::remove(path);
}

TEST(TolerancesTest, EveryNameIsAcceptedAndHelpListsTheDefaults) {
  // Each listed name reads back (the inputs take only null); the help shows the documented
  // defaults.
  for (const std::string& name : tolerance_names()) {
    const bool input = name == "scenario_hash" || name == "topology_hash" || name == "overrides";
    const Tolerances t =
        tolerances_from(R"({"schema": "bindersim.tolerances/1", "tolerances": {")" + name +
                        (input ? R"(": null}})" : R"(": 1}})"));
    EXPECT_EQ(t.by_name.at(name), input ? std::nullopt : std::optional<double>(1.0)) << name;
  }
  std::ostringstream help;
  print_default_tolerances(help);
  for (const char* expected : {"transactions.per_second  ±5%", "latency.p99_ns           ±10%",
                               "tiers.share              ±2 percentage points",
                               "selection.decisions      reported, not gated"}) {
    EXPECT_NE(help.str().find(expected), std::string::npos) << expected << "\n" << help.str();
  }
}

// ---- exact comparison -----------------------------------------------------------------------

TEST(ExactTest, IdenticalRunsDifferOnlyInVersion) {
  // Documents that differ only in provenance.version are identical runs.
  const json baseline = document_of(schd_dbg_like());
  json result = baseline;
  result["provenance"]["version"] = "9.9.9";
  EXPECT_TRUE(exact_differences(read(result), read(baseline)).empty());
}

TEST(ExactTest, InputsAreComparedWhereBothRecordThem) {
  // A baseline written before results recorded their inputs still matches the same run; a
  // result made with other overrides does not match one that records its own.
  const json current = document_of(schd_dbg_like());
  json old = current;
  for (const char* key : {"scenario_hash", "topology_hash", "overrides"}) {
    old["provenance"].erase(key);
  }
  EXPECT_TRUE(exact_differences(read(current), read(old)).empty());
  EXPECT_TRUE(exact_differences(read(old), read(current)).empty());
  json other = current;
  other["provenance"]["overrides"] = json::array();
  const auto differences = exact_differences(read(other), read(current));
  ASSERT_EQ(differences.size(), 1u);
  EXPECT_EQ(differences[0].pointer, "/provenance/overrides");
  EXPECT_EQ(differences[0].result, "[]");
}

TEST(ExactTest, ListsEveryDifferingFieldFingerprintFirst) {
  // Any other difference is listed by pointer with both values, the fingerprint first.
  const json baseline = document_of(schd_dbg_like());
  json result = baseline;
  tier(result, "sched_fifo", "same_core")["p50_ns"] = 89'001;
  result["provenance"]["fingerprint"] = "0000000000000001";
  const auto differences = exact_differences(read(result), read(baseline));
  ASSERT_EQ(differences.size(), 2u);
  EXPECT_EQ(differences[0].pointer, "/provenance/fingerprint");
  EXPECT_EQ(differences[0].baseline, "\"3f9a0c41d2e7b856\"");
  EXPECT_EQ(differences[0].result, "\"0000000000000001\"");
  EXPECT_EQ(differences[1].pointer, "/tiers/sched_fifo/same_core/p50_ns");
  EXPECT_EQ(differences[1].baseline, "89000");
  EXPECT_EQ(differences[1].result, "89001");

  // A change well within tolerance is still a difference for the exact check.
  EXPECT_TRUE(check(result, baseline).passed());
}

}  // namespace
}  // namespace bindersim::io
