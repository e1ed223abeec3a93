// WALT's window-based demand (walt.c update_task_demand / update_history with
// WINDOW_STATS_MAX_RECENT_AVG) and per-window busy time, on their own: 16 ms windows, five
// samples of history, new tasks at 15% of a window.
#include "bindersim/sched/walt_demand.hpp"

#include <gtest/gtest.h>

namespace bindersim::sched {
namespace {

using engine::kMillisecond;

constexpr SimTime kWindow = 16 * kMillisecond;
constexpr double kMs = 1e6;  // nanoseconds

class WaltDemandTest : public ::testing::Test {
 protected:
  WaltDemandTest() { demand_.reset(0, WaltTunables{}); }

  // The task is runnable (and running) from `from` to `to` at `scale`, asleep otherwise; the
  // tracker is brought to `from` asleep first.
  void busy(SimTime from, SimTime to, double scale = 1.0) {
    demand_.account(from, false, false, scale, kWindow);
    demand_.account(to, true, true, scale, kWindow);
  }
  // Busy `busy_ms` at the start of each of `windows` windows starting with window `first`.
  void each_window(int first, int windows, double busy_ms, double scale = 1.0) {
    for (int w = first; w < first + windows; ++w) {
      const SimTime start = w * kWindow;
      busy(start, start + static_cast<SimTime>(busy_ms * kMs), scale);
    }
  }

  // The sum of the history's samples (ns).
  double history_sum() const {
    double sum = 0;
    for (double sample : demand_.history()) sum += sample;
    return sum;
  }

  WaltDemand demand_;
};

TEST_F(WaltDemandTest, NewTaskStartsAtFifteenPercentOfAWindow) {
  // init_new_task_load(): 15% of 16 ms = 2.4 ms of demand, 153.6 in capacity units.
  EXPECT_DOUBLE_EQ(demand_.demand(), 2.4 * kMs);
  EXPECT_DOUBLE_EQ(demand_.demand_scaled(kWindow), 153.6);
  for (double sample : demand_.history()) EXPECT_DOUBLE_EQ(sample, 2.4 * kMs);
}

TEST_F(WaltDemandTest, RunnableTimeCountsOnlyWhenItsWindowEnds) {
  // 4 ms runnable in window 0: the demand stays at its initial value until the window closes.
  busy(1 * kMillisecond, 5 * kMillisecond);
  demand_.account(10 * kMillisecond, false, false, 1.0, kWindow);
  EXPECT_DOUBLE_EQ(demand_.demand(), 2.4 * kMs);
  EXPECT_DOUBLE_EQ(demand_.window_sum(), 4 * kMs);
  // At the window's end the 4 ms sample enters; it is above the mean (4 + 4 x 2.4) / 5 = 2.72,
  // so the most recent sample is the demand: 4 / 16 x 1024 = 256.
  demand_.account(kWindow + kMillisecond, false, false, 1.0, kWindow);
  EXPECT_DOUBLE_EQ(demand_.demand(), 4 * kMs);
  EXPECT_DOUBLE_EQ(demand_.demand_scaled(kWindow), 256);
  EXPECT_DOUBLE_EQ(demand_.window_sum(), 0);
}

TEST_F(WaltDemandTest, DemandIsTheMaxOfTheRecentSampleAndTheMean) {
  // Five windows 8 ms busy, then one window 2 ms: history 8, 8, 8, 8, 2 has mean 6.8 ms,
  // more than the recent 2 ms, so the demand is the mean.
  each_window(0, 5, 8);
  each_window(5, 1, 2);
  demand_.account(6 * kWindow, false, false, 1.0, kWindow);
  EXPECT_DOUBLE_EQ(demand_.demand(), 6.8 * kMs);
  // One more window at 12 ms: the recent sample (12) beats the mean (8+8+8+2+12)/5 = 7.6.
  each_window(6, 1, 12);
  demand_.account(7 * kWindow, false, false, 1.0, kWindow);
  EXPECT_DOUBLE_EQ(demand_.demand(), 12 * kMs);
}

TEST_F(WaltDemandTest, ATaskBusyAQuarterOfEachWindowOnASilverCoreHasAQuarterOfItsCapacity) {
  // Busy 25% of every window on a CPU of capacity 307 at fmax (scale 307 / 1024): the demand
  // converges to 0.25 x 307 = 76.75 capacity units.
  const double scale = 307.0 / 1024.0;
  each_window(0, 10, 4, scale);
  demand_.account(10 * kWindow, false, false, scale, kWindow);
  EXPECT_NEAR(demand_.demand_scaled(kWindow), 76.75, 1e-9);
}

TEST_F(WaltDemandTest, WindowsWithoutRunnableTimeLeaveNoSample) {
  // After five windows at 8 ms the task sleeps ten windows: an empty window is no sample, so
  // the demand is still 8 ms when it wakes (it does not decay as PELT would).
  each_window(0, 5, 8);
  demand_.account(5 * kWindow, false, false, 1.0, kWindow);
  ASSERT_DOUBLE_EQ(demand_.demand(), 8 * kMs);
  demand_.account(15 * kWindow + kMillisecond, false, false, 1.0, kWindow);
  EXPECT_DOUBLE_EQ(demand_.demand(), 8 * kMs);
}

TEST_F(WaltDemandTest, RunnableAcrossWholeWindowsGivesFullSamples) {
  // Runnable from 12 ms to 56 ms: window 0 gets 4 ms, windows 1 and 2 are full (16 ms each),
  // window 3 has 8 ms so far. The demand is the last full sample: 16 ms = 1024.
  busy(12 * kMillisecond, 56 * kMillisecond);
  EXPECT_DOUBLE_EQ(demand_.demand(), 16 * kMs);
  EXPECT_DOUBLE_EQ(demand_.demand_scaled(kWindow), 1024);
  EXPECT_DOUBLE_EQ(demand_.window_sum(), 8 * kMs);
  // The history holds 4, 16, 16 and two of the initial 2.4 ms samples.
  EXPECT_DOUBLE_EQ(history_sum(), (4 + 16 + 16 + 2.4 + 2.4) * kMs);
}

TEST_F(WaltDemandTest, WholeWindowsOnAHalfCapacityCpuAreHalfWindowSamples) {
  // update_task_demand() pushes scale_exec_time(window_size, rq) for each whole window: a
  // window runnable on a CPU at half of the biggest CPU's capacity at fmax is an 8 ms sample,
  // not 16. Runnable from 12 ms to 56 ms at scale 0.5: window 0 gives 4 x 0.5 = 2 ms, windows
  // 1 and 2 give 8 ms each, window 3 has 4 ms so far. The demand is the recent 8 ms sample
  // (above the mean (2 + 8 + 8 + 2.4 + 2.4) / 5 = 4.56): 512 in capacity units.
  busy(12 * kMillisecond, 56 * kMillisecond, 0.5);
  EXPECT_DOUBLE_EQ(demand_.demand(), 8 * kMs);
  EXPECT_DOUBLE_EQ(demand_.demand_scaled(kWindow), 512);
  EXPECT_DOUBLE_EQ(demand_.window_sum(), 4 * kMs);
  EXPECT_DOUBLE_EQ(history_sum(), (2 + 8 + 8 + 2.4 + 2.4) * kMs);
}

TEST_F(WaltDemandTest, MoreWholeWindowsThanTheHistoryHoldsFillEverySlot) {
  // update_history() writes min(samples, RAVG_HIST_SIZE) copies of a whole-window sample.
  // Runnable from 12 ms to 112 ms: window 0 gives a 4 ms sample, then windows 1 to 6 are six
  // full 16 ms samples; five of them fill the history and push the 4 ms sample (and the
  // initial 2.4 ms ones) out, so every slot is 16 ms.
  busy(12 * kMillisecond, 7 * kWindow);
  EXPECT_DOUBLE_EQ(demand_.demand(), 16 * kMs);
  for (double sample : demand_.history()) EXPECT_DOUBLE_EQ(sample, 16 * kMs);
}

TEST_F(WaltDemandTest, WaitingCountsForDemandButNotForRunningTime) {
  // 6 ms waiting on a run queue then 2 ms running, in window 0: the demand's sample is 8 ms
  // (SCHED_ACCOUNT_WAIT_TIME), the window's running time (prev_window) 2 ms.
  demand_.account(kMillisecond, false, false, 1.0, kWindow);
  demand_.account(7 * kMillisecond, true, false, 1.0, kWindow);
  demand_.account(9 * kMillisecond, true, true, 1.0, kWindow);
  demand_.account(kWindow + kMillisecond, false, false, 1.0, kWindow);
  EXPECT_DOUBLE_EQ(demand_.demand(), 8 * kMs);
  EXPECT_DOUBLE_EQ(demand_.prev_window(), 2 * kMs);
}

TEST_F(WaltDemandTest, AtProjectsWithoutChangingTheTracker) {
  // at() answers as if the state continued to `now`; the tracker itself stays where it was.
  demand_.account(kMillisecond, false, false, 1.0, kWindow);
  const WaltDemand later = demand_.at(2 * kWindow, true, true, 1.0, kWindow);
  EXPECT_DOUBLE_EQ(later.demand(), 16 * kMs);
  EXPECT_EQ(demand_.mark(), kMillisecond);
  EXPECT_DOUBLE_EQ(demand_.demand(), 2.4 * kMs);
}

TEST(WaltWindowBusyTest, PreviousWindowHoldsTheLastCompleteWindow) {
  // Busy 3 ms of window 0 then 5 ms of window 1: in window 2 prev is 5 ms; after an idle
  // window in between prev is 0; busy through a whole window makes prev a full window.
  WaltWindowBusy busy;
  busy.reset(0);
  busy.account(kMillisecond, false, 1.0, kWindow);
  busy.account(4 * kMillisecond, true, 1.0, kWindow);
  busy.account(kWindow, false, 1.0, kWindow);
  busy.account(kWindow + 5 * kMillisecond, true, 1.0, kWindow);
  busy.account(2 * kWindow + kMillisecond, false, 1.0, kWindow);
  EXPECT_DOUBLE_EQ(busy.prev(), 5 * kMs);
  EXPECT_DOUBLE_EQ(busy.curr(), 0);
  EXPECT_DOUBLE_EQ(busy.at(4 * kWindow, false, 1.0, kWindow).prev(), 0);
  EXPECT_DOUBLE_EQ(busy.at(4 * kWindow + kMillisecond, true, 0.5, kWindow).prev(), 8 * kMs);
}

}  // namespace
}  // namespace bindersim::sched
