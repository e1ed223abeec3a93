// Load balancing at the tick (load_balance() and the NOHZ idle balance, kernel/sched/fair.c): the
// periodic balance of a busy CPU and the NOHZ kick of an idle CPU, under mainline placement and
// under the energy-aware gki placement, which leaves placement to wakeups while the system is not
// overutilised. SA8155P: silver 0-3 (capacity 307), gold 4-6, prime 7.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "bindersim/sched/scheduler.hpp"
#include "sched_fixture.hpp"

namespace bindersim::sched {
namespace {

using engine::SimTime;
using namespace fixture;  // NOLINT(google-build-using-namespace): test helpers

class BalanceTest : public ::testing::Test, public SchedHarness {
 protected:
  explicit BalanceTest(const std::string& placement = "mainline")
      : SchedHarness(SchedTunables{}, placement) {}

  SimTime tick() const { return sched_.tunables().tick_ns; }
  // Queues a fair task on `cpu` behind what runs there (pinned while it is placed), then lets
  // it run anywhere.
  int queue_behind(int cpu, const char* name) {
    TaskParams params = fair_params(name, 0, only(cpu));
    const int tid = spawn(params, 50 * kMillisecond, cpu);
    sched_.task_for_update(tid).params.affinity = 0;
    EXPECT_EQ(sched_.task(tid).state, TaskState::kRunnable);
    return tid;
  }
  // A long task running on CPU 1 with a second fair task waiting behind it; the other CPUs
  // idle.
  std::pair<int, int> hog_and_waiter() {
    const int hog = occupy(1, fair_params("hog"));
    run_for(100 * kMicrosecond);  // the hog runs before the waiter arrives
    const int waiter = queue_behind(1, "waiter");
    EXPECT_EQ(sched_.rq(1).curr, hog);
    return {hog, waiter};
  }
  // Every CPU runs a pinned hog; CPU 1 also has two fair tasks waiting. Returns the waiters,
  // the longest-queued first.
  std::vector<int> all_busy_two_waiting_on_cpu1() {
    for (int cpu = 0; cpu < 8; ++cpu) occupy(cpu, fair_params("hog"));
    run_for(100 * kMicrosecond);
    std::vector<int> waiters = {queue_behind(1, "first"), queue_behind(1, "second")};
    EXPECT_EQ(sched_.nr_running(1), 3);
    for (int cpu = 0; cpu < 8; ++cpu) EXPECT_FALSE(sched_.available_idle_cpu(cpu));
    return waiters;
  }
};

class GkiBalanceTest : public BalanceTest {
 protected:
  GkiBalanceTest() : BalanceTest("gki") {}
};

TEST_F(BalanceTest, IdleCpuIsKickedToPullAWaitingFairTaskAtTheTick) {
  // nohz_balancer_kick(): at the tick of CPU 1, which runs a task with another fair task
  // waiting, the first idle CPU (CPU 0, in CPU 1's cluster) is kicked and pulls the waiting
  // task: one migration, counted as a balance pull, not a new-idle one.
  const auto [hog, waiter] = hog_and_waiter();
  run_until(tick() - 1);
  ASSERT_EQ(sched_.task(waiter).cpu, 1);
  ASSERT_EQ(sched_.task(waiter).state, TaskState::kRunnable);
  EXPECT_EQ(sched_.balance_pulls(), 0U);
  const auto migrations = sched_.migrations();
  run_until(tick());
  EXPECT_EQ(sched_.task(waiter).cpu, kSilver0);
  EXPECT_EQ(sched_.balance_pulls(), 1U);
  EXPECT_EQ(sched_.migrations(), migrations + 1);
  EXPECT_EQ(sched_.newidle_pulls(), 0U);
  // CPU 0 leaves idle (reschedule IPI, WFI exit) and runs it; the hog keeps CPU 1.
  run_until(tick() + 100 * kMicrosecond);
  EXPECT_EQ(sched_.rq(kSilver0).curr, waiter);
  EXPECT_EQ(sched_.rq(1).curr, hog);
}

TEST_F(BalanceTest, BusyCpuPullsFromACpuRunningTwoMoreTasksAtTheTick) {
  // Periodic balance with no idle CPU: at the first tick a busy CPU of CPU 1's cluster
  // (balancing within the cluster first) pulls the longest-waiting task from CPU 1, which
  // runs two more tasks than it. Afterwards no CPU runs two more tasks than another, and the
  // next balance interval (16 x 8 ms) has not come: nothing else moves.
  const std::vector<int> waiters = all_busy_two_waiting_on_cpu1();
  run_until(tick() - 1);
  ASSERT_EQ(sched_.task(waiters[0]).cpu, 1);
  ASSERT_EQ(sched_.task(waiters[1]).cpu, 1);
  const auto migrations = sched_.migrations();
  run_until(tick());
  const int to = sched_.task(waiters[0]).cpu;
  EXPECT_NE(to, 1);
  EXPECT_EQ(topology_.cluster_of(to), topology_.cluster_of(1));
  EXPECT_EQ(sched_.task(waiters[1]).cpu, 1);
  EXPECT_EQ(sched_.balance_pulls(), 1U);
  EXPECT_EQ(sched_.migrations(), migrations + 1);
  run_until(5 * tick());
  EXPECT_EQ(sched_.balance_pulls(), 1U);
  EXPECT_EQ(sched_.migrations(), migrations + 1);
  EXPECT_EQ(sched_.newidle_pulls(), 0U);
}

TEST_F(BalanceTest, ABusyCpuBalancesAgainOnlyAfterItsBusyIntervalOf128Ms) {
  // rebalance_domains() with get_sd_balance_interval(): a busy CPU balances a domain every
  // balance_interval (1 ms per CPU of the domain: 8 ms here) times busy_factor (16), so 128 ms.
  // Every CPU runs a pinned hog and balances at the first tick (4 ms) with nothing to pull.
  // Two fair tasks then queue on CPU 1, which runs two more tasks than any other CPU, and no
  // CPU is idle to be kicked: the first pull is at the tick of 4 ms + 128 ms, not before.
  for (int cpu = 0; cpu < 8; ++cpu) occupy(cpu, fair_params("hog"));
  run_until(tick() + kMillisecond);
  EXPECT_EQ(sched_.balance_pulls(), 0U);
  const int first = queue_behind(1, "first");
  queue_behind(1, "second");
  ASSERT_EQ(sched_.nr_running(1), 3);
  const SimTime next_balance = tick() + 8 * 16 * kMillisecond;
  run_until(next_balance - 1);
  EXPECT_EQ(sched_.balance_pulls(), 0U);
  EXPECT_EQ(sched_.task(first).cpu, 1);
  run_until(next_balance);
  EXPECT_EQ(sched_.balance_pulls(), 1U);
  EXPECT_EQ(sched_.newidle_pulls(), 0U);
}

TEST_F(GkiBalanceTest, NoKickWhileNotOverutilizedThenPullOnceOverutilized) {
  // Under energy-aware placement the kernel does not load-balance while the system is not
  // overutilised: the waiting task stays queued on CPU 1 through the ticks. Once CPU 1's
  // utilisation exceeds 80% of its capacity, the next tick kicks idle CPU 0, which pulls it.
  const auto [hog, waiter] = hog_and_waiter();
  run_until(tick() + kMillisecond);
  EXPECT_FALSE(sched_.overutilized());
  EXPECT_FALSE(sched_.balancing_active());
  EXPECT_EQ(sched_.task(waiter).cpu, 1);
  EXPECT_EQ(sched_.task(waiter).state, TaskState::kRunnable);
  EXPECT_EQ(sched_.balance_pulls(), 0U);
  const auto migrations = sched_.migrations();
  sched_.set_task_util(hog, 0.9 * topology_.capacity(1));
  EXPECT_TRUE(sched_.any_cpu_overutilized());
  EXPECT_FALSE(sched_.overutilized());  // until the hog's next tick sets it
  run_until(2 * tick());
  EXPECT_TRUE(sched_.overutilized());
  EXPECT_TRUE(sched_.balancing_active());
  EXPECT_EQ(sched_.task(waiter).cpu, kSilver0);
  EXPECT_EQ(sched_.balance_pulls(), 1U);
  EXPECT_EQ(sched_.migrations(), migrations + 1);
}

TEST_F(GkiBalanceTest, NoPeriodicPullWhileNotOverutilized) {
  // The same all-busy system as under mainline: while not overutilised, the tick moves
  // nothing.
  const std::vector<int> waiters = all_busy_two_waiting_on_cpu1();
  const auto migrations = sched_.migrations();
  run_until(2 * tick() + kMillisecond);
  EXPECT_FALSE(sched_.overutilized());
  EXPECT_EQ(sched_.task(waiters[0]).cpu, 1);
  EXPECT_EQ(sched_.task(waiters[1]).cpu, 1);
  EXPECT_EQ(sched_.balance_pulls(), 0U);
  EXPECT_EQ(sched_.migrations(), migrations);
}

}  // namespace
}  // namespace bindersim::sched
