#include "bindersim/stats/histogram.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "../common/test_rng.hpp"
#include "bindersim/stats/result.hpp"

namespace bindersim::stats {
namespace {

using testing::TestRng;

// Spread over every order of magnitude in [0, limit]: a random value shifted right by a random
// amount.
std::int64_t log_spread(TestRng& rng, std::int64_t limit) {
  const auto shift = static_cast<int>(rng.below(64));
  const std::uint64_t v = rng.next() >> shift;
  return static_cast<std::int64_t>(v % (static_cast<std::uint64_t>(limit) + 1));
}

TEST(HistogramTest, EmptyHistogramReportsZeros) {
  // Nothing recorded: every statistic is 0.
  Histogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.min(), 0);
  EXPECT_EQ(h.max(), 0);
  EXPECT_EQ(h.mean(), 0.0);
  EXPECT_EQ(h.mean_rounded(), 0);
  EXPECT_EQ(h.percentile(0.5), 0);
  EXPECT_TRUE(h.nonzero_buckets().empty());
}

TEST(HistogramTest, ValuesBelow2048AreExact) {
  // Each value below 2^11 has a bucket of its own, so a histogram holding only that value
  // reports it exactly at every quantile.
  for (std::int64_t v = 0; v < 2048; ++v) {
    ASSERT_EQ(Histogram::bucket_of(v), static_cast<std::size_t>(v));
    ASSERT_EQ(Histogram::bucket_lowest(Histogram::bucket_of(v)), v);
    ASSERT_EQ(Histogram::bucket_highest(Histogram::bucket_of(v)), v);
  }
  Histogram h;
  for (std::int64_t v = 0; v < 2048; ++v) h.record(v);
  // The k-th smallest of 0..2047 is k-1: the median (rank 1024) is exactly 1023.
  EXPECT_EQ(h.percentile(0.5), 1023);
  EXPECT_EQ(h.percentile(0.25), 511);
  EXPECT_EQ(h.percentile(1.0), 2047);
}

TEST(HistogramTest, BucketsTileTheValueRangeWithoutGapsOrOverlap) {
  // Bucket i+1 starts right after bucket i ends, and both ends of a bucket map back to it.
  const std::size_t n = Histogram::bucket_count();
  EXPECT_EQ(Histogram::bucket_lowest(0), 0);
  for (std::size_t i = 0; i + 1 < n; ++i) {
    ASSERT_EQ(Histogram::bucket_highest(i) + 1, Histogram::bucket_lowest(i + 1)) << "bucket " << i;
    ASSERT_EQ(Histogram::bucket_of(Histogram::bucket_lowest(i)), i);
    ASSERT_EQ(Histogram::bucket_of(Histogram::bucket_highest(i)), i);
  }
  // The last bucket holds kMaxValue.
  EXPECT_EQ(Histogram::bucket_of(Histogram::kMaxValue), n - 1);
}

TEST(HistogramTest, RelativeErrorIsAtMostOnePartIn1024) {
  // For values over the whole range, every value in the bucket of v lies within v/1024 of v.
  TestRng rng(42);
  for (int i = 0; i < 200000; ++i) {
    const std::int64_t v = log_spread(rng, Histogram::kMaxValue);
    const std::size_t b = Histogram::bucket_of(v);
    const std::int64_t lo = Histogram::bucket_lowest(b);
    const std::int64_t hi = Histogram::bucket_highest(b);
    ASSERT_LE(lo, v);
    ASSERT_GE(hi, v);
    const double tolerance = static_cast<double>(v) / 1024.0;
    ASSERT_LE(static_cast<double>(hi - v), tolerance) << "value " << v;
    ASSERT_LE(static_cast<double>(v - lo), tolerance) << "value " << v;
  }
}

TEST(HistogramTest, PercentilesOfUniformOneToTenThousand) {
  // 1..10000 once each: the q-quantile is q * 10000, known to within 0.1%.
  Histogram h;
  for (std::int64_t v = 1; v <= 10000; ++v) h.record(v);
  EXPECT_NEAR(static_cast<double>(h.percentile(0.50)), 5000.0, 5.0);
  EXPECT_NEAR(static_cast<double>(h.percentile(0.90)), 9000.0, 9.0);
  EXPECT_NEAR(static_cast<double>(h.percentile(0.99)), 9900.0, 9.9);
  // The bucket's highest equivalent value never lies below the true sample.
  EXPECT_GE(h.percentile(0.50), 5000);
  EXPECT_GE(h.percentile(0.99), 9900);
  EXPECT_EQ(h.percentile(0.0), 1);
  EXPECT_EQ(h.percentile(1.0), 10000);
}

TEST(HistogramTest, PercentileFollowsTheRankRule) {
  // 90 fast samples and 10 slow ones: ranks 1..90 are 100 ns, ranks 91..100 are 1 ms.
  Histogram h;
  h.record_n(100, 90);
  h.record_n(1'000'000, 10);
  EXPECT_EQ(h.percentile(0.90), 100);         // rank 90
  EXPECT_EQ(h.percentile(0.901), 1'000'000);  // rank ceil(90.1) = 91, clamped to max
  EXPECT_EQ(h.percentile(0.01), 100);
}

TEST(HistogramTest, PercentileRankIgnoresFloatingPointNoise) {
  // 0.07 * 100 is a hair above 7 in doubles: the rank is still 7, so the 7th percentile of
  // 7 ones and 93 twos is 1, not 2.
  Histogram h;
  h.record_n(1, 7);
  h.record_n(2, 93);
  EXPECT_EQ(h.percentile(0.07), 1);
  EXPECT_EQ(h.percentile(0.0701), 2);
}

TEST(HistogramTest, PercentileIsClampedToMinAndMax) {
  // A single wide-bucket value is reported exactly at every quantile.
  Histogram h;
  h.record(123'456'789);
  for (double q : {0.0, 0.001, 0.5, 0.99, 1.0}) EXPECT_EQ(h.percentile(q), 123'456'789) << q;
}

TEST(HistogramTest, MinMaxMeanAreExact) {
  // Statistics come from the samples, not from bucket bounds.
  Histogram h;
  h.record(3);
  h.record(1'000'003);
  h.record(7'777'777'777);
  EXPECT_EQ(h.count(), 3u);
  EXPECT_EQ(h.min(), 3);
  EXPECT_EQ(h.max(), 7'777'777'777);
  EXPECT_DOUBLE_EQ(h.mean(), (3.0 + 1'000'003.0 + 7'777'777'777.0) / 3.0);
  EXPECT_EQ(h.sum(), Uint128{3 + 1'000'003 + 7'777'777'777LL});
}

TEST(HistogramTest, RoundedMeanRoundsHalvesUp) {
  // 1.5 rounds to 2, 4/3 rounds to 1, 5/3 rounds to 2.
  Histogram a;
  a.record(1);
  a.record(2);
  EXPECT_EQ(a.mean_rounded(), 2);
  Histogram b;
  b.record_n(1, 2);
  b.record(2);
  EXPECT_EQ(b.mean_rounded(), 1);
  Histogram c;
  c.record(1);
  c.record_n(2, 2);
  EXPECT_EQ(c.mean_rounded(), 2);
}

TEST(HistogramTest, RecordNEqualsRepeatedRecord) {
  // record_n(v, n) is n calls of record(v); record_n(v, 0) changes nothing.
  Histogram a;
  Histogram b;
  for (int i = 0; i < 7; ++i) a.record(5000);
  b.record_n(5000, 7);
  b.record_n(9, 0);
  EXPECT_EQ(a, b);
  EXPECT_EQ(b.min(), 5000);
}

TEST(HistogramTest, MergeEqualsRecordingEverythingIntoOne) {
  // Two halves merged are bucket-for-bucket the histogram of all samples.
  TestRng rng(7);
  Histogram all;
  Histogram left;
  Histogram right;
  for (int i = 0; i < 50000; ++i) {
    const std::int64_t v = log_spread(rng, Histogram::kMaxValue * 2);  // some are clamped
    all.record(v);
    (i % 3 == 0 ? left : right).record(v);
  }
  Histogram merged = left;
  merged.merge(right);
  EXPECT_EQ(merged, all);
  EXPECT_EQ(merged.count(), all.count());
  EXPECT_EQ(merged.clamped(), all.clamped());
  EXPECT_EQ(merged.percentile(0.99), all.percentile(0.99));

  // Merging into an empty histogram copies; merging an empty one changes nothing.
  Histogram empty;
  empty.merge(all);
  EXPECT_EQ(empty, all);
  Histogram copy = all;
  copy.merge(Histogram{});
  EXPECT_EQ(copy, all);
}

TEST(HistogramTest, MergeIntoAnEmptyHistogramTakesTheOthersMinimumAndMaximum) {
  // An empty histogram's min and max are no samples: merged into, it takes the other's.
  Histogram empty;
  Histogram other;
  other.record(500);
  other.record(900);
  empty.merge(other);
  EXPECT_EQ(empty.min(), 500);
  EXPECT_EQ(empty.max(), 900);
  EXPECT_EQ(empty, other);
}

TEST(HistogramTest, ValuesAboveMaxAreClampedAndCounted) {
  // Values above kMaxValue count as kMaxValue; kMaxValue itself is not clamped.
  Histogram h;
  h.record(Histogram::kMaxValue);
  EXPECT_EQ(h.clamped(), 0u);
  h.record(Histogram::kMaxValue + 5);
  h.record(std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(h.count(), 3u);
  EXPECT_EQ(h.clamped(), 2u);
  EXPECT_EQ(h.max(), Histogram::kMaxValue);
  EXPECT_EQ(h.percentile(1.0), Histogram::kMaxValue);
  EXPECT_DOUBLE_EQ(h.mean(), static_cast<double>(Histogram::kMaxValue));
}

TEST(HistogramDeathTest, NegativeValueIsAnInternalError) {
  // A negative latency is a broken invariant: the check aborts.
  Histogram h;
  EXPECT_DEATH(h.record(-1), "non-negative");
}

TEST(HistogramTest, MemoryGrowsWithTheHighestValueAndStaysBounded) {
  // An empty histogram stores no bucket; latencies up to 100 us need about a quarter
  // of them; a million records over the whole range stay within the fixed bucket count (a few
  // hundred KiB).
  Histogram h;
  const std::size_t empty = h.footprint_bytes();
  EXPECT_EQ(empty, sizeof(Histogram));
  const std::size_t all = Histogram::bucket_count() * sizeof(std::uint64_t);
  TestRng rng(1);
  for (int i = 0; i < 100'000; ++i) h.record(log_spread(rng, 100'000));
  EXPECT_LT(h.footprint_bytes(), empty + all / 3);
  for (int i = 0; i < 1'000'000; ++i) h.record(log_spread(rng, Histogram::kMaxValue));
  EXPECT_GT(h.footprint_bytes(), empty + all * 9 / 10);
  EXPECT_LE(h.footprint_bytes(), empty + all);
  EXPECT_EQ(h.count(), 1'100'000u);
  EXPECT_EQ(h.percentile(1.0), h.max());
}

TEST(HistogramTest, EqualityDoesNotDependOnStorage) {
  // A histogram that once held a large value, cleared, then given small ones equals a new
  // one given the same small ones, though it stores more buckets; merging a histogram with
  // more storage into one with less gives the same as recording everything into one.
  Histogram grown;
  grown.record(Histogram::kMaxValue);
  grown.clear();
  grown.record(700);
  Histogram small;
  small.record(700);
  EXPECT_GT(grown.footprint_bytes(), small.footprint_bytes());
  EXPECT_EQ(grown, small);
  small.record(5);
  EXPECT_NE(grown, small);

  Histogram large;
  large.record(3'000'000'000);
  Histogram merged;
  merged.record(12);
  merged.merge(large);
  Histogram direct;
  direct.record(12);
  direct.record(3'000'000'000);
  EXPECT_EQ(merged, direct);
  EXPECT_EQ(merged.percentile(1.0), 3'000'000'000);
  EXPECT_EQ(merged.nonzero_buckets(), direct.nonzero_buckets());
}

TEST(HistogramTest, ClearReturnsToTheEmptyState) {
  // After clear() the histogram equals a new one.
  Histogram h;
  h.record(12);
  h.record(Histogram::kMaxValue + 1);
  h.clear();
  EXPECT_EQ(h, Histogram{});
  h.record(40);
  EXPECT_EQ(h.min(), 40);
}

TEST(HistogramTest, NonzeroBucketsListOccupiedBucketsAscending) {
  // Three samples of 5 and one of 3000 (a 2-wide bucket above 2048).
  Histogram h;
  h.record(3000);
  h.record_n(5, 3);
  const auto buckets = h.nonzero_buckets();
  ASSERT_EQ(buckets.size(), 2u);
  EXPECT_EQ(buckets[0], (std::pair<std::uint32_t, std::uint64_t>{5, 3}));
  EXPECT_EQ(buckets[1].first, Histogram::bucket_of(3000));
  EXPECT_EQ(buckets[1].second, 1u);
  EXPECT_EQ(
      Histogram::bucket_highest(buckets[1].first) - Histogram::bucket_lowest(buckets[1].first), 1);
}

// RunResult helpers live with the statistics they describe.
TEST(RunResultTest, NamesOfClassesAndTiers) {
  // The names used as JSON keys.
  EXPECT_EQ(sched_class_name(SchedClass::kFifo), "sched_fifo");
  EXPECT_EQ(sched_class_name(SchedClass::kOther), "sched_other");
  EXPECT_EQ(tier_name(Tier::kSameCore), "same_core");
  EXPECT_EQ(tier_name(Tier::kSameCluster), "same_cluster");
  EXPECT_EQ(tier_name(Tier::kCrossCluster), "cross_cluster");
}

TEST(RunResultTest, PerSecondIsCompletedCallsPerSimulatedSecond) {
  // 800,000 calls in 19.5 simulated seconds; no simulated time gives 0.
  RunResult r;
  r.completed = 800'000;
  r.simulated_ns = 19'500'000'000;
  EXPECT_NEAR(r.per_second(), 800'000.0 / 19.5, 1e-9);
  r.simulated_ns = 0;
  EXPECT_EQ(r.per_second(), 0.0);
}

}  // namespace
}  // namespace bindersim::stats
