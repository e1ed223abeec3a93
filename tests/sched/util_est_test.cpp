// util_est (kernel/sched/fair.c util_est_update(); docs/model.md): the estimate a fair task
// keeps across sleeps, the run queue sums of the estimates of enqueued tasks, and what
// placement and the overutilisation test make of them. SA8155P: silver 0-3 (capacity 307),
// gold 4-6 (872), prime 7 (1024).
#include <gtest/gtest.h>

#include <memory>

#include "bindersim/sched/placement.hpp"
#include "bindersim/sched/scheduler.hpp"
#include "bindersim/sched/util_est.hpp"
#include "sched_fixture.hpp"

namespace bindersim::sched {
namespace {

using engine::SimTime;
using namespace fixture;  // NOLINT(google-build-using-namespace): test helpers

constexpr SimTime kPeriod = UtilEstimate::kPeltPeriodNs;

UtilEstSample sample(int util, int runnable = -1, int capacity_orig = 1024) {
  return UtilEstSample{util, runnable < 0 ? util : runnable, capacity_orig};
}

// --- the estimate alone ------------------------------------------------------------------------

TEST(UtilEstimateTest, StartsAtZeroAndTakesAnIncreaseAtOnce) {
  UtilEstimate estimate;
  EXPECT_EQ(estimate.value(), 0);
  estimate.on_sleep(0, sample(200));
  EXPECT_EQ(estimate.enqueued(), 200);
  EXPECT_EQ(estimate.ewma(), 200);  // UTIL_EST_FASTUP
  estimate.on_sleep(kPeriod, sample(300));
  EXPECT_EQ(estimate.ewma(), 300);
  EXPECT_EQ(estimate.value(), 300);
}

TEST(UtilEstimateTest, AveragesADecreaseWithAQuarterWeight) {
  UtilEstimate estimate;
  estimate.on_sleep(0, sample(200));
  estimate.on_sleep(kPeriod, sample(100));
  EXPECT_EQ(estimate.enqueued(), 100);
  EXPECT_EQ(estimate.ewma(), 175);  // 200 + (100 - 200) / 4
  EXPECT_EQ(estimate.value(), 175);
  estimate.on_sleep(2 * kPeriod, sample(100));
  EXPECT_EQ(estimate.ewma(), 156);  // (3 x 175 + 100) / 4 = 156.25, truncated
}

TEST(UtilEstimateTest, SkipsAnUpdateInThePeltPeriodOfTheLastOne) {
  // util_avg is recomputed only at PELT period boundaries: a second sleep within the same
  // 1024 us period finds it unchanged and leaves the estimate.
  UtilEstimate estimate;
  estimate.on_sleep(10 * kMicrosecond, sample(200));
  estimate.on_sleep(kPeriod - 1, sample(100));
  EXPECT_EQ(estimate.enqueued(), 200);
  EXPECT_EQ(estimate.ewma(), 200);
  estimate.on_sleep(kPeriod, sample(100));
  EXPECT_EQ(estimate.ewma(), 175);
}

TEST(UtilEstimateTest, IgnoresChangesWithinTheMargin) {
  UtilEstimate estimate;
  estimate.on_sleep(0, sample(200));
  // The average and the last sample both within 10 (1% of 1024): nothing is stored.
  estimate.on_sleep(kPeriod, sample(191));
  EXPECT_EQ(estimate.enqueued(), 200);
  EXPECT_EQ(estimate.ewma(), 200);
  // Nothing stored, so nothing marks the period: the next sleep in it is not skipped.
  estimate.on_sleep(kPeriod + 1, sample(100));
  EXPECT_EQ(estimate.ewma(), 175);
}

TEST(UtilEstimateTest, ASampleEqualToTheAverageIsNotStored) {
  UtilEstimate estimate;
  estimate.on_sleep(0, sample(200));
  // Equal to the average and to the last sample: not an increase, nothing is stored, so the
  // next sleep in the same period is not skipped.
  estimate.on_sleep(kPeriod, sample(200));
  estimate.on_sleep(kPeriod + 1, sample(100));
  EXPECT_EQ(estimate.enqueued(), 100);
  EXPECT_EQ(estimate.ewma(), 175);
}

TEST(UtilEstimateTest, AChangeOfExactlyTheMarginIsStored) {
  // The margin excludes its bound: a sample 10 below the average and the last sample moves
  // both.
  UtilEstimate estimate;
  estimate.on_sleep(0, sample(200));
  estimate.on_sleep(kPeriod, sample(190));
  EXPECT_EQ(estimate.enqueued(), 190);
  EXPECT_EQ(estimate.ewma(), 197);  // (4 x 200 - 10) / 4 = 197.5, truncated
}

TEST(UtilEstimateTest, StoresASampleThatMovedWhenTheAverageIsCloseAlready) {
  UtilEstimate estimate;
  estimate.on_sleep(0, sample(200));
  estimate.on_sleep(kPeriod, sample(100));  // ewma 175, enqueued 100
  // 170 is within the margin of the average but 70 away from the last sample: the sample is
  // stored, the average stays.
  estimate.on_sleep(2 * kPeriod, sample(170));
  EXPECT_EQ(estimate.enqueued(), 170);
  EXPECT_EQ(estimate.ewma(), 175);
}

TEST(UtilEstimateTest, KeepsTheAverageWhenTheSampleCannotBeTrusted) {
  UtilEstimate estimate;
  estimate.on_sleep(0, sample(500));
  // Utilisation above the CPU's original capacity: no idle time seen, nothing stored.
  estimate.on_sleep(kPeriod, sample(330, 330, 307));
  EXPECT_EQ(estimate.enqueued(), 500);
  EXPECT_EQ(estimate.ewma(), 500);
  // The task waited for the CPU (runnable well above its utilisation): the sample is stored
  // but does not pull the average down.
  estimate.on_sleep(2 * kPeriod, sample(300, 400));
  EXPECT_EQ(estimate.enqueued(), 300);
  EXPECT_EQ(estimate.ewma(), 500);
  EXPECT_EQ(estimate.value(), 500);
}

TEST(UtilEstimateTest, AUtilisationEqualToTheCpuCapacityIsStillASample) {
  // Only a utilisation above capacity_orig means no idle time was seen: at it, the sample
  // pulls the average down.
  UtilEstimate estimate;
  estimate.on_sleep(0, sample(500));
  estimate.on_sleep(kPeriod, sample(307, 307, 307));
  EXPECT_EQ(estimate.enqueued(), 307);
  EXPECT_EQ(estimate.ewma(), 451);  // (4 x 500 - 193) / 4 = 451.75, truncated
}

TEST(UtilEstimateTest, AWaitWithinTheMarginStillMakesAFairSample) {
  // A runnable average above the utilisation by at most the margin (1024 / 100 = 10): the
  // task hardly waited, and the sample pulls the average down; by more, it does not
  // (util_est_update(): skipped when enqueued + UTIL_EST_MARGIN < task_runnable()).
  for (const int runnable : {309, 310}) {
    UtilEstimate fair;
    fair.on_sleep(0, sample(500));
    fair.on_sleep(kPeriod, sample(300, runnable));
    EXPECT_EQ(fair.ewma(), (4 * 500 + (300 - 500)) >> 2) << runnable;  // 450
  }
  UtilEstimate waited;
  waited.on_sleep(0, sample(500));
  waited.on_sleep(kPeriod, sample(300, 311));
  EXPECT_EQ(waited.ewma(), 500);
  EXPECT_EQ(waited.enqueued(), 300);
}

// --- in the scheduler --------------------------------------------------------------------------

SchedTunables with_util_est(bool enabled, Governor governor = Governor::kPerformance) {
  SchedTunables tunables;
  tunables.util_est = enabled;
  tunables.governor = governor;
  return tunables;
}

class UtilEstTest : public ::testing::Test, public SchedHarness {
 protected:
  explicit UtilEstTest(bool enabled = true) : SchedHarness(with_util_est(enabled)) {}

  // A fair task pinned to silver CPU 1 that runs there for 100 ms (30 ms of reference work at
  // capacity 307), then sleeps. Its utilisation reaches about 270 of the CPU's 307, more than
  // fits it (307 / 1.25 = 245.6). Returns it, asleep, and its utilisation at the moment it
  // went to sleep.
  struct Slept {
    int tid = -1;
    double util_at_sleep = 0;
  };
  Slept big_task_slept_on_cpu1() {
    const int tid = spawn(fair_params("big", 0, only(1)), 30 * kMillisecond, 1);
    auto util_at_sleep = std::make_shared<double>(0.0);
    owner_.on_done(tid, [this, util_at_sleep](int id) {
      if (*util_at_sleep == 0.0) *util_at_sleep = sched_.task_util(id);
      sched_.block(id);
    });
    run_for(150 * kMillisecond);
    EXPECT_EQ(sched_.task(tid).state, TaskState::kSleeping);
    return Slept{tid, *util_at_sleep};
  }
};

class UtilEstOffTest : public UtilEstTest {
 protected:
  UtilEstOffTest() : UtilEstTest(false) {}
};

TEST_F(UtilEstTest, ASleepingTaskKeepsItsSizeWhileItsUtilisationDecays) {
  const Slept slept = big_task_slept_on_cpu1();
  ASSERT_GT(slept.util_at_sleep, 250.0);
  const UtilEstimate& estimate = sched_.task(slept.tid).util_est;
  EXPECT_EQ(estimate.value(), static_cast<int>(slept.util_at_sleep));
  run_for(100 * kMillisecond);
  EXPECT_LT(sched_.task_util(slept.tid), 60.0);  // about three half-lives later
  EXPECT_EQ(sched_.task_util_est(slept.tid), estimate.value());
}

TEST_F(UtilEstOffTest, WithoutTheFeatureATaskIsItsUtilisation) {
  const Slept slept = big_task_slept_on_cpu1();
  run_for(100 * kMillisecond);
  EXPECT_EQ(sched_.task(slept.tid).util_est.value(), 0);
  EXPECT_EQ(sched_.task_util_est(slept.tid), sched_.task_util(slept.tid));
}

TEST_F(UtilEstTest, TheRunQueueSumsTheEstimatesOfItsEnqueuedFairTasks) {
  const Slept slept = big_task_slept_on_cpu1();
  const int estimate = sched_.task(slept.tid).util_est.value();
  EXPECT_EQ(sched_.rq(1).util_est, 0);  // asleep: in no sum
  run_for(100 * kMillisecond);
  wake(slept.tid, WakeContext{}, 5 * kMillisecond);
  EXPECT_EQ(sched_.rq(1).util_est, estimate);
  // PELT's sum has decayed; cpu_util_cfs() is the estimate.
  EXPECT_LT(sched_.cpu_util_fair(1), 60.0);
  EXPECT_DOUBLE_EQ(sched_.cpu_util_cfs(1), estimate);
  // An RT task has no estimate: switching the class takes it out of the sum and back.
  run_for(10 * kMicrosecond);
  ASSERT_EQ(sched_.rq(1).curr, slept.tid);
  sched_.set_attributes(slept.tid, Policy::kFifo, 0, 50);
  EXPECT_EQ(sched_.rq(1).util_est, 0);
  sched_.set_attributes(slept.tid, Policy::kNormal, 0, 0);
  EXPECT_EQ(sched_.rq(1).util_est, estimate);
  run_for(30 * kMillisecond);  // the rest of its 5 ms of reference work, at capacity 307
  EXPECT_EQ(sched_.task(slept.tid).state, TaskState::kSleeping);
  EXPECT_EQ(sched_.rq(1).util_est, 0);
}

TEST_F(UtilEstTest, AWakeupWithTheEstimateOverutilisesItsCpuAtOnce) {
  const Slept slept = big_task_slept_on_cpu1();
  run_for(200 * kMillisecond);
  sched_.refresh_overutilized();  // a root-domain balance clears the flag the task's run set
  EXPECT_FALSE(sched_.overutilized());
  wake(slept.tid, WakeContext{}, 5 * kMillisecond);
  EXPECT_TRUE(sched_.overutilized());  // 270 x 1.25 > 307
}

TEST_F(UtilEstOffTest, AWakeupWithADecayedUtilisationDoesNotOverutilise) {
  const Slept slept = big_task_slept_on_cpu1();
  run_for(200 * kMillisecond);
  sched_.refresh_overutilized();
  wake(slept.tid, WakeContext{}, 5 * kMillisecond);
  EXPECT_FALSE(sched_.overutilized());
}

TEST_F(UtilEstTest, PlacementSendsATaskTooBigForSilverToABiggerIdleCpu) {
  // Free to run anywhere after its sleep, the task wakes (from an interrupt) with CPU 1 as
  // prev: idle, but its estimate does not fit a silver CPU, so select_idle_capacity() takes
  // the first idle CPU that fits.
  const Slept slept = big_task_slept_on_cpu1();
  run_for(100 * kMillisecond);
  sched_.task_for_update(slept.tid).params.affinity = 0;
  wake(slept.tid, WakeContext{}, 5 * kMillisecond);
  EXPECT_GE(topology_.capacity(sched_.task(slept.tid).cpu), 872);
}

TEST_F(UtilEstOffTest, PlacementKeepsATaskWhoseUtilisationDecayedOnItsSilverCpu) {
  const Slept slept = big_task_slept_on_cpu1();
  run_for(100 * kMillisecond);
  sched_.task_for_update(slept.tid).params.affinity = 0;
  wake(slept.tid, WakeContext{}, 5 * kMillisecond);
  EXPECT_EQ(sched_.task(slept.tid).cpu, 1);
}

// schedutil: a task woken after a long sleep asks for the frequency of its estimate at once,
// where its decayed utilisation would ask for the lowest one.
class UtilEstSchedutilTest : public ::testing::TestWithParam<bool>, public SchedHarness {
 protected:
  UtilEstSchedutilTest() : SchedHarness(with_util_est(GetParam(), Governor::kSchedutil)) {}
};

TEST_P(UtilEstSchedutilTest, AWakeupAsksForTheFrequencyOfTheEstimate) {
  constexpr int kGoldCluster = 1;
  const int tid = spawn(fair_params("big", 0, only(kGold0)), 40 * kMillisecond, kGold0);
  run_for(300 * kMillisecond);
  ASSERT_EQ(sched_.task(tid).state, TaskState::kSleeping);
  const int estimate = sched_.task(tid).util_est.value();
  run_for(300 * kMillisecond);  // about nine half-lives: the utilisation is nearly gone
  ASSERT_LT(sched_.task_util(tid), 10.0);
  wake(tid, WakeContext{}, kMillisecond);
  // With the estimate the request stands where the task's last activation left it (no new
  // one is needed); without it the wakeup asks for the lowest point.
  const ClusterFrequency& frequency = sched_.cluster_frequency(kGoldCluster);
  const auto& domain = topology_.frequency_domain(kGoldCluster);
  if (GetParam()) {
    ASSERT_GT(estimate, 200);
    const double khz = 1.25 * static_cast<double>(domain.opps.back().freq_khz) * estimate /
                       static_cast<double>(topology_.capacity(kGold0));
    EXPECT_EQ(frequency.requested_opp, opp_at_or_above(domain, khz));
    EXPECT_GT(frequency.requested_opp, 0);
  } else {
    EXPECT_EQ(estimate, 0);
    EXPECT_EQ(frequency.last_request, now());
    EXPECT_EQ(frequency.requested_opp, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(UtilEstOnAndOff, UtilEstSchedutilTest, ::testing::Bool());

}  // namespace
}  // namespace bindersim::sched
