#include "bindersim/trace/ftrace_writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <concepts>
#include <iterator>
#include <ostream>

#include "bindersim/binder/driver.hpp"
#include "bindersim/common/error.hpp"
#include "bindersim/sched/scheduler.hpp"
#include "bindersim/selectors/selector.hpp"
#include "bindersim/topology/topology.hpp"

namespace bindersim::trace {
namespace {

// The kernel's TASK_COMM_LEN less its terminating zero.
constexpr std::size_t kCommLength = 15;
// The idle task's prio in sched_switch (it is printed as a nice-0 task).
constexpr int kIdlePrio = 120;
// PWR_EVENT_EXIT as cpu_idle prints it: (u32)-1.
constexpr std::uint32_t kIdleExit = 4294967295U;
// The buffer is handed to the stream when it grows past this.
constexpr std::size_t kFlushBytes = 1 << 16;

// Binder protocol codes as the 64-bit uapi defines them (_IOW/_IOR/_IO of 'c' and 'r'; struct
// binder_transaction_data is 64 bytes, binder_uintptr_t 8) and the names binder.c prints.
struct Code {
  std::uint32_t value;
  const char* name;
};

Code command_code(BinderCommand command) {
  switch (command) {
    case BinderCommand::kTransaction:
      return {0x40406300U, "BC_TRANSACTION"};
    case BinderCommand::kReply:
      return {0x40406301U, "BC_REPLY"};
    case BinderCommand::kFreeBuffer:
      return {0x40086303U, "BC_FREE_BUFFER"};
    case BinderCommand::kRegisterLooper:
      return {0x630bU, "BC_REGISTER_LOOPER"};
    case BinderCommand::kEnterLooper:
      return {0x630cU, "BC_ENTER_LOOPER"};
  }
  return {0, "unknown"};
}

Code return_code(BinderReturn ret) {
  switch (ret) {
    case BinderReturn::kTransaction:
      return {0x80407202U, "BR_TRANSACTION"};
    case BinderReturn::kReply:
      return {0x80407203U, "BR_REPLY"};
    case BinderReturn::kTransactionComplete:
      return {0x7206U, "BR_TRANSACTION_COMPLETE"};
    case BinderReturn::kSpawnLooper:
      return {0x720dU, "BR_SPAWN_LOOPER"};
    case BinderReturn::kFailedReply:
      return {0x7211U, "BR_FAILED_REPLY"};
  }
  return {0, "unknown"};
}

// Transaction flags as libbinder sets them: TF_ACCEPT_FDS on calls, TF_ONE_WAY on oneway ones;
// replies carry none.
constexpr std::uint32_t kOneWay = 0x01;
constexpr std::uint32_t kAcceptFds = 0x10;
// The transaction code of every call (IBinder::FIRST_CALL_TRANSACTION).
constexpr std::uint32_t kFirstCallTransaction = 1;

// Line assembly: plain appends to the buffer (a trace has millions of fields, and this is
// several times faster than a format string per line).
struct Hex {  // "0x" and lowercase hexadecimal, as printk's 0x%x
  std::uint32_t value;
};
struct ZeroPadded {  // at least `width` digits, zero-filled, as %03d / %06lu
  std::int64_t value;
  int width;
};
struct PadLeft {  // right-aligned in `width` columns, as %16s and %5lu
  std::string_view text;
  std::size_t width;
};
struct PadRight {  // left-aligned in `width` columns, as %-7d
  std::string_view text;
  std::size_t width;
};

void put_one(std::string& b, std::string_view text) { b.append(text); }
void put_one(std::string& b, char c) { b.push_back(c); }
template <std::integral T>
void put_one(std::string& b, T value) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  b.append(digits, end);
}
void put_one(std::string& b, Hex hex) {
  char digits[16];
  const auto end = std::to_chars(digits, digits + sizeof digits, hex.value, 16).ptr;
  b.append("0x").append(digits, end);
}
void put_one(std::string& b, ZeroPadded z) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, z.value).ptr;
  const auto length = static_cast<int>(end - digits);
  if (length < z.width) b.append(static_cast<std::size_t>(z.width - length), '0');
  b.append(digits, end);
}
void put_one(std::string& b, PadLeft p) {
  if (p.text.size() < p.width) b.append(p.width - p.text.size(), ' ');
  b.append(p.text);
}
void put_one(std::string& b, PadRight p) {
  b.append(p.text);
  if (p.text.size() < p.width) b.append(p.width - p.text.size(), ' ');
}

template <typename... Parts>
void put(std::string& b, const Parts&... parts) {
  (put_one(b, parts), ...);
}

// Decimal text of an integer, for padded fields.
struct Decimal {
  explicit Decimal(std::int64_t value)
      : length(static_cast<std::size_t>(std::to_chars(digits, digits + sizeof digits, value).ptr -
                                        digits)) {}
  std::string_view view() const { return {digits, length}; }
  char digits[24];
  std::size_t length;
};

// Parses seconds "S[.F]" (F up to 9 digits) into nanoseconds; false on anything else.
bool parse_seconds(std::string_view text, SimTime* ns) {
  const std::size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view fraction = dot == std::string_view::npos ? "" : text.substr(dot + 1);
  if (whole.empty() || (dot != std::string_view::npos && fraction.empty()) || fraction.size() > 9 ||
      whole.size() > 9) {
    return false;
  }
  for (const char c : text) {
    if (c != '.' && (c < '0' || c > '9')) return false;
  }
  SimTime seconds = 0;
  std::from_chars(whole.data(), whole.data() + whole.size(), seconds);
  SimTime nanos = 0;
  for (std::size_t i = 0; i < 9; ++i)
    nanos = nanos * 10 + (i < fraction.size() ? fraction[i] - '0' : 0);
  *ns = seconds * engine::kSecond + nanos;
  return true;
}

}  // namespace

TraceWindow parse_trace_window(std::string_view text) {
  const auto bad = [&](const std::string& why) {
    return ConfigError("--trace-window " + std::string(text) + ": " + why +
                       " (expected START:END in seconds of simulated time, either side "
                       "optional, e.g. 1.5:2 or 3:)");
  };
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos || text.find(':', colon + 1) != std::string_view::npos) {
    throw bad("expected one ':'");
  }
  TraceWindow window;
  const std::string_view start = text.substr(0, colon);
  const std::string_view end = text.substr(colon + 1);
  if (!start.empty() && !parse_seconds(start, &window.start)) {
    throw bad("START \"" + std::string(start) + "\" is not seconds as S[.F] (decimal digits, " +
              "S up to 9 and F up to 9 of them)");
  }
  if (!end.empty() && !parse_seconds(end, &window.end)) {
    throw bad("END \"" + std::string(end) + "\" is not seconds as S[.F] (decimal digits, " +
              "S up to 9 and F up to 9 of them)");
  }
  if (window.start >= window.end) throw bad("START must be before END");
  return window;
}

std::string ftrace_comm(std::string_view name) {
  std::string comm(name.substr(0, std::min(name.size(), kCommLength)));
  for (char& c : comm) {
    if (c == ' ' || c == '=' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '_';
  }
  return comm;
}

FtraceWriter::FtraceWriter(std::ostream& out, const topology::Topology& topology,
                           TraceWindow window, std::string_view title)
    : out_(out),
      topology_(topology),
      window_(window),
      cpus_(static_cast<std::size_t>(topology.num_cpus())) {
  for (int cpu = 0; cpu < topology.num_cpus(); ++cpu) set_head(cpu);
  buffer_.reserve(2 * kFlushBytes);
  // The header of tracefs's `trace` file with the record-tgid option.
  buffer_ += "# tracer: nop\n#\n";
  if (!title.empty()) fmt::format_to(std::back_inserter(buffer_), "# {}\n#\n", title);
  fmt::format_to(std::back_inserter(buffer_), "# entries-in-buffer/entries-written: -/-   #P:{}\n",
                 topology.num_cpus());
  buffer_ +=
      "#\n"
      "#                                          _-----=> irqs-off\n"
      "#                                         / _----=> need-resched\n"
      "#                                        | / _---=> hardirq/softirq\n"
      "#                                        || / _--=> preempt-depth\n"
      "#                                        ||| /     delay\n"
      "#           TASK-PID       TGID    CPU#  ||||   TIMESTAMP  FUNCTION\n"
      "#              | |           |       |   ||||      |         |\n";
}

void FtraceWriter::flush() {
  out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  buffer_.clear();
}

void FtraceWriter::maybe_flush() {
  if (buffer_.size() >= kFlushBytes) flush();
}

FtraceWriter::TaskInfo& FtraceWriter::info(int tid) {
  if (static_cast<std::size_t>(tid) >= tasks_.size()) {
    tasks_.resize(static_cast<std::size_t>(tid) + 1);
  }
  return tasks_[static_cast<std::size_t>(tid)];
}

int FtraceWriter::process_tgid(int process) {
  if (static_cast<std::size_t>(process) >= process_tgids_.size()) {
    process_tgids_.resize(static_cast<std::size_t>(process) + 1, 0);
  }
  int& tgid = process_tgids_[static_cast<std::size_t>(process)];
  if (tgid == 0) tgid = next_pid_++;  // a process without a thread yet
  return tgid;
}

int FtraceWriter::node_debug_id(int process, int node) {
  if (static_cast<std::size_t>(process) >= node_ids_.size()) {
    node_ids_.resize(static_cast<std::size_t>(process) + 1);
  }
  auto& ids = node_ids_[static_cast<std::size_t>(process)];
  if (static_cast<std::size_t>(node) >= ids.size()) ids.resize(static_cast<std::size_t>(node) + 1);
  int& id = ids[static_cast<std::size_t>(node)];
  if (id == 0) id = next_debug_id_++;
  return id;
}

bool FtraceWriter::visible(SimTime now) {
  if (!window_.contains(now)) return false;
  if (opened_) return true;
  opened_ = true;
  // The state the window starts in: every CPU's frequency, and the idle state of idle CPUs.
  for (int cpu = 0; cpu < static_cast<int>(cpus_.size()); ++cpu) {
    const CpuInfo& c = cpus_[static_cast<std::size_t>(cpu)];
    if (c.freq_khz > 0) {
      prefix(cpu, window_.start, "cpu_frequency");
      put(buffer_, "state=", c.freq_khz, " cpu_id=", cpu, '\n');
    }
    if (c.tid < 0 && c.idle_state >= 0) {
      write_cpu_idle(cpu, window_.start, static_cast<std::uint32_t>(c.idle_state));
    }
  }
  return true;
}

void FtraceWriter::set_head(int cpu) {
  // "%16s-%-7d (%7d) [%03d] .... "
  CpuInfo& c = cpus_[static_cast<std::size_t>(cpu)];
  if (c.idle_head.empty()) {
    put(c.idle_head, PadLeft{"<idle>", 16}, "-0       (-------) [", ZeroPadded{cpu, 3}, "] .... ");
  }
  c.head.clear();
  if (c.tid < 0) {
    c.head = c.idle_head;
  } else {
    put(c.head, PadLeft{c.comm, 16}, '-', PadRight{Decimal(c.pid).view(), 7}, " (",
        PadLeft{Decimal(c.tgid).view(), 7}, ") [", ZeroPadded{cpu, 3}, "] .... ");
  }
}

void FtraceWriter::prefix(int cpu, SimTime now, std::string_view event, bool idle_task) {
  const CpuInfo& c = cpus_[static_cast<std::size_t>(cpu)];
  // ftrace prints microseconds rounded to the nearest (ns2usecs()): "%5lu.%06lu".
  const SimTime us = (now + 500) / 1000;
  if (us != stamp_us_) {
    stamp_us_ = us;
    stamp_.clear();
    put(stamp_, PadLeft{Decimal(us / 1'000'000).view(), 5}, '.', ZeroPadded{us % 1'000'000, 6});
  }
  put(buffer_, idle_task ? std::string_view(c.idle_head) : std::string_view(c.head), stamp_, ": ",
      event, ": ");
  ++lines_;
}

int FtraceWriter::context_cpu(int tid, int fallback) const {
  if (tid >= 0 && static_cast<std::size_t>(tid) < tasks_.size()) {
    const int cpu = tasks_[static_cast<std::size_t>(tid)].running_cpu;
    if (cpu >= 0) return cpu;
  }
  return fallback;
}

// --- run boundaries ----------------------------------------------------------------------------

void FtraceWriter::begin(const sched::Scheduler& sched) {
  for (int cpu = 0; cpu < static_cast<int>(cpus_.size()); ++cpu) {
    CpuInfo& c = cpus_[static_cast<std::size_t>(cpu)];
    c.freq_khz = sched.current_freq_khz(topology_.cluster_of(cpu));
    if (sched.rq(cpu).curr < 0) c.idle_state = sched.rq(cpu).idle_state;
  }
  visible(sched.now());  // a window that starts now opens with the state just recorded
  maybe_flush();
}

void FtraceWriter::end(const sched::Scheduler& /*sched*/) { flush(); }

// --- scheduler ---------------------------------------------------------------------------------

void FtraceWriter::task_created(const sched::Scheduler& sched, int tid) {
  const sched::Task& task = sched.task(tid);
  TaskInfo& t = info(tid);
  t = TaskInfo{};
  t.pid = next_pid_++;
  t.comm = ftrace_comm(task.params.name);
  if (task.params.process >= 0) {
    if (static_cast<std::size_t>(task.params.process) >= process_tgids_.size()) {
      process_tgids_.resize(static_cast<std::size_t>(task.params.process) + 1, 0);
    }
    int& tgid = process_tgids_[static_cast<std::size_t>(task.params.process)];
    if (tgid == 0) tgid = t.pid;  // the first thread of a process leads it
    t.tgid = tgid;
  } else {
    t.tgid = t.pid;
  }
}

void FtraceWriter::write_wake(const char* event, const sched::Scheduler& sched, int tid,
                              int target_cpu) {
  const TaskInfo& t = info(tid);
  prefix(wake_cpu_, sched.now(), event);
  put(buffer_, "comm=", t.comm, " pid=", t.pid, " prio=", sched.task(tid).prio(),
      " target_cpu=", ZeroPadded{target_cpu, 3}, '\n');
}

void FtraceWriter::sched_waking(const sched::Scheduler& sched, int tid,
                                const sched::WakeContext& ctx) {
  const sched::Task& task = sched.task(tid);
  // The waker's context: its CPU; for a timer or interrupt, the CPU the task last ran on.
  int fallback = ctx.waker_cpu;
  if (fallback < 0) fallback = task.cpu >= 0 ? task.cpu : std::max(task.wake_cpu, 0);
  wake_cpu_ = context_cpu(ctx.waker_tid, fallback);
  // A new task's first wakeup is sched_wakeup_new alone, as wake_up_new_task() traces it.
  if (ctx.fork || !visible(sched.now())) return;
  write_wake("sched_waking", sched, tid, task.cpu >= 0 ? task.cpu : wake_cpu_);
  maybe_flush();
}

void FtraceWriter::sched_wakeup(const sched::Scheduler& sched, int tid,
                                const sched::WakeContext& ctx) {
  if (visible(sched.now())) {
    write_wake(ctx.fork ? "sched_wakeup_new" : "sched_wakeup", sched, tid, sched.task(tid).cpu);
    maybe_flush();
  }
  wake_cpu_ = -1;
}

void FtraceWriter::sched_migrate(const sched::Scheduler& sched, int tid, int dest_cpu) {
  const bool write = visible(sched.now());
  const int running_cpu = info(tid).running_cpu;
  // A task moved while it runs (an active misfit migration): the kernel's stopper preempts it
  // and moves it from its CPU. The stopper is not modelled, so the task leaves for the idle
  // task first (an idle slice of no length until the CPU picks its next task).
  if (running_cpu >= 0) switch_to_idle(sched, running_cpu, write);
  if (!write) return;
  const TaskInfo& t = info(tid);
  const sched::Task& task = sched.task(tid);
  // In a wakeup, the waker migrates the task; in an active migration, its CPU; otherwise the
  // CPU that pulls it.
  const int cpu = wake_cpu_ >= 0 ? wake_cpu_ : running_cpu >= 0 ? running_cpu : dest_cpu;
  prefix(cpu, sched.now(), "sched_migrate_task");
  put(buffer_, "comm=", t.comm, " pid=", t.pid, " prio=", task.prio(), " orig_cpu=", task.cpu,
      " dest_cpu=", dest_cpu, '\n');
  maybe_flush();
}

void FtraceWriter::write_switch_from_task(const sched::Scheduler& sched, int cpu) {
  const CpuInfo& c = cpus_[static_cast<std::size_t>(cpu)];
  // A task that did not block or exit was preempted: R+ (TASK_REPORT_MAX).
  const int prio = c.leaving ? c.leave_prio : sched.task(c.tid).prio();
  prefix(cpu, sched.now(), "sched_switch");
  put(buffer_, "prev_comm=", c.comm, " prev_pid=", c.pid, " prev_prio=", prio,
      " prev_state=", c.leaving ? std::string_view(&c.leave_state, 1) : "R+");
}

void FtraceWriter::switch_to_idle(const sched::Scheduler& sched, int cpu, bool write) {
  CpuInfo& c = cpus_[static_cast<std::size_t>(cpu)];
  BSIM_CHECK(c.tid >= 0 && info(c.tid).running_cpu == cpu);
  if (write) {
    write_switch_from_task(sched, cpu);
    put(buffer_, " ==> next_comm=swapper/", cpu, " next_pid=0 next_prio=", kIdlePrio, '\n');
  }
  info(c.tid).running_cpu = -1;
  c.tid = -1;
  c.leaving = false;
  set_head(cpu);
}

void FtraceWriter::sched_block(const sched::Scheduler& sched, int tid, bool exiting) {
  const int cpu = context_cpu(tid, sched.task(tid).cpu);
  if (cpu < 0) return;
  CpuInfo& c = cpus_[static_cast<std::size_t>(cpu)];
  c.leaving = true;
  c.leave_state = exiting ? 'X' : 'S';
  c.leave_prio = sched.task(tid).prio();
}

void FtraceWriter::sched_switch(const sched::Scheduler& sched, int cpu, int next_tid) {
  CpuInfo& c = cpus_[static_cast<std::size_t>(cpu)];
  const TaskInfo& next = info(next_tid);
  if (visible(sched.now())) {
    if (c.tid < 0) {
      if (c.idle_state >= 0) write_cpu_idle(cpu, sched.now(), kIdleExit);
      prefix(cpu, sched.now(), "sched_switch");
      put(buffer_, "prev_comm=swapper/", cpu, " prev_pid=0 prev_prio=", kIdlePrio, " prev_state=R");
    } else {
      write_switch_from_task(sched, cpu);
    }
    put(buffer_, " ==> next_comm=", next.comm, " next_pid=", next.pid,
        " next_prio=", sched.task(next_tid).prio(), '\n');
    maybe_flush();
  }
  if (c.tid >= 0) info(c.tid).running_cpu = -1;
  c.tid = next_tid;
  c.pid = next.pid;
  c.tgid = next.tgid;
  c.comm = next.comm;
  c.leaving = false;
  c.idle_state = -1;
  set_head(cpu);
  info(next_tid).running_cpu = cpu;
}

void FtraceWriter::write_cpu_idle(int cpu, SimTime now, std::uint32_t state) {
  // cpuidle traces from the idle task itself.
  prefix(cpu, now, "cpu_idle", /*idle_task=*/true);
  put(buffer_, "state=", state, " cpu_id=", cpu, '\n');
}

void FtraceWriter::cpu_idle(const sched::Scheduler& sched, int cpu) {
  CpuInfo& c = cpus_[static_cast<std::size_t>(cpu)];
  const int state = sched.rq(cpu).idle_state;
  const bool on = visible(sched.now());
  if (c.tid >= 0) {
    switch_to_idle(sched, cpu, on);
  } else if (c.idle_state == state) {
    return;  // still in the same state
  } else if (c.idle_state >= 0 && on) {
    write_cpu_idle(cpu, sched.now(), kIdleExit);  // the idle loop leaves one state for another
  }
  c.idle_state = state;
  if (on) {
    write_cpu_idle(cpu, sched.now(), static_cast<std::uint32_t>(state));
    maybe_flush();
  }
}

void FtraceWriter::cpu_frequency(const sched::Scheduler& sched, int cluster) {
  const bool on = visible(sched.now());
  const std::int64_t khz = sched.current_freq_khz(cluster);
  for (const int cpu : topology_.cluster_cpus(cluster)) {
    cpus_[static_cast<std::size_t>(cpu)].freq_khz = khz;
    if (!on) continue;
    prefix(cpu, sched.now(), "cpu_frequency");
    put(buffer_, "state=", khz, " cpu_id=", cpu, '\n');
  }
  maybe_flush();
}

// --- binder ------------------------------------------------------------------------------------

void FtraceWriter::binder_command(const sched::Scheduler& sched, int tid, BinderCommand command) {
  if (!visible(sched.now())) return;
  const Code code = command_code(command);
  prefix(context_cpu(tid, std::max(sched.task(tid).cpu, 0)), sched.now(), "binder_command");
  put(buffer_, "cmd=", Hex{code.value}, ' ', code.name, '\n');
  maybe_flush();
}

void FtraceWriter::binder_return(const sched::Scheduler& sched, int tid, BinderReturn ret) {
  if (!visible(sched.now())) return;
  const Code code = return_code(ret);
  prefix(context_cpu(tid, std::max(sched.task(tid).cpu, 0)), sched.now(), "binder_return");
  put(buffer_, "cmd=", Hex{code.value}, ' ', code.name, '\n');
  maybe_flush();
}

// binder_trace.h (Android common kernel): the model sets the priority it asks for, so the new
// and the desired prio are the same.
void FtraceWriter::binder_set_priority(const sched::Scheduler& sched, int actor_tid, int tid,
                                       int old_prio, int new_prio) {
  if (!visible(sched.now())) return;
  const int fallback = std::max(sched.task(actor_tid >= 0 ? actor_tid : tid).cpu, 0);
  prefix(context_cpu(actor_tid, fallback), sched.now(), "binder_set_priority");
  const TaskInfo& t = info(tid);
  put(buffer_, "proc=", t.tgid, " thread=", t.pid, " old=", old_prio, " => new=", new_prio,
      " desired=", new_prio, '\n');
  maybe_flush();
}

void FtraceWriter::binder_transaction(const sched::Scheduler& sched, int txn,
                                      const binder::Transaction& transaction, int dest_tid) {
  // The debug id is taken whether or not the line is written, so ids do not depend on the
  // window.
  if (static_cast<std::size_t>(txn) >= txn_ids_.size()) {
    txn_ids_.resize(static_cast<std::size_t>(txn) + 1, 0);
  }
  const int id = next_debug_id_++;
  txn_ids_[static_cast<std::size_t>(txn)] = id;
  int dest_proc = 0;
  int dest_node = 0;
  if (transaction.is_reply) {
    dest_proc = dest_tid >= 0 ? info(dest_tid).tgid : 0;
  } else {
    dest_proc = process_tgid(transaction.to_proc);
    dest_node = node_debug_id(transaction.to_proc, transaction.node);
  }
  if (!visible(sched.now())) return;
  const std::uint32_t flags =
      transaction.is_reply ? 0 : (transaction.oneway ? kOneWay | kAcceptFds : kAcceptFds);
  const std::uint32_t code = transaction.is_reply ? 0 : kFirstCallTransaction;
  const int from = transaction.from_tid;
  prefix(context_cpu(from, std::max(sched.task(from).cpu, 0)), sched.now(), "binder_transaction");
  put(buffer_, "transaction=", id, " dest_node=", dest_node, " dest_proc=", dest_proc,
      " dest_thread=", dest_tid >= 0 ? info(dest_tid).pid : 0,
      " reply=", transaction.is_reply ? 1 : 0, " flags=", Hex{flags}, " code=", Hex{code}, '\n');
  maybe_flush();
}

void FtraceWriter::binder_transaction_received(const sched::Scheduler& sched, int tid, int txn,
                                               const binder::Transaction& transaction) {
  if (!visible(sched.now())) return;
  const int cpu = context_cpu(tid, std::max(sched.task(tid).cpu, 0));
  const int id =
      static_cast<std::size_t>(txn) < txn_ids_.size() ? txn_ids_[static_cast<std::size_t>(txn)] : 0;
  if (transaction.is_reply) {
    // A two-way call's BR_TRANSACTION_COMPLETE is deferred until its reply arrives.
    const Code complete = return_code(BinderReturn::kTransactionComplete);
    prefix(cpu, sched.now(), "binder_return");
    put(buffer_, "cmd=", Hex{complete.value}, ' ', complete.name, '\n');
  }
  // A reply that found no buffer space is never received: binder_send_failed_reply() leaves
  // the caller only its error.
  if (!transaction.failed) {
    prefix(cpu, sched.now(), "binder_transaction_received");
    put(buffer_, "transaction=", id, '\n');
  }
  const Code code = return_code(!transaction.is_reply ? BinderReturn::kTransaction
                                : transaction.failed  ? BinderReturn::kFailedReply
                                                      : BinderReturn::kReply);
  prefix(cpu, sched.now(), "binder_return");
  put(buffer_, "cmd=", Hex{code.value}, ' ', code.name, '\n');
  maybe_flush();
}

void FtraceWriter::write_mark_slice(int cpu, SimTime now, std::string_view name) {
  // A zero-length slice written through trace_marker, on the thread running on `cpu`.
  const int tgid =
      cpus_[static_cast<std::size_t>(cpu)].tid < 0 ? 0 : cpus_[static_cast<std::size_t>(cpu)].tgid;
  prefix(cpu, now, "tracing_mark_write");
  put(buffer_, "B|", tgid, '|', name, '\n');
  prefix(cpu, now, "tracing_mark_write");
  put(buffer_, "E|", tgid, '\n');
}

void FtraceWriter::binder_select(const sched::Scheduler& sched, std::string_view selector,
                                 const selectors::SelectionRequest& request,
                                 const selectors::Selection& selection) {
  if (!visible(sched.now())) return;
  std::string& name = scratch_;
  name.clear();
  put(name, "binder select ", selector, ": ");
  if (!selection.index) {
    put(name, "none_idle caller_cpu=", request.caller_cpu, " idle=0");
  } else {
    const selectors::IdleThread& chosen = request.waiting[*selection.index];
    // The reasons Selector counts: the chosen thread's last CPU against the caller's.
    const char* reason = "other";
    if (chosen.last_cpu == request.caller_cpu) {
      reason = "same_cpu";
    } else if (chosen.last_cpu >= 0 &&
               topology_.cluster_of(chosen.last_cpu) == topology_.cluster_of(request.caller_cpu)) {
      reason = "same_cluster";
    }
    put(name, reason, " thread=", info(chosen.tid).pid, " last_cpu=", chosen.last_cpu,
        " caller_cpu=", request.caller_cpu, " idle=", request.waiting.size(),
        " position=", *selection.index);
    if (selection.preferred_cpu >= 0) put(name, " preferred_cpu=", selection.preferred_cpu);
    if (selection.nudge_declined) name += " nudge_declined";
  }
  write_mark_slice(request.caller_cpu, sched.now(), name);
  maybe_flush();
}

void FtraceWriter::binder_nudge(const sched::Scheduler& sched, int waker_tid, int tid, int from_cpu,
                                int to_cpu) {
  if (!visible(sched.now())) return;
  const int cpu = context_cpu(waker_tid, std::max(sched.task(waker_tid).cpu, 0));
  scratch_.clear();
  put(scratch_, "binder nudge: thread=", info(tid).pid, " wake_cpu=", from_cpu, " -> ", to_cpu);
  write_mark_slice(cpu, sched.now(), scratch_);
  maybe_flush();
}

}  // namespace bindersim::trace
