// Behaviour of the mainline wakeup placement steps (select_task_rq_fair() and select_task_rq_rt(),
// kernel/sched/fair.c and rt.c), called directly on a live scheduler on the SA8155P topology
// (silver 0-3 with capacity ~307, gold 4-6 with ~871, prime 7 with 1024; one L3 shared by all
// CPUs).
#include "bindersim/sched/placement.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "bindersim/common/error.hpp"
#include "sched_fixture.hpp"

namespace bindersim::sched {
namespace {

using namespace fixture;  // NOLINT(google-build-using-namespace): test helpers

using MP = MainlinePlacement;

// Android's RT clamp (sched_util_clamp_min_rt_default = 0): RT tasks fit every CPU, so the RT
// tests below see priorities only.
SchedTunables android_rt_clamp() {
  SchedTunables tunables;
  tunables.rt_uclamp_min = 0;
  return tunables;
}

class PlacementTest : public ::testing::Test, public SchedHarness {
 protected:
  explicit PlacementTest(SchedTunables tunables = android_rt_clamp()) : SchedHarness(tunables) {}
  void busy_rt(int cpu, int rt_priority) { busy({cpu}, rt_params("rt", rt_priority)); }
  // Sets the task's utilisation as of now.
  void set_util(int tid, double util) { sched_.set_task_util(tid, util); }
};

// --- fits_capacity, wake_wide --------------------------------------------------------------

TEST(FitsCapacityTest, KeepsATwentyPercentMargin) {
  // util_fits_cpu(): a utilisation fits when util x 1.25 is below the capacity.
  EXPECT_TRUE(MP::fits_capacity(0, 307));
  EXPECT_TRUE(MP::fits_capacity(245, 307));   // 306.25 < 307
  EXPECT_FALSE(MP::fits_capacity(246, 307));  // 307.5
  EXPECT_TRUE(MP::fits_capacity(819, 1024));
  EXPECT_FALSE(MP::fits_capacity(819.2, 1024));  // exactly 1024: not below
  EXPECT_FALSE(MP::fits_capacity(1024, 1024));
}

TEST_F(PlacementTest, SchedulerKnowsTheTopologyFactsPlacementAsksFor) {
  // The SA8155P mixes capacities 307, 872 and 1024 (asymmetric), and its one DynamIQ L3 is
  // shared by all eight cores: the LLC of CPU 0 spans 8 CPUs.
  EXPECT_TRUE(sched_.asym_capacity());
  EXPECT_EQ(sched_.llc_size(), 8);
}

TEST_F(PlacementTest, WakeWideNeedsManyFlipsOnBothSides) {
  // wake_wide(): with an LLC of 8 CPUs, the wakeup is "wide" (no affine wakeup) when the
  // smaller flip count is at least 8 and the larger at least 8 times the smaller, whichever
  // of waker and wakee has which.
  const int waker = sched_.create_task(fair_params("waker"));
  const int wakee = sched_.create_task(fair_params("wakee"));
  auto wide = [&](unsigned waker_flips, unsigned wakee_flips) {
    sched_.task_for_update(waker).wakee_flips = waker_flips;
    sched_.task_for_update(wakee).wakee_flips = wakee_flips;
    return MP::wake_wide(sched_, waker, wakee);
  };
  EXPECT_TRUE(wide(64, 8));
  EXPECT_FALSE(wide(63, 8));
  EXPECT_FALSE(wide(100, 7));
  EXPECT_TRUE(wide(8, 64));
  EXPECT_TRUE(wide(1000, 100));
  EXPECT_FALSE(wide(0, 0));
  // A wakeup from an interrupt has no waker and is never wide.
  sched_.task_for_update(wakee).wakee_flips = 1000;
  EXPECT_FALSE(MP::wake_wide(sched_, -1, wakee));
}

TEST_F(PlacementTest, WakerCountsWakeeFlipsAndHalvesThemEverySecond) {
  // record_wakee(): the waker's flip count goes up each time it wakes a different task than
  // last time. Half a second on it still only goes up; it is halved once more than a second
  // has passed since the last decay.
  const int a = sleeper(5);
  const int b = sleeper(6);
  const int waker = busy({0})[0];
  const WakeContext ctx = from_cpu(0, waker);
  auto flips = [&] { return sched_.task(waker).wakee_flips; };
  MP::select_task_rq_fair(sched_, a, 5, ctx);
  EXPECT_EQ(flips(), 1U);
  MP::select_task_rq_fair(sched_, a, 5, ctx);
  EXPECT_EQ(flips(), 1U);
  MP::select_task_rq_fair(sched_, b, 6, ctx);
  MP::select_task_rq_fair(sched_, a, 5, ctx);
  EXPECT_EQ(flips(), 3U);
  run_for(500 * kMillisecond);
  MP::select_task_rq_fair(sched_, b, 6, ctx);
  EXPECT_EQ(flips(), 4U);
  run_for(600 * kMillisecond);
  MP::select_task_rq_fair(sched_, a, 5, ctx);
  EXPECT_EQ(flips(), 4U / 2 + 1);
}

// --- wake_affine ---------------------------------------------------------------------------

TEST_F(PlacementTest, WakeAffineIdleThisCpuPrefersIdlePrevElseThis) {
  // wake_affine_idle(): this CPU idle and sharing a cache with prev (every pair on the
  // SA8155P): prev if prev is idle, else this CPU.
  const int tid = sleeper(5);
  EXPECT_EQ(MP::wake_affine(sched_, tid, /*this*/ 3, /*prev*/ 5, false, -1), 5);
  EXPECT_EQ(MP::wake_affine(sched_, tid, 3, 5, true, -1), 5);
  busy({5});
  EXPECT_EQ(MP::wake_affine(sched_, tid, 3, 5, false, -1), 3);
  EXPECT_EQ(MP::wake_affine(sched_, tid, 3, 5, true, -1), 3);
}

TEST_F(PlacementTest, SyncWakeupFromACpuRunningOnlyTheWakerStaysThere) {
  // With WF_SYNC and nr_running(this) == 1 (only the waker), wake_affine returns this CPU even
  // when prev is idle; without sync, or with more tasks on this CPU, an idle prev wins.
  const int tid = sleeper(5);
  const int waker = busy({0})[0];
  ASSERT_EQ(sched_.nr_running(0), 1);
  EXPECT_EQ(MP::wake_affine(sched_, tid, /*this*/ 0, /*prev*/ 5, /*sync*/ true, waker), 0);
  EXPECT_EQ(MP::wake_affine(sched_, tid, 0, 5, /*sync*/ false, waker), 5);
  spawn(fair_params("queued", 0, only(0)), 10 * kMillisecond, 0);
  run_for(10 * kMicrosecond);
  ASSERT_EQ(sched_.rq(0).curr, waker);
  ASSERT_EQ(sched_.nr_running(0), 2);
  EXPECT_EQ(MP::wake_affine(sched_, tid, 0, 5, /*sync*/ true, waker), 5);
}

TEST_F(PlacementTest, SyncWakeAffineBreaksATieOfLoadsTowardsThisCpu) {
  // wake_affine_weight(): this CPU and prev both busy with RT tasks only (no fair load) and a
  // wakee without load: both effective loads are 0. A sync wakeup adds 1 to prev's, so this CPU
  // wins the tie; without sync prev keeps the task.
  occupy(0, rt_params("rt-a", 50));
  occupy(0, rt_params("rt-b", 50));
  occupy(1, rt_params("rt-c", 50));
  run_for(10 * kMicrosecond);
  const int tid = sched_.create_task(fair_params("new"));
  ASSERT_EQ(sched_.nr_running(0), 2);
  ASSERT_FALSE(sched_.available_idle_cpu(1));
  ASSERT_EQ(sched_.cpu_load(0), 0.0);
  ASSERT_EQ(sched_.cpu_load(1), 0.0);
  ASSERT_EQ(sched_.task_load(tid), 0.0);
  EXPECT_EQ(MP::wake_affine(sched_, tid, /*this*/ 0, /*prev*/ 1, /*sync*/ true, -1), 0);
  EXPECT_EQ(MP::wake_affine(sched_, tid, 0, 1, /*sync*/ false, -1), 1);
}

// --- select_idle_sibling -------------------------------------------------------------------

TEST_F(PlacementTest, SelectIdleSiblingTriesTargetThenPrevThenRecentThenCapacityScan) {
  // select_idle_sibling(): target if idle; else prev if idle; else the task's recently used
  // CPU if idle; else the select_idle_capacity() scan from target. Each call records prev as
  // the new recently used CPU.
  const int tid = sleeper(5);
  EXPECT_EQ(MP::select_idle_sibling(sched_, tid, /*prev*/ 5, /*target*/ 2), 2);
  busy({2});
  EXPECT_EQ(MP::select_idle_sibling(sched_, tid, 5, 2), 5);
  busy({5});
  sched_.task_for_update(tid).recent_used_cpu = 6;
  EXPECT_EQ(MP::select_idle_sibling(sched_, tid, 5, 2), 6);
  EXPECT_EQ(sched_.task(tid).recent_used_cpu, 5);
  busy({6});
  sched_.task_for_update(tid).recent_used_cpu = 6;
  EXPECT_EQ(MP::select_idle_sibling(sched_, tid, 5, 2), 3);  // scan 2 (busy), 3
  busy({3, 4, 7});
  sched_.task_for_update(tid).recent_used_cpu = 6;
  EXPECT_EQ(MP::select_idle_sibling(sched_, tid, 5, 2), 0);  // 2..7 busy: wraps to 0
}

TEST_F(PlacementTest, SelectIdleSiblingSkipsIdleCpusTheTaskDoesNotFit) {
  // On an asymmetric system target, prev and the recent CPU are taken only if the task fits
  // them; a task too big for silver goes to the first idle gold CPU of the scan.
  const int tid = sleeper(1);
  sched_.task_for_update(tid).recent_used_cpu = 3;
  set_util(tid, 400);  // 500 with margin: more than silver's ~307, less than gold's ~871
  EXPECT_EQ(MP::select_idle_sibling(sched_, tid, /*prev*/ 1, /*target*/ 2), 4);
  set_util(tid, 10);
  EXPECT_EQ(MP::select_idle_sibling(sched_, tid, 1, 2), 2);
}

TEST_F(PlacementTest, RecentUsedCpuMustBeAllowed) {
  // The recently used CPU is skipped when the task's affinity excludes it.
  const int tid = sleeper(5, fair_params("task"), only(5) | only(1));
  busy({2, 5});
  sched_.task_for_update(tid).recent_used_cpu = 6;
  EXPECT_EQ(MP::select_idle_sibling(sched_, tid, 5, 2), 1);
}

// Every cluster made the SA8155P's gold one (its frequencies, operating points and capacity
// per MHz): all CPUs have capacity 1024, a symmetric system.
void all_gold(nlohmann::json& doc) {
  const nlohmann::json gold = doc["clusters"][1];
  for (nlohmann::json& cluster : doc["clusters"]) {
    for (const char* key : {"max_freq_khz", "capacity_dmips_mhz", "cpufreq"}) {
      cluster[key] = gold[key];
    }
  }
}

class SymmetricPlacementTest : public ::testing::Test, public SchedHarness {
 protected:
  SymmetricPlacementTest()
      : SchedHarness(android_rt_clamp(), "mainline", IdleStates::kWfiOnly, all_gold) {}
};

TEST_F(SymmetricPlacementTest, SelectIdleSiblingScansTheLlcFromTargetForAnyIdleCpu) {
  // Without asymmetric capacities select_idle_sibling() does not fit tasks to capacities: with
  // target, prev and the recent CPU busy, it takes the first idle allowed CPU sharing the LLC,
  // scanning from target and wrapping, and target itself when none is idle. A task too big
  // for silver on the SA8155P now fits any CPU.
  ASSERT_FALSE(sched_.asym_capacity());
  for (int cpu = 0; cpu < sched_.num_cpus(); ++cpu) ASSERT_EQ(topology_.capacity(cpu), 1024);
  const int tid = sleeper(1);
  sched_.set_task_util(tid, 600);
  EXPECT_EQ(MP::select_idle_sibling(sched_, tid, /*prev*/ 1, /*target*/ 2), 2);
  busy({1, 2, 3});
  sched_.task_for_update(tid).recent_used_cpu = 3;
  EXPECT_EQ(MP::select_idle_sibling(sched_, tid, 1, 2), 4);
  sched_.task_for_update(tid).params.affinity = only(0) | only(1) | only(2) | only(3);
  EXPECT_EQ(MP::select_idle_sibling(sched_, tid, 1, 2), 0);  // 4-7 not allowed: wraps to 0
  busy({0});
  EXPECT_EQ(MP::select_idle_sibling(sched_, tid, 1, 2), 2);  // none idle: target
}

// The SA8155P with no cache common to its two sides: the DynamIQ L3 and the system cache
// (LLCC) each split into one for silver 0-3 and one for gold and prime 4-7, as on a SoC whose
// clusters have last-level caches of their own and no cache behind them.
void split_caches(nlohmann::json& doc) {
  nlohmann::json split = nlohmann::json::array();
  for (const nlohmann::json& cache : doc.at("shared_caches")) {
    for (const auto& [side, cpus] : {std::pair{"-silver", std::vector<int>{0, 1, 2, 3}},
                                     std::pair{"-big", std::vector<int>{4, 5, 6, 7}}}) {
      nlohmann::json half = cache;
      half["name"] = cache.at("name").get<std::string>() + side;
      half["cpus"] = cpus;
      split.push_back(half);
    }
  }
  doc["shared_caches"] = split;
}

class SplitCachePlacementTest : public ::testing::Test, public SchedHarness {
 protected:
  SplitCachePlacementTest()
      : SchedHarness(android_rt_clamp(), "mainline", IdleStates::kWfiOnly, split_caches) {}
};

TEST_F(SplitCachePlacementTest, SelectIdleSiblingTakesAnIdlePrevOnlyIfItSharesACacheWithTarget) {
  // select_idle_sibling(): with target busy, an idle prev is taken only when
  // cpus_share_cache(prev, target). A task that last ran on silver CPU 1, woken towards busy
  // gold CPU 5, does not go back to CPU 1 (idle, but sharing no cache with CPU 5): the scan
  // from target finds idle CPU 6. A task that last ran on gold CPU 4, beside CPU 5, goes back
  // there.
  ASSERT_FALSE(topology_.shares_cache(1, 5));
  ASSERT_TRUE(topology_.shares_cache(4, 5));
  const int far = sleeper(1);
  const int near = sleeper(4);
  busy({5});
  ASSERT_TRUE(sched_.available_idle_cpu(1));
  ASSERT_TRUE(sched_.available_idle_cpu(4));
  sched_.task_for_update(far).recent_used_cpu = -1;
  EXPECT_EQ(MP::select_idle_sibling(sched_, far, /*prev*/ 1, /*target*/ 5), 6);
  sched_.task_for_update(near).recent_used_cpu = -1;
  EXPECT_EQ(MP::select_idle_sibling(sched_, near, /*prev*/ 4, /*target*/ 5), 4);
}

// --- select_idle_capacity ------------------------------------------------------------------

TEST_F(PlacementTest, SelectIdleCapacityScansFromTargetAndWraps) {
  // select_idle_capacity(): CPUs are scanned from target upwards, wrapping, and the first idle
  // one the task fits is taken.
  const int tid = sleeper(0);
  EXPECT_EQ(MP::select_idle_capacity(sched_, tid, 5), 5);
  busy({5});
  EXPECT_EQ(MP::select_idle_capacity(sched_, tid, 5), 6);
  busy({6, 7});
  EXPECT_EQ(MP::select_idle_capacity(sched_, tid, 6), 0);
}

TEST_F(PlacementTest, SelectIdleCapacityTakesFirstIdleCpuTheTaskFits) {
  // Idle CPUs too small for the task are passed over for the first idle one it fits.
  const int tid = sleeper(0);
  set_util(tid, 400);  // fits gold and prime only
  EXPECT_EQ(MP::select_idle_capacity(sched_, tid, 0), 4);
  EXPECT_EQ(MP::select_idle_capacity(sched_, tid, 5), 5);
  busy({4, 5});
  set_util(tid, 400);
  EXPECT_EQ(MP::select_idle_capacity(sched_, tid, 0), 6);
  EXPECT_EQ(MP::select_idle_capacity(sched_, tid, 7), 7);
}

TEST_F(PlacementTest, SelectIdleCapacityFallsBackToTheBiggestIdleCpu) {
  // When the task fits no idle CPU, the idle CPU with the most capacity is taken; among equal
  // capacities the first one in scan order.
  const int tid = sleeper(0);
  busy({5, 7});
  set_util(tid, 800);  // 1000 with margin: fits only the prime core, which is busy
  EXPECT_EQ(MP::select_idle_capacity(sched_, tid, 5), 6);
  EXPECT_EQ(MP::select_idle_capacity(sched_, tid, 0), 4);
  busy({4, 6});
  set_util(tid, 800);
  EXPECT_EQ(MP::select_idle_capacity(sched_, tid, 2), 2);
}

TEST_F(PlacementTest, SelectIdleCapacityReturnsMinusOneWithoutAnAllowedIdleCpu) {
  // Only CPUs the task may run on count; with none of them idle the result is -1.
  const int tid = sleeper(1, fair_params("task"), only(1) | only(6));
  EXPECT_EQ(MP::select_idle_capacity(sched_, tid, 0), 1);
  busy({1});
  EXPECT_EQ(MP::select_idle_capacity(sched_, tid, 0), 6);
  busy({6});
  EXPECT_EQ(MP::select_idle_capacity(sched_, tid, 0), -1);
  const int free_task = sleeper(0);
  busy({0, 2, 3, 4, 5, 7});
  EXPECT_EQ(MP::select_idle_capacity(sched_, free_task, 3), -1);
}

// --- select_task_rq_fair -------------------------------------------------------------------

TEST_F(PlacementTest, ForkAndTimerWakeupsTakeFirstIdleFittingCpuFromPrev) {
  // New tasks and wakeups without a waker CPU skip wake_affine: the first idle fitting CPU
  // scanning from prev, else prev.
  const int tid = sleeper(5);
  EXPECT_EQ(MP::select_task_rq_fair(sched_, tid, 5, WakeContext{}), 5);
  busy({5});
  EXPECT_EQ(MP::select_task_rq_fair(sched_, tid, 5, WakeContext{}), 6);
  busy({0, 1, 2, 3, 4, 6, 7});
  EXPECT_EQ(MP::select_task_rq_fair(sched_, tid, 5, WakeContext{}), 5);
}

TEST_F(PlacementTest, NewTaskWithNoIdleCpuGoesToTheCpuRunningFewestTasks) {
  // find_idlest_cpu() without an idle CPU: a new task goes to the least loaded CPU, the first
  // one running the fewest tasks scanning from prev (CPUs 5 and 6 run two). A timer wakeup in
  // the same state stays on prev.
  const int tid = sleeper(5);
  busy({0, 1, 2, 3, 4, 5, 6, 7});
  occupy(5, fair_params("second"));
  occupy(6, fair_params("second"));
  run_for(10 * kMicrosecond);
  ASSERT_EQ(sched_.nr_running(5), 2);
  WakeContext fork;
  fork.fork = true;
  EXPECT_EQ(MP::select_task_rq_fair(sched_, tid, 5, fork), 7);
  EXPECT_EQ(MP::select_task_rq_fair(sched_, tid, 5, WakeContext{}), 5);
  occupy(7, fair_params("second"));
  run_for(10 * kMicrosecond);
  EXPECT_EQ(MP::select_task_rq_fair(sched_, tid, 5, fork), 0);  // wrapping
}

TEST_F(PlacementTest, SyncWakeupFromLoneWakerGoesToIdlePrevOrStaysAffine) {
  // A sync wakeup from a CPU running only the waker targets that CPU; select_idle_sibling
  // still prefers an idle prev over the busy target. With prev busy, the wakee goes to the
  // first idle CPU scanning from the waker's CPU.
  const int tid = sleeper(5);
  const int waker = busy({0})[0];
  const WakeContext sync = from_cpu(0, waker, true);
  EXPECT_EQ(MP::select_task_rq_fair(sched_, tid, 5, sync), 5);
  busy({5});
  sched_.task_for_update(tid).recent_used_cpu = -1;
  EXPECT_EQ(MP::select_task_rq_fair(sched_, tid, 5, sync), 1);
}

// --- RT placement --------------------------------------------------------------------------

TEST_F(PlacementTest, RtWakeeStaysUnlessAnEqualOrHigherRtTaskRunsThere) {
  // select_task_rq_rt(): the wakee stays on its CPU when that CPU is idle or runs CFS or a
  // lower RT priority; when an RT task of equal or higher priority runs there it goes to
  // find_lowest_rq()'s choice (here its own idle CPU 0). The lower RT task may run anywhere
  // (a pinned one keeps the wakee away: the next test).
  const int tid = sleeper(0, rt_params("wakee", 50));
  busy({1});       // CFS
  busy_rt(2, 30);  // lower
  sched_.task_for_update(sched_.rq(2).curr).params.affinity = 0;
  busy_rt(3, 50);  // equal
  busy_rt(4, 70);  // higher
  const WakeContext ctx = from_cpu(6);
  EXPECT_EQ(MP::select_task_rq_rt(sched_, tid, 5, ctx), 5);  // idle
  EXPECT_EQ(MP::select_task_rq_rt(sched_, tid, 1, ctx), 1);
  EXPECT_EQ(MP::select_task_rq_rt(sched_, tid, 2, ctx), 2);
  EXPECT_EQ(MP::select_task_rq_rt(sched_, tid, 3, ctx), 0);
  EXPECT_EQ(MP::select_task_rq_rt(sched_, tid, 4, ctx), 0);
}

TEST_F(PlacementTest, RtWakeeLeavesACpuWhoseRtTaskIsPinnedThere) {
  // select_task_rq_rt(): a lower-priority RT task that may run on its CPU alone could not be
  // pushed away after a preemption, so the wakee looks elsewhere (find_lowest_rq(): its own
  // idle CPU 0); a lower RT task allowed on two CPUs still yields its CPU to the wakee.
  const int tid = sleeper(0, rt_params("wakee", 50));
  busy_rt(2, 30);  // pinned to CPU 2
  busy_rt(3, 30);
  sched_.task_for_update(sched_.rq(3).curr).params.affinity = (1U << 3) | (1U << 4);
  const WakeContext ctx = from_cpu(6);
  EXPECT_EQ(MP::select_task_rq_rt(sched_, tid, 2, ctx), 0);
  EXPECT_EQ(MP::select_task_rq_rt(sched_, tid, 3, ctx), 3);
}

TEST_F(PlacementTest, FindLowestRqPrefersOwnCpuThenWakerCpuThenFirstLowest) {
  // find_lowest_rq(): among the CPUs at the lowest priority level (idle and CFS-only CPUs
  // share it), the task's own CPU, else the waker's CPU, else the first such CPU.
  const int tid = sleeper(3, rt_params("wakee", 50));
  EXPECT_EQ(MP::find_lowest_rq(sched_, tid, /*this*/ 5), 3);
  busy_rt(3, 60);
  EXPECT_EQ(MP::find_lowest_rq(sched_, tid, 5), 5);
  busy_rt(5, 10);  // below the wakee, but above the CFS/idle level
  EXPECT_EQ(MP::find_lowest_rq(sched_, tid, 5), 0);
  busy({0});  // CFS: still the lowest level
  EXPECT_EQ(MP::find_lowest_rq(sched_, tid, 5), 0);
  busy_rt(0, 20);
  EXPECT_EQ(MP::find_lowest_rq(sched_, tid, 5), 1);
  EXPECT_EQ(MP::find_lowest_rq(sched_, tid, -1), 1);
}

TEST_F(PlacementTest, FindLowestRqTakesOnlyTheLowestLevel) {
  // Only CPUs at the lowest level present are candidates, not every CPU below the wakee;
  // with no CPU below the wakee there is none (-1) and the wakee stays on its CPU.
  const int tid = sleeper(3, rt_params("wakee", 50));
  for (int cpu = 0; cpu < 8; ++cpu) busy_rt(cpu, cpu == 6 ? 20 : 40);
  EXPECT_EQ(MP::find_lowest_rq(sched_, tid, 5), 6);
  // A priority-20 wakee: no CPU runs below it (40 everywhere, 20 on CPU 6).
  const int low = sched_.create_task(rt_params("low", 20));
  sched_.task_for_update(low).cpu = 6;
  EXPECT_EQ(MP::find_lowest_rq(sched_, low, 5), -1);
  EXPECT_EQ(MP::select_task_rq_rt(sched_, low, 6, from_cpu(5)), 6);
}

// The kernel's default RT clamp (1024): RT tasks fit only the largest CPUs.
class RtClampTest : public PlacementTest {
 protected:
  RtClampTest() : PlacementTest(SchedTunables{}) {}
};

TEST_F(RtClampTest, RtWakeeGoesToACpuOfAtLeastItsClamp) {
  // rt_task_fits_capacity(): with sched_util_clamp_min_rt_default at 1024 an RT wakee whose
  // CPU is a silver core moves to the only CPU of capacity 1024 (the prime core), whatever
  // its own utilisation.
  const int tid = sleeper(1, rt_params("wakee", 50));
  set_util(tid, 1);
  EXPECT_EQ(MP::find_lowest_rq(sched_, tid, 2), kPrime);
  EXPECT_EQ(MP::select_task_rq_rt(sched_, tid, 1, from_cpu(2)), kPrime);
  // On the prime core it stays.
  EXPECT_EQ(MP::select_task_rq_rt(sched_, tid, kPrime, from_cpu(2)), kPrime);
}

TEST_F(PlacementTest, RtWakeeWithAZeroClampStaysOnSilver) {
  // Android's clamp of 0: an RT wakee fits a silver core and stays on its CPU.
  const int tid = sleeper(1, rt_params("wakee", 50));
  EXPECT_EQ(MP::select_task_rq_rt(sched_, tid, 1, from_cpu(2)), 1);
}

class RtClampGoldTest : public PlacementTest {
 protected:
  RtClampGoldTest() : PlacementTest(clamp(800)) {}
  static SchedTunables clamp(int value) {
    SchedTunables tunables;
    tunables.rt_uclamp_min = value;
    return tunables;
  }
};

TEST_F(RtClampGoldTest, RtClampAboveSilverCapacityMovesSilverWakeesToGold) {
  // A clamp between the silver (307) and gold (872) capacities: the first fitting CPU at the
  // lowest level is gold CPU 4.
  const int tid = sleeper(1, rt_params("wakee", 50));
  EXPECT_EQ(MP::select_task_rq_rt(sched_, tid, 1, from_cpu(2)), 4);
  EXPECT_EQ(MP::select_task_rq_rt(sched_, tid, 5, from_cpu(2)), 5);
}

TEST(PlacementRegistryTest, KnowsMainlineAndGkiAndRejectsUnknownNames) {
  // The factory builds the listed placements and rejects others with a ConfigError.
  const std::vector<std::string> names = placement_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "mainline"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "gki"), names.end());
  EXPECT_EQ(make_placement("mainline")->name(), "mainline");
  EXPECT_EQ(make_placement("gki")->name(), "gki");
  EXPECT_TRUE(make_placement("gki")->energy_aware());
  EXPECT_FALSE(make_placement("mainline")->energy_aware());
  EXPECT_THROW(make_placement("nope"), ConfigError);
}

TEST_F(PlacementTest, FitnessIsJudgedAgainstTheCapacityRtTasksLeave) {
  // util_fits_cpu() and select_idle_capacity() compare with capacity_of(), the capacity less
  // what RT tasks use: gold CPU 4, idle again after an RT task ran there for a while, is passed
  // over for a task of utilisation 400 that its original capacity (872) would take.
  const int rt = occupy(4, rt_params("rt", 50), 40 * kMillisecond);
  run_for(60 * kMillisecond);
  ASSERT_EQ(sched_.task(rt).state, TaskState::kSleeping);
  const int tid = sleeper(0);
  set_util(tid, 400);
  ASSERT_TRUE(MP::fits_capacity(400, sched_.topology().capacity(4)));
  ASSERT_FALSE(MP::fits_capacity(400, sched_.capacity_of(4)));
  EXPECT_EQ(MP::select_idle_capacity(sched_, tid, 4), 5);
}

}  // namespace
}  // namespace bindersim::sched
