// The kernel's default binder thread selection ("fifo" in the CTABS cover letter).
#pragma once

#include <memory>
#include <string_view>

#include "bindersim/selectors/selector.hpp"

namespace bindersim {
class JsonNode;
}

namespace bindersim::selectors {

inline constexpr std::string_view kFifoName = "fifo";

// Takes the head of waiting_threads (binder_select_thread_ilocked()): with head insertion, the
// thread that went idle most recently. Never nudges.
class FifoSelector final : public Selector {
 public:
  FifoSelector() : Selector(std::string(kFifoName)) {}

 protected:
  Selection do_select(const SelectionRequest& request, const MachineView& machine) override;
};

// Registry factory; fifo takes no parameters (a non-empty params object is a ConfigError).
std::unique_ptr<Selector> make_fifo_selector(const JsonNode* params);

}  // namespace bindersim::selectors
