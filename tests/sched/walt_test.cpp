// Behaviour of the `walt` placement (Qualcomm WALT, msm-kernel 6.1 walt_cfs.c / walt_rt.c /
// walt_lb.c) on the SA8155P: clusters by demand with the up/downmigrate margins, the sync
// fastpath, the 1/32 energy margin, affinity, RT placement and the load-balance rules. Demands
// are built by running tasks through whole 16 ms windows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bindersim/sched/walt_placement.hpp"
#include "sched_fixture.hpp"

namespace bindersim::sched {
namespace {

using fixture::fair_params;
using fixture::kGold0;
using fixture::kMicrosecond;
using fixture::kMillisecond;
using fixture::only;
using fixture::rt_params;

constexpr SimTime kWindow = 16 * kMillisecond;
constexpr std::uint64_t kGoldCpus = 0x70;

WakeContext from_timer() { return WakeContext{}; }

class WaltTest : public ::testing::Test, public fixture::SchedHarness {
 protected:
  explicit WaltTest(SchedTunables tunables = {},
                    fixture::IdleStates idle_states = fixture::IdleStates::kWfiOnly,
                    const std::function<void(nlohmann::json&)>& topology_edit = nullptr)
      : SchedHarness(tunables, "walt", idle_states, topology_edit) {}

  int cluster(int cpu) const { return topology_.cluster_of(cpu); }
  int last_choice() const { return placement_.calls().back().result; }

  // A task pinned to `cpu` that runs `work_ref_ns` at first_at, first_at + period, ... up to
  // `until` (woken by a timer each time).
  int periodic(int cpu, SimTime first_at, SimTime period, std::int64_t work_ref_ns, SimTime until,
               const std::string& name = "periodic") {
    const int tid = sched_.create_task(fair_params(name, 0, only(cpu)));
    auto next = std::make_shared<SimTime>(first_at);
    owner_.on_done(tid, [this, tid, next, period, work_ref_ns, until](int) {
      sched_.block(tid);
      *next += period;
      if (*next <= until) {
        at(*next, [this, tid, work_ref_ns] { wake(tid, from_timer(), work_ref_ns); });
      }
    });
    at(first_at, [this, tid, work_ref_ns] {
      sched_.run(tid, work_ref_ns);
      sched_.wake_new(tid, -1);
    });
    return tid;
  }
};

TEST_F(WaltTest, ASmallDemandTaskStaysOnSilverWhileEverySilverCpuIsBusy) {
  // Every silver CPU runs a pinned task 1 ms out of every 4 (demand about 77 of 307); the task
  // under test ran 20 us per window on CPU 0 for six windows (a demand of a few units). Woken
  // at 96.5 ms, while all four silver CPUs are running and the gold ones idle, WALT keeps it in
  // the silver cluster (mainline would take an idle gold CPU).
  for (int cpu = 0; cpu < 4; ++cpu)
    periodic(cpu, 0, 4 * kMillisecond, 300 * kMicrosecond, 200 * kMillisecond);
  const int tid =
      periodic(0, 2 * kMillisecond, kWindow, 6 * kMicrosecond, 82 * kMillisecond, "small");
  run_until(96 * kMillisecond + 500 * kMicrosecond);
  for (int cpu = 0; cpu < 4; ++cpu) ASSERT_FALSE(sched_.available_idle_cpu(cpu)) << cpu;
  ASSERT_TRUE(sched_.available_idle_cpu(kGold0));
  ASSERT_LT(sched_.walt_task_demand(tid), 10.0);
  sched_.task_for_update(tid).params.affinity = 0;
  wake(tid, from_timer());
  EXPECT_EQ(cluster(last_choice()), 0);
  EXPECT_EQ(WaltPlacement::get_indicies(sched_, tid).order_index, 0);
}

TEST_F(WaltTest, AmongBusySilverCpusOfEqualSpareCapacityTheLastIsTheCandidate) {
  // Every silver CPU runs the same pinned task 1 ms out of every 4, so at 96.5 ms all four are
  // running with equal demand. For a small task last on idle gold CPU 5 whose search starts in
  // the silver cluster, where no CPU is idle, the CPU with the most spare capacity is the
  // candidate, and of equals the last one scanned, CPU 3 (only a smaller spare capacity is
  // passed over).
  for (int cpu = 0; cpu < 4; ++cpu)
    periodic(cpu, 0, 4 * kMillisecond, 300 * kMicrosecond, 200 * kMillisecond);
  const int tid = sleeper(5);
  run_until(96 * kMillisecond + 500 * kMicrosecond);
  for (int cpu = 0; cpu < 4; ++cpu) {
    ASSERT_FALSE(sched_.available_idle_cpu(cpu)) << cpu;
    ASSERT_EQ(sched_.walt_cpu_demand(cpu), sched_.walt_cpu_demand(0)) << cpu;
  }
  // A search that starts and may stop at the silver cluster (order and end index 0).
  EXPECT_EQ(WaltPlacement::find_best_target(sched_, tid, 5, WaltPlacement::Indices{}), only(3));
}

TEST_F(WaltTest, ATaskAboveTheUpmigrateThresholdGoesToGold) {
  // Runnable through six whole windows on silver CPU 1, the task's demand is a full silver
  // core, 307, above 307 / 1.078 (sched_upmigrate 95%): its search starts at the gold cluster
  // and it wakes on an idle gold CPU although silver CPUs are idle too.
  const int tid = occupy(1, fair_params("busy"), 30 * kMillisecond);  // 100 ms on silver
  run_until(110 * kMillisecond);
  ASSERT_EQ(sched_.task(tid).state, TaskState::kSleeping);
  EXPECT_NEAR(sched_.walt_task_demand(tid), 307.0, 0.5);
  sched_.task_for_update(tid).params.affinity = 0;
  EXPECT_FALSE(WaltPlacement::task_demand_fits(sched_, tid, 0));
  EXPECT_TRUE(WaltPlacement::task_demand_fits(sched_, tid, kGold0));
  EXPECT_EQ(WaltPlacement::get_indicies(sched_, tid).order_index, 1);
  ASSERT_TRUE(sched_.available_idle_cpu(0));
  wake(tid, from_timer());
  EXPECT_EQ(cluster(last_choice()), 1);
}

TEST_F(WaltTest, ALowPriorityTaskFitsGoldWhateverItsDemandFromNiceFourOn) {
  // Two tasks runnable through six whole windows on gold CPUs 4 and 5 have the demand of a full
  // gold core, above what gold takes with the upmigrate margin. The one of nice 4 (prio 124)
  // fits gold all the same ("a non topapp low prio task fits on gold"); the one of nice 3 fits
  // only the biggest cluster.
  const int nice4 = occupy(kGold0, fair_params("nice4", 4));
  const int nice3 = occupy(kGold0 + 1, fair_params("nice3", 3));
  run_until(100 * kMillisecond);
  ASSERT_EQ(sched_.task(nice4).prio(), 124);
  ASSERT_EQ(sched_.walt_task_demand(nice3), sched_.walt_task_demand(nice4));
  EXPECT_FALSE(WaltPlacement::task_demand_fits(sched_, nice3, kGold0));
  EXPECT_TRUE(WaltPlacement::task_demand_fits(sched_, nice3, fixture::kPrime));
  EXPECT_TRUE(WaltPlacement::task_demand_fits(sched_, nice4, kGold0));
  EXPECT_FALSE(WaltPlacement::task_demand_fits(sched_, nice4, 0));
}

TEST_F(WaltTest, TheSyncFastpathStacksTheWakeeOnTheWakersCpuWhateverRunsThere) {
  // The waker runs on silver CPU 2 with another task queued behind it (GKI's rule would want
  // the waker alone). A wakee whose demand fits silver goes on CPU 2 all the same.
  occupy(2, fair_params("first"));
  occupy(2, fair_params("second"));
  const int wakee = sleeper(5);
  run_for(kMillisecond);
  const int waker = sched_.rq(2).curr;
  ASSERT_GE(waker, 0);
  ASSERT_EQ(sched_.nr_running(2), 2);
  wake(wakee, WakeContext{waker, 2, true, false});
  EXPECT_EQ(last_choice(), 2);
}

TEST_F(WaltTest, NoSyncFastpathOntoACpuSmallerThanTheWakeesCluster) {
  // A wakee whose demand needs gold is not pulled onto a silver waker's CPU by a sync wakeup.
  const int big = occupy(1, fair_params("big"), 30 * kMillisecond);
  const int waker = occupy(3, fair_params("waker"));
  run_until(110 * kMillisecond);
  ASSERT_EQ(sched_.task(big).state, TaskState::kSleeping);
  sched_.task_for_update(big).params.affinity = 0;
  wake(big, WakeContext{waker, 3, true, false});
  EXPECT_EQ(cluster(last_choice()), 1);
}

TEST_F(WaltTest, AffinityIsRespected) {
  // A small task allowed only on the gold CPUs wakes on one of them, although the silver CPUs
  // are idle and its demand fits silver; a sync wakeup from a silver waker does not move it
  // there either.
  const int tid = sleeper(5, fair_params("gold-only"), kGoldCpus);
  wake(tid, from_timer());
  EXPECT_EQ(cluster(last_choice()), 1);
  run_for(kMillisecond);
  const int waker = occupy(0, fair_params("waker"));
  run_for(kMillisecond);
  ASSERT_EQ(sched_.rq(0).curr, waker);
  wake(tid, WakeContext{waker, 0, true, false});
  EXPECT_NE(kGoldCpus & only(last_choice()), 0U);
}

TEST_F(WaltTest, RtSyncWakeupFromAFairWakerLandsOnTheWakersCpu) {
  // walt_should_honor_rt_sync() does not ask for an RT waker: a SCHED_FIFO wakee of a sync
  // wakeup from a fair task goes on the waker's CPU (GKI's rule needs an RT waker).
  const int waker = occupy(3, fair_params("fair-waker"));
  const int rt = sleeper(6, rt_params("rt", 50));
  run_for(kMillisecond);
  ASSERT_EQ(sched_.rq(3).curr, waker);
  wake(rt, WakeContext{waker, 3, true, false});
  EXPECT_EQ(last_choice(), 3);
}

class WaltRtTest : public WaltTest {
 protected:
  static SchedTunables no_rt_clamp() {
    SchedTunables tunables;
    tunables.rt_uclamp_min = 0;  // Android vendor init: every CPU fits an RT task
    return tunables;
  }
  WaltRtTest() : WaltTest(no_rt_clamp()) {}
};

TEST_F(WaltRtTest, RtWakeupTakesTheLeastLoadedSilverCpu) {
  // Silver CPUs 0-2 run fair tasks; CPU 3 and the gold CPUs are idle. An RT task last on gold
  // CPU 5 (idle) woken by a timer goes to the least-loaded CPU of the smallest cluster, CPU 3,
  // rather than staying on its idle prev as mainline's select_task_rq_rt would.
  for (int cpu = 0; cpu < 3; ++cpu) occupy(cpu, fair_params("busy"));
  const int rt = sleeper(5, rt_params("rt", 50));
  run_for(20 * kMillisecond);
  ASSERT_TRUE(sched_.available_idle_cpu(5));
  wake(rt, from_timer());
  EXPECT_EQ(last_choice(), 3);
}

TEST_F(WaltRtTest, AnRtTaskTieGoesToItsOwnCpu) {
  // A fair task ran 3 ms (reference work) on silver CPU 1 and sleeps: CPU 1 keeps a decaying
  // PELT utilisation, but no WALT demand (only running and queued tasks count), like the other
  // idle silver CPUs. Every silver CPU is idle in WFI with a WALT utilisation of 0, so for an RT
  // task last on CPU 1 they tie; the tie goes to the task's own CPU before the exit latency and
  // PELT tie-breaks (which would pass over CPU 1 for its larger PELT utilisation, and otherwise
  // give the last CPU scanned, CPU 3).
  occupy(1, fair_params("fair"), 3 * kMillisecond);
  run_until(20 * kMillisecond);
  const int rt = sleeper(1, rt_params("rt", 50));
  for (int cpu = 0; cpu < 4; ++cpu) {
    ASSERT_TRUE(sched_.available_idle_cpu(cpu)) << cpu;
    ASSERT_EQ(WaltPlacement::cpu_util(sched_, cpu), 0.0) << cpu;
  }
  ASSERT_GT(sched_.cpu_util_fair(1), sched_.cpu_util_fair(0));
  wake(rt, from_timer());
  EXPECT_EQ(last_choice(), 1);
}

// An energy model of one operating point per cluster, its maximum frequency, where a unit of
// capacity costs on gold (64 - kGoldSaving64ths) / 64 of what it costs on silver: a WALT
// energy estimate (power x the cluster's summed utilisation / its CPUs' capacity) then changes
// by exactly that fraction of the task's share when the task moves from silver to gold. All
// idle states: a CPU idle since long is in core power-down, not WFI (WALT goes to an idle CPU
// in WFI whatever the energy).
template <int kGoldSaving64ths>
class WaltEnergyMarginTest : public WaltTest {
 protected:
  WaltEnergyMarginTest() : WaltTest({}, fixture::IdleStates::kAll, &one_opp_per_cluster) {}

  static void one_opp_per_cluster(nlohmann::json& doc) {
    const topology::Topology plain = fixture::load_sa8155p();
    for (nlohmann::json& cluster : doc.at("clusters")) {
      nlohmann::json& opps = cluster.at("cpufreq").at("opps");
      opps.erase(opps.begin(), opps.end() - 1);
    }
    const double silver_power = doc.at("clusters")[0].at("cpufreq").at("opps")[0].at("power");
    doc.at("clusters")[1].at("cpufreq").at("opps")[0]["power"] =
        silver_power * plain.capacity(kGold0) / plain.capacity(0) * (64 - kGoldSaving64ths) / 64.0;
  }

  // A task of demand u on busy silver CPU 0 (demand d0 of the task running there), allowed on
  // CPU 0 and idle gold CPU 4 only: its search starts at silver and goes on to gold (u >= 52),
  // the candidates are CPU 0 and CPU 4. On CPU 0 the estimate is silver's, a x (d0 + u); on
  // CPU 4 it is a x d0 + b x u with b = a x (64 - kGoldSaving64ths) / 64: gold saves
  // kGoldSaving64ths / 64 x u / (d0 + u) of prev's energy. Returns the task, asleep at
  // 102 ms while the other task runs on CPU 0.
  int task_on_busy_silver_allowed_on_gold() {
    // CPU 4 runs once and sleeps in its deepest state from then on.
    occupy(kGold0, fair_params("gold"), 10 * kMicrosecond);
    // The task runs 2 ms (reference work) at the start of each window up to 80 ms; the task
    // keeping CPU 0 busy runs 10 us at 12 ms into each window up to 92 ms (a small demand,
    // about 11 against the task's 142), then for long from 100 ms.
    const int tid = periodic(0, 0, kWindow, 2 * kMillisecond, 80 * kMillisecond, "task");
    filler_ =
        periodic(0, 12 * kMillisecond, kWindow, 10 * kMicrosecond, 92 * kMillisecond, "filler");
    at(100 * kMillisecond, [this] { wake(filler_, from_timer(), 20 * kMillisecond); });
    run_until(102 * kMillisecond);
    sched_.task_for_update(tid).params.affinity = only(0) | only(kGold0);
    return tid;
  }
  // The share of prev's (CPU 0's) energy estimate that placing the task on CPU 4 saves, once
  // the set-up is checked: CPU 0 busy with the other task, CPU 4 in a deep idle state, the task
  // big enough for the energy evaluation, and the search giving CPUs 0 and 4 as candidates.
  double gold_saving_share(int tid) {
    EXPECT_EQ(sched_.rq(0).curr, filler_);
    EXPECT_GT(sched_.rq(kGold0).idle_state, 0);
    EXPECT_GE(sched_.walt_task_demand(tid), WaltPlacement::kMinUtilForEnergyEval);
    const std::uint64_t candidates = only(0) | only(kGold0);
    EXPECT_EQ(
        WaltPlacement::find_best_target(sched_, tid, 0, WaltPlacement::get_indicies(sched_, tid)),
        candidates);
    const double prev_energy = WaltPlacement::compute_energy(sched_, tid, 0, candidates);
    return (prev_energy - WaltPlacement::compute_energy(sched_, tid, kGold0, candidates)) /
           prev_energy;
  }
  int filler_ = -1;
};

using WaltGoldSavesThreeSixtyFourthsTest = WaltEnergyMarginTest<3>;
using WaltGoldSavesOneThirtySecondTest = WaltEnergyMarginTest<2>;

TEST_F(WaltGoldSavesThreeSixtyFourthsTest, ATaskLeavesItsCpuWhenTheSavingIsAboveAThirtySecond) {
  // Gold saves 3/64 x u / (d0 + u) of prev's energy: with d0 small against u, more than 1/32
  // (d0 < u / 2) and less than 1/16. WALT moves the task to gold CPU 4 (a margin of 1/16 would
  // keep it on CPU 0).
  const int tid = task_on_busy_silver_allowed_on_gold();
  ASSERT_EQ(WaltPlacement::get_indicies(sched_, tid).order_index, 0);
  ASSERT_LT(sched_.walt_cpu_demand(0), sched_.walt_task_demand(tid) / 2);
  const double saving = gold_saving_share(tid);
  ASSERT_GT(saving, 1.0 / 32);
  ASSERT_LT(saving, 1.0 / 16);
  wake(tid, from_timer());
  EXPECT_EQ(last_choice(), kGold0);
}

TEST_F(WaltGoldSavesOneThirtySecondTest, ATaskStaysOnItsCpuWhenTheSavingIsAThirtySecondOrLess) {
  // Gold saves 1/32 x u / (d0 + u) of prev's energy: 1/32 of the task's own share, so at most
  // 1/32 of prev's energy, and (d0 < u) more than 1/64 of it. Although CPU 4 costs less, WALT
  // keeps the task on CPU 0 (busy, so no idle fastpath); without the margin, or with a margin
  // of 1/64, it would go to CPU 4.
  const int tid = task_on_busy_silver_allowed_on_gold();
  ASSERT_LT(sched_.walt_cpu_demand(0), sched_.walt_task_demand(tid));
  const double saving = gold_saving_share(tid);
  ASSERT_GT(saving, 1.0 / 64);
  ASSERT_LE(saving, 1.0 / 32);
  wake(tid, from_timer());
  EXPECT_EQ(last_choice(), 0);
}

class WaltBalanceTest : public WaltTest {
 protected:
  // `per_cpu` pinned tasks runnable all the time on each of `cpus` silver CPUs, for 100 ms.
  void load_silver(int cpus, int per_cpu) {
    for (int cpu = 0; cpu < cpus; ++cpu) {
      for (int i = 0; i < per_cpu; ++i) occupy(cpu, fair_params("load"));
    }
    run_until(100 * kMillisecond);
  }
  WaltPlacement walt_;
};

TEST_F(WaltBalanceTest, GoldHelpsSilverOnlyWhenTheSilverClusterIsOverloaded) {
  // Two always-runnable tasks on each silver CPU: each has a demand of a full silver core
  // (307), each CPU 614, the cluster runs 8 tasks on 4 CPUs at twice its capacity. An idle
  // gold CPU may pull from it (with enough idle time); a silver CPU may pull from a sibling
  // even when its own idle periods are short.
  load_silver(4, 2);
  EXPECT_NEAR(sched_.walt_cpu_demand(0), 614.0, 1.0);
  EXPECT_TRUE(walt_.may_pull(sched_, 0, kGold0, BalanceKind::kNewIdle));
  EXPECT_FALSE(walt_.may_pull(sched_, 0, kGold0, BalanceKind::kNewIdleShortIdle));
  EXPECT_TRUE(walt_.may_pull(sched_, 0, 1, BalanceKind::kNewIdleShortIdle));
}

TEST_F(WaltBalanceTest, GoldLeavesSilverAloneWhenTheClusterIsNotOverloaded) {
  // Two tasks on silver CPU 0 only: that CPU is overutilised, but its cluster runs two tasks
  // on four CPUs, so no gold CPU pulls from it (mainline and GKI under overutilisation would).
  load_silver(1, 2);
  ASSERT_TRUE(WaltPlacement::cpu_overutilized(sched_, 0, 0));
  EXPECT_FALSE(walt_.may_pull(sched_, 0, kGold0, BalanceKind::kNewIdle));
  EXPECT_FALSE(walt_.may_pull(sched_, 0, kGold0, BalanceKind::kPeriodic));
  EXPECT_TRUE(walt_.may_pull(sched_, 0, 1, BalanceKind::kNewIdle));
}

TEST(WaltRegistryTest, WaltIsARegisteredPlacement) {
  // `walt` is listed and built by name; it keeps WALT demand and balances whatever the
  // overutilisation state (it is not the energy-aware flag of EAS).
  const std::vector<std::string> names = placement_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "walt"), names.end());
  const auto walt = make_placement("walt");
  EXPECT_EQ(walt->name(), "walt");
  EXPECT_TRUE(walt->tracks_walt_demand());
  EXPECT_FALSE(walt->energy_aware());
  EXPECT_FALSE(make_placement("gki")->tracks_walt_demand());
}

}  // namespace
}  // namespace bindersim::sched
