// The worked example of docs/selectors.md, "Writing a selector": a policy that is not shipped,
// written, registered and tested the way a shipped one is. The guide quotes this file and
// example_selector.cpp; example_selector_test.cpp checks that every quote still matches.
#pragma once

#include <memory>
#include <string_view>

#include "bindersim/selectors/registry.hpp"
#include "bindersim/selectors/selector.hpp"

namespace bindersim {
class JsonNode;
}

namespace bindersim::selectors {

inline constexpr std::string_view kIdleLastCpuName = "idle-last-cpu";

// Prefers a waiting thread whose last CPU is idle now, so that its wakeup finds that CPU free
// (no preemption, no wait behind another task); among several, the first in list order (the
// most recently idle). With none, the head, as fifo. It never nudges.
class IdleLastCpuSelector final : public Selector {
 public:
  IdleLastCpuSelector();

 protected:
  Selection do_select(const SelectionRequest& request, const MachineView& machine) override;
};

// Registry factory; takes no parameters (a non-empty params object is a ConfigError).
std::unique_ptr<Selector> make_idle_last_cpu_selector(const JsonNode* params);

// Adds the example to `registry`: the line register_builtin_selectors() would gain.
void register_example_selectors(SelectorRegistry& registry);

// For the tests: the built-in policies and the example. The example is added only when the
// built-ins lack it, so that a build with it among them (docs/selectors.md, section 4) runs the
// same tests.
SelectorRegistry builtin_and_example_selectors();

}  // namespace bindersim::selectors
