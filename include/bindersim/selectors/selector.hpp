// The binder thread-selection policy: which idle looper of the target process gets new work,
// and an optional preferred wake CPU (the CTABS wake_cpu nudge).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include <spdlog/fwd.h>

#include "bindersim/stats/result.hpp"

namespace bindersim::topology {
class Topology;
}

namespace bindersim::selectors {

// An idle thread of the target process, as the selector sees it.
struct IdleThread {
  int tid = -1;
  // CPU it resumed on after its last binder wait (for work or for a reply), or of its last
  // read that found work at once; -1 until either happens.
  int last_cpu = -1;
};

// Read-only view of the simulated machine at the moment of selection.
class MachineView {
 public:
  virtual ~MachineView() = default;
  // The kernel's available_idle_cpu(): the CPU runs its idle task and has nothing queued.
  virtual bool available_idle_cpu(int cpu) const = 0;
  virtual const topology::Topology& topology() const = 0;
};

struct SelectionRequest {
  // proc->waiting_threads in list order, head first.
  std::span<const IdleThread> waiting;
  // CPU of the thread that asks, running there: the sender of the transaction or, for work
  // left on the process's list, the thread that wakes a looper for it. A CPU of the topology.
  int caller_cpu = -1;
  // The wakeup that follows is a sync wakeup (two-way call). Policies do not need to look at
  // it: a nudge is returned either way, and the driver applies it to wake_cpu only on a sync
  // wakeup (the CTABS patch: non-sync wakeups never nudge).
  bool sync = true;
};

// A policy's answer. Invariants checked by Selector::select(): index is nullopt exactly when
// `waiting` is empty (a policy must pick when a thread is idle); preferred_cpu is -1 or a CPU
// of the topology; a nudge or a declined nudge comes only with a pick, and never both.
struct Selection {
  std::optional<std::size_t> index;  // into SelectionRequest::waiting; nullopt: none idle
  int preferred_cpu = -1;            // nudge for wake_cpu; -1: none (returned even if !sync)
  bool nudge_declined = false;       // the policy would have nudged but the caller CPU was busy
};

// Base of every policy, in the non-virtual-interface shape: select() checks the policy's
// answer, counts it by reason into SelectionCounts and logs it; do_select() is all a policy
// writes.
class Selector {
 public:
  virtual ~Selector() = default;
  Selector(const Selector&) = delete;
  Selector& operator=(const Selector&) = delete;

  // Asks the policy, checks its answer (a broken contract aborts through BSIM_CHECK), counts
  // it and logs it at debug level. The answer is returned as the policy gave it; in particular
  // preferred_cpu is returned on non-sync requests too, and the driver must not apply it then.
  Selection select(const SelectionRequest& request, const MachineView& machine);

  const std::string& name() const { return name_; }
  // Counts of decisions by reason, and of nudges declined (nudges_applied is counted by the
  // driver, which alone knows whether the wakeup was sync). A decision is same_cpu when the
  // chosen thread's last_cpu is the caller's CPU, same_cluster when it is in the caller's
  // topology cluster, other otherwise (including last_cpu == -1), none_idle for no pick.
  // Declined nudges are counted whatever request.sync says.
  const stats::SelectionCounts& counts() const { return counts_; }

  // Logger for debug-level decision records; nullptr (the default) logs nothing.
  void set_logger(std::shared_ptr<spdlog::logger> logger) { logger_ = std::move(logger); }

  // The parameters in which this policy differs from its defaults, as a compact JSON object
  // with sorted keys (what a result records as selector_params); "" when it runs with its
  // defaults, whether or not they were spelled out. A policy with parameters overrides it; its
  // factory must build an equal policy from this text.
  virtual std::string non_default_params() const { return ""; }

 protected:
  explicit Selector(std::string name) : name_(std::move(name)) {}
  virtual Selection do_select(const SelectionRequest& request, const MachineView& machine) = 0;

 private:
  std::string name_;
  stats::SelectionCounts counts_;
  std::shared_ptr<spdlog::logger> logger_;
};

}  // namespace bindersim::selectors
