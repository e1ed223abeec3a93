// Behaviour of the scheduler (run queues, preemption, time slices, execution and wakeup costs,
// the idle governor, wake_cpu, counters, determinism) and of the PELT signals, on the SA8155P
// topology (silver 0-3, gold 4-6, prime 7).
#include "bindersim/sched/scheduler.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "bindersim/sched/pelt.hpp"
#include "bindersim/sched/task.hpp"
#include "bindersim/sched/walt_placement.hpp"
#include "sched_fixture.hpp"

namespace bindersim::sched {
namespace {

using engine::SimTime;
using namespace fixture;  // NOLINT(google-build-using-namespace): test helpers

constexpr SimTime kPeltPeriod = 1024 * kMicrosecond;

// --- run queues ----------------------------------------------------------------------------

TEST_F(SchedTest, RtQueueRunsHighestPriorityFirstAndFifoWithinAPriority) {
  // The RT run queue picks the highest priority; within one priority the task enqueued first
  // (SCHED_FIFO), whatever order the tasks were created in.
  const int cpu = 2;
  const int blocker = occupy(cpu, rt_params("blocker", 90), 200 * kMicrosecond);
  run_for(100 * kMicrosecond);
  ASSERT_EQ(sched_.rq(cpu).curr, blocker);
  auto create = [&](const char* name, int rt_priority) {
    const int tid = sched_.create_task(rt_params(name, rt_priority, only(cpu)));
    sched_.run(tid, 10 * kMicrosecond);
    return tid;
  };
  const int p10 = create("p10", 10);
  const int p50_created_first = create("p50-a", 50);
  const int p50_created_second = create("p50-b", 50);
  const int p30 = create("p30", 30);
  for (int tid : {p10, p50_created_second, p50_created_first, p30}) sched_.wake_new(tid, cpu);
  run_until(100 * kMillisecond);
  EXPECT_EQ(owner_.resume_order(),
            (std::vector<int>{blocker, p50_created_second, p50_created_first, p30, p10}));
}

TEST_F(SchedTest, PreemptedRtTaskStaysAtTheHeadOfItsPriority) {
  // A SCHED_FIFO task preempted by a higher priority runs again before a task of its own
  // priority that was queued after it.
  const int cpu = 3;
  const int first = occupy(cpu, rt_params("first", 20), 2 * kMillisecond);
  run_until(100 * kMicrosecond);
  const int second = spawn(rt_params("second", 20, only(cpu)), 10 * kMicrosecond, cpu);
  run_until(200 * kMicrosecond);
  const int high = spawn(rt_params("high", 60, only(cpu)), 10 * kMicrosecond, cpu);
  run_until(100 * kMillisecond);
  ASSERT_EQ(owner_.resumes_of(high).size(), 1U);
  EXPECT_EQ(owner_.resumes_of(high)[0].time, 200 * kMicrosecond);
  ASSERT_EQ(owner_.dones_of(first).size(), 1U);
  ASSERT_EQ(owner_.resumes_of(second).size(), 1U);
  EXPECT_LE(owner_.dones_of(first)[0].time, owner_.resumes_of(second)[0].time);
}

TEST_F(SchedTest, FairQueueRunsSmallestVruntimeFirst) {
  // The CFS run queue picks the task with the smallest vruntime; equal vruntimes go in
  // enqueue order.
  const int cpu = 1;
  const int blocker = occupy(cpu, rt_params("blocker", 50), 200 * kMicrosecond);
  run_for(100 * kMicrosecond);
  ASSERT_EQ(sched_.rq(cpu).curr, blocker);
  std::vector<int> tids;
  for (const char* name : {"a", "b", "c", "d", "e"}) {
    tids.push_back(spawn(fair_params(name, 0, only(cpu)), 10 * kMicrosecond, cpu));
  }
  const std::int64_t base = sched_.rq(cpu).min_vruntime;
  const std::vector<SimTime> lead = {5, 1, 3, 4, 4};  // ms after base; d and e tie
  for (std::size_t i = 0; i < tids.size(); ++i) {
    sched_.task_for_update(tids[i]).vruntime = base + lead[i] * kMillisecond;
  }
  run_until(100 * kMillisecond);
  EXPECT_EQ(owner_.resume_order(),
            (std::vector<int>{blocker, tids[1], tids[2], tids[3], tids[4], tids[0]}));
}

// A fair task made RT while asleep on one CPU, woken as RT on another (its only CPU now) and
// made fair again there while it runs: where its vruntime ends up. A fair hog has kept one of
// the two CPUs busy since time 0, so that its queue's min_vruntime is ~80 ms ahead.
struct VruntimeAcrossRt {
  std::int64_t owed;        // the task's vruntime after its first CPU's minimum when made RT
  std::int64_t first_min;   // that CPU's min_vruntime then
  std::int64_t second_min;  // the second CPU's min_vruntime as it returns to the fair class
  std::int64_t returned;    // its vruntime after the return
};

// A fair task that sleeps on `cpu` at 60 ms, with a hog busy on `hog_cpu` since time 0 (when
// they share the CPU, the task ran behind the hog).
int asleep_beside_a_hog(SchedHarness& h, int cpu, int hog_cpu) {
  h.occupy(hog_cpu, fair_params("hog"), 200 * kMillisecond);
  h.run_until(40 * kMillisecond);
  const int tid = h.spawn(fair_params("server", 0, only(cpu)), 10 * kMicrosecond, cpu);
  h.run_until(60 * kMillisecond);
  EXPECT_EQ(h.sched().task(tid).state, TaskState::kSleeping);
  EXPECT_EQ(h.sched().task(tid).cpu, cpu);
  return tid;
}

std::size_t owner_dones(SchedHarness& h, int tid) { return h.owner().dones_of(tid).size(); }

// From the hog's CPU to a quiet one (`from_busy`), or the other way round; `owed` is the
// task's vruntime after its first CPU's minimum as it is made RT.
VruntimeAcrossRt carry_vruntime_across_rt(bool normalise, bool from_busy,
                                          std::int64_t owed = kMillisecond) {
  SchedTunables tunables;
  tunables.normalise_vruntime_across_rt = normalise;
  SchedHarness h(tunables);
  Scheduler& sched = h.sched();
  constexpr int kBusy = 4;
  constexpr int kQuiet = 5;
  const int first = from_busy ? kBusy : kQuiet;
  const int second = from_busy ? kQuiet : kBusy;
  const int tid = asleep_beside_a_hog(h, first, kBusy);
  sched.task_for_update(tid).params.affinity = only(second);
  VruntimeAcrossRt out{};
  out.owed = owed;
  out.first_min = sched.rq(first).min_vruntime;
  sched.task_for_update(tid).vruntime = out.first_min + out.owed;
  sched.set_attributes(tid, Policy::kFifo, 0, 50);  // binder's inheritance, before the wakeup
  h.owner().on_done(tid, [&](int id) {
    out.second_min = sched.rq(second).min_vruntime;
    sched.set_attributes(id, Policy::kNormal, 0, 0);  // restored after the reply
    out.returned = sched.task(id).vruntime;
    sched.block(id);
  });
  h.wake(tid, from_cpu(first));
  h.run_until(70 * kMillisecond);
  EXPECT_EQ(sched.task(tid).cpu, second);
  EXPECT_EQ(owner_dones(h, tid), 2U);
  return out;
}

TEST(VruntimeAcrossRtTest, NormalisedKeepsTheLagAgainstTheNewQueue) {
  // The kernel: relative to the first queue's minimum as it leaves the fair class, plus the
  // second queue's minimum as it comes back: it still owes 1 ms, now against the second CPU.
  const VruntimeAcrossRt r = carry_vruntime_across_rt(true, /*from_busy=*/true);
  ASSERT_GT(r.first_min, r.second_min + 40 * kMillisecond);
  EXPECT_EQ(r.returned, r.second_min + r.owed);
}

TEST(VruntimeAcrossRtTest, ClampedKeepsTheFirstQueuesScaleUpToALatencyPeriod) {
  // The calibrated model: the value from the first queue, held within a latency period above
  // the second queue's minimum. Owing 1 ms on the busy CPU, ~80 ms ahead of everything on the
  // second one, it comes back a latency period ahead.
  const SchedTunables defaults;
  const VruntimeAcrossRt far = carry_vruntime_across_rt(false, /*from_busy=*/true);
  ASSERT_GT(far.first_min, far.second_min + 40 * kMillisecond);
  EXPECT_EQ(far.returned, far.second_min + defaults.sched_latency_ns);
  // 70 ms below the busy queue's minimum, so within the period above the second's: kept.
  const VruntimeAcrossRt near =
      carry_vruntime_across_rt(false, /*from_busy=*/true, -70 * kMillisecond);
  ASSERT_LT(near.first_min + near.owed, near.second_min + defaults.sched_latency_ns);
  ASSERT_GT(near.first_min + near.owed, near.second_min);
  EXPECT_EQ(near.returned, near.first_min + near.owed);
}

TEST(VruntimeAcrossRtTest, ClampedRaisesAVruntimeBelowTheNewQueuesMinimum) {
  // From the quiet CPU to the busy one: clamped, it comes back at the busy queue's minimum
  // (its 1 ms owed is lost); normalised, it still owes 1 ms against it.
  for (const bool normalise : {false, true}) {
    SCOPED_TRACE(normalise ? "normalised" : "clamped");
    const VruntimeAcrossRt r = carry_vruntime_across_rt(normalise, /*from_busy=*/false);
    ASSERT_GT(r.second_min, r.first_min + 40 * kMillisecond);
    EXPECT_EQ(r.returned, normalise ? r.second_min + r.owed : r.second_min);
  }
}

TEST(VruntimeAcrossRtTest, NormalisedGivesASleeperAtMostHalfALatencyOfCredit) {
  // place_entity() as it leaves the fair class asleep: a vruntime far below its queue's
  // minimum is raised to half a latency period below it first.
  SchedTunables tunables;
  tunables.normalise_vruntime_across_rt = true;
  SchedHarness h(tunables);
  Scheduler& sched = h.sched();
  const int tid = asleep_beside_a_hog(h, 4, 4);
  const std::int64_t min_vruntime = sched.rq(4).min_vruntime;
  sched.task_for_update(tid).vruntime = min_vruntime - 40 * kMillisecond;
  sched.set_attributes(tid, Policy::kFifo, 0, 50);
  EXPECT_EQ(sched.task(tid).vruntime, -tunables.sched_latency_ns / 2);
  sched.set_attributes(tid, Policy::kNormal, 0, 0);  // back, asleep on the same CPU
  EXPECT_EQ(sched.task(tid).vruntime, min_vruntime - tunables.sched_latency_ns / 2);
}

TEST_F(SchedTest, RtTasksRunBeforeFairTasks) {
  // Every RT task runs before any CFS task, even the lowest RT priority against a nice -20
  // task with the smallest vruntime that was queued earlier.
  const int cpu = 2;
  const int blocker = occupy(cpu, rt_params("blocker", 90), 200 * kMicrosecond);
  run_for(100 * kMicrosecond);
  const int fair = spawn(fair_params("fair", -20, only(cpu)), 10 * kMicrosecond, cpu);
  sched_.task_for_update(fair).vruntime = sched_.rq(cpu).min_vruntime - 20 * kMillisecond;
  const int rt = spawn(rt_params("rt", 1, only(cpu)), 10 * kMicrosecond, cpu);
  run_until(100 * kMillisecond);
  EXPECT_EQ(owner_.resume_order(), (std::vector<int>{blocker, rt, fair}));
}

// --- preemption ----------------------------------------------------------------------------

TEST_F(SchedTest, RtWakeePreemptsRunningFairTask) {
  // An RT wakee preempts the CFS task running on its CPU at once when woken there, and after
  // the reschedule IPI when woken from another CPU.
  const SimTime ipi = topology_.costs().ipi_latency_ns;
  const int fair_local = occupy(4, fair_params("fair-local"), 10 * kMillisecond);
  const int fair_remote = occupy(5, fair_params("fair-remote"), 10 * kMillisecond);
  run_until(1 * kMillisecond);
  const int rt_local = spawn(rt_params("rt-local", 10, only(4)), 10 * kMicrosecond, 4);
  const int rt_remote = spawn(rt_params("rt-remote", 10, only(5)), 10 * kMicrosecond, 0);
  run_until(1 * kMillisecond + ipi / 2);
  EXPECT_EQ(sched_.rq(4).curr, rt_local);
  EXPECT_EQ(sched_.task(fair_local).state, TaskState::kRunnable);
  EXPECT_EQ(sched_.rq(5).curr, fair_remote);  // the IPI is still in flight
  run_until(100 * kMillisecond);
  ASSERT_EQ(owner_.resumes_of(rt_local).size(), 1U);
  EXPECT_EQ(owner_.resumes_of(rt_local)[0].time, 1 * kMillisecond);
  EXPECT_EQ(owner_.resumes_of(rt_local)[0].cpu, 4);
  ASSERT_EQ(owner_.resumes_of(rt_remote).size(), 1U);
  EXPECT_EQ(owner_.resumes_of(rt_remote)[0].time, 1 * kMillisecond + ipi);
  EXPECT_EQ(owner_.resumes_of(rt_remote)[0].cpu, 5);
  // The fair tasks finish only after the RT tasks that preempted them.
  ASSERT_EQ(owner_.dones_of(fair_local).size(), 1U);
  EXPECT_GT(owner_.dones_of(fair_local)[0].time, owner_.dones_of(rt_local)[0].time);
}

TEST_F(SchedTest, EqualPriorityRtWakeeDoesNotPreemptRtTask) {
  // SCHED_FIFO: a waking RT task preempts only a strictly lower priority. An equal priority
  // waits until the running task stops, with no time slice, while a higher one preempts.
  const int cpu = 5;
  const int running = occupy(cpu, rt_params("running", 50), 30 * kMillisecond);
  run_until(1 * kMillisecond);
  const int equal = spawn(rt_params("equal", 50, only(cpu)), 10 * kMicrosecond, cpu);
  run_until(2 * kMillisecond);
  const int higher = spawn(rt_params("higher", 51, only(cpu)), 10 * kMicrosecond, cpu);
  run_until(200 * kMillisecond);
  ASSERT_EQ(owner_.resumes_of(higher).size(), 1U);
  EXPECT_EQ(owner_.resumes_of(higher)[0].time, 2 * kMillisecond);
  ASSERT_EQ(owner_.dones_of(running).size(), 1U);
  ASSERT_EQ(owner_.resumes_of(equal).size(), 1U);
  EXPECT_GE(owner_.resumes_of(equal)[0].time, owner_.dones_of(running)[0].time);
  EXPECT_EQ(owner_.resume_order(), (std::vector<int>{running, higher, equal}));
}

struct FairWakeupCase {
  const char* name;
  int wakee_nice;
  SimTime lead;  // how much smaller the wakee's vruntime is than the running task's
  bool preempts;
};

void PrintTo(const FairWakeupCase& c, std::ostream* os) { *os << c.name; }

class FairWakeupPreemptionTest : public ::testing::TestWithParam<FairWakeupCase>,
                                 public SchedHarness {};

TEST_P(FairWakeupPreemptionTest, PreemptsOnlyBeyondWeightScaledGranularity) {
  // A CFS wakee preempts the running CFS task only when its vruntime is smaller by more than
  // the wakeup granularity scaled by the wakee's weight (4 ms x 1024 / weight), else it
  // waits for the tick.
  const FairWakeupCase& c = GetParam();
  const int cpu = 6;
  const int wakee = sleeper(cpu, fair_params("wakee", c.wakee_nice), only(cpu));
  const int curr = occupy(cpu, fair_params("curr"), 1000 * kMillisecond);
  run_until(5 * kMillisecond);
  ASSERT_EQ(sched_.rq(cpu).curr, curr);
  sched_.add_overhead(curr, 0);  // brings curr's vruntime up to now (update_curr)
  sched_.task_for_update(wakee).vruntime = sched_.task(curr).vruntime - c.lead;
  ASSERT_EQ(owner_.resumes_of(wakee).size(), 1U);  // its first run, before it slept
  wake(wakee, from_cpu(cpu), 10 * kMicrosecond);
  run_until(7 * kMillisecond);
  if (c.preempts) {
    ASSERT_EQ(owner_.resumes_of(wakee).size(), 2U);
    EXPECT_EQ(owner_.resumes_of(wakee)[1].time, 5 * kMillisecond);
  } else {
    EXPECT_EQ(owner_.resumes_of(wakee).size(), 1U);
    EXPECT_EQ(sched_.rq(cpu).curr, curr);
    EXPECT_EQ(sched_.task(wakee).state, TaskState::kRunnable);
  }
}

// Granularity: nice 0 -> 4 ms; nice -5 (weight 3121) -> 1.31 ms; nice 5 (weight 335) -> 12.2 ms.
INSTANTIATE_TEST_SUITE_P(
    Cases, FairWakeupPreemptionTest,
    ::testing::Values(FairWakeupCase{"Nice0Lead3ms", 0, 3 * kMillisecond, false},
                      FairWakeupCase{"Nice0LeadExactlyGranularity", 0, 4 * kMillisecond, false},
                      FairWakeupCase{"Nice0LeadJustAboveGranularity", 0, 4 * kMillisecond + 1,
                                     true},
                      FairWakeupCase{"Nice0Lead6ms", 0, 6 * kMillisecond, true},
                      FairWakeupCase{"NiceMinus5Lead1ms", -5, 1 * kMillisecond, false},
                      FairWakeupCase{"NiceMinus5Lead3ms", -5, 3 * kMillisecond, true},
                      FairWakeupCase{"Nice5Lead6ms", 5, 6 * kMillisecond, false},
                      FairWakeupCase{"Nice5Lead11ms", 5, 11 * kMillisecond, false}),
    [](const ::testing::TestParamInfo<FairWakeupCase>& param_info) {
      return param_info.param.name;
    });

TEST_F(SchedTest, FairTasksSharingACpuSwitchOnTickBoundaries) {
  // Two equal CFS tasks on one CPU alternate. The tick ends a turn once it has run longer than
  // its ideal slice (sched_latency / 2 here), so every switch falls on a tick boundary; as the
  // slice is a whole number of ticks, a turn started on a tick lasts the slice plus one tick.
  const int cpu = 3;
  const int a = occupy(cpu, fair_params("a"), 1000 * kMillisecond);
  const int b = occupy(cpu, fair_params("b"), 1000 * kMillisecond);
  const SimTime step = 500 * kMicrosecond;
  const auto samples = sample_curr(cpu, 250 * kMicrosecond, 200 * kMillisecond, step);
  run_until(200 * kMillisecond);
  const SimTime tick = sched_.tunables().tick_ns;
  const SimTime slice = sched_.tunables().sched_latency_ns / 2;
  std::vector<SimTime> switches;  // sample time at which a new task was first seen
  for (std::size_t i = 1; i < samples->size(); ++i) {
    const auto& prev = (*samples)[i - 1];
    const auto& cur = (*samples)[i];
    EXPECT_TRUE(cur.curr == a || cur.curr == b) << "at " << cur.time;
    if (cur.curr == prev.curr) continue;
    EXPECT_GT(cur.time / tick, prev.time / tick)
        << "switch between " << prev.time << " and " << cur.time << " is not on a tick";
    switches.push_back(cur.time);
  }
  ASSERT_GE(switches.size(), 8U);
  for (std::size_t i = 1; i < switches.size(); ++i) {
    const SimTime turn = switches[i] - switches[i - 1];
    EXPECT_NEAR(static_cast<double>(turn), static_cast<double>(slice + tick),
                static_cast<double>(step))
        << "turn ending at " << switches[i];
  }
}

TEST_F(SchedTest, TickKeepsCheckingWhileTheRunningTaskStaysLeftmost) {
  // The tick re-checks the running CFS task at every tick while others are queued. When its
  // slice has expired but it still has the smallest vruntime it keeps the CPU, and the queued
  // task runs at the first tick after its vruntime becomes the smallest. A nice 19 task
  // sharing a CPU with a nice 0 task therefore gets a short turn every ~275 ms.
  const int cpu = 4;
  const int heavy = occupy(cpu, fair_params("nice0", 0), 10'000 * kMillisecond);
  const int light = occupy(cpu, fair_params("nice19", 19), 10'000 * kMillisecond);
  const auto samples = sample_curr(cpu, 1 * kMillisecond, 1000 * kMillisecond, kMillisecond);
  run_until(1000 * kMillisecond);
  int light_turns = 0;
  int light_samples = 0;
  for (std::size_t i = 0; i < samples->size(); ++i) {
    const int curr = (*samples)[i].curr;
    ASSERT_TRUE(curr == heavy || curr == light);
    if (curr != light) continue;
    ++light_samples;
    if (i == 0 || (*samples)[i - 1].curr != light) ++light_turns;
  }
  EXPECT_GE(light_turns, 3);
  EXPECT_LT(light_samples, 50);  // its weight is 15 against 1024
}

TEST_F(SchedTest, AnExpiredSliceWithPreemptionDisabledSwitchesAtTheEnable) {
  // Two nice-0 tasks share a CPU: 12 ms slices. The first disables preemption (a spinlock) at
  // 1 ms: the tick that finds its slice over only marks the reschedule, and it keeps the CPU
  // until preempt_enable() at 30 ms, when the other task runs at once.
  const int cpu = 4;
  const int holder = occupy(cpu, fair_params("holder"));
  run_until(kMillisecond / 2);
  const int other = occupy(cpu, fair_params("other"));
  run_until(kMillisecond);
  ASSERT_EQ(sched_.rq(cpu).curr, holder);
  sched_.preempt_disable(holder);
  const auto samples = sample_curr(cpu, 2 * kMillisecond, 29 * kMillisecond, kMillisecond);
  run_until(30 * kMillisecond);
  for (const auto& sample : *samples) {
    EXPECT_EQ(sample.curr, holder) << "at " << sample.time;
  }
  EXPECT_TRUE(sched_.rq(cpu).need_resched);
  sched_.preempt_enable(holder);
  run_for(1);
  EXPECT_EQ(sched_.rq(cpu).curr, other);
  EXPECT_FALSE(sched_.rq(cpu).need_resched);
}

TEST_F(SchedTest, ANewTasksStartDebitCountsTheRunningTask) {
  // START_DEBIT: a new task starts one virtual slice behind the queue's minimum. Beside one
  // running nice-0 task the slice is half the 24 ms period (sched_slice() counts the running
  // task); it was the whole period, as if the queue were empty.
  const int cpu = 4;
  occupy(cpu, fair_params("running"));
  run_until(50 * kMillisecond);
  const int added = occupy(cpu, fair_params("new"));
  EXPECT_EQ(sched_.task(added).vruntime - sched_.rq(cpu).min_vruntime,
            sched_.tunables().sched_latency_ns / 2);
}

TEST_F(SchedTest, ANiceFiveNewTasksStartDebitIsItsVirtualSliceOfTheStretchedPeriod) {
  // place_entity(initial) with START_DEBIT adds sched_vslice(): the task's share of the period
  // by weight, turned into virtual time (x 1024 / its weight). Past sched_nr_latency (24 ms /
  // 3 ms = 8 tasks) the period stretches to 3 ms per task (__sched_period()). A nice-5 task
  // (weight 335) joining eight nice-0 tasks on CPU 4 (one running, seven waiting): the period
  // is 9 x 3 ms = 27 ms, its slice 27 ms x 335 / 8527, about 1.06 ms, and its debit that slice
  // x 1024 / 335, about 3.24 ms of virtual time.
  const int cpu = 4;
  occupy(cpu, fair_params("running"));
  run_until(50 * kMillisecond);
  for (int i = 0; i < 7; ++i) occupy(cpu, fair_params("waiting" + std::to_string(i)));
  const int added = occupy(cpu, fair_params("new", 5));
  ASSERT_EQ(sched_.nr_running(cpu), 9);
  const SchedTunables& tunables = sched_.tunables();
  const std::int64_t weight = nice_to_weight(5);
  const SimTime period = 9 * tunables.min_granularity_ns;
  ASSERT_GT(period, tunables.sched_latency_ns);
  const SimTime slice = period * weight / (8 * nice_to_weight(0) + weight);
  EXPECT_EQ(sched_.task(added).vruntime - sched_.rq(cpu).min_vruntime, slice * 1024 / weight);
}

TEST_F(SchedTest, ASliceEndsSoonerWhenTasksJoinTheQueue) {
  // Two tasks share a CPU with 12 ms slices; six more join at 2 ms, so the slice is 3 ms and
  // the running task loses the CPU at the first tick its vruntime is no longer the least
  // (8 ms: the newcomers start a slice behind). The check armed for the 12 ms slice used to
  // stay, and the running task kept the CPU until 16 ms.
  const int cpu = 4;
  occupy(cpu, fair_params("a"));
  occupy(cpu, fair_params("b"));
  run_until(2 * kMillisecond);
  const int first = sched_.rq(cpu).curr;
  ASSERT_GE(first, 0);
  for (int i = 0; i < 6; ++i) occupy(cpu, fair_params("joiner" + std::to_string(i)));
  const auto samples = sample_curr(cpu, 2 * kMillisecond, 20 * kMillisecond, kMillisecond / 2);
  run_until(20 * kMillisecond);
  SimTime left_at = -1;
  for (const auto& sample : *samples) {
    if (sample.curr != first) {
      left_at = sample.time;
      break;
    }
  }
  EXPECT_GT(left_at, 0);
  EXPECT_LE(left_at, 8 * kMillisecond + kMillisecond / 2);
}

// When the running nice-0 task loses the CPU (-1: not by 40 ms): another nice-0 task joins its
// CPU at 0.5 ms, is made nice 19 at 1 ms (the running task's ideal slice grows from 12 ms to
// almost the whole 24 ms period, after its first slice check was armed for 12 ms) and is given
// a vruntime `lag` behind the running task's.
SimTime left_cpu_with_waiter_behind_by(SchedHarness& h, Scheduler& sched, SimTime lag) {
  const int cpu = 4;
  const int running = h.occupy(cpu, fair_params("running"));
  h.run_until(kMillisecond / 2);
  const int waiter = h.occupy(cpu, fair_params("waiter"));
  h.run_until(kMillisecond);
  EXPECT_EQ(sched.rq(cpu).curr, running);
  sched.set_attributes(waiter, Policy::kNormal, 19, 0);
  sched.add_overhead(running, 0);  // brings the running task's vruntime up to now
  sched.task_for_update(waiter).vruntime = sched.task(running).vruntime - lag;
  const auto samples = h.sample_curr(cpu, kMillisecond, 40 * kMillisecond, kMillisecond / 2);
  h.run_until(40 * kMillisecond);
  for (const auto& sample : *samples) {
    if (sample.curr != running) return sample.time;
  }
  return -1;
}

TEST_F(SchedTest, TickPreemptsARunningTaskWhoseVruntimeLeadsTheWaitingOneByMoreThanItsSlice) {
  // check_preempt_tick(): once the running task has run longer than the minimum granularity,
  // it is also preempted when its vruntime exceeds the leftmost waiting task's by more than
  // its ideal slice, before that slice is over. Behind by 30 ms, the waiter takes the CPU at
  // the slice check armed for the 12 ms slice; behind by 1 ms (the lead, growing with the
  // running task's vruntime, stays under the grown slice), the running task keeps the CPU until
  // its grown slice is over.
  const SchedTunables& tunables = sched_.tunables();
  const SimTime grown_slice =
      tunables.sched_latency_ns * nice_to_weight(0) / (nice_to_weight(0) + nice_to_weight(19));
  const SimTime far_behind = left_cpu_with_waiter_behind_by(*this, sched_, 30 * kMillisecond);
  EXPECT_GT(far_behind, 0);
  EXPECT_LE(far_behind, tunables.sched_latency_ns / 2 + tunables.tick_ns + kMillisecond / 2);
  SchedHarness other;
  const SimTime near = left_cpu_with_waiter_behind_by(other, other.sched(), kMillisecond);
  EXPECT_GT(near, grown_slice);
}

// Two nice-0 tasks on gold CPU 4 under `tunables`: one runs from boot, the other joins the queue
// at 0.5 ms. Returns the harness at 1 ms, with the tids of the running and the waiting task.
struct TwoOnOneCpu {
  std::unique_ptr<SchedHarness> h;
  int running = -1;
  int waiter = -1;
};
TwoOnOneCpu two_on_one_cpu(const SchedTunables& tunables) {
  TwoOnOneCpu out{std::make_unique<SchedHarness>(tunables)};
  out.running = out.h->occupy(kGold0, fair_params("running"));
  out.h->run_until(kMillisecond / 2);
  out.waiter = out.h->occupy(kGold0, fair_params("waiter"));
  out.h->run_until(kMillisecond);
  EXPECT_EQ(out.h->sched().rq(kGold0).curr, out.running);
  return out;
}

TEST(SliceCheckTest, FromExactlyTheMinimumGranularityTheLeadOverTheLeftmostIsCompared) {
  // check_preempt_tick() returns early only while delta_exec < sysctl_sched_min_granularity:
  // from exactly the minimum granularity on, the running task's vruntime lead over the leftmost
  // waiting task is compared with its ideal slice. Two nice-0 tasks get half of sched_latency
  // each; with the minimum granularity set to that slice and a tick every microsecond, the
  // slice check falls exactly at the slice's end when the slice ends on a microsecond (the
  // latency is chosen for that, from where the running task's slice starts). There the task
  // has run exactly the minimum granularity and not exceeded its slice: the waiter, put 30 ms
  // of vruntime behind, takes the CPU at that check, not at the next tick.
  SchedTunables tunables;
  tunables.tick_ns = kMicrosecond;
  const SimTime start = two_on_one_cpu(tunables).h->sched().task(0).slice_start;
  const SimTime slice = 3 * kMillisecond + (kMicrosecond - start % kMicrosecond);
  tunables.sched_latency_ns = 2 * slice;
  tunables.min_granularity_ns = slice;
  const TwoOnOneCpu two = two_on_one_cpu(tunables);
  Scheduler& sched = two.h->sched();
  ASSERT_EQ(sched.task(two.running).slice_start, start);
  ASSERT_EQ((start + slice) % kMicrosecond, 0);
  sched.add_overhead(two.running, 0);  // brings the running task's vruntime up to now
  sched.task_for_update(two.waiter).vruntime = sched.task(two.running).vruntime - 30 * kMillisecond;
  two.h->run_until(10 * kMillisecond);
  const auto resumes = two.h->owner().resumes_of(two.waiter);
  ASSERT_FALSE(resumes.empty());
  EXPECT_EQ(resumes.front().time, start + slice);
}

TEST(SliceCheckTest, BeforeTheMinimumGranularityTheLeadOverTheLeftmostDoesNotPreempt) {
  // check_preempt_tick() returns early while delta_exec < sysctl_sched_min_granularity (3 ms):
  // only from then on is the running task's vruntime lead over the leftmost waiting task
  // compared with its ideal slice. Two nice-0 tasks on gold CPU 4, the running one on the CPU
  // since about 0 ms; at 1 ms the waiter is boosted to nice -20 and back to nice 0 (as a
  // priority inheritance that ends at once), which shrinks the running task's slice to 0.27 ms
  // for a moment and so brings the slice check to 1 ms; from there the check runs every tick
  // (1 us). The waiter is put 30 ms of vruntime behind: its lead exceeds the 12 ms slice at
  // every check, yet the running task keeps the CPU until it has run 3 ms, and the waiter takes
  // it at the first check from there (within 1 us), not at 1 ms.
  SchedTunables tunables;
  tunables.tick_ns = kMicrosecond;
  const TwoOnOneCpu two = two_on_one_cpu(tunables);
  Scheduler& sched = two.h->sched();
  const SimTime start = sched.task(two.running).slice_start;
  ASSERT_LT(start, kMillisecond / 2);
  sched.set_attributes(two.waiter, Policy::kNormal, -20, 0);
  sched.set_attributes(two.waiter, Policy::kNormal, 0, 0);
  sched.add_overhead(two.running, 0);  // brings the running task's vruntime up to now
  sched.task_for_update(two.waiter).vruntime = sched.task(two.running).vruntime - 30 * kMillisecond;
  two.h->run_until(20 * kMillisecond);
  const auto resumes = two.h->owner().resumes_of(two.waiter);
  ASSERT_FALSE(resumes.empty());
  EXPECT_GE(resumes.front().time, start + tunables.min_granularity_ns);
  EXPECT_LT(resumes.front().time, start + tunables.min_granularity_ns + kMicrosecond);
}

TEST_F(SchedTest, ATaskWokenOnAnotherCpuKeepsItsVruntimeLagRelativeToTheQueue) {
  // set_task_cpu() -> migrate_task_rq_fair(): a fair task that moves to another run queue
  // leaves with its vruntime relative to the old queue's min_vruntime and arrives with it
  // relative to the new one's, so the credit or debit it had there is kept. A sleeper on silver
  // CPU 0 (idle since, min_vruntime about 24 ms: the start debit of one 24 ms latency) is given
  // 5 ms of credit and woken at 50 ms on gold CPU 4, where a hog has run since boot
  // (min_vruntime about 72 ms): it is placed exactly 5 ms behind CPU 4's minimum, not clamped
  // by place_entity() to half a latency (12 ms) behind it.
  const int hog = occupy(kGold0, fair_params("hog"));
  const int moved = sleeper(kSilver0, fair_params("sleeper"), only(kGold0));
  run_until(50 * kMillisecond);
  ASSERT_EQ(sched_.rq(kGold0).curr, hog);
  const std::int64_t source_min = sched_.rq(kSilver0).min_vruntime;
  ASSERT_LT(source_min + 20 * kMillisecond, sched_.rq(kGold0).min_vruntime);
  sched_.task_for_update(moved).vruntime = source_min - 5 * kMillisecond;
  wake(moved, from_cpu(kGold0));
  ASSERT_EQ(sched_.task(moved).cpu, kGold0);
  EXPECT_EQ(sched_.task(moved).vruntime - sched_.rq(kGold0).min_vruntime, -5 * kMillisecond);
}

// A sleeper that ran on gold CPU 4 and a task running there from boot, at 200 ms, when the
// sleeper is woken there with 10 s of work.
struct SleeperWokenBehindRunner {
  int sleeping = -1;
  int runner = -1;
  SimTime woken_at = 200 * kMillisecond;
};
SleeperWokenBehindRunner wake_sleeper_behind_runner(SchedHarness& h) {
  SleeperWokenBehindRunner t;
  t.sleeping = h.sleeper(kGold0, fair_params("sleeper"), only(kGold0));
  t.runner = h.occupy(kGold0, fair_params("runner"), 10'000 * kMillisecond);
  h.run_until(t.woken_at);
  EXPECT_EQ(h.sched().rq(kGold0).curr, t.runner);
  h.wake(t.sleeping, from_cpu(kGold0), 10'000 * kMillisecond);
  return t;
}

TEST_F(SchedTest, WakingSleeperGetsAtMostHalfALatencyOfCredit) {
  // place_entity(): a task waking after a long sleep is placed at most sched_latency / 2
  // behind the CPU's current min_vruntime (which follows the running task), so the running
  // task gets the CPU back after about that much time plus tick rounding.
  const int cpu = kGold0;
  const auto [sleeping, runner, woken_at] = wake_sleeper_behind_runner(*this);
  const auto samples =
      sample_curr(cpu, woken_at + kMillisecond, woken_at + 100 * kMillisecond, kMillisecond);
  run_until(woken_at + 100 * kMillisecond);
  ASSERT_FALSE(samples->empty());
  EXPECT_EQ(samples->front().curr, sleeping);  // its credit exceeds the wakeup granularity
  SimTime runner_back = engine::kNever;
  for (const auto& sample : *samples) {
    if (sample.curr == runner) {
      runner_back = sample.time;
      break;
    }
  }
  const SchedTunables& tunables = sched_.tunables();
  EXPECT_LE(runner_back, woken_at + tunables.sched_latency_ns / 2 + 2 * tunables.tick_ns);
}

TEST_F(SchedTest, AQueuesMinVruntimeDoesNotGoBackWhenASleeperWakesWithCredit) {
  // update_min_vruntime(): the queue's minimum follows the least vruntime of the running and
  // the queued fair tasks but never decreases. A sleeper woken on CPU 4 is placed 12 ms
  // (sched_latency / 2) behind the running task's vruntime and preempts it; the minimum stays
  // at the preempted task's vruntime, also 8 ms later while the sleeper (still 4 ms behind)
  // runs, instead of following the sleeper back.
  const int cpu = kGold0;
  const auto [sleeping, runner, woken_at] = wake_sleeper_behind_runner(*this);
  const std::int64_t runner_vruntime = sched_.task(runner).vruntime;
  EXPECT_EQ(sched_.task(sleeping).vruntime,
            runner_vruntime - sched_.tunables().sched_latency_ns / 2);
  EXPECT_EQ(sched_.rq(cpu).min_vruntime, runner_vruntime);
  run_until(woken_at + 8 * kMillisecond);
  ASSERT_EQ(sched_.rq(cpu).curr, sleeping);
  sched_.add_overhead(sleeping, 0);  // brings the sleeper's vruntime up to now
  EXPECT_LT(sched_.task(sleeping).vruntime, runner_vruntime);
  EXPECT_EQ(sched_.task(runner).vruntime, runner_vruntime);
  EXPECT_EQ(sched_.rq(cpu).min_vruntime, runner_vruntime);
}

// --- execution, switch, IPI and idle-exit costs ---------------------------------------------

TEST_F(SchedTest, WorkScalesWithCpuCapacity) {
  // Work is given in reference nanoseconds of a capacity-1024 CPU: a segment takes
  // work x 1024 / capacity on the CPU that runs it, after the equally scaled context switch.
  const int silver_capacity = topology_.capacity(kSilver0);
  ASSERT_EQ(topology_.capacity(kPrime), 1024);
  ASSERT_NEAR(silver_capacity, 307, 1);
  const SimTime work = 10'000;
  const SimTime switch_ref = topology_.costs().context_switch_ref_ns;
  const int prime = spawn(fair_params("prime", 0, only(kPrime)), work);
  const int silver = spawn(fair_params("silver", 0, only(kSilver0)), work);
  run_until(10 * kMillisecond);
  ASSERT_EQ(owner_.resumes_of(prime).size(), 1U);
  ASSERT_EQ(owner_.resumes_of(silver).size(), 1U);
  EXPECT_EQ(owner_.resumes_of(prime)[0].cpu, kPrime);
  EXPECT_EQ(owner_.resumes_of(silver)[0].cpu, kSilver0);
  const SimTime on_prime = owner_.dones_of(prime)[0].time - owner_.resumes_of(prime)[0].time;
  const SimTime on_silver = owner_.dones_of(silver)[0].time - owner_.resumes_of(silver)[0].time;
  EXPECT_EQ(on_prime, work + switch_ref);
  EXPECT_NEAR(static_cast<double>(on_silver),
              static_cast<double>(work + switch_ref) * 1024.0 / silver_capacity, 2.0);
  EXPECT_NEAR(static_cast<double>(on_silver) / static_cast<double>(on_prime),
              1024.0 / silver_capacity, 1e-3);
}

TEST_F(SchedTest, ContextSwitchCostsScaledReferenceTime) {
  // Each switch-in costs context_switch_ref_ns of reference work on the CPU; a task that goes
  // on with a new segment without being switched out pays no switch.
  const SimTime work = 10'000;
  const SimTime switch_ref = topology_.costs().context_switch_ref_ns;
  std::vector<std::pair<int, int>> tasks;  // tid, cpu
  for (int cpu : {kSilver0, kGold0, kPrime}) {
    const int tid = sched_.create_task(fair_params("task", 0, only(cpu)));
    owner_.repeat(tid, 1, work);
    sched_.run(tid, work);
    sched_.wake_new(tid, cpu);
    tasks.emplace_back(tid, cpu);
  }
  run_until(10 * kMillisecond);
  for (const auto& [tid, cpu] : tasks) {
    const double capacity = topology_.capacity(cpu);
    ASSERT_EQ(owner_.resumes_of(tid).size(), 1U);
    ASSERT_EQ(owner_.dones_of(tid).size(), 2U);
    const SimTime first = owner_.dones_of(tid)[0].time - owner_.resumes_of(tid)[0].time;
    const SimTime second = owner_.dones_of(tid)[1].time - owner_.dones_of(tid)[0].time;
    EXPECT_NEAR(static_cast<double>(second), static_cast<double>(work) * 1024.0 / capacity, 1.0)
        << "cpu " << cpu;
    EXPECT_NEAR(static_cast<double>(first - second),
                static_cast<double>(switch_ref) * 1024.0 / capacity, 1.0)
        << "cpu " << cpu;
  }
}

TEST_F(SchedTest, RemoteWakeupOfIdleCpuPaysIpiAndIdleExit) {
  // Waking a task onto an idle CPU from another CPU costs the reschedule IPI plus the exit
  // latency of the CPU's idle state; a wakeup raised on that CPU itself (a timer) costs only
  // the exit latency.
  const SimTime ipi = topology_.costs().ipi_latency_ns;
  const SimTime woken_at = 1 * kMillisecond;
  run_until(woken_at);
  ASSERT_TRUE(sched_.available_idle_cpu(5));
  ASSERT_TRUE(sched_.available_idle_cpu(6));
  auto exit_latency = [this](int cpu) {
    const auto state = static_cast<std::size_t>(sched_.rq(cpu).idle_state);
    return topology_.cpu(cpu).idle_states.at(state).exit_latency_ns;
  };
  const SimTime exit5 = exit_latency(5);
  const SimTime exit6 = exit_latency(6);
  const int remote = spawn(fair_params("remote", 0, only(5)), 10 * kMicrosecond, /*cpu*/ 0);
  const int local = spawn(fair_params("local", 0, only(6)), 10 * kMicrosecond, /*boot*/ -1);
  run_until(10 * kMillisecond);
  ASSERT_EQ(owner_.resumes_of(remote).size(), 1U);
  ASSERT_EQ(owner_.resumes_of(local).size(), 1U);
  const SimTime remote_start = owner_.resumes_of(remote)[0].time;
  const SimTime local_start = owner_.resumes_of(local)[0].time;
  EXPECT_GE(remote_start, woken_at + ipi + exit5);
  EXPECT_LE(remote_start, woken_at + ipi + exit5 + kMicrosecond);
  EXPECT_GE(local_start, woken_at + exit6);
  EXPECT_LT(local_start, woken_at + ipi);
}

// CPU 2 (silver: core power-down enters in 355 us, exits in 909 us) goes idle with no timer
// armed, so the menu governor powers it down; `after` its idle entry, CPU 0 wakes a task pinned
// there. Returns the delay from that wakeup to the task running.
SimTime wakeup_delay_after_idle_entry(bool after_entry, SimTime after) {
  struct Probe : SchedHarness {
    explicit Probe(SchedTunables tunables) : SchedHarness(tunables, "mainline", IdleStates::kAll) {}
    SimTime delay(SimTime after) {
      const int tid = sleeper(2);
      EXPECT_EQ(sched_.rq(2).curr, -1);
      EXPECT_EQ(sched_.rq(2).idle_state, 1);  // core-pc
      run_until(sched_.rq(2).idle_since + after);
      const SimTime woken = now();
      wake(tid, from_cpu(0));
      run_for(5 * kMillisecond);
      return owner_.resumes_of(tid).back().time - woken;
    }
  };
  SchedTunables tunables;
  tunables.idle_wakeup_after_entry = after_entry;
  return Probe(tunables).delay(after);
}

TEST(SchedIdleWakeupTest, AWakeupDuringTheEntryWaitsForItWhenToldSo) {
  // kernel.idle_wakeup: by default (the calibrated model) a wakeup pays the IPI and the exit
  // latency whenever it comes; with after_entry one that arrives 200 us into the 355 us entry
  // waits the other 155 us first (the IPI's 3 us inside them). After the entry both pay the
  // exit latency alone.
  constexpr SimTime kIpi = 3 * kMicrosecond;
  constexpr SimTime kEntry = 355 * kMicrosecond;
  constexpr SimTime kExit = 909 * kMicrosecond;
  EXPECT_EQ(wakeup_delay_after_idle_entry(false, 200 * kMicrosecond), kIpi + kExit);
  EXPECT_EQ(wakeup_delay_after_idle_entry(true, 200 * kMicrosecond),
            kEntry - 200 * kMicrosecond + kExit);
  EXPECT_EQ(wakeup_delay_after_idle_entry(false, kMillisecond), kIpi + kExit);
  EXPECT_EQ(wakeup_delay_after_idle_entry(true, kMillisecond), kIpi + kExit);
}

TEST_F(SchedIdleTest, IdleGovernorSeesTheNextTimerOfTheCpu) {
  // A task sleeping with a timer (nanosleep) arms it on its CPU. When that CPU goes idle, the
  // menu governor expects to stay idle until the timer (nothing has taught it otherwise) and
  // enters the deepest state whose minimum residency fits: a 10 ms timer powers the core down
  // and the timer's wakeup pays that state's exit latency; 100 us timers keep it in WFI.
  auto periodic = [this](int cpu, SimTime period) {
    auto wakes = std::make_shared<std::vector<SimTime>>();
    const int tid = sched_.create_task(fair_params("periodic", 0, only(cpu)));
    owner_.on_done(tid, [this, wakes, period](int id) {
      sched_.block_until(id, now() + period);
      at(now() + period, [this, wakes, id] {
        wakes->push_back(now());
        wake(id, WakeContext{});  // the timer fires on the task's CPU
      });
    });
    sched_.run(tid, 10 * kMicrosecond);
    wakes->push_back(now());
    sched_.wake_new(tid, -1);
    return std::make_pair(tid, wakes);
  };
  const auto [slow, slow_wakes] = periodic(2, 10 * kMillisecond);
  const auto [fast, fast_wakes] = periodic(3, 100 * kMicrosecond);
  run_until(200 * kMillisecond);
  const auto& states = topology_.cpu(2).idle_states;
  ASSERT_EQ(states.size(), 2U);
  ASSERT_GT(10 * kMillisecond, states[1].min_residency_ns);
  ASSERT_LT(100 * kMicrosecond, states[1].min_residency_ns);
  auto delays = [this](int tid, const std::vector<SimTime>& wakes) {
    std::vector<SimTime> out;
    const auto resumes = owner_.resumes_of(tid);
    for (std::size_t i = 0; i < resumes.size() && i < wakes.size(); ++i) {
      out.push_back(resumes[i].time - wakes[i]);
    }
    return out;
  };
  const std::vector<SimTime> slow_delays = delays(slow, *slow_wakes);
  ASSERT_GE(slow_delays.size(), 10U);
  // The first wakeup is the task's start, from the boot-time idle state (WFI).
  EXPECT_EQ(slow_delays[0], states[0].exit_latency_ns);
  for (std::size_t i = 1; i < slow_delays.size(); ++i) {
    EXPECT_EQ(slow_delays[i], states[1].exit_latency_ns) << "wakeup " << i;
  }
  const std::vector<SimTime> fast_delays = delays(fast, *fast_wakes);
  ASSERT_GE(fast_delays.size(), 100U);
  for (SimTime delay : fast_delays) EXPECT_EQ(delay, states[0].exit_latency_ns);
}

// --- wake_cpu ------------------------------------------------------------------------------

TEST_F(SchedTest, PlacementReceivesWakeCpuAsPrev) {
  // try_to_wake_up() hands the task's wake_cpu to placement as prev_cpu; moving to another CPU
  // sets wake_cpu to it (set_task_cpu).
  const int tid = sleeper(5);
  EXPECT_EQ(sched_.task(tid).wake_cpu, 5);
  wake(tid, WakeContext{});
  ASSERT_FALSE(placement_.calls().empty());
  EXPECT_EQ(placement_.calls().back().tid, tid);
  EXPECT_EQ(placement_.calls().back().prev_cpu, 5);
  run_for(1 * kMillisecond);
  ASSERT_EQ(sched_.task(tid).state, TaskState::kSleeping);
  sched_.task_for_update(tid).wake_cpu = 2;
  wake(tid, WakeContext{});
  EXPECT_EQ(placement_.calls().back().prev_cpu, 2);
  ASSERT_NE(sched_.task(tid).cpu, 5);
  EXPECT_EQ(sched_.task(tid).wake_cpu, sched_.task(tid).cpu);
}

TEST_F(SchedTest, AStayPutWakeupKeepsTheWakeCpuItWasGiven) {
  // set_task_cpu() is the only writer of wake_cpu besides the waker's nudge, and it runs only
  // when the task changes CPU: a wakeup that leaves the task where it slept (here the fallback
  // of its affinity) keeps the nudged wake_cpu for the next wakeup.
  const int waker = occupy(0, fair_params("waker"));
  const int tid = sleeper(5, fair_params("pinned"), only(5) | only(6));
  sched_.task_for_update(tid).wake_cpu = 2;
  wake(tid, from_cpu(0, waker));
  run_for(1 * kMillisecond);
  ASSERT_EQ(sched_.task(tid).state, TaskState::kSleeping);
  ASSERT_EQ(sched_.task(tid).cpu, 5);
  EXPECT_EQ(sched_.task(tid).wake_cpu, 2);
  wake(tid, from_cpu(0, waker));
  EXPECT_EQ(placement_.calls().back().prev_cpu, 2);

  // A move to the other allowed CPU does set it.
  run_for(1 * kMillisecond);
  ASSERT_EQ(sched_.task(tid).state, TaskState::kSleeping);
  sched_.task_for_update(tid).wake_cpu = 6;
  wake(tid, from_cpu(0, waker));
  ASSERT_EQ(sched_.task(tid).cpu, 6);
  EXPECT_EQ(sched_.task(tid).wake_cpu, 6);
}

TEST_F(SchedTest, WakeCpuNudgeMovesAnUnconstrainedWakeupToThatIdleCpu) {
  // With a waker on another CPU and nothing else deciding, a wakeup lands on prev (=
  // wake_cpu) when it is idle; changing wake_cpu of the sleeping task (the CTABS nudge) moves
  // it there. A busy nudged CPU is not used.
  const int waker = occupy(0, fair_params("waker"));
  const int tid = sleeper(5);
  ASSERT_EQ(sched_.rq(0).curr, waker);
  const WakeContext ctx = from_cpu(0, waker);

  wake(tid, ctx);
  run_for(1 * kMillisecond);
  ASSERT_EQ(owner_.resumes_of(tid).size(), 2U);
  EXPECT_EQ(owner_.resumes_of(tid).back().cpu, 5);

  sched_.task_for_update(tid).wake_cpu = 2;
  wake(tid, ctx);
  run_for(1 * kMillisecond);
  ASSERT_EQ(owner_.resumes_of(tid).size(), 3U);
  EXPECT_EQ(owner_.resumes_of(tid).back().cpu, 2);

  occupy(3, fair_params("busy"));
  run_for(100 * kMicrosecond);
  sched_.task_for_update(tid).wake_cpu = 3;
  wake(tid, ctx);
  run_for(1 * kMillisecond);
  ASSERT_EQ(owner_.resumes_of(tid).size(), 4U);
  EXPECT_NE(owner_.resumes_of(tid).back().cpu, 3);
}

TEST_F(SchedTest, WakeupNeverLandsOutsideTheTaskAffinity) {
  // try_to_wake_up() only places a task on a CPU its affinity allows: when the placement's
  // answer is not allowed (here an idle wake_cpu outside the mask), select_fallback_rq() takes
  // the first allowed CPU.
  const int waker = occupy(0, fair_params("waker"));
  const int tid = sleeper(5, fair_params("pinned"), only(5) | only(6));
  ASSERT_EQ(sched_.rq(0).curr, waker);
  sched_.task_for_update(tid).wake_cpu = 2;
  wake(tid, from_cpu(0, waker));
  run_for(1 * kMillisecond);
  ASSERT_EQ(owner_.resumes_of(tid).size(), 2U);
  EXPECT_EQ(owner_.resumes_of(tid).back().cpu, 5);

  const int rt = sleeper(6, rt_params("rt-pinned", 50), only(6));
  occupy(6, rt_params("rt60", 60));
  run_for(10 * kMicrosecond);
  sched_.task_for_update(rt).wake_cpu = 3;
  wake(rt, from_cpu(0, waker));
  EXPECT_EQ(sched_.task(rt).cpu, 6);
}

// --- a switch longer than the slice ------------------------------------------------------------

class LongSwitchTest : public ::testing::Test, public SchedHarness {
 protected:
  // A context switch of 30 ms at the reference: longer than any slice.
  LongSwitchTest()
      : SchedHarness({}, "mainline", IdleStates::kWfiOnly, [](nlohmann::json& doc) {
          doc["costs"]["context_switch_ref_ns"] = 30 * kMillisecond;
        }) {}
};

TEST_F(LongSwitchTest, TasksSharingACpuStillFinishTheirWork) {
  // The slice counts from the end of the switch: were it counted from the pick, each task
  // would be preempted as soon as its switch ended, the next one would pay its switch, and
  // neither would ever do any work.
  const int first = occupy(kPrime, fair_params("first"), 5 * kMillisecond);
  const int second = occupy(kPrime, fair_params("second"), 5 * kMillisecond);
  run_for(2000 * kMillisecond);
  EXPECT_EQ(owner_.dones_of(first).size(), 1U);
  EXPECT_EQ(owner_.dones_of(second).size(), 1U);
  EXPECT_GT(sched_.context_switches(), 1U);
}

// Caches and memory 10 us away: a large working set takes far longer than a slice to refill.
void far_caches(nlohmann::json& doc) {
  int latency_ns = 10'000;  // each level further away than the one before
  for (nlohmann::json& cache : doc["shared_caches"]) cache["latency_ns"] = latency_ns++;
  doc["memory"]["latency_ns"] = latency_ns;
}

class LongRefillTest : public ::testing::Test, public SchedHarness {
 protected:
  LongRefillTest() : SchedHarness({}, "mainline", IdleStates::kWfiOnly, far_caches) {}
};

TEST_F(LongRefillTest, TasksSharingACpuStillFinishTheirWork) {
  // The refill each switch-in brings does not count against the slice either: were it counted,
  // two tasks whose working sets evict each other would each be preempted before any work, and
  // the stall carried over would grow at every switch.
  TaskParams first = fair_params("first");
  TaskParams second = fair_params("second");
  first.working_set_bytes = second.working_set_bytes = std::int64_t{1} << 32;
  const int a = occupy(kPrime, first, 5 * kMillisecond);
  const int b = occupy(kPrime, second, 5 * kMillisecond);
  run_for(20'000 * kMillisecond);
  EXPECT_EQ(owner_.dones_of(a).size(), 1U);
  EXPECT_EQ(owner_.dones_of(b).size(), 1U);
}

// The cache stall a 4 GiB task pays on the prime CPU for 5 ms of work, with an RT task of as
// large a working set preempting it at `preempt_at` (never: kNever).
SimTime refill_paid(SimTime preempt_at) {
  SchedHarness h({}, "mainline", IdleStates::kWfiOnly, far_caches);
  TaskParams params = fair_params("task");
  params.working_set_bytes = std::int64_t{1} << 32;
  const int task = h.occupy(kPrime, params, 5 * kMillisecond);
  if (preempt_at != engine::kNever) {
    TaskParams rt = rt_params("rt", 50);
    rt.working_set_bytes = std::int64_t{1} << 32;
    h.at(preempt_at, [&h, rt] { h.occupy(kPrime, rt, 10 * kMicrosecond); });
  }
  h.run_for(10'000 * kMillisecond);
  EXPECT_EQ(h.owner().dones_of(task).size(), 1U);
  return h.sched().task(task).times.cache_stall;
}

TEST(RefillTest, ARefillCutShortIsPaidOnceMoreInFullNotOnTopOfWhatItOwed) {
  // Preempted halfway through its refill by a task that evicts its lines, a task loads them
  // all again when it is back: it pays the half it did plus one whole refill. What the first
  // refill still owed is part of the second, not added to it (two whole refills).
  const SimTime whole = refill_paid(engine::kNever);
  ASSERT_GT(whole, 2 * kMillisecond);
  const SimTime cut = refill_paid(whole / 2);
  EXPECT_GT(cut, whole + whole / 4);
  EXPECT_LT(cut, whole + 3 * whole / 4);
}

// --- counters ------------------------------------------------------------------------------

TEST_F(SchedTest, MigrationsAndContextSwitchesAreCounted) {
  // A migration is counted when a task is placed on a CPU other than the one it last ran on
  // (not at its first placement); a context switch each time a running task is switched out
  // (block, exit or preemption).
  const int tid = sleeper(1);
  EXPECT_EQ(sched_.migrations(), 0U);
  EXPECT_EQ(sched_.context_switches(), 1U);  // it blocked

  sched_.task_for_update(tid).wake_cpu = 6;
  wake(tid, WakeContext{});
  run_for(1 * kMillisecond);
  EXPECT_EQ(sched_.task(tid).cpu, 6);
  EXPECT_EQ(sched_.migrations(), 1U);
  EXPECT_EQ(sched_.context_switches(), 2U);

  wake(tid, WakeContext{});
  run_for(1 * kMillisecond);
  EXPECT_EQ(sched_.task(tid).cpu, 6);
  EXPECT_EQ(sched_.migrations(), 1U);
  EXPECT_EQ(sched_.context_switches(), 3U);

  // A CFS task preempted by an RT task (1), the RT task blocking (2), the CFS task exiting (3).
  const int fair = occupy(4, fair_params("fair"), 1 * kMillisecond);
  owner_.on_done(fair, [this](int id) { sched_.exit(id); });
  run_for(100 * kMicrosecond);
  spawn(rt_params("rt", 10, only(4)), 10 * kMicrosecond, 4);
  run_for(10 * kMillisecond);
  EXPECT_EQ(sched_.task(fair).state, TaskState::kDead);
  EXPECT_EQ(sched_.migrations(), 1U);
  EXPECT_EQ(sched_.context_switches(), 6U);
}

TEST_F(SchedTest, AMigratingTaskTakesItsLoadFromTheSourceCpuToTheDestination) {
  // detach_entity_load_avg() / attach_entity_load_avg(): a fair task's load stays attached to
  // its CPU while it sleeps; when a wakeup places it on another CPU, the source CPU's load
  // loses exactly the task's load and the destination gains it.
  const int tid = occupy(kGold0, fair_params("mover"), 50 * kMillisecond);
  run_until(60 * kMillisecond);
  ASSERT_EQ(sched_.task(tid).state, TaskState::kSleeping);
  const int dest = kGold0 + 1;
  sched_.task_for_update(tid).params.affinity = only(dest);
  const double load = sched_.task_load(tid);
  const double source_before = sched_.cpu_load(kGold0);
  const double dest_before = sched_.cpu_load(dest);
  ASSERT_GT(load, 100.0);
  ASSERT_NEAR(source_before, load, 1e-6);  // the only task that ran there
  wake(tid, WakeContext{});
  ASSERT_EQ(sched_.task(tid).cpu, dest);
  EXPECT_NEAR(sched_.cpu_load(kGold0), source_before - load, 1e-6);
  EXPECT_NEAR(sched_.cpu_load(dest), dest_before + load, 1e-6);
}

TEST_F(SchedTest, ProcessCountersCountOnlyThreadsOfProcesses) {
  // simpleperf stat of a command counts its own threads; -a counts every task. A thread of a
  // process (TaskParams::process set) counts in both; a task without one only system-wide.
  TaskParams in_process = fair_params("worker");
  in_process.process = 0;
  const int worker = sleeper(1, in_process);
  const int other = sleeper(2);
  EXPECT_EQ(sched_.context_switches(), 2U);
  EXPECT_EQ(sched_.process_context_switches(), 1U);  // the worker blocked
  sched_.task_for_update(worker).wake_cpu = 5;
  sched_.task_for_update(other).wake_cpu = 6;
  wake(worker, WakeContext{});
  wake(other, WakeContext{});
  run_for(1 * kMillisecond);
  EXPECT_EQ(sched_.migrations(), 2U);
  EXPECT_EQ(sched_.process_migrations(), 1U);
  EXPECT_EQ(sched_.context_switches(), 4U);
  EXPECT_EQ(sched_.process_context_switches(), 2U);
  // Cycles: the worker's runs are part of every CPU's, not all of them.
  const auto& all = cost_.counters();
  const auto& process = cost_.process_counters();
  EXPECT_GT(process.cpu_cycles, 0U);
  EXPECT_LT(process.cpu_cycles, all.cpu_cycles);
  EXPECT_LE(process.cache_refs, all.cache_refs);
}

// --- PELT ----------------------------------------------------------------------------------

TEST(PeltTest, DecayHalvesEvery32Periods) {
  // y^32 = 1/2 with a 1024 us period.
  EXPECT_NEAR(pelt_decay(32 * kPeltPeriod), 0.5, 1e-12);
  EXPECT_NEAR(pelt_decay(64 * kPeltPeriod), 0.25, 1e-12);
}

TEST(PeltTest, DecaySurvivesDownToTwoToTheMinus63AndIsZeroFrom64Halvings) {
  // Whole halvings are exact powers of two: 63 of them leave 2^-63; from 64 on nothing is left.
  EXPECT_EQ(pelt_decay(32 * 32 * kPeltPeriod), std::ldexp(1.0, -32));
  EXPECT_EQ(pelt_decay(32 * 63 * kPeltPeriod), std::ldexp(1.0, -63));
  EXPECT_EQ(pelt_decay(32 * 64 * kPeltPeriod), 0.0);
}

TEST(PeltTest, DecayIsGeometricInContinuousTime) {
  // pelt_decay(t) = 2^(-t / (32 periods)) to double precision, also for fractions of a
  // period.
  for (SimTime delta : {kPeltPeriod / 2, kPeltPeriod, 7 * kPeltPeriod + 1, 32 * kPeltPeriod - 7,
                        100 * kPeltPeriod + 333'333, 1000 * kPeltPeriod + 128'000}) {
    const double periods = static_cast<double>(delta) / static_cast<double>(kPeltPeriod);
    const double expected = std::exp2(-periods / 32.0);
    EXPECT_NEAR(pelt_decay(delta), expected, 1e-14 * expected) << delta;
  }
  EXPECT_EQ(pelt_decay(0), 1.0);
  EXPECT_EQ(pelt_decay(-5), 1.0);
}

TEST(PeltTest, ActiveSignalConvergesToItsCeiling) {
  // While active the average moves towards the ceiling: half-way after 32 periods, and
  // indistinguishable from it after a second.
  PeltSignal half;
  half.update(32 * kPeltPeriod, true, 1024.0);
  EXPECT_NEAR(half.value(), 512.0, 1e-9);
  PeltSignal long_run;
  long_run.update(engine::kSecond, true, 307.0);
  EXPECT_NEAR(long_run.value(), 307.0, 1e-6);
  EXPECT_LT(long_run.value(), 307.0);
}

TEST(PeltTest, UpdatesCompose) {
  // Updating in many steps gives the same average as one update over the same time.
  PeltSignal stepwise;
  PeltSignal at_once;
  stepwise.set(100.0, 0);
  at_once.set(100.0, 0);
  for (SimTime t = kMillisecond; t <= 100 * kMillisecond; t += kMillisecond) {
    stepwise.update(t, true, 1024.0);
  }
  at_once.update(100 * kMillisecond, true, 1024.0);
  EXPECT_NEAR(stepwise.value(), at_once.value(), 1e-12 * at_once.value());
}

TEST(PeltTest, DecayedValueHalvesAfter32Periods) {
  // Inactive for 32 periods (~32 ms) the average halves; decayed_value() does not modify it.
  PeltSignal signal;
  signal.set(800.0, 10 * kMillisecond);
  EXPECT_NEAR(signal.decayed_value(10 * kMillisecond + 32 * kPeltPeriod), 400.0, 1e-9);
  EXPECT_EQ(signal.value(), 800.0);
  EXPECT_EQ(signal.decayed_value(5 * kMillisecond), 800.0);
}

TEST_F(SchedTest, UtilisationOfARunningTaskConvergesToItsCpuCapacity) {
  // Utilisation is capacity-invariant: a task that always runs on a CPU converges to that
  // CPU's capacity, and the queries report it while the task is still running. Its load
  // (runnable fraction x weight) converges to its weight.
  const int silver = occupy(kSilver0, fair_params("silver"));
  const int prime = occupy(kPrime, fair_params("prime"));
  run_until(500 * kMillisecond);
  ASSERT_EQ(sched_.rq(kSilver0).curr, silver);
  ASSERT_EQ(sched_.rq(kPrime).curr, prime);
  EXPECT_NEAR(sched_.task_util(silver), topology_.capacity(kSilver0), 1.0);
  EXPECT_NEAR(sched_.task_util(prime), 1024.0, 1.0);
  EXPECT_NEAR(sched_.cpu_util(kPrime), 1024.0, 1.0);
  EXPECT_NEAR(sched_.cpu_load(kPrime), 1024.0, 1.0);
  const int niced = occupy(kGold0, fair_params("niced", 5));
  run_for(500 * kMillisecond);
  ASSERT_EQ(sched_.rq(kGold0).curr, niced);
  EXPECT_NEAR(sched_.cpu_load(kGold0), nice_to_weight(5), 1.0);
}

TEST(NiceWeightTest, FollowsTheKernelTable) {
  // sched_prio_to_weight[]: nice 0 is 1024 and each nice step is about 1.25x.
  EXPECT_EQ(nice_to_weight(0), 1024);
  EXPECT_EQ(nice_to_weight(-20), 88761);
  EXPECT_EQ(nice_to_weight(-5), 3121);
  EXPECT_EQ(nice_to_weight(5), 335);
  EXPECT_EQ(nice_to_weight(19), 15);
}

TEST_F(SchedTest, UtilisationOfASleepingTaskHalvesEvery32Periods) {
  // Once the task sleeps its utilisation decays with the PELT half-life.
  const int tid = occupy(kGold0, fair_params("task"), 300 * kMillisecond);
  auto at_block = std::make_shared<double>(-1.0);
  auto half_life_later = std::make_shared<double>(-1.0);
  owner_.on_done(tid, [this, at_block, half_life_later](int id) {
    sched_.block(id);
    *at_block = sched_.task_util(id);
    at(now() + 32 * kPeltPeriod,
       [this, id, half_life_later] { *half_life_later = sched_.task_util(id); });
  });
  run_until(1000 * kMillisecond);
  ASSERT_GT(*at_block, 0.9 * topology_.capacity(kGold0));
  EXPECT_NEAR(*half_life_later, *at_block / 2.0, 1e-9);
}

// --- determinism ---------------------------------------------------------------------------

// A small mixed scenario: CFS tasks with repeated segments, periodic RT wakeups from another
// CPU, sync wakeups between CFS tasks.
class ScenarioRun : public SchedHarness {
 public:
  std::pair<std::uint64_t, std::uint64_t> run(std::int64_t rt_work) {
    std::vector<int> workers;
    for (int i = 0; i < 4; ++i) {
      const int tid = sched_.create_task(fair_params("worker", i - 2));
      owner_.repeat(tid, 20, (i + 1) * 300 * kMicrosecond);
      sched_.run(tid, 500 * kMicrosecond);
      sched_.wake_new(tid, i);
      workers.push_back(tid);
    }
    const int rt = sched_.create_task(rt_params("rt", 60));
    for (int k = 1; k <= 20; ++k) {
      at(k * 3 * kMillisecond, [this, rt, rt_work, workers, k] {
        if (sched_.task(rt).state == TaskState::kNew) {
          sched_.run(rt, rt_work);
          sched_.wake_new(rt, 4);
        } else if (sched_.task(rt).state == TaskState::kSleeping) {
          wake(rt, from_cpu(4), rt_work);
        }
        const int worker = workers[static_cast<std::size_t>(k) % workers.size()];
        if (sched_.task(worker).state == TaskState::kSleeping) {
          const int waker = sched_.rq(1).curr;
          wake(worker, from_cpu(1, waker, waker >= 0), 200 * kMicrosecond);
        }
      });
    }
    run_until(200 * kMillisecond);
    return {context_.engine.fingerprint(), context_.engine.events_dispatched()};
  }
};

TEST(SchedDeterminismTest, IdenticalRunsHaveIdenticalFingerprints) {
  // The scheduler is deterministic: the same scenario twice follows the same event
  // trajectory; changing one work amount changes it.
  const auto first = std::make_unique<ScenarioRun>()->run(400 * kMicrosecond);
  const auto second = std::make_unique<ScenarioRun>()->run(400 * kMicrosecond);
  const auto other = std::make_unique<ScenarioRun>()->run(401 * kMicrosecond);
  EXPECT_GT(first.second, 100U);
  EXPECT_EQ(first, second);
  EXPECT_NE(first.first, other.first);
}

}  // namespace
}  // namespace bindersim::sched

// --- new-idle balance ----------------------------------------------------------------------

namespace bindersim::sched::fixture {
namespace {

// Queues `params` on `cpu` behind whatever runs there (pinned while it is placed), then lets it
// run anywhere.
int queue_behind(SchedHarness& h, Scheduler& sched, int cpu, TaskParams params,
                 std::int64_t work_ref_ns) {
  params.affinity = only(cpu);
  const int tid = h.spawn(params, work_ref_ns, cpu);
  sched.task_for_update(tid).params.affinity = 0;
  return tid;
}

class NewIdleTest : public SchedTest {};

TEST_F(NewIdleTest, IdleCpuPullsTheWaitingFairTaskOfABusyCpuInItsCluster) {
  // newidle_balance(): CPU 0 runs out of work while CPU 1 has a fair task waiting behind a
  // long-running one; CPU 0 pulls it (a migration) instead of going idle.
  const int hog = occupy(1, fair_params("hog"));
  run_for(100 * kMicrosecond);  // the hog runs before the waiter arrives
  const int waiter = queue_behind(*this, sched_, 1, fair_params("waiter"), kMillisecond);
  const int brief = occupy(0, fair_params("brief"), kMillisecond);
  run_until(kMillisecond / 2);
  ASSERT_EQ(sched_.rq(1).curr, hog);
  ASSERT_EQ(sched_.task(waiter).state, TaskState::kRunnable);
  const auto migrations = sched_.migrations();
  run_until(20 * kMillisecond);  // brief (pinned to CPU 0) has finished by now
  EXPECT_EQ(sched_.task(brief).state, TaskState::kSleeping);
  EXPECT_EQ(sched_.task(waiter).cpu, 0);
  EXPECT_EQ(sched_.newidle_pulls(), 1U);
  EXPECT_EQ(sched_.migrations(), migrations + 1);
  EXPECT_EQ(sched_.rq(1).curr, hog);
}

// CPU 0 runs a pinned task briefly at 0 and then every `gap` (its idle periods a little shorter
// than `gap`; eight of them fill its idle history); before one more run, just after a tick, a
// fair task is queued behind a hog on CPU 1. Returns the waiting task once CPU 0 has gone idle
// again, before the next tick.
int runs_then_waiter(SchedHarness& h, Scheduler& sched, SimTime gap) {
  const SimTime tick = sched.tunables().tick_ns;
  const int hog = h.occupy(1, fair_params("hog"));
  const int runner = h.occupy(0, fair_params("runner"), 10 * kMicrosecond);
  SimTime at = 0;
  for (int i = 0; i < 8; ++i) {
    at += gap;
    h.at(at, [&h, runner] { h.wake(runner, WakeContext{}); });
  }
  // The last run starts just after a tick, so that CPU 0 goes idle well before the next one.
  const SimTime last = (at + gap + tick - 1) / tick * tick + 100 * kMicrosecond;
  h.run_until(last - 1);
  EXPECT_EQ(sched.task(runner).state, TaskState::kSleeping);
  EXPECT_EQ(sched.rq(1).curr, hog);
  const int waiter = queue_behind(h, sched, 1, fair_params("waiter"), kMillisecond);
  h.run_until(last);
  h.wake(runner, WakeContext{});
  h.run_until(last + tick / 2);
  EXPECT_EQ(sched.task(runner).state, TaskState::kSleeping);
  return waiter;
}

TEST_F(NewIdleTest, AnIdleCpuWhoseIdlePeriodsAreShortPullsNothing) {
  // newidle_balance(): when this CPU's average idle period is below the migration cost, the
  // mainline placement does not balance as it goes idle (the pull would cost more than the
  // idle time it saves). With idle periods under 100 us CPU 0 goes idle and the waiter stays
  // on CPU 1; with idle periods of about 2 ms it pulls the waiter.
  const SimTime migration_cost = sched_.tunables().migration_cost_ns;
  const int kept = runs_then_waiter(*this, sched_, migration_cost / 5);
  EXPECT_EQ(sched_.task(kept).cpu, 1);
  EXPECT_EQ(sched_.task(kept).state, TaskState::kRunnable);
  EXPECT_EQ(sched_.newidle_pulls(), 0U);
  EXPECT_LT(sched_.rq(0).curr, 0);

  SchedHarness other;
  const int pulled = runs_then_waiter(other, other.sched(), 4 * migration_cost);
  EXPECT_EQ(other.sched().task(pulled).cpu, 0);
  EXPECT_EQ(other.sched().newidle_pulls(), 1U);
}

// Load balancing switched off (`kernel.newidle_balance` and `kernel.periodic_balance` false).
SchedTunables without_balance() {
  SchedTunables tunables;
  tunables.newidle_balance = false;
  tunables.periodic_balance = false;
  return tunables;
}

class NoBalanceTest : public ::testing::Test, public SchedHarness {
 protected:
  NoBalanceTest() : SchedHarness(without_balance()) {}
};

TEST_F(NoBalanceTest, AnIdleCpuPullsNothingWithoutNewIdleOrPeriodicBalance) {
  // The setting of IdleCpuPullsTheWaitingFairTaskOfABusyCpuInItsCluster: CPU 0 goes idle
  // while a fair task waits behind a hog on CPU 1. Without balancing CPU 0 stays idle through
  // several ticks, and the waiter runs on CPU 1 when the hog's slice is over.
  const int hog = occupy(1, fair_params("hog"));
  run_for(100 * kMicrosecond);
  const int waiter = queue_behind(*this, sched_, 1, fair_params("waiter"), kMillisecond);
  const int brief = occupy(0, fair_params("brief"), kMillisecond);
  const auto migrations = sched_.migrations();
  run_until(5 * sched_.tunables().tick_ns);
  EXPECT_EQ(sched_.task(brief).state, TaskState::kSleeping);
  EXPECT_EQ(sched_.task(waiter).cpu, 1);
  EXPECT_EQ(sched_.task(waiter).state, TaskState::kSleeping);  // its 1 ms done on CPU 1
  EXPECT_EQ(sched_.migrations(), migrations);
  EXPECT_EQ(sched_.rq(1).curr, hog);
  EXPECT_LT(sched_.rq(0).curr, 0);
  EXPECT_EQ(sched_.newidle_pulls(), 0U);
  EXPECT_EQ(sched_.balance_pulls(), 0U);
}

TEST_F(NewIdleTest, CacheHotTaskIsNotPulled) {
  // can_migrate_task(): a task that ran less than the migration cost ago is cache-hot and
  // stays queued where it is; the idle CPU goes idle.
  const int victim = occupy(1, fair_params("victim"));
  sched_.task_for_update(victim).params.affinity = 0;
  // 600 us of reference work on a silver core (capacity 307) ends just after 2 ms.
  occupy(0, fair_params("brief"), 600 * kMicrosecond);
  at(1'800 * kMicrosecond, [&] {
    // An RT task preempts the victim on CPU 1: it waits there, having run until now.
    const int rt = sched_.create_task(rt_params("rt", 50, only(1)));
    sched_.run(rt, 5 * kMillisecond);
    sched_.wake_new(rt, 1);
  });
  run_until(3 * kMillisecond);
  EXPECT_EQ(sched_.task(victim).state, TaskState::kRunnable);
  EXPECT_EQ(sched_.task(victim).cpu, 1);
  EXPECT_EQ(sched_.newidle_pulls(), 0U);
  EXPECT_LT(sched_.rq(0).curr, 0);  // CPU 0 went idle
}

TEST_F(NewIdleTest, TaskWaitingForItsWakingCpuIsNotPulled) {
  // A CPU with one RT task waiting for the CPU to leave idle is not RT-overloaded, and a CPU
  // with a single runnable task is not busy: nothing is pulled from it.
  occupy(0, fair_params("brief"), 10 * kMicrosecond);
  const int sleeper_rt = sleeper(5, rt_params("rt", 50), only(5));
  at(200 * kMicrosecond, [&] { wake(sleeper_rt, WakeContext{}, kMillisecond); });
  run_until(5 * kMillisecond);
  EXPECT_EQ(sched_.task(sleeper_rt).cpu, 5);
  EXPECT_EQ(sched_.newidle_pulls(), 0U);
}

}  // namespace
}  // namespace bindersim::sched::fixture

namespace bindersim::sched::fixture {
namespace {

TEST_F(SchedTest, TimeAccountSplitsTheWaitAndTheRunOfAWakeup) {
  // A task woken from CPU 4 onto idle CPU 5 waits for the IPI and then for CPU 5's idle exit
  // (WFI); when it runs it first pays the context switch, then its work.
  const int tid = sleeper(5, fair_params("sleeper"), only(5));
  const TimeAccount before = sched_.task(tid).times;
  const int waker = occupy(4, fair_params("waker"));
  run_for(50 * kMicrosecond);
  WakeContext ctx;
  ctx.waker_tid = waker;
  ctx.waker_cpu = 4;
  wake(tid, ctx, 20 * kMicrosecond);
  run_for(kMillisecond);
  const TimeAccount& after = sched_.task(tid).times;
  const auto& costs = topology_.costs();
  EXPECT_EQ(after.wait_ipi - before.wait_ipi, costs.ipi_latency_ns);
  EXPECT_EQ(after.wait_idle_exit - before.wait_idle_exit,
            topology_.cpu(5).idle_states[0].exit_latency_ns);
  EXPECT_EQ(after.wait_rq - before.wait_rq, 0);
  const SimTime switch_ns =
      (costs.context_switch_ref_ns * 1024 + topology_.capacity(5) - 1) / topology_.capacity(5);
  EXPECT_EQ(after.switch_stall - before.switch_stall, switch_ns);
  const SimTime work_ns =
      (20 * kMicrosecond * 1024 + topology_.capacity(5) - 1) / topology_.capacity(5);
  EXPECT_EQ(after.work - before.work, work_ns);
}

TEST_F(SchedTest, StallsThatKeepGrowingAreCappedInsteadOfOverflowingTheClock) {
  // Stalls far beyond any run (each 2^60 ns) added while the task runs: the completion time is
  // capped (at 2^61 ns from now) instead of wrapping around, and the run goes on.
  const int tid = spawn(fair_params("stalled"), 10 * kMicrosecond, 0);
  run_for(5 * kMicrosecond);
  ASSERT_EQ(sched_.task(tid).state, TaskState::kRunning);
  for (int i = 0; i < 8; ++i) sched_.add_overhead(tid, SimTime{1} << 60);
  const SimTime done_at = sched_.rq(sched_.task(tid).cpu).done_at;
  EXPECT_GT(done_at, now());
  EXPECT_LE(done_at, now() + (SimTime{1} << 61));
  run_for(kMillisecond);
  EXPECT_EQ(sched_.task(tid).state, TaskState::kRunning);
}

// --- RT push and pull ---------------------------------------------------------------------

class RtBalanceTest : public SchedTest {
 protected:
  // CPU 1 runs `high` (FIFO 90) with `low` (FIFO 50) waiting behind it; `low` may run on CPUs
  // 0 and 1 only. Returns `low`.
  int overload_cpu1() {
    high_ = occupy(1, rt_params("high", 90));
    const int low = queue_behind(*this, sched_, 1, rt_params("low", 50), kMillisecond);
    sched_.task_for_update(low).params.affinity = only(0) | only(1);
    return low;
  }
  int high_ = -1;
};

TEST_F(RtBalanceTest, CpuWhoseRtTaskBlocksPullsAWaitingRtTaskAheadOfItsFairWork) {
  // balance_rt() / pull_rt_task(): CPU 1 is RT-overloaded; CPU 0 runs an RT task with a fair
  // task behind it. When the RT task blocks, CPU 0 pulls the waiting RT task, which runs there
  // before the fair one. CPU 0 never goes idle: no new-idle balance is involved.
  const int low = overload_cpu1();
  occupy(0, rt_params("brief", 60), 300 * kMicrosecond);
  const int hog = occupy(0, fair_params("hog"));
  run_until(200 * kMicrosecond);
  ASSERT_EQ(sched_.rq(1).curr, high_);
  ASSERT_EQ(sched_.task(low).state, TaskState::kRunnable);
  ASSERT_EQ(sched_.task(low).cpu, 1);  // CPU 0 runs an RT task as important: no push
  EXPECT_EQ(sched_.rt_pushes(), 0U);
  const auto migrations = sched_.migrations();
  run_until(5 * kMillisecond);
  EXPECT_EQ(sched_.task(low).cpu, 0);
  EXPECT_EQ(sched_.task(low).state, TaskState::kSleeping);  // ran its 1 ms there
  EXPECT_EQ(sched_.rt_pulls(), 1U);
  EXPECT_EQ(sched_.newidle_pulls(), 0U);
  EXPECT_EQ(sched_.migrations(), migrations + 1);
  EXPECT_EQ(sched_.rq(0).curr, hog);
}

TEST_F(RtBalanceTest, FairTaskGoingIdleDoesNotPullRtWork) {
  // A CPU whose fair task blocks runs newidle_balance() for fair tasks only: the kernel pulls
  // RT work when an RT task leaves (balance_rt). `low` may run on CPU 0 only from after the
  // push that followed its queueing; it waits on CPU 1 while CPU 0 goes idle.
  const int high = occupy(1, rt_params("high", 90));
  const int low = queue_behind(*this, sched_, 1, rt_params("low", 50), kMillisecond);
  sched_.task_for_update(low).params.affinity = only(1);
  const int brief = occupy(0, fair_params("brief"), 300 * kMicrosecond);
  run_until(200 * kMicrosecond);
  ASSERT_EQ(sched_.rq(1).curr, high);
  sched_.task_for_update(low).params.affinity = only(0) | only(1);
  run_until(5 * kMillisecond);
  ASSERT_EQ(sched_.task(brief).state, TaskState::kSleeping);
  EXPECT_LT(sched_.rq(0).curr, 0);
  EXPECT_EQ(sched_.task(low).cpu, 1);
  EXPECT_EQ(sched_.task(low).state, TaskState::kRunnable);
  EXPECT_EQ(sched_.rt_pulls(), 0U);
}

TEST_F(RtBalanceTest, RunningTaskLeavingRtPullsAWaitingRtTask) {
  // switched_from_rt(): CPU 0's running task turns fair (binder restoring a server's priority,
  // say) and the CPU has no RT task left: it pulls the waiting RT task, which preempts it.
  const int low = overload_cpu1();
  const int server = occupy(0, rt_params("server", 60), 5 * kMillisecond);
  run_until(200 * kMicrosecond);
  ASSERT_EQ(sched_.rq(0).curr, server);
  ASSERT_EQ(sched_.task(low).cpu, 1);
  sched_.set_attributes(server, Policy::kNormal, 0, 0);
  EXPECT_EQ(sched_.task(low).cpu, 0);
  EXPECT_EQ(sched_.rt_pulls(), 1U);
  run_for(50 * kMicrosecond);
  EXPECT_EQ(sched_.rq(0).curr, low);
  EXPECT_EQ(sched_.task(server).state, TaskState::kRunnable);
}

TEST_F(RtBalanceTest, LoweredRtPriorityPullsOnlyMoreImportantWork) {
  // prio_changed_rt(): a running RT task whose priority falls pulls waiting RT tasks strictly
  // more important than its new priority, and no others (one of the same priority would wait
  // behind the running task here as it does there).
  const int low = overload_cpu1();
  const int server = occupy(0, rt_params("server", 60), 5 * kMillisecond);
  run_until(200 * kMicrosecond);
  ASSERT_EQ(sched_.rq(0).curr, server);
  for (const int above_or_equal : {55, 50}) {  // low is FIFO 50
    sched_.set_attributes(server, Policy::kFifo, 0, above_or_equal);
    EXPECT_EQ(sched_.task(low).cpu, 1) << "server at FIFO " << above_or_equal;
    EXPECT_EQ(sched_.rt_pulls(), 0U) << "server at FIFO " << above_or_equal;
  }
  sched_.set_attributes(server, Policy::kFifo, 0, 49);  // now below it
  EXPECT_EQ(sched_.task(low).cpu, 0);
  EXPECT_EQ(sched_.rt_pulls(), 1U);
}

TEST_F(RtBalanceTest, PreemptedRtTaskIsPushedToACpuOfLowerPriority) {
  // set_next_task_rt() / push_rt_tasks(): a more important RT task pinned to CPU 1 preempts
  // `low` there; `low` does not wait for it but is pushed at once to a CPU running no RT task
  // (find_lowest_rq), where it preempts the fair task.
  const int low = occupy(1, rt_params("low", 50));
  sched_.task_for_update(low).params.affinity = only(1) | only(2);
  const int fair = occupy(2, fair_params("fair"));
  run_until(200 * kMicrosecond);
  ASSERT_EQ(sched_.rq(1).curr, low);
  const int high = occupy(1, rt_params("high", 90));
  run_for(100 * kMicrosecond);
  EXPECT_EQ(sched_.rq(1).curr, high);
  EXPECT_EQ(sched_.task(low).cpu, 2);
  EXPECT_EQ(sched_.rq(2).curr, low);
  EXPECT_EQ(sched_.task(fair).state, TaskState::kRunnable);
  EXPECT_EQ(sched_.rt_pushes(), 1U);
}

TEST_F(RtBalanceTest, NoPushWhenEveryOtherCpuRunsMoreImportantRtWork) {
  // find_lowest_rq() finds no CPU below the task's priority: it waits where it is.
  const int low = occupy(1, rt_params("low", 50));
  sched_.task_for_update(low).params.affinity = only(1) | only(2);
  occupy(2, rt_params("other", 70));
  run_until(200 * kMicrosecond);
  occupy(1, rt_params("high", 90));
  run_for(100 * kMicrosecond);
  EXPECT_EQ(sched_.task(low).cpu, 1);
  EXPECT_EQ(sched_.task(low).state, TaskState::kRunnable);
  EXPECT_EQ(sched_.rt_pushes(), 0U);
}

TEST_F(RtBalanceTest, PushMovesTheFirstQueuedOfEqualPriorityWaitingTasks) {
  // push_rt_tasks() / pick_next_pushable_task(): of two waiting tasks of one priority, the one
  // queued first is pushed (SCHED_FIFO order); once it has taken the only CPU of lower priority,
  // the other one waits where it is.
  const int mid = occupy(1, rt_params("mid", 80));
  const int first = spawn(rt_params("first", 60, only(1)), kMillisecond, 1);
  const int second = spawn(rt_params("second", 60, only(1)), kMillisecond, 1);
  const int fair = occupy(2, fair_params("fair"));
  run_until(200 * kMicrosecond);
  ASSERT_EQ(sched_.rq(1).curr, mid);
  ASSERT_EQ(sched_.rq(2).curr, fair);
  // Both may run on CPU 2 from now on; every other CPU is out of their reach.
  for (int tid : {first, second}) sched_.task_for_update(tid).params.affinity = only(1) | only(2);
  const int high = occupy(1, rt_params("high", 90));  // preempts mid: CPU 1 pushes
  run_for(100 * kMicrosecond);
  EXPECT_EQ(sched_.rq(1).curr, high);
  EXPECT_EQ(sched_.task(first).cpu, 2);
  EXPECT_EQ(sched_.rq(2).curr, first);
  EXPECT_EQ(sched_.task(second).cpu, 1);
  EXPECT_EQ(sched_.task(second).state, TaskState::kRunnable);
  EXPECT_EQ(sched_.rt_pushes(), 1U);
}

TEST_F(RtBalanceTest, PullSkipsACpuWhoseBestWaitingTaskPreemptsThere) {
  // pull_rt_task(): CPU 1 runs `mid` (FIFO 60, preemption disabled) with `top` (FIFO 70, about
  // to preempt it) and `low` (FIFO 50) waiting. The kernel looks at CPU 1's most important
  // pushable task only: `top` runs there next, so nothing is pulled from CPU 1, not even `low`.
  const int mid = occupy(1, rt_params("mid", 60));
  const int low = queue_behind(*this, sched_, 1, rt_params("low", 50), kMillisecond);
  sched_.task_for_update(low).params.affinity = only(0) | only(1);
  const int brief = occupy(0, rt_params("brief", 80), 300 * kMicrosecond);
  int top = -1;
  at(250 * kMicrosecond, [&] {
    sched_.preempt_disable(mid);
    top = spawn(rt_params("top", 70, only(0) | only(1)), kMillisecond, 1);
  });
  run_until(2 * kMillisecond);
  ASSERT_EQ(sched_.task(brief).state, TaskState::kSleeping);  // left CPU 0 at about 1 ms
  ASSERT_EQ(sched_.rq(1).curr, mid);
  EXPECT_EQ(sched_.task(top).cpu, 1);
  EXPECT_EQ(sched_.task(low).cpu, 1);
  EXPECT_EQ(sched_.rt_pulls(), 0U);
}

TEST_F(RtBalanceTest, PullTakesAWaitingTaskOfTheSamePriorityAsTheRunningOne) {
  // pull_rt_task(): a CPU is skipped only when its best waiting task is about to preempt the
  // running one. CPU 1 runs `runner` (FIFO 50) with `waiter` (FIFO 50) behind it: `waiter`
  // does not preempt `runner`, so CPU 0 pulls it when its RT task blocks.
  const int runner = occupy(1, rt_params("runner", 50));
  const int waiter = queue_behind(*this, sched_, 1, rt_params("waiter", 50), kMillisecond);
  sched_.task_for_update(waiter).params.affinity = only(0) | only(1);
  const int brief = occupy(0, rt_params("brief", 60), 300 * kMicrosecond);
  run_until(200 * kMicrosecond);
  ASSERT_EQ(sched_.rq(1).curr, runner);
  ASSERT_EQ(sched_.task(waiter).state, TaskState::kRunnable);
  ASSERT_EQ(sched_.task(waiter).cpu, 1);  // CPU 0 runs a more important RT task: no push
  EXPECT_EQ(sched_.rt_pushes(), 0U);
  run_until(5 * kMillisecond);
  ASSERT_EQ(sched_.task(brief).state, TaskState::kSleeping);
  EXPECT_EQ(sched_.task(waiter).cpu, 0);
  EXPECT_EQ(sched_.task(waiter).state, TaskState::kSleeping);  // ran its 1 ms there
  EXPECT_EQ(sched_.rt_pulls(), 1U);
  EXPECT_EQ(sched_.rq(1).curr, runner);
}

TEST_F(RtBalanceTest, WaitingTaskMadeRtIsPushedToACpuOfLowerPriority) {
  // switched_to_rt(): a fair task waiting behind an RT task becomes RT (binder priority
  // inheritance, say); its CPU now has two RT tasks and pushes it to a CPU running fair work.
  occupy(1, rt_params("high", 90));
  const int waiter = queue_behind(*this, sched_, 1, fair_params("waiter"), kMillisecond);
  sched_.task_for_update(waiter).params.affinity = only(1) | only(2);
  const int fair = occupy(2, fair_params("fair"));
  run_until(200 * kMicrosecond);
  ASSERT_EQ(sched_.task(waiter).state, TaskState::kRunnable);
  ASSERT_EQ(sched_.task(waiter).cpu, 1);
  sched_.set_attributes(waiter, Policy::kFifo, 0, 50);
  EXPECT_EQ(sched_.task(waiter).cpu, 2);
  EXPECT_EQ(sched_.rt_pushes(), 1U);
  run_for(50 * kMicrosecond);
  EXPECT_EQ(sched_.rq(2).curr, waiter);
  EXPECT_EQ(sched_.task(fair).state, TaskState::kRunnable);
}

class WaltRtBalanceTest : public ::testing::Test, public SchedHarness {
 protected:
  WaltRtBalanceTest() : SchedHarness({}, "walt") {}
};

TEST_F(WaltRtBalanceTest, PushFallsBackToMainlineWhenWaltFindsNoCpu) {
  // walt_rt_find_lowest_rq() skips CPUs the task would overutilise; when it finds none, the
  // kernel's find_lowest_rq() makes "a best effort itself": a preempted RT task is still
  // pushed to the CPU running only fair work.
  const int hog = occupy(1, fair_params("hog"));
  const int low = occupy(0, rt_params("low", 50));
  sched_.task_for_update(low).params.affinity = only(0) | only(1);
  run_until(200 * kMillisecond);  // both CPUs busy for many WALT windows
  ASSERT_EQ(sched_.rq(0).curr, low);
  ASSERT_EQ(WaltPlacement::find_lowest_rq(sched_, low, 0), -1);
  occupy(0, rt_params("high", 90), 10 * kMillisecond);
  run_for(100 * kMicrosecond);
  EXPECT_EQ(sched_.task(low).cpu, 1);
  EXPECT_EQ(sched_.rq(1).curr, low);
  EXPECT_EQ(sched_.task(hog).state, TaskState::kRunnable);
  EXPECT_EQ(sched_.rt_pushes(), 1U);
}

}  // namespace
}  // namespace bindersim::sched::fixture
