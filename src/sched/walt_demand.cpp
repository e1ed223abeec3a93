#include "bindersim/sched/walt_demand.hpp"

#include <algorithm>

#include "bindersim/common/error.hpp"

namespace bindersim::sched {
namespace {

// Start of the window that contains `t`.
SimTime window_start(SimTime t, SimTime window) { return t / window * window; }

}  // namespace

// update_cpu_busy_time() for one entity: time up to the first window boundary goes to the
// window that ends there; a span that covers whole windows makes the previous window full;
// the rest starts the current one.
void WaltWindowBusy::account(SimTime now, bool busy, double scale, SimTime window) {
  if (now <= mark_) return;
  const SimTime start = window_start(mark_, window);
  const SimTime now_start = window_start(now, window);
  const double rate = busy ? scale : 0.0;
  if (now_start == start) {
    curr_ += static_cast<double>(now - mark_) * rate;
  } else {
    const bool full_window = now_start - start > window;  // a whole window passed in between
    const double ended = curr_ + static_cast<double>(start + window - mark_) * rate;
    prev_ = full_window ? static_cast<double>(window) * rate : ended;
    curr_ = static_cast<double>(now - now_start) * rate;
  }
  mark_ = now;
}

void WaltDemand::reset(SimTime now, const WaltTunables& tunables) {
  const double init = static_cast<double>(tunables.window_ns) * tunables.init_task_load_pct / 100.0;
  mark_ = now;
  sum_ = 0;
  demand_ = init;
  history_.fill(init);
  next_ = 0;
  busy_.reset(now);
}

// update_history(): `samples` copies of `runtime` enter the ring; the demand is
// max(mean of the ring, runtime) (WINDOW_STATS_MAX_RECENT_AVG). An empty window is no sample.
void WaltDemand::push_sample(double runtime, std::int64_t samples) {
  if (runtime <= 0 || samples <= 0) return;
  for (std::int64_t i = 0; i < std::min<std::int64_t>(samples, kWaltHistorySize); ++i) {
    history_[static_cast<std::size_t>(next_)] = runtime;
    next_ = (next_ + 1) % kWaltHistorySize;
  }
  double sum = 0;
  for (double sample : history_) sum += sample;
  demand_ = std::max(sum / kWaltHistorySize, runtime);
}

// update_task_demand(): runnable time is added to the window's sum (capped at a window); when
// windows end the sum becomes a sample, whole windows spent runnable are full samples, and the
// remainder starts the new window. Sleeping time closes the window with what it had.
void WaltDemand::account(SimTime now, bool runnable, bool running, double scale, SimTime window) {
  BSIM_CHECK(runnable || !running);
  busy_.account(now, running, scale, window);
  if (now <= mark_) return;
  const SimTime start = window_start(mark_, window);
  const SimTime now_start = window_start(now, window);
  const double rate = runnable ? scale : 0.0;
  const auto cap = static_cast<double>(window);
  if (now_start == start) {
    sum_ = std::min(cap, sum_ + static_cast<double>(now - mark_) * rate);
  } else {
    sum_ = std::min(cap, sum_ + static_cast<double>(start + window - mark_) * rate);
    push_sample(sum_, 1);
    const std::int64_t full_windows = (now_start - start) / window - 1;
    if (runnable) push_sample(cap * scale, full_windows);
    sum_ = static_cast<double>(now - now_start) * rate;
  }
  mark_ = now;
}

}  // namespace bindersim::sched
