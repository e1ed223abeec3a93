// Wakeup placement policies: where try_to_wake_up() puts a task. `mainline` follows the
// upstream fair-class (wake_affine + select_idle_sibling / select_idle_capacity) and RT-class
// (find_lowest_rq) paths of kernel/sched/fair.c and rt.c; `gki` adds Android's energy-aware path
// with its sync rules. docs/model.md explains both.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bindersim/sched/scheduler.hpp"
#include "bindersim/topology/topology.hpp"

namespace bindersim::sched {

class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  virtual std::string_view name() const = 0;
  // The CPU for `tid` waking with prev_cpu = its wake_cpu. May update wakeup bookkeeping of
  // the waker and wakee (recent_used_cpu, wakee flips), as the kernel does.
  virtual int select_cpu(Scheduler& sched, int tid, int prev_cpu, const WakeContext& ctx) = 0;
  // Energy-aware placement: with an energy model and no overutilisation the kernel skips load
  // balancing.
  virtual bool energy_aware() const { return false; }
  // The scheduler keeps WALT's window-based demand of tasks and CPUs (Scheduler::walt_*).
  virtual bool tracks_walt_demand() const { return false; }
  // Load balancing: whether `dst_cpu` may pull a queued fair task from `src_cpu`, which runs at
  // least two tasks. By default every balance may.
  virtual bool may_pull(const Scheduler& /*sched*/, int /*src_cpu*/, int /*dst_cpu*/,
                        BalanceKind /*kind*/) const {
    return true;
  }
  // Whether a CPU whose idle periods are short (the kernel's avg_idle test) balances at all
  // when it goes idle; if so, may_pull() is asked with kNewIdleShortIdle. By default not.
  virtual bool pulls_after_short_idle() const { return false; }
  // Whether the scheduler's mainline misfit migration applies (WALT has its own, not modelled).
  virtual bool migrates_misfit() const { return true; }
  // find_lowest_rq(): where RT push and pull move a waiting RT task, one of the CPUs of the
  // lowest RT priority level below the task's (`this_cpu` preferred after the task's own);
  // -1 when there is none. By default mainline's choice.
  virtual int lowest_rq(const Scheduler& sched, int tid, int this_cpu) const;
  // An Android kernel: enqueue_task_rt() keeps an RT wakee that the RT sync rule holds with its
  // waker off the pushable list (Task::rt_pushable()). Mainline has no such rule.
  virtual bool honors_rt_sync() const { return false; }
};

// Upstream placement (no energy model, or an overutilized system).
class MainlinePlacement : public PlacementPolicy {
 public:
  std::string_view name() const override { return "mainline"; }
  int select_cpu(Scheduler& sched, int tid, int prev_cpu, const WakeContext& ctx) override;

  // The steps, public for unit tests.
  // `wakee_recorded`: record_wakee() already ran for this wakeup.
  static int select_task_rq_fair(Scheduler& sched, int tid, int prev_cpu, const WakeContext& ctx,
                                 bool wakee_recorded = false);
  static void record_wakee(Scheduler& sched, int waker_tid, int wakee_tid);
  static int select_task_rq_rt(const Scheduler& sched, int tid, int cpu, const WakeContext& ctx);
  static bool wake_wide(const Scheduler& sched, int waker_tid, int wakee_tid);
  static int wake_affine(const Scheduler& sched, int tid, int this_cpu, int prev_cpu, bool sync,
                         int waker_tid);
  static int select_idle_sibling(Scheduler& sched, int tid, int prev_cpu, int target);
  // First idle CPU that fits the task scanning from `target` (wrapping), else the idle CPU
  // with the most capacity, else -1.
  static int select_idle_capacity(const Scheduler& sched, int tid, int target);
  // find_idlest_cpu() when no CPU is idle: the allowed CPU running the fewest tasks, the first
  // such scanning from `from` (wrapping). The kernel picks the least loaded CPU; a new task
  // counts its full weight from its fork (init_entity_runnable_average()), so among CPUs of
  // new tasks, as at start-up, that is the one running the fewest.
  static int least_loaded_cpu(const Scheduler& sched, int tid, int from);
  static int find_lowest_rq(const Scheduler& sched, int tid, int this_cpu);
  // util_fits_cpu(): utilisation with a 20% margin fits the CPU's capacity.
  static bool fits_capacity(double util, double capacity) {
    return util * 1280.0 < capacity * 1024.0;
  }
};

// Android GKI placement: with an energy model and no overutilisation, fair wakeups go through
// find_energy_efficient_cpu() after the "honor sync" rule; RT wakeups first try the RT sync
// rule; otherwise the mainline paths.
class GkiPlacement : public PlacementPolicy {
 public:
  std::string_view name() const override { return "gki"; }
  int select_cpu(Scheduler& sched, int tid, int prev_cpu, const WakeContext& ctx) override;
  bool energy_aware() const override { return true; }
  bool honors_rt_sync() const override { return true; }

  // The steps, public for unit tests.
  // The CPU energy-aware placement chooses, or -1 when it does not decide (no energy model, or
  // overutilised): the mainline path then runs.
  static int find_energy_efficient_cpu(const Scheduler& sched, int tid, int prev_cpu,
                                       const WakeContext& ctx);
  // "Unconditionally honor sync flag": a sync waker alone on its CPU, the wakee allowed there
  // and fitting its capacity.
  static bool honor_sync(const Scheduler& sched, int tid, const WakeContext& ctx);
  // should_honor_rt_sync(): a sync wakeup from an RT waker whose CPU runs at most 2 RT tasks,
  // the wakee at least as important as the next queued one.
  static bool honor_rt_sync(const Scheduler& sched, int tid, const WakeContext& ctx);
  // Fair utilisation of `cpu` if the task ran on `dst_cpu` (-1: nowhere).
  static double cpu_util_next(const Scheduler& sched, int cpu, int tid, int dst_cpu);
  // Estimated energy of a cluster with the task placed on `dst_cpu` (-1: outside it).
  static double compute_energy(const Scheduler& sched, int cluster, int tid, int dst_cpu);
  // em_cpu_energy(): energy of a performance domain whose busiest CPU has `max_util` and
  // whose CPUs sum to `sum_util`, at scale `scale_cpu` (the domain's capacity).
  static double em_cpu_energy(const topology::FrequencyDomain& domain, double max_util,
                              double sum_util, double scale_cpu);
};

// Names of the built-in placement policies, and a factory; an unknown name is a ConfigError.
std::vector<std::string> placement_names();
std::unique_ptr<PlacementPolicy> make_placement(const std::string& name);

}  // namespace bindersim::sched
