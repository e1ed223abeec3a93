#include "bindersim/stats/summary.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

namespace bindersim::stats {
namespace {

const Metric& metric_named(const std::vector<Metric>& metrics, const std::string& key) {
  for (const Metric& m : metrics) {
    if (m.key == key) return m;
  }
  ADD_FAILURE() << "no metric " << key;
  return metrics.front();
}

// A small run: 4 completed two-way calls in 2 simulated seconds, all SCHED_FIFO: one at
// 10 us on the same core, three at 30 us across clusters; no SCHED_OTHER calls.
RunResult small_run() {
  RunResult r;
  r.completed = 4;
  r.simulated_ns = 2'000'000'000;
  r.tier(SchedClass::kFifo, Tier::kSameCore).record_n(10'000, 1);
  r.tier(SchedClass::kFifo, Tier::kCrossCluster).record_n(30'000, 3);
  for (const auto& cls : r.tiers) {
    for (const auto& h : cls) r.latency.merge(h);
  }
  r.counters = {.cpu_cycles = 400,
                .cache_refs = 80,
                .cache_misses = 8,
                .migrations = 2,
                .context_switches = 12};
  r.selection = {.same_cpu = 1,
                 .same_cluster = 0,
                 .other = 3,
                 .none_idle = 0,
                 .nudges_applied = 0,
                 .nudges_declined = 2};
  return r;
}

TEST(StudentT, TabulatedValuesAtEveryDegreeOfFreedom) {
  // Textbook two-sided 95% critical values (NIST/SEMATECH e-Handbook, 1.3.6.7.2): df 1, 2, 4,
  // 10, 30, 40, 60 and 100. Above 30 they are not the normal's 1.96 (that was 3.6% too narrow
  // at 34): the normal is only the limit, approached at 1000.
  EXPECT_DOUBLE_EQ(student_t975(1), 12.706);
  EXPECT_DOUBLE_EQ(student_t975(2), 4.303);
  EXPECT_DOUBLE_EQ(student_t975(4), 2.776);
  EXPECT_DOUBLE_EQ(student_t975(10), 2.228);
  EXPECT_DOUBLE_EQ(student_t975(30), 2.042);
  EXPECT_DOUBLE_EQ(student_t975(34), 2.032);
  EXPECT_DOUBLE_EQ(student_t975(40), 2.021);
  EXPECT_DOUBLE_EQ(student_t975(60), 2.000);
  EXPECT_DOUBLE_EQ(student_t975(100), 1.984);
  EXPECT_DOUBLE_EQ(student_t975(1000), 1.962);
}

TEST(StudentT, DecreasesWithDegreesOfFreedom) {
  // More data, narrower interval: the critical value never grows with df.
  for (std::size_t df = 1; df < 250; ++df) {
    EXPECT_GE(student_t975(df), student_t975(df + 1)) << "df " << df;
  }
}

TEST(SampleStatistics, MeanVarianceAndConfidenceInterval) {
  // {1..5}: mean 3, variance 2.5, half-width t(4) * sqrt(2.5 / 5) = 2.776 * 0.7071068.
  const std::vector<double> x = {1, 2, 3, 4, 5};
  EXPECT_DOUBLE_EQ(mean(x), 3.0);
  EXPECT_DOUBLE_EQ(sample_variance(x), 2.5);
  ASSERT_TRUE(ci95_half_width(x).has_value());
  EXPECT_NEAR(*ci95_half_width(x), 1.9629284, 1e-6);

  // Two samples 10 and 12: variance 2, half-width t(1) * sqrt(2 / 2) = 12.706.
  const std::vector<double> y = {10, 12};
  EXPECT_DOUBLE_EQ(mean(y), 11.0);
  EXPECT_NEAR(*ci95_half_width(y), 12.706, 1e-12);
}

TEST(SampleStatistics, NoIntervalFromOneSample) {
  // One value has a mean but no spread, hence no confidence interval.
  const std::vector<double> x = {42.0};
  EXPECT_DOUBLE_EQ(mean(x), 42.0);
  EXPECT_DOUBLE_EQ(sample_variance(x), 0.0);
  EXPECT_FALSE(ci95_half_width(x).has_value());
  EXPECT_FALSE(ci95_half_width(std::vector<double>{}).has_value());
}

TEST(Welch, ClearlyDifferentSamplesAreSignificant) {
  // Equal variances 2.5 and n = 5: t = -10 / sqrt(0.5 + 0.5) = -10, df = 8.
  const std::vector<double> a = {10, 11, 12, 13, 14};
  const std::vector<double> b = {20, 21, 22, 23, 24};
  const auto test = welch_test(a, b);
  ASSERT_TRUE(test.has_value());
  EXPECT_NEAR(test->t, -10.0, 1e-9);
  EXPECT_NEAR(test->df, 8.0, 1e-9);
  EXPECT_TRUE(test->significant);
}

TEST(Welch, IdenticalSamplesAreNotSignificant) {
  const std::vector<double> a = {1, 2, 3};
  const auto test = welch_test(a, a);
  ASSERT_TRUE(test.has_value());
  EXPECT_DOUBLE_EQ(test->t, 0.0);
  EXPECT_FALSE(test->significant);
}

TEST(Welch, UnequalVariancesUseSatterthwaiteDegreesOfFreedom) {
  // a = {1,2,3,4}: mean 2.5, s^2/n = 1.6667/4; b = {2,6,10}: mean 6, s^2/n = 16/3.
  // t = -3.5 / sqrt(5.75) = -1.45960; df = 5.75^2 / (0.41667^2/3 + 5.33333^2/2) = 2.31529.
  const std::vector<double> a = {1, 2, 3, 4};
  const std::vector<double> b = {2, 6, 10};
  const auto test = welch_test(a, b);
  ASSERT_TRUE(test.has_value());
  EXPECT_NEAR(test->t, -1.459601, 1e-5);
  EXPECT_NEAR(test->df, 2.315286, 1e-5);
  EXPECT_FALSE(test->significant);
}

TEST(Welch, DegreesOfFreedomAreRoundedDown) {
  // Same spreads as above, b shifted by 5.5: t = -9 / sqrt(5.75) = -3.7533, df = 2.3153.
  // |t| exceeds t(3) = 3.182 but not t(2) = 4.303: rounding df down keeps it not significant.
  const std::vector<double> a = {1, 2, 3, 4};
  const std::vector<double> b = {7.5, 11.5, 15.5};
  const auto test = welch_test(a, b);
  ASSERT_TRUE(test.has_value());
  EXPECT_NEAR(test->t, -3.753259, 1e-5);
  EXPECT_GT(std::fabs(test->t), student_t975(3));
  EXPECT_FALSE(test->significant);
}

TEST(Welch, DegreesOfFreedomOfExactlyFourAreNotRoundedDownToThree) {
  // a = {1,2,3} and b = {3.4,4.4,5.4} have equal variances 1 and n = 3: df is 4 exactly, which
  // doubles compute as 3.999999999999999. t = -2.4 / sqrt(2/3) = -2.9394 exceeds t(4) = 2.776
  // but not t(3) = 3.182: taken as 4, the difference is significant.
  const std::vector<double> a = {1, 2, 3};
  const std::vector<double> b = {3.4, 4.4, 5.4};
  const auto test = welch_test(a, b);
  ASSERT_TRUE(test.has_value());
  EXPECT_NEAR(test->df, 4.0, 1e-9);
  EXPECT_NEAR(test->t, -2.939388, 1e-5);
  EXPECT_LT(std::fabs(test->t), student_t975(3));
  EXPECT_TRUE(test->significant);
}

TEST(Welch, ConstantSamplesDifferExactlyWhenTheirMeansDiffer) {
  const std::vector<double> five = {5, 5, 5};
  const std::vector<double> six = {6, 6};
  const auto same = welch_test(five, five);
  ASSERT_TRUE(same.has_value());
  EXPECT_FALSE(same->significant);
  const auto different = welch_test(five, six);
  ASSERT_TRUE(different.has_value());
  EXPECT_TRUE(different->significant);
  EXPECT_TRUE(std::isinf(different->t));
  EXPECT_LT(different->t, 0.0);
  // Pooled degrees of freedom, as for equal variances: 3 + 2 - 2.
  EXPECT_EQ(different->df, 3.0);
}

TEST(Welch, NoClaimWithFewerThanTwoSamples) {
  // One seed gives no variance estimate: no significance is claimed either way.
  EXPECT_FALSE(welch_test(std::vector<double>{1}, std::vector<double>{100, 101}).has_value());
  EXPECT_FALSE(welch_test(std::vector<double>{1, 2}, std::vector<double>{100}).has_value());
}

TEST(CompareColumns, DeltaAndSignificanceAgainstTheFirstColumn) {
  // Column 1 is 10 above column 0 (mean 11): +90.909%, with a spread that makes it significant;
  // column 2 is column 0 again: +0%, not significant.
  const auto stats = compare_columns({{10, 11, 12}, {20, 21, 22}, {10, 11, 12}});
  ASSERT_EQ(stats.size(), 3u);
  EXPECT_EQ(stats[0].n, 3u);
  EXPECT_DOUBLE_EQ(*stats[0].mean, 11.0);
  EXPECT_NEAR(*stats[0].ci95, 4.303 * std::sqrt(1.0 / 3.0), 1e-9);
  EXPECT_FALSE(stats[0].delta_pct.has_value());
  EXPECT_FALSE(stats[0].significant.has_value());
  EXPECT_NEAR(*stats[1].delta_pct, 1000.0 / 11.0, 1e-9);
  EXPECT_EQ(stats[1].significant, std::optional<bool>(true));
  EXPECT_DOUBLE_EQ(*stats[2].delta_pct, 0.0);
  EXPECT_EQ(stats[2].significant, std::optional<bool>(false));
}

TEST(CompareColumns, OneSeedGivesMeansAndDeltasOnly) {
  const auto stats = compare_columns({{10}, {12}});
  EXPECT_DOUBLE_EQ(*stats[1].mean, 12.0);
  EXPECT_FALSE(stats[1].ci95.has_value());
  EXPECT_NEAR(*stats[1].delta_pct, 20.0, 1e-12);
  EXPECT_FALSE(stats[1].significant.has_value());
}

TEST(CompareColumns, ADeltaIsAShareOfTheBaselinesMagnitude) {
  // Against a negative baseline mean (-10), a mean of -5 is higher: +50%, not -50%.
  const auto stats = compare_columns({{-10, -10}, {-5, -5}});
  EXPECT_DOUBLE_EQ(*stats[1].delta_pct, 50.0);
}

TEST(CompareColumns, ZeroBaselineAndUndefinedColumns) {
  // 0 -> 0 is no change; 0 -> 1 has no percentage; a column without values has no mean.
  const auto stats = compare_columns({{0, 0}, {0, 0}, {1, 1}, {}});
  EXPECT_DOUBLE_EQ(*stats[1].delta_pct, 0.0);
  EXPECT_FALSE(stats[2].delta_pct.has_value());
  EXPECT_EQ(stats[2].significant, std::optional<bool>(true));
  EXPECT_EQ(stats[3].n, 0u);
  EXPECT_FALSE(stats[3].mean.has_value());
  EXPECT_FALSE(stats[3].delta_pct.has_value());
  EXPECT_FALSE(stats[3].significant.has_value());
}

TEST(Metrics, KeysAreUniqueAndDirectionsAsDocumented) {
  const auto metrics = comparison_metrics();
  std::set<std::string> keys;
  for (const Metric& m : metrics) {
    EXPECT_TRUE(keys.insert(m.key).second) << "duplicate " << m.key;
    EXPECT_FALSE(m.label.empty());
    EXPECT_FALSE(m.unit.empty());
  }
  // 4 headline rows, 2 per class and tier, 5 counters, 4 decisions, 2 nudge counts, failed
  // sends and 8 rows of the allocator lock.
  EXPECT_EQ(metrics.size(), 4u + 2u * kNumSchedClasses * kNumTiers + 5u + 4u + 2u + 1u + 8u);
  EXPECT_EQ(metric_named(metrics, "throughput").better, Better::kHigher);
  EXPECT_EQ(metric_named(metrics, "latency.p99").better, Better::kLower);
  EXPECT_EQ(metric_named(metrics, "latency.p99").unit, "us");
  EXPECT_EQ(metric_named(metrics, "tiers.sched_fifo.same_core.share").better, Better::kNeutral);
  EXPECT_EQ(metric_named(metrics, "counters.cache_misses").unit, "per call");
  EXPECT_EQ(better_name(Better::kLower), "lower");
  EXPECT_EQ(better_name(Better::kHigher), "higher");
  EXPECT_EQ(better_name(Better::kNeutral), "neutral");
}

TEST(Metrics, AllocatorLockRowsFromAConstructedRun) {
  // 10 acquisitions of which 4 waited (40%), waits of 2, 4, 6 and 8 us (p50 4 us, p99 8 us),
  // holds of 1 us each; 30 us of spinning and 10 us of inversion over 4 calls: 7.5 and 2.5 us
  // per call; 2 inversion episodes and 1 failed send over 4 calls: 0.5 and 0.25 per call.
  const auto metrics = comparison_metrics();
  RunResult r = small_run();
  LockStats& lock = r.allocator.alloc_lock;
  lock.acquisitions = 10;
  lock.contended = 4;
  for (std::int64_t us : {2, 4, 6, 8}) lock.wait_ns.record(us * 1000);
  lock.hold_ns.record_n(1000, 10);
  lock.spin_ns = 30'000;
  lock.inversion_ns = 10'000;
  lock.inversions = 2;
  r.failed_calls = 1;
  auto value = [&](const std::string& key) { return metric_named(metrics, key).value(r); };
  EXPECT_DOUBLE_EQ(*value("allocator.alloc_lock.contended_share"), 40.0);
  EXPECT_NEAR(*value("allocator.alloc_lock.wait.p50"), 4.0, 0.005);
  EXPECT_NEAR(*value("allocator.alloc_lock.wait.p99"), 8.0, 0.01);
  EXPECT_DOUBLE_EQ(*value("allocator.alloc_lock.hold.mean"), 1.0);
  EXPECT_DOUBLE_EQ(*value("allocator.alloc_lock.spin.time"), 7.5);
  EXPECT_DOUBLE_EQ(*value("allocator.alloc_lock.inversions.time"), 2.5);
  EXPECT_DOUBLE_EQ(*value("allocator.alloc_lock.inversions.count"), 0.5);
  EXPECT_DOUBLE_EQ(*value("failed_calls"), 0.25);
  EXPECT_EQ(metric_named(metrics, "allocator.alloc_lock.spin.time").better, Better::kLower);
  // Without acquisitions the lock rows are undefined, not zero.
  r.allocator.alloc_lock = LockStats{};
  EXPECT_FALSE(value("allocator.alloc_lock.contended_share").has_value());
  EXPECT_FALSE(value("allocator.alloc_lock.wait.p50").has_value());
}

TEST(Metrics, ExtractedFromAConstructedRun) {
  const auto metrics = comparison_metrics();
  const RunResult r = small_run();
  auto value = [&](const std::string& key) { return metric_named(metrics, key).value(r); };

  // 4 calls in 2 s; latency mean (10 + 3 * 30) / 4 = 25 us; p50 and p99 are 30 us (to the
  // histogram's 0.1% resolution).
  EXPECT_DOUBLE_EQ(*value("throughput"), 2.0);
  EXPECT_DOUBLE_EQ(*value("latency.mean"), 25.0);
  EXPECT_NEAR(*value("latency.p50"), 30.0, 0.03);
  EXPECT_NEAR(*value("latency.p99"), 30.0, 0.03);
  // SCHED_FIFO: 25% same core at 10 us, 0% same cluster (no mean), 75% cross cluster at 30 us.
  EXPECT_DOUBLE_EQ(*value("tiers.sched_fifo.same_core.share"), 25.0);
  EXPECT_DOUBLE_EQ(*value("tiers.sched_fifo.same_core.mean"), 10.0);
  EXPECT_DOUBLE_EQ(*value("tiers.sched_fifo.same_cluster.share"), 0.0);
  EXPECT_FALSE(value("tiers.sched_fifo.same_cluster.mean").has_value());
  EXPECT_DOUBLE_EQ(*value("tiers.sched_fifo.cross_cluster.share"), 75.0);
  EXPECT_DOUBLE_EQ(*value("tiers.sched_fifo.cross_cluster.mean"), 30.0);
  // SCHED_OTHER made no calls: its shares are undefined, not 0.
  EXPECT_FALSE(value("tiers.sched_other.same_core.share").has_value());
  // Counts per completed call.
  EXPECT_DOUBLE_EQ(*value("counters.cpu_cycles"), 100.0);
  EXPECT_DOUBLE_EQ(*value("counters.cache_refs"), 20.0);
  EXPECT_DOUBLE_EQ(*value("counters.cache_misses"), 2.0);
  EXPECT_DOUBLE_EQ(*value("counters.migrations"), 0.5);
  EXPECT_DOUBLE_EQ(*value("counters.context_switches"), 3.0);
  EXPECT_DOUBLE_EQ(*value("selection.same_cpu"), 0.25);
  EXPECT_DOUBLE_EQ(*value("selection.other"), 0.75);
  EXPECT_DOUBLE_EQ(*value("selection.none_idle"), 0.0);
  EXPECT_DOUBLE_EQ(*value("nudges.applied"), 0.0);
  EXPECT_DOUBLE_EQ(*value("nudges.declined"), 0.5);
}

TEST(Metrics, UndefinedWithoutCalls) {
  // A run that completed nothing has no latency and no per-call counts.
  const auto metrics = comparison_metrics();
  const RunResult empty;
  EXPECT_FALSE(metric_named(metrics, "latency.mean").value(empty).has_value());
  EXPECT_FALSE(metric_named(metrics, "counters.cpu_cycles").value(empty).has_value());
  const auto all = measure(metrics, empty);
  ASSERT_EQ(all.size(), metrics.size());
  EXPECT_FALSE(all[1].has_value());  // latency.mean
}

TEST(Summarize, RunsAreLaidOutColumnByColumn) {
  // Two columns of two seeds: completed 1, 2 | 5, 6. The third run's cpu cycles per call are
  // left undefined by completing nothing, so column 1 of that metric has one sample.
  const auto metrics = comparison_metrics();
  std::vector<std::vector<std::optional<double>>> values;
  for (std::uint64_t completed : {1, 2, 0, 6}) {
    RunResult r;
    r.completed = completed;
    r.simulated_ns = 1'000'000'000;
    r.counters.cpu_cycles = 10 * completed;
    values.push_back(measure(metrics, r));
  }
  const auto summary = summarize(metrics, values, 2);
  ASSERT_EQ(summary.size(), metrics.size());
  EXPECT_EQ(summary[0].metric.key, "throughput");
  EXPECT_DOUBLE_EQ(*summary[0].columns[0].mean, 1.5);
  EXPECT_DOUBLE_EQ(*summary[0].columns[1].mean, 3.0);
  EXPECT_NEAR(*summary[0].columns[1].delta_pct, 100.0, 1e-12);
  for (const MetricSummary& row : summary) {
    if (row.metric.key != "counters.cpu_cycles") continue;
    EXPECT_EQ(row.columns[0].n, 2u);
    EXPECT_EQ(row.columns[1].n, 1u);
    EXPECT_DOUBLE_EQ(*row.columns[1].mean, 10.0);
    EXPECT_FALSE(row.columns[1].significant.has_value());
  }
}

}  // namespace
}  // namespace bindersim::stats
