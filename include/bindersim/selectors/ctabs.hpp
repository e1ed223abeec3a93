// The CTABS cluster/topology-aware binder thread selection, with and without the wake_cpu nudge.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "bindersim/selectors/selector.hpp"

namespace bindersim {
class JsonNode;
}

namespace bindersim::selectors {

inline constexpr std::string_view kCtabsName = "ctabs";
inline constexpr std::string_view kCtabsNudgeName = "ctabs-nudge";

// Implements the CTABS patch's selection. Walks waiting_threads from the head: a thread whose
// last_cpu is the caller's CPU is taken at once; otherwise a thread scores 1 when its last_cpu
// is in the caller's cluster and 0 otherwise (also when it never ran), and the first thread
// with the highest score wins, so with no match the answer is the head, as with fifo.
// With the nudge (patch 2), a win by cluster match sets preferred_cpu = caller_cpu when
// available_idle_cpu(caller_cpu), and reports a declined nudge when that CPU is busy; a
// same-CPU early exit never nudges. The nudge without that check (kAlways) sets it on every
// win by cluster match: the variant that counts on a sync wakeup's caller going to sleep.
class CtabsSelector final : public Selector {
 public:
  enum class Nudge {
    kOff,         // ctabs
    kCallerIdle,  // ctabs-nudge, as patched: only when available_idle_cpu(caller_cpu)
    kAlways,      // ctabs-nudge with "check_caller_idle": false
  };

  explicit CtabsSelector(Nudge nudge);

  bool nudges() const { return nudge_ != Nudge::kOff; }
  std::string non_default_params() const override;

 protected:
  Selection do_select(const SelectionRequest& request, const MachineView& machine) override;

 private:
  Nudge nudge_;
};

// Registry factories. ctabs takes no parameters (a non-empty params object is a ConfigError);
// ctabs-nudge takes one, "check_caller_idle" (a bool, true by default: the patch's
// available_idle_cpu(caller_cpu) check; false: Nudge::kAlways).
std::unique_ptr<Selector> make_ctabs_selector(const JsonNode* params);
std::unique_ptr<Selector> make_ctabs_nudge_selector(const JsonNode* params);

}  // namespace bindersim::selectors
