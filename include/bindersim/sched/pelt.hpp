// PELT-style signals: geometric averages of time spent running (or runnable) with the kernel's
// 32 ms half-life, evaluated in continuous time with deterministic arithmetic.
#pragma once

#include <array>
#include <cstdint>

#include "bindersim/engine/time.hpp"

namespace bindersim::sched {

using engine::SimTime;

// Multiplier y^(delta / period) with y^32 = 1/2 and a 1024 us period: the fraction of a PELT
// average that survives `delta` nanoseconds. Built from basic IEEE operations only (the
// project compiles without FMA contraction, so every caller gets the same bits).
// Inline: the scheduler asks for about ten factors per simulated call, and a call would make
// its callers save and reload the floating-point values they hold (every SSE register is
// caller-saved).
inline double pelt_decay(SimTime delta) {
  constexpr double kPeriodNs = 1024.0 * 1000.0;  // one PELT period: 1024 us
  // 2^(-k/32) for k = 0..31: y^k with y^32 = 1/2.
  static constexpr std::array<double, 32> kYPow = {
      1.0000000000000000, 0.9785720620877001, 0.9576032806985737, 0.9370838170551500,
      0.9170040432046712, 0.8973545375015536, 0.8781260801866497, 0.8593096490612390,
      0.8408964152537145, 0.8228777390769825, 0.8052451659746271, 0.7879904225539432,
      0.7711054127039704, 0.7545822137967114, 0.7384130729697497, 0.7225904034885233,
      0.7071067811865476, 0.6919549409819160, 0.6771277734684463, 0.6626183215798707,
      0.6484197773255048, 0.6345254785958666, 0.6209289060367420, 0.6076236799902345,
      0.5946035575013605, 0.5818624293887887, 0.5693943173783458, 0.5571933712979462,
      0.5452538663326288, 0.5335702003384118, 0.5221368912137069, 0.5109485743270583};
  // 2^-k for k = 0..63 (exact).
  static constexpr std::array<double, 64> kHalvings = [] {
    std::array<double, 64> out{};
    double value = 1.0;
    for (double& each : out) {
      each = value;
      value *= 0.5;
    }
    return out;
  }();

  if (delta <= 0) return 1.0;
  const double periods = static_cast<double>(delta) / kPeriodNs;
  if (periods >= 32.0 * 64) return 0.0;  // below 2^-64: nothing survives
  // y^periods = 2^(-periods/32); split periods into whole 32-period halvings, whole periods
  // and a fraction of a period.
  const auto whole = static_cast<long long>(periods);
  const double fraction = periods - static_cast<double>(whole);
  // Whole 32-period halvings are exact powers of two. `whole` is not negative: indexed unsigned,
  // the remainder and quotient are a mask and a shift.
  const auto whole_periods = static_cast<std::uint64_t>(whole);
  const double result = kYPow[whole_periods % 32] * kHalvings[whole_periods / 32];
  // y^f for f in [0, 1): y^f = exp(f ln y), ln y = -ln 2 / 32; with |f ln y| < 0.022 the
  // Taylor series up to x^7 is exact to double precision (the next term is below 2e-18).
  const double x = -fraction * 0.69314718055994530942 / 32.0;
  const double y_fraction =
      1.0 +
      x * (1.0 +
           x / 2.0 *
               (1.0 +
                x / 3.0 * (1.0 + x / 4.0 * (1.0 + x / 5.0 * (1.0 + x / 6.0 * (1.0 + x / 7.0))))));
  return result * y_fraction;
}

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
