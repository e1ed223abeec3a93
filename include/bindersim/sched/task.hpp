// A schedulable thread: its policy and priority, state, CPU bookkeeping, current work segment
// and load-tracking signals.
#pragma once

#include <cstdint>
#include <string>

#include "bindersim/engine/time.hpp"
#include "bindersim/sched/pelt.hpp"
#include "bindersim/sched/util_est.hpp"
#include "bindersim/sched/walt_demand.hpp"

namespace bindersim::sched {

using engine::SimTime;

enum class Policy : std::uint8_t { kNormal, kFifo };
enum class TaskState : std::uint8_t { kNew, kRunnable, kRunning, kSleeping, kDead };

// The kernel's priority scale: RT priority p (1..99) is prio 99 - p, nice n is prio 120 + n.
// Lower is more important.
inline constexpr int kMaxRtPrio = 100;
inline int prio_of(Policy policy, int nice, int rt_priority) {
  return policy == Policy::kFifo ? kMaxRtPrio - 1 - rt_priority : 120 + nice;
}

// CFS load weight of a nice value (the kernel's sched_prio_to_weight table).
int nice_to_weight(int nice);

struct TaskParams {
  std::string name;
  int process = -1;  // owning process id (for reports)
  Policy policy = Policy::kNormal;
  int nice = 0;                        // -20..19, for kNormal
  int rt_priority = 0;                 // 1..99, for kFifo
  std::uint64_t affinity = 0;          // bit i = may run on CPU i; 0 = every CPU
  std::int64_t working_set_bytes = 0;  // data the thread touches each time it runs
};

// Where a task's time went, cumulative since it was created (nanoseconds). Running time is
// split into work, context-switch stall and cache stall (refill and transfers); waiting after a
// wakeup into the reschedule IPI, the CPU's idle exit, and the run queue.
struct TimeAccount {
  SimTime work = 0;
  SimTime switch_stall = 0;
  SimTime cache_stall = 0;
  SimTime wait_ipi = 0;
  SimTime wait_idle_exit = 0;
  SimTime wait_rq = 0;
};

struct Task {
  int tid = -1;
  TaskParams params;
  // Current (possibly inherited) scheduling attributes.
  Policy policy = Policy::kNormal;
  int nice = 0;
  int rt_priority = 0;
  int weight = 1024;
  TaskState state = TaskState::kNew;

  int cpu = -1;       // CPU it is queued or running on, or last ran on; -1 before placement
  int wake_cpu = -1;  // prev_cpu handed to placement on the next wakeup (kernel p->wake_cpu)
  int recent_used_cpu = -1;
  bool resume_pending = false;  // woken: the owner's on_resume() runs at the next switch-in
  // Preemption disabled while > 0 (a spinlock held or being spun for): a reschedule of its CPU
  // waits until it drops back to 0. It never blocks in that state.
  int preempt_count = 0;
  // The owner is told (TaskOwner::on_switch) when this task is switched in or out: lock
  // holders and spinners, whose waiters depend on whether they run.
  bool watch_switches = false;
  // The owner runs ahead of this task's events: its segment spans a step the owner has not
  // applied yet (a lock taken part-way through). The scheduler asks it to settle
  // (TaskOwner::settle) before reading the task's preemptibility.
  bool runs_ahead = false;

  // Current work segment: first `overhead_ns` of stall on the CPU (switch, cache refill,
  // data transfer), then `work_ref_ns` of reference work scaled by the CPU's capacity.
  bool has_segment = false;
  SimTime overhead_ns = 0;
  std::int64_t work_ref_ns = 0;

  // Time accounting (for the latency breakdown).
  TimeAccount times;
  SimTime switch_stall_left = 0;  // part of overhead_ns that is context-switch cost
  SimTime refill_stall_left = 0;  // part of overhead_ns that is switch-in cache refill
  SimTime woken_at = 0;           // time of the last wakeup
  SimTime pending_ipi = 0;        // IPI latency this wakeup waits for
  SimTime pending_idle_exit = 0;  // idle-exit latency this wakeup waits for

  // CFS state.
  std::int64_t vruntime = 0;
  SimTime exec_start = 0;         // start of the current accounting interval while running
  SimTime slice_start = 0;        // the end of the stall of its last switch-in
  std::uint64_t enqueue_seq = 0;  // FIFO order within an RT priority and for vruntime ties
  // Queued by a wakeup that the Android RT sync rule keeps with its waker: not pushable.
  bool kept_by_rt_sync = false;

  // wake_wide() bookkeeping (kernel record_wakee()).
  int last_wakee = -1;
  std::uint32_t wakee_flips = 0;
  SimTime wakee_flip_decay_ts = 0;

  // PELT: utilisation (running, capacity-invariant) and runnable fraction.
  PeltSignal util;
  PeltSignal runnable;
  // util_est (kept only with SchedTunables::util_est), and the CPU whose run queue sum holds
  // its value while the task is enqueued there as a fair task (-1: none).
  UtilEstimate util_est;
  int util_est_cpu = -1;
  // WALT's window-based demand (kept only when the placement asks for it: tracks_walt_demand()).
  WaltDemand walt;

  int prio() const { return prio_of(policy, nice, rt_priority); }
  bool is_rt() const { return policy == Policy::kFifo; }
  // A thread of one of the scenario's processes (counted in the process-scope counters).
  bool in_process() const { return params.process >= 0; }
  bool allowed_on(int cpu_id) const {
    return params.affinity == 0 || ((params.affinity >> cpu_id) & 1U) != 0;
  }
  // Allowed on one CPU only (nr_cpus_allowed == 1).
  bool pinned() const {
    return params.affinity != 0 && (params.affinity & (params.affinity - 1)) == 0;
  }
  // A queued RT task on its CPU's pushable list (enqueue_pushable_task()): pull_rt_task() may
  // take it to another CPU. Not pinned tasks, nor a wakee kept by the Android RT sync rule.
  bool rt_pushable() const { return is_rt() && !pinned() && !kept_by_rt_sync; }
  // PELT load: runnable fraction scaled by the CFS weight, at `pelt_now`, a time of the PELT
  // clock its signals are kept in (Scheduler::task_pelt_clock(); Scheduler::task_load()).
  double load_avg(SimTime pelt_now) const;
};

}  // namespace bindersim::sched
