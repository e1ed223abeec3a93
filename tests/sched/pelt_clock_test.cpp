// The scheduler's PELT clock (docs/model.md, "PELT"). By default signals age by the wall clock
// and utilisation accrues towards the CPU's current capacity; with the tunable
// scaled_pelt_clock they age by the kernel's per-run-queue clock (rq_clock_pelt(),
// update_rq_clock_pelt() and update_idle_rq_clock_pelt() in kernel/sched/pelt.h), which runs at
// the current capacity over 1024 while the CPU is busy, and utilisation accrues towards 1024.
// SA8155P: silver 0-3 (capacity 307 at 1785.6 MHz), gold 4-6 (872), prime 7 (1024).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "bindersim/sched/pelt.hpp"
#include "bindersim/sched/placement.hpp"
#include "bindersim/sched/scheduler.hpp"
#include "sched_fixture.hpp"

namespace bindersim::sched {
namespace {

using engine::SimTime;
using namespace fixture;  // NOLINT(google-build-using-namespace): test helpers

constexpr SimTime kPeltPeriod = 1024 * kMicrosecond;

SchedTunables pelt_tunables(bool scaled, bool misfit = false,
                            Governor governor = Governor::kPerformance) {
  SchedTunables tunables;
  tunables.scaled_pelt_clock = scaled;
  tunables.misfit_migration = misfit;
  tunables.governor = governor;
  return tunables;
}

// The name of a parameterised case: the clock it runs (true: scaled).
std::string clock_name(const ::testing::TestParamInfo<bool>& scaled) {
  return scaled.param ? "Scaled" : "Wall";
}

class ScaledPeltTest : public ::testing::Test, public SchedHarness {
 protected:
  ScaledPeltTest() : SchedHarness(pelt_tunables(true)) {}
  // A task with `params` that has kept silver CPU 0 busy for 2 s: its CPU's fair or RT
  // utilisation past the lost-idle threshold (about 1012).
  int saturating_hog(const TaskParams& params) {
    const int tid = occupy(kSilver0, params);
    run_for(2000 * kMillisecond);
    const auto util = sched_.utilisation(kSilver0);
    EXPECT_GT(util.fair + util.rt, 1012.0);
    return tid;
  }
};

class WallPeltTest : public ::testing::Test, public SchedHarness {
 protected:
  WallPeltTest() : SchedHarness(pelt_tunables(false)) {}
};

TEST_F(WallPeltTest, TheClockIsTheWallClockAndUtilisationConvergesToTheCpuCapacity) {
  const int silver = occupy(kSilver0, fair_params("silver"));
  run_until(500 * kMillisecond);
  ASSERT_EQ(sched_.rq(kSilver0).curr, silver);
  EXPECT_EQ(sched_.pelt_clock(kSilver0), now());
  EXPECT_EQ(sched_.pelt_clock(kGold0), now());
  EXPECT_NEAR(sched_.task_util(silver), topology_.capacity(kSilver0), 1.0);
}

TEST_F(ScaledPeltTest, UtilisationOfARunningTaskConvergesTo1024OnAnyCpu) {
  // A task that always runs accrues utilisation towards 1024 on any CPU, slower on a small one,
  // and the queries report it while the task is still running. Its load (runnable fraction x
  // weight) converges to its weight.
  const int silver = occupy(kSilver0, fair_params("silver"));
  const int prime = occupy(kPrime, fair_params("prime"));
  run_until(100 * kMillisecond);
  ASSERT_EQ(sched_.rq(kSilver0).curr, silver);
  // After 100 ms the prime task (capacity 1024) is past three half-lives, the silver one
  // (capacity 307, at its top frequency) not one.
  EXPECT_GT(sched_.task_util(prime), 1024.0 * (1.0 - std::exp2(-3.0)));
  EXPECT_LT(sched_.task_util(silver), 512.0);
  run_until(2000 * kMillisecond);
  ASSERT_EQ(sched_.rq(kSilver0).curr, silver);
  ASSERT_EQ(sched_.rq(kPrime).curr, prime);
  EXPECT_NEAR(sched_.task_util(silver), 1024.0, 1.0);
  EXPECT_NEAR(sched_.task_util(prime), 1024.0, 1.0);
  EXPECT_NEAR(sched_.cpu_util(kPrime), 1024.0, 1.0);
  EXPECT_NEAR(sched_.cpu_load(kSilver0), 1024.0, 1.0);
}

TEST_F(ScaledPeltTest, TheClockRunsAtTheCurrentCapacityAndCatchesUpWhenTheCpuIdles) {
  // update_rq_clock_pelt(): while the silver CPU runs a task its PELT clock advances by the
  // wall time scaled by capacity / 1024 and by frequency / fmax (each rounded down, as
  // cap_scale()); when it idles, not fully busy, the clock is the wall clock again.
  const int cpu = kSilver0;
  const SimTime start = now();
  ASSERT_EQ(sched_.pelt_clock(cpu), start);  // idle: the wall clock, nothing lost
  const int tid = occupy(cpu, fair_params("worker"));
  run_for(20 * kMillisecond);
  ASSERT_EQ(sched_.rq(cpu).curr, tid);
  const std::int64_t capacity = topology_.capacity(cpu);
  const auto& info = topology_.cpu(cpu);
  const std::int64_t freq_scale =
      sched_.current_freq_khz(topology_.cluster_of(cpu)) * 1024 / info.max_freq_khz;
  const SimTime stamp = sched_.rq(cpu).pelt_stamp;
  const SimTime scaled = (now() - stamp) * capacity / 1024 * freq_scale / 1024;
  EXPECT_NEAR(static_cast<double>(sched_.pelt_clock(cpu) - sched_.rq(cpu).pelt_base),
              static_cast<double>(scaled), 2.0);
  EXPECT_LT(sched_.pelt_clock(cpu), now() - 10 * kMillisecond);
  // The task's utilisation is its signal carried over the PELT time, not the wall time.
  EXPECT_LT(sched_.task_util(tid), 1024.0 * (1.0 - pelt_decay(now() - start)));
  const SimTime busy_clock = sched_.pelt_clock(cpu);
  sched_.block(tid);
  EXPECT_EQ(sched_.pelt_clock(cpu), busy_clock);  // no time has passed
  run_for(kMicrosecond);
  EXPECT_EQ(sched_.pelt_clock(cpu), now());
  EXPECT_EQ(sched_.rq(cpu).idle_lost_ns, 0);
}

TEST_F(ScaledPeltTest, ASwitchBetweenTwoTasksDoesNotSyncTheClock) {
  // The kernel syncs the PELT clock to the wall clock only when it picks the idle task and
  // while that runs: a task that sleeps while another waits for its CPU hands the CPU over
  // with the clock running on.
  const int cpu = kSilver0;
  const int first = occupy(cpu, fair_params("first"));
  const int second = occupy(cpu, fair_params("second"));
  run_for(20 * kMillisecond);
  const int running = sched_.rq(cpu).curr;
  ASSERT_TRUE(running == first || running == second);
  const SimTime clock = sched_.pelt_clock(cpu);
  ASSERT_LT(clock, now() - 10 * kMillisecond);
  sched_.block(running);
  EXPECT_EQ(sched_.rq(cpu).curr, running == first ? second : first);
  EXPECT_EQ(sched_.pelt_clock(cpu), clock);
  run_for(kMillisecond);
  EXPECT_LT(sched_.pelt_clock(cpu), clock + kMillisecond / 2);
}

TEST_F(ScaledPeltTest, AFullyBusyCpuLosesTheIdleTimeItsClockLagged) {
  // update_idle_rq_clock_pelt(): a CPU whose utilisation reached its maximum had no idle time
  // to give back. When its task sleeps the PELT clock does not jump to the wall clock: the lag
  // is lost idle time, and the clock goes on from where it was (the utilisation does not
  // decay at once).
  const int cpu = kSilver0;
  const int tid = saturating_hog(fair_params("hog"));
  const SimTime busy_clock = sched_.pelt_clock(cpu);
  const double util = sched_.cpu_util_fair(cpu);
  sched_.block(tid);
  EXPECT_EQ(sched_.pelt_clock(cpu), busy_clock);
  EXPECT_EQ(sched_.rq(cpu).idle_lost_ns, now() - busy_clock);
  EXPECT_DOUBLE_EQ(sched_.cpu_util_fair(cpu), util);
  run_for(32 * kPeltPeriod);  // idle: the clock runs with the wall clock
  EXPECT_EQ(sched_.pelt_clock(cpu), busy_clock + 32 * kPeltPeriod);
  EXPECT_NEAR(sched_.cpu_util_fair(cpu), util / 2.0, 1e-6);
}

TEST_F(ScaledPeltTest, AnExitingTaskStillCountsTowardsTheLostIdleTime) {
  // The kernel removes a dead task's utilisation from its run queue after the switch
  // (task_dead_fair()): the CPU it leaves was fully busy, and its clock's lag is lost.
  const int cpu = kSilver0;
  const int tid = saturating_hog(fair_params("hog"));
  const SimTime busy_clock = sched_.pelt_clock(cpu);
  sched_.exit(tid);
  EXPECT_EQ(sched_.rq(cpu).idle_lost_ns, now() - busy_clock);
  EXPECT_LT(sched_.cpu_util_fair(cpu), 1.0);  // and then it is gone
}

TEST_F(ScaledPeltTest, AfterAnRtTaskTheClockCatchesUpHoweverBusyTheCpuWas) {
  // 6.1 looks for lost idle time in pick_next_task_fair()'s fast path, which schedule() takes
  // only when the task that leaves is fair: after an RT task that kept the CPU fully busy,
  // the clock catches up with the wall clock and the RT utilisation decays over the lag.
  const int cpu = kSilver0;
  const int tid = saturating_hog(rt_params("rt-hog", 50));
  const SimTime busy_clock = sched_.pelt_clock(cpu);
  ASSERT_LT(busy_clock, now() - 1000 * kMillisecond);
  const double util = sched_.cpu_util_rt(cpu);
  sched_.block(tid);
  EXPECT_EQ(sched_.rq(cpu).idle_lost_ns, 0);
  run_for(kMicrosecond);
  EXPECT_EQ(sched_.pelt_clock(cpu), now());
  EXPECT_NEAR(sched_.cpu_util_rt(cpu), util * pelt_decay(now() - busy_clock), 1e-6);
}

// A task's utilisation is its CFS entity's: while the task runs boosted to RT (a binder thread
// with an inherited priority) the entity is not updated, and on its return to the fair class it
// has decayed as if it had slept, over its CPU's PELT time. Over two half-lives of wall time
// that is two half-lives by the wall clock, 2 x 872 / 1024 by the scaled clock of a gold CPU at
// its top frequency. Meanwhile the CPU's RT utilisation grows from zero towards its ceiling.
class PeltRtTest : public ::testing::TestWithParam<bool>, public SchedHarness {
 protected:
  PeltRtTest() : SchedHarness(pelt_tunables(GetParam())) {}
};

TEST_P(PeltRtTest, TaskSignalsDoNotGrowWhileItRunsAsRt) {
  const int tid = occupy(kGold0, fair_params("boosted"));
  run_until(200 * kMillisecond);
  ASSERT_EQ(sched_.rq(kGold0).curr, tid);
  const double fair_util = sched_.task_util(tid);
  ASSERT_GT(fair_util, 0.85 * topology_.capacity(kGold0));
  sched_.set_attributes(tid, Policy::kFifo, 0, 50);
  const SimTime boosted_at = sched_.pelt_clock(kGold0);
  run_for(2 * 32 * kPeltPeriod);  // two half-lives of wall time
  ASSERT_EQ(sched_.rq(kGold0).curr, tid);
  const double keep = pelt_decay(sched_.pelt_clock(kGold0) - boosted_at);
  const double pelt_half_lives = GetParam() ? 2.0 * topology_.capacity(kGold0) / 1024.0 : 2.0;
  EXPECT_NEAR(keep, std::exp2(-pelt_half_lives), 0.001);
  EXPECT_GT(sched_.cpu_util_rt(kGold0),
            (1.0 - std::exp2(-pelt_half_lives)) * 0.95 * sched_.util_ceiling(kGold0));
  sched_.set_attributes(tid, Policy::kNormal, 0, 0);
  EXPECT_NEAR(sched_.task_util(tid), fair_util * keep, 1.0);
  EXPECT_NEAR(sched_.cpu_util_fair(kGold0), fair_util * keep, 1.0);
}

INSTANTIATE_TEST_SUITE_P(Clocks, PeltRtTest, ::testing::Bool(), clock_name);

// Misfit migration: a hog on silver CPU 1 stops fitting at about 246 (307 / 1.25). By the wall
// clock its utilisation approaches 307 and passes 246 after log2(307 / 61) = 2.33 half-lives,
// 76 ms; by the scaled clock it approaches 1024 and passes 246 after log2(1024 / 778) = 0.396
// half-lives of PELT time, 13.0 ms, which the silver clock at its top frequency takes 43.3 ms
// of wall time to run. The tick (4 ms) notices it.
class PeltMisfitTest : public ::testing::TestWithParam<bool>, public SchedHarness {
 protected:
  PeltMisfitTest() : SchedHarness(pelt_tunables(GetParam(), true)) {}
  SimTime tick_of_misfit() {
    const int hog = spawn(fair_params("hog", 0, only(1)), 10'000 * kMillisecond, 1);
    sched_.task_for_update(hog).params.affinity = 0;
    SimTime at = 0;
    while (MainlinePlacement::fits_capacity(sched_.task_util(hog), sched_.capacity_of(1)) &&
           at < 500 * kMillisecond) {
      at += sched_.tunables().tick_ns;
      run_until(at - 1);
    }
    run_until(at + 1);
    EXPECT_EQ(sched_.misfit_migrations(), 1U);
    EXPECT_NE(sched_.task(hog).cpu, 1);
    return at;
  }
};

TEST_P(PeltMisfitTest, ASilverHogStopsFittingWhenItsClockSays) {
  const SimTime at = tick_of_misfit();
  if (GetParam()) {
    EXPECT_GT(at, 43 * kMillisecond);
    EXPECT_LE(at, 48 * kMillisecond);
  } else {
    EXPECT_GT(at, 76 * kMillisecond);
    EXPECT_LE(at, 81 * kMillisecond);
  }
}

INSTANTIATE_TEST_SUITE_P(Clocks, PeltMisfitTest, ::testing::Bool(), clock_name);

// schedutil on a busy silver CPU from its lowest operating point (300 MHz of 1785.6): by the
// scaled clock each step up speeds the clock, and the ramp to the top point (1.25 x util
// >= 307) takes about 112 ms; by the wall clock, utilisation accruing towards the current
// capacity, about 336 ms.
class PeltRampTest : public ::testing::TestWithParam<bool>, public SchedHarness {
 protected:
  PeltRampTest() : SchedHarness(pelt_tunables(GetParam(), false, Governor::kSchedutil)) {}
};

TEST_P(PeltRampTest, ABusySilverCpuRampsToItsTopFrequency) {
  const int cluster = topology_.cluster_of(kSilver0);
  const auto& opps = topology_.frequency_domain(cluster).opps;
  occupy(kSilver0, fair_params("silver"));
  run_until(100 * kMicrosecond);
  ASSERT_EQ(sched_.current_freq_khz(cluster), opps.front().freq_khz);
  SimTime at = 100 * kMicrosecond;
  while (sched_.current_freq_khz(cluster) < opps.back().freq_khz && at < engine::kSecond) {
    at += 100 * kMicrosecond;
    run_until(at);
  }
  if (GetParam()) {
    EXPECT_GT(at, 80 * kMillisecond);
    EXPECT_LT(at, 150 * kMillisecond);
  } else {
    EXPECT_GT(at, 300 * kMillisecond);
    EXPECT_LT(at, 380 * kMillisecond);
  }
}

INSTANTIATE_TEST_SUITE_P(Clocks, PeltRampTest, ::testing::Bool(), clock_name);

}  // namespace
}  // namespace bindersim::sched
