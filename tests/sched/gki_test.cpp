// Behaviour of the Android GKI wakeup placement (find_energy_efficient_cpu() and the sync rules of
// the Android common kernel's fair.c and rt.c): the "honor sync" shortcut, the RT sync rule, the
// fallback to mainline placement when the system is overutilised, and the energy model behind
// find_energy_efficient_cpu(), on the SA8155P topology (silver 0-3 with capacity 307, gold 4-6 with
// 872, prime 7 with 1024; each cluster with its own operating points).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "bindersim/sched/placement.hpp"
#include "bindersim/sched/scheduler.hpp"
#include "bindersim/topology/topology.hpp"
#include "sched_fixture.hpp"

namespace bindersim::sched {
namespace {

using namespace fixture;  // NOLINT(google-build-using-namespace): test helpers

using GP = GkiPlacement;
using MP = MainlinePlacement;

constexpr int kSilver = 0;  // cluster ids
constexpr int kGold = 1;
constexpr int kPrimeCluster = 2;

// A complete scheduler with the named placement, its parts reachable from a test body.
class Harness : public SchedHarness {
 public:
  explicit Harness(const std::string& placement, SchedTunables tunables = {})
      : SchedHarness(tunables, placement) {}

  Scheduler& sched() { return sched_; }
  const RecordingPlacement& recorder() const { return placement_; }

  // Queues `params` on `cpu` behind whatever runs there (pinned while it is placed), then
  // lets it run anywhere, so that it is a migratable queued task.
  int queue_behind(int cpu, TaskParams params, std::int64_t work_ref_ns = 10 * kMillisecond) {
    params.affinity = only(cpu);
    const int tid = spawn(params, work_ref_ns, cpu);
    sched_.task_for_update(tid).params.affinity = 0;
    EXPECT_EQ(sched_.task(tid).state, TaskState::kRunnable);
    EXPECT_EQ(sched_.task(tid).cpu, cpu);
    return tid;
  }
};

class GkiTest : public ::testing::Test, public Harness {
 protected:
  GkiTest() : Harness("gki") {}
  // RT utilisation belongs to the CPU that ran RT work (rq->avg_rt): an RT task pinned to
  // `cpu` runs there for about 115 ms and has just gone to sleep when this returns.
  void rt_pressure(int cpu) {
    const int rt = occupy(cpu, rt_params("rt-pressure", 50), 100 * kMillisecond);
    run_for(120 * kMillisecond);
    ASSERT_EQ(sched_.task(rt).state, TaskState::kSleeping);
  }
  GkiPlacement gki_;
};

// --- honor sync ----------------------------------------------------------------------------

TEST_F(GkiTest, HonorSyncPutsTheWakeeOnTheLoneWakersCpu) {
  // Android's "unconditionally honor sync flag": a sync wakeup from a waker that is alone on
  // its CPU, with the wakee allowed there and fitting it, goes to the waker's CPU, even though
  // the wakee's previous CPU is idle.
  const int wakee = sleeper(5);
  const int waker = busy({kSilver0})[0];
  const WakeContext sync = from_cpu(kSilver0, waker, true);
  ASSERT_EQ(sched_.nr_running(kSilver0), 1);
  ASSERT_TRUE(sched_.available_idle_cpu(5));
  EXPECT_TRUE(GP::honor_sync(sched_, wakee, sync));
  EXPECT_EQ(GP::find_energy_efficient_cpu(sched_, wakee, 5, sync), kSilver0);
  EXPECT_EQ(gki_.select_cpu(sched_, wakee, 5, sync), kSilver0);
}

TEST_F(GkiTest, HonorSyncNeedsASyncWakeup) {
  // The same wakeup without WF_SYNC does not take the shortcut.
  const int wakee = sleeper(5);
  const int waker = busy({kSilver0})[0];
  EXPECT_TRUE(GP::honor_sync(sched_, wakee, from_cpu(kSilver0, waker, true)));
  EXPECT_FALSE(GP::honor_sync(sched_, wakee, from_cpu(kSilver0, waker, false)));
  EXPECT_NE(gki_.select_cpu(sched_, wakee, 5, from_cpu(kSilver0, waker, false)), kSilver0);
}

TEST_F(GkiTest, HonorSyncNeedsTheWakerAloneOnItsCpu) {
  // nr_running == 1 on the waker's CPU: with a second task queued there the shortcut does not
  // apply, and energy-aware placement keeps the wakee away from that busy CPU.
  const int wakee = sleeper(5);
  const int waker = busy({kSilver0})[0];
  const WakeContext sync = from_cpu(kSilver0, waker, true);
  ASSERT_TRUE(GP::honor_sync(sched_, wakee, sync));
  spawn(fair_params("queued", 0, only(kSilver0)), 10 * kMillisecond, kSilver0);
  ASSERT_EQ(sched_.rq(kSilver0).curr, waker);
  ASSERT_EQ(sched_.nr_running(kSilver0), 2);
  EXPECT_FALSE(GP::honor_sync(sched_, wakee, sync));
  EXPECT_NE(gki_.select_cpu(sched_, wakee, 5, sync), kSilver0);
}

TEST_F(GkiTest, HonorSyncNeedsTheWakeeAllowedOnTheWakersCpu) {
  // A wakee whose affinity excludes the waker's CPU is not put there.
  const int wakee = sleeper(5, fair_params("wakee"), only(5) | only(6));
  const int waker = busy({kSilver0})[0];
  const WakeContext sync = from_cpu(kSilver0, waker, true);
  EXPECT_FALSE(GP::honor_sync(sched_, wakee, sync));
  const int cpu = gki_.select_cpu(sched_, wakee, 5, sync);
  EXPECT_TRUE(cpu == 5 || cpu == 6) << cpu;
}

TEST_F(GkiTest, HonorSyncNeedsTheWakeeToFitTheWakersCpu) {
  // task_fits_cpu() with the 20% margin: a wakee of utilisation 300 (375 with the margin)
  // does not fit a silver waker's CPU (307) but fits a gold one (872).
  const int wakee = sleeper(6);
  const std::vector<int> wakers = busy({kSilver0, kGold0});
  sched_.set_task_util(wakee, 300);
  ASSERT_FALSE(MP::fits_capacity(300, topology_.capacity(kSilver0)));
  ASSERT_TRUE(MP::fits_capacity(300, topology_.capacity(kGold0)));
  EXPECT_FALSE(GP::honor_sync(sched_, wakee, from_cpu(kSilver0, wakers[0], true)));
  EXPECT_TRUE(GP::honor_sync(sched_, wakee, from_cpu(kGold0, wakers[1], true)));
  EXPECT_NE(gki_.select_cpu(sched_, wakee, 6, from_cpu(kSilver0, wakers[0], true)), kSilver0);
  EXPECT_EQ(gki_.select_cpu(sched_, wakee, 6, from_cpu(kGold0, wakers[1], true)), kGold0);
  // A small wakee fits the silver CPU.
  sched_.set_task_util(wakee, 100);
  EXPECT_TRUE(GP::honor_sync(sched_, wakee, from_cpu(kSilver0, wakers[0], true)));
}

TEST_F(GkiTest, HonorSyncMeasuresTheFitAgainstTheCapacityLeftByRtTasks) {
  // The fit is against capacity_of(): the CPU's capacity less its RT utilisation. After an RT
  // task has kept gold CPU 4 busy for over 100 ms, little of its 872 is left: a wakee that
  // would fit the whole CPU easily fits the rest only below 80% of it.
  const int wakee = sleeper(6);
  rt_pressure(kGold0);
  const int waker = busy({kGold0})[0];
  const WakeContext sync = from_cpu(kGold0, waker, true);
  const double left = sched_.capacity_of(kGold0);
  ASSERT_LT(left, 0.5 * topology_.capacity(kGold0));
  ASSERT_EQ(sched_.nr_running(kGold0), 1);
  sched_.set_task_util(wakee, 0.9 * left);
  ASSERT_TRUE(MP::fits_capacity(0.9 * left, topology_.capacity(kGold0)));
  EXPECT_FALSE(GP::honor_sync(sched_, wakee, sync));
  sched_.set_task_util(wakee, 0.7 * left);
  EXPECT_TRUE(GP::honor_sync(sched_, wakee, sync));
}

TEST(SyncWakeupTest, LandsOnTheWakersCpuUnderGkiButOnTheIdlePrevUnderMainline) {
  // Through try_to_wake_up(): a sync wakeup from a lone waker on CPU 0 of a task that last ran
  // on idle CPU 5 goes to CPU 0 under gki (honor sync), while mainline's select_idle_sibling()
  // prefers the idle prev over the busy affine target.
  for (const char* placement : {"gki", "mainline"}) {
    const auto h = std::make_unique<Harness>(placement);
    const int wakee = h->sleeper(5);
    const int waker = h->busy({kSilver0})[0];
    ASSERT_TRUE(h->sched().available_idle_cpu(5));
    h->wake(wakee, from_cpu(kSilver0, waker, true));
    const int expected = std::string(placement) == "gki" ? kSilver0 : 5;
    EXPECT_EQ(h->sched().task(wakee).cpu, expected) << placement;
    ASSERT_FALSE(h->recorder().calls().empty());
    EXPECT_EQ(h->recorder().calls().back().result, expected) << placement;
  }
}

// --- overutilisation -----------------------------------------------------------------------

TEST_F(GkiTest, OverutilizedSystemFallsBackToMainlinePlacement) {
  // When some CPU's fair utilisation exceeds 80% of its capacity, find_energy_efficient_cpu()
  // does not decide (-1) and the wakeup takes the mainline path: the honor-sync shortcut no
  // longer applies and the wakee goes to its idle prev, as mainline puts it. Load balancing is
  // active exactly while the system is overutilised.
  const int wakee = sleeper(5);
  const std::vector<int> tids = busy({kSilver0, 2});
  const int waker = tids[0];
  const int hog = tids[1];
  const WakeContext sync = from_cpu(kSilver0, waker, true);
  EXPECT_FALSE(sched_.overutilized());
  EXPECT_FALSE(sched_.balancing_active());
  EXPECT_EQ(GP::find_energy_efficient_cpu(sched_, wakee, 5, sync), kSilver0);

  // 90% of silver CPU 2's capacity, seen by a balance at the root domain.
  sched_.set_task_util(hog, 0.9 * topology_.capacity(2));
  sched_.refresh_overutilized();
  EXPECT_TRUE(sched_.overutilized());
  EXPECT_TRUE(sched_.balancing_active());
  EXPECT_EQ(GP::find_energy_efficient_cpu(sched_, wakee, 5, sync), -1);
  sched_.task_for_update(wakee).recent_used_cpu = -1;
  const int gki_cpu = gki_.select_cpu(sched_, wakee, 5, sync);
  sched_.task_for_update(wakee).recent_used_cpu = -1;
  const int mainline_cpu = MP::select_task_rq_fair(sched_, wakee, 5, sync);
  EXPECT_EQ(gki_cpu, 5);
  EXPECT_EQ(gki_cpu, mainline_cpu);

  // Back below 80%, and seen so: energy-aware placement decides again.
  sched_.set_task_util(hog, 0.7 * topology_.capacity(2));
  sched_.refresh_overutilized();
  EXPECT_FALSE(sched_.overutilized());
  EXPECT_FALSE(sched_.balancing_active());
  EXPECT_EQ(gki_.select_cpu(sched_, wakee, 5, sync), kSilver0);
}

TEST(BalancingActiveTest, IsAlwaysOnUnderMainlinePlacement) {
  // Without energy-aware placement the kernel always load-balances.
  const auto h = std::make_unique<Harness>("mainline");
  EXPECT_FALSE(h->sched().overutilized());
  EXPECT_TRUE(h->sched().balancing_active());
}

TEST_F(GkiTest, TheOverutilisedFlagStaysSetUntilARootDomainBalance) {
  // rd->overutilized: a wakeup that enqueues a fair task on an overutilised CPU sets the flag.
  // When the utilisation falls back the flag stays, and wakeups keep the mainline path, until a
  // load balance at the root domain recomputes it.
  const int wakee = sleeper(2, fair_params("wakee"), only(2));
  const int other = sleeper(5);
  const int hog = busy({2})[0];
  sched_.set_task_util(hog, 0.9 * topology_.capacity(2));
  ASSERT_TRUE(sched_.any_cpu_overutilized());
  EXPECT_FALSE(sched_.overutilized());  // nothing has set it yet
  wake(wakee, WakeContext{});           // enqueue_task_fair() on CPU 2
  EXPECT_TRUE(sched_.overutilized());
  sched_.set_task_util(hog, 0.5 * topology_.capacity(2));
  ASSERT_FALSE(sched_.any_cpu_overutilized());
  EXPECT_TRUE(sched_.overutilized());
  EXPECT_EQ(GP::find_energy_efficient_cpu(sched_, other, 5, WakeContext{}), -1);
  sched_.refresh_overutilized();
  EXPECT_FALSE(sched_.overutilized());
  EXPECT_NE(GP::find_energy_efficient_cpu(sched_, other, 5, WakeContext{}), -1);
}

TEST_F(GkiTest, OverutilizationComparesFairUtilisationWithCapacityLeftByRt) {
  // cpu_overutilized(): fair utilisation against capacity_of(). On gold CPU 4, after an RT task
  // kept it busy for over 100 ms, a fair utilisation far below 80% of 872 overutilises the CPU
  // once it exceeds 80% of the capacity the RT utilisation leaves.
  rt_pressure(kGold0);
  const int fair = sleeper(kGold0, fair_params("fair"), only(kGold0));
  const double left = sched_.capacity_of(kGold0);
  ASSERT_LT(left, 0.5 * topology_.capacity(kGold0));
  sched_.set_task_util(fair, 0.7 * left);
  EXPECT_FALSE(sched_.any_cpu_overutilized());
  sched_.set_task_util(fair, 0.9 * left);
  EXPECT_TRUE(sched_.any_cpu_overutilized());
  // RT utilisation alone, however high, is not overutilisation.
  sched_.set_task_util(fair, 0);
  ASSERT_GT(sched_.cpu_util_rt(kGold0), 0.8 * topology_.capacity(kGold0));
  EXPECT_FALSE(sched_.any_cpu_overutilized());
}

TEST_F(GkiTest, OverutilizedAgreesWithTheDirectCheckAsUtilisationRisesAndDecays) {
  // any_cpu_overutilized() skips CPUs whose utilisation cannot reach the threshold before their run
  // queue changes. Asked every 20 us while a fair hog's utilisation on gold CPU 4 rises past
  // 80% of its capacity (and its frequency with it), then decays after the hog sleeps, it
  // agrees with every CPU checked directly, and flips exactly twice.
  occupy(kGold0, fair_params("hog"), 120 * kMillisecond);
  bool before = false;
  int flips = 0;
  for (int step = 0; step < 15'000; ++step) {
    run_for(20 * kMicrosecond);
    bool direct = false;
    for (int cpu = 0; cpu < topology_.num_cpus(); ++cpu) {
      direct = direct || sched_.cpu_util_fair(cpu) * 1280.0 >= sched_.capacity_of(cpu) * 1024.0;
    }
    ASSERT_EQ(sched_.any_cpu_overutilized(), direct) << "at " << now() << " ns";
    if (direct != before) ++flips;
    before = direct;
  }
  EXPECT_EQ(flips, 2);
}

TEST_F(GkiTest, OverutilizedFindsAnyOverutilisedCpuWhicheverWasFoundBefore) {
  // The answer is whether any CPU is overutilised, whichever CPU was found overutilised the
  // time before: gold CPU 5, then silver CPU 2 (below it in the scan), then none, then both.
  const int on_silver = sleeper(2);
  const int on_gold = sleeper(5);
  auto load = [&](double silver_share, double gold_share) {
    sched_.set_task_util(on_silver, silver_share * topology_.capacity(2));
    sched_.set_task_util(on_gold, gold_share * topology_.capacity(5));
    return sched_.any_cpu_overutilized();
  };
  EXPECT_FALSE(load(0.5, 0.5));
  EXPECT_TRUE(load(0.5, 0.9));
  EXPECT_TRUE(load(0.9, 0.5));
  EXPECT_FALSE(load(0.5, 0.5));
  EXPECT_TRUE(load(0.9, 0.9));
  EXPECT_FALSE(load(0.7, 0.7));
}

TEST_F(GkiTest, OverutilizedIsExactlyTheFailureOfTheFitMargin) {
  // The kernel's cpu_overutilized() is !fits_capacity(cpu_util, capacity_of): a CPU is
  // overutilised from exactly 80% of its capacity on, where a task no longer fits. The prime
  // core (1024) with fair utilisation 819.2 (80%) is overutilised.
  const int tid = sleeper(kPrime);
  sched_.set_task_util(tid, 0.8 * 1024);
  const double util = sched_.cpu_util_fair(kPrime);
  const double capacity = sched_.capacity_of(kPrime);
  ASSERT_EQ(capacity, 1024.0);
  EXPECT_EQ(sched_.any_cpu_overutilized(), !MP::fits_capacity(util, capacity)) << "util " << util;
}

// --- RT sync rule --------------------------------------------------------------------------

// RT wakers and wakees: the waker runs at priority 90 on silver CPU 2; the wakee (priority 50)
// last ran on gold CPU 5, which is idle.
class GkiRtSyncTest : public GkiTest {
 protected:
  void SetUp() override {
    wakee_ = sleeper(5, rt_params("wakee", 50));
    waker_ = busy({2}, rt_params("waker", 90))[0];
  }
  WakeContext sync() const { return from_cpu(2, waker_, true); }
  // What the RT class does without the sync rule.
  int mainline_rt() const { return MP::select_task_rq_rt(sched_, wakee_, 5, sync()); }

  int wakee_ = -1;
  int waker_ = -1;
};

TEST_F(GkiRtSyncTest, SyncWakeupFromAnRtWakerGoesToTheWakersCpu) {
  // should_honor_rt_sync(): a sync wakeup from an RT waker whose CPU runs no other RT task
  // puts the RT wakee on the waker's CPU; mainline's RT placement would not.
  ASSERT_NE(mainline_rt(), 2);
  EXPECT_TRUE(GP::honor_rt_sync(sched_, wakee_, sync()));
  EXPECT_EQ(gki_.select_cpu(sched_, wakee_, 5, sync()), 2);
  // Through try_to_wake_up().
  wake(wakee_, sync());
  EXPECT_EQ(sched_.task(wakee_).cpu, 2);
}

TEST_F(GkiRtSyncTest, CfsWakerIsNotHonored) {
  // Only RT wakers: a sync wakeup from a CFS task takes the RT class's usual placement.
  const int cfs_waker = busy({3})[0];
  const WakeContext ctx = from_cpu(3, cfs_waker, true);
  EXPECT_FALSE(GP::honor_rt_sync(sched_, wakee_, ctx));
  EXPECT_EQ(gki_.select_cpu(sched_, wakee_, 5, ctx), MP::select_task_rq_rt(sched_, wakee_, 5, ctx));
  EXPECT_NE(gki_.select_cpu(sched_, wakee_, 5, ctx), 3);
}

TEST_F(GkiRtSyncTest, AtMostTwoRtTasksOnTheWakersCpu) {
  // rt_nr_running <= 2 (running plus queued): with the waker and one queued RT task the rule
  // holds; with a second queued RT task (3 in all) it does not. The queued tasks have lower
  // priorities than the wakee, so only the count decides.
  queue_behind(2, rt_params("queued-30", 30));
  ASSERT_EQ(sched_.rq(2).rt.size(), 1U);
  EXPECT_TRUE(GP::honor_rt_sync(sched_, wakee_, sync()));
  queue_behind(2, rt_params("queued-20", 20));
  ASSERT_EQ(sched_.rq(2).rt.size(), 2U);
  EXPECT_FALSE(GP::honor_rt_sync(sched_, wakee_, sync()));
  EXPECT_EQ(gki_.select_cpu(sched_, wakee_, 5, sync()), mainline_rt());
  EXPECT_NE(gki_.select_cpu(sched_, wakee_, 5, sync()), 2);
}

TEST_F(GkiRtSyncTest, WakeeMustBeAtLeastAsImportantAsTheQueuedRtTask) {
  // p->prio <= rt.highest_prio.next: the wakee (priority 50) may go ahead of a queued RT task
  // of equal priority but not of a higher one.
  const int queued = queue_behind(2, rt_params("queued", 60));
  EXPECT_FALSE(GP::honor_rt_sync(sched_, wakee_, sync()));
  EXPECT_NE(gki_.select_cpu(sched_, wakee_, 5, sync()), 2);
  sched_.set_attributes(queued, Policy::kFifo, 0, 50);
  ASSERT_EQ(sched_.task(queued).state, TaskState::kRunnable);
  EXPECT_TRUE(GP::honor_rt_sync(sched_, wakee_, sync()));
  EXPECT_EQ(gki_.select_cpu(sched_, wakee_, 5, sync()), 2);
}

TEST_F(GkiRtSyncTest, PinnedQueuedRtTaskIsNotTheNextPriority) {
  // rt.highest_prio.next is the best priority among the *pushable* queued RT tasks
  // (enqueue_task_rt() makes a task pushable only when nr_cpus_allowed > 1). A queued RT task
  // pinned to the waker's CPU does not count, even at a higher priority than the wakee: with
  // the waker and that task (2 RT tasks) the rule holds.
  const int pinned = spawn(rt_params("pinned", 60, only(2)), 10 * kMillisecond, 2);
  ASSERT_EQ(sched_.task(pinned).state, TaskState::kRunnable);
  ASSERT_EQ(sched_.rq(2).rt.size(), 1U);
  EXPECT_TRUE(GP::honor_rt_sync(sched_, wakee_, sync()));
  EXPECT_EQ(gki_.select_cpu(sched_, wakee_, 5, sync()), 2);
}

TEST_F(GkiRtSyncTest, WakeeKeptByTheRuleWaitsBehindItsWaker) {
  // enqueue_task_rt() asks the rule again with the wakee queued (2 RT tasks): it still holds,
  // so the wakee is not pushable and waits on the waker's CPU; task_woken_rt() pushes nothing.
  wake(wakee_, sync());
  run_for(100 * kMicrosecond);
  EXPECT_EQ(sched_.task(wakee_).cpu, 2);
  EXPECT_EQ(sched_.task(wakee_).state, TaskState::kRunnable);
  EXPECT_EQ(sched_.rq(2).curr, waker_);
  EXPECT_EQ(sched_.rt_pushes(), 0U);
}

TEST_F(GkiRtSyncTest, WakeeThatMakesAThirdRtTaskIsPushedOnArrival) {
  // With the waker and a pinned queued RT task the rule sends the wakee to the waker's CPU
  // (rt_nr_running 2). Queued, the wakee is the third RT task: enqueue_task_rt() finds the rule
  // broken and makes it pushable, and task_woken_rt() pushes it at once, as the waker (more
  // important) keeps it waiting: to a CPU running no RT task.
  spawn(rt_params("pinned", 60, only(2)), 10 * kMillisecond, 2);
  ASSERT_TRUE(GP::honor_rt_sync(sched_, wakee_, sync()));
  wake(wakee_, sync());
  const int target = sched_.task(wakee_).cpu;
  EXPECT_NE(target, 2);
  EXPECT_EQ(sched_.rq(2).rt.size(), 1U);  // the pinned task only
  EXPECT_EQ(sched_.rt_pushes(), 1U);
  run_for(100 * kMicrosecond);  // it ran its 10 us there; behind the waker it would still wait
  EXPECT_EQ(sched_.task(wakee_).state, TaskState::kSleeping);
  EXPECT_EQ(sched_.task(wakee_).cpu, target);
}

TEST_F(GkiRtSyncTest, NeedsASyncWakeupAndAnAllowedCpu) {
  // Without WF_SYNC, or with the waker's CPU outside the wakee's affinity, the rule does not
  // apply.
  const WakeContext not_sync = from_cpu(2, waker_, false);
  EXPECT_FALSE(GP::honor_rt_sync(sched_, wakee_, not_sync));
  EXPECT_EQ(gki_.select_cpu(sched_, wakee_, 5, not_sync),
            MP::select_task_rq_rt(sched_, wakee_, 5, not_sync));
  sched_.task_for_update(wakee_).params.affinity = only(5) | only(kPrime);
  EXPECT_FALSE(GP::honor_rt_sync(sched_, wakee_, sync()));
  EXPECT_NE(gki_.select_cpu(sched_, wakee_, 5, sync()), 2);
}

// --- select_idle_capacity under the fallback -------------------------------------------------

TEST_F(GkiTest, OverutilizedFallbackScansForTheFirstIdleCpuTheTaskFits) {
  // A timer wakeup of a task of utilisation 400 (fits gold and prime only) whose prev, gold
  // CPU 6, is busy, like the prime core. Energy-aware placement keeps it on prev: CPU 5 would
  // cost the same and CPU 4 (carrying 300 already) cannot take it. Once the system is
  // overutilised, mainline's select_idle_capacity() scans from prev, wrapping: 6 and 7 busy,
  // 0-2 idle but too small, 3 busy, and takes idle CPU 4, whose sleeping load the scan ignores.
  const int wakee = sleeper(6);
  const int blocked = sleeper(kGold0);
  const std::vector<int> hogs = busy({6, kPrime, 3});
  sched_.set_task_util(blocked, 300);
  sched_.set_task_util(wakee, 400);
  ASSERT_FALSE(sched_.overutilized());
  EXPECT_EQ(gki_.select_cpu(sched_, wakee, 6, WakeContext{}), 6);

  sched_.set_task_util(hogs[2], 0.9 * topology_.capacity(3));
  sched_.refresh_overutilized();
  ASSERT_TRUE(sched_.overutilized());
  EXPECT_EQ(gki_.select_cpu(sched_, wakee, 6, WakeContext{}), kGold0);
  EXPECT_EQ(MP::select_task_rq_fair(sched_, wakee, 6, WakeContext{}), kGold0);
}

// --- energy model --------------------------------------------------------------------------

TEST_F(GkiTest, EmCpuEnergyUsesTheLowestOppAtOrAboveTheUtilisationWithHeadroom) {
  // em_cpu_energy(): the domain runs at the lowest operating point whose frequency is at least
  // fmax x min(1.25 x max_util, scale) / scale; that point's cost is power x fmax / f, and the
  // energy is cost x sum_util / scale.
  const auto& gold = topology_.frequency_domain(kGold).opps;
  const double scale = topology_.capacity(kGold0);
  ASSERT_EQ(scale, 872.0);
  ASSERT_EQ(gold.size(), 17U);
  const auto fmax = static_cast<double>(gold.back().freq_khz);
  auto cost = [&](std::size_t i) {
    return gold[i].power * fmax / static_cast<double>(gold[i].freq_khz);
  };
  auto energy = [&](double max_util, double sum_util) {
    return GP::em_cpu_energy(topology_.frequency_domain(kGold), max_util, sum_util, scale);
  };
  // max_util 300: 2419200 x 375 / 872 = 1040367 kHz, above 940800 (opp 2) and at most 1056000
  // (opp 3, power 264): cost 264 x 2419200 / 1056000 = 604.8; 500 of utilisation costs
  // 604.8 x 500 / 872 = 346.79.
  ASSERT_EQ(gold[2].freq_khz, 940800);
  ASSERT_EQ(gold[3].freq_khz, 1056000);
  ASSERT_EQ(gold[3].power, 264);
  EXPECT_NEAR(energy(300, 500), 346.79, 0.01);
  EXPECT_NEAR(energy(300, 500), cost(3) * 500 / scale, 1e-9);
  // The energy is proportional to the summed utilisation at a given frequency.
  EXPECT_NEAR(energy(300, 1000), 2 * energy(300, 500), 1e-9);
  // Around the boundary of opp 3 (max_util 304.48): 304 stays at opp 3, 305 needs opp 4.
  ASSERT_LE(fmax * 1.25 * 304 / scale, static_cast<double>(gold[3].freq_khz));
  ASSERT_GT(fmax * 1.25 * 305 / scale, static_cast<double>(gold[3].freq_khz));
  EXPECT_NEAR(energy(304, 500), cost(3) * 500 / scale, 1e-9);
  EXPECT_NEAR(energy(305, 500), cost(4) * 500 / scale, 1e-9);
  // No utilisation: the lowest operating point.
  EXPECT_NEAR(energy(0, 100), cost(0) * 100 / scale, 1e-9);
  // From 80% of the capacity on (1.25 x max_util >= scale) the top operating point, whose
  // cost is its power.
  EXPECT_NEAR(cost(16), 1022, 1e-9);
  EXPECT_NEAR(energy(697.6, 700), 1022.0 * 700 / scale, 1e-9);
  EXPECT_NEAR(energy(872, 872), 1022.0, 1e-9);

  // Silver (scale 307): max_util 100 needs 1785600 x 125 / 307 = 727036 kHz: opp 5 (768000
  // kHz, power 37), cost 37 x 1785600 / 768000 = 86.03.
  const auto& silver = topology_.frequency_domain(kSilver).opps;
  ASSERT_EQ(topology_.capacity(kSilver0), 307);
  ASSERT_EQ(silver[4].freq_khz, 672000);
  ASSERT_EQ(silver[5].freq_khz, 768000);
  EXPECT_NEAR(GP::em_cpu_energy(topology_.frequency_domain(kSilver), 100, 200, 307),
              37.0 * 1785600 / 768000 * 200 / 307, 1e-9);
  // Prime (scale 1024): max_util 512 needs 2841600 x 640 / 1024 = 1776000 kHz: opp 9 (1804800
  // kHz, power 655).
  const auto& prime = topology_.frequency_domain(kPrimeCluster).opps;
  ASSERT_EQ(prime[8].freq_khz, 1708800);
  ASSERT_EQ(prime[9].freq_khz, 1804800);
  EXPECT_NEAR(GP::em_cpu_energy(topology_.frequency_domain(kPrimeCluster), 512, 512, 1024),
              655.0 * 2841600 / 1804800 * 512 / 1024, 1e-9);
}

TEST_F(GkiTest, CpuUtilNextMovesTheTaskUtilisationBetweenCpus) {
  // cpu_util_next(cpu, p, dst): the CPU's fair utilisation without p's share when p leaves it,
  // with p's share added when p moves there, unchanged otherwise.
  const int other = sleeper(kGold0);
  const int tid = sleeper(5);
  sched_.set_task_util(other, 300);
  sched_.set_task_util(tid, 100);
  EXPECT_NEAR(GP::cpu_util_next(sched_, 5, tid, 5), 100, 1e-6);
  EXPECT_NEAR(GP::cpu_util_next(sched_, 5, tid, -1), 0, 1e-6);
  EXPECT_NEAR(GP::cpu_util_next(sched_, 5, tid, kGold0), 0, 1e-6);
  EXPECT_NEAR(GP::cpu_util_next(sched_, kGold0, tid, kGold0), 400, 1e-6);
  EXPECT_NEAR(GP::cpu_util_next(sched_, kGold0, tid, 5), 300, 1e-6);
  EXPECT_NEAR(GP::cpu_util_next(sched_, 6, tid, -1), 0, 1e-6);
}

TEST_F(GkiTest, ComputeEnergyAddsTheTaskWhereItIsPlaced) {
  // compute_energy(): the cluster's energy with the task on dst (or nowhere, -1): the busiest
  // CPU sets the operating point and all CPUs' utilisation is summed.
  const auto& gold = topology_.frequency_domain(kGold);
  const auto& prime = topology_.frequency_domain(kPrimeCluster);
  const int other = sleeper(kGold0);
  const int tid = sleeper(5);
  sched_.set_task_util(other, 300);
  sched_.set_task_util(tid, 100);
  auto near = [](double actual, double expected) {
    EXPECT_NEAR(actual, expected, 1e-6 * expected);
  };
  near(GP::compute_energy(sched_, kGold, tid, -1), GP::em_cpu_energy(gold, 300, 300, 872));
  near(GP::compute_energy(sched_, kGold, tid, 5), GP::em_cpu_energy(gold, 300, 400, 872));
  near(GP::compute_energy(sched_, kGold, tid, kGold0), GP::em_cpu_energy(gold, 400, 400, 872));
  // A destination outside the cluster leaves it without the task.
  near(GP::compute_energy(sched_, kGold, tid, kPrime), GP::em_cpu_energy(gold, 300, 300, 872));
  near(GP::compute_energy(sched_, kPrimeCluster, tid, kPrime),
       GP::em_cpu_energy(prime, 100, 100, 1024));
}

TEST_F(GkiTest, ComputeEnergyRunsAClusterWithARunnableRtTaskAtItsRtClamp) {
  // effective_cpu_util(FREQUENCY_UTIL): while an RT task is runnable on a CPU its utilisation
  // is raised to sched_util_clamp_min_rt_default (1024 here, capped at the CPU's capacity),
  // so the gold cluster is priced at its top operating point (cost = its power, 1022).
  const int other = sleeper(kGold0);
  const int tid = sleeper(5);
  const int rt = busy({6}, rt_params("rt", 50))[0];
  sched_.set_task_util(other, 300);
  sched_.set_task_util(tid, 100);
  ASSERT_EQ(sched_.tunables().rt_uclamp_min, 1024);
  const double rt_util = sched_.cpu_util_rt(6);
  EXPECT_NEAR(GP::compute_energy(sched_, kGold, tid, 5), 1022.0 * (400 + rt_util) / 872, 1e-3);
  EXPECT_EQ(sched_.rq(6).curr, rt);
}

// Hand-derived energies on the SA8155P tables, used below. cost(domain, i) = power x fmax / f.
double opp_cost(const topology::FrequencyDomain& domain, std::size_t i) {
  return domain.opps[i].power * static_cast<double>(domain.opps.back().freq_khz) /
         static_cast<double>(domain.opps[i].freq_khz);
}

// Asserts that opp `i` is the lowest at or above `khz`, and returns its cost.
double cost_at(const topology::FrequencyDomain& domain, double khz, std::size_t i) {
  EXPECT_LE(khz, static_cast<double>(domain.opps[i].freq_khz)) << "opp " << i;
  if (i > 0) {
    EXPECT_GT(khz, static_cast<double>(domain.opps[i - 1].freq_khz)) << "opp " << i;
  }
  return opp_cost(domain, i);
}

TEST_F(GkiTest, SmallTaskGoesToSilverWhereItCostsLeastEnergy) {
  // A task of utilisation 50 that last ran on an idle gold CPU, woken by a timer, on an
  // otherwise idle system. Per cluster, with the task added (every cluster's base energy is 0):
  //   silver: 1785600 x 62.5 / 307 = 363518 kHz -> opp 1 (403200, power 25),
  //           energy 25 x 1785600 / 403200 x 50 / 307 = 18.0;
  //   gold (prev 5): 2419200 x 62.5 / 872 = 173394 kHz -> opp 0 (710400, power 165),
  //           energy 165 x 2419200 / 710400 x 50 / 872 = 32.2;
  //   prime: 2841600 x 62.5 / 1024 = 173438 kHz -> opp 0 (825600, power 227), energy 38.1.
  // Silver saves 14.2, far more than 1/16 of prev's 32.2: the task goes to the first silver
  // CPU with the most spare capacity, CPU 0.
  const int tid = sleeper(5);
  sched_.set_task_util(tid, 50);
  const auto& silver = topology_.frequency_domain(kSilver);
  const auto& gold = topology_.frequency_domain(kGold);
  const auto& prime = topology_.frequency_domain(kPrimeCluster);
  const double silver_energy = cost_at(silver, 1785600.0 * 62.5 / 307, 1) * 50 / 307;
  const double gold_energy = cost_at(gold, 2419200.0 * 62.5 / 872, 0) * 50 / 872;
  const double prime_energy = cost_at(prime, 2841600.0 * 62.5 / 1024, 0) * 50 / 1024;
  EXPECT_NEAR(silver_energy, 18.0, 0.05);
  EXPECT_NEAR(gold_energy, 32.2, 0.05);
  EXPECT_NEAR(prime_energy, 38.1, 0.05);
  EXPECT_NEAR(GP::compute_energy(sched_, kSilver, tid, kSilver0), silver_energy, 1e-6);
  EXPECT_NEAR(GP::compute_energy(sched_, kGold, tid, 5), gold_energy, 1e-6);
  EXPECT_NEAR(GP::compute_energy(sched_, kPrimeCluster, tid, kPrime), prime_energy, 1e-6);
  EXPECT_EQ(GP::find_energy_efficient_cpu(sched_, tid, 5, WakeContext{}), kSilver0);
  EXPECT_EQ(gki_.select_cpu(sched_, tid, 5, WakeContext{}), kSilver0);
}

TEST_F(GkiTest, TaskWithoutUtilisationStaysOnPrev) {
  // A task with no utilisation gives the energy model nothing to compare: it stays on prev.
  const int tid = sleeper(5);
  sched_.set_task_util(tid, 0);
  EXPECT_EQ(GP::find_energy_efficient_cpu(sched_, tid, 5, WakeContext{}), 5);
}

// The 1/16 margin, on a wakee restricted to gold CPUs 4 and 5 that last ran on CPU 5 where
// another (sleeping) task has utilisation `prev_other`; CPU 4 is empty. Other clusters carry no
// utilisation, so their energy is 0.
class GkiMarginTest : public GkiTest {
 protected:
  void place(double prev_other, double task_util) {
    other_ = sleeper(5);
    tid_ = sleeper(5, fair_params("wakee"), only(kGold0) | only(5));
    sched_.set_task_util(other_, prev_other);
    sched_.set_task_util(tid_, task_util);
    ASSERT_FALSE(sched_.overutilized());
  }
  // Deltas as find_energy_efficient_cpu() computes them, and its rule: leave prev only if the
  // best CPU saves more than (prev_delta + base energy) / 16.
  bool rule_moves() const {
    const double base = GP::compute_energy(sched_, kGold, tid_, -1);
    const double prev_delta = GP::compute_energy(sched_, kGold, tid_, 5) - base;
    const double best_delta = GP::compute_energy(sched_, kGold, tid_, kGold0) - base;
    return prev_delta - best_delta > (prev_delta + base) / 16;
  }
  int feec() { return GP::find_energy_efficient_cpu(sched_, tid_, 5, WakeContext{}); }

  int other_ = -1;
  int tid_ = -1;
};

TEST_F(GkiMarginTest, StaysOnPrevWhenTheSavingIsBelowOneSixteenth) {
  // prev_other 200, task 20. On prev the busiest CPU has 220: 2419200 x 275 / 872 = 762936 kHz
  // -> opp 1 (825600, cost 571.4), energy 571.4 x 220 / 872 = 144.2. On CPU 4 the busiest
  // stays at 200: 693578 kHz -> opp 0 (cost 561.9), energy 141.8. The saving, 2.4, is below
  // 1/16 of the energy with the task on prev (9.0): the task stays on CPU 5.
  place(200, 20);
  const auto& gold = topology_.frequency_domain(kGold);
  const double on_prev = cost_at(gold, 2419200.0 * 275 / 872, 1) * 220 / 872;
  const double on_best = cost_at(gold, 2419200.0 * 250 / 872, 0) * 220 / 872;
  EXPECT_NEAR(on_prev, 144.2, 0.05);
  EXPECT_NEAR(on_best, 141.8, 0.05);
  EXPECT_NEAR(GP::compute_energy(sched_, kGold, tid_, 5), on_prev, 1e-6);
  EXPECT_NEAR(GP::compute_energy(sched_, kGold, tid_, kGold0), on_best, 1e-6);
  ASSERT_GT(on_prev, on_best);
  ASSERT_LT(on_prev - on_best, on_prev / 16);
  EXPECT_FALSE(rule_moves());
  EXPECT_EQ(feec(), 5);
}

TEST_F(GkiMarginTest, MovesWhenTheSavingExceedsOneSixteenth) {
  // prev_other 350, task 300. On prev the busiest CPU has 650: 2254128 kHz -> opp 15
  // (2323200, cost 958.0), energy 958.0 x 650 / 872 = 714.1. On CPU 4 the busiest has 350:
  // 1213761 kHz -> opp 5 (1286400, cost 637.5), energy 475.2. The saving, 238.9, exceeds 1/16
  // of 714.1: the task moves to CPU 4.
  place(350, 300);
  const auto& gold = topology_.frequency_domain(kGold);
  const double on_prev = cost_at(gold, 2419200.0 * 812.5 / 872, 15) * 650 / 872;
  const double on_best = cost_at(gold, 2419200.0 * 437.5 / 872, 5) * 650 / 872;
  EXPECT_NEAR(on_prev, 714.1, 0.05);
  EXPECT_NEAR(on_best, 475.2, 0.05);
  EXPECT_NEAR(GP::compute_energy(sched_, kGold, tid_, 5), on_prev, 1e-6);
  EXPECT_NEAR(GP::compute_energy(sched_, kGold, tid_, kGold0), on_best, 1e-6);
  ASSERT_GT(on_prev - on_best, on_prev / 16);
  EXPECT_TRUE(rule_moves());
  EXPECT_EQ(feec(), kGold0);
}

TEST_F(GkiMarginTest, DecisionFollowsTheMarginRuleAcrossUtilisations) {
  // For a range of loads on prev and task sizes, the choice between prev and CPU 4 is the
  // margin rule applied to the deltas of compute_energy(); both outcomes occur.
  int moved = 0;
  int stayed = 0;
  for (double prev_other : {0.0, 100.0, 200.0, 300.0, 420.0}) {
    for (double task_util : {20.0, 60.0, 90.0, 150.0, 250.0}) {
      if (!MP::fits_capacity(prev_other + task_util, 872)) continue;
      place(prev_other, task_util);
      const bool moves = rule_moves();
      EXPECT_EQ(feec(), moves ? kGold0 : 5) << prev_other << " + " << task_util;
      (moves ? moved : stayed) += 1;
      // Retire this pair: their utilisation leaves CPU 5.
      sched_.set_task_util(other_, 0);
      sched_.set_task_util(tid_, 0);
    }
  }
  EXPECT_GT(moved, 0);
  EXPECT_GT(stayed, 0);
}

TEST_F(GkiMarginTest, MarginCountsTheBaseEnergyOfEveryPerformanceDomain) {
  // android12-5.10 find_energy_efficient_cpu() adds every performance domain's base energy
  // (compute_energy(p, -1, pd), computed before its CPUs are scanned) to base_energy, also
  // for domains where the task has no candidate CPU. prev_other 420, task 90; the prime core
  // carries a sleeping task of utilisation 200.
  //   gold, on prev: 510 -> 1768624 kHz -> opp 10 (1804800, cost 715.8), energy 418.6;
  //   gold, on CPU 4: busiest 420 -> 1456514 kHz -> opp 7 (1497600, cost 663.9), energy 388.3;
  //   gold base: 663.9 x 420 / 872 = 319.8;   prime base: 200 -> opp 0 (cost 781.3), 152.6.
  // The saving, 30.3, exceeds (prev_delta + gold base) / 16 = 26.2 but not
  // (prev_delta + gold base + prime base) / 16 = 35.7: the kernel keeps the task on CPU 5.
  const int prime_task = sleeper(kPrime);
  place(420, 90);
  sched_.set_task_util(prime_task, 200);
  const auto& gold = topology_.frequency_domain(kGold);
  const auto& prime = topology_.frequency_domain(kPrimeCluster);
  const double on_prev = cost_at(gold, 2419200.0 * 637.5 / 872, 10) * 510 / 872;
  const double on_best = cost_at(gold, 2419200.0 * 525 / 872, 7) * 510 / 872;
  const double gold_base = cost_at(gold, 2419200.0 * 525 / 872, 7) * 420 / 872;
  const double prime_base = cost_at(prime, 2841600.0 * 250 / 1024, 0) * 200 / 1024;
  EXPECT_NEAR(GP::compute_energy(sched_, kGold, tid_, 5), on_prev, 1e-6);
  EXPECT_NEAR(GP::compute_energy(sched_, kGold, tid_, kGold0), on_best, 1e-6);
  EXPECT_NEAR(GP::compute_energy(sched_, kGold, tid_, -1), gold_base, 1e-6);
  EXPECT_NEAR(GP::compute_energy(sched_, kPrimeCluster, tid_, -1), prime_base, 1e-6);
  const double saving = on_prev - on_best;
  const double prev_delta = on_prev - gold_base;
  ASSERT_GT(saving, (prev_delta + gold_base) / 16);
  ASSERT_LT(saving, (prev_delta + gold_base + prime_base) / 16);
  EXPECT_EQ(feec(), 5);
}

TEST_F(GkiRtSyncTest, AWakeeKeptByTheRuleIsNotPulledAway) {
  // enqueue_task_rt(): the wakee the rule queues behind its waker is not made pushable, so a
  // CPU going idle does not pull it (pull_rt_task() takes pushable tasks only). A queued RT
  // task that came another way is pulled (NewIdleTest).
  occupy(3, fair_params("brief"), 300 * kMicrosecond);
  wake(wakee_, sync());
  ASSERT_EQ(sched_.task(wakee_).cpu, 2);
  ASSERT_EQ(sched_.task(wakee_).state, TaskState::kRunnable);
  EXPECT_FALSE(sched_.task(wakee_).rt_pushable());
  run_for(2 * kMillisecond);  // CPU 3 goes idle and looks for RT work to pull
  EXPECT_EQ(sched_.rq(3).curr, -1);
  EXPECT_EQ(sched_.task(wakee_).cpu, 2);
  EXPECT_EQ(sched_.newidle_pulls(), 0U);
}

}  // namespace
}  // namespace bindersim::sched
