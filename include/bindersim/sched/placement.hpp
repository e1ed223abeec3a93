// Wakeup placement policies: where try_to_wake_up() puts a task. `mainline` follows the
// upstream fair-class (wake_affine + select_idle_sibling / select_idle_capacity) and RT-class
// (find_lowest_rq) paths of KERNEL.md section 2.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bindersim/sched/scheduler.hpp"

namespace bindersim::sched {

class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  virtual std::string_view name() const = 0;
  // The CPU for `tid` waking with prev_cpu = its wake_cpu. May update wakeup bookkeeping of
  // the waker and wakee (recent_used_cpu, wakee flips), as the kernel does.
  virtual int select_cpu(Scheduler& sched, int tid, int prev_cpu, const WakeContext& ctx) = 0;
};

// Upstream placement (no energy model, or an overutilized system).
class MainlinePlacement : public PlacementPolicy {
 public:
  std::string_view name() const override { return "mainline"; }
  int select_cpu(Scheduler& sched, int tid, int prev_cpu, const WakeContext& ctx) override;

  // The steps, public for unit tests.
  static int select_task_rq_fair(Scheduler& sched, int tid, int prev_cpu, const WakeContext& ctx);
  static int select_task_rq_rt(const Scheduler& sched, int tid, int cpu, const WakeContext& ctx);
  static bool wake_wide(const Scheduler& sched, int waker_tid, int wakee_tid);
  static int wake_affine(const Scheduler& sched, int tid, int this_cpu, int prev_cpu, bool sync,
                         int waker_tid);
  static int select_idle_sibling(Scheduler& sched, int tid, int prev_cpu, int target);
  // First idle CPU that fits the task scanning from `target` (wrapping), else the idle CPU
  // with the most capacity, else -1.
  static int select_idle_capacity(const Scheduler& sched, int tid, int target);
  static int find_lowest_rq(const Scheduler& sched, int tid, int this_cpu);
  // util_fits_cpu(): utilisation with a 20% margin fits the CPU's capacity.
  static bool fits_capacity(double util, int capacity) { return util * 1280.0 < capacity * 1024.0; }
};

// Names of the built-in placement policies, and a factory; an unknown name is a ConfigError.
std::vector<std::string> placement_names();
std::unique_ptr<PlacementPolicy> make_placement(const std::string& name);

}  // namespace bindersim::sched
