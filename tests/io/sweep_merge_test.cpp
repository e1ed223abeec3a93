// Exact merging of sweep runs: lossless histograms, run records, pooling across seeds,
// missing runs and order independence.
#include "../common/config_error.hpp"
#include "bindersim/sweep/merge.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "../common/test_rng.hpp"
#include "bindersim/common/error.hpp"
#include "bindersim/common/json_reader.hpp"
#include "bindersim/io/compare_report.hpp"
#include "bindersim/io/result_json.hpp"
#include "bindersim/stats/summary.hpp"
#include "bindersim/sweep/run_record.hpp"
#include "sweep_run_spec.hpp"

namespace bindersim::sweep {
namespace {

using nlohmann::json;
using stats::Histogram;
using stats::SchedClass;
using stats::Tier;

using testing::TestRng;

// Latency-like values over several orders of magnitude, some of them exact (< 2048).
std::int64_t latency(TestRng& rng) {
  const auto shift = static_cast<int>(rng.below(40));
  return static_cast<std::int64_t>((rng.next() >> 24) >> shift);
}

Histogram rebuilt(const Histogram& h) {
  const JsonDocument document = JsonDocument::parse_text(histogram_to_json(h).dump(), "h.json");
  return histogram_from_json(document.root());
}

std::string rebuild_error(const json& value) {
  try {
    const JsonDocument document = JsonDocument::from_value(value, "h.json");
    histogram_from_json(document.root());
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "";
}

TEST(HistogramJsonTest, RebuildsAnEqualHistogram) {
  // Whatever was recorded (nothing, one value, exact small values, wide spreads, values above
  // the clamp limit), the rebuilt histogram compares equal: buckets, count, sum, min, max and
  // clamped count.
  std::vector<Histogram> cases(6);
  cases[1].record(123'456);
  for (std::int64_t v = 0; v < 2048; v += 7) cases[2].record(v);
  TestRng rng(1);
  for (int i = 0; i < 20'000; ++i) cases[3].record(latency(rng));
  cases[4].record(5);
  cases[4].record_n(Histogram::kMaxValue + 10, 3);  // clamped
  cases[4].record(Histogram::kMaxValue);
  cases[5].record_n(Histogram::kMaxValue + 1, 2);  // only clamped samples
  for (std::size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(rebuilt(cases[i]), cases[i]) << "case " << i;
  }
}

TEST(HistogramJsonTest, MergedRebuildsEqualOneHistogramOfAllSamples) {
  // Samples spread over three runs: merging the three rebuilt histograms gives exactly the
  // histogram that recorded every sample, so every percentile of the merge is the one of the
  // whole population.
  TestRng rng(42);
  Histogram all;
  std::vector<Histogram> parts(3);
  for (int i = 0; i < 30'000; ++i) {
    const std::int64_t v = latency(rng);
    all.record(v);
    parts[rng.next() % 3].record(v);
  }
  Histogram merged;
  for (const Histogram& part : parts) merged.merge(rebuilt(part));
  EXPECT_EQ(merged, all);
  for (const double q : {0.5, 0.9, 0.99, 0.999}) {
    EXPECT_EQ(merged.percentile(q), all.percentile(q)) << "q " << q;
  }
}

TEST(HistogramJsonTest, RefusesInconsistentData) {
  // Bucket counts that do not add up, a min outside the lowest bucket and a sum that no values
  // in the buckets can reach are errors naming the field.
  Histogram h;
  h.record(100);
  h.record(5000);
  const json good = json::parse(histogram_to_json(h).dump());
  json bad_count = good;
  bad_count["count"] = 3;
  EXPECT_NE(rebuild_error(bad_count).find("h.json: /count: expected 2"), std::string::npos);
  json bad_min = good;
  bad_min["min"] = 99;
  EXPECT_NE(rebuild_error(bad_min).find("h.json: /min: expected a value in the lowest bucket"),
            std::string::npos);
  json bad_sum = good;
  bad_sum["sum"] = "1";
  EXPECT_NE(rebuild_error(bad_sum).find("h.json: /sum: expected a sum between"), std::string::npos);
  json unsorted = good;
  std::swap(unsorted["buckets"][0], unsorted["buckets"][1]);
  EXPECT_NE(rebuild_error(unsorted).find("h.json: /buckets/1/0: expected a bucket above"),
            std::string::npos);
  EXPECT_EQ(rebuild_error(good), "");
}

// A run result with `calls` sched_other cross-cluster calls of `latency_ns` each, some
// counters and scheduler statistics (silver at 1000 + 100 x seed kHz, CPU busy times in
// proportion to the calls); `fingerprint` distinguishes runs.
stats::RunResult make_result(const std::string& selector, std::uint64_t seed, std::uint64_t calls,
                             std::int64_t latency_ns, std::uint64_t fingerprint) {
  stats::RunResult r;
  r.scenario = "schd-dbg";
  r.topology = "sa8155p";
  r.selector = selector;
  r.placement = "mainline";
  r.seed = seed;
  r.completed = calls;
  r.simulated_ns = 1'000'000 * static_cast<std::int64_t>(calls);
  r.latency.record_n(latency_ns, calls);
  r.tier(SchedClass::kOther, Tier::kCrossCluster).record_n(latency_ns, calls);
  r.tier_breakdown(SchedClass::kOther, Tier::kCrossCluster).kernel_ns =
      static_cast<std::int64_t>(calls) * 1000;
  r.tier_breakdown(SchedClass::kOther, Tier::kCrossCluster).other_ns =
      static_cast<std::int64_t>(calls) * (latency_ns - 1000);
  r.counters.cpu_cycles = 1000 * calls;
  r.counters.context_switches = 4 * calls;
  r.selection.other = calls;
  r.scheduler.governor = "schedutil";
  r.scheduler.clusters = {{"silver", 1000 + 100 * static_cast<std::int64_t>(seed)}, {"gold", 2000}};
  r.scheduler.cpu_busy_ns = {10 * static_cast<std::int64_t>(calls),
                             20 * static_cast<std::int64_t>(calls)};
  r.scheduler.frequency_changes = calls;
  r.failed_calls = 2 * calls;
  r.allocator.lock = "spinlock";
  r.allocator.pages_installed_locked = false;
  r.allocator.allocations = 2 * calls;
  r.allocator.failed_no_space = calls;
  r.allocator.alloc_lock.acquisitions = 3 * calls;
  r.allocator.alloc_lock.contended = calls;
  r.allocator.alloc_lock.wait_ns.record_n(5'000, calls);
  r.allocator.alloc_lock.hold_ns.record_n(2'000, 3 * calls);
  r.allocator.alloc_lock.spin_ns = 7 * static_cast<std::int64_t>(calls);
  r.allocator.page_lock.owner_preempted = calls;
  r.version = "0.1.0";
  r.fingerprint = fingerprint;
  r.clients_finished = true;
  return r;
}

RunSpec make_run(std::size_t index, const std::string& selector, std::uint64_t seed, int payload) {
  return testing::sweep_run_spec(index, selector, seed, payload);
}

std::string record_text(const RunSpec& run, const stats::RunResult& result) {
  std::ostringstream out;
  write_run_record(run, result, out);
  return out.str();
}

RunRecord read_record(const std::string& text) {
  const JsonDocument document = JsonDocument::parse_text(text, "record.json");
  return read_run_record(document.root());
}

TEST(RunRecordTest, ReadsBackTheRunAndItsResultExactly) {
  // A record read back gives the same identity and a result whose histograms, counters and
  // breakdown sums are equal, so writing it again gives the same bytes.
  const RunSpec run = make_run(4, "ctabs", 2, 16);
  stats::RunResult result = make_result("ctabs", 2, 7, 123'457, 0xfeedULL);
  result.tier(SchedClass::kFifo, Tier::kSameCore).record_n(90'001, 3);
  result.latency.record_n(90'001, 3);
  const std::string text = record_text(run, result);
  const RunRecord back = read_record(text);
  EXPECT_EQ(back.run.run_id, run.run_id);
  EXPECT_EQ(back.run.axes, run.axes);
  EXPECT_EQ(back.result.latency, result.latency);
  EXPECT_EQ(back.result.tiers, result.tiers);
  EXPECT_EQ(back.result.breakdown, result.breakdown);
  EXPECT_EQ(back.result.simulated_ns, result.simulated_ns);
  EXPECT_EQ(back.result.fingerprint, result.fingerprint);
  EXPECT_EQ(back.result.scheduler.cpu_busy_ns, result.scheduler.cpu_busy_ns);
  EXPECT_EQ(back.result.scheduler.clusters.at(0).mean_freq_khz, 1200);
  EXPECT_EQ(record_text(back.run, back.result), text);
}

TEST(RunRecordTest, HoldsTheNormalResultDocumentUnchanged) {
  // The record's "result" is exactly io::result_to_json of the run.
  const stats::RunResult result = make_result("fifo", 1, 5, 100'000, 1);
  const json record = json::parse(record_text(make_run(0, "fifo", 1, 16), result));
  EXPECT_EQ(record.at("result"), json::parse(io::result_to_json(result).dump()));
  EXPECT_EQ(record.at("schema"), "bindersim.sweep-run/1");
}

TEST(RunRecordTest, RefusesAResultThatDisagreesWithItsExactData) {
  // An edited p99 (or a run that claims another seed) no longer matches: an error, not a
  // silently wrong merge.
  const RunSpec run = make_run(0, "fifo", 1, 16);
  json edited = json::parse(record_text(run, make_result("fifo", 1, 5, 100'000, 1)));
  edited["result"]["latency"]["p99_ns"] = 1;
  try {
    read_record(edited.dump());
    FAIL() << "an edited result was accepted";
  } catch (const ConfigError& error) {
    EXPECT_NE(std::string(error.what()).find("record.json: /result: does not match"),
              std::string::npos)
        << error.what();
  }
  EXPECT_THROW(read_record(record_text(run, make_result("fifo", 2, 5, 100'000, 1))), ConfigError);
}

TEST(RunRecordTest, RefusesBreakdownSumsThatNoCallCouldMake) {
  // Sums are nanoseconds: never negative; and a tier without calls sums nothing. /result shows
  // neither (it writes no means for an empty tier), so only these checks catch an edit.
  const RunSpec run = make_run(0, "fifo", 1, 16);
  const json record = json::parse(record_text(run, make_result("fifo", 1, 5, 100'000, 1)));
  json negative = record;
  negative["exact"]["tiers"]["sched_other"]["cross_cluster"]["breakdown_sums"]["kernel_ns"] = -1;
  json in_empty_tier = record;
  in_empty_tier["exact"]["tiers"]["sched_fifo"]["same_core"]["breakdown_sums"]["other_ns"] = 7;
  const auto error_of = [](const json& edited) -> std::string {
    try {
      read_record(edited.dump());
    } catch (const ConfigError& error) {
      return error.what();
    }
    return "";
  };
  EXPECT_EQ(error_of(negative).rfind(
                "record.json: /exact/tiers/sched_other/cross_cluster/breakdown_sums/kernel_ns: "
                "expected an integer in [0, ",
                0),
            0u)
      << error_of(negative);
  EXPECT_EQ(error_of(in_empty_tier),
            "record.json: /exact/tiers/sched_fifo/same_core/breakdown_sums: expected zero sums "
            "(the tier has no calls), got an object");
  // other_ns, the rest of the latency, may be negative, as in the result's means.
  stats::RunResult result = make_result("fifo", 1, 5, 100'000, 1);
  result.tier_breakdown(SchedClass::kOther, Tier::kCrossCluster).other_ns = -5;
  const RunRecord back = read_record(record_text(run, result));
  EXPECT_EQ(back.result.tier_breakdown(SchedClass::kOther, Tier::kCrossCluster).other_ns, -5);
  // Sums past 64 bits (10,000 calls of 999,000 s each) are written as decimal text and read
  // back exactly, either sign.
  stats::BreakdownSums& huge = result.tier_breakdown(SchedClass::kOther, Tier::kCrossCluster);
  const Int128 beyond = Int128{999'000'000'000'000} * 10'000;
  huge.service_ns = beyond;
  huge.other_ns = -beyond;
  const std::string text = record_text(run, result);
  EXPECT_NE(text.find("\"service_ns\":\"9990000000000000000\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"other_ns\":\"-9990000000000000000\""), std::string::npos) << text;
  const RunRecord wide = read_record(text);
  EXPECT_TRUE(wide.result.tier_breakdown(SchedClass::kOther, Tier::kCrossCluster) == huge);
}

// Records of one point (payload 16): fifo and ctabs over seeds 1..3, with different numbers of
// calls per seed so that pooling and averaging differ.
std::vector<RunRecord> point_records() {
  std::vector<RunRecord> records;
  std::size_t index = 0;
  for (const char* selector : {"fifo", "ctabs"}) {
    const std::int64_t base = std::string(selector) == "fifo" ? 100'000 : 80'000;
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      const RunSpec run = make_run(index++, selector, seed, 16);
      records.push_back(read_record(
          record_text(run, make_result(selector, seed, seed * seed,
                                       base * static_cast<std::int64_t>(seed), 0x100 + index))));
    }
  }
  return records;
}

std::string summary_text(const SweepSummary& summary) {
  std::ostringstream out;
  write_summary_json(summary, out);
  return out.str();
}

// A run whose selector had parameters keeps them through its record and into its column's
// pooled result; seeds of one column that disagree on them are refused.
TEST(SweepMergerTest, SelectorParametersSurviveTheRecordAndThePooling) {
  const std::string params = R"({"check_caller_idle":false})";
  SweepMerger merger;
  for (std::uint64_t seed = 1; seed <= 2; ++seed) {
    const RunSpec run = make_run(seed - 1, "ctabs-nudge", seed, 16);
    stats::RunResult result = make_result("ctabs-nudge", seed, 3, 100'000, seed);
    result.selector_params = params;
    const std::string text = record_text(run, result);
    const RunRecord back = read_record(text);
    EXPECT_EQ(back.result.selector_params, params);
    EXPECT_EQ(record_text(back.run, back.result), text);
    merger.add(back, "r" + std::to_string(seed) + ".json");
  }
  const SweepSummary summary = std::move(merger).finish();
  ASSERT_EQ(summary.points.size(), 1u);
  ASSERT_TRUE(summary.points[0].columns.at(0).pooled.has_value());
  EXPECT_EQ(summary.points[0].columns[0].pooled->selector_params, params);
  EXPECT_NE(summary_text(summary).find(R"("selector_params": {)"), std::string::npos);

  SweepMerger mixed;
  stats::RunResult with = make_result("ctabs-nudge", 1, 3, 100'000, 1);
  with.selector_params = params;
  mixed.add(read_record(record_text(make_run(0, "ctabs-nudge", 1, 16), with)), "a.json");
  const std::string message = testing::error_of([&] {
    mixed.add(read_record(record_text(make_run(1, "ctabs-nudge", 2, 16),
                                      make_result("ctabs-nudge", 2, 3, 100'000, 2))),
              "b.json");
  });
  EXPECT_EQ(message, "b.json: /result/selector_params: expected " + params +
                         " (as the other seeds of its column), got {}");
}

// What a run was made from survives its record and its column's pooling; seeds of one column
// made from different inputs (a topology file edited between them) are refused.
TEST(SweepMergerTest, TheInputsSurviveTheRecordAndThePooling) {
  const auto with_inputs = [](std::uint64_t seed, const std::string& topology_hash) {
    stats::RunResult result = make_result("ctabs", seed, 3, 100'000, seed);
    result.scenario_hash = "00000000000000aa";
    result.topology_hash = topology_hash;
    result.overrides = R"([["clients.0.iteration.2.payload_bytes",16]])";
    return read_record(record_text(make_run(seed - 1, "ctabs", seed, 16), result));
  };
  SweepMerger merger;
  for (std::uint64_t seed = 1; seed <= 2; ++seed) {
    const RunRecord back = with_inputs(seed, "00000000000000bb");
    EXPECT_EQ(back.result.scenario_hash, "00000000000000aa");
    EXPECT_EQ(back.result.topology_hash, "00000000000000bb");
    EXPECT_EQ(back.result.overrides, R"([["clients.0.iteration.2.payload_bytes",16]])");
    merger.add(back, "r" + std::to_string(seed) + ".json");
  }
  const SweepSummary summary = std::move(merger).finish();
  ASSERT_TRUE(summary.points.at(0).columns.at(0).pooled.has_value());
  const stats::RunResult& pooled = *summary.points[0].columns[0].pooled;
  EXPECT_EQ(pooled.scenario_hash, "00000000000000aa");
  EXPECT_EQ(pooled.topology_hash, "00000000000000bb");
  EXPECT_EQ(pooled.overrides, R"([["clients.0.iteration.2.payload_bytes",16]])");

  SweepMerger mixed;
  mixed.add(with_inputs(1, "00000000000000bb"), "a.json");
  const std::string message =
      testing::error_of([&] { mixed.add(with_inputs(2, "00000000000000cc"), "b.json"); });
  EXPECT_EQ(message,
            "b.json: /result/provenance/topology_hash: expected \"00000000000000bb\" (as the "
            "other seeds of its column), got \"00000000000000cc\"");

  // A seed from before results recorded their inputs leaves the column's unknown.
  SweepMerger old_and_new;
  old_and_new.add(with_inputs(1, "00000000000000bb"), "a.json");
  stats::RunResult old = make_result("ctabs", 2, 3, 100'000, 2);
  old_and_new.add(read_record(record_text(make_run(1, "ctabs", 2, 16), old)), "b.json");
  const SweepSummary mixed_summary = std::move(old_and_new).finish();
  const stats::RunResult& unknown = *mixed_summary.points.at(0).columns.at(0).pooled;
  EXPECT_EQ(unknown.scenario_hash, "");
  EXPECT_EQ(unknown.topology_hash, "");
  EXPECT_EQ(unknown.overrides, "");
  EXPECT_EQ(summary_text(mixed_summary).find("topology_hash"), std::string::npos);
}

// A record's result must have been made from what its run says.
TEST(RunRecordTest, TheResultsInputsMustBeTheRuns) {
  const RunSpec run = make_run(0, "ctabs", 1, 16);
  stats::RunResult result = make_result("ctabs", 1, 3, 100'000, 1);
  result.scenario_hash = "00000000000000ab";
  EXPECT_EQ(testing::error_of([&] { read_record(record_text(run, result)); }),
            "record.json: /run/scenario_hash: expected \"00000000000000ab\" (the scenario_hash of "
            "/result), got \"00000000000000aa\"");
  result.scenario_hash = run.scenario_hash;
  result.overrides = R"([["clients.0.iteration.2.payload_bytes",32]])";
  EXPECT_EQ(testing::error_of([&] { read_record(record_text(run, result)); }),
            "record.json: /run/overrides: does not match /result/provenance/overrides (the result "
            "was made with others)");
  result.overrides = R"([["clients.0.iteration.2.payload_bytes",16]])";
  EXPECT_EQ(read_record(record_text(run, result)).result.overrides, result.overrides);
}

TEST(SweepMergerTest, APooledColumnHasFinishedOnlyIfEverySeedsClientsFinished) {
  // fifo's seed 2 stopped at its time limit with clients unfinished: the pooled fifo column
  // says so; ctabs, whose seeds all finished, does not.
  SweepMerger merger;
  std::size_t index = 0;
  for (const char* selector : {"fifo", "ctabs"}) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      const RunSpec run = make_run(index++, selector, seed, 16);
      stats::RunResult result = make_result(selector, seed, 2, 100'000, 0x200 + index);
      result.clients_finished = !(std::string(selector) == "fifo" && seed == 2);
      merger.add(read_record(record_text(run, result)), "r.json");
    }
  }
  const SweepSummary summary = std::move(merger).finish();
  ASSERT_EQ(summary.points.size(), 1u);
  ASSERT_EQ(summary.points[0].columns.size(), 2u);
  for (const SweepColumn& column : summary.points[0].columns) {
    ASSERT_TRUE(column.pooled.has_value()) << column.selector;
    EXPECT_EQ(column.pooled->clients_finished, column.selector == "ctabs") << column.selector;
  }
}

TEST(SweepMergerTest, PoolsCallsAcrossSeedsInsteadOfAveraging) {
  // fifo's seeds make 1, 4 and 9 calls of 100, 200 and 300 us: the pooled latency histogram
  // is the one of all 14 calls (mean (100 + 800 + 2700) / 14 us, p50 300 us), not the average
  // of the three runs' means (200 us).
  SweepMerger merger;
  for (const RunRecord& record : point_records()) merger.add(record, "r.json");
  const SweepSummary summary = std::move(merger).finish();
  ASSERT_EQ(summary.points.size(), 1u);
  const SweepPoint& point = summary.points[0];
  ASSERT_EQ(point.columns.size(), 2u);
  const SweepColumn& fifo = point.columns[0];
  EXPECT_EQ(fifo.selector, "fifo");
  EXPECT_EQ(fifo.seeds, (std::vector<std::uint64_t>{1, 2, 3}));
  ASSERT_TRUE(fifo.pooled.has_value());
  Histogram expected;
  expected.record_n(100'000, 1);
  expected.record_n(200'000, 4);
  expected.record_n(300'000, 9);
  EXPECT_EQ(fifo.pooled->latency, expected);
  EXPECT_EQ(fifo.pooled->tier(SchedClass::kOther, Tier::kCrossCluster), expected);
  EXPECT_EQ(fifo.pooled->completed, 14u);
  EXPECT_EQ(fifo.pooled->simulated_ns, 14'000'000);
  EXPECT_EQ(fifo.pooled->counters.cpu_cycles, 14'000u);
  EXPECT_EQ(fifo.pooled->tier_breakdown(SchedClass::kOther, Tier::kCrossCluster).kernel_ns, 14'000);
  // Busy times add up; the silver cluster's mean frequency is weighted by each seed's
  // simulated time (1, 4 and 9 ms at 1100, 1200 and 1300 kHz): 17,600 / 14 = 1257.1 kHz.
  EXPECT_EQ(fifo.pooled->scheduler.cpu_busy_ns, (std::vector<std::int64_t>{140, 280}));
  EXPECT_EQ(fifo.pooled->scheduler.frequency_changes, 14u);
  EXPECT_EQ(fifo.pooled->scheduler.clusters.at(0).mean_freq_khz, 1257);
  EXPECT_EQ(fifo.pooled->scheduler.clusters.at(1).mean_freq_khz, 2000);
  // Failed sends and the allocators add up too, lock histograms merged whole.
  EXPECT_EQ(fifo.pooled->failed_calls, 28u);
  const stats::AllocatorStats& alloc = fifo.pooled->allocator;
  EXPECT_EQ(alloc.lock, "spinlock");
  EXPECT_FALSE(alloc.pages_installed_locked);
  EXPECT_EQ(alloc.allocations, 28u);
  EXPECT_EQ(alloc.failed_no_space, 14u);
  EXPECT_EQ(alloc.alloc_lock.acquisitions, 42u);
  EXPECT_EQ(alloc.alloc_lock.contended, 14u);
  Histogram waits;
  waits.record_n(5'000, 14);
  EXPECT_EQ(alloc.alloc_lock.wait_ns, waits);
  EXPECT_EQ(alloc.alloc_lock.hold_ns.count(), 42u);
  EXPECT_EQ(alloc.alloc_lock.spin_ns, 98);
  EXPECT_EQ(alloc.page_lock.owner_preempted, 14u);

  const auto statistics = point_statistics(summary, point);
  const auto mean = std::find_if(statistics.begin(), statistics.end(),
                                 [](const auto& s) { return s.metric.key == "latency.mean"; });
  ASSERT_NE(mean, statistics.end());
  EXPECT_DOUBLE_EQ(*mean->columns[0].mean, 3600.0 / 14.0);  // us
  // ctabs: the same calls at 80% of fifo's latency, so -20% against fifo.
  EXPECT_NEAR(*mean->columns[1].delta_pct, -20.0, 1e-9);
  EXPECT_TRUE(mean->columns[0].ci95.has_value());  // from the three per-seed means
}

TEST(SweepMergerTest, APooledMeanFrequencyIsRoundedToTheNearestKhz) {
  // fifo's seeds run 1 and 2 ms: silver at 1000 then 1001 kHz pools to 3002 / 3 = 1000.67 kHz,
  // shown as 1001, not cut to 1000; gold at 2001 then 2000 kHz pools to 6001 / 3 = 2000.33 kHz,
  // shown as 2000. ctabs's two 1 ms seeds at 1000 and 1001 kHz pool to exactly 1000.5 kHz: a
  // half rounds up, to 1001.
  SweepMerger merger;
  std::size_t index = 0;
  for (const char* selector : {"fifo", "ctabs"}) {
    for (std::uint64_t seed = 1; seed <= 2; ++seed) {
      const bool fifo = std::string(selector) == "fifo";
      const std::uint64_t calls = fifo ? seed : 1;
      stats::RunResult result = make_result(selector, seed, calls, 100'000, 0x300 + index);
      result.scheduler.clusters = {{"silver", seed == 1 ? 1000 : 1001},
                                   {"gold", fifo && seed == 1 ? 2001 : 2000}};
      merger.add(read_record(record_text(make_run(index++, selector, seed, 16), result)), "r.json");
    }
  }
  const SweepSummary summary = std::move(merger).finish();
  ASSERT_EQ(summary.points.size(), 1u);
  ASSERT_EQ(summary.points[0].columns.size(), 2u);
  const SweepColumn& fifo = summary.points[0].columns[0];
  const SweepColumn& ctabs = summary.points[0].columns[1];
  ASSERT_EQ(fifo.selector, "fifo");
  ASSERT_TRUE(fifo.pooled.has_value());
  ASSERT_TRUE(ctabs.pooled.has_value());
  EXPECT_EQ(fifo.pooled->simulated_ns, 3'000'000);
  EXPECT_EQ(fifo.pooled->scheduler.clusters.at(0).mean_freq_khz, 1001);
  EXPECT_EQ(fifo.pooled->scheduler.clusters.at(1).mean_freq_khz, 2000);
  EXPECT_EQ(ctabs.pooled->scheduler.clusters.at(0).mean_freq_khz, 1001);
  EXPECT_EQ(ctabs.pooled->scheduler.clusters.at(1).mean_freq_khz, 2000);
}

TEST(SweepMergerTest, SummaryDoesNotDependOnTheOrderOfTheFiles) {
  // The same records added in reverse order give the same summary bytes.
  const std::vector<RunRecord> records = point_records();
  SweepMerger forward;
  for (const RunRecord& record : records) forward.add(record, "r.json");
  SweepMerger backward;
  for (auto it = records.rbegin(); it != records.rend(); ++it) backward.add(*it, "r.json");
  EXPECT_EQ(summary_text(std::move(forward).finish()), summary_text(std::move(backward).finish()));
}

TEST(SweepMergerTest, ReportsListedRunsWithoutAResult) {
  // With the runs file listing six runs and five records, the sixth is missing: listed in the
  // summary and among its column's missing seeds; the column still pools the other two.
  const std::vector<RunRecord> records = point_records();
  std::vector<RunSpec> listed;
  for (const RunRecord& record : records) listed.push_back(record.run);
  SweepMerger merger(listed);
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (i != 4) merger.add(records[i], "r.json");
  }
  const SweepSummary summary = std::move(merger).finish();
  EXPECT_EQ(summary.listed, 6u);
  EXPECT_EQ(summary.merged, 5u);
  ASSERT_EQ(summary.missing.size(), 1u);
  EXPECT_EQ(summary.missing[0].run_id, records[4].run.run_id);
  const SweepColumn& ctabs = summary.points.at(0).columns.at(1);
  EXPECT_EQ(ctabs.seeds, (std::vector<std::uint64_t>{1, 3}));
  EXPECT_EQ(ctabs.missing_seeds, (std::vector<std::uint64_t>{2}));
  EXPECT_EQ(ctabs.pooled->completed, 1u + 9u);
  const json document = json::parse(summary_text(summary));
  EXPECT_EQ(document["runs"]["missing"][0]["run_id"], records[4].run.run_id);
}

TEST(SweepMergerTest, RefusesARepeatedSeedAndMixedSweeps) {
  // Two results for fifo seed 1 at the same point, or results of two sweeps in one directory,
  // cannot be merged without a runs file to choose.
  const std::vector<RunRecord> records = point_records();
  RunRecord again = records[0];
  again.run.overrides.push_back({"time_limit_s", 9});  // another run id, same column and seed
  again.run.run_id = run_id_of(again.run);
  SweepMerger merger;
  merger.add(records[0], "a.json");
  EXPECT_THROW(merger.add(again, "b.json"), ConfigError);

  RunRecord other = records[1];
  other.run.sweep = "another";
  SweepMerger mixed;
  mixed.add(records[0], "a.json");
  EXPECT_THROW(mixed.add(other, "b.json"), ConfigError);

  // Seeds 1 and 2 of one column but from two versions of the sweep (another "set", another
  // scenario): not the same experiment, whatever the order they come in.
  RunRecord edited = records[1];
  edited.run.overrides.insert(edited.run.overrides.begin(), {"time_limit_s", 9});
  edited.run.run_id = run_id_of(edited.run);
  RunRecord rehashed = records[1];
  rehashed.run.scenario_hash = "00000000000000bb";
  rehashed.run.run_id = run_id_of(rehashed.run);
  for (const RunRecord* second : {&edited, &rehashed}) {
    SweepMerger forward;
    forward.add(records[0], "a.json");
    EXPECT_THROW(forward.add(*second, "b.json"), ConfigError);
    SweepMerger backward;
    backward.add(*second, "b.json");
    EXPECT_THROW(backward.add(records[0], "a.json"), ConfigError);
  }
  SweepMerger same;  // seeds 1 and 2 of one sweep pool
  same.add(records[0], "a.json");
  EXPECT_NO_THROW(same.add(records[1], "b.json"));
}

TEST(SweepMergerTest, RefusesPooledSumsBeyondTheirRange) {
  // Two seeds of 5e18 ns each (158 years apiece) pool past 2^63 ns of simulated time: the
  // merge names the file and the figure instead of wrapping to a negative time.
  const std::vector<RunRecord> records = point_records();
  std::vector<RunRecord> long_runs = {records[0], records[1]};
  for (RunRecord& record : long_runs) record.result.simulated_ns = 5'000'000'000'000'000'000;
  SweepMerger merger;
  merger.add(long_runs[0], "a.json");
  try {
    merger.add(long_runs[1], "b.json");
    FAIL() << "pooled past 2^63 ns";
  } catch (const ConfigError& error) {
    EXPECT_EQ(std::string(error.what()),
              "b.json: the pooled simulated time (ns) passes 9223372036854775807 (pool fewer or "
              "shorter runs)");
  }
  // Unsigned counts are refused at 2^64 the same way.
  long_runs = {records[0], records[1]};
  for (RunRecord& record : long_runs) record.result.counters.cache_refs = 1ull << 63;
  SweepMerger counts;
  counts.add(long_runs[0], "a.json");
  EXPECT_THROW(counts.add(long_runs[1], "b.json"), ConfigError);
  // And so are histograms whose pooled count would pass 2^64 samples.
  long_runs = {records[0], records[1]};
  for (RunRecord& record : long_runs) record.result.latency.record_n(1000, 1ull << 63);
  SweepMerger samples;
  samples.add(long_runs[0], "a.json");
  EXPECT_THROW(samples.add(long_runs[1], "b.json"), ConfigError);
}

TEST(SweepMergerTest, PointsFollowTheRunOrderOfTheSweep) {
  // Two points (payload 4096 expanded first, then 16): points and their columns come in the
  // order of the lowest run index, not sorted by value or name.
  std::vector<RunRecord> records;
  std::size_t index = 0;
  for (const int payload : {4096, 16}) {
    for (const char* selector : {"fifo", "ctabs"}) {
      const RunSpec run = make_run(index++, selector, 1, payload);
      records.push_back(read_record(record_text(run, make_result(selector, 1, 2, 50'000, index))));
    }
  }
  SweepMerger merger;
  for (auto it = records.rbegin(); it != records.rend(); ++it) merger.add(*it, "r.json");
  const SweepSummary summary = std::move(merger).finish();
  ASSERT_EQ(summary.points.size(), 2u);
  EXPECT_EQ(summary.points[0].axes[0].second, 4096);
  EXPECT_EQ(summary.points[1].axes[0].second, 16);
  EXPECT_EQ(summary.points[1].columns[0].selector, "fifo");
  EXPECT_EQ(summary.points[1].columns[1].selector, "ctabs");
}

// --across latency.mean of `summary`, as the console shows it.
std::string latency_overview(const SweepSummary& summary) {
  std::ostringstream out;
  print_sweep_overview(summary, metric_indices(summary.metrics, "latency.mean", "--across"), out);
  return out.str();
}

// --across names metrics by their summary keys, in the order wanted.
TEST(SweepOverviewTest, MetricsAreNamedByTheirKeys) {
  const std::vector<stats::Metric> metrics = stats::comparison_metrics();
  const std::vector<std::size_t> indices =
      metric_indices(metrics, "latency.p99,throughput", "--across");
  ASSERT_EQ(indices.size(), 2u);
  EXPECT_EQ(metrics[indices[0]].key, "latency.p99");
  EXPECT_EQ(metrics[indices[1]].key, "throughput");
  const std::string unknown = testing::error_of(
      [&] { static_cast<void>(metric_indices(metrics, "throughput,latency.p95", "--across")); });
  EXPECT_EQ(unknown.rfind("--across \"throughput,latency.p95\": unknown metric \"latency.p95\"; "
                          "valid metrics: throughput, latency.mean, latency.p50, latency.p99, ",
                          0),
            0u)
      << unknown;
  EXPECT_EQ(testing::error_of([&] {
              static_cast<void>(metric_indices(metrics, "throughput,", "--across"));
            }).rfind("--across \"throughput,\": unknown metric \"\"", 0),
            0u);
  EXPECT_EQ(testing::error_of([&] {
              static_cast<void>(metric_indices(metrics, "throughput,throughput", "--across"));
            }),
            "--across \"throughput,throughput\": \"throughput\" given twice");
}

// A row per point: its axis values, the baseline's pooled value and the other column's Δ%
// against it, marked as the per-point tables mark it. fifo's seeds pool to 3,600 us over 14
// calls; ctabs's are 20% quicker, not significantly over three seeds.
TEST(SweepOverviewTest, OneRowPerPointWithTheBaselinesValueAndTheOthersDelta) {
  SweepMerger merger;
  for (const RunRecord& record : point_records()) merger.add(record, "r.json");
  const SweepSummary summary = std::move(merger).finish();
  EXPECT_EQ(latency_overview(summary),
            "sweep demo | seeds 1..3 | Δ% against fifo\n"
            "         latency mean (us)\n"
            "payload   fifo    ctabs Δ%\n"
            "16       257.1     -20.0%~\n"
            "values pooled over the calls of each point's seeds; Δ% of the pooled values against "
            "fifo; ~ = not significant (Welch's t-test of the per-seed values, 5% level)\n");
}

// A point without the baseline's column has no Δ%: "-" in its cells, and the baseline stays the
// first selector even when the first point lacks it. With one seed nothing is marked.
TEST(SweepOverviewTest, APointWithoutTheBaselineShowsNoDelta) {
  SweepMerger merger;
  std::size_t index = 0;
  for (const int payload : {4096, 16}) {
    for (const char* selector : {"fifo", "ctabs"}) {
      const RunSpec run = make_run(index++, selector, 1, payload);
      if (payload == 4096 && std::string(selector) == "fifo") continue;
      const std::int64_t latency_ns = std::string(selector) == "fifo" ? 50'000 : 40'000;
      merger.add(read_record(record_text(run, make_result(selector, 1, 2, latency_ns, index))),
                 "r.json");
    }
  }
  const SweepSummary summary = std::move(merger).finish();
  EXPECT_EQ(latency_overview(summary),
            "sweep demo | seed 1 | Δ% against fifo\n"
            "         latency mean (us)\n"
            "payload   fifo    ctabs Δ%\n"
            "4096         -           -\n"
            "16       50.00      -20.0%\n"
            "values pooled over the calls of each point's seeds; Δ% of the pooled values against "
            "fifo\n");
}

// Each row is marked as its point's own table marks it: with three seeds a difference is tested,
// with one (a point whose other seeds are missing) nothing is.
TEST(SweepOverviewTest, EachPointIsMarkedByItsOwnSeeds) {
  SweepMerger merger;
  for (const RunRecord& record : point_records()) merger.add(record, "r.json");
  std::size_t index = 6;
  for (const char* selector : {"fifo", "ctabs"}) {
    const RunSpec run = make_run(index++, selector, 1, 4096);
    const std::int64_t latency_ns = std::string(selector) == "fifo" ? 100'000 : 80'000;
    merger.add(read_record(record_text(run, make_result(selector, 1, 1, latency_ns, index))),
               "r.json");
  }
  const SweepSummary summary = std::move(merger).finish();
  ASSERT_EQ(summary.points.size(), 2u);
  const std::string text = latency_overview(summary);
  EXPECT_NE(text.find("\n16       257.1     -20.0%~\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n4096     100.0      -20.0%\n"), std::string::npos) << text;
}

// A selector run under two placements is labelled with each, at every point: also where one
// point lacks one of them (whose own table then labels the other by its selector alone).
TEST(SweepOverviewTest, ColumnsAreLabelledOnceForTheWholeSweep) {
  SweepMerger merger;
  std::size_t index = 0;
  for (const int payload : {16, 4096}) {
    for (const auto& [selector, placement] :
         {std::pair<std::string, std::string>{"fifo", "mainline"},
          {"ctabs", "mainline"},
          {"ctabs", "gki"}}) {
      RunSpec run = make_run(index++, selector, 1, payload);
      run.placement = placement;
      run.run_id = run_id_of(run);
      if (payload == 4096 && placement == "gki") continue;
      stats::RunResult result = make_result(selector, 1, 2, 50'000, index);
      result.placement = placement;
      merger.add(read_record(record_text(run, result)), "r.json");
    }
  }
  const SweepSummary summary = std::move(merger).finish();
  ASSERT_EQ(summary.points.size(), 2u);
  ASSERT_EQ(summary.points[1].columns.size(), 2u);
  EXPECT_EQ(summary.points[1].columns[1].label, "ctabs");  // the point's own table
  EXPECT_EQ(latency_overview(summary),
            "sweep demo | seed 1 | Δ% against fifo\n"
            "         latency mean (us)\n"
            "payload   fifo  ctabs mainline Δ%  ctabs gki Δ%\n"
            "16       50.00              +0.0%         +0.0%\n"
            "4096     50.00              +0.0%             -\n"
            "values pooled over the calls of each point's seeds; Δ% of the pooled values against "
            "fifo\n");
}

// An axis over kernel.placement varies the placement by row: the columns are the selectors
// alone, so that every point's values stand under them (not each point's under a column of its
// own placement, with "-" everywhere else).
TEST(SweepOverviewTest, AnAxisOverThePlacementLeavesItOutOfTheColumns) {
  SweepMerger merger;
  std::size_t index = 0;
  for (const std::string placement : {"gki", "walt"}) {
    for (const std::string selector : {"fifo", "ctabs"}) {
      RunSpec run = make_run(index++, selector, 1, 16);
      run.axes = {{"pl", placement}};  // the axis's name is free
      run.overrides = {{"kernel.placement", placement}};
      run.placement = placement;
      run.run_id = run_id_of(run);
      const std::int64_t base_ns = placement == "gki" ? 50'000 : 60'000;
      stats::RunResult result =
          make_result(selector, 1, 2, selector == "fifo" ? base_ns : base_ns / 2, index);
      result.placement = placement;
      merger.add(read_record(record_text(run, result)), "r.json");
    }
  }
  const SweepSummary summary = std::move(merger).finish();
  EXPECT_EQ(latency_overview(summary),
            "sweep demo | seed 1 | Δ% against fifo\n"
            "      latency mean (us)\n"
            "pl     fifo    ctabs Δ%\n"
            "gki   50.00      -50.0%\n"
            "walt  60.00      -50.0%\n"
            "values pooled over the calls of each point's seeds; Δ% of the pooled values against "
            "fifo\n");
}

// The overview's column keys leave out a part that an axis varies: one value in every column of
// each point, given by one of that point's axis values (itself, or an object's member of the
// part's name), not the same at every point. Nothing else is left out, whatever the axes are
// named.
TEST(SweepOverviewTest, ColumnKeysLeaveOutWhatAnAxisVaries) {
  using Keys = std::vector<std::vector<io::SweepColumnKey>>;
  using Values = std::vector<std::vector<json>>;
  // An axis over the placement, selectors fifo and ctabs.
  EXPECT_EQ(io::sweep_overview_keys(
                {{{"fifo", "gki"}, {"ctabs", "gki"}}, {{"fifo", "walt"}, {"ctabs", "walt"}}},
                Values{{"gki"}, {"walt"}}),
            (Keys{{{"fifo", ""}, {"ctabs", ""}}, {{"fifo", ""}, {"ctabs", ""}}}));
  // An axis over the selector, one placement: the placement stays, as it is the same at every
  // point.
  EXPECT_EQ(io::sweep_overview_keys({{{"fifo", "gki"}}, {{"ctabs", "gki"}}},
                                    Values{{"fifo", 20}, {"ctabs", 20}}),
            (Keys{{{"", "gki"}}, {{"", "gki"}}}));
  // Axes over both.
  EXPECT_EQ(io::sweep_overview_keys({{{"fifo", "gki"}}, {{"ctabs", "walt"}}},
                                    Values{{"fifo", "gki"}, {"ctabs", "walt"}}),
            (Keys{{{"", ""}}, {{"", ""}}}));
  // An axis over kernel, its values objects that set the selector.
  EXPECT_EQ(
      io::sweep_overview_keys({{{"fifo", "gki"}}, {{"ctabs", "gki"}}},
                              Values{{json{{"selector", "fifo"}}}, {json{{"selector", "ctabs"}}}}),
      (Keys{{{"", "gki"}}, {{"", "gki"}}}));
  // Another axis, and points that each lack a column (runs missing): the selectors differ by
  // point, but no axis sets them, so they stay.
  const Keys missing = {{{"fifo", "gki"}}, {{"ctabs", "gki"}}};
  EXPECT_EQ(io::sweep_overview_keys(missing, Values{{16}, {4096}}), missing);
  EXPECT_EQ(io::sweep_overview_keys(
                missing, Values{{json{{"placement", "fifo"}}}, {json{{"placement", "ctabs"}}}}),
            missing);  // a member of another name does not count
  // An axis over something else, and the selectors within each point: nothing left out.
  const Keys both = {{{"fifo", "gki"}, {"ctabs", "gki"}}, {{"fifo", "gki"}, {"ctabs", "gki"}}};
  EXPECT_EQ(io::sweep_overview_keys(both, Values{{40}, {60}}), both);

  EXPECT_EQ(io::sweep_column_labels({{"", "gki"}, {"", "walt"}}),
            (std::vector<std::string>{"gki", "walt"}));
  EXPECT_EQ(io::sweep_column_labels({{"", ""}}), (std::vector<std::string>{"all"}));
  EXPECT_EQ(io::sweep_column_labels({{"fifo", ""}, {"ctabs", ""}}),
            (std::vector<std::string>{"fifo", "ctabs"}));
}

}  // namespace
}  // namespace bindersim::sweep
