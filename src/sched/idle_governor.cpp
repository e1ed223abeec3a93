#include "bindersim/sched/idle_governor.hpp"

#include <algorithm>
#include <limits>

namespace bindersim::sched {

namespace {
constexpr std::uint64_t kNoTypicalInterval = std::numeric_limits<std::uint32_t>::max();
}  // namespace

MenuGovernor::MenuGovernor() { correction_.fill(kResolution * kDecay); }

std::size_t MenuGovernor::bucket_of(SimTime until_next_timer) {
  std::size_t bucket = 0;
  for (SimTime limit = 10 * engine::kMicrosecond;
       bucket + 1 < kBuckets && until_next_timer >= limit; limit *= 10) {
    ++bucket;
  }
  return bucket;
}

std::uint64_t MenuGovernor::typical_interval_us() const {
  std::uint64_t threshold = std::numeric_limits<std::uint64_t>::max();  // outliers above it dropped
  for (;;) {
    std::uint64_t sum = 0;
    std::uint64_t max = 0;
    std::uint64_t count = 0;
    for (std::uint64_t value : intervals_) {
      if (value > threshold) continue;
      sum += value;
      max = std::max(max, value);
      ++count;
    }
    if (max == 0) return kNoTypicalInterval;
    const std::uint64_t avg = sum / count;
    std::uint64_t variance = 0;
    for (std::uint64_t value : intervals_) {
      if (value > threshold) continue;
      const auto diff = static_cast<std::int64_t>(value) - static_cast<std::int64_t>(avg);
      variance += static_cast<std::uint64_t>(diff * diff);
    }
    variance /= count;
    // Repeating: a standard deviation of at most 20 us, or under a sixth of the mean with at
    // least three quarters of the samples kept.
    if ((avg * avg > variance * 36 && count * 4 >= kIntervals * 3) || variance <= 400) return avg;
    if (count * 4 <= kIntervals * 3) return kNoTypicalInterval;
    threshold = max - 1;
  }
}

int MenuGovernor::select(std::span<const topology::IdleState> states, SimTime until_next_timer) {
  next_timer_ = std::clamp<SimTime>(until_next_timer, 0, kNoTimer);
  bucket_ = bucket_of(next_timer_);
  // The timer distance scaled by what such distances turned out to be, rounded to the closest
  // microsecond, then the smaller of that and the typical interval.
  const std::uint64_t scale =
      kResolution * kDecay * static_cast<std::uint64_t>(engine::kMicrosecond);
  const std::uint64_t corrected_us =
      (static_cast<std::uint64_t>(next_timer_) * correction_[bucket_] + scale / 2) / scale;
  const std::uint64_t predicted_us = std::min(corrected_us, typical_interval_us());
  predicted_ = static_cast<SimTime>(predicted_us) * engine::kMicrosecond;
  int state = 0;
  for (std::size_t i = 1; i < states.size(); ++i) {
    if (states[i].min_residency_ns > predicted_) break;
    state = static_cast<int>(i);
  }
  return state;
}

void MenuGovernor::reflect(SimTime residency, SimTime exit_latency) {
  // The wakeup began an exit latency before the CPU ran again; a residency shorter than twice
  // the exit latency means the state was barely reached, and counts half.
  SimTime measured = residency > 2 * exit_latency ? residency - exit_latency : residency / 2;
  measured = std::min(measured, next_timer_);  // a factor never exceeds unity
  std::uint64_t factor = correction_[bucket_];
  factor -= factor / kDecay;
  if (next_timer_ > 0 && measured < kMaxInteresting) {
    factor += kResolution * static_cast<std::uint64_t>(measured) /
              static_cast<std::uint64_t>(next_timer_);
  } else {
    factor += kResolution;  // idle so long that it counts as a perfect prediction
  }
  correction_[bucket_] = factor;
  intervals_[next_interval_] = static_cast<std::uint64_t>(measured / engine::kMicrosecond);
  next_interval_ = (next_interval_ + 1) % kIntervals;
}

}  // namespace bindersim::sched
