// Misfit migration on CPUs of different capacities (kernel/sched/fair.c; docs/model.md): a
// running fair task whose utilisation no longer fits its CPU (util_fits_cpu(): 20% margin
// against capacity_of()) is moved by active balance to an idle CPU of more capacity, kicked
// from its CPU's tick (nohz_balancer_kick() with check_misfit_status()) or pulled by a bigger
// CPU going idle (newidle_balance()). SA8155P: silver 0-3 (capacity 307), gold 4-6 (872),
// prime 7 (1024).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "bindersim/sched/placement.hpp"
#include "bindersim/sched/scheduler.hpp"
#include "sched_fixture.hpp"

namespace bindersim::sched {
namespace {

using engine::SimTime;
using namespace fixture;  // NOLINT(google-build-using-namespace): test helpers

SchedTunables with_misfit(bool enabled) {
  SchedTunables tunables;
  tunables.misfit_migration = enabled;
  return tunables;
}

class MisfitTest : public ::testing::Test, public SchedHarness {
 protected:
  explicit MisfitTest(bool enabled = true, const std::string& placement = "mainline",
                      IdleStates idle_states = IdleStates::kWfiOnly,
                      const std::function<void(nlohmann::json&)>& topology_edit = nullptr)
      : SchedHarness(with_misfit(enabled), placement, idle_states, topology_edit) {}

  SimTime tick() const { return sched_.tunables().tick_ns; }
  // A fair task that may run anywhere, started on `cpu` with `work_ref_ns` of work.
  int hog_on(int cpu, std::int64_t work_ref_ns = 10'000 * kMillisecond) {
    const int tid = spawn(fair_params("hog", 0, only(cpu)), work_ref_ns, cpu);
    sched_.task_for_update(tid).params.affinity = 0;
    return tid;
  }
  int hog_on_cpu1(std::int64_t work_ref_ns = 10'000 * kMillisecond) {
    return hog_on(1, work_ref_ns);
  }
  // Whether the task's utilisation fits `cpu` with the kernel's margin.
  bool fits_cpu(int tid, int cpu) const {
    return MainlinePlacement::fits_capacity(sched_.task_util(tid), sched_.capacity_of(cpu));
  }
  bool fits_cpu1(int tid) const { return fits_cpu(tid, 1); }
  // Runs tick by tick until the task stops fitting `cpu`; returns that tick's time.
  SimTime run_until_misfit(int tid, int cpu = 1) {
    SimTime at = now() / tick() * tick();
    while (fits_cpu(tid, cpu) && at < 500 * kMillisecond) {
      at += tick();
      run_until(at - 1);
    }
    return at;
  }
  // Gives gold CPU 5 eight idle periods (as many as the new-idle balance averages) of about
  // `idle` each: a task pinned there is woken every `idle`, runs 20 us and sleeps again.
  void gold5_idle_periods(SimTime idle) {
    const int tid = sleeper(kGold0 + 1, fair_params("periodic"), only(kGold0 + 1));
    for (int i = 0; i < 8; ++i) {
      wake(tid, from_cpu(kGold0 + 1), 20 * kMicrosecond);
      run_for(idle);
    }
  }
  // Every gold and prime CPU busy, a hog on CPU 1 just marked misfit at a tick (no CPU of more
  // capacity idle to kick), and gold CPU 5's task set to exit half a tick later. Returns the
  // hog and that exit time; the caller runs on.
  struct PendingPull {
    int hog = -1;
    SimTime gold5_idle_at = 0;
  };
  PendingPull misfit_hog_while_gold5_ends() {
    for (int cpu = kGold0; cpu <= kPrime; ++cpu) {
      if (cpu != kGold0 + 1) occupy(cpu, fair_params("big-hog"));
    }
    const int ends = occupy(kGold0 + 1, fair_params("ends"));
    const int hog = hog_on_cpu1();
    const SimTime misfit_tick = run_until_misfit(hog);
    run_until(misfit_tick + 1);
    EXPECT_TRUE(sched_.rq(1).misfit);
    EXPECT_EQ(sched_.rq(1).curr, hog);
    const SimTime end_at = misfit_tick + tick() / 2;
    at(end_at, [this, ends] { sched_.exit(ends); });
    return {hog, end_at};
  }
};

class MisfitOffTest : public MisfitTest {
 protected:
  MisfitOffTest() : MisfitTest(false) {}
};

// Every idle state of the SA8155P: a gold CPU with no timer armed would power down.
class MisfitIdleTest : public MisfitTest {
 protected:
  MisfitIdleTest() : MisfitTest(true, "mainline", IdleStates::kAll) {}
};

class WaltMisfitTest : public MisfitTest {
 protected:
  WaltMisfitTest() : MisfitTest(true, "walt") {}
};

TEST_F(MisfitTest, GrowingTaskMovesToTheFirstIdleGoldCpuAtTheTickItStopsFitting) {
  // A silver CPU at its maximum frequency gives a task at most 307 of utilisation; it stops
  // fitting at about 246 (307 / 1.25), after tens of milliseconds. Until then it stays. At the
  // first tick after, the idle balancer (CPU 0, the first idle CPU) balances the idle CPUs
  // after itself: silver CPUs 2 and 3 have no more capacity; gold CPU 4 pulls the task by
  // active balance. One migration and one involuntary switch, counted as a misfit migration.
  const int hog = hog_on_cpu1();
  const SimTime misfit_tick = run_until_misfit(hog);
  ASSERT_LT(misfit_tick, 500 * kMillisecond);
  EXPECT_GT(misfit_tick, 20 * kMillisecond);
  EXPECT_EQ(sched_.rq(1).curr, hog);
  EXPECT_EQ(sched_.misfit_migrations(), 0U);
  const auto migrations = sched_.migrations();
  const auto switches = sched_.context_switches();
  run_until(misfit_tick);
  EXPECT_EQ(sched_.task(hog).cpu, kGold0);
  EXPECT_EQ(sched_.misfit_migrations(), 1U);
  EXPECT_EQ(sched_.migrations(), migrations + 1);
  EXPECT_EQ(sched_.context_switches(), switches + 1);
  EXPECT_EQ(sched_.rq(1).curr, -1);  // CPU 1 had nothing else: it goes idle
  // Gold CPU 4 exits idle and runs it. There it fits until its utilisation passes 80% of the
  // gold capacity; then it moves once more, to the prime CPU, the largest, where it stays.
  run_until(misfit_tick + kMillisecond);
  EXPECT_EQ(sched_.rq(kGold0).curr, hog);
  run_until(misfit_tick + 20 * kMillisecond);
  EXPECT_EQ(sched_.rq(kGold0).curr, hog);
  run_until(misfit_tick + 300 * kMillisecond);
  EXPECT_EQ(sched_.rq(kPrime).curr, hog);
  EXPECT_EQ(sched_.misfit_migrations(), 2U);
  run_until(misfit_tick + 600 * kMillisecond);
  EXPECT_EQ(sched_.rq(kPrime).curr, hog);
  EXPECT_EQ(sched_.misfit_migrations(), 2U);
}

TEST_F(MisfitOffTest, WithoutMisfitMigrationTheTaskStaysOnSilver) {
  const int hog = hog_on_cpu1();
  const SimTime misfit_tick = run_until_misfit(hog);
  ASSERT_LT(misfit_tick, 500 * kMillisecond);
  run_until(misfit_tick + 100 * kMillisecond);
  EXPECT_EQ(sched_.rq(1).curr, hog);
  EXPECT_EQ(sched_.misfit_migrations(), 0U);
}

TEST_F(MisfitTest, APinnedTaskIsNotMisfit) {
  // update_misfit_status(): a task allowed on one CPU only is never misfit.
  const int hog = occupy(1, fair_params("pinned"));
  run_until(300 * kMillisecond);
  EXPECT_FALSE(fits_cpu1(hog));
  EXPECT_EQ(sched_.rq(1).curr, hog);
  EXPECT_EQ(sched_.misfit_migrations(), 0U);
}

TEST_F(MisfitTest, OnlyABiggerCpuTakesIt) {
  // With every gold and prime CPU busy the kick finds no CPU of more capacity (the idle silver
  // CPUs do not qualify): the task stays on CPU 1 and keeps running.
  for (int cpu = kGold0; cpu <= kPrime; ++cpu) occupy(cpu, fair_params("big-hog"));
  const int hog = hog_on_cpu1();
  const SimTime misfit_tick = run_until_misfit(hog);
  run_until(misfit_tick + 5 * tick());
  EXPECT_EQ(sched_.rq(1).curr, hog);
  EXPECT_EQ(sched_.misfit_migrations(), 0U);
}

TEST_F(MisfitTest, ABiggerCpuGoingIdlePullsTheMisfitTask) {
  // Every gold and prime CPU is busy when the task stops fitting; when gold CPU 5's task ends
  // (between ticks), CPU 5 goes idle, and its new-idle balance queues the active balance of the
  // misfit task: it moves there at once, before any tick of CPU 1.
  const auto [hog, end_at] = misfit_hog_while_gold5_ends();
  run_until(end_at);
  EXPECT_EQ(sched_.task(hog).cpu, kGold0 + 1);
  EXPECT_EQ(sched_.misfit_migrations(), 1U);
  EXPECT_EQ(sched_.rq(1).curr, -1);
  // It arrives before CPU 5 settles deeper than WFI: the IPI and WFI's exit, a few us.
  run_until(end_at + 10 * kMicrosecond);
  EXPECT_EQ(sched_.rq(kGold0 + 1).curr, hog);
}

TEST_F(MisfitIdleTest, TheCpuThatPullsPaysOnlyWfiExit) {
  // The CPU going idle queues the active balance before it settles into an idle state: the task
  // arrives within microseconds, so it pays the IPI and WFI's exit, not a power-down exit
  // (1461 us on gold), although with no timer armed the governor would pick power-down.
  const auto [hog, end_at] = misfit_hog_while_gold5_ends();
  run_until(end_at);
  ASSERT_EQ(sched_.task(hog).cpu, kGold0 + 1);
  EXPECT_EQ(sched_.rq(kGold0 + 1).idle_state, 0);
  run_until(end_at + 10 * kMicrosecond);
  EXPECT_EQ(sched_.rq(kGold0 + 1).curr, hog);
}

TEST_F(WaltMisfitTest, NotUnderWalt) {
  // WALT has its own misfit handling (not modelled); mainline's does not run under it: the
  // status is never set, whatever the task's utilisation.
  const int hog = hog_on_cpu1();
  run_until(300 * kMillisecond);
  EXPECT_FALSE(fits_cpu1(hog));
  EXPECT_FALSE(sched_.rq(1).misfit);
  EXPECT_EQ(sched_.misfit_migrations(), 0U);
}

TEST_F(MisfitTest, ATaskThatBecameRtIsNotMoved) {
  // A misfit task whose class turns RT while it runs (binder's priority inheritance does this)
  // keeps its CPU: the stopper moves fair tasks only. Gold CPU 5 goes idle after that and
  // takes nothing; the task stays on CPU 1.
  const auto [hog, end_at] = misfit_hog_while_gold5_ends();
  sched_.set_attributes(hog, Policy::kFifo, 0, 50);
  run_until(end_at + kMillisecond);
  EXPECT_EQ(sched_.task(hog).cpu, 1);
  EXPECT_EQ(sched_.rq(1).curr, hog);
  EXPECT_EQ(sched_.misfit_migrations(), 0U);
}

TEST_F(MisfitTest, ACpuWhoseIdlePeriodsAreShortDoesNotPullTheMisfitTaskWhenGoingIdle) {
  // newidle_balance(): a CPU whose idle periods are short on average (avg_idle below
  // sysctl_sched_migration_cost, 500 us) does not balance when it goes idle, so it does not
  // queue the active balance of a misfit task either. Gold CPU 5 has idled about 150 us at a
  // time: when its task ends it stays idle, and the misfit task waits for the next tick of its
  // CPU, whose idle-balance kick moves it there.
  gold5_idle_periods(150 * kMicrosecond);
  const auto [hog, end_at] = misfit_hog_while_gold5_ends();
  run_until(end_at + 10 * kMicrosecond);
  EXPECT_EQ(sched_.task(hog).cpu, 1);
  EXPECT_EQ(sched_.rq(1).curr, hog);
  EXPECT_EQ(sched_.rq(kGold0 + 1).curr, -1);
  EXPECT_EQ(sched_.misfit_migrations(), 0U);
  const SimTime next_tick = (end_at / tick() + 1) * tick();
  run_until(next_tick + 10 * kMicrosecond);
  EXPECT_EQ(sched_.task(hog).cpu, kGold0 + 1);
  EXPECT_EQ(sched_.misfit_migrations(), 1U);
}

TEST_F(MisfitTest, ACpuWhoseIdlePeriodsAreLongPullsTheMisfitTaskWhenGoingIdle) {
  // The same with gold CPU 5 idling about 2 ms at a time (avg_idle above the migration cost):
  // going idle, it pulls the misfit task at once, before any tick of CPU 1.
  gold5_idle_periods(2 * kMillisecond);
  const auto [hog, end_at] = misfit_hog_while_gold5_ends();
  run_until(end_at);
  EXPECT_EQ(sched_.task(hog).cpu, kGold0 + 1);
  EXPECT_EQ(sched_.misfit_migrations(), 1U);
  EXPECT_EQ(sched_.rq(1).curr, -1);
}

TEST_F(MisfitTest, AMisfitTaskLeavesThePrimeCoreForGoldWhenRtTasksTakeEnoughOfIt) {
  // update_sd_pick_busiest() lets a CPU take a misfit task only if it has more than 5% more
  // capacity than the task's group's max_capacity, which update_cpu_capacity() sets to the
  // capacity left to CFS (scale_rt_capacity()), not the original capacity. An RT task pinned to
  // the prime core runs 1.6 ms of every 4 ms, between its ticks (so that no tick finds two
  // tasks there): by 100 ms its RT utilisation, about 360, leaves the core about 665 of its
  // 1024. A fair hog sharing it stops fitting that (its utilisation, about 540, needs 675 with
  // the 20% margin); the core's capacity is cut by more than check_cpu_capacity()'s 117%, so a
  // tick kicks the idle balance, and an idle gold CPU, with 872 > 1.05 x 665, takes the hog.
  const int hog = hog_on(kPrime);
  const int rt = sched_.create_task(rt_params("rt", 50, only(kPrime)));
  for (SimTime t = kMillisecond; t < 300 * kMillisecond; t += tick()) {
    at(t, [this, rt, t] {
      if (sched_.task(rt).state != TaskState::kSleeping && t > kMillisecond) return;
      sched_.run(rt, 1600 * kMicrosecond);
      if (t == kMillisecond) {
        sched_.wake_new(rt, kPrime);
      } else {
        sched_.wake(rt, from_cpu(kPrime));
      }
    });
  }
  SimTime moved_at = engine::kNever;
  for (SimTime t = kMillisecond; t <= 300 * kMillisecond && moved_at == engine::kNever;
       t += kMillisecond) {
    run_until(t);
    if (sched_.task(hog).cpu != kPrime) moved_at = t;
  }
  ASSERT_NE(moved_at, engine::kNever);
  EXPECT_GE(sched_.task(hog).cpu, kGold0);
  EXPECT_LT(sched_.task(hog).cpu, kPrime);
  EXPECT_EQ(sched_.misfit_migrations(), 1U);
  EXPECT_LT(sched_.capacity_of(kPrime) * 1078, topology_.capacity(kGold0) * 1024);
  EXPECT_LT(sched_.capacity_of(kPrime) * 117, topology_.capacity(kPrime) * 100);
}

// The SA8155P with the prime core's capacity per MHz changed so that its capacity is `ratio`
// times the gold cores' (the prime core stays the largest, 1024; gold becomes 1024 / ratio).
std::function<void(nlohmann::json&)> prime_over_gold(double ratio) {
  return [ratio](nlohmann::json& doc) {
    const nlohmann::json& gold = doc.at("clusters").at(1);
    nlohmann::json& prime = doc.at("clusters").at(2);
    const double gold_dmips_khz =
        gold.at("capacity_dmips_mhz").get<double>() * gold.at("max_freq_khz").get<double>();
    prime["capacity_dmips_mhz"] =
        std::lround(ratio * gold_dmips_khz / prime.at("max_freq_khz").get<double>());
  };
}

// Prime only 3% above gold: less than capacity_greater()'s 5% margin.
class PrimeBarelyAboveGoldTest : public MisfitTest {
 protected:
  PrimeBarelyAboveGoldTest()
      : MisfitTest(true, "mainline", IdleStates::kWfiOnly, prime_over_gold(1.03)) {}
};

// Prime 10% above gold: clearly more.
class PrimeClearlyAboveGoldTest : public MisfitTest {
 protected:
  PrimeClearlyAboveGoldTest()
      : MisfitTest(true, "mainline", IdleStates::kWfiOnly, prime_over_gold(1.10)) {}
};

TEST_F(PrimeBarelyAboveGoldTest, AMisfitTaskIsNotMovedToACpuLessThanFivePercentLarger) {
  // capacity_greater() (update_sd_pick_busiest() of a misfit group): the CPU taking a misfit
  // task must have more than 5% more capacity. A task outgrowing gold CPU 4 stays there
  // although the prime core is idle and a little larger.
  ASSERT_GT(topology_.capacity(kPrime), topology_.capacity(kGold0));
  ASSERT_LT(topology_.capacity(kPrime) * 100, topology_.capacity(kGold0) * 105);
  const int hog = hog_on(kGold0);
  const SimTime misfit_tick = run_until_misfit(hog, kGold0);
  ASSERT_LT(misfit_tick, 500 * kMillisecond);
  run_until(misfit_tick + 10 * tick());
  EXPECT_FALSE(fits_cpu(hog, kGold0));
  EXPECT_TRUE(sched_.rq(kGold0).misfit);
  EXPECT_EQ(sched_.rq(kGold0).curr, hog);
  EXPECT_EQ(sched_.rq(kPrime).curr, -1);
  EXPECT_EQ(sched_.misfit_migrations(), 0U);
}

TEST_F(PrimeClearlyAboveGoldTest, AMisfitTaskIsMovedToACpuClearlyLarger) {
  // With the prime core 10% larger than gold, the tick that finds the task misfit on gold CPU
  // 4 kicks the idle balance, and the idle prime core takes it.
  ASSERT_GT(topology_.capacity(kPrime) * 100, topology_.capacity(kGold0) * 105);
  const int hog = hog_on(kGold0);
  const SimTime misfit_tick = run_until_misfit(hog, kGold0);
  ASSERT_LT(misfit_tick, 500 * kMillisecond);
  run_until(misfit_tick + 10 * kMicrosecond);
  EXPECT_EQ(sched_.task(hog).cpu, kPrime);
  EXPECT_EQ(sched_.misfit_migrations(), 1U);
}

}  // namespace
}  // namespace bindersim::sched
