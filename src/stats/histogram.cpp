#include "bindersim/stats/histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace bindersim::stats {

namespace {

constexpr std::int64_t kSubBucketCount = std::int64_t{1} << Histogram::kSubBucketBits;  // 2048
constexpr int kHalfBits = Histogram::kSubBucketBits - 1;  // 1024 buckets per power of two

}  // namespace

Histogram::Histogram() = default;

void Histogram::grow_to(std::size_t index) {
  const std::size_t run = std::size_t{1} << kHalfBits;
  // Whole runs of 1024 buckets: a histogram grows at most 32 times.
  const std::size_t needed = std::min(bucket_count(), (index / run + 1) * run);
  counts_.reserve(needed);
  counts_.resize(needed, 0);
}

std::size_t Histogram::bucket_count() { return index_of(kMaxValue) + 1; }

std::size_t Histogram::bucket_of(std::int64_t value) {
  BSIM_CHECK(value >= 0 && value <= kMaxValue);
  return index_of(value);
}

std::int64_t Histogram::bucket_lowest(std::size_t bucket) {
  BSIM_CHECK(bucket < bucket_count());
  if (bucket < static_cast<std::size_t>(kSubBucketCount)) return static_cast<std::int64_t>(bucket);
  const std::size_t shift = (bucket >> kHalfBits) - 1;
  const std::size_t sub = bucket - (shift << kHalfBits);  // in [1024, 2048)
  return static_cast<std::int64_t>(sub << shift);
}

std::int64_t Histogram::bucket_highest(std::size_t bucket) {
  BSIM_CHECK(bucket < bucket_count());
  if (bucket < static_cast<std::size_t>(kSubBucketCount)) return static_cast<std::int64_t>(bucket);
  const std::size_t shift = (bucket >> kHalfBits) - 1;
  return bucket_lowest(bucket) + (std::int64_t{1} << shift) - 1;
}

void Histogram::merge(const Histogram& other) {
  if (other.count_ == 0) return;
  if (other.counts_.size() > counts_.size()) grow_to(other.counts_.size() - 1);
  for (std::size_t i = 0; i < other.counts_.size(); ++i) counts_[i] += other.counts_[i];
  if (count_ == 0) {
    min_ = other.min_;
    max_ = other.max_;
  } else {
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
  }
  count_ += other.count_;
  clamped_ += other.clamped_;
  sum_ += other.sum_;
}

void Histogram::clear() {
  std::fill(counts_.begin(), counts_.end(), 0);
  count_ = 0;
  clamped_ = 0;
  sum_ = 0;
  min_ = 0;
  max_ = 0;
}

bool Histogram::operator==(const Histogram& other) const {
  if (count_ != other.count_ || clamped_ != other.clamped_ || sum_ != other.sum_ ||
      min_ != other.min_ || max_ != other.max_) {
    return false;
  }
  const std::size_t common = std::min(counts_.size(), other.counts_.size());
  const auto zero = [](std::uint64_t n) { return n == 0; };
  return std::equal(counts_.begin(), counts_.begin() + common, other.counts_.begin()) &&
         std::all_of(counts_.begin() + common, counts_.end(), zero) &&
         std::all_of(other.counts_.begin() + common, other.counts_.end(), zero);
}

std::int64_t Histogram::min() const { return count_ == 0 ? 0 : min_; }

std::int64_t Histogram::max() const { return count_ == 0 ? 0 : max_; }

double Histogram::mean() const {
  if (count_ == 0) return 0.0;
  return static_cast<double>(sum_) / static_cast<double>(count_);
}

std::int64_t Histogram::mean_rounded() const {
  if (count_ == 0) return 0;
  // round(sum / count) = floor((2 * sum + count) / (2 * count)); the sum of values up to 2^40
  // leaves ample headroom in 128 bits.
  const Uint128 n = count_;
  return static_cast<std::int64_t>((2 * sum_ + n) / (2 * n));
}

std::int64_t Histogram::percentile(double q) const {
  BSIM_CHECK_MSG(q >= 0.0 && q <= 1.0, "quantile outside [0, 1]");
  if (count_ == 0) return 0;
  if (q == 0.0) return min_;
  if (q == 1.0) return max_;
  // The rank ceil(q * count), after removing floating-point noise of relative size 1e-12 so
  // that e.g. 0.99 * 10000 is rank 9900 and not 9901.
  const double exact = q * static_cast<double>(count_);
  const double rounded_up = std::ceil(exact - exact * 1e-12);
  std::uint64_t rank = rounded_up < 1.0 ? 1 : static_cast<std::uint64_t>(rounded_up);
  rank = std::min(rank, count_);
  std::uint64_t seen = 0;
  // The buckets below min's are empty: the scan starts at min's.
  for (std::size_t i = index_of(min_); i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) return std::clamp(bucket_highest(i), min_, max_);
  }
  BSIM_CHECK_MSG(false, "bucket counts do not add up to count()");
  return max_;
}

std::vector<std::pair<std::uint32_t, std::uint64_t>> Histogram::nonzero_buckets() const {
  std::vector<std::pair<std::uint32_t, std::uint64_t>> out;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    if (counts_[i] != 0) out.emplace_back(static_cast<std::uint32_t>(i), counts_[i]);
  }
  return out;
}

std::size_t Histogram::footprint_bytes() const {
  return sizeof(*this) + counts_.capacity() * sizeof(std::uint64_t);
}

}  // namespace bindersim::stats
