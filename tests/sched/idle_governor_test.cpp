// The menu idle governor against the rules of drivers/cpuidle/governors/menu.c.
#include "bindersim/sched/idle_governor.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <vector>

namespace bindersim::sched {
namespace {

using engine::kMicrosecond;
using engine::kMillisecond;
using engine::kNever;

// The SA8155P silver cluster's states: WFI, and core power-down (3,934 us minimum residency).
const std::vector<topology::IdleState> kStates = {
    {"wfi", 1 * kMicrosecond, 1 * kMicrosecond, 1 * kMicrosecond},
    {"core-pc", 355 * kMicrosecond, 909 * kMicrosecond, 3934 * kMicrosecond},
};
constexpr int kWfi = 0;
constexpr int kPowerDown = 1;

// Idle periods of `periods_us` in turn, each chosen for with a timer `timer_ns` away and ended
// after the period plus an exit latency of 1 us.
void idle_through(MenuGovernor& governor, std::initializer_list<SimTime> periods_us,
                  SimTime timer_ns) {
  for (SimTime us : periods_us) {
    governor.select(kStates, timer_ns);
    governor.reflect(us * kMicrosecond + kMicrosecond, kMicrosecond);
  }
}

TEST(MenuGovernorTest, UntrainedGovernorFollowsTheNextTimer) {
  // With unity correction and no interval history, the expected idle time is the time to the
  // next timer: power-down only when that timer is at least the state's residency away.
  MenuGovernor governor;
  EXPECT_EQ(governor.select(kStates, 3 * kMillisecond), kWfi);
  EXPECT_EQ(governor.predicted(), 3 * kMillisecond);
  MenuGovernor far;
  EXPECT_EQ(far.select(kStates, 5 * kMillisecond), kPowerDown);
  // Exactly the residency away is enough (menu_select() skips a state only when its target
  // residency exceeds the prediction); a microsecond less is not.
  MenuGovernor exact;
  EXPECT_EQ(exact.select(kStates, 3934 * kMicrosecond), kPowerDown);
  MenuGovernor short_of;
  EXPECT_EQ(short_of.select(kStates, 3933 * kMicrosecond), kWfi);
  // No timer at all: the platform's periodic timers bound the period.
  MenuGovernor none;
  EXPECT_EQ(none.select(kStates, kNever), kPowerDown);
  EXPECT_EQ(none.predicted(), MenuGovernor::kNoTimer);
}

TEST(MenuGovernorTest, RepeatingShortIntervalsOverrideADistantTimer) {
  // Eight idle periods of about 200 us (standard deviation well under a sixth of the mean):
  // the typical interval, 200 us, wins over a timer 20 ms away, so the CPU stays in WFI.
  MenuGovernor governor;
  idle_through(governor, {200, 210, 200, 210, 200, 210, 200, 210}, 20 * kMillisecond);
  EXPECT_EQ(governor.typical_interval_us(), 205U);
  EXPECT_EQ(governor.select(kStates, 20 * kMillisecond), kWfi);
  EXPECT_EQ(governor.predicted(), 205 * kMicrosecond);
}

TEST(MenuGovernorTest, AStandardDeviationOfExactlyTwentyMicrosecondsIsRepeating) {
  // Periods alternating 80 and 120 us: mean 100 us, variance exactly 400 us^2 (a standard
  // deviation of 20 us, not under a sixth of the mean). The variance limit of 400 is inclusive,
  // so all eight give the typical interval 100 us, not the 80 us left after dropping the 120s.
  MenuGovernor governor;
  idle_through(governor, {80, 120, 80, 120, 80, 120, 80, 120}, 20 * kMillisecond);
  EXPECT_EQ(governor.typical_interval_us(), 100U);
}

TEST(MenuGovernorTest, OutliersAreDroppedDownToSixOfTheEightSamples) {
  // Two long periods are dropped one at a time. The six left, 900 to 1100 us, have a standard
  // deviation under a sixth of their mean: with three quarters of the samples kept they give
  // the typical interval 1000 us.
  MenuGovernor six_repeating;
  idle_through(six_repeating, {1000, 1100, 900, 1000, 1100, 900, 5000, 6000}, 20 * kMillisecond);
  EXPECT_EQ(six_repeating.typical_interval_us(), 1000U);
  // When the six left still vary too much, no more are dropped: no typical interval, although
  // the five equal ones under the seventh would have repeated.
  MenuGovernor six_irregular;
  idle_through(six_irregular, {500, 500, 500, 500, 500, 1000, 5000, 6000}, 20 * kMillisecond);
  EXPECT_GT(six_irregular.typical_interval_us(), 1'000'000'000U);
}

TEST(MenuGovernorTest, IrregularIntervalsGiveNoTypicalInterval) {
  // Intervals spread from 10 us to 5 ms fail the variance test even after dropping the two
  // highest: no typical interval, so the timer decides.
  MenuGovernor governor;
  // A timer 60 ms away: the bucket from 10 ms, measured 50 ms or more, keeps a factor of one.
  idle_through(governor, {10, 5000, 40, 2500, 700, 90, 3000, 20}, 60 * kMillisecond);
  EXPECT_GT(governor.typical_interval_us(), 1'000'000'000U);
}

TEST(MenuGovernorTest, InterruptedPeriodsShrinkTheCorrectionFactor) {
  // A CPU whose timer is always ~8 ms away but which other CPUs' wakeups always interrupt
  // after ~1 ms learns that such periods last an eighth of the timer distance: after enough
  // periods it no longer powers down. Intervals vary (no typical interval) so that only the
  // correction factor can make the difference.
  MenuGovernor governor;
  EXPECT_EQ(governor.select(kStates, 8 * kMillisecond), kPowerDown);
  const SimTime periods_us[] = {600, 1400, 800, 1200, 500, 1500, 900, 1100};
  int selected = kPowerDown;
  for (int round = 0; round < 6; ++round) {
    for (SimTime us : periods_us) {
      selected = governor.select(kStates, 8 * kMillisecond);
      const SimTime exit = kStates[static_cast<std::size_t>(selected)].exit_latency_ns;
      governor.reflect(us * kMicrosecond + exit, exit);
    }
  }
  EXPECT_EQ(governor.select(kStates, 8 * kMillisecond), kWfi);
  EXPECT_LT(governor.predicted(), 2 * kMillisecond);
  EXPECT_GT(governor.predicted(), 500 * kMicrosecond);
  // Another timer range (a bucket of its own) keeps its unity factor.
  EXPECT_EQ(governor.select(kStates, 40 * kMillisecond), kPowerDown);
}

TEST(MenuGovernorTest, ATimerExactlyTenMicrosecondsAwayIsInTheSecondBucket) {
  // Periods cut to about half of a 99 us timer distance (spread from 2 to 98 us: no typical
  // interval) train the factor of the bucket of timers from 10 us up to 100 us. A timer exactly
  // 10 us away is in that bucket and is predicted shorter; one 9 us away is in the untrained
  // first bucket.
  MenuGovernor governor;
  const SimTime periods_us[] = {2, 98, 3, 97, 4, 96, 5, 95};
  for (int round = 0; round < 4; ++round) {
    for (SimTime us : periods_us) {
      governor.select(kStates, 99 * kMicrosecond);
      governor.reflect(us * kMicrosecond, 0);
    }
  }
  ASSERT_GT(governor.typical_interval_us(), 1'000'000'000U);
  governor.select(kStates, 10 * kMicrosecond);
  EXPECT_LT(governor.predicted(), 10 * kMicrosecond);
  governor.select(kStates, 9 * kMicrosecond);
  EXPECT_EQ(governor.predicted(), 9 * kMicrosecond);
}

TEST(MenuGovernorTest, ExitLatencyIsDeductedOrHalved) {
  // A period that lasted 3 x the exit latency counts its residency minus the exit latency;
  // one shorter than twice the exit latency counts half. Seen through the typical interval
  // of eight equal periods.
  MenuGovernor long_periods;
  MenuGovernor short_periods;
  for (int i = 0; i < 8; ++i) {
    long_periods.select(kStates, 10 * kMillisecond);
    long_periods.reflect(3 * 909 * kMicrosecond, 909 * kMicrosecond);
    short_periods.select(kStates, 10 * kMillisecond);
    short_periods.reflect(1000 * kMicrosecond, 909 * kMicrosecond);
  }
  EXPECT_EQ(long_periods.typical_interval_us(), 2U * 909U);
  EXPECT_EQ(short_periods.typical_interval_us(), 500U);
}

}  // namespace
}  // namespace bindersim::sched
