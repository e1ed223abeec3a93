#include "example_selector.hpp"

#include <string>

namespace bindersim::selectors {

IdleLastCpuSelector::IdleLastCpuSelector() : Selector(std::string(kIdleLastCpuName)) {}

Selection IdleLastCpuSelector::do_select(const SelectionRequest& request,
                                         const MachineView& machine) {
  Selection selection;
  if (request.waiting.empty()) return selection;  // no pick: the work waits on the process
  selection.index = 0;                            // the head, unless a last CPU is idle
  for (std::size_t i = 0; i < request.waiting.size(); ++i) {
    const int last_cpu = request.waiting[i].last_cpu;  // -1: not known yet
    if (last_cpu >= 0 && machine.available_idle_cpu(last_cpu)) {
      selection.index = i;
      break;
    }
  }
  return selection;
}

std::unique_ptr<Selector> make_idle_last_cpu_selector(const JsonNode* params) {
  expect_no_params(params);
  return std::make_unique<IdleLastCpuSelector>();
}

void register_example_selectors(SelectorRegistry& registry) {
  registry.add(std::string(kIdleLastCpuName),
               "prefer an idle thread whose last CPU is idle now; else the head, as fifo",
               make_idle_last_cpu_selector);
}

SelectorRegistry builtin_and_example_selectors() {
  SelectorRegistry registry;
  register_builtin_selectors(registry);
  if (!registry.contains(std::string(kIdleLastCpuName))) register_example_selectors(registry);
  return registry;
}

}  // namespace bindersim::selectors
