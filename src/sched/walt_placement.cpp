#include "bindersim/sched/walt_placement.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <limits>

#include "bindersim/topology/topology.hpp"

namespace bindersim::sched {
namespace {

constexpr int kNoCpu = -1;
constexpr double kNone = std::numeric_limits<double>::infinity();
// walt_get_idle_exit_latency() <= 1 (us): the CPU is in WFI or shallower.
constexpr SimTime kWfiExitNs = engine::kMicrosecond;

std::uint64_t bit(int cpu) { return std::uint64_t{1} << cpu; }

double capacity(const Scheduler& sched, int cpu) {
  return static_cast<double>(sched.topology().capacity(cpu));
}

// Topology clusters ranked by capacity, smallest first (WALT's sched_cluster[] order).
std::vector<int> ranked_clusters(const Scheduler& sched) {
  const auto& topology = sched.topology();
  std::vector<int> ranked(static_cast<std::size_t>(topology.num_clusters()));
  for (int c = 0; c < topology.num_clusters(); ++c) ranked[static_cast<std::size_t>(c)] = c;
  std::stable_sort(ranked.begin(), ranked.end(), [&](int a, int b) {
    return topology.capacity(topology.cluster_cpus(a).front()) <
           topology.capacity(topology.cluster_cpus(b).front());
  });
  return ranked;
}

int rank_of_cpu(const Scheduler& sched, int cpu) {
  const auto ranked = ranked_clusters(sched);
  const int cluster = sched.topology().cluster_of(cpu);
  return static_cast<int>(std::find(ranked.begin(), ranked.end(), cluster) - ranked.begin());
}

// walt_get_idle_exit_latency(): the exit latency of the idle state an idle CPU is in, 0 when
// the CPU is busy.
SimTime idle_exit_latency(const Scheduler& sched, int cpu) {
  if (!sched.available_idle_cpu(cpu)) return 0;
  const auto& states = sched.topology().cpu(cpu).idle_states;
  return states[static_cast<std::size_t>(sched.rq(cpu).idle_state)].exit_latency_ns;
}

bool idle_in_wfi(const Scheduler& sched, int cpu) {
  return sched.available_idle_cpu(cpu) && idle_exit_latency(sched, cpu) <= kWfiExitNs;
}

// The CPU a task last ran on (task_cpu(p)); a task never placed counts as on `fallback`.
int task_cpu(const Scheduler& sched, int tid, int fallback) {
  const int cpu = sched.task(tid).cpu;
  return cpu >= 0 ? cpu : fallback;
}

// The fair tasks running or queued on `cpu` (cfs.h_nr_running).
int fair_nr_running(const Scheduler& sched, int cpu) {
  const RunQueue& r = sched.rq(cpu);
  return static_cast<int>(r.fair.size()) + (r.curr >= 0 && !sched.task(r.curr).is_rt() ? 1 : 0);
}

// walt_em_cpu_energy(): the busiest CPU's utilisation with 25% headroom, at least the
// cluster's current capacity, picks the operating point (util_to_cost[]); the energy is its
// cost (power x fmax / f) x the summed utilisation / the cluster's capacity.
double em_cpu_energy(const Scheduler& sched, int cluster, double max_util, double sum_util) {
  if (sum_util <= 0) return 0;
  const auto& topology = sched.topology();
  const int first = topology.cluster_cpus(cluster).front();
  const double scale_cpu = capacity(sched, first);
  max_util = std::max(max_util * 1.25, sched.current_capacity(first));
  max_util = std::min(max_util, 1023.0);
  const auto& opps = topology.frequency_domain(cluster).opps;
  const auto fmax = static_cast<double>(opps.back().freq_khz);
  const double freq = fmax * max_util / scale_cpu;
  const topology::Opp* state = &opps.back();
  for (const topology::Opp& opp : opps) {
    if (static_cast<double>(opp.freq_khz) >= freq) {
      state = &opp;
      break;
    }
  }
  const double cost = state->power * fmax / static_cast<double>(state->freq_khz);
  return cost * sum_util / scale_cpu;
}

// select_cpu_same_energy(): true when `cpu` should replace `best` at equal energy.
bool select_cpu_same_energy(const Scheduler& sched, int cpu, int best, int prev) {
  const bool cpu_idle = sched.available_idle_cpu(cpu);
  const bool best_idle = sched.available_idle_cpu(best);
  if (capacity(sched, cpu) > capacity(sched, best)) return false;
  if (capacity(sched, best) > capacity(sched, cpu)) return true;
  if (best_idle && idle_exit_latency(sched, best) <= kWfiExitNs) return false;
  if (cpu_idle && idle_exit_latency(sched, cpu) <= kWfiExitNs) return true;
  if (best_idle != cpu_idle) return cpu_idle;
  if (best == prev) return false;
  if (cpu == prev) return true;
  if (best_idle && cpu_idle) return false;
  return WaltPlacement::cpu_util(sched, best) > WaltPlacement::cpu_util(sched, cpu);
}

// walt_lb.c's cluster test: inter-cluster pulls only from a cluster running more fair tasks
// than it has CPUs, with at least 80% of its capacity in demand.
bool cluster_loaded(const Scheduler& sched, int cluster) {
  double total_util = 0;
  double total_capacity = 0;
  int total_nr = 0;
  const auto& cpus = sched.topology().cluster_cpus(cluster);
  for (int cpu : cpus) {
    total_util += sched.walt_cpu_demand(cpu);
    total_capacity += capacity(sched, cpu);
    total_nr += fair_nr_running(sched, cpu);
  }
  return total_nr > static_cast<int>(cpus.size()) && total_util * 1280.0 >= total_capacity * 1024.0;
}

}  // namespace

std::vector<int> WaltPlacement::cluster_order(const Scheduler& sched, int order_index) {
  // cpu_arrays_init_x{11,22,33,44} of walt.c: the ranks visited from each starting rank.
  static constexpr std::array<std::array<int, 4>, 4> kX44 = {
      {{0, 2, 1, 3}, {1, 2, 3, 0}, {2, 3, 1, 0}, {3, 1, 2, 0}}};
  static constexpr std::array<std::array<int, 3>, 3> kX33 = {{{0, 1, 2}, {1, 2, 0}, {2, 1, 0}}};
  const auto ranked = ranked_clusters(sched);
  const auto n = ranked.size();
  std::vector<int> order;
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t rank = (static_cast<std::size_t>(order_index) + i) % n;  // x11, x22
    if (n == 3) rank = static_cast<std::size_t>(kX33[static_cast<std::size_t>(order_index)][i]);
    if (n == 4) rank = static_cast<std::size_t>(kX44[static_cast<std::size_t>(order_index)][i]);
    order.push_back(ranked[rank]);
  }
  return order;
}

double WaltPlacement::cpu_util(const Scheduler& sched, int cpu) {
  return std::min(sched.walt_cpu_demand(cpu), capacity(sched, cpu));
}

bool WaltPlacement::cpu_overutilized(const Scheduler& sched, int cpu, double delta) {
  return capacity(sched, cpu) * 1024.0 < (cpu_util(sched, cpu) + delta) * kMarginUp;
}

bool WaltPlacement::task_demand_fits(const Scheduler& sched, int tid, int dst_cpu) {
  const auto ranked = ranked_clusters(sched);
  const int rank = rank_of_cpu(sched, dst_cpu);
  if (rank == static_cast<int>(ranked.size()) - 1) return true;  // the biggest cluster
  // "a non topapp low prio task fits on gold": nice >= 4 on a middle cluster.
  if (rank > 0 && sched.task(tid).prio() >= 124) return true;
  const int src = task_cpu(sched, tid, dst_cpu);
  const double margin = capacity(sched, src) > capacity(sched, dst_cpu) ? kMarginDown : kMarginUp;
  return capacity(sched, dst_cpu) * 1024.0 > sched.walt_task_demand(tid) * margin;
}

WaltPlacement::Indices WaltPlacement::get_indicies(const Scheduler& sched, int tid) {
  Indices indices;
  const auto ranked = ranked_clusters(sched);
  const int n = static_cast<int>(ranked.size());
  for (; indices.order_index < n - 1; ++indices.order_index) {
    const int first =
        sched.topology().cluster_cpus(ranked[static_cast<std::size_t>(indices.order_index)])[0];
    if (task_demand_fits(sched, tid, first)) break;
  }
  if (indices.order_index == 0 && sched.walt_task_demand(tid) >= kMinUtilForEnergyEval) {
    indices.end_index = 1;
  }
  return indices;
}

std::uint64_t WaltPlacement::find_best_target(const Scheduler& sched, int tid, int prev_cpu,
                                              Indices indices) {
  const Task& task = sched.task(tid);
  const auto& topology = sched.topology();
  const auto order = cluster_order(sched, indices.order_index);
  const int start_cpu = topology.cluster_cpus(order.front()).front();
  const int prev = task_cpu(sched, tid, prev_cpu);
  const double task_util = sched.walt_task_demand(tid);

  // select_prev_cpu_fastpath(): an idle prev in the cluster the search starts at.
  if (sched.available_idle_cpu(prev) && task.allowed_on(prev) &&
      topology.cluster_of(prev) == topology.cluster_of(start_cpu)) {
    return bit(prev);
  }

  std::uint64_t candidates = 0;
  double most_spare_wake_cap = 0;
  int most_spare_cap_cpu = kNoCpu;
  int least_nr_cpu = kNoCpu;
  int least_nr = std::numeric_limits<int>::max();
  for (std::size_t i = 0; i < order.size(); ++i) {
    double target_max_spare_cap = 0;
    SimTime min_exit_latency = std::numeric_limits<SimTime>::max();
    double best_idle_cuml_util = kNone;
    int best_idle_cpu = kNoCpu;
    int target_cpu = kNoCpu;
    for (int cpu : topology.cluster_cpus(order[i])) {
      if (!task.allowed_on(cpu)) continue;
      const double wake_cpu_util = cpu_util(sched, cpu);
      const double cap = capacity(sched, cpu);
      if (cap - wake_cpu_util > most_spare_wake_cap) {
        most_spare_wake_cap = cap - wake_cpu_util;
        most_spare_cap_cpu = cpu;
      }
      if (sched.nr_running(cpu) < least_nr) {
        least_nr = sched.nr_running(cpu);
        least_nr_cpu = cpu;
      }
      const double new_cpu_util = wake_cpu_util + task_util;
      if (new_cpu_util > cap) continue;
      if (sched.available_idle_cpu(cpu)) {
        // The shallowest idle state; among equals prev, else the least PELT utilisation.
        const SimTime exit_latency = idle_exit_latency(sched, cpu);
        if (exit_latency > min_exit_latency) continue;
        const double cuml_util = sched.cpu_util_fair(cpu);
        if (exit_latency == min_exit_latency &&
            (best_idle_cpu == prev || (cpu != prev && cuml_util > best_idle_cuml_util))) {
          continue;
        }
        min_exit_latency = exit_latency;
        best_idle_cuml_util = cuml_util;
        best_idle_cpu = cpu;
        continue;
      }
      if (best_idle_cpu != kNoCpu) continue;
      const double spare_cap = cap - new_cpu_util;
      if (spare_cap < target_max_spare_cap) continue;
      target_max_spare_cap = spare_cap;
      target_cpu = cpu;
    }
    if (best_idle_cpu != kNoCpu) {
      candidates |= bit(best_idle_cpu);
    } else if (target_cpu != kNoCpu) {
      candidates |= bit(target_cpu);
    }
    // walt_target_ok(): a one-CPU cluster that is not the biggest is no place to stop.
    const auto& first_cluster = topology.cluster_cpus(order.front());
    const bool target_ok = !(indices.order_index != static_cast<int>(order.size()) - 1 &&
                             first_cluster.size() == 1 && target_cpu == first_cluster.front());
    if (static_cast<int>(i) >= indices.end_index && candidates != 0 && target_ok) break;
  }
  if (candidates == 0) {
    if (most_spare_cap_cpu != kNoCpu) {
      candidates = bit(most_spare_cap_cpu);
    } else if (sched.nr_running(prev) < kDireStraitsPrevNrLimit) {
      candidates = bit(prev);
    } else if (least_nr_cpu != kNoCpu) {
      candidates = bit(least_nr_cpu);
    }
  }
  return candidates;
}

double WaltPlacement::compute_energy(const Scheduler& sched, int tid, int dst_cpu,
                                     std::uint64_t candidates) {
  const auto& topology = sched.topology();
  const int src = task_cpu(sched, tid, dst_cpu);
  const SimTime window = sched.walt_tunables().window_ns;
  const double task_util = sched.walt_task_demand(tid);
  const double task_demand_ns = task_util * static_cast<double>(window) / 1024.0;
  const double prev_window = sched.walt_task_prev_window(tid);
  const bool same_cluster = topology.cluster_of(src) == topology.cluster_of(dst_cpu);
  double energy = 0;
  for (int cluster = 0; cluster < topology.num_clusters(); ++cluster) {
    const auto& cpus = topology.cluster_cpus(cluster);
    bool counted = topology.cluster_of(src) == cluster;
    for (int cpu : cpus) counted = counted || (candidates & bit(cpu)) != 0;
    if (!counted) continue;
    double sum_util = 0;
    double max_busy = 0;
    for (int cpu : cpus) {
      // cpu_util_next_walt(): the waking task's demand joins dst only.
      const double util = sched.walt_cpu_demand(cpu) + (cpu == dst_cpu ? task_util : 0.0);
      sum_util += std::min(util, capacity(sched, cpu));
      // cpu_util_next_walt_prs(): the previous window's busy time, with the task's share moved
      // to dst on an inter-cluster move (all of it taken from the CPU it last ran on).
      double busy = sched.walt_cpu_prev_busy(cpu);
      if (prev_window > 0) {
        if (!same_cluster) {
          if (cpu == src) busy = std::max(0.0, busy - prev_window);
          if (cpu == dst_cpu) busy += prev_window;
        }
      } else if (cpu == dst_cpu) {
        busy += task_demand_ns;
      }
      max_busy = std::max(max_busy, busy);
    }
    const double max_util = max_busy * 1024.0 / static_cast<double>(window);
    energy += em_cpu_energy(sched, cluster, max_util, sum_util);
  }
  return energy;
}

int WaltPlacement::find_energy_efficient_cpu(const Scheduler& sched, int tid, int prev_cpu,
                                             const WakeContext& ctx) {
  const Task& task = sched.task(tid);
  const auto& topology = sched.topology();
  const Indices indices = get_indicies(sched, tid);
  const int start_cpu =
      topology.cluster_cpus(cluster_order(sched, indices.order_index).front()).front();

  // Sync fastpath (sysctl_sched_sync_hint_enable = 1): the waker's CPU whenever the wakee may
  // run there and it is not smaller than the cluster the wakee's demand starts at. No test of
  // what else runs there.
  const int this_cpu = ctx.waker_cpu;
  if (ctx.sync && this_cpu >= 0 && task.allowed_on(this_cpu) &&
      !(capacity(sched, start_cpu) > capacity(sched, this_cpu))) {
    return this_cpu;
  }

  const std::uint64_t candidates = find_best_target(sched, tid, prev_cpu, indices);
  if (candidates == 0) return prev_cpu;
  const int weight = std::popcount(candidates);
  const int first = std::countr_zero(candidates);
  if (weight == 1 && (sched.available_idle_cpu(first) || first == prev_cpu)) return first;

  const double task_util = sched.walt_task_demand(tid);
  double prev_energy = kNone;
  if (task.allowed_on(prev_cpu) && !cpu_overutilized(sched, prev_cpu, task_util)) {
    prev_energy = compute_energy(sched, tid, prev_cpu, candidates);
  } else if (weight == 1) {
    return first;
  }
  double best_energy = prev_energy;
  int best_cpu = prev_cpu;
  for (int cpu = 0; cpu < sched.num_cpus(); ++cpu) {
    if ((candidates & bit(cpu)) == 0 || cpu == prev_cpu) continue;
    const double energy = compute_energy(sched, tid, cpu, candidates);
    if (energy < best_energy) {
      best_energy = energy;
      best_cpu = cpu;
    } else if (energy == best_energy && select_cpu_same_energy(sched, cpu, best_cpu, prev_cpu)) {
      best_cpu = cpu;
    }
  }
  // Stay on prev unless the best saves more than 1/32 of prev's energy, or is in WFI, or prev
  // is bigger than where the search started.
  if (!idle_in_wfi(sched, best_cpu) && prev_energy != kNone && best_cpu != prev_cpu &&
      prev_energy - best_energy <= prev_energy / 32.0 &&
      !(capacity(sched, prev_cpu) > capacity(sched, start_cpu))) {
    return prev_cpu;
  }
  return best_cpu;
}

int WaltPlacement::select_task_rq_rt(const Scheduler& sched, int tid, int prev_cpu,
                                     const WakeContext& ctx) {
  const Task& task = sched.task(tid);
  // walt_should_honor_rt_sync(): whatever the waker's class, if the wakee is at least as
  // important as the best pushable RT task queued there and at most 2 RT tasks run there.
  const int this_cpu = ctx.waker_cpu;
  if (ctx.sync && this_cpu >= 0 && task.allowed_on(this_cpu)) {
    const RunQueue& rq = sched.rq(this_cpu);
    const int rt_nr_running =
        static_cast<int>(rq.rt.size()) + (rq.curr >= 0 && sched.task(rq.curr).is_rt() ? 1 : 0);
    if (task.prio() <= sched.next_pushable_rt_prio(this_cpu) && rt_nr_running <= 2) {
      return this_cpu;
    }
  }

  // Move only to a CPU that runs no RT task at least as important.
  const int target = find_lowest_rq(sched, tid, prev_cpu);
  if (target != kNoCpu && task.prio() < sched.highest_rt_prio(target)) return target;
  return prev_cpu;
}

int WaltPlacement::find_lowest_rq(const Scheduler& sched, int tid, int prev_cpu) {
  const Task& task = sched.task(tid);
  // cpupri_find_fitness(): the CPUs of the lowest priority level below the task's (idle and
  // CFS-only CPUs share the lowest), those the task fits (capacity >= its uclamp minimum)
  // unless none does.
  auto level_of = [&](int cpu) {
    const int prio = sched.highest_rt_prio(cpu);
    return prio >= kMaxRtPrio ? 0 : kMaxRtPrio - prio;
  };
  const int task_level = kMaxRtPrio - task.prio();
  int lowest_level = kMaxRtPrio + 1;
  for (int cpu = 0; cpu < sched.num_cpus(); ++cpu) {
    if (task.allowed_on(cpu) && level_of(cpu) < task_level) {
      lowest_level = std::min(lowest_level, level_of(cpu));
    }
  }
  if (lowest_level > kMaxRtPrio) return kNoCpu;
  const double uclamp_min = std::min<double>(sched.tunables().rt_uclamp_min, 1024);
  std::uint64_t lowest_mask = 0;
  std::uint64_t fitting_mask = 0;
  for (int cpu = 0; cpu < sched.num_cpus(); ++cpu) {
    if (!task.allowed_on(cpu) || level_of(cpu) != lowest_level) continue;
    lowest_mask |= bit(cpu);
    if (capacity(sched, cpu) >= uclamp_min) fitting_mask |= bit(cpu);
  }
  if (fitting_mask != 0) lowest_mask = fitting_mask;

  // walt_rt_energy_aware_wake_cpu(): smallest cluster first; skip CPUs the task would
  // overutilise; the least WALT utilisation, prev on ties, then the shallower idle state, then
  // the least PELT utilisation. With three clusters or fewer the first cluster with a
  // candidate decides.
  const int own = task_cpu(sched, tid, prev_cpu);
  const double task_util = sched.walt_task_demand(tid);
  const auto order = cluster_order(sched, 0);
  const std::size_t end_index = order.size() > 3 ? 1 : 0;
  int best_cpu = kNoCpu;
  double best_util = kNone;
  SimTime best_exit_latency = std::numeric_limits<SimTime>::max();
  double best_cuml_util = kNone;
  for (std::size_t i = 0; i < order.size(); ++i) {
    for (int cpu : sched.topology().cluster_cpus(order[i])) {
      if ((lowest_mask & bit(cpu)) == 0 || cpu_overutilized(sched, cpu, task_util)) continue;
      const double util = cpu_util(sched, cpu);
      if (util > best_util) continue;
      if (util == best_util && best_cpu == own) continue;
      const SimTime exit_latency = idle_exit_latency(sched, cpu);
      const double cuml_util = sched.cpu_util_fair(cpu);
      if (cpu != own && util == best_util) {
        if (best_exit_latency < exit_latency) continue;
        if (best_exit_latency == exit_latency && best_cuml_util < cuml_util) continue;
      }
      best_exit_latency = exit_latency;
      best_cuml_util = cuml_util;
      best_util = util;
      best_cpu = cpu;
    }
    if (i < end_index && (best_cpu == kNoCpu || !sched.available_idle_cpu(best_cpu))) continue;
    if (best_cpu != kNoCpu) break;
  }
  return best_cpu;
}

int WaltPlacement::lowest_rq(const Scheduler& sched, int tid, int this_cpu) const {
  const int cpu = find_lowest_rq(sched, tid, this_cpu);
  return cpu != kNoCpu ? cpu : MainlinePlacement::find_lowest_rq(sched, tid, this_cpu);
}

int WaltPlacement::select_cpu(Scheduler& sched, int tid, int prev_cpu, const WakeContext& ctx) {
  if (sched.task(tid).is_rt()) return select_task_rq_rt(sched, tid, prev_cpu, ctx);
  // Without an energy model (no performance domains) WALT's search gives up and the kernel's
  // own select_task_rq_fair() decides.
  if (!sched.topology().has_energy_model()) {
    return MainlinePlacement::select_task_rq_fair(sched, tid, prev_cpu, ctx);
  }
  return find_energy_efficient_cpu(sched, tid, prev_cpu, ctx);
}

// walt_lb.c (walt_newidle_balance, walt_find_busiest_queue, walt_nohz_balancer_kick):
// CPUs of equal capacity help each other; across clusters only out of an overloaded cluster.
bool WaltPlacement::may_pull(const Scheduler& sched, int src_cpu, int dst_cpu,
                             BalanceKind kind) const {
  const double src_capacity = capacity(sched, src_cpu);
  const double dst_capacity = capacity(sched, dst_cpu);
  // The NOHZ kick comes only from a CPU with two tasks that WALT finds overutilised.
  if (kind == BalanceKind::kIdleKick && !cpu_overutilized(sched, src_cpu, 0)) return false;
  if (src_capacity == dst_capacity) return true;
  // Without enough idle time (avg_idle <= 500 us) a new-idle CPU helps only its own kind (a
  // bigger one would help a misfit task, which this model does not track).
  if (kind == BalanceKind::kNewIdleShortIdle) return false;
  const int nr = fair_nr_running(sched, src_cpu);
  if (nr < 2 || !cpu_overutilized(sched, src_cpu, 0)) return false;
  if (dst_capacity < src_capacity) {
    // walt_lb_find_busiest_from_higher_cap_cpu(): not for two tasks the smaller one of which
    // is running and small.
    const int curr = sched.rq(src_cpu).curr;
    if (nr == 2 && curr >= 0 && sched.walt_task_demand(curr) < kSmallTaskThreshold) return false;
  }
  const auto ranked = ranked_clusters(sched);
  const int n = static_cast<int>(ranked.size());
  const int src_rank = rank_of_cpu(sched, src_cpu);
  const int dst_rank = rank_of_cpu(sched, dst_cpu);
  // Helping the farthest cluster: an idle middle CPU is kicked instead.
  if (n > 2 && kind != BalanceKind::kIdleKick &&
      ((src_rank == 0 && dst_rank == n - 1) || (src_rank == n - 1 && dst_rank == 0))) {
    for (int rank = 1; rank < n - 1; ++rank) {
      for (int cpu : sched.topology().cluster_cpus(ranked[static_cast<std::size_t>(rank)])) {
        if (sched.available_idle_cpu(cpu)) return false;
      }
    }
  }
  return cluster_loaded(sched, sched.topology().cluster_of(src_cpu));
}

}  // namespace bindersim::sched
