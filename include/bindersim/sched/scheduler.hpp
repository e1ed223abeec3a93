// Per-CPU run queues (RT by priority, FIFO within a priority; fair by vruntime), preemption,
// context-switch, IPI and idle-exit costs, and the wakeup path with a pluggable placement.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "bindersim/engine/context.hpp"
#include "bindersim/engine/engine.hpp"
#include "bindersim/sched/idle_governor.hpp"
#include "bindersim/sched/task.hpp"
#include "bindersim/stats/result.hpp"

namespace bindersim::cost {
class CostModel;
}

namespace bindersim::sched {

class PlacementPolicy;

// What drives a task: told when the task's work segment is done and when it first runs after
// a wakeup. Implemented by the layers above (binder driver, workload).
class TaskOwner {
 public:
  virtual ~TaskOwner() = default;
  // The running task `tid` finished its segment. The owner must give it a new segment
  // (Scheduler::run), put it to sleep (block) or end it (exit) before returning.
  virtual void on_work_done(int tid) = 0;
  // `tid` was switched in on `cpu` for the first time since its last wakeup (it "returns from
  // waiting" there). Returns a stall (ns, >= 0) to add before the rest of its segment, 0 for
  // none: the switch-in adds it as add_overhead() would.
  virtual SimTime on_resume(int tid, int cpu) = 0;
  // A task with watch_switches set was switched in (`running`) or out (preempted, blocked or
  // exited). Called after the switch completed; the owner must not switch tasks from here.
  virtual void on_switch(int /*tid*/, bool /*running*/) {}
  // The running task `tid`, with runs_ahead set, is about to be preempted or moved, or its
  // preemptibility read: the owner brings the state its segment runs ahead of up to now, and
  // clears runs_ahead. It may change the task's segment (Scheduler::replace_work) and disable
  // its preemption; it must not switch tasks.
  virtual void settle(int /*tid*/) {}
};

// How a wakeup happens.
struct WakeContext {
  int waker_tid = -1;  // the running task that wakes (-1: an interrupt or timer)
  int waker_cpu = -1;  // its CPU (-1: wake from a timer on the target's CPU)
  bool sync = false;   // WF_SYNC: the waker is about to sleep
  bool fork = false;   // first wakeup of a new task
};

// The cpufreq governor of every cluster: `performance` and `powersave` hold the highest and the
// lowest operating point; `schedutil` follows utilisation (cpufreq_schedutil.c). Without
// operating points in the topology every cluster runs at its maximum frequency.
enum class Governor : std::uint8_t { kPerformance, kPowersave, kSchedutil };

// Which load balance asks whether a pull is allowed (PlacementPolicy::may_pull).
enum class BalanceKind : std::uint8_t {
  kNewIdle,           // a CPU about to go idle, whose recent idle periods are long enough
  kNewIdleShortIdle,  // the same with short idle periods (avg_idle below the migration cost)
  kPeriodic,          // the periodic balance of a busy CPU
  kIdleKick,          // an idle CPU kicked (NOHZ idle balance) by a CPU with tasks waiting
};

// Scheduler tunables (kernel defaults for 8 CPUs; see docs/scenario-format.md).
struct SchedTunables {
  SimTime sched_latency_ns = 24 * engine::kMillisecond;
  SimTime min_granularity_ns = 3 * engine::kMillisecond;
  SimTime wakeup_granularity_ns = 4 * engine::kMillisecond;
  SimTime tick_ns = 4 * engine::kMillisecond;  // HZ = 250
  // sysctl_sched_migration_cost: a task that ran this recently is cache-hot (not pulled), and
  // a CPU whose average idle period is shorter does not balance when it goes idle.
  SimTime migration_cost_ns = 500 * engine::kMicrosecond;
  bool newidle_balance = true;  // pull work when a CPU is about to go idle
  // Periodic load balance at the tick (and the NOHZ idle-balance kick of an idle CPU).
  bool periodic_balance = true;
  // Misfit migration on CPUs of different capacities: a running fair task that no longer fits
  // its CPU is moved by active balance to an idle CPU of more capacity (kicked from its CPU's
  // tick, or pulled by a bigger CPU going idle).
  bool misfit_migration = true;
  // The UTIL_EST scheduler feature (on by default): fair tasks keep an estimate of their
  // utilisation across sleeps (sched/util_est.hpp). Placement's fitness checks use the larger
  // of a task's utilisation and its estimate; a CPU's fair utilisation (overutilisation,
  // schedutil, energy estimates) is the larger of its PELT sum and the estimates of the fair
  // tasks enqueued there.
  bool util_est = true;
  // A fair task's vruntime across a stretch in an RT class (binder's priority inheritance).
  // false (the calibrated model): it keeps the value of the CPU it left the fair class on,
  // held between the minimum of the queue it returns on and a latency period above it
  // (sched_latency_ns; without the upper bound, loopers restored on a CPU far behind their old
  // one carried the gap into every later migration and overflowed). true (the kernel): it is made
  // relative to its queue's min_vruntime as it leaves the fair class (after place_entity()'s
  // sleeper floor, if it sleeps: detach_task_cfs_rq()) and the minimum of the queue it
  // returns on is added back (attach_task_cfs_rq(), enqueue_entity()). docs/model.md.
  bool normalise_vruntime_across_rt = false;
  // The clock PELT signals age and accrue by. false (the calibrated model): the wall clock,
  // with utilisation accruing towards the CPU's current capacity (capacity x f / fmax). true
  // (the kernel, 5.1 on): the run queue's own clock (rq_clock_pelt(), update_rq_clock_pelt()),
  // which runs at the current capacity over 1024 while the CPU is busy and catches up with the
  // wall clock when it idles, less the idle time lost to running fully busy; utilisation
  // accrues towards 1024 by it. docs/model.md, "PELT".
  bool scaled_pelt_clock = false;
  // What a wakeup of an idle CPU waits for. false (the calibrated model): the state's exit
  // latency (the device tree's exit-latency-us). true: a wakeup that arrives while the CPU is
  // still entering the state first waits for the entry to end (entry-latency-us from the idle
  // entry; the binding guarantees the exit latency only after it), and the idle governor
  // deducts entry + exit from the periods it measures, as the kernel's cpuidle table holds
  // (dt_idle_states.c without wakeup-latency-us). docs/model.md, "Idle governor".
  bool idle_wakeup_after_entry = false;
  Governor governor = Governor::kPerformance;
  // schedutil's rate_limit_us: no new frequency request sooner than this after the last one.
  SimTime schedutil_rate_limit_ns = engine::kMillisecond;
  // sysctl sched_util_clamp_min_rt_default: the utilisation RT tasks are clamped up to. It
  // makes RT tasks fit only CPUs of at least this capacity and, while one is runnable, raises
  // its cluster's frequency to match. The kernel default is the maximum, 1024.
  int rt_uclamp_min = 1024;
};

// Frequency state of one cluster.
struct ClusterFrequency {
  int opp = 0;                            // current operating point (index into the domain's opps)
  std::int64_t freq_khz = 0;              // its frequency (the maximum without operating points)
  int requested_opp = 0;                  // last request; takes effect after the transition latency
  SimTime last_request = engine::kNever;  // schedutil's last_freq_update_time (kNever: none)
  std::uint64_t generation = 0;           // bumped per request; stale changes are dropped
  // Time-weighted frequency, for the mean frequency report.
  SimTime accounted_until = 0;
  long double khz_ns = 0;
};

// Per-CPU scheduler state.
struct RunQueue {
  int curr = -1;          // running task, -1 when idle (written by Scheduler::set_curr() only)
  std::vector<int> rt;    // queued (not running) RT tasks
  std::vector<int> fair;  // queued (not running) fair tasks
  int fair_weight = 0;    // their load weights summed (kept by Scheduler::enqueue() and dequeue())
  std::int64_t min_vruntime = 0;
  std::uint64_t generation = 0;         // bumped whenever the running segment is re-timed
  SimTime done_at = engine::kNever;     // when the pending completion event fires (kNever: none)
  int done_tid = -1;                    // for which task
  SimTime segment_start = 0;            // progress of curr's segment is accounted up to here
  SimTime available_at = 0;             // exiting idle or waiting for an IPI until then
  SimTime resched_at = engine::kNever;  // pending reschedule event
  // When the pending slice check fires (kNever: none pending; events for other times are stale).
  SimTime slice_check_at = engine::kNever;
  // rq->misfit_task_load != 0: the running fair task does not fit this CPU (set when a task is
  // switched in and at the tick, as update_misfit_status()).
  bool misfit = false;
  bool need_resched = false;  // a reschedule deferred while curr has preemption disabled
  // Idle bookkeeping.
  SimTime idle_since = 0;
  int idle_state = 0;     // index into the CPU's idle states while idle
  MenuGovernor governor;  // picks idle_state
  // Expiry times of the timers armed on this CPU (sleeping tasks' hrtimers, queued on the CPU
  // the task slept on); expired ones are dropped lazily. The idle governor's next timer event.
  std::vector<SimTime> timers;
  // Recent idle durations, for the new-idle balance's avg_idle. Starts at 2 x migration cost,
  // as the kernel's avg_idle does.
  std::array<SimTime, 8> idle_history{};
  std::size_t idle_history_next = 0;
  // The run queue's scaled PELT clock (tunable scaled_pelt_clock; rq_clock_pelt(),
  // Scheduler::pelt_clock()), in nanoseconds: `pelt_base` at wall time `pelt_stamp`. While a
  // task runs it advances at the CPU's current capacity over 1024 (update_rq_clock_pelt():
  // scaled by the CPU's capacity and frequency).
  // From the instant the CPU goes idle (pelt_stamp) it is the wall clock less `idle_lost_ns`;
  // `lost_idle_ns` is the idle time lost by running fully busy (update_idle_rq_clock_pelt())
  // up to the last idle period, `idle_lost_ns` that with the current one's (the same, or the
  // clock's lag when the CPU went idle fully busy). A CPU that goes idle and runs a task again
  // at the same instant never ran its idle task: its clock goes on as if it had not idled.
  SimTime pelt_base = 0;
  SimTime pelt_stamp = 0;
  SimTime lost_idle_ns = 0;
  SimTime idle_lost_ns = 0;
  // PELT signals of the run queue, all as of `signals_at` (a time of the run queue's PELT
  // clock): the fair utilisation and load of the fair tasks attached here (blocked ones
  // included; they move with their tasks, as the cfs_rq's do), and the RT utilisation of the
  // CPU itself (rq->avg_rt: time spent running RT tasks, whichever they were).
  SimTime signals_at = 0;
  double util_fair = 0;
  double load_fair = 0;
  double util_rt = 0;
  // util_est.enqueued of the cfs_rq: the estimates of the fair tasks running or queued here.
  int util_est = 0;
  // Tick: runs while the CPU is busy (NOHZ idle stops it).
  bool tick_pending = false;
  SimTime next_balance = 0;  // periodic load balance due at the first tick from here

  int nr_queued() const { return static_cast<int>(rt.size() + fair.size()); }
};

class Scheduler final : public engine::EventHandler {
 public:
  Scheduler(engine::SimContext& context, cost::CostModel& cost, PlacementPolicy& placement,
            SchedTunables tunables = {});
  ~Scheduler() override;

  void set_owner(TaskOwner& owner) { owner_ = &owner; }

  // Creates a task in state kNew. Returns its tid: dense from 0, and the tid of an exited task
  // may be given again (the layers above reset their per-tid state when they create one).
  int create_task(const TaskParams& params);
  // First wakeup of a new task created by a task running on `parent_cpu` (-1: at boot).
  void wake_new(int tid, int parent_cpu, int parent_tid = -1);
  // try_to_wake_up(): places a sleeping task and enqueues it. Its segment must be set.
  void wake(int tid, const WakeContext& ctx);
  // Gives `tid` (running, or about to run after a wakeup) `work_ref_ns` of reference work.
  // Inline: the layers above hand out work in many small segments.
  void run(int tid, std::int64_t work_ref_ns) {
    BSIM_CHECK(work_ref_ns >= 0);
    Task& task = t(tid);
    const bool running = task.state == TaskState::kRunning;
    if (running) account_progress(task.cpu);
    task.work_ref_ns += work_ref_ns;
    task.has_segment = true;
    if (running) rearm(task.cpu);
  }
  // Replaces what is left of the work of `tid`'s segment with `work_ref_ns` (a spin that ends
  // when the lock is granted); its pending stall stays.
  void replace_work(int tid, std::int64_t work_ref_ns);
  // The reference work left in `tid`'s segment, its progress charged up to now.
  std::int64_t remaining_work(int tid) {
    const Task& task = t(tid);
    if (task.state == TaskState::kRunning) account_progress(task.cpu);
    return task.work_ref_ns;
  }
  // How long `work_ref_ns` of reference work takes on `cpu` at its current speed.
  SimTime run_time(std::int64_t work_ref_ns, int cpu) const { return scaled_ns(work_ref_ns, cpu); }
  // preempt_disable() / preempt_enable() of the running task: while disabled its CPU is not
  // rescheduled; a reschedule asked for meanwhile happens at the enable.
  void preempt_disable(int tid);
  void preempt_enable(int tid);
  // Adds a stall of `ns` (at the task's CPU) before the rest of its segment.
  void add_overhead(int tid, SimTime ns);
  // The running task goes to sleep.
  void block(int tid);
  // The running task goes to sleep until `wake_at` (nanosleep): as block(), with its hrtimer
  // armed on its CPU, which that CPU's idle governor sees. The caller wakes it at `wake_at`.
  void block_until(int tid, SimTime wake_at);
  // The running task exits.
  void exit(int tid);
  // Sets a task's PELT utilisation as of now, keeping its CPU's sums consistent (for tests and
  // warm starts).
  void set_task_util(int tid, double util);
  // Changes the scheduling attributes of any task (priority inheritance, sched_setscheduler).
  // Most calls (priority inheritance at every transaction) keep them as they are: they return
  // here, inline.
  void set_attributes(int tid, Policy policy, int nice, int rt_priority) {
    const Task& each = task(tid);
    if (each.policy == policy && each.nice == nice && each.rt_priority == rt_priority) return;
    change_attributes(tid, policy, nice, rt_priority);
  }

  void on_event(const engine::Event& event) override;
  // A completion or frequency change superseded by a later one (their generations only grow).
  bool is_stale(const engine::Event& event) const override;
  // Charges every running task for its time up to now, as a scheduler event would: the cost
  // model's counters then cover the whole run, as busy_ns() does. Called once a run ends.
  void account_running_tasks();

  // Read-only view for placement, selectors and statistics.
  SimTime now() const { return context_.engine.now(); }
  const topology::Topology& topology() const { return context_.topology; }
  const Task& task(int tid) const { return tasks_[static_cast<std::size_t>(tid)]; }
  Task& task_for_update(int tid) { return tasks_[static_cast<std::size_t>(tid)]; }
  int num_tasks() const { return static_cast<int>(tasks_.size()); }
  const RunQueue& rq(int cpu) const { return rqs_[static_cast<std::size_t>(cpu)]; }
  int num_cpus() const { return static_cast<int>(rqs_.size()); }
  // The kernel's available_idle_cpu(): idle task running, nothing queued or arriving.
  bool available_idle_cpu(int cpu) const {
    const RunQueue& r = rq(cpu);
    return r.curr < 0 && r.nr_queued() == 0;
  }
  // The CPUs running their idle task (curr < 0), bit i for CPU i (CPU ids are below 64): the
  // candidates for available_idle_cpu(), which placement need not ask of the others.
  std::uint64_t idle_task_cpus() const { return idle_task_cpus_; }
  int nr_running(int cpu) const {
    const RunQueue& r = rq(cpu);
    return (r.curr >= 0 ? 1 : 0) + r.nr_queued();
  }
  // Topology facts placement asks about on every wakeup, computed once: whether CPU capacities
  // differ (SD_ASYM_CPUCAPACITY), and how many CPUs share the last-level cache with CPU 0
  // (sd_llc_size).
  bool asym_capacity() const { return asym_capacity_; }
  int llc_size() const { return llc_size_; }
  // Highest priority (lowest value) of RT tasks running or queued on `cpu`; kMaxRtPrio if none.
  int highest_rt_prio(int cpu) const;
  // rt.highest_prio.next: the highest priority among the pushable RT tasks queued on `cpu`;
  // kMaxRtPrio if none.
  int next_pushable_rt_prio(int cpu) const;
  // should_honor_rt_sync() on `cpu` for a wakee of priority `prio`: an RT task runs there, the
  // wakee is at least as important as the best pushable one, and at most two RT tasks are
  // runnable there, counting the wakee when it is already queued (enqueue_task_rt() asks
  // then; select_task_rq_rt() before).
  bool rt_sync_holds(int cpu, int prio, bool wakee_queued) const;
  // PELT load and utilisation of the tasks attached to `cpu` (blocked ones included):
  // cpu_util() is cpu_util_cfs() plus RT, as the energy model and schedutil see it.
  double cpu_load(int cpu) const;
  // The fair and RT utilisation of a CPU, cpu_util_fair() and cpu_util_rt().
  struct Utilisation {
    double fair = 0;
    double rt = 0;
  };
  // Both of `cpu` now, read together (the checks are inline: most asks hit). Signals current
  // to now are the values themselves: a decay factor of 1 carries a value that is not negative
  // zero (no signal is) to itself.
  Utilisation utilisation(int cpu) const {
    const RunQueue& r = rq(cpu);
    if (r.signals_at == pelt_clock(cpu)) return {r.util_fair, r.util_rt};
    return util_memo(cpu).util;
  }
  double cpu_util(int cpu) const {
    const Utilisation util = utilisation(cpu);
    return std::max(util.fair, static_cast<double>(rq(cpu).util_est)) + util.rt;
  }
  // The PELT sum of the fair tasks attached to `cpu` (util_avg of its cfs_rq).
  double cpu_util_fair(int cpu) const { return utilisation(cpu).fair; }
  // cpu_util_cfs(): that sum or, if larger, the estimates of the fair tasks enqueued there.
  double cpu_util_cfs(int cpu) const {
    return std::max(cpu_util_fair(cpu), static_cast<double>(rq(cpu).util_est));
  }
  double cpu_util_rt(int cpu) const { return utilisation(cpu).rt; }
  double task_util(int tid) const;
  // The task's PELT load (se.avg.load_avg) now, in the units of cpu_load().
  double task_load(int tid) const;
  // The clock PELT signals on `cpu` age and accrue by, in nanoseconds: the wall clock, or with
  // the tunable scaled_pelt_clock the kernel's rq_clock_pelt(). That one advances at
  // current_capacity() / 1024 of the wall clock's rate while the CPU runs a task, so that a
  // signal accrues as much from a stretch of work on a small or slowed CPU as from the same
  // work done at full capacity; when the CPU goes idle it catches up with the wall clock, less
  // the idle time lost to running fully busy.
  SimTime pelt_clock(int cpu) const {
    if (!tunables_.scaled_pelt_clock) [[likely]]
      return now();
    return scaled_pelt_clock(cpu);
  }
  // rq_clock_pelt() of `cpu` now (out of line: the wall clock is the common case).
  SimTime scaled_pelt_clock(int cpu) const;
  // The PELT clock the task's signals are kept in: its CPU's (cfs_rq_clock_pelt()), or the
  // wall clock for a task not attached to a CPU.
  SimTime task_pelt_clock(const Task& each) const {
    return each.cpu >= 0 ? pelt_clock(each.cpu) : now();
  }
  // What the utilisation of a task running on `cpu` converges to: 1024 by the scaled PELT
  // clock, the CPU's current capacity by the wall clock.
  double util_ceiling(int cpu) const { return util_ceiling_[static_cast<std::size_t>(cpu)]; }
  // task_util_est(): the task's utilisation or, if larger, its estimate (placement's fitness).
  double task_util_est(int tid) const {
    return std::max(task_util(tid), static_cast<double>(task(tid).util_est.value()));
  }
  // The original capacity of `cpu` (topology().capacity()), read from a plain per-CPU table:
  // placement asks for it many times per wakeup.
  double capacity_orig(int cpu) const { return capacity_orig_[static_cast<std::size_t>(cpu)]; }
  // capacity_of(): the original capacity less what RT tasks use (at least 1).
  double capacity_of(int cpu) const { return capacity_less_rt(cpu, cpu_util_rt(cpu)); }
  // capacity_of() with the CPU's RT utilisation now, `rt_util`, already read.
  double capacity_less_rt(int cpu, double rt_util) const {
    return std::max(1.0, capacity_orig(cpu) - rt_util);
  }
  // Current capacity of `cpu`: its capacity scaled by its cluster's current frequency.
  double current_capacity(int cpu) const { return capacity_now_[static_cast<std::size_t>(cpu)]; }
  std::int64_t current_freq_khz(int cluster) const {
    return freqs_[static_cast<std::size_t>(cluster)].freq_khz;
  }
  const ClusterFrequency& cluster_frequency(int cluster) const {
    return freqs_[static_cast<std::size_t>(cluster)];
  }
  // The utilisation schedutil uses for `cpu`: fair + RT, capped at the capacity, and raised to
  // rt_uclamp_min while an RT task is runnable there.
  double cpu_frequency_util(int cpu) const;
  // The same clamping for a utilisation `util` the CPU would have (placement's estimates).
  // Inline: energy-aware placement asks for every CPU at every wakeup.
  double frequency_util(int cpu, double util) const {
    const double capacity = capacity_orig(cpu);
    util = std::min(util, capacity);
    if (rt_runnable(cpu)) {
      util = std::max(util, std::min<double>(tunables_.rt_uclamp_min, capacity));
    }
    return util;
  }
  // The root domain's overutilised flag (rd->overutilized): set when a fair task is enqueued by
  // a wakeup or ticks on a CPU whose cpu_util_cfs() exceeds 80% of capacity_of(), recomputed
  // over every CPU (so possibly cleared) only by a load balance that reaches the root domain.
  bool overutilized() const { return overutilized_; }
  // Whether some CPU is overutilised now (what a root-domain balance finds).
  bool any_cpu_overutilized() const { return compute_overutilized(); }
  // update_sd_lb_stats() at the root domain: the flag becomes any_cpu_overutilized().
  void refresh_overutilized() { overutilized_ = compute_overutilized(); }
  // Load balancing is active: not when the energy-aware placement has an energy model and the
  // system is not overutilised (the kernel then leaves placement to wakeups).
  bool balancing_active() const;
  // WALT load tracking (when the placement asks for it, else the values at creation). Demand in
  // capacity units (0..1024) of a task, as of now with its state since the last event.
  double walt_task_demand(int tid) const;
  // The task's running time in the previous window (scaled ns: wts->prev_window).
  double walt_task_prev_window(int tid) const;
  // cumulative_runnable_avg_scaled: the demands of the tasks running or queued on `cpu` (any
  // class), not capped.
  double walt_cpu_demand(int cpu) const;
  // prev_runnable_sum: time `cpu` spent running tasks in the previous window (scaled ns).
  double walt_cpu_prev_busy(int cpu) const;
  const WaltTunables& walt_tunables() const { return walt_; }
  // Mean frequency of a cluster over the run so far, kHz.
  double mean_freq_khz(int cluster) const;
  const SchedTunables& tunables() const { return tunables_; }

  // Every task's migrations and switches out (simpleperf stat -a), and those of the threads of
  // the scenario's processes (TaskParams::process set: simpleperf stat of a command).
  std::uint64_t migrations() const { return migrations_; }
  std::uint64_t context_switches() const { return context_switches_; }
  std::uint64_t process_migrations() const { return process_migrations_; }
  std::uint64_t process_context_switches() const { return process_context_switches_; }
  // Fair tasks pulled by CPUs going idle; RT tasks pulled by CPUs lowering their priority, and
  // pushed by CPUs with more than one RT task runnable (kernel/sched/rt.c push and pull).
  std::uint64_t newidle_pulls() const { return newidle_pulls_; }
  std::uint64_t rt_pulls() const { return rt_pulls_; }
  std::uint64_t rt_pushes() const { return rt_pushes_; }
  std::uint64_t balance_pulls() const { return balance_pulls_; }
  // Running tasks moved by active balance because they did not fit their CPU.
  std::uint64_t misfit_migrations() const { return misfit_migrations_; }
  // Time `cpu` has spent running tasks so far (switch and cache stalls included).
  SimTime busy_ns(int cpu) const;
  std::uint64_t frequency_changes() const { return frequency_changes_; }

  // Event kinds handled here.
  enum EventKind : std::uint16_t {
    kWorkDone = 1,
    kResched = 2,
    kSliceCheck = 3,
    kTick = 4,
    kFrequencyChange = 5
  };

 private:
  Task& t(int tid) { return tasks_[static_cast<std::size_t>(tid)]; }
  RunQueue& q(int cpu) { return rqs_[static_cast<std::size_t>(cpu)]; }

  // The longest a segment may take: 2^61 ns (73 years), far beyond any run's time limit, so
  // that now() plus it never overflows.
  static constexpr SimTime kLongestSpan = SimTime{1} << 61;
  // a + b for spans of at most kLongestSpan each, capped at kLongestSpan: a stall that grows at
  // every switch-in of a task that is preempted before it is paid stays bounded.
  static SimTime capped_sum(SimTime a, SimTime b) { return std::min(a + b, kLongestSpan); }
  // Inline: lock holders' settling and every re-arm ask for it.
  SimTime scaled_ns(std::int64_t work_ref_ns, int cpu) const {
    // Reference work is defined on a capacity-1024 CPU at its maximum frequency.
    const std::int64_t speed = speed_milli_[static_cast<std::size_t>(cpu)];
    constexpr std::int64_t kExactBelow = std::int64_t{1} << 42;  // x 1024000 stays below 2^62
    if (work_ref_ns < kExactBelow) [[likely]] {
      return (work_ref_ns * 1024000 + speed - 1) / speed;
    }
    return scaled_ns_beyond_limits(work_ref_ns, speed);
  }
  // Work beyond any scenario's limits (accumulated in one segment): capped far beyond any run.
  static SimTime scaled_ns_beyond_limits(std::int64_t work_ref_ns, std::int64_t speed);
  std::int64_t work_for_ns(SimTime ns, int cpu) const;
  // Charges the running task of `cpu` for the time since its segment's last accounting. Most
  // calls find nothing to charge (no task, or no time passed): they return here, inline.
  void account_progress(int cpu) {
    const RunQueue& r = q(cpu);
    if (r.curr >= 0 && now() > r.segment_start) account_running(cpu);
  }
  void account_running(int cpu);
  // account_running()'s body, inline in scheduler.cpp (the completion of a segment runs it).
  inline void charge_running(int cpu);
  void rearm(int cpu);
  void carry_vruntime_across_rt(Task& task, bool was_rt);
  // set_attributes() for attributes that differ from the task's.
  void change_attributes(int tid, Policy policy, int nice, int rt_priority);
  // cap_scale(): `delta` x `scale` / 1024, rounded down, without overflow for any delta.
  static SimTime cap_scale(SimTime delta, std::int64_t scale) {
    return (delta >> 10) * scale + (((delta & 1023) * scale) >> 10);
  }
  // The scaled PELT clock of `cpu` as its running task leaves it (to_idle) or as a task starts
  // running on the idle CPU.
  void switch_pelt_clock(int cpu, bool to_idle);
  // The scaled PELT clock of `cpu` restarted from now at its current rate (before the rate
  // changes).
  void restamp_pelt_clock(int cpu);
  // Every change of a CPU's running task goes through set_curr(): it keeps the CPU's bit of
  // idle_task_cpus_ current, and moves a scaled PELT clock between its busy and idle forms.
  void set_curr(int cpu, int tid) {
    if (tunables_.scaled_pelt_clock && (q(cpu).curr < 0) != (tid < 0)) {
      switch_pelt_clock(cpu, tid < 0);
    }
    q(cpu).curr = tid;
    const std::uint64_t bit = std::uint64_t{1} << cpu;
    idle_task_cpus_ = tid < 0 ? idle_task_cpus_ | bit : idle_task_cpus_ & ~bit;
  }
  // Lets the owner settle the running task of `cpu` if it runs ahead (TaskOwner::settle).
  void settle_running(int cpu) {
    const RunQueue& r = q(cpu);
    if (r.curr >= 0 && t(r.curr).runs_ahead) owner_->settle(r.curr);
  }
  // Brings the task's PELT signals (and WALT demand, when tracked) up to now with the state it
  // had since their last update. Many calls find them current and no WALT demand to track: they
  // return here, inline.
  void update_pelt(Task& task) {
    const SimTime clock = task_pelt_clock(task);
    if (walt_tracking_ || clock > task.util.last_update() || clock > task.runnable.last_update()) {
      advance_task_signals(task);
    }
  }
  void advance_task_signals(Task& task);
  // Brings the run queue's aggregated signals to now with the state they had since their last
  // update. Called before anything that changes that state (running task, queued fair weight,
  // attached tasks, frequency). Most calls find them current: they return here, inline.
  void sync_rq_signals(int cpu) {
    // The caller is about to change this run queue.
    below_until_[static_cast<std::size_t>(cpu)] = kUnknown;
    if (pelt_clock(cpu) > q(cpu).signals_at) advance_rq_signals(cpu);
  }
  void advance_rq_signals(int cpu);
  void attach_signals(Task& task, int cpu);
  void detach_signals(Task& task);
  int runnable_fair_weight(int cpu) const;
  bool rt_runnable(int cpu) const {
    const RunQueue& r = rq(cpu);
    return !r.rt.empty() || (r.curr >= 0 && task(r.curr).is_rt());
  }
  // schedutil's frequency update of `cluster` (request_frequency()). Most calls come within the
  // rate limit of the cluster's last request, which only schedutil makes, and only for clusters
  // with operating points: they return here, inline.
  void update_frequency(int cluster) {
    const ClusterFrequency& f = freqs_[static_cast<std::size_t>(cluster)];
    if (f.last_request != engine::kNever &&
        now() - f.last_request < tunables_.schedutil_rate_limit_ns) {
      return;
    }
    request_frequency(cluster);
  }
  void request_frequency(int cluster);
  void apply_frequency(int cluster, int opp);
  void account_frequency(int cluster);
  void start_tick(int cpu);
  void tick(int cpu);
  void periodic_balance(int cpu);
  void kick_idle_balance(int cpu);
  // update_misfit_status(): inline where misfit migration cannot happen (most runs) or the CPU
  // is idle.
  void update_misfit_status(int cpu) {
    RunQueue& r = q(cpu);
    r.misfit = false;
    if (misfit_active_ && r.curr >= 0) update_running_misfit_status(cpu);
  }
  void update_running_misfit_status(int cpu);
  void kick_misfit_balance(int cpu);
  bool pull_misfit_task(int cpu);
  bool may_take_misfit(int src_cpu, int dst_cpu, BalanceKind kind) const;
  void active_migrate(int src_cpu, int dst_cpu);
  // util_est_enqueue() / util_est_dequeue(): a fair task's estimate joins or leaves the sum of
  // the run queue it is enqueued on; util_est_update() when it goes to sleep.
  void util_est_enqueue(Task& task, int cpu);
  void util_est_dequeue(Task& task);
  void util_est_update(Task& task, int cpu);
  void enqueue(int cpu, int tid);
  void dequeue(int cpu, int tid);
  void place_on_cpu(Task& task, int cpu);
  void check_preempt(int cpu, int tid, int waker_cpu);
  void request_resched(int cpu, SimTime at);
  void switch_out(int tid, TaskState state);
  void schedule_cpu(int cpu);
  void switch_in(int cpu, int tid);
  void go_idle(int cpu);
  SimTime average_idle(int cpu) const;
  int newidle_balance(int cpu);
  int pull_rt_task(int cpu, int below_prio);
  // push_rt_tasks(), inline where the CPU runs no RT task or none waits (most calls).
  void push_rt_tasks(int cpu) {
    const RunQueue& r = q(cpu);
    if (r.curr >= 0 && t(r.curr).is_rt() && !r.rt.empty()) push_waiting_rt_tasks(cpu);
  }
  void push_waiting_rt_tasks(int cpu);
  // Pulls one fair task from the busiest CPU that runs at least `min_surplus` more tasks than
  // `cpu` and that the placement lets `cpu` pull from (this cluster first); returns it or -1.
  int pull_fair_task(int cpu, int min_surplus, BalanceKind kind);
  void migrate_queued(int tid, int to_cpu);
  void ensure_slice_check(int cpu);
  void arm_slice_check(int cpu, SimTime at, int tid);
  void slice_check(int cpu, std::uint64_t generation);
  // `task` is the running task of `cpu` or a new task not queued yet.
  SimTime sched_slice(int cpu, const Task& task) const;
  int pick_next(int cpu) const;

  engine::SimContext& context_;
  cost::CostModel& cost_;
  PlacementPolicy& placement_;
  SchedTunables tunables_;
  TaskOwner* owner_ = nullptr;
  std::uint16_t target_ = 0;
  std::vector<Task> tasks_;
  std::vector<int> free_tids_;  // slots of exited tasks, reused by create_task()
  std::vector<RunQueue> rqs_;
  std::uint64_t idle_task_cpus_ = 0;  // bit i: rq(i).curr < 0
  std::vector<ClusterFrequency> freqs_;
  // Per CPU, at its cluster's current frequency: capacity, speed in thousandths of
  // reference work per nanosecond (1024000 = capacity 1024 at fmax), and the frequency in kHz
  // (its cluster's, copied per CPU for the accounting of every segment).
  std::vector<double> capacity_now_;
  std::vector<double> util_ceiling_;   // per CPU: util_ceiling(), kept with capacity_now_
  std::vector<double> capacity_orig_;  // per CPU: topology().capacity(), as a double
  std::vector<std::int64_t> speed_milli_;
  std::vector<std::int64_t> freq_khz_now_;
  // Per CPU: arch_scale_freq_capacity(), the current frequency over the maximum in 1024ths
  // (integer, as the kernel's), and arch_scale_cpu_capacity(), the topology's capacity.
  std::vector<std::int64_t> freq_scale_;
  std::vector<std::int64_t> capacity_scale_;
  std::vector<SimTime> busy_ns_;
  bool asym_capacity_ = false;
  // Misfit migration can happen: asked for, CPUs of different capacities, and a placement
  // that runs mainline's (computed once).
  bool misfit_active_ = false;
  int llc_size_ = 0;
  // WALT: tracked only when the placement uses it.
  bool walt_tracking_ = false;
  WaltTunables walt_;
  std::vector<WaltWindowBusy> walt_cpu_busy_;
  double walt_scale(int cpu) const { return cpu >= 0 ? current_capacity(cpu) / 1024.0 : 1.0; }
  // The task's WALT tracker brought up to now, with its state since its last account.
  WaltDemand walt_now(const Task& each) const;
  void refresh_speeds(int cluster);
  std::uint64_t next_enqueue_seq_ = 0;
  std::uint64_t migrations_ = 0;
  std::uint64_t context_switches_ = 0;
  std::uint64_t process_migrations_ = 0;
  std::uint64_t process_context_switches_ = 0;
  // A context switch away from `task` (perf's context-switches event counts the outgoing task).
  void count_switch_out(const Task& task) {
    ++context_switches_;
    if (task.in_process()) ++process_context_switches_;
  }
  std::uint64_t newidle_pulls_ = 0;
  std::uint64_t rt_pulls_ = 0;
  std::uint64_t rt_pushes_ = 0;
  std::uint64_t balance_pulls_ = 0;
  std::uint64_t misfit_migrations_ = 0;
  std::uint64_t frequency_changes_ = 0;
  bool cpu_overutilized(int cpu) const;
  void update_overutilized_status(int cpu);
  bool any_cpu_overloaded() const;  // rd->overload: some CPU runs two or more tasks
  bool compute_overutilized() const;
  bool overutilized_ = false;
  mutable int overutilized_cpu_ = 0;  // the CPU found overutilised last (asked first next time)
  // Per CPU: its fair and RT utilisation as of `at`, carried from the run queue's signals with
  // the decay factor `keep` (placement asks for them many times per wakeup). It holds while the
  // signals are older than `at`: a run queue changes only after sync_rq_signals() has brought
  // its signals up to now, so until then the memo of now is of the state it still has.
  struct UtilMemo {
    SimTime at = engine::kNever;
    Utilisation util;
    double keep = 1.0;
  };
  mutable std::vector<UtilMemo> util_memo_;
  // Per CPU: until this time (exclusive) its fair utilisation stays below the overutilisation
  // threshold if its run queue does not change (sync_rq_signals() resets it to kUnknown), so
  // compute_overutilized() need not bring it up to now.
  static constexpr SimTime kUnknown = std::numeric_limits<SimTime>::min();
  mutable std::vector<SimTime> below_until_;
  SimTime stays_below_until(int cpu) const;
  // The memo of `cpu`, worked out when it is not of now. For signals older than now.
  const UtilMemo& util_memo(int cpu) const {
    const UtilMemo& memo = util_memo_[static_cast<std::size_t>(cpu)];
    return memo.at == now() ? memo : refresh_util_memo(cpu);
  }
  const UtilMemo& refresh_util_memo(int cpu) const;
  // The run queue's utilisation carried from its signals with the decay factor `keep`.
  // Inline: defined in scheduler.cpp, its only user.
  inline Utilisation carried_utilisation(int cpu, double keep) const;
  // PELT decay factors of short spans (queries are const but may remember a factor).
  mutable PeltDecayMemo decay_;
};

}  // namespace bindersim::sched
