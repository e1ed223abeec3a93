// WALT's window-based load tracking (Qualcomm's vendor scheduler, kernel/sched/walt/walt.c):
// a task's demand from its runnable time in fixed windows, and a CPU's busy time per window.
#pragma once

#include <array>
#include <cstdint>

#include "bindersim/engine/time.hpp"

namespace bindersim::sched {

using engine::SimTime;

// WALT's defaults on a 6.1 msm-kernel (walt.h, sysctl.c walt_tunables()).
struct WaltTunables {
  // sched_ravg_window: DEFAULT_SCHED_RAVG_WINDOW, 16 ms with HZ=250 (4 ticks; the GKI defconfig
  // has HZ=250). Windows start at multiples of it from time 0, on every CPU alike.
  SimTime window_ns = 16 * engine::kMillisecond;
  // sysctl_sched_init_task_load_pct: a new task starts with 15% of a window of demand.
  int init_task_load_pct = 15;
};

// The number of windows of history (RAVG_HIST_SIZE in include/linux/sched/walt.h).
inline constexpr int kWaltHistorySize = 5;

// Busy time of one entity in the current and the previous window, in scaled nanoseconds (wall
// time x the CPU's capacity x f / fmax / 1024: scale_exec_time()). For a CPU (its
// curr/prev_runnable_sum) busy means running a task; for a task (curr/prev_window) running.
class WaltWindowBusy {
 public:
  // Accounts [mark, now) as busy or not at `scale` (0..1), rolling the windows over. Time
  // never goes back; a call with now <= mark does nothing.
  void account(SimTime now, bool busy, double scale, SimTime window);
  // The values this counter would have at `now` if its state since the mark continued.
  WaltWindowBusy at(SimTime now, bool busy, double scale, SimTime window) const {
    WaltWindowBusy copy = *this;
    copy.account(now, busy, scale, window);
    return copy;
  }
  double curr() const { return curr_; }
  double prev() const { return prev_; }
  SimTime mark() const { return mark_; }
  void reset(SimTime now) {
    *this = WaltWindowBusy{};
    mark_ = now;
  }

 private:
  SimTime mark_ = 0;
  double curr_ = 0;
  double prev_ = 0;
};

// A task's demand (walt.c update_task_demand() and update_history(), policy
// WINDOW_STATS_MAX_RECENT_AVG): the task's runnable time (running or waiting on a run queue:
// SCHED_ACCOUNT_WAIT_TIME) in each window, scaled by the capacity and frequency of the CPU it
// was on, is a sample; windows without any runnable time leave no sample; the demand is the
// larger of the most recent sample and the mean of the last kWaltHistorySize samples.
// demand_scaled() is the demand in capacity units: demand x 1024 / window (a task runnable a
// whole window on the biggest CPU at fmax has 1024). Also keeps the task's running time in
// the current and previous window (wts->curr_window / prev_window), which WALT's energy
// estimate moves with the task.
class WaltDemand {
 public:
  // A new task at `now`: every history sample and the demand are init_task_load_pct of a
  // window (init_new_task_load()).
  void reset(SimTime now, const WaltTunables& tunables);
  // Accounts [mark, now): runnable (running or waiting) and running at `scale` (0..1) of the
  // CPU's capacity at fmax; closes the windows that ended. `running` implies `runnable`.
  void account(SimTime now, bool runnable, bool running, double scale, SimTime window);
  // This tracker as it would be at `now` if the task's state since the mark continued.
  WaltDemand at(SimTime now, bool runnable, bool running, double scale, SimTime window) const {
    WaltDemand copy = *this;
    copy.account(now, runnable, running, scale, window);
    return copy;
  }
  // Demand in scaled nanoseconds per window, and in capacity units (0..1024).
  double demand() const { return demand_; }
  double demand_scaled(SimTime window) const {
    return demand_ * 1024.0 / static_cast<double>(window);
  }
  // Running time in the previous window (scaled ns).
  double prev_window() const { return busy_.prev(); }
  // Runnable time accounted in the current window so far (scaled ns).
  double window_sum() const { return sum_; }
  SimTime mark() const { return mark_; }
  const std::array<double, kWaltHistorySize>& history() const { return history_; }

 private:
  void push_sample(double runtime, std::int64_t samples);

  SimTime mark_ = 0;
  double sum_ = 0;
  double demand_ = 0;
  std::array<double, kWaltHistorySize> history_{};
  int next_ = 0;  // history slot the next sample goes to (wts->cidx)
  WaltWindowBusy busy_;
};

}  // namespace bindersim::sched
