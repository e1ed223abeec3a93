#include "bindersim/selectors/ctabs.hpp"

#include <string>

#include "bindersim/common/error.hpp"
#include "bindersim/common/json_reader.hpp"
#include "bindersim/selectors/registry.hpp"
#include "bindersim/topology/topology.hpp"

namespace bindersim::selectors {

CtabsSelector::CtabsSelector(Nudge nudge)
    : Selector(std::string(nudge == Nudge::kOff ? kCtabsName : kCtabsNudgeName)), nudge_(nudge) {}

Selection CtabsSelector::do_select(const SelectionRequest& request, const MachineView& machine) {
  const topology::Topology& topology = machine.topology();
  const int caller_cluster = topology.cluster_of(request.caller_cpu);

  Selection selection;
  int best_score = -1;
  for (std::size_t i = 0; i < request.waiting.size(); ++i) {
    const int last_cpu = request.waiting[i].last_cpu;
    // Same CPU: taken at once, and no nudge (this also drops the nudge that an earlier
    // cluster match would have set in the patch).
    if (last_cpu == request.caller_cpu) return Selection{i, -1, false};
    BSIM_CHECK(last_cpu >= -1 && last_cpu < topology.num_cpus());
    const int score = last_cpu >= 0 && topology.cluster_of(last_cpu) == caller_cluster ? 1 : 0;
    // Strictly greater: among equal scores the first in list order stays.
    if (score > best_score) {
      best_score = score;
      selection.index = i;
    }
  }

  if (nudge_ != Nudge::kOff && best_score == 1) {
    if (nudge_ == Nudge::kAlways || machine.available_idle_cpu(request.caller_cpu)) {
      selection.preferred_cpu = request.caller_cpu;
    } else {
      selection.nudge_declined = true;
    }
  }
  return selection;
}

std::string CtabsSelector::non_default_params() const {
  return nudge_ == Nudge::kAlways ? R"({"check_caller_idle":false})" : "";
}

std::unique_ptr<Selector> make_ctabs_selector(const JsonNode* params) {
  expect_no_params(params);
  return std::make_unique<CtabsSelector>(CtabsSelector::Nudge::kOff);
}

std::unique_ptr<Selector> make_ctabs_nudge_selector(const JsonNode* params) {
  bool check_caller_idle = true;
  if (params != nullptr && !params->is_null()) {
    ObjectReader reader(*params);
    check_caller_idle = reader.bool_or("check_caller_idle", true);
    reader.finish();
  }
  return std::make_unique<CtabsSelector>(check_caller_idle ? CtabsSelector::Nudge::kCallerIdle
                                                           : CtabsSelector::Nudge::kAlways);
}

}  // namespace bindersim::selectors
