#include "bindersim/sched/util_est.hpp"

#include <cstdlib>

namespace bindersim::sched {
namespace {

bool within_margin(int value) { return std::abs(value) < UtilEstimate::kMargin; }

}  // namespace

void UtilEstimate::on_sleep(engine::SimTime now, const UtilEstSample& sample) {
  const bool recomputed =
      stored_at_ == engine::kNever || now / kPeltPeriodNs != stored_at_ / kPeltPeriodNs;
  if (!recomputed) return;
  // The update works on a copy: the early returns below store nothing, not even the sample.
  const int enqueued = sample.util;
  int ewma = ewma_;
  if (ewma < enqueued) {
    ewma = enqueued;  // UTIL_EST_FASTUP: an increase is taken at once
  } else {
    const int ewma_diff = enqueued - ewma;
    if (within_margin(ewma_diff)) {
      // The average is close already; store only a sample that moved by the margin or more.
      if (within_margin(enqueued_ - enqueued)) return;
    } else if (sample.util > sample.capacity_orig) {
      return;  // no idle time seen on this CPU: the sample may underestimate the task
    } else if (enqueued + kMargin >= sample.runnable) {
      // The task got the CPU time it wanted: the sample is a fair one for the average.
      // ewma += (sample - ewma) / 4, in the kernel's integer steps.
      ewma = (4 * ewma + ewma_diff) >> 2;
    }
  }
  enqueued_ = enqueued;
  ewma_ = ewma;
  stored_at_ = now;
}

}  // namespace bindersim::sched
