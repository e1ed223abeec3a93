#include "bindersim/stats/result.hpp"

namespace bindersim::stats {

std::string_view sched_class_name(SchedClass c) {
  switch (c) {
    case SchedClass::kFifo:
      return "sched_fifo";
    case SchedClass::kOther:
      return "sched_other";
  }
  BSIM_CHECK_MSG(false, "unknown scheduling class");
  return {};
}

std::string_view sched_class_label(SchedClass c) {
  return c == SchedClass::kFifo ? "SCHED_FIFO" : "SCHED_OTHER";
}

std::string_view tier_label(Tier t) {
  switch (t) {
    case Tier::kSameCore:
      return "same core";
    case Tier::kSameCluster:
      return "same cluster";
    case Tier::kCrossCluster:
      return "cross cluster";
  }
  return "?";
}

std::string_view tier_name(Tier t) {
  switch (t) {
    case Tier::kSameCore:
      return "same_core";
    case Tier::kSameCluster:
      return "same_cluster";
    case Tier::kCrossCluster:
      return "cross_cluster";
  }
  BSIM_CHECK_MSG(false, "unknown tier");
  return {};
}

double RunResult::per_second() const {
  if (simulated_ns <= 0) return 0.0;
  return static_cast<double>(completed) * 1e9 / static_cast<double>(simulated_ns);
}

}  // namespace bindersim::stats

namespace bindersim::stats {

double LockStats::contended_share() const {
  return acquisitions == 0 ? 0.0
                           : static_cast<double>(contended) / static_cast<double>(acquisitions);
}

}  // namespace bindersim::stats
