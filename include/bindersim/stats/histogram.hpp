// Log-linear latency histogram after HdrHistogram's design: bounded memory, exact merge,
// about 0.1% value resolution. Bucket storage grows with the highest value recorded.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <utility>
#include <vector>

#include "bindersim/common/error.hpp"

namespace bindersim::stats {

// Records non-negative integer values (nanoseconds). Values below 2^kSubBucketBits are exact;
// above, each power-of-two range is split into 2^(kSubBucketBits-1) equal buckets, so a
// recorded value is known to within 1/1024 of itself. Values above kMaxValue are clamped (and
// counted in clamped()). Count, sum, min and max are exact. Only the buckets up to the highest
// one used are stored (in whole powers of two): an empty histogram holds none, one of
// latencies up to 100 us about a quarter of them.
class Histogram {
 public:
  static constexpr int kSubBucketBits = 11;                         // 2048 sub-buckets
  static constexpr std::int64_t kMaxValue = std::int64_t{1} << 40;  // about 18 minutes in ns

  Histogram();

  // A negative value is an internal error (aborts); values above kMaxValue count as kMaxValue.
  // Inline: the simulation records a value per call and per lock hold.
  void record(std::int64_t value) { record_n(value, 1); }
  void record_n(std::int64_t value, std::uint64_t count) {
    BSIM_CHECK_MSG(value >= 0, "histogram values are non-negative");
    if (count == 0) return;
    if (value > kMaxValue) [[unlikely]] {
      value = kMaxValue;
      clamped_ += count;
    }
    const std::size_t index = index_of(value);
    if (index >= counts_.size()) [[unlikely]]
      grow_to(index);
    counts_[index] += count;
    if (count_ == 0) {
      min_ = value;
      max_ = value;
    } else {
      min_ = std::min(min_, value);
      max_ = std::max(max_, value);
    }
    count_ += count;
    sum_ += static_cast<Uint128>(value) * count;
  }
  // Adds every sample of `other` (bucket by bucket: exact).
  void merge(const Histogram& other);
  void clear();

  std::uint64_t count() const { return count_; }
  std::int64_t min() const;  // 0 when empty
  std::int64_t max() const;  // 0 when empty
  double mean() const;       // exact (sum / count); 0 when empty
  // The mean rounded to the nearest integer (halves away from zero), computed in integers
  // from the exact sum; 0 when empty.
  std::int64_t mean_rounded() const;
  Uint128 sum() const { return sum_; }  // sum of recorded (clamped) values
  // The value at quantile q in [0, 1]: the highest value equivalent to the bucket holding
  // the ceil(q * count)-th smallest sample, clamped to [min, max]; q = 0 gives min, q = 1
  // max. 0 when empty. A q outside [0, 1] is an internal error.
  std::int64_t percentile(double q) const;
  std::uint64_t clamped() const { return clamped_; }

  // Bucket index of a value in [0, kMaxValue] and the value range of a bucket (for tests and
  // exports). Buckets are numbered by increasing value; bucket_count() is fixed.
  static std::size_t bucket_of(std::int64_t value);
  static std::int64_t bucket_lowest(std::size_t bucket);
  static std::int64_t bucket_highest(std::size_t bucket);
  static std::size_t bucket_count();
  // Bytes held by this histogram (object plus bucket storage): at most bucket_count()
  // buckets, whatever is recorded.
  std::size_t footprint_bytes() const;

  // Non-empty buckets as (bucket index, count), ascending: a compact lossless form.
  std::vector<std::pair<std::uint32_t, std::uint64_t>> nonzero_buckets() const;

  // Equal samples: the same counts in every bucket (however much storage each holds), count,
  // clamped count, sum, min and max.
  bool operator==(const Histogram& other) const;

 private:
  // Bucket layout: values below 2048 map to themselves. A value v >= 2048 with bit width b is
  // shifted right by s = b - 11, which leaves a sub-bucket in [1024, 2048); its bucket is
  // s * 1024 + (v >> s). Consecutive powers of two thus occupy consecutive runs of 1024
  // buckets, each bucket 2^s wide, so a bucket is never wider than 1/1024 of its lowest value.
  // `value` is in [0, kMaxValue].
  static std::size_t index_of(std::int64_t value) {
    const auto v = static_cast<std::uint64_t>(value);
    const int shift = std::max(static_cast<int>(std::bit_width(v)) - kSubBucketBits, 0);
    return (static_cast<std::size_t>(shift) << (kSubBucketBits - 1)) +
           static_cast<std::size_t>(v >> shift);
  }

  // Stores buckets [0, index] (and up to the end of index's power of two), none yet stored
  // holding a count of zero.
  void grow_to(std::size_t index);

  std::vector<std::uint64_t> counts_;  // buckets [0, counts_.size()); the rest hold zero
  std::uint64_t count_ = 0;
  std::uint64_t clamped_ = 0;
  // Sum of recorded values; 128-bit so that billions of long samples cannot overflow.
  Uint128 sum_ = 0;
  std::int64_t min_ = 0;
  std::int64_t max_ = 0;
};

}  // namespace bindersim::stats
