// util_est: what a fair task's utilisation was when it last went to sleep, and a slowly falling
// average of those values (the kernel's UTIL_EST and UTIL_EST_FASTUP scheduler features, on by
// default; util_est_update() in kernel/sched/fair.c, android12-5.10 and 6.1). PELT's
// utilisation decays while a task sleeps; the estimate does not, so a task that wakes up is
// seen at the size it had when it last ran.
#pragma once

#include <algorithm>
#include <cstdint>

#include "bindersim/engine/time.hpp"

namespace bindersim::sched {

// Inputs of one update, in capacity units truncated to integers as the kernel's averages are.
struct UtilEstSample {
  int util = 0;           // task_util(): the task's PELT utilisation at the dequeue
  int runnable = 0;       // task_runnable(): its runnable average in the same units
  int capacity_orig = 0;  // capacity_orig_of() the CPU it ran on
};

class UtilEstimate {
 public:
  // The kernel's margin: changes within 1% of SCHED_CAPACITY_SCALE are not worth a store.
  static constexpr int kMargin = 1024 / 100;
  // The kernel's PELT recomputes util_avg once per period of 1024 us.
  static constexpr engine::SimTime kPeltPeriodNs = 1024 * engine::kMicrosecond;

  // _task_util_est(): the larger of the moving average and the last sample.
  int value() const { return std::max(ewma_, enqueued_); }
  int enqueued() const { return enqueued_; }
  int ewma() const { return ewma_; }

  // util_est_update() for a dequeue because the task sleeps, at `now`. Skipped when its
  // utilisation has not been recomputed since the last stored update: no PELT period boundary
  // passed since then (a wall-clock grid of 1024 us; the kernel's PELT clock is per run queue
  // and runs slower on small or slow CPUs).
  void on_sleep(engine::SimTime now, const UtilEstSample& sample);

 private:
  int enqueued_ = 0;  // ue.enqueued: the utilisation at the last stored update
  int ewma_ = 0;      // ue.ewma: its moving average with weight 1/4 for new samples
  // UTIL_AVG_UNCHANGED: set by a stored update, at this time; kNever when not set.
  engine::SimTime stored_at_ = engine::kNever;
};

}  // namespace bindersim::sched
