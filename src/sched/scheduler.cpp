#include "bindersim/sched/scheduler.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>

#include "bindersim/common/error.hpp"
#include "bindersim/cost/cost_model.hpp"
#include "bindersim/sched/placement.hpp"
#include "bindersim/topology/topology.hpp"
#include "bindersim/trace/tracer.hpp"

namespace bindersim::sched {
namespace {

// The kernel's sched_prio_to_weight[], nice -20..19.
constexpr std::array<int, 40> kNiceToWeight = {
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904,
    3906,  3121,  2501,  1991,  1586,  1277,  1024,  820,   655,   526,   423,  335,  272,  215,
    172,   137,   110,   87,    70,    56,    45,    36,    29,    23,    18,   15};

// The value of a PELT signal at `now`, continuing the state its task has had since the last
// update: a running (or runnable) task keeps accruing, a sleeping one decays.
double signal_at(const PeltSignal& signal, SimTime now, bool active, double ceiling) {
  PeltSignal projected = signal;
  projected.update(now, active, ceiling);
  return projected.value();
}

// sd->balance_interval grows with the domain's CPU count (1 ms per CPU) and is multiplied by
// busy_factor on a busy CPU.
constexpr int kBusyFactor = 16;

}  // namespace

int nice_to_weight(int nice) {
  BSIM_CHECK(nice >= -20 && nice <= 19);
  return kNiceToWeight[static_cast<std::size_t>(nice + 20)];
}

double Task::load_avg(SimTime pelt_now) const {
  const bool active = !is_rt() && (state == TaskState::kRunning || state == TaskState::kRunnable);
  return signal_at(runnable, pelt_now, active, 1024.0) / 1024.0 * weight;
}

Scheduler::Scheduler(engine::SimContext& context, cost::CostModel& cost, PlacementPolicy& placement,
                     SchedTunables tunables)
    : context_(context),
      cost_(cost),
      placement_(placement),
      tunables_(tunables),
      rqs_(static_cast<std::size_t>(context.topology.num_cpus())),
      freqs_(static_cast<std::size_t>(context.topology.num_clusters())),
      capacity_now_(static_cast<std::size_t>(context.topology.num_cpus())),
      util_ceiling_(static_cast<std::size_t>(context.topology.num_cpus())),
      speed_milli_(static_cast<std::size_t>(context.topology.num_cpus())),
      freq_khz_now_(static_cast<std::size_t>(context.topology.num_cpus())),
      freq_scale_(static_cast<std::size_t>(context.topology.num_cpus())),
      capacity_scale_(static_cast<std::size_t>(context.topology.num_cpus())),
      busy_ns_(static_cast<std::size_t>(context.topology.num_cpus()), 0),
      walt_tracking_(placement.tracks_walt_demand()),
      walt_cpu_busy_(static_cast<std::size_t>(context.topology.num_cpus())),
      util_memo_(static_cast<std::size_t>(context.topology.num_cpus())),
      below_until_(static_cast<std::size_t>(context.topology.num_cpus()), kUnknown) {
  for (RunQueue& r : rqs_) r.idle_history.fill(2 * tunables_.migration_cost_ns);
  for (int cpu = 0; cpu < context.topology.num_cpus(); ++cpu) {
    set_curr(cpu, -1);  // every CPU starts idle
    asym_capacity_ =
        asym_capacity_ || context.topology.capacity(cpu) != context.topology.capacity(0);
    llc_size_ += context.topology.shares_cache(0, cpu) ? 1 : 0;
    capacity_orig_.push_back(context.topology.capacity(cpu));
    capacity_scale_[static_cast<std::size_t>(cpu)] = context.topology.capacity(cpu);
  }
  misfit_active_ = tunables_.misfit_migration && asym_capacity_ && placement_.migrates_misfit();
  for (int cluster = 0; cluster < context.topology.num_clusters(); ++cluster) {
    const auto& opps = context.topology.frequency_domain(cluster).opps;
    ClusterFrequency& f = freqs_[static_cast<std::size_t>(cluster)];
    // schedutil starts at the maximum, as cpufreq policies do at boot.
    const int top = opps.empty() ? 0 : static_cast<int>(opps.size()) - 1;
    f.opp = tunables_.governor == Governor::kPowersave ? 0 : top;
    f.requested_opp = f.opp;
    refresh_speeds(cluster);
  }
  target_ = context_.engine.add_handler(*this);
}

Scheduler::~Scheduler() = default;

int Scheduler::create_task(const TaskParams& params) {
  // The slot of an exited task is reused, so memory stays bounded however many threads a
  // long run creates and exits.
  int tid = static_cast<int>(tasks_.size());
  if (!free_tids_.empty()) {
    tid = free_tids_.back();
    free_tids_.pop_back();
  } else {
    tasks_.emplace_back();
  }
  Task& task = t(tid);
  task = Task{};
  task.tid = tid;
  task.params = params;
  task.policy = params.policy;
  task.nice = params.nice;
  task.rt_priority = params.rt_priority;
  task.weight = nice_to_weight(params.nice);
  task.util.set(0, now());
  task.runnable.set(0, now());
  task.walt.reset(now(), walt_);
  cost_.add_task(tid, params.working_set_bytes, task.in_process());
  if (auto* tracer = context_.tracer) tracer->task_created(*this, tid);
  return tid;
}

// --- queries -------------------------------------------------------------------------------

int Scheduler::highest_rt_prio(int cpu) const {
  const RunQueue& r = rqs_[static_cast<std::size_t>(cpu)];
  int best = kMaxRtPrio;
  if (r.curr >= 0 && task(r.curr).is_rt()) best = task(r.curr).prio();
  for (int tid : r.rt) best = std::min(best, task(tid).prio());
  return best;
}

int Scheduler::next_pushable_rt_prio(int cpu) const {
  int best = kMaxRtPrio;
  for (int tid : rq(cpu).rt) {
    if (task(tid).rt_pushable()) best = std::min(best, task(tid).prio());
  }
  return best;
}

int Scheduler::runnable_fair_weight(int cpu) const {
  const RunQueue& r = rqs_[static_cast<std::size_t>(cpu)];
  return (r.curr >= 0 && !task(r.curr).is_rt() ? task(r.curr).weight : 0) + r.fair_weight;
}

namespace {

// A run-queue signal carried from `value` over a span with survival factor `keep`, converging
// to `ceiling` while active.
double carried(double value, double keep, bool active, double ceiling) {
  return value * keep + (active ? ceiling * (1.0 - keep) : 0.0);
}

}  // namespace

double Scheduler::cpu_load(int cpu) const {
  const RunQueue& r = rq(cpu);
  const int weight = runnable_fair_weight(cpu);
  return carried(r.load_fair, decay_(pelt_clock(cpu) - r.signals_at), weight > 0, weight);
}

inline Scheduler::Utilisation Scheduler::carried_utilisation(int cpu, double keep) const {
  const RunQueue& r = rq(cpu);
  const bool rt_running = r.curr >= 0 && task(r.curr).is_rt();
  const bool fair_running = r.curr >= 0 && !rt_running;
  const double ceiling = util_ceiling(cpu);
  return {carried(r.util_fair, keep, fair_running, ceiling),
          carried(r.util_rt, keep, rt_running, ceiling)};
}

const Scheduler::UtilMemo& Scheduler::refresh_util_memo(int cpu) const {
  UtilMemo& memo = util_memo_[static_cast<std::size_t>(cpu)];
  memo.keep = decay_(pelt_clock(cpu) - rq(cpu).signals_at);
  memo.util = carried_utilisation(cpu, memo.keep);
  memo.at = now();
  return memo;
}

double Scheduler::task_util(int tid) const {
  const Task& each = task(tid);
  const double ceiling = each.cpu >= 0 ? util_ceiling(each.cpu) : 1024.0;
  return signal_at(each.util, task_pelt_clock(each),
                   !each.is_rt() && each.state == TaskState::kRunning, ceiling);
}

double Scheduler::task_load(int tid) const {
  const Task& each = task(tid);
  return each.load_avg(task_pelt_clock(each));
}

WaltDemand Scheduler::walt_now(const Task& each) const {
  const bool running = each.state == TaskState::kRunning;
  const bool runnable = running || each.state == TaskState::kRunnable;
  return each.walt.at(now(), runnable, running, walt_scale(each.cpu), walt_.window_ns);
}

double Scheduler::walt_task_demand(int tid) const {
  return walt_now(task(tid)).demand_scaled(walt_.window_ns);
}

double Scheduler::walt_task_prev_window(int tid) const { return walt_now(task(tid)).prev_window(); }

double Scheduler::walt_cpu_demand(int cpu) const {
  const RunQueue& r = rq(cpu);
  double sum = r.curr >= 0 ? walt_task_demand(r.curr) : 0.0;
  for (int tid : r.rt) sum += walt_task_demand(tid);
  for (int tid : r.fair) sum += walt_task_demand(tid);
  return sum;
}

double Scheduler::walt_cpu_prev_busy(int cpu) const {
  return walt_cpu_busy_[static_cast<std::size_t>(cpu)]
      .at(now(), rq(cpu).curr >= 0, walt_scale(cpu), walt_.window_ns)
      .prev();
}

void Scheduler::refresh_speeds(int cluster) {
  const auto& topology = context_.topology;
  const auto& opps = topology.frequency_domain(cluster).opps;
  ClusterFrequency& f = freqs_[static_cast<std::size_t>(cluster)];
  for (int cpu : topology.cluster_cpus(cluster)) {
    restamp_pelt_clock(cpu);  // its time so far ran at the old rate
    const auto& info = topology.cpu(cpu);
    f.freq_khz = opps.empty() ? info.max_freq_khz : opps[static_cast<std::size_t>(f.opp)].freq_khz;
    freq_scale_[static_cast<std::size_t>(cpu)] = f.freq_khz * 1024 / info.max_freq_khz;
    capacity_now_[static_cast<std::size_t>(cpu)] = static_cast<double>(info.capacity) *
                                                   static_cast<double>(f.freq_khz) /
                                                   static_cast<double>(info.max_freq_khz);
    util_ceiling_[static_cast<std::size_t>(cpu)] =
        tunables_.scaled_pelt_clock ? 1024.0 : capacity_now_[static_cast<std::size_t>(cpu)];
    speed_milli_[static_cast<std::size_t>(cpu)] =
        std::int64_t{info.capacity} * 1000 * f.freq_khz / info.max_freq_khz;
  }
  // The cluster's frequency as the loop left it (without operating points, its last CPU's
  // maximum), for every CPU of the cluster.
  for (int cpu : topology.cluster_cpus(cluster)) {
    freq_khz_now_[static_cast<std::size_t>(cpu)] = f.freq_khz;
  }
}

SimTime Scheduler::scaled_pelt_clock(int cpu) const {
  const RunQueue& r = rq(cpu);
  if (r.curr < 0) return now() > r.pelt_stamp ? now() - r.idle_lost_ns : r.pelt_base;
  const auto index = static_cast<std::size_t>(cpu);
  return r.pelt_base +
         cap_scale(cap_scale(now() - r.pelt_stamp, capacity_scale_[index]), freq_scale_[index]);
}

void Scheduler::restamp_pelt_clock(int cpu) {
  RunQueue& r = q(cpu);
  if (!tunables_.scaled_pelt_clock || r.curr < 0)
    return;  // the idle form does not depend on the rate
  r.pelt_base = pelt_clock(cpu);
  r.pelt_stamp = now();
}

void Scheduler::switch_pelt_clock(int cpu, bool to_idle) {
  RunQueue& r = q(cpu);
  if (!to_idle) {
    // A CPU idle since before now: update_rq_clock_pelt() synced the clock to the wall clock
    // while idle; it goes on from there at the CPU's rate. One that went idle at this instant
    // goes on from where it was.
    if (now() > r.pelt_stamp) {
      r.lost_idle_ns = r.idle_lost_ns;
      r.pelt_base = now() - r.lost_idle_ns;
    }
    r.pelt_stamp = now();
    return;
  }
  // update_idle_rq_clock_pelt(): a CPU whose utilisation reached its maximum had no idle time
  // at full capacity to give back; the clock's lag behind the wall clock is lost idle time,
  // and the clock goes on from where it is. Otherwise it catches up with the wall clock. The
  // kernel compares util_sum (fair + RT) with ((LOAD_AVG_MAX - 1024) << 10) - LOAD_AVG_MAX;
  // as an average, that is about 1012 with the current period's contribution taken at its
  // mean (its range is 1001 to 1023). 6.1 checks in pick_next_task_fair()'s fast path only,
  // which schedule() takes when the task that leaves is fair: after an RT task the clock
  // catches up whatever the utilisation (later kernels check in set_next_task_idle()).
  constexpr double kLoadAvgMax = 47742;
  constexpr double kFullUtil =
      ((kLoadAvgMax - 1024) * 1024 - kLoadAvgMax) / (kLoadAvgMax - 1024 + 512);
  sync_rq_signals(cpu);
  r.pelt_base = pelt_clock(cpu);
  r.pelt_stamp = now();
  const bool after_fair = !t(r.curr).is_rt();
  const bool full = after_fair && r.util_fair + r.util_rt >= kFullUtil;
  r.idle_lost_ns = full ? now() - r.pelt_base : r.lost_idle_ns;
}

double Scheduler::cpu_frequency_util(int cpu) const { return frequency_util(cpu, cpu_util(cpu)); }

// cpu_overutilized(): the CPU's fair utilisation no longer fits capacity_of() with the 20%
// margin.
bool Scheduler::cpu_overutilized(int cpu) const {
  return cpu_util_cfs(cpu) * 1280.0 >= capacity_of(cpu) * 1024.0;
}

// update_overutilized_status(): set when a fair task is enqueued by a wakeup or ticks on an
// overutilised CPU; only a load balance at the root domain clears it.
void Scheduler::update_overutilized_status(int cpu) {
  if (!overutilized_ && cpu_overutilized(cpu)) overutilized_ = true;
}

bool Scheduler::any_cpu_overloaded() const {
  for (int cpu = 0; cpu < num_cpus(); ++cpu) {
    if (nr_running(cpu) >= 2) return true;
  }
  return false;
}

bool Scheduler::compute_overutilized() const {
  // Any overutilised CPU decides, whatever the order the CPUs are asked in. The one found last
  // time is asked first: it usually still is, and the others need not be brought up to now.
  const int n = num_cpus();
  int cpu = overutilized_cpu_;
  for (int i = 0; i < n; ++i) {
    SimTime& below_until = below_until_[static_cast<std::size_t>(cpu)];
    if (now() >= below_until) {
      if (cpu_overutilized(cpu)) {
        overutilized_cpu_ = cpu;
        return true;
      }
      below_until = stays_below_until(cpu);
    }
    if (++cpu == n) cpu = 0;
  }
  return false;
}

// Until the run queue changes, its fair and RT utilisation move from their values at
// signals_at towards the current capacity while that class runs, and towards 0 otherwise; the
// estimates enqueued there (util_est) stay as they are.
// So capacity_of() is at least what the larger of the RT values leaves, and a running fair
// class reaches a threshold below the current capacity only once the decay factor of the
// time since signals_at falls to k* (PELT: y^n with y^32 = 1/2). The relative margins and the
// nanosecond taken off cover rounding in the carried values and in the logarithm.
SimTime Scheduler::stays_below_until(int cpu) const {
  const RunQueue& r = rq(cpu);
  const bool rt_running = r.curr >= 0 && task(r.curr).is_rt();
  const bool fair_running = r.curr >= 0 && !rt_running;
  const double ceiling = util_ceiling(cpu);
  const double rt_max = rt_running ? std::max(r.util_rt, ceiling) : r.util_rt;
  const double threshold =
      std::max(1.0, context_.topology.capacity(cpu) - rt_max) * 1024.0 / 1280.0 * (1.0 - 1e-9);
  if (std::max(r.util_fair, static_cast<double>(r.util_est)) >= threshold) {
    return now();  // ask again next time
  }
  if (!fair_running || ceiling <= threshold) return engine::kNever;
  const double k_star = (ceiling - threshold) / (ceiling - r.util_fair);
  constexpr double kHalfLifeNs = 32.0 * 1024.0 * 1000.0;
  // The span of PELT time from signals_at to the crossing.
  const double span = -std::log2(k_star) * kHalfLifeNs * (1.0 - 1e-9) - 1.0;
  if (!tunables_.scaled_pelt_clock) {
    if (span <= 0) return now();
    return r.signals_at + static_cast<SimTime>(std::min(span, 1e15));
  }
  // By the scaled clock: less the PELT time passed already, then in wall time at the clock's
  // current rate (its rounding down only delays the crossing).
  const double wall_span = (span - static_cast<double>(pelt_clock(cpu) - r.signals_at)) /
                               (current_capacity(cpu) / 1024.0) * (1.0 - 1e-9) -
                           1.0;
  if (wall_span <= 0) return now();
  return now() + static_cast<SimTime>(std::min(wall_span, 1e15));
}

bool Scheduler::balancing_active() const {
  return !(placement_.energy_aware() && context_.topology.has_energy_model() && !overutilized());
}

SimTime Scheduler::busy_ns(int cpu) const {
  const RunQueue& r = rq(cpu);
  return busy_ns_[static_cast<std::size_t>(cpu)] + (r.curr >= 0 ? now() - r.segment_start : 0);
}

double Scheduler::mean_freq_khz(int cluster) const {
  const ClusterFrequency& f = freqs_[static_cast<std::size_t>(cluster)];
  if (now() <= 0) return static_cast<double>(current_freq_khz(cluster));
  const long double total = f.khz_ns + static_cast<long double>(current_freq_khz(cluster)) *
                                           static_cast<long double>(now() - f.accounted_until);
  return static_cast<double>(total / static_cast<long double>(now()));
}

// --- time and progress ---------------------------------------------------------------------

SimTime Scheduler::scaled_ns_beyond_limits(std::int64_t work_ref_ns, std::int64_t speed) {
  const long double ns = static_cast<long double>(work_ref_ns) * 1024000.0L / speed;
  return static_cast<SimTime>(std::min(ns, static_cast<long double>(kLongestSpan)));
}

std::int64_t Scheduler::work_for_ns(SimTime ns, int cpu) const {
  return ns * speed_milli_[static_cast<std::size_t>(cpu)] / 1024000;
}

// A task's signals are its CFS entity's: they accrue only while it is a fair task. Time spent
// as an RT task (a binder thread with an inherited RT priority) counts for the CPU's RT
// utilisation and, for the task, as if it slept (the kernel leaves the entity un-updated while
// RT and ages it on its return to the fair class).
// update_pelt() for signals last updated before now, or with WALT demand to track.
void Scheduler::advance_task_signals(Task& task) {
  // WALT accounts every class: running and waiting time alike make demand.
  if (walt_tracking_) task.walt = walt_now(task);
  const bool fair = !task.is_rt();
  const bool running = fair && task.state == TaskState::kRunning;
  const bool runnable = fair && (running || task.state == TaskState::kRunnable);
  const SimTime clock = task_pelt_clock(task);
  const double ceiling = task.cpu >= 0 ? util_ceiling(task.cpu) : 1024.0;
  if (task.util.last_update() == task.runnable.last_update()) {
    // Both signals are always brought up together: one decay factor serves both.
    if (clock <= task.util.last_update()) return;
    const double keep = decay_(clock - task.util.last_update());
    task.util.advance(clock, keep, running, ceiling);
    task.runnable.advance(clock, keep, runnable, 1024.0);
    return;
  }
  task.util.update(clock, running, ceiling, decay_);
  task.runnable.update(clock, runnable, 1024.0, decay_);
}

// sync_rq_signals() for signals last updated before now. When the utilisation was read at this
// instant, the memo holds it carried to now, and the decay factor.
void Scheduler::advance_rq_signals(int cpu) {
  RunQueue& r = q(cpu);
  const UtilMemo& memo = util_memo_[static_cast<std::size_t>(cpu)];
  const bool memo_current = memo.at == now();
  const SimTime clock = pelt_clock(cpu);
  const double keep = memo_current ? memo.keep : decay_(clock - r.signals_at);
  const Utilisation util = memo_current ? memo.util : carried_utilisation(cpu, keep);
  const int weight = runnable_fair_weight(cpu);
  r.util_fair = util.fair;
  r.util_rt = util.rt;
  r.load_fair = carried(r.load_fair, keep, weight > 0, weight);
  r.signals_at = clock;
}

// attach_entity_load_avg(): a fair task's signals (current to now) join its CPU's sums. RT
// utilisation belongs to the CPU, not to tasks, so RT tasks attach nothing.
void Scheduler::attach_signals(Task& task, int cpu) {
  if (task.is_rt()) return;
  sync_rq_signals(cpu);
  RunQueue& r = q(cpu);
  r.util_fair += task.util.value();
  r.load_fair += task.runnable.value() / 1024.0 * task.weight;
}

// detach_entity_load_avg(): a fair task's signals leave its CPU's sums (never below zero).
void Scheduler::detach_signals(Task& task) {
  if (task.cpu < 0 || task.is_rt()) return;
  sync_rq_signals(task.cpu);
  RunQueue& r = q(task.cpu);
  r.util_fair = std::max(0.0, r.util_fair - task.util.value());
  r.load_fair = std::max(0.0, r.load_fair - task.runnable.value() / 1024.0 * task.weight);
}

// Charges the running task of `cpu` for the time since segment_start: stall first, then work.
// Always inline: on_event() runs it for every completion (one per event), where the call and
// its register saves cost about 20 instructions of the 130; account_running() is the
// out-of-line form for the other callers.
[[gnu::always_inline]] inline void Scheduler::charge_running(int cpu) {
  RunQueue& r = q(cpu);
  Task& task = t(r.curr);
  // Read once: the stores below may alias the engine's clock as far as the compiler knows.
  const SimTime now_ns = now();
  const SimTime elapsed = now_ns - r.segment_start;
  r.segment_start = now_ns;
  busy_ns_[static_cast<std::size_t>(cpu)] += elapsed;
  if (walt_tracking_) {
    walt_cpu_busy_[static_cast<std::size_t>(cpu)].account(now_ns, true, walt_scale(cpu),
                                                          walt_.window_ns);
  }
  const SimTime stall = std::min(elapsed, task.overhead_ns);
  task.overhead_ns -= stall;
  // The context switch is paid first, then refills and transfers, then the work.
  const SimTime switch_part = std::min(stall, task.switch_stall_left);
  task.switch_stall_left -= switch_part;
  task.refill_stall_left -= std::min(stall - switch_part, task.refill_stall_left);
  task.times.switch_stall += switch_part;
  task.times.cache_stall += stall - switch_part;
  task.times.work += elapsed - stall;
  const std::int64_t work = std::min(task.work_ref_ns, work_for_ns(elapsed - stall, cpu));
  task.work_ref_ns -= work;
  cost_.on_execute(elapsed, work, freq_khz_now_[static_cast<std::size_t>(cpu)], task.in_process());
  // update_min_vruntime(): the queue's minimum follows the least vruntime of the running fair
  // task and the queued ones, and never goes back.
  std::int64_t min_candidate = std::numeric_limits<std::int64_t>::max();
  if (!task.is_rt()) {
    const SimTime delta = now_ns - task.exec_start;
    // Nice-0 tasks (weight 1024) advance at wall speed: the same value without a division.
    task.vruntime += task.weight == 1024 ? delta : delta * 1024 / task.weight;
    min_candidate = task.vruntime;
  }
  task.exec_start = now_ns;
  // PELT is brought up where the task's state changes (update_pelt()); WALT's demand is kept
  // current at every account, as it always was.
  if (walt_tracking_) task.walt = walt_now(task);
  for (int tid : r.fair) min_candidate = std::min(min_candidate, t(tid).vruntime);
  if (min_candidate != std::numeric_limits<std::int64_t>::max()) {
    r.min_vruntime = std::max(r.min_vruntime, min_candidate);
  }
}

void Scheduler::account_running(int cpu) { charge_running(cpu); }

// Re-times the running segment of `cpu` from now. When the pending completion event already
// fires at the new time for the same task it stays: no superseded event is left in the queue.
void Scheduler::rearm(int cpu) {
  RunQueue& r = q(cpu);
  // Its callers have charged the running task's progress up to now (account_progress()).
  BSIM_CHECK(r.curr < 0 || r.segment_start == now());
  if (r.curr < 0 || !t(r.curr).has_segment) {
    ++r.generation;
    r.done_at = engine::kNever;
    return;
  }
  const Task& task = t(r.curr);
  // Stalls and work are bounded by the topology's and the scenario's limits; the sum is
  // capped all the same, so that no input can make the completion time overflow.
  const SimTime done =
      now() + std::min(task.overhead_ns + scaled_ns(task.work_ref_ns, cpu), kLongestSpan);
  if (done == r.done_at && r.done_tid == r.curr) return;
  ++r.generation;
  r.done_at = done;
  r.done_tid = r.curr;
  context_.engine.schedule(done, target_, kWorkDone, static_cast<std::uint32_t>(cpu), r.generation);
}

// --- util_est ----------------------------------------------------------------------------

void Scheduler::util_est_enqueue(Task& task, int cpu) {
  if (!tunables_.util_est || task.is_rt()) return;
  BSIM_CHECK(task.util_est_cpu < 0);
  sync_rq_signals(cpu);  // the run queue's utilisation changes
  q(cpu).util_est += task.util_est.value();
  task.util_est_cpu = cpu;
}

void Scheduler::util_est_dequeue(Task& task) {
  if (task.util_est_cpu < 0) return;
  sync_rq_signals(task.util_est_cpu);
  int& sum = q(task.util_est_cpu).util_est;
  sum -= std::min(sum, task.util_est.value());
  task.util_est_cpu = -1;
}

// The task, dequeued from `cpu` to sleep, with its PELT signals current.
void Scheduler::util_est_update(Task& task, int cpu) {
  if (!tunables_.util_est || task.is_rt()) return;
  UtilEstSample sample;
  sample.util = static_cast<int>(task.util.value());
  // The kernel's runnable average accrues like its utilisation: by the scaled PELT clock,
  // towards 1024 as the utilisation does; by the wall clock, the model's runnable fraction is
  // scaled by the current capacity, as the utilisation's ceiling is.
  const double runnable = task.runnable.value();
  sample.runnable = static_cast<int>(
      tunables_.scaled_pelt_clock ? runnable : runnable * current_capacity(cpu) / 1024.0);
  sample.capacity_orig = context_.topology.capacity(cpu);
  task.util_est.on_sleep(now(), sample);
}

// --- queues ------------------------------------------------------------------------------

void Scheduler::enqueue(int cpu, int tid) {
  sync_rq_signals(cpu);
  Task& task = t(tid);
  task.state = TaskState::kRunnable;
  task.kept_by_rt_sync = false;
  RunQueue& r = q(cpu);
  if (task.is_rt()) {
    r.rt.push_back(tid);
  } else {
    r.fair.push_back(tid);
    r.fair_weight += task.weight;
  }
}

void Scheduler::dequeue(int cpu, int tid) {
  sync_rq_signals(cpu);
  RunQueue& r = q(cpu);
  // A queued task is on the list of its class, with its weight: set_attributes() dequeues it
  // before a change.
  const Task& task = t(tid);
  std::vector<int>& list = task.is_rt() ? r.rt : r.fair;
  const auto it = std::find(list.begin(), list.end(), tid);
  BSIM_CHECK_MSG(it != list.end(), "dequeue of a task that is not queued");
  list.erase(it);
  if (!task.is_rt()) r.fair_weight -= task.weight;
}

int Scheduler::pick_next(int cpu) const {
  const RunQueue& r = rqs_[static_cast<std::size_t>(cpu)];
  int best = -1;
  for (int tid : r.rt) {
    const Task& c = task(tid);
    if (best < 0 || c.prio() < task(best).prio() ||
        (c.prio() == task(best).prio() && c.enqueue_seq < task(best).enqueue_seq)) {
      best = tid;
    }
  }
  if (best >= 0) return best;
  for (int tid : r.fair) {
    const Task& c = task(tid);
    if (best < 0 || c.vruntime < task(best).vruntime ||
        (c.vruntime == task(best).vruntime && c.enqueue_seq < task(best).enqueue_seq)) {
      best = tid;
    }
  }
  return best;
}

// set_task_cpu(): moves the task's bookkeeping to `cpu`, renormalising its vruntime.
void Scheduler::place_on_cpu(Task& task, int cpu) {
  if (task.cpu != cpu) {
    update_pelt(task);
    if (task.cpu >= 0) {
      if (auto* tracer = context_.tracer) tracer->sched_migrate(*this, task.tid, cpu);
      ++migrations_;
      if (task.in_process()) ++process_migrations_;
      if (!task.is_rt()) task.vruntime += q(cpu).min_vruntime - q(task.cpu).min_vruntime;
      detach_signals(task);
    }
    task.cpu = cpu;
    if (tunables_.scaled_pelt_clock) {
      // attach_entity_load_avg(): the signals, current on the old CPU's PELT clock (or the
      // wall clock), go on from the new CPU's clock now.
      const SimTime clock = pelt_clock(cpu);
      task.util.set(task.util.value(), clock);
      task.runnable.set(task.runnable.value(), clock);
    }
    attach_signals(task, cpu);
    // __set_task_cpu() sets p->wake_cpu, and try_to_wake_up() calls it only on a move: a
    // wakeup that leaves the task where it is keeps a wake_cpu another path chose (binder's
    // nudge survives a stay-put wakeup).
    task.wake_cpu = cpu;
  }
}

// --- wakeup and preemption -----------------------------------------------------------------

void Scheduler::wake_new(int tid, int parent_cpu, int parent_tid) {
  Task& task = t(tid);
  BSIM_CHECK(task.state == TaskState::kNew);
  const int start_cpu = parent_cpu >= 0 ? parent_cpu : 0;
  task.cpu = -1;
  task.wake_cpu = start_cpu;
  task.state = TaskState::kSleeping;
  WakeContext ctx;
  ctx.waker_tid = parent_tid;
  ctx.waker_cpu = parent_cpu;
  ctx.fork = true;
  wake(tid, ctx);
}

void Scheduler::wake(int tid, const WakeContext& ctx) {
  Task& task = t(tid);
  BSIM_CHECK_MSG(task.state == TaskState::kSleeping, "wake of a task that is not sleeping");
  BSIM_CHECK_MSG(task.has_segment, "a task must have work when it is woken");
  if (auto* tracer = context_.tracer) tracer->sched_waking(*this, tid, ctx);
  update_pelt(task);
  const int prev = task.wake_cpu >= 0 ? task.wake_cpu : std::max(ctx.waker_cpu, 0);
  int cpu = placement_.select_cpu(*this, tid, prev, ctx);
  BSIM_CHECK(cpu >= 0 && cpu < num_cpus());
  if (!task.allowed_on(cpu)) {
    // select_fallback_rq(): the first CPU the task may run on.
    cpu = 0;
    while (cpu < num_cpus() && !task.allowed_on(cpu)) ++cpu;
    BSIM_CHECK_MSG(cpu < num_cpus(), "a task's affinity allows no CPU");
  }
  // Checked first: the call itself costs on this hot path even when the level drops the record.
  if (context_.sched_log->should_log(spdlog::level::debug)) {
    const SimTime at = now();
    const char* const sync = ctx.sync ? " sync" : "";
    engine::log_debug(
        *context_.sched_log, "[{} ns] wake {} ({}) prev {} waker cpu {}{} -> cpu {}",
        fmt::make_format_args(at, tid, task.params.name, prev, ctx.waker_cpu, sync, cpu));
  }
  const bool first_placement = task.cpu < 0;
  account_progress(cpu);  // update_curr(): min_vruntime of the target is current
  place_on_cpu(task, cpu);
  if (!task.is_rt()) {
    if (first_placement) {
      // place_entity(initial) with START_DEBIT: a new task starts one virtual slice behind
      // the queue's minimum, whatever CPU it was created on.
      task.vruntime = q(cpu).min_vruntime + sched_slice(cpu, task) * 1024 / task.weight;
    } else {
      // place_entity(): a sleeper gets at most half a latency period of credit.
      const std::int64_t floor = q(cpu).min_vruntime - tunables_.sched_latency_ns / 2;
      task.vruntime = std::max(task.vruntime, floor);
    }
  }
  task.enqueue_seq = next_enqueue_seq_++;
  task.resume_pending = true;
  task.woken_at = now();
  task.pending_ipi = 0;
  task.pending_idle_exit = 0;
  // enqueue_task_rt() on Android: a wakee the RT sync rule keeps with its waker is not made
  // pushable, so that no other CPU pulls it away (asked before it is queued).
  const bool kept_by_sync = task.is_rt() && placement_.honors_rt_sync() && ctx.sync &&
                            rt_sync_holds(cpu, task.prio(), true);
  enqueue(cpu, tid);
  task.kept_by_rt_sync = kept_by_sync;
  util_est_enqueue(task, cpu);
  if (!task.is_rt() && !ctx.fork) update_overutilized_status(cpu);  // enqueue_task_fair()
  if (auto* tracer = context_.tracer) tracer->sched_wakeup(*this, tid, ctx);
  update_pelt(task);
  check_preempt(cpu, tid, ctx.waker_cpu);
  // task_woken_rt(): an RT wakee that the running RT task keeps waiting (at least as important,
  // or pinned) is pushed away at once, unless a reschedule is already on its way.
  const RunQueue& r = q(cpu);
  if (task.is_rt() && !task.pinned() && r.curr >= 0 && t(r.curr).is_rt() &&
      r.resched_at == engine::kNever && (t(r.curr).pinned() || t(r.curr).prio() <= task.prio())) {
    push_rt_tasks(cpu);
  }
  update_frequency(context_.topology.cluster_of(cpu));
}

bool Scheduler::rt_sync_holds(int cpu, int prio, bool wakee_queued) const {
  const RunQueue& r = rq(cpu);
  if (r.curr < 0 || !task(r.curr).is_rt()) return false;  // only RT wakers
  // rt.rt_nr_running: the running task, the queued ones and, once queued, the wakee.
  const int rt_nr_running = 1 + static_cast<int>(r.rt.size()) + (wakee_queued ? 1 : 0);
  return prio <= next_pushable_rt_prio(cpu) && rt_nr_running <= 2;
}

void Scheduler::request_resched(int cpu, SimTime at) {
  RunQueue& r = q(cpu);
  if (r.resched_at <= at && r.resched_at >= now()) return;  // an earlier one is pending
  r.resched_at = at;
  context_.engine.schedule(at, target_, kResched, static_cast<std::uint32_t>(cpu));
}

void Scheduler::check_preempt(int cpu, int tid, int waker_cpu) {
  RunQueue& r = q(cpu);
  const bool remote = waker_cpu != cpu;
  const SimTime ipi = remote && waker_cpu >= 0 ? context_.topology.costs().ipi_latency_ns : 0;
  if (r.curr < 0) {
    if (r.available_at > now()) return;  // already being woken
    const topology::IdleState& state =
        context_.topology.cpu(cpu).idle_states[static_cast<std::size_t>(r.idle_state)];
    SimTime exit = state.exit_latency_ns;
    if (tunables_.idle_wakeup_after_entry) {
      // The wakeup reaches the CPU after the IPI; an entry still under way ends first.
      exit += std::max<SimTime>(0, r.idle_since + state.entry_latency_ns - (now() + ipi));
    }
    r.available_at = now() + ipi + exit;
    if (t(tid).resume_pending) {
      t(tid).pending_ipi = ipi;
      t(tid).pending_idle_exit = exit;
    }
    request_resched(cpu, r.available_at);
    return;
  }
  const Task& curr = t(r.curr);
  const Task& wakee = t(tid);
  bool preempt = false;
  if (wakee.is_rt() || curr.is_rt()) {
    preempt = wakee.prio() < curr.prio();
  } else {
    account_progress(cpu);  // update_curr()
    const SimTime gran = tunables_.wakeup_granularity_ns * 1024 / wakee.weight;
    preempt = curr.vruntime - wakee.vruntime > gran;
    if (!preempt) ensure_slice_check(cpu);
  }
  if (preempt) {
    if (t(tid).resume_pending) t(tid).pending_ipi = ipi;
    request_resched(cpu, std::max(now() + ipi, r.available_at));
  }
}

// --- switching -----------------------------------------------------------------------------

void Scheduler::schedule_cpu(int cpu) {
  sync_rq_signals(cpu);
  RunQueue& r = q(cpu);
  r.need_resched = false;
  const int prev = r.curr;
  if (prev >= 0) {
    account_progress(cpu);
    Task& p = t(prev);
    update_pelt(p);      // it ran until now
    enqueue(cpu, prev);  // competes with the queued tasks; RT keeps its place (enqueue_seq)
    set_curr(cpu, -1);
    const int next = pick_next(cpu);
    dequeue(cpu, next);
    if (next == prev) {
      set_curr(cpu, prev);
      p.state = TaskState::kRunning;
      rearm(cpu);
      push_rt_tasks(cpu);  // set_next_task_rt(), picked again
      return;
    }
    if (!p.is_rt()) p.enqueue_seq = next_enqueue_seq_++;
    count_switch_out(p);  // involuntary: prev was preempted
    switch_in(cpu, next);
    if (t(prev).watch_switches) owner_->on_switch(prev, false);
    push_rt_tasks(cpu);  // set_next_task_rt(): a preempted RT task may run elsewhere
    return;
  }
  int next = pick_next(cpu);
  if (next < 0 && tunables_.newidle_balance) next = newidle_balance(cpu);
  if (next < 0) {
    go_idle(cpu);
    // newidle_balance() found nothing queued to pull, but may have queued the active balance
    // of a misfit task: it arrives after this CPU went idle.
    if (tunables_.newidle_balance) pull_misfit_task(cpu);
    return;
  }
  dequeue(cpu, next);
  if (r.idle_since >= 0) {
    // Leaving idle: tell the idle governor how long it lasted.
    const topology::IdleState& state =
        context_.topology.cpu(cpu).idle_states[static_cast<std::size_t>(r.idle_state)];
    r.governor.reflect(
        now() - r.idle_since,
        state.exit_latency_ns + (tunables_.idle_wakeup_after_entry ? state.entry_latency_ns : 0));
    r.idle_history[r.idle_history_next] = now() - r.idle_since;
    r.idle_history_next = (r.idle_history_next + 1) % r.idle_history.size();
    r.idle_since = -1;
  }
  switch_in(cpu, next);
  push_rt_tasks(cpu);  // set_next_task_rt()
}

void Scheduler::switch_in(int cpu, int tid) {
  sync_rq_signals(cpu);
  RunQueue& r = q(cpu);
  Task& task = t(tid);
  update_pelt(task);
  if (walt_tracking_) {
    // The CPU was idle since its last account (a previous task's run is accounted already).
    walt_cpu_busy_[static_cast<std::size_t>(cpu)].account(now(), false, walt_scale(cpu),
                                                          walt_.window_ns);
  }
  if (auto* tracer = context_.tracer) tracer->sched_switch(*this, cpu, tid);
  set_curr(cpu, tid);
  task.state = TaskState::kRunning;
  task.exec_start = now();
  r.segment_start = now();
  const SimTime switch_cost = scaled_ns(context_.topology.costs().context_switch_ref_ns, cpu);
  const SimTime refill = cost_.on_switch_in(tid, cpu);
  // A refill a preemption left unpaid is part of this one: the lines it had still to load are
  // among those this one loads, and added up they would be paid for twice.
  task.overhead_ns = capped_sum(
      task.overhead_ns, switch_cost + std::max<SimTime>(0, refill - task.refill_stall_left));
  task.refill_stall_left = std::max(task.refill_stall_left, refill);
  task.switch_stall_left = capped_sum(task.switch_stall_left, switch_cost);
  // The slice counts from the end of the stall every switch-in brings (the switch, then the
  // refill of the caches). The kernel counts it from the pick: the switch is microseconds, but
  // a refill, ordinary execution there, can be a few hundred (a 256 KiB working set from the L3
  // is about 140 us), so a task with a large working set gets up to a tenth more than its 3 ms
  // minimum. Counted from the pick, a stall that outlasts the slice would have the task
  // preempted before it ever ran, and two such tasks on a CPU would only switch and refill.
  task.slice_start = capped_sum(now(), capped_sum(task.switch_stall_left, task.refill_stall_left));
  if (task.resume_pending) {
    // The wait since the wakeup: the IPI, then the idle exit, the rest behind other tasks.
    const SimTime waited = now() - task.woken_at;
    const SimTime ipi = std::min(waited, task.pending_ipi);
    const SimTime idle_exit = std::min(waited - ipi, task.pending_idle_exit);
    task.times.wait_ipi += ipi;
    task.times.wait_idle_exit += idle_exit;
    task.times.wait_rq += waited - ipi - idle_exit;
    task.pending_ipi = 0;
    task.pending_idle_exit = 0;
    task.resume_pending = false;
    const SimTime resume_stall = owner_->on_resume(tid, cpu);
    BSIM_CHECK(resume_stall >= 0);
    task.overhead_ns = capped_sum(task.overhead_ns, resume_stall);
  }
  BSIM_CHECK_MSG(task.has_segment, "a task was switched in without work");
  update_misfit_status(cpu);
  rearm(cpu);
  start_tick(cpu);
  if (!task.is_rt() && !r.fair.empty()) ensure_slice_check(cpu);
  if (task.watch_switches) owner_->on_switch(tid, true);
}

// --- new-idle balance -------------------------------------------------------------------------

SimTime Scheduler::average_idle(int cpu) const {
  const RunQueue& r = rqs_[static_cast<std::size_t>(cpu)];
  SimTime sum = 0;
  for (SimTime d : r.idle_history) sum += d;
  return sum / static_cast<SimTime>(r.idle_history.size());
}

// newidle_balance(): a CPU about to go idle pulls a waiting fair task. Returns the task now
// queued on `cpu`, or -1. (RT work is pulled before, when an RT task leaves: switch_out().)
int Scheduler::newidle_balance(int cpu) {
  // The kernel skips the fair balance when this CPU's idle periods are short on average
  // (avg_idle < migration cost): the pull would cost more than it saves. The placement
  // decides (may_pull); WALT still balances within a cluster then.
  const BalanceKind kind = average_idle(cpu) < tunables_.migration_cost_ns
                               ? BalanceKind::kNewIdleShortIdle
                               : BalanceKind::kNewIdle;
  // A balance that reaches the root domain (rd->overload: some CPU runs two or more tasks; this
  // CPU idle long enough on average) updates the flag.
  if (kind == BalanceKind::kNewIdle && any_cpu_overloaded()) refresh_overutilized();
  if (!balancing_active()) return -1;
  if (kind == BalanceKind::kNewIdleShortIdle && !placement_.pulls_after_short_idle()) return -1;
  const int pulled = pull_fair_task(cpu, 1, kind);
  if (pulled >= 0) ++newidle_pulls_;
  return pulled;
}

// pull_rt_task(): `cpu` lowered its priority. From CPUs that are RT-overloaded (two or more RT
// tasks runnable), the most important waiting pushable RT task that may run here and is more
// important than `below_prio`; a CPU whose most important such task is about to preempt the
// task running there anyway is skipped (lowest CPU first on ties). A task waiting alone for a CPU
// that is waking up is not pulled: that CPU is not overloaded. (With RT_PUSH_IPI the kernel has the
// overloaded CPU push the task after an IPI, to a CPU of the lowest priority level, which
// includes this one; the model pulls it here at once.)
int Scheduler::pull_rt_task(int cpu, int below_prio) {
  int best = -1;
  for (int other = 0; other < num_cpus(); ++other) {
    const RunQueue& src = q(other);
    const bool curr_rt = src.curr >= 0 && t(src.curr).is_rt();
    if (other == cpu || static_cast<int>(src.rt.size()) + (curr_rt ? 1 : 0) < 2) continue;
    // pick_highest_pushable_task(): the most important pushable task that may run here; if
    // it is about to preempt the task running there, nothing is pulled from that CPU.
    int pick = -1;
    for (int tid : src.rt) {
      const Task& candidate = t(tid);
      if (candidate.rt_pushable() && candidate.allowed_on(cpu) &&
          (pick < 0 || candidate.prio() < t(pick).prio())) {
        pick = tid;
      }
    }
    const int curr_prio = src.curr >= 0 ? t(src.curr).prio() : kMaxRtPrio + 40;
    if (pick < 0 || t(pick).prio() < curr_prio || t(pick).prio() >= below_prio) continue;
    if (best < 0 || t(pick).prio() < t(best).prio()) best = pick;
  }
  if (best >= 0) {
    migrate_queued(best, cpu);
    ++rt_pulls_;
  }
  return best;
}

// push_rt_tasks(): while `cpu` runs an RT task and has another RT task waiting, its most
// important waiting pushable RT task (first queued on ties) moves to the CPU find_lowest_rq()
// chooses, if that CPU runs nothing as important, and preempts there (an IPI). A waiting task
// more important than the running one stays: it runs here next.
void Scheduler::push_waiting_rt_tasks(int cpu) {
  while (true) {
    const RunQueue& r = q(cpu);
    if (r.curr < 0 || !t(r.curr).is_rt() || r.rt.empty()) return;
    int next = -1;
    for (int tid : r.rt) {
      const Task& c = t(tid);
      if (!c.rt_pushable()) continue;
      if (next < 0 || c.prio() < t(next).prio() ||
          (c.prio() == t(next).prio() && c.enqueue_seq < t(next).enqueue_seq)) {
        next = tid;
      }
    }
    if (next < 0 || t(next).prio() < t(r.curr).prio()) return;
    const int target = placement_.lowest_rq(*this, next, cpu);
    if (target < 0 || target == cpu || t(next).prio() >= highest_rt_prio(target)) return;
    migrate_queued(next, target);
    ++rt_pushes_;
    check_preempt(target, next, cpu);
  }
}

// load_balance() reduced to its outcome: from the busiest CPU (most runnable tasks, at least
// two, and at least `min_surplus` more than this CPU), first within this CPU's cluster, then
// anywhere, the longest-queued fair task that may run here and is not cache-hot.
int Scheduler::pull_fair_task(int cpu, int min_surplus, BalanceKind kind) {
  const auto& topology = context_.topology;
  for (const bool same_cluster : {true, false}) {
    int busiest = -1;
    for (int other = 0; other < num_cpus(); ++other) {
      if (other == cpu ||
          (topology.cluster_of(other) == topology.cluster_of(cpu)) != same_cluster) {
        continue;
      }
      if (nr_running(other) >= 2 && nr_running(other) - nr_running(cpu) >= min_surplus &&
          !q(other).fair.empty() && (busiest < 0 || nr_running(other) > nr_running(busiest)) &&
          placement_.may_pull(*this, other, cpu, kind)) {
        busiest = other;
      }
    }
    if (busiest < 0) continue;
    int pick = -1;
    for (int tid : q(busiest).fair) {
      const Task& candidate = t(tid);
      const bool hot = now() - candidate.exec_start < tunables_.migration_cost_ns;
      if (candidate.allowed_on(cpu) && !hot &&
          (pick < 0 || candidate.enqueue_seq < t(pick).enqueue_seq)) {
        pick = tid;
      }
    }
    if (pick >= 0) {
      migrate_queued(pick, cpu);
      return pick;
    }
  }
  return -1;
}

void Scheduler::migrate_queued(int tid, int to_cpu) {
  Task& task = t(tid);
  const int from = task.cpu;
  account_progress(from);
  dequeue(from, tid);
  util_est_dequeue(task);
  update_pelt(task);
  place_on_cpu(task, to_cpu);
  enqueue(to_cpu, tid);
  util_est_enqueue(task, to_cpu);
  update_pelt(task);
  update_frequency(context_.topology.cluster_of(from));
  update_frequency(context_.topology.cluster_of(to_cpu));
}

void Scheduler::go_idle(int cpu) {
  sync_rq_signals(cpu);
  RunQueue& r = q(cpu);
  set_curr(cpu, -1);
  r.idle_since = now();
  ++r.generation;
  r.done_at = engine::kNever;
  // The idle governor, told how far the CPU's next timer is.
  std::erase_if(r.timers, [this](SimTime at) { return at <= now(); });
  const auto next_timer = std::min_element(r.timers.begin(), r.timers.end());
  r.idle_state =
      r.governor.select(context_.topology.cpu(cpu).idle_states,
                        next_timer == r.timers.end() ? engine::kNever : *next_timer - now());
  if (auto* tracer = context_.tracer) tracer->cpu_idle(*this, cpu);
}

// --- fair time slices ------------------------------------------------------------------------

// sched_slice(): the period is shared by weight among the run queue's fair tasks, the running
// one included (the kernel's cfs_rq->nr_running and load count it), and `task` when it is not
// on the queue yet (a new task's START_DEBIT).
SimTime Scheduler::sched_slice(int cpu, const Task& task) const {
  const RunQueue& r = rqs_[static_cast<std::size_t>(cpu)];
  SimTime nr = static_cast<SimTime>(r.fair.size());
  std::int64_t total_weight = r.fair_weight;
  if (r.curr >= 0 && !this->task(r.curr).is_rt()) {
    ++nr;
    total_weight += this->task(r.curr).weight;
  }
  if (r.curr != task.tid) {  // a new task, not queued yet
    ++nr;
    total_weight += task.weight;
  }
  const SimTime period = std::max(tunables_.sched_latency_ns, nr * tunables_.min_granularity_ns);
  return period * task.weight / total_weight;
}

void Scheduler::ensure_slice_check(int cpu) {
  RunQueue& r = q(cpu);
  if (r.curr < 0 || t(r.curr).is_rt() || r.fair.empty()) return;
  // The tick checks the slice: the first tick boundary at or after the slice's end. The slice
  // shrinks as tasks join the queue (check_preempt_tick() recomputes it at every tick), so a
  // pending check moves earlier when the slice now ends sooner.
  const SimTime due = std::max(now(), t(r.curr).slice_start + sched_slice(cpu, t(r.curr)));
  const SimTime tick = (due + tunables_.tick_ns - 1) / tunables_.tick_ns * tunables_.tick_ns;
  if (tick >= r.slice_check_at) return;  // a check at or before then is pending
  arm_slice_check(cpu, tick, r.curr);
}

void Scheduler::arm_slice_check(int cpu, SimTime at, int tid) {
  RunQueue& r = q(cpu);
  r.slice_check_at = at;
  context_.engine.schedule(at, target_, kSliceCheck, static_cast<std::uint32_t>(cpu),
                           static_cast<std::uint64_t>(tid));
}

void Scheduler::slice_check(int cpu, std::uint64_t checked_tid) {
  RunQueue& r = q(cpu);
  if (now() != r.slice_check_at) return;  // moved earlier since, or none pending
  r.slice_check_at = engine::kNever;
  if (r.curr < 0 || static_cast<std::uint64_t>(r.curr) != checked_tid || t(r.curr).is_rt() ||
      r.fair.empty()) {
    ensure_slice_check(cpu);
    return;
  }
  account_progress(cpu);
  settle_running(cpu);
  const Task& curr = t(r.curr);
  const SimTime ran = now() - curr.slice_start;
  const SimTime ideal = sched_slice(cpu, curr);
  const int leftmost = pick_next(cpu);
  // check_preempt_tick(): over its slice, or (once it has run the minimum granularity) leading
  // the leftmost waiting task by more than its slice.
  const bool expired = ran > ideal || (ran >= tunables_.min_granularity_ns && leftmost >= 0 &&
                                       curr.vruntime - t(leftmost).vruntime > ideal);
  if (expired && curr.preempt_count > 0) {
    r.need_resched = true;  // preempt_enable() reschedules; the tick goes on checking
    arm_slice_check(cpu, now() + tunables_.tick_ns, static_cast<int>(checked_tid));
  } else if (expired) {
    schedule_cpu(cpu);
    // Still the leftmost, it keeps the CPU: the tick goes on checking it.
    if (r.curr >= 0 && static_cast<std::uint64_t>(r.curr) == checked_tid && !r.fair.empty() &&
        r.slice_check_at == engine::kNever) {
      arm_slice_check(cpu, now() + tunables_.tick_ns, static_cast<int>(checked_tid));
    }
  } else {
    arm_slice_check(cpu, now() + tunables_.tick_ns, static_cast<int>(checked_tid));
  }
}

// --- task-driven transitions ---------------------------------------------------------------

void Scheduler::replace_work(int tid, std::int64_t work_ref_ns) {
  BSIM_CHECK(work_ref_ns >= 0);
  Task& task = t(tid);
  const bool running = task.state == TaskState::kRunning;
  if (running) account_progress(task.cpu);
  task.work_ref_ns = work_ref_ns;
  task.has_segment = true;
  if (running) rearm(task.cpu);
}

void Scheduler::preempt_disable(int tid) {
  Task& task = t(tid);
  BSIM_CHECK(task.state == TaskState::kRunning);
  ++task.preempt_count;
}

void Scheduler::preempt_enable(int tid) {
  Task& task = t(tid);
  BSIM_CHECK(task.state == TaskState::kRunning && task.preempt_count > 0);
  if (--task.preempt_count > 0) return;
  RunQueue& r = q(task.cpu);
  if (r.need_resched) {
    r.need_resched = false;
    request_resched(task.cpu, now());
  }
}

void Scheduler::add_overhead(int tid, SimTime ns) {
  BSIM_CHECK(ns >= 0);
  Task& task = t(tid);
  const bool running = task.state == TaskState::kRunning;
  if (running) account_progress(task.cpu);
  task.overhead_ns = capped_sum(task.overhead_ns, ns);
  if (running) rearm(task.cpu);
}

// The running task stops running for good or until a wakeup (`state`), and its CPU
// schedules the next task. Counted as a (voluntary) context switch.
void Scheduler::switch_out(int tid, TaskState state) {
  Task& task = t(tid);
  BSIM_CHECK_MSG(task.state == TaskState::kRunning, "only the running task can block or exit");
  BSIM_CHECK_MSG(task.preempt_count == 0, "a task blocked with preemption disabled");
  const int cpu = task.cpu;
  if (auto* tracer = context_.tracer) tracer->sched_block(*this, tid, state == TaskState::kDead);
  account_progress(cpu);
  sync_rq_signals(cpu);
  update_pelt(task);  // it ran until now
  task.state = state;
  task.has_segment = false;
  task.switch_stall_left = 0;
  task.refill_stall_left = 0;
  task.overhead_ns = 0;
  task.work_ref_ns = 0;
  util_est_dequeue(task);
  util_est_update(task, cpu);
  // The CPU's PELT clock leaves the task with its utilisation still attached (the kernel
  // removes a dead task's at task_dead_fair(), after the switch).
  set_curr(cpu, -1);
  if (state == TaskState::kDead) {
    detach_signals(task);
    task.cpu = -1;  // no longer attached to a run queue's load
    free_tids_.push_back(tid);
  }
  count_switch_out(task);
  // balance_rt(): an RT task left the CPU and what remains is less important; waiting RT work
  // elsewhere may run here instead.
  if (task.is_rt() && highest_rt_prio(cpu) > task.prio()) pull_rt_task(cpu, highest_rt_prio(cpu));
  schedule_cpu(cpu);
  update_frequency(context_.topology.cluster_of(cpu));
  if (t(tid).watch_switches) owner_->on_switch(tid, false);
}

void Scheduler::block(int tid) { switch_out(tid, TaskState::kSleeping); }

void Scheduler::block_until(int tid, SimTime wake_at) {
  std::vector<SimTime>& timers = q(t(tid).cpu).timers;
  if (timers.size() >= 16) std::erase_if(timers, [this](SimTime at) { return at <= now(); });
  timers.push_back(wake_at);
  block(tid);
}

void Scheduler::exit(int tid) { switch_out(tid, TaskState::kDead); }

void Scheduler::set_task_util(int tid, double util) {
  for (UtilMemo& memo : util_memo_) memo.at = engine::kNever;
  std::fill(below_until_.begin(), below_until_.end(), kUnknown);
  Task& task = t(tid);
  update_pelt(task);
  detach_signals(task);
  task.util.set(util, task_pelt_clock(task));
  if (task.cpu >= 0) attach_signals(task, task.cpu);
}

// A fair task leaving for an RT class (`was_rt` false) or back (true), on task.cpu: see
// SchedTunables::normalise_vruntime_across_rt.
void Scheduler::carry_vruntime_across_rt(Task& task, bool was_rt) {
  const std::int64_t min_vruntime = q(task.cpu).min_vruntime;
  if (!tunables_.normalise_vruntime_across_rt) {
    if (was_rt) {
      task.vruntime =
          std::clamp(task.vruntime, min_vruntime, min_vruntime + tunables_.sched_latency_ns);
    }
    return;
  }
  if (was_rt) {
    task.vruntime += min_vruntime;
    return;
  }
  if (task.state == TaskState::kSleeping) {
    // place_entity(cfs_rq, se, 0): a sleeper keeps at most half a latency period of credit.
    task.vruntime = std::max(task.vruntime, min_vruntime - tunables_.sched_latency_ns / 2);
  }
  task.vruntime -= min_vruntime;
}

void Scheduler::change_attributes(int tid, Policy policy, int nice, int rt_priority) {
  Task& task = t(tid);
  const bool queued = task.state == TaskState::kRunnable;
  const bool running = task.state == TaskState::kRunning;
  if (running) account_progress(task.cpu);
  if (queued) dequeue(task.cpu, tid);
  const bool was_rt = task.is_rt();
  const int old_prio = task.prio();
  // The task's share of its CPU's sums moves with its class and weight.
  update_pelt(task);
  if (task.cpu >= 0) sync_rq_signals(task.cpu);
  detach_signals(task);
  util_est_dequeue(task);  // dequeue_task() for the change: no update of the estimate
  task.policy = policy;
  task.nice = nice;
  task.rt_priority = rt_priority;
  task.weight = nice_to_weight(nice);
  if (task.cpu >= 0) attach_signals(task, task.cpu);
  if (queued || running) util_est_enqueue(task, task.cpu);
  if (task.cpu >= 0 && was_rt != task.is_rt()) carry_vruntime_across_rt(task, was_rt);
  if (queued) {
    enqueue(task.cpu, tid);
    check_preempt(task.cpu, tid, task.cpu);
    // switched_to_rt(): a waiting task made RT on an overloaded CPU may be pushed away.
    if (!was_rt && task.is_rt()) push_rt_tasks(task.cpu);
  }
  if ((queued || running) && was_rt && task.prio() > old_prio) {
    // prio_changed_rt() of the running task, switched_from_rt() once the CPU runs no RT task:
    // the CPU lowered its priority and may pull waiting RT work.
    const int cpu = task.cpu;
    if (task.is_rt() ? running : !rt_runnable(cpu)) {
      const int pulled = pull_rt_task(cpu, highest_rt_prio(cpu));
      // pull_rt_task() reschedules this CPU (resched_curr); for a running task, below.
      if (pulled >= 0 && !running) check_preempt(cpu, pulled, cpu);
    }
  }
  if (running) {
    // A lowered priority may let a queued task run now.
    const int best = pick_next(task.cpu);
    if (best >= 0 && (t(best).prio() < task.prio() ||
                      (!task.is_rt() && !t(best).is_rt() && t(best).vruntime < task.vruntime))) {
      if (t(best).is_rt() || task.is_rt() || was_rt) request_resched(task.cpu, now());
    }
  }
}

// --- frequency (schedutil) ------------------------------------------------------------------

// sugov_update_shared(): the cluster's frequency follows its busiest CPU's utilisation with 25%
// headroom (map_util_perf), resolved to the lowest operating point at or above it; no new
// request within the rate limit of the last one. The change takes effect after the cluster's
// transition latency. update_frequency() has checked the rate limit.
void Scheduler::request_frequency(int cluster) {
  if (tunables_.governor != Governor::kSchedutil) return;
  const auto& domain = context_.topology.frequency_domain(cluster);
  if (domain.opps.empty()) return;
  ClusterFrequency& f = freqs_[static_cast<std::size_t>(cluster)];
  const auto& cpus = context_.topology.cluster_cpus(cluster);
  const auto max_capacity = static_cast<double>(context_.topology.capacity(cpus[0]));
  // The frequency (kHz) the cluster's utilisation asks for: not decreasing with it.
  const auto target_khz_of = [&](double util) {
    return 1.25 * static_cast<double>(domain.opps.back().freq_khz) * util / max_capacity;
  };
  // The request is the highest operating point when the target is above the one below it. When
  // that is the request already, a CPU whose utilisation alone asks that much decides it (the
  // maximum only grows): the other CPUs need not be asked.
  const int highest = static_cast<int>(domain.opps.size()) - 1;
  const bool highest_requested = f.requested_opp == highest && highest > 0;
  double util = 0;
  for (int cpu : cpus) {
    util = std::max(util, cpu_frequency_util(cpu));
    if (highest_requested &&
        target_khz_of(util) > static_cast<double>(domain.opps[highest - 1].freq_khz)) {
      return;
    }
  }
  const double target_khz = target_khz_of(util);
  // The lowest operating point at or above the target (they ascend strictly), else the highest.
  const auto at_or_above = std::partition_point(
      domain.opps.begin(), domain.opps.end() - 1,
      [&](const auto& each) { return static_cast<double>(each.freq_khz) < target_khz; });
  const int opp = static_cast<int>(at_or_above - domain.opps.begin());
  if (opp == f.requested_opp) return;
  f.requested_opp = opp;
  f.last_request = now();
  ++f.generation;
  context_.engine.schedule(now() + domain.transition_latency_ns, target_, kFrequencyChange,
                           static_cast<std::uint32_t>(cluster), f.generation);
}

void Scheduler::account_frequency(int cluster) {
  ClusterFrequency& f = freqs_[static_cast<std::size_t>(cluster)];
  f.khz_ns += static_cast<long double>(current_freq_khz(cluster)) *
              static_cast<long double>(now() - f.accounted_until);
  f.accounted_until = now();
}

// The cluster switches to `opp`: work done so far is charged at the old speed, then running
// segments are re-timed at the new one.
void Scheduler::apply_frequency(int cluster, int opp) {
  ClusterFrequency& f = freqs_[static_cast<std::size_t>(cluster)];
  if (f.opp == opp) return;
  account_frequency(cluster);
  const auto& cpus = context_.topology.cluster_cpus(cluster);
  for (int cpu : cpus) {
    account_progress(cpu);
    sync_rq_signals(cpu);
    if (q(cpu).curr >= 0) update_pelt(t(q(cpu).curr));
  }
  f.opp = opp;
  refresh_speeds(cluster);
  ++frequency_changes_;
  if (auto* tracer = context_.tracer) tracer->cpu_frequency(*this, cluster);
  for (int cpu : cpus) {
    if (q(cpu).curr >= 0) rearm(cpu);
  }
}

// --- tick and periodic balance ----------------------------------------------------------------

void Scheduler::start_tick(int cpu) {
  RunQueue& r = q(cpu);
  if (r.tick_pending) return;
  r.tick_pending = true;
  const SimTime next = (now() / tunables_.tick_ns + 1) * tunables_.tick_ns;
  context_.engine.schedule(next, target_, kTick, static_cast<std::uint32_t>(cpu));
}

// scheduler_tick() on a busy CPU: load tracking and the governor, then the periodic balance
// (trigger_load_balance).
void Scheduler::tick(int cpu) {
  account_progress(cpu);
  update_misfit_status(cpu);  // task_tick_fair()
  if (q(cpu).curr >= 0 && !t(q(cpu).curr).is_rt()) update_overutilized_status(cpu);
  update_frequency(context_.topology.cluster_of(cpu));
  periodic_balance(cpu);
  start_tick(cpu);
}

// rebalance_domains() on a busy CPU, every balance interval (1 ms per CPU of the domain, times
// busy_factor): pull from a CPU that runs at least two more tasks. Then nohz_balancer_kick():
// with tasks waiting here, the first idle CPU is kicked to pull one.
void Scheduler::periodic_balance(int cpu) {
  if (!tunables_.periodic_balance) return;
  RunQueue& r = q(cpu);
  if (now() >= r.next_balance) {
    r.next_balance = now() + num_cpus() * engine::kMillisecond * kBusyFactor;
    refresh_overutilized();  // the balance's statistics at the root domain
    if (balancing_active() && pull_fair_task(cpu, 2, BalanceKind::kPeriodic) >= 0) {
      ++balance_pulls_;
      ensure_slice_check(cpu);
    }
  }
  kick_idle_balance(cpu);
  kick_misfit_balance(cpu);
}

void Scheduler::kick_idle_balance(int cpu) {
  if (nr_running(cpu) < 2 || q(cpu).fair.empty()) return;
  // The kicked idle CPU balances up to the root domain, which updates the flag first.
  refresh_overutilized();
  if (!balancing_active()) return;
  for (int idle = 0; idle < num_cpus(); ++idle) {
    if (!available_idle_cpu(idle) || q(idle).available_at > now()) continue;
    const int pulled = pull_fair_task(idle, 1, BalanceKind::kIdleKick);
    if (pulled < 0) continue;
    ++balance_pulls_;
    // The kicked CPU is woken by an IPI and exits idle before it runs the task.
    check_preempt(idle, pulled, cpu);
    return;
  }
}

// --- misfit migration ---------------------------------------------------------------------

// update_misfit_status(): on CPUs of different capacities, the running fair task that may run
// elsewhere and whose utilisation does not fit capacity_of() with the 20% margin
// (util_fits_cpu()) is misfit.
void Scheduler::update_running_misfit_status(int cpu) {
  RunQueue& r = q(cpu);
  const Task& task = t(r.curr);
  if (task.is_rt() || std::popcount(task.params.affinity) == 1) return;
  r.misfit = !MainlinePlacement::fits_capacity(task_util_est(r.curr), capacity_of(cpu));
}

// Whether `dst_cpu` may take the misfit task running on `src_cpu`: `dst_cpu` has clearly more
// capacity (capacity_greater(): 5% margin, as update_sd_pick_busiest() asks of a misfit group),
// the task is still a fair task (the status is refreshed only at pick and tick, and the
// stopper's detach_one_task() moves only fair tasks), may run there and can be preempted, and
// the placement lets the balance pull.
bool Scheduler::may_take_misfit(int src_cpu, int dst_cpu, BalanceKind kind) const {
  const RunQueue& src = rq(src_cpu);
  if (!src.misfit || src.curr < 0 || src_cpu == dst_cpu) return false;
  const Task& task = tasks_[static_cast<std::size_t>(src.curr)];
  // capacity_greater(capacity_of(dst), sg->sgc->max_capacity) of update_sd_pick_busiest(): the
  // source's group is its CPU, whose max_capacity is the capacity left to CFS.
  return !task.is_rt() && task.preempt_count == 0 && task.allowed_on(dst_cpu) &&
         capacity_of(dst_cpu) * 1024.0 > capacity_of(src_cpu) * 1078.0 &&
         placement_.may_pull(*this, src_cpu, dst_cpu, kind);
}

// nohz_balancer_kick() with check_misfit_status(): a misfit task on a CPU smaller than the
// largest, or one whose capacity RT tasks have cut by more than the domain's imbalance_pct
// (check_cpu_capacity(): 117%), kicks the idle balancer. The kicked CPU (the first idle one)
// balances every idle CPU, starting after itself; the first of them that may take the task pulls it
// by active balance (the stopper of the task's CPU preempts it), then wakes up to run it.
void Scheduler::kick_misfit_balance(int cpu) {
  const RunQueue& r = q(cpu);
  if (!r.misfit) return;
  const double capacity_orig = context_.topology.capacity(cpu);
  const bool can_help = capacity_orig < context_.topology.max_capacity() ||
                        capacity_of(cpu) * 117.0 < capacity_orig * 100.0;
  if (!can_help || !balancing_active()) return;
  settle_running(cpu);  // may_take_misfit() reads whether it can be preempted
  int ilb = 0;
  while (ilb < num_cpus() && !available_idle_cpu(ilb)) ++ilb;
  if (ilb == num_cpus()) return;
  for (int step = 1; step <= num_cpus(); ++step) {
    const int dst = (ilb + step) % num_cpus();
    if (!available_idle_cpu(dst) || q(dst).available_at > now() ||
        !may_take_misfit(cpu, dst, BalanceKind::kIdleKick)) {
      continue;
    }
    const int tid = r.curr;
    active_migrate(cpu, dst);
    check_preempt(dst, tid, cpu);
    return;
  }
}

// newidle_balance() with a misfit task on a smaller CPU: the CPU going idle (after the
// avg_idle test) queues the active balance of the misfit task with the most utilisation; the
// task arrives once this CPU is idle and wakes it. Returns whether a task was pulled.
bool Scheduler::pull_misfit_task(int cpu) {
  if (!misfit_active_ || !balancing_active() || average_idle(cpu) < tunables_.migration_cost_ns) {
    return false;
  }
  int src = -1;
  for (int other = 0; other < num_cpus(); ++other) {
    if (q(other).misfit)
      settle_running(other);  // may_take_misfit() reads whether it can be preempted
    if (may_take_misfit(other, cpu, BalanceKind::kNewIdle) &&
        (src < 0 || task_util(q(other).curr) > task_util(q(src).curr))) {
      src = other;
    }
  }
  if (src < 0) return false;
  const int tid = q(src).curr;
  active_migrate(src, cpu);
  // The stopper moves the task within microseconds, before this CPU settles into a deeper
  // idle state than WFI: it pays the IPI and WFI's exit.
  q(cpu).idle_state = 0;
  if (auto* tracer = context_.tracer) tracer->cpu_idle(*this, cpu);
  check_preempt(cpu, tid, src);
  return true;
}

// active_load_balance_cpu_stop(): the stopper of `src_cpu` preempts its running task (an
// involuntary switch) and moves it to `dst_cpu`'s queue; `src_cpu` then schedules. The caller
// wakes `dst_cpu`.
void Scheduler::active_migrate(int src_cpu, int dst_cpu) {
  RunQueue& src = q(src_cpu);
  const int tid = src.curr;
  Task& task = t(tid);
  if (context_.sched_log->should_log(spdlog::level::debug)) {
    const SimTime at = now();
    const double util = task_util(tid);
    engine::log_debug(*context_.sched_log, "[{} ns] misfit {} ({}) util {:.0f} cpu {} -> cpu {}",
                      fmt::make_format_args(at, tid, task.params.name, util, src_cpu, dst_cpu));
  }
  account_progress(src_cpu);
  sync_rq_signals(src_cpu);
  update_pelt(task);  // it ran until now
  task.state = TaskState::kRunnable;
  set_curr(src_cpu, -1);
  src.misfit = false;
  task.enqueue_seq = next_enqueue_seq_++;
  count_switch_out(task);
  ++misfit_migrations_;
  util_est_dequeue(task);
  place_on_cpu(task, dst_cpu);
  enqueue(dst_cpu, tid);
  util_est_enqueue(task, dst_cpu);
  update_pelt(task);
  if (task.watch_switches) owner_->on_switch(tid, false);
  schedule_cpu(src_cpu);
  update_frequency(context_.topology.cluster_of(src_cpu));
  update_frequency(context_.topology.cluster_of(dst_cpu));
}

void Scheduler::account_running_tasks() {
  for (int cpu = 0; cpu < num_cpus(); ++cpu) account_progress(cpu);
}

bool Scheduler::is_stale(const engine::Event& event) const {
  switch (event.kind) {
    case kWorkDone:
      return event.arg != rq(static_cast<int>(event.id)).generation;
    case kFrequencyChange:
      return event.arg != freqs_[static_cast<std::size_t>(event.id)].generation;
    default:
      return false;  // a superseded reschedule request can come back into force at its time
  }
}

void Scheduler::on_event(const engine::Event& event) {
  const int cpu = static_cast<int>(event.id);
  // Most events are completions: they are told apart first.
  if (event.kind == kWorkDone) [[likely]] {
    RunQueue& r = q(cpu);
    if (event.arg != r.generation || r.curr < 0) return;  // stale: re-timed since
    r.done_at = engine::kNever;
    if (now() > r.segment_start) charge_running(cpu);  // account_progress(), inline
    const int tid = r.curr;
    Task& task = t(tid);
    task.overhead_ns = 0;
    task.work_ref_ns = 0;
    task.has_segment = false;
    owner_->on_work_done(tid);  // may create tasks: `task` is not valid after this
    BSIM_CHECK_MSG(t(tid).state != TaskState::kRunning || t(tid).has_segment,
                   "the owner left a running task without work");
    return;
  }
  if (event.kind == kFrequencyChange) {
    const int cluster = static_cast<int>(event.id);
    ClusterFrequency& f = freqs_[static_cast<std::size_t>(cluster)];
    if (event.arg == f.generation) apply_frequency(cluster, f.requested_opp);
    return;
  }
  RunQueue& r = q(cpu);
  switch (event.kind) {
    case kResched:
      // Only the pending request counts: one superseded by an earlier request is stale, and a
      // spurious schedule() could switch fair tasks without the granularity check.
      if (r.resched_at != event.time) return;
      r.resched_at = engine::kNever;
      if (now() < r.available_at) {  // still exiting idle or waiting for the IPI
        request_resched(cpu, r.available_at);
        return;
      }
      settle_running(cpu);
      if (r.curr >= 0 && t(r.curr).preempt_count > 0) {
        r.need_resched = true;  // preempt_enable() reschedules
        return;
      }
      schedule_cpu(cpu);
      return;
    case kSliceCheck:
      slice_check(cpu, event.arg);
      return;
    case kTick:
      r.tick_pending = false;
      if (r.curr >= 0) tick(cpu);  // an idle CPU's tick stops (NOHZ idle)
      return;

    default:
      BSIM_CHECK_MSG(false, "unknown scheduler event");
  }
}

}  // namespace bindersim::sched
