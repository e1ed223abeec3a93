// FtraceWriter: a Tracer that writes the run as kernel ftrace text (the `trace` file of tracefs
// with the record-tgid option), which Perfetto and the Android systrace tools import, and the
// --trace-window parser. The format is documented in docs/trace.md.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "bindersim/engine/time.hpp"
#include "bindersim/trace/tracer.hpp"

namespace bindersim::topology {
class Topology;
}

namespace bindersim::trace {

using engine::SimTime;

// The part of a run that is written: events at start <= t < end (simulated nanoseconds).
struct TraceWindow {
  SimTime start = 0;
  SimTime end = engine::kNever;
  bool contains(SimTime t) const { return t >= start && t < end; }
};

// Parses --trace-window "START:END": seconds of simulated time with up to 9 decimals, either
// side optional ("2:", ":0.5", "1.5:2.25"), START < END. Bad text is a ConfigError that quotes
// it and shows the expected form.
TraceWindow parse_trace_window(std::string_view text);

// The kernel's comm of a task named `name`: its first 15 bytes (TASK_COMM_LEN - 1), with spaces,
// control characters and '=' replaced by '_' so that every "key=value" field stays one token.
std::string ftrace_comm(std::string_view name);

// Writes one line per event, as ftrace prints them:
//   <comm>-<pid> (<tgid>) [<cpu>] .... <seconds>.<microseconds>: <event>: <fields>
// with each event's fields laid out exactly as the kernel's TP_printk. Timestamps are the
// simulated clock rounded to the microsecond (ftrace's default precision), so they never go
// backwards. Each line is attributed to the task the trace shows running on that CPU (the idle
// task "<idle>-0" when none). Pids are allocated in creation order from kFirstPid, so an exited
// task's reused tid gets a new pid; a process's tgid is the pid of its first thread; binder
// transactions get debug ids in send order. Output is buffered; end() (or flush()) writes the
// rest to the stream. The same run gives byte-identical output.
class FtraceWriter final : public Tracer {
 public:
  static constexpr int kFirstPid = 1000;

  // `title` is written as a comment line of the header ("" for none); it must not contain
  // line breaks.
  FtraceWriter(std::ostream& out, const topology::Topology& topology, TraceWindow window = {},
               std::string_view title = {});

  // Writes the buffered lines to the stream.
  void flush();
  // Event lines written so far (header excluded).
  std::uint64_t lines() const { return lines_; }

  void begin(const sched::Scheduler& sched) override;
  void end(const sched::Scheduler& sched) override;
  void task_created(const sched::Scheduler& sched, int tid) override;
  void sched_waking(const sched::Scheduler& sched, int tid, const sched::WakeContext& ctx) override;
  void sched_wakeup(const sched::Scheduler& sched, int tid, const sched::WakeContext& ctx) override;
  void sched_migrate(const sched::Scheduler& sched, int tid, int dest_cpu) override;
  void sched_block(const sched::Scheduler& sched, int tid, bool exiting) override;
  void sched_switch(const sched::Scheduler& sched, int cpu, int next_tid) override;
  void cpu_idle(const sched::Scheduler& sched, int cpu) override;
  void cpu_frequency(const sched::Scheduler& sched, int cluster) override;
  void binder_command(const sched::Scheduler& sched, int tid, BinderCommand command) override;
  void binder_return(const sched::Scheduler& sched, int tid, BinderReturn ret) override;
  void binder_transaction(const sched::Scheduler& sched, int txn,
                          const binder::Transaction& transaction, int dest_tid) override;
  void binder_transaction_received(const sched::Scheduler& sched, int tid, int txn,
                                   const binder::Transaction& transaction) override;
  void binder_select(const sched::Scheduler& sched, std::string_view selector,
                     const selectors::SelectionRequest& request,
                     const selectors::Selection& selection) override;
  void binder_nudge(const sched::Scheduler& sched, int waker_tid, int tid, int from_cpu,
                    int to_cpu) override;
  void binder_set_priority(const sched::Scheduler& sched, int actor_tid, int tid, int old_prio,
                           int new_prio) override;

 private:
  // A traced task: its pid, tgid and comm, and the CPU the trace shows it running on.
  struct TaskInfo {
    int pid = 0;
    int tgid = 0;
    std::string comm;
    int running_cpu = -1;
  };
  // What the trace shows on a CPU: the running task (tid -1 = the idle task), the pending
  // switch-away of a task that blocked or exited, the idle state and the frequency.
  struct CpuInfo {
    int tid = -1;
    int pid = 0;
    int tgid = 0;
    std::string comm;
    bool leaving = false;  // the running task blocked or exited: its switch-away is next
    char leave_state = 'S';
    int leave_prio = 120;
    int idle_state = -1;  // while idle: the state entered (-1: not traced yet)
    std::int64_t freq_khz = 0;
    // The start of its lines up to the timestamp, for the running task and the idle task.
    std::string head;
    std::string idle_head;
  };

  TaskInfo& info(int tid);
  int process_tgid(int process);
  int node_debug_id(int process, int node);
  // True when events at `now` are written; the first time, writes the state of every CPU at
  // the window's start (frequency, idle state) so that the window reads on its own.
  bool visible(SimTime now);
  // Starts a line on `cpu` at `now` with the prefix of the task running there (of the idle
  // task when `idle_task`).
  void prefix(int cpu, SimTime now, std::string_view event, bool idle_task = false);
  void set_head(int cpu);
  // The CPU whose running task does what `tid` does: the CPU it runs on, else `fallback`.
  int context_cpu(int tid, int fallback) const;
  void write_wake(const char* event, const sched::Scheduler& sched, int tid, int target_cpu);
  void write_cpu_idle(int cpu, SimTime now, std::uint32_t state);
  // The running task of `cpu` leaves it for the idle task (a sched_switch line when `write`).
  void switch_to_idle(const sched::Scheduler& sched, int cpu, bool write);
  // Starts a sched_switch line on `cpu` with its running task as prev, up to prev_state.
  void write_switch_from_task(const sched::Scheduler& sched, int cpu);
  void write_mark_slice(int cpu, SimTime now, std::string_view name);
  void maybe_flush();

  std::ostream& out_;
  const topology::Topology& topology_;
  TraceWindow window_;
  bool opened_ = false;
  std::string buffer_;
  std::string scratch_;  // slice names being assembled
  std::uint64_t lines_ = 0;
  std::vector<TaskInfo> tasks_;             // by tid
  std::vector<CpuInfo> cpus_;               // by CPU
  std::vector<int> process_tgids_;          // by process (0: not assigned yet)
  std::vector<std::vector<int>> node_ids_;  // by process, node (0: not assigned yet)
  std::vector<int> txn_ids_;                // debug id by transaction pool index
  int next_pid_ = kFirstPid;
  int next_debug_id_ = 1;
  int wake_cpu_ = -1;      // context CPU of the wakeup in progress (-1: none)
  SimTime stamp_us_ = -1;  // the timestamp `stamp_` shows, in microseconds
  std::string stamp_;
};

}  // namespace bindersim::trace
