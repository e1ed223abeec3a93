// The `walt` placement: Qualcomm's WALT vendor scheduler (msm-kernel 6.1,
// kernel/sched/walt/walt_cfs.c, walt_rt.c, walt_lb.c) as it replaces CFS and RT task placement
// and restricts load balancing through vendor hooks. docs/model.md lists what is modelled.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "bindersim/sched/placement.hpp"

namespace bindersim::sched {

class WaltPlacement : public PlacementPolicy {
 public:
  std::string_view name() const override { return "walt"; }
  int select_cpu(Scheduler& sched, int tid, int prev_cpu, const WakeContext& ctx) override;
  bool tracks_walt_demand() const override { return true; }
  bool may_pull(const Scheduler& sched, int src_cpu, int dst_cpu, BalanceKind kind) const override;
  bool pulls_after_short_idle() const override { return true; }
  // WALT's own misfit handling (walt_lb_tick) is not modelled; mainline's does not run under it.
  bool migrates_misfit() const override { return false; }
  bool honors_rt_sync() const override { return true; }  // the kernel's enqueue_task_rt()

  // Defaults of the sysctls the placement reads (walt_tunables(), walt_cfs.c, walt_get_indicies).
  // sched_upmigrate 95% and sched_downmigrate 85%: capacity margins 1078 and 1205 (/1024).
  static constexpr double kMarginUp = 1078;
  static constexpr double kMarginDown = 1205;
  // MIN_UTIL_FOR_ENERGY_EVAL: a task of at least this demand that fits the smallest cluster
  // also looks at the next one ("region 2"; sched_suppress_region2 is 0).
  static constexpr double kMinUtilForEnergyEval = 52;
  // SMALL_TASK_THRESHOLD of walt_lb.c.
  static constexpr double kSmallTaskThreshold = 102;
  // DIRE_STRAITS_PREV_NR_LIMIT: prev is the last resort only with fewer runnable tasks.
  static constexpr int kDireStraitsPrevNrLimit = 10;

  // The steps, public for unit tests. Clusters are ranked by capacity (0 = smallest).
  // cpu_util(): WALT's cumulative runnable demand, capped at the CPU's capacity.
  static double cpu_util(const Scheduler& sched, int cpu);
  // __cpu_overutilized(cpu, delta): util + delta above capacity / margin_up.
  static bool cpu_overutilized(const Scheduler& sched, int cpu, double delta);
  // task_fits_capacity() / task_demand_fits(): the task's demand fits `dst_cpu` with the
  // up- or downmigrate margin (from the CPU the task last ran on); the biggest cluster always.
  static bool task_demand_fits(const Scheduler& sched, int tid, int dst_cpu);
  struct Indices {
    int order_index = 0;  // rank of the cluster the search starts at
    int end_index = 0;    // the search goes on at least through this many more clusters
  };
  // walt_get_indicies() without boosts: the smallest cluster the task fits.
  static Indices get_indicies(const Scheduler& sched, int tid);
  // walt_find_best_target(): one candidate per visited cluster (its best idle CPU, else the
  // busy CPU with the most spare capacity), searching clusters in the order of
  // cpu_array[order_index]; the prev-CPU fastpath; the fallbacks. Bit i = CPU i.
  static std::uint64_t find_best_target(const Scheduler& sched, int tid, int prev_cpu,
                                        Indices indices);
  // walt_compute_energy(): estimated energy with the task on `dst_cpu`, over the clusters
  // that hold a candidate or the task's CPU.
  static double compute_energy(const Scheduler& sched, int tid, int dst_cpu,
                               std::uint64_t candidates);
  // walt_find_energy_efficient_cpu() for a fair task.
  static int find_energy_efficient_cpu(const Scheduler& sched, int tid, int prev_cpu,
                                       const WakeContext& ctx);
  // walt_select_task_rq_rt(): the sync rule for any waker, else the least-loaded CPU of the
  // lowest RT priority level, smallest cluster first.
  static int select_task_rq_rt(const Scheduler& sched, int tid, int prev_cpu,
                               const WakeContext& ctx);
  // walt_rt_find_lowest_rq(): of the CPUs of the lowest RT priority level below the task's,
  // the least loaded, smallest cluster first (walt_rt_energy_aware_wake_cpu); -1 when none.
  static int find_lowest_rq(const Scheduler& sched, int tid, int prev_cpu);
  // RT push and pull: WALT's choice; when WALT finds none (every candidate overutilised), the
  // kernel's find_lowest_rq() does "a best effort itself" (mainline's choice).
  int lowest_rq(const Scheduler& sched, int tid, int this_cpu) const override;
  // Clusters in the order cpu_array[order_index] visits them.
  static std::vector<int> cluster_order(const Scheduler& sched, int order_index);
};

}  // namespace bindersim::sched
