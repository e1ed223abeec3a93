#include "bindersim/sched/placement.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <limits>

#include "bindersim/common/error.hpp"
#include "bindersim/sched/walt_placement.hpp"
#include "bindersim/topology/topology.hpp"

namespace bindersim::sched {
namespace {

constexpr SimTime kWakeeFlipDecay = engine::kSecond;  // record_wakee(): halve once per second
constexpr int kNoCpu = -1;

}  // namespace

// record_wakee(): the waker counts how often it switches between wakees.
void MainlinePlacement::record_wakee(Scheduler& sched, int waker_tid, int wakee_tid) {
  if (waker_tid < 0) return;
  Task& waker = sched.task_for_update(waker_tid);
  if (sched.now() > waker.wakee_flip_decay_ts + kWakeeFlipDecay) {
    waker.wakee_flips >>= 1;
    waker.wakee_flip_decay_ts = sched.now();
  }
  if (waker.last_wakee != wakee_tid) {
    waker.last_wakee = wakee_tid;
    ++waker.wakee_flips;
  }
}

namespace {

bool fits(const Scheduler& sched, int tid, int cpu) {
  if (!sched.asym_capacity()) return true;
  return MainlinePlacement::fits_capacity(sched.task_util_est(tid), sched.capacity_of(cpu));
}

// rt_task_fits_capacity(): an RT task's utilisation is its uclamp minimum
// (sched_util_clamp_min_rt_default), so it fits CPUs of at least that capacity.
bool rt_fits(const Scheduler& sched, int cpu) {
  if (!sched.asym_capacity()) return true;
  return sched.topology().capacity(cpu) >=
         std::min(sched.tunables().rt_uclamp_min, sched.topology().max_capacity());
}

}  // namespace

int PlacementPolicy::lowest_rq(const Scheduler& sched, int tid, int this_cpu) const {
  return MainlinePlacement::find_lowest_rq(sched, tid, this_cpu);
}

int MainlinePlacement::select_cpu(Scheduler& sched, int tid, int prev_cpu, const WakeContext& ctx) {
  return sched.task(tid).is_rt() ? select_task_rq_rt(sched, tid, prev_cpu, ctx)
                                 : select_task_rq_fair(sched, tid, prev_cpu, ctx);
}

bool MainlinePlacement::wake_wide(const Scheduler& sched, int waker_tid, int wakee_tid) {
  if (waker_tid < 0) return false;
  unsigned master = sched.task(waker_tid).wakee_flips;
  unsigned slave = sched.task(wakee_tid).wakee_flips;
  // The LLC spans every CPU that shares a cache with CPU 0 (all of them on the SA8155P).
  const auto factor = static_cast<unsigned>(sched.llc_size());
  if (master < slave) std::swap(master, slave);
  return !(slave < factor || master < slave * factor);
}

int MainlinePlacement::wake_affine(const Scheduler& sched, int tid, int this_cpu, int prev_cpu,
                                   bool sync, int waker_tid) {
  // wake_affine_idle()
  if (sched.available_idle_cpu(this_cpu) && sched.topology().shares_cache(this_cpu, prev_cpu)) {
    return sched.available_idle_cpu(prev_cpu) ? prev_cpu : this_cpu;
  }
  if (sync && sched.nr_running(this_cpu) == 1) return this_cpu;
  if (sched.available_idle_cpu(prev_cpu)) return prev_cpu;
  // wake_affine_weight(): compare the loads with the waker's load discounted on sync.
  double this_eff_load = sched.cpu_load(this_cpu);
  if (sync && waker_tid >= 0) {
    const double current_load = sched.task_load(waker_tid);
    if (current_load > this_eff_load) return this_cpu;
    this_eff_load -= current_load;
  }
  const double task_load = sched.task_load(tid);
  this_eff_load += task_load;
  constexpr double kImbalancePct = 117;  // sd->imbalance_pct of the LLC domain
  this_eff_load *= 100.0 * sched.capacity_of(prev_cpu);
  double prev_eff_load = sched.cpu_load(prev_cpu) - task_load;
  prev_eff_load *= (100.0 + (kImbalancePct - 100.0) / 2.0) * sched.capacity_of(this_cpu);
  if (sync) prev_eff_load += 1;
  return this_eff_load < prev_eff_load ? this_cpu : prev_cpu;
}

int MainlinePlacement::select_idle_capacity(const Scheduler& sched, int tid, int target) {
  const Task& task = sched.task(tid);
  // The CPUs running their idle task that the task may run on (affinity 0: every CPU), visited
  // in the order of a scan from target that wraps around: target and above first, then below.
  const std::uint64_t allowed =
      task.params.affinity == 0 ? ~std::uint64_t{0} : task.params.affinity;
  const std::uint64_t candidates = sched.idle_task_cpus() & allowed;
  const std::uint64_t from_target = ~std::uint64_t{0} << target;
  int best_cpu = kNoCpu;
  double best_capacity = 0;
  for (std::uint64_t rest : {candidates & from_target, candidates & ~from_target}) {
    for (; rest != 0; rest &= rest - 1) {
      const int cpu = std::countr_zero(rest);
      if (!sched.available_idle_cpu(cpu)) continue;  // tasks queued, waiting for the idle exit
      if (fits(sched, tid, cpu)) return cpu;
      const double capacity = sched.capacity_of(cpu);
      if (capacity > best_capacity) {
        best_capacity = capacity;
        best_cpu = cpu;
      }
    }
  }
  return best_cpu;
}

int MainlinePlacement::least_loaded_cpu(const Scheduler& sched, int tid, int from) {
  const Task& task = sched.task(tid);
  const int n = sched.num_cpus();
  int best_cpu = from;
  int best_running = std::numeric_limits<int>::max();
  for (int i = 0, cpu = from; i < n; ++i, cpu = cpu + 1 == n ? 0 : cpu + 1) {
    if (!task.allowed_on(cpu)) continue;
    const int running = sched.nr_running(cpu);
    if (running < best_running) {
      best_running = running;
      best_cpu = cpu;
    }
  }
  return best_cpu;
}

int MainlinePlacement::select_idle_sibling(Scheduler& sched, int tid, int prev_cpu, int target) {
  const auto& topology = sched.topology();
  Task& task = sched.task_for_update(tid);
  if (sched.available_idle_cpu(target) && fits(sched, tid, target)) return target;
  if (prev_cpu != target && topology.shares_cache(prev_cpu, target) &&
      sched.available_idle_cpu(prev_cpu) && fits(sched, tid, prev_cpu)) {
    return prev_cpu;
  }
  const int recent = task.recent_used_cpu;
  task.recent_used_cpu = prev_cpu;
  if (recent >= 0 && recent != prev_cpu && recent != target &&
      topology.shares_cache(recent, target) && sched.available_idle_cpu(recent) &&
      task.allowed_on(recent) && fits(sched, tid, recent)) {
    return recent;
  }
  if (sched.asym_capacity()) {
    const int cpu = select_idle_capacity(sched, tid, target);
    return cpu >= 0 ? cpu : target;
  }
  // Symmetric systems: the first idle CPU of the LLC, scanning from target.
  for (int i = 0; i < sched.num_cpus(); ++i) {
    const int cpu = (target + i) % sched.num_cpus();
    if (task.allowed_on(cpu) && topology.shares_cache(cpu, target) &&
        sched.available_idle_cpu(cpu)) {
      return cpu;
    }
  }
  return target;
}

int MainlinePlacement::select_task_rq_fair(Scheduler& sched, int tid, int prev_cpu,
                                           const WakeContext& ctx, bool wakee_recorded) {
  const Task& task = sched.task(tid);
  if (ctx.fork || ctx.waker_cpu < 0) {
    // New tasks and timer wakeups: the idlest fitting CPU from prev (find_idlest_cpu's
    // preference for an idle CPU). Without one, a new task goes to the least loaded CPU
    // (find_idlest_cpu), a timer wakeup stays on prev (select_idle_sibling).
    const int cpu = select_idle_capacity(sched, tid, prev_cpu);
    if (cpu >= 0) return cpu;
    return ctx.fork ? least_loaded_cpu(sched, tid, prev_cpu) : prev_cpu;
  }
  if (!wakee_recorded) record_wakee(sched, ctx.waker_tid, tid);
  const int this_cpu = ctx.waker_cpu;
  int new_cpu = prev_cpu;
  const bool want_affine = !wake_wide(sched, ctx.waker_tid, tid) && task.allowed_on(this_cpu);
  if (want_affine && this_cpu != prev_cpu) {
    new_cpu = wake_affine(sched, tid, this_cpu, prev_cpu, ctx.sync, ctx.waker_tid);
  }
  return select_idle_sibling(sched, tid, prev_cpu, new_cpu);
}

int MainlinePlacement::find_lowest_rq(const Scheduler& sched, int tid, int this_cpu) {
  const Task& task = sched.task(tid);
  // cpupri: the lowest priority level present among allowed CPUs (idle and CFS-only CPUs
  // share the lowest level), restricted to CPUs below the task's priority.
  int lowest_level = kMaxRtPrio + 1;
  auto level_of = [&](int cpu) {
    const int prio = sched.highest_rt_prio(cpu);        // kMaxRtPrio when no RT task
    return prio >= kMaxRtPrio ? 0 : kMaxRtPrio - prio;  // higher level = more important
  };
  const int task_level = kMaxRtPrio - task.prio();
  for (int cpu = 0; cpu < sched.num_cpus(); ++cpu) {
    if (task.allowed_on(cpu) && level_of(cpu) < task_level) {
      lowest_level = std::min(lowest_level, level_of(cpu));
    }
  }
  if (lowest_level > kMaxRtPrio) return kNoCpu;
  auto in_mask = [&](int cpu) {
    return cpu >= 0 && task.allowed_on(cpu) && level_of(cpu) == lowest_level &&
           (!sched.asym_capacity() || rt_fits(sched, cpu));
  };
  bool any_fits = false;
  for (int cpu = 0; cpu < sched.num_cpus(); ++cpu) any_fits = any_fits || in_mask(cpu);
  // With no fitting CPU at the lowest level, cpupri_find_fitness() falls back to ignoring
  // capacity.
  auto in_lowest = [&](int cpu) {
    return any_fits ? in_mask(cpu)
                    : cpu >= 0 && task.allowed_on(cpu) && level_of(cpu) == lowest_level;
  };
  const int own = task.cpu;
  if (in_lowest(own)) return own;
  if (this_cpu >= 0 && in_lowest(this_cpu)) return this_cpu;
  for (int cpu = 0; cpu < sched.num_cpus(); ++cpu) {
    if (in_lowest(cpu)) return cpu;
  }
  return kNoCpu;
}

int MainlinePlacement::select_task_rq_rt(const Scheduler& sched, int tid, int cpu,
                                         const WakeContext& ctx) {
  const Task& task = sched.task(tid);
  const int curr = sched.rq(cpu).curr;
  // An RT task running there keeps the wakee away when it would not yield (equal or higher
  // priority) or could not be pushed elsewhere (pinned: nr_cpus_allowed < 2).
  const bool blocked_by_curr =
      curr >= 0 && curr != tid && sched.task(curr).is_rt() &&
      (sched.task(curr).pinned() || sched.task(curr).prio() <= task.prio());
  if (blocked_by_curr || !rt_fits(sched, cpu) || !task.allowed_on(cpu)) {
    const int target = find_lowest_rq(sched, tid, ctx.waker_cpu);
    if (!blocked_by_curr && target >= 0 && !rt_fits(sched, target)) return cpu;
    if (target >= 0 && task.prio() < sched.highest_rt_prio(target)) return target;
  }
  return cpu;
}

// --- gki -----------------------------------------------------------------------------------

int GkiPlacement::select_cpu(Scheduler& sched, int tid, int prev_cpu, const WakeContext& ctx) {
  if (sched.task(tid).is_rt()) {
    if (honor_rt_sync(sched, tid, ctx)) return ctx.waker_cpu;
    return MainlinePlacement::select_task_rq_rt(sched, tid, prev_cpu, ctx);
  }
  if (ctx.fork) return MainlinePlacement::select_task_rq_fair(sched, tid, prev_cpu, ctx);
  MainlinePlacement::record_wakee(sched, ctx.waker_tid, tid);
  const int cpu = find_energy_efficient_cpu(sched, tid, prev_cpu, ctx);
  if (cpu >= 0) return cpu;
  return MainlinePlacement::select_task_rq_fair(sched, tid, prev_cpu, ctx, true);
}

bool GkiPlacement::honor_sync(const Scheduler& sched, int tid, const WakeContext& ctx) {
  const int cpu = ctx.waker_cpu;
  return ctx.sync && cpu >= 0 && sched.nr_running(cpu) == 1 && sched.task(tid).allowed_on(cpu) &&
         MainlinePlacement::fits_capacity(sched.task_util_est(tid), sched.capacity_of(cpu));
}

bool GkiPlacement::honor_rt_sync(const Scheduler& sched, int tid, const WakeContext& ctx) {
  const int cpu = ctx.waker_cpu;
  if (!ctx.sync || cpu < 0 || !sched.task(tid).allowed_on(cpu)) return false;
  return sched.rt_sync_holds(cpu, sched.task(tid).prio(), false);
}

namespace {

// The waking task as energy-aware placement sees it: its CPU, its utilisation and its
// estimate, which stay the same through one wakeup's estimates (worked out once: a utilisation
// costs a decay).
struct Wakee {
  int cpu;
  double util;
  int util_est;  // _task_util_est(); the sleeping wakee's is in no run queue's sum
};

Wakee wakee_of(const Scheduler& sched, int tid) {
  return {sched.task(tid).cpu, sched.task_util(tid), sched.task(tid).util_est.value()};
}

// What energy-aware placement reads of a CPU's utilisation, read once per CPU and wakeup (each
// read checks the CPU's memo): its fair (PELT) and RT utilisation, and the estimates enqueued.
struct CpuUtil {
  double fair;
  double rt;
  int util_est;
};

CpuUtil cpu_util_of(const Scheduler& sched, int cpu) {
  const Scheduler::Utilisation util = sched.utilisation(cpu);
  return {util.fair, util.rt, sched.rq(cpu).util_est};
}

// cpu_util_next() of `wakee`: the fair utilisation of `cpu` (`now`) with the task moved to
// `dst_cpu`.
double util_next(const CpuUtil& now, int cpu, const Wakee& wakee, int dst_cpu) {
  double util = now.fair;
  if (wakee.cpu == cpu && dst_cpu != cpu) {
    util = std::max(0.0, util - wakee.util);
  } else if (wakee.cpu != cpu && dst_cpu == cpu) {
    util += wakee.util;
  }
  const int util_est = now.util_est + (dst_cpu == cpu ? wakee.util_est : 0);
  return std::max(util, static_cast<double>(util_est));
}

double util_next(const Scheduler& sched, int cpu, const Wakee& wakee, int dst_cpu) {
  return util_next(cpu_util_of(sched, cpu), cpu, wakee, dst_cpu);
}

// One CPU's part in its cluster's energy estimate (compute_energy()).
struct EnergyTerms {
  double energy_util;     // effective_cpu_util(ENERGY_UTIL): capped at the cluster's capacity
  double frequency_util;  // effective_cpu_util(FREQUENCY_UTIL) with uclamp, as schedutil sees it
};

// The terms of `cpu` with the fair utilisation `util_fair_next` (cpu_util_next()) and the RT
// utilisation `util_rt`, in a cluster of capacity `scale_cpu`.
EnergyTerms energy_terms(const Scheduler& sched, int cpu, double util_fair_next, double util_rt,
                         double scale_cpu) {
  const double util = util_fair_next + util_rt;
  return {std::min(util, scale_cpu), sched.frequency_util(cpu, util)};
}

// em_cpu_energy() of a cluster whose CPUs, in the cluster's order (the utilisations are summed
// in that order), have the terms `each`, except the one at `dst_index` (if any), which has
// `dst`. Always inline: find_energy_efficient_cpu() asks for up to three per cluster, and a
// call would make it save and reload the estimates it holds in floating-point registers.
[[gnu::always_inline]] inline double cluster_energy(const topology::FrequencyDomain& domain,
                                                    const EnergyTerms* each, std::size_t count,
                                                    double scale_cpu, std::size_t dst_index,
                                                    const EnergyTerms& dst) {
  double max_util = 0;
  double sum_util = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const EnergyTerms& terms = i == dst_index ? dst : each[i];
    sum_util += terms.energy_util;
    max_util = std::max(max_util, terms.frequency_util);
  }
  return GkiPlacement::em_cpu_energy(domain, max_util, sum_util, scale_cpu);
}

constexpr std::size_t kNoIndex = std::numeric_limits<std::size_t>::max();

// The energy terms of each CPU of a cluster (CPU ids are 0..63, so a cluster has at most 64).
using ClusterTerms = std::array<EnergyTerms, 64>;

// compute_energy() of `wakee`.
double energy(const Scheduler& sched, int cluster, const Wakee& wakee, int dst_cpu) {
  const auto& topology = sched.topology();
  const auto& cpus = topology.cluster_cpus(cluster);
  const auto scale_cpu = static_cast<double>(topology.capacity(cpus.front()));
  ClusterTerms terms;
  BSIM_CHECK(cpus.size() <= terms.size());
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    const CpuUtil now = cpu_util_of(sched, cpus[i]);
    terms[i] =
        energy_terms(sched, cpus[i], util_next(now, cpus[i], wakee, dst_cpu), now.rt, scale_cpu);
  }
  return cluster_energy(topology.frequency_domain(cluster), terms.data(), cpus.size(), scale_cpu,
                        kNoIndex, EnergyTerms{});
}

}  // namespace

double GkiPlacement::cpu_util_next(const Scheduler& sched, int cpu, int tid, int dst_cpu) {
  return util_next(sched, cpu, wakee_of(sched, tid), dst_cpu);
}

double GkiPlacement::compute_energy(const Scheduler& sched, int cluster, int tid, int dst_cpu) {
  return energy(sched, cluster, wakee_of(sched, tid), dst_cpu);
}

double GkiPlacement::em_cpu_energy(const topology::FrequencyDomain& domain, double max_util,
                                   double sum_util, double scale_cpu) {
  const auto fmax = static_cast<double>(domain.opps.back().freq_khz);
  // map_util_perf() adds 25% headroom; the lowest operating point at or above that frequency.
  const double freq = fmax * std::min(1.25 * max_util, scale_cpu) / scale_cpu;
  const topology::Opp* state = &domain.opps.back();
  for (const topology::Opp& opp : domain.opps) {
    if (static_cast<double>(opp.freq_khz) >= freq) {
      state = &opp;
      break;
    }
  }
  // em_perf_state.cost = power x fmax / f: the energy of running scale_cpu worth of work.
  const double cost = state->power * fmax / static_cast<double>(state->freq_khz);
  return cost * sum_util / scale_cpu;
}

int GkiPlacement::find_energy_efficient_cpu(const Scheduler& sched, int tid, int prev_cpu,
                                            const WakeContext& ctx) {
  const auto& topology = sched.topology();
  if (!topology.has_energy_model() || sched.overutilized()) return kNoCpu;
  if (honor_sync(sched, tid, ctx)) return ctx.waker_cpu;
  const Task& task = sched.task(tid);
  const Wakee wakee = wakee_of(sched, tid);
  // No utilisation and no estimate yet (task_util_est() is 0): nothing to compare.
  if (wakee.util <= 0 && wakee.util_est <= 0) return prev_cpu;
  constexpr double kNone = std::numeric_limits<double>::infinity();
  double prev_delta = kNone;
  double best_delta = kNone;
  double base_energy = 0;
  int best_cpu = prev_cpu;
  // The terms of each CPU of a cluster without the task: every estimate of the cluster starts
  // from them.
  ClusterTerms base_terms;
  for (int cluster = 0; cluster < topology.num_clusters(); ++cluster) {
    const auto& cpus = topology.cluster_cpus(cluster);
    const auto& domain = topology.frequency_domain(cluster);
    const auto scale_cpu = static_cast<double>(topology.capacity(cpus.front()));
    BSIM_CHECK(cpus.size() <= base_terms.size());
    double max_spare = 0;
    std::size_t max_spare_index = kNoIndex;
    double max_spare_util = 0;
    std::size_t prev_index = kNoIndex;
    double prev_util = 0;
    for (std::size_t i = 0; i < cpus.size(); ++i) {
      const int cpu = cpus[i];
      const CpuUtil now = cpu_util_of(sched, cpu);
      base_terms[i] =
          energy_terms(sched, cpu, util_next(now, cpu, wakee, kNoCpu), now.rt, scale_cpu);
      if (!task.allowed_on(cpu)) continue;
      const double util = util_next(now, cpu, wakee, cpu);
      const double capacity = sched.capacity_less_rt(cpu, now.rt);
      if (!MainlinePlacement::fits_capacity(util, capacity)) continue;
      const double spare = capacity - util;
      if (cpu == prev_cpu) {
        prev_index = i;
        prev_util = util;
      } else if (spare > max_spare) {
        max_spare = spare;
        max_spare_index = i;
        max_spare_util = util;
      }
    }
    // The cluster's energy without the task counts towards the margin whether or not the
    // task can go there (base_energy_pd of every performance domain).
    const double base =
        cluster_energy(domain, base_terms.data(), cpus.size(), scale_cpu, kNoIndex, EnergyTerms{});
    base_energy += base;
    // The energy with the task on the CPU at `index`, whose utilisation with it is `util`.
    auto energy_with_task_on = [&](std::size_t index, double util) {
      return cluster_energy(
          domain, base_terms.data(), cpus.size(), scale_cpu, index,
          energy_terms(sched, cpus[index], util, sched.cpu_util_rt(cpus[index]), scale_cpu));
    };
    if (prev_index != kNoIndex) prev_delta = energy_with_task_on(prev_index, prev_util) - base;
    if (max_spare_index != kNoIndex) {
      const double delta = energy_with_task_on(max_spare_index, max_spare_util) - base;
      if (delta < best_delta) {
        best_delta = delta;
        best_cpu = cpus[max_spare_index];
      }
    }
  }
  // Leave prev only when it cannot take the task or the best CPU saves more than 1/16 (6%) of
  // the energy with the task on prev.
  if (prev_delta == kNone) return best_cpu;
  if (best_delta != kNone && prev_delta - best_delta > (prev_delta + base_energy) / 16.0) {
    return best_cpu;
  }
  return prev_cpu;
}

std::vector<std::string> placement_names() { return {"mainline", "gki", "walt"}; }

std::unique_ptr<PlacementPolicy> make_placement(const std::string& name) {
  if (name == "mainline") return std::make_unique<MainlinePlacement>();
  if (name == "gki") return std::make_unique<GkiPlacement>();
  if (name == "walt") return std::make_unique<WaltPlacement>();
  throw ConfigError("unknown placement \"" + name + "\"; valid placements: mainline, gki, walt");
}

}  // namespace bindersim::sched
