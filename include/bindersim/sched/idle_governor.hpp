// The menu cpuidle governor of one CPU: which idle state a CPU enters when it goes idle.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "bindersim/engine/time.hpp"
#include "bindersim/topology/topology.hpp"

namespace bindersim::sched {

using engine::SimTime;

// After drivers/cpuidle/governors/menu.c (Linux 6.1). The expected idle time is the smaller of
//  - the time to the CPU's next timer, scaled by a correction factor learned per range of that
//    time (how long idle periods with such a timer distance really lasted: a CPU that other
//    CPUs' wakeups keep interrupting learns to expect short periods), and
//  - the typical interval of the last eight periods, when they repeat (standard deviation at
//    most 20 us or a sixth of the mean, after dropping up to two high outliers).
// The state is the deepest whose minimum residency fits the expected idle time. Arithmetic is
// the kernel's (integer microseconds for the intervals, fixed-point factors). Left out, as
// they change nothing for the modelled workloads: I/O waiters (6.1 divides the expected idle
// time by 1 + 10 x the CPU's I/O waiters to bound the exit latency; binder and sleeping
// threads are no I/O waiters, and with none the bound is the expected idle time, which a
// state whose residency fits always meets), the PM QoS latency limit (no task sets one) and
// the tick-stop decision (a prediction under the 4 ms tick keeps the tick, and the state must
// then fit until the next tick; here the tick is always stopped).
class MenuGovernor {
 public:
  static constexpr std::size_t kIntervals = 8;
  static constexpr std::size_t kBuckets = 6;          // next timer < 10 us, < 100 us, ... >= 100 ms
  static constexpr std::uint64_t kResolution = 1024;  // fixed-point unit of a correction factor
  static constexpr std::uint64_t kDecay = 8;          // a factor's memory, in idle periods
  static constexpr SimTime kMaxInteresting = 50 * engine::kMillisecond;
  // The distance used when a CPU has no timer pending: the platform's periodic timers (the
  // clocksource watchdog, vmstat) bound every idle period to about this.
  static constexpr SimTime kNoTimer = engine::kSecond;

  MenuGovernor();

  // The state to enter now, given the time until the CPU's next timer (engine::kNever: none).
  // Remembers what it needs for reflect().
  int select(std::span<const topology::IdleState> states, SimTime until_next_timer);
  // The idle period started by the last select() ended after `residency` (from entering the
  // state to running again, its exit latency included).
  void reflect(SimTime residency, SimTime exit_latency);

  // The expected idle time of the last select().
  SimTime predicted() const { return predicted_; }
  // get_typical_interval(): the mean of the recent intervals when they repeat, in us
  // (UINT_MAX, as the kernel says "none", otherwise).
  std::uint64_t typical_interval_us() const;

 private:
  static std::size_t bucket_of(SimTime until_next_timer);

  std::array<std::uint64_t, kIntervals>
      intervals_{};  // recent idle periods (us), exit latency deducted
  std::size_t next_interval_ = 0;
  std::array<std::uint64_t, kBuckets>
      correction_{};  // measured / next timer, x kResolution x kDecay
  std::size_t bucket_ = 0;
  SimTime next_timer_ = 0;
  SimTime predicted_ = 0;
};

}  // namespace bindersim::sched
