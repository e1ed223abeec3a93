#include "bindersim/selectors/selector.hpp"

#include <spdlog/spdlog.h>

#include "bindersim/common/error.hpp"
#include "bindersim/topology/topology.hpp"

namespace bindersim::selectors {
namespace {

bool is_cpu(const topology::Topology& topology, int cpu) {
  return cpu >= 0 && cpu < topology.num_cpus();
}

}  // namespace

Selection Selector::select(const SelectionRequest& request, const MachineView& machine) {
  const topology::Topology& topology = machine.topology();
  BSIM_CHECK(is_cpu(topology, request.caller_cpu));

  const Selection selection = do_select(request, machine);
  // Debug records are formatted only when the logger's level lets them through (the check is
  // inline; the logging call is not).
  const bool debug_logging = logger_ && logger_->should_log(spdlog::level::debug);

  // The policy's contract (see Selection).
  BSIM_CHECK_MSG(selection.index.has_value() != request.waiting.empty(),
                 "a selector must pick exactly when a thread is idle");
  BSIM_CHECK(selection.preferred_cpu == -1 || is_cpu(topology, selection.preferred_cpu));
  BSIM_CHECK(!(selection.preferred_cpu >= 0 && selection.nudge_declined));

  if (!selection.index) {
    BSIM_CHECK(selection.preferred_cpu == -1 && !selection.nudge_declined);
    ++counts_.none_idle;
    if (debug_logging)
      SPDLOG_LOGGER_DEBUG(logger_, "{}: caller cpu {}: no idle thread", name_, request.caller_cpu);
    return selection;
  }
  BSIM_CHECK(*selection.index < request.waiting.size());
  const IdleThread& chosen = request.waiting[*selection.index];
  BSIM_CHECK(chosen.last_cpu == -1 || is_cpu(topology, chosen.last_cpu));

  if (chosen.last_cpu == request.caller_cpu) {
    ++counts_.same_cpu;
  } else if (chosen.last_cpu != -1 &&
             topology.cluster_of(chosen.last_cpu) == topology.cluster_of(request.caller_cpu)) {
    ++counts_.same_cluster;
  } else {
    ++counts_.other;
  }
  if (selection.nudge_declined) ++counts_.nudges_declined;

  if (debug_logging) {
    SPDLOG_LOGGER_DEBUG(logger_,
                        "{}: caller cpu {}: thread {} (index {} of {}, last cpu {}), preferred cpu "
                        "{}{}",
                        name_, request.caller_cpu, chosen.tid, *selection.index,
                        request.waiting.size(), chosen.last_cpu, selection.preferred_cpu,
                        selection.nudge_declined ? ", nudge declined" : "");
  }
  return selection;
}

}  // namespace bindersim::selectors
