// PELT-style signals: geometric averages of time spent running (or runnable) with the kernel's
// 32 ms half-life, evaluated in continuous time with deterministic arithmetic.
#pragma once

#include <array>
#include <cstdint>

#include "bindersim/engine/time.hpp"

namespace bindersim::sched {

using engine::SimTime;

// Multiplier y^(delta / period) with y^32 = 1/2 and a 1024 us period: the fraction of a PELT
// average that survives `delta` nanoseconds. Built from basic IEEE operations only.
double pelt_decay(SimTime delta);

// pelt_decay() remembered: a small direct-mapped cache keyed by the span. The spans between
// updates repeat (service times, periodic events), so about half of the factors are found
// here; every value is pelt_decay()'s own, bit for bit. One per simulation.
class PeltDecayMemo {
 public:
  double operator()(SimTime delta) {
    const auto index = static_cast<std::size_t>(
        (static_cast<std::uint64_t>(delta) * 0x9e3779b97f4a7c15ULL) >> (64 - kIndexBits));
    Entry& entry = entries_[index];
    if (entry.delta != delta) entry = Entry{delta, pelt_decay(delta)};
    return entry.value;
  }

 private:
  static constexpr int kIndexBits = 9;  // 512 entries, 8 KiB: stays in the L1 cache
  struct Entry {
    SimTime delta = 0;
    double value = 1.0;  // pelt_decay(0)
  };
  std::array<Entry, std::size_t{1} << kIndexBits> entries_{};
};

// One PELT average. While "active" it converges to `ceiling` (1024 x capacity scale for
// utilisation, 1024 for runnable fraction), while inactive it decays towards 0.
class PeltSignal {
 public:
  // Advances the average to `now`, with the state it had since the last update.
  void update(SimTime now, bool active, double ceiling);
  // The same with the decay factor from `decay` (the same value, maybe remembered).
  void update(SimTime now, bool active, double ceiling, PeltDecayMemo& decay) {
    if (now > last_update_) advance(now, decay(now - last_update_), active, ceiling);
  }
  // The same with the decay factor pelt_decay(now - last_update()) already known (signals
  // updated together share it).
  void advance(SimTime now, double keep, bool active, double ceiling) {
    value_ = value_ * keep + (active ? ceiling * (1.0 - keep) : 0.0);
    last_update_ = now;
  }
  // The value the average would have at `now` if inactive since the last update.
  double decayed_value(SimTime now) const;
  double value() const { return value_; }
  SimTime last_update() const { return last_update_; }
  void set(double value, SimTime now) {
    value_ = value;
    last_update_ = now;
  }

 private:
  double value_ = 0;
  SimTime last_update_ = 0;
};

}  // namespace bindersim::sched
