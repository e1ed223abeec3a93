#include "bindersim/binder/driver.hpp"

#include <algorithm>
#include <memory>
#include <type_traits>

#include "bindersim/common/error.hpp"
#include "bindersim/cost/cost_model.hpp"
#include "bindersim/topology/topology.hpp"
#include "bindersim/trace/tracer.hpp"

namespace bindersim::binder {

using sched::Policy;

Driver::Driver(engine::SimContext& context, sched::Scheduler& sched, cost::CostModel& cost,
               selectors::Selector& selector, KernelOptions options)
    : context_(context),
      sched_(sched),
      cost_(cost),
      selector_(selector),
      options_(options),
      locks_(context, sched, *this) {
  target_ = context_.engine.add_handler(*this);
  sched_.set_owner(*this);
  alloc_stats_.lock = std::string(lock_kind_name(options_.alloc_lock));
  alloc_stats_.pages_installed_locked =
      options_.alloc_lock == LockKind::kMutex && options_.install_pages_locked;
  if (options_.memory_pressure.scan_interval_ns > 0) start_shrinker();
}

bool Driver::is_waiting(Phase phase) { return phase == Phase::kIdle || phase == Phase::kWaitReply; }

Driver::Thread& Driver::th(int tid) { return threads_[static_cast<std::size_t>(tid)]; }
const Driver::Thread& Driver::th(int tid) const { return threads_[static_cast<std::size_t>(tid)]; }

int Driver::process_of(int tid) const { return th(tid).proc; }
int Driver::last_cpu(int tid) const { return th(tid).last_cpu; }
const std::vector<int>& Driver::loopers(int proc) const {
  return procs_[static_cast<std::size_t>(proc)].loopers;
}
std::vector<int> Driver::waiting_threads(int proc) const {
  const auto& waiting = procs_[static_cast<std::size_t>(proc)].waiting;
  return {waiting.rbegin(), waiting.rend()};
}

// --- processes and threads -------------------------------------------------------------------

int Driver::create_process(const ProcessConfig& config) {
  const int id = static_cast<int>(procs_.size());
  Process proc(config);
  proc.alloc_lock = locks_.add(options_.alloc_lock, alloc_stats_.alloc_lock);
  if (options_.alloc_lock == LockKind::kSpinlock) {
    proc.page_lock = locks_.add(LockKind::kMutex, alloc_stats_.page_lock);
  }
  if (proc.config.nodes.empty()) proc.config.nodes.push_back(NodeConfig{"service", true, 19});
  for (const auto& node : proc.config.nodes) proc.nodes.push_back(Node{node, false, {}});
  procs_.push_back(std::move(proc));
  if (config.start_thread_pool) new_looper(id, -1);
  return id;
}

int Driver::new_looper(int proc, int parent_tid) {
  Process& p = procs_[static_cast<std::size_t>(proc)];
  sched::TaskParams params;
  params.name = p.config.name + ":binder_" + std::to_string(p.loopers.size() + 1);
  params.process = proc;
  params.working_set_bytes = p.config.looper_working_set_bytes;
  params.affinity = p.config.cpuset;
  const int tid = sched_.create_task(params);
  if (static_cast<std::size_t>(tid) >= threads_.size())
    threads_.resize(static_cast<std::size_t>(tid) + 1);
  th(tid) = Thread{};  // the slot may have belonged to an exited thread
  Thread& t = th(tid);
  t.tid = tid;
  t.proc = proc;
  t.looper = true;
  p.loopers.push_back(tid);
  // BC_ENTER_LOOPER (main looper) or BC_REGISTER_LOOPER (spawned), then the first read.
  t.phase = Phase::kRegister;
  sched_.run(tid, context_.topology.costs().binder_receive_ref_ns);
  const int parent_cpu = parent_tid >= 0 ? sched_.task(parent_tid).cpu : -1;
  sched_.wake_new(tid, parent_cpu, parent_tid);
  return tid;
}

int Driver::create_thread(int proc, const sched::TaskParams& params) {
  BSIM_CHECK(proc >= -1 && proc < num_processes());
  sched::TaskParams with_proc = params;
  with_proc.process = proc;
  if (proc >= 0) {
    with_proc.affinity =
        restrict_to_cpuset(params.affinity, procs_[static_cast<std::size_t>(proc)].config.cpuset);
    BSIM_CHECK_MSG(with_proc.affinity != 0 || params.affinity == 0,
                   "a thread's affinity has no CPU in its process's cpuset");
  }
  const int tid = sched_.create_task(with_proc);
  if (static_cast<std::size_t>(tid) >= threads_.size())
    threads_.resize(static_cast<std::size_t>(tid) + 1);
  th(tid) = Thread{};  // the slot may have belonged to an exited thread
  th(tid).tid = tid;
  th(tid).proc = proc;
  return tid;
}

void Driver::start_thread(int tid, std::int64_t first_work_ref_ns, int parent_tid) {
  th(tid).phase = Phase::kUser;
  sched_.run(tid, first_work_ref_ns);
  const int parent_cpu = parent_tid >= 0 ? sched_.task(parent_tid).cpu : -1;
  sched_.wake_new(tid, parent_cpu, parent_tid);
}

// --- transactions pool ---------------------------------------------------------------------

int Driver::alloc_txn() {
  int id;
  if (!free_txns_.empty()) {
    id = free_txns_.back();
    free_txns_.pop_back();
  } else {
    id = static_cast<int>(txns_.size());
    txns_.emplace_back();
  }
  // Reset in place (no temporary to copy from): a transaction is taken per call and reply.
  static_assert(std::is_trivially_destructible_v<Transaction>);
  Transaction& x = *std::construct_at(&txns_[static_cast<std::size_t>(id)]);
  x.in_use = true;
  return id;
}

void Driver::free_txn(int id) {
  BSIM_CHECK(txns_[static_cast<std::size_t>(id)].in_use);
  txns_[static_cast<std::size_t>(id)].in_use = false;
  free_txns_.push_back(id);
}

// --- userspace actions ---------------------------------------------------------------------

void Driver::begin_kernel(int tid, Phase phase, std::int64_t work_ref_ns) {
  th(tid).phase = phase;
  sched_.run(tid, work_ref_ns);
}

void Driver::compute(int tid, std::int64_t work_ref_ns) {
  th(tid).user_work_mark = sched_.task(tid).times.work;
  begin_kernel(tid, Phase::kUser, work_ref_ns);
}

void Driver::call(int tid, int target_proc, int node, std::int64_t payload_bytes, bool oneway,
                  std::uint64_t cookie) {
  BSIM_CHECK(target_proc >= 0 && target_proc < num_processes());
  BSIM_CHECK(node >= 0 &&
             node < static_cast<int>(procs_[static_cast<std::size_t>(target_proc)].nodes.size()));
  Thread& t = th(tid);
  BSIM_CHECK_MSG(t.proc >= 0 && t.pending < 0, "a call from a thread outside binder");
  const int id = alloc_txn();
  Transaction& x = txns_[static_cast<std::size_t>(id)];
  x.oneway = oneway;
  x.from_tid = tid;
  x.to_proc = target_proc;
  x.node = node;
  x.payload_bytes = payload_bytes;
  x.started = sched_.now();
  x.cookie = cookie;
  x.client_start = sched_.task(tid).times;
  x.client_locks_start = locks_.wait_totals(tid);
  t.pending = id;
  const auto& costs = context_.topology.costs();
  if (auto* tracer = context_.tracer) {
    if (t.free_pending) tracer->binder_command(sched_, tid, trace::BinderCommand::kFreeBuffer);
    tracer->binder_command(sched_, tid, trace::BinderCommand::kTransaction);
  }
  begin_path(tid, Phase::kSend);
  add_pending_free(tid);
  // The send path allocates the buffer in the target process and ends with the wakeup of the
  // target (try_to_wake_up in the sender's context).
  add_work(tid, costs.binder_send_ref_ns - costs.binder_alloc_locked_ref_ns);
  add_allocation(tid, target_proc, payload_bytes, oneway);
  add_work(tid, costs.wakeup_ref_ns);
  run_path(tid);
}

void Driver::reply(int tid, std::int64_t payload_bytes) {
  Thread& t = th(tid);
  // The call being answered is the top of the transaction stack (nested calls made while
  // handling it have been answered and popped).
  BSIM_CHECK(t.pending < 0 && !t.stack.empty());
  Transaction& answered = txns_[static_cast<std::size_t>(t.stack.back())];
  BSIM_CHECK(!answered.oneway && answered.from_tid != tid);
  answered.payload_bytes = payload_bytes;
  const bool free_first = procs_[static_cast<std::size_t>(t.proc)].config.free_before_reply;
  if (auto* tracer = context_.tracer) {
    if (t.free_pending) tracer->binder_command(sched_, tid, trace::BinderCommand::kFreeBuffer);
    if (free_first) tracer->binder_command(sched_, tid, trace::BinderCommand::kFreeBuffer);
    tracer->binder_command(sched_, tid, trace::BinderCommand::kReply);
  }
  const auto& costs = context_.topology.costs();
  // The reply's buffer is allocated in the caller's process.
  begin_path(tid, Phase::kReply);
  add_pending_free(tid);  // the reply of a nested call made while handling this one
  if (free_first) add_free(tid, t.proc, answered.buffer);  // the request's, before BC_REPLY
  // Upstream restores the server's nice as binder_transaction() starts the reply
  // (binder_set_nice(in_reply_to->saved_priority)), after the free written before BC_REPLY;
  // Android after waking the caller (do_reply).
  if (options_.inheritance == PriorityInheritance::kUpstream) {
    t.program.push(Step{Step::Kind::kRestorePriority, -1, -1, t.stack.back(), false});
  }
  add_work(tid, costs.binder_send_ref_ns - costs.binder_alloc_locked_ref_ns);
  add_allocation(tid, th(answered.from_tid).proc, payload_bytes, false);
  add_work(tid, costs.wakeup_ref_ns);
  run_path(tid);
}

void Driver::finish_oneway(int tid) {
  Thread& t = th(tid);
  BSIM_CHECK(t.pending < 0 && !t.stack.empty() &&
             txns_[static_cast<std::size_t>(t.stack.back())].oneway);
  if (auto* tracer = context_.tracer) {
    if (t.free_pending) tracer->binder_command(sched_, tid, trace::BinderCommand::kFreeBuffer);
    tracer->binder_command(sched_, tid, trace::BinderCommand::kFreeBuffer);
  }
  const int id = t.stack.back();
  t.stack.pop_back();
  const int buffer = txns_[static_cast<std::size_t>(id)].buffer;
  free_buffer(tid, id);
  free_txn(id);
  begin_path(tid, Phase::kReturnToRead);
  add_pending_free(tid);  // the reply of a nested call made while handling this one
  add_free(tid, t.proc, buffer);
  run_path(tid);
}

void Driver::sleep(int tid, SimTime duration, std::int64_t then_work_ref_ns) {
  Thread& t = th(tid);
  t.phase = Phase::kSleep;
  t.pending_work_ref_ns = then_work_ref_ns;
  sched_.block_until(tid, sched_.now() + duration);
  context_.engine.schedule(sched_.now() + duration, target_, kSleepDone,
                           static_cast<std::uint32_t>(tid));
}

void Driver::wait_user(int tid) {
  th(tid).phase = Phase::kUserBlocked;
  sched_.block(tid);
}

void Driver::wake_user(int tid, int waker_tid, std::int64_t then_work_ref_ns) {
  Thread& t = th(tid);
  BSIM_CHECK(t.phase == Phase::kUserBlocked);
  compute(tid, then_work_ref_ns);  // userspace goes on: its work counts from here
  sched::WakeContext ctx;
  ctx.waker_tid = waker_tid;
  ctx.waker_cpu = waker_tid >= 0 ? sched_.task(waker_tid).cpu : -1;
  sched_.wake(tid, ctx);
}

void Driver::exit_thread(int tid) {
  Thread& t = th(tid);
  // Only threads that are no loopers exit, outside any transaction: each freed its last reply
  // right after the call (deliver_to_user), so nothing is left for IPCThreadState's destructor.
  BSIM_CHECK_MSG(!t.free_pending, "an exiting thread holds a reply buffer");
  t.phase = Phase::kNone;
  sched_.exit(tid);
}

// --- the kernel paths ----------------------------------------------------------------------

void Driver::do_transaction(int tid) {
  Thread& t = th(tid);
  const int id = t.pending;
  t.pending = -1;
  Transaction& x = txns_[static_cast<std::size_t>(id)];
  const sched::Task& caller = sched_.task(tid);
  x.caller_cpu = caller.cpu;
  x.payload_cpu = caller.cpu;
  x.caller_policy = caller.policy;
  x.caller_nice = caller.nice;
  x.caller_rt_priority = caller.rt_priority;
  x.buffer = t.new_buffer;
  t.new_buffer = -1;
  if (t.alloc_failed) {
    // BR_FAILED_REPLY: no buffer space in the target; nothing is delivered. The tracepoint
    // comes before the allocation: no thread is selected yet, but a nested call names the
    // thread of its chain.
    t.alloc_failed = false;
    ++counters_.failed_sends;
    if (auto* tracer = context_.tracer) {
      const int dest = x.oneway ? -1 : chain_thread_of(call_parent(t), x.to_proc);
      tracer->binder_transaction(sched_, id, x, dest);
      tracer->binder_return(sched_, tid, trace::BinderReturn::kFailedReply);
    }
    const bool oneway = x.oneway;
    CallRecord record = call_record(x);
    record.failed = true;
    free_txn(id);
    t.phase = Phase::kUser;
    maybe_spawn(tid);  // the read returned (BR_FAILED_REPLY)
    if (oneway) {
      userspace_->on_oneway_sent(tid, true);
    } else {
      userspace_->on_reply(tid, record);
    }
    return;
  }
  ++counters_.transactions;
  if (x.oneway) {
    ++counters_.oneway;
    Node& node =
        procs_[static_cast<std::size_t>(x.to_proc)].nodes[static_cast<std::size_t>(x.node)];
    if (node.async_in_flight) {
      ++counters_.oneway_parked;
      node.async_todo.push_back(id);  // parked: no wakeup
      if (auto* tracer = context_.tracer) tracer->binder_transaction(sched_, id, x, -1);
    } else {
      node.async_in_flight = true;
      deliver(id, /*sync_wakeup=*/false, tid);
    }
    if (auto* tracer = context_.tracer) {
      tracer->binder_return(sched_, tid, trace::BinderReturn::kTransactionComplete);
    }
    maybe_spawn(tid);
    t.phase = Phase::kUser;
    userspace_->on_oneway_sent(tid, false);
    return;
  }
  // Nested call: a thread of the target process earlier in this call chain gets it directly.
  x.from_parent = call_parent(t);
  x.to_tid = chain_thread_of(x.from_parent, x.to_proc);
  if (x.to_tid >= 0) ++counters_.nested;
  // A call chain this deep means handlers that call each other without end; a device would
  // run out of binder buffer space. Stop with one clear line instead of growing forever.
  if (t.stack.size() >= kMaxCallDepth) {
    throw ConfigError("the scenario's handlers call each other without end: a call chain of " +
                      procs_[static_cast<std::size_t>(t.proc)].config.name + " reached " +
                      std::to_string(kMaxCallDepth) + " nested transactions");
  }
  t.stack.push_back(id);
  t.outgoing = id;
  deliver(id, /*sync_wakeup=*/true, tid);
  t.phase = Phase::kWaitReply;
  sched_.block(tid);
}

int Driver::call_parent(const Thread& t) const {
  if (t.stack.empty() || txns_[static_cast<std::size_t>(t.stack.back())].oneway) return -1;
  return t.stack.back();
}

int Driver::chain_thread_of(int parent, int proc) const {
  for (int walk = parent; walk >= 0; walk = txns_[static_cast<std::size_t>(walk)].from_parent) {
    const Transaction& w = txns_[static_cast<std::size_t>(walk)];
    if (w.from_tid >= 0 && th(w.from_tid).proc == proc) return w.from_tid;
  }
  return -1;
}

int Driver::select_thread(int proc, int caller_cpu, bool sync, int* preferred_cpu) {
  Process& p = procs_[static_cast<std::size_t>(proc)];
  scratch_.clear();
  for (auto it = p.waiting.rbegin(); it != p.waiting.rend(); ++it) {
    scratch_.push_back({*it, th(*it).last_cpu});
  }
  selectors::SelectionRequest request;
  request.waiting = scratch_;
  request.caller_cpu = caller_cpu;
  request.sync = sync;
  const selectors::Selection selection = selector_.select(request, *this);
  if (auto* tracer = context_.tracer) {
    tracer->binder_select(sched_, selector_.name(), request, selection);
  }
  *preferred_cpu = -1;
  if (!selection.index) return -1;
  const int tid = scratch_[*selection.index].tid;
  p.waiting.erase(p.waiting.end() - 1 - static_cast<std::ptrdiff_t>(*selection.index));
  *preferred_cpu = selection.preferred_cpu;
  return tid;
}

void Driver::deliver(int txn_id, bool sync_wakeup, int waker_tid) {
  Transaction& x = txns_[static_cast<std::size_t>(txn_id)];
  int target = x.to_tid;
  if (target < 0) {
    int preferred = -1;
    target = select_thread(x.to_proc, x.caller_cpu, sync_wakeup, &preferred);
    if (target >= 0) th(target).preferred_cpu = preferred;
  }
  if (auto* tracer = context_.tracer) tracer->binder_transaction(sched_, txn_id, x, target);
  if (target < 0) {
    ++counters_.proc_todo_queued;
    procs_[static_cast<std::size_t>(x.to_proc)].todo.push_back(txn_id);  // no looper is woken
    return;
  }
  th(target).todo.push_back(txn_id);
  if (!x.is_reply) mark_server(target, x);
  if (options_.inheritance == PriorityInheritance::kAndroid) {
    apply_android_priority(waker_tid, target, x);
  }
  // A thread that is not asleep finds the work at its next read.
  if (is_waiting(th(target).phase)) wake_thread(target, sync_wakeup, waker_tid);
}

void Driver::wakeup_proc(int proc, int waker_tid) {
  // No looper waits: nothing to select (binder_select_thread_ilocked() finds none).
  if (procs_[static_cast<std::size_t>(proc)].waiting.empty()) return;
  int preferred = -1;
  const int tid = select_thread(proc, sched_.task(waker_tid).cpu, /*sync=*/false, &preferred);
  if (tid < 0) return;
  th(tid).preferred_cpu = preferred;
  wake_thread(tid, /*sync=*/false, waker_tid);
}

void Driver::wake_thread(int tid, bool sync, int waker_tid) {
  Thread& t = th(tid);
  BSIM_CHECK(t.phase == Phase::kIdle || t.phase == Phase::kWaitReply);
  // The CTABS nudge is applied only on a sync wakeup, and cleared on every wakeup.
  if (sync && t.preferred_cpu >= 0) {
    if (auto* tracer = context_.tracer) {
      tracer->binder_nudge(sched_, waker_tid, tid, sched_.task(tid).wake_cpu, t.preferred_cpu);
    }
    sched_.task_for_update(tid).wake_cpu = t.preferred_cpu;
    ++counters_.nudges_applied;
  }
  t.preferred_cpu = -1;
  t.phase = Phase::kReceive;
  sched_.run(tid, context_.topology.costs().binder_receive_ref_ns);
  sched::WakeContext ctx;
  ctx.waker_tid = waker_tid;
  ctx.waker_cpu = sched_.task(waker_tid).cpu;
  ctx.sync = sync;
  sched_.wake(tid, ctx);
}

SimTime Driver::on_resume(int tid, int cpu) {
  Thread& t = th(tid);
  if (t.proc < 0 || t.phase != Phase::kReceive) return 0;
  // binder_wait_for_work() returned: CTABS records the CPU here.
  t.last_cpu = cpu;
  t.resume_cpu = cpu;
  if (t.todo.empty()) return 0;
  // The transaction's data is copied in as the read returns: a stall before the receive path.
  Transaction& x = txns_[static_cast<std::size_t>(t.todo.front())];
  x.transfer_charged = true;
  return cost_.transfer(tid, x.payload_cpu, cpu, x.payload_bytes);
}

// binder_thread_read() entry: take work at once if there is some, else sleep.
void Driver::read(int tid) {
  Thread& t = th(tid);
  Process& p = procs_[static_cast<std::size_t>(t.proc)];
  const bool proc_work = t.outgoing < 0 && t.stack.empty() && t.looper;
  // binder_thread_read(): a thread free for process work (wait_for_proc_work) takes the
  // process's default priority back first, whether work is queued or not.
  if (proc_work && t.todo.empty()) restore_default_priority(tid);
  if (!t.todo.empty() || (proc_work && !p.todo.empty())) {
    const int cpu = sched_.task(tid).cpu;
    t.last_cpu = cpu;
    t.resume_cpu = cpu;
    finish_read(tid);
    return;
  }
  if (t.outgoing >= 0) {
    t.phase = Phase::kWaitReply;
  } else {
    BSIM_CHECK_MSG(t.looper, "a non-looper thread entered a read with nothing to wait for");
    p.waiting.push_back(tid);  // head insertion
    t.phase = Phase::kIdle;
  }
  sched_.block(tid);
}

// The thread returned from waiting (or did not need to wait): pick the work.
void Driver::finish_read(int tid) {
  Thread& t = th(tid);
  Process& p = procs_[static_cast<std::size_t>(t.proc)];
  int id = -1;
  if (!t.todo.empty()) {
    id = t.todo.front();
    t.todo.pop_front();
  } else if (t.looper && t.outgoing < 0 && t.stack.empty() && !p.todo.empty()) {
    id = p.todo.front();
    p.todo.pop_front();
  }
  if (id < 0) {
    read(tid);  // woken for proc work that another looper took: back to waiting
    return;
  }
  take_work(tid, id);
  // binder_ioctl_write_read(): after every read that returns work, any work left on the
  // process's list wakes a waiting looper (a thread's own work as much as the process's).
  if (!p.todo.empty()) wakeup_proc(t.proc, tid);
}

void Driver::take_work(int tid, int txn_id) {
  Thread& t = th(tid);
  Transaction& x = txns_[static_cast<std::size_t>(txn_id)];
  t.pending = txn_id;
  if (auto* tracer = context_.tracer) tracer->binder_transaction_received(sched_, tid, txn_id, x);
  maybe_spawn(tid);
  if (context_.binder_log->should_log(spdlog::level::debug)) {
    SPDLOG_LOGGER_DEBUG(context_.binder_log,
                        "[{} ns] thread {} takes {} {} from {} (caller cpu {}) on cpu {}",
                        sched_.now(), tid, x.is_reply ? "reply" : "transaction", txn_id, x.from_tid,
                        x.caller_cpu, t.resume_cpu);
  }
  if (!x.is_reply) {
    mark_server(tid, x);  // taken from proc->todo: no wakeup was waited for
    x.server_cpu = t.resume_cpu;
    if (options_.inheritance == PriorityInheritance::kAndroid) {
      apply_android_priority(tid, tid, x);  // no-op unless it came through proc->todo
    } else {
      apply_upstream_priority(tid, x);
    }
    // Handled until reply() or finish_oneway(); nested calls and their replies go on top.
    t.stack.push_back(txn_id);
  }
  if (x.transfer_charged) {
    deliver_to_user(tid);
    return;
  }
  x.transfer_charged = true;
  t.phase = Phase::kDeliver;
  sched_.run(tid, 0);
  sched_.add_overhead(tid,
                      cost_.transfer(tid, x.payload_cpu, sched_.task(tid).cpu, x.payload_bytes));
}

void Driver::mark_server(int tid, Transaction& x) {
  if (x.server_marked) return;
  x.server_marked = true;
  x.server_start = sched_.task(tid).times;
  x.server_locks_start = locks_.wait_totals(tid);
  x.server_user_start = th(tid).user_work;
}

CallRecord Driver::call_record(const Transaction& call) const {
  CallRecord record;
  record.started = call.started;
  record.finished = sched_.now();
  record.caller_cpu = call.caller_cpu;
  record.server_cpu = call.server_cpu;
  record.caller_policy = call.caller_policy;
  record.cookie = call.cookie;
  return record;
}

void Driver::deliver_to_user(int tid) {
  Thread& t = th(tid);
  const int id = t.pending;
  Transaction& x = txns_[static_cast<std::size_t>(id)];
  t.phase = Phase::kUser;
  if (!x.is_reply) {
    t.pending = -1;  // delivered: it is on the stack until reply() or finish_oneway()
    userspace_->on_transaction(tid, id);
    return;
  }
  // BR_REPLY: the call is complete. x.from_parent holds the call it answers.
  const int call_id = x.from_parent;
  const Transaction& call = txns_[static_cast<std::size_t>(call_id)];
  CallRecord record = call_record(call);
  record.failed = x.failed;
  {
    // The caller's share (send and receive paths, switches, stalls, lock waits, its wait to run
    // after the reply's wakeup) plus the server's; the rest of the round trip is "other". A
    // spin for a lock is the thread's work to the scheduler: it is a lock wait here.
    const sched::TimeAccount& now_times = sched_.task(tid).times;
    const KernelLocks::WaitTotals now_locks = locks_.wait_totals(tid);
    stats::Breakdown b = call.server_part;
    b.kernel_ns += (now_times.work - call.client_start.work) +
                   (now_times.switch_stall - call.client_start.switch_stall) -
                   (now_locks.spun - call.client_locks_start.spun);
    b.lock_wait_ns += now_locks.waited - call.client_locks_start.waited;
    b.cache_refill_ns += now_times.cache_stall - call.client_start.cache_stall;
    b.wakeup_ipi_ns += now_times.wait_ipi - call.client_start.wait_ipi;
    b.idle_exit_ns += now_times.wait_idle_exit - call.client_start.wait_idle_exit;
    b.runqueue_wait_ns += now_times.wait_rq - call.client_start.wait_rq;
    b.other_ns = (record.finished - record.started) - b.measured();
    record.breakdown = b;
  }
  BSIM_CHECK(!t.stack.empty() && t.stack.back() == call_id);
  t.stack.pop_back();
  // An enclosing call of this thread (below the transaction it is handling) still waits.
  t.outgoing = -1;
  for (auto it = t.stack.rbegin(); it != t.stack.rend(); ++it) {
    if (txns_[static_cast<std::size_t>(*it)].from_tid == tid) {
      t.outgoing = *it;
      break;
    }
  }
  t.pending = -1;
  t.free_buffer = x.buffer;
  t.free_pending = x.buffer >= 0;
  free_txn(call_id);
  free_txn(id);
  if (t.free_pending && !t.looper && t.stack.empty()) {
    // IPCThreadState::flushIfNeeded(): a thread that is neither a looper nor serving a
    // transaction sends the BC_FREE_BUFFER of its reply at once, in a write of its own, when
    // the reply Parcel is destroyed: after the call returned (the caller's time stamp is taken).
    // Otherwise it waits in the output buffer for the thread's next write.
    if (auto* tracer = context_.tracer) {
      tracer->binder_command(sched_, tid, trace::BinderCommand::kFreeBuffer);
    }
    t.flushed_call = record;
    begin_path(tid, Phase::kFlushFree);
    add_pending_free(tid);
    run_path(tid);
    return;
  }
  userspace_->on_reply(tid, record);
}

void Driver::do_reply(int tid) {
  Thread& t = th(tid);
  BSIM_CHECK(!t.stack.empty());
  const int call_id = t.stack.back();
  t.stack.pop_back();
  {
    // The server's share of the call: its wait to run, its kernel paths and switches, its
    // cache stalls, and its handler work (service).
    Transaction& call = txns_[static_cast<std::size_t>(call_id)];
    const sched::TimeAccount& now_times = sched_.task(tid).times;
    const SimTime service = t.user_work - call.server_user_start;
    stats::Breakdown& part = call.server_part;
    part.service_ns = service;
    const KernelLocks::WaitTotals now_locks = locks_.wait_totals(tid);
    part.kernel_ns = (now_times.work - call.server_start.work - service) +
                     (now_times.switch_stall - call.server_start.switch_stall) -
                     (now_locks.spun - call.server_locks_start.spun);
    part.lock_wait_ns = now_locks.waited - call.server_locks_start.waited;
    part.cache_refill_ns = now_times.cache_stall - call.server_start.cache_stall;
    part.wakeup_ipi_ns = now_times.wait_ipi - call.server_start.wait_ipi;
    part.idle_exit_ns = now_times.wait_idle_exit - call.server_start.wait_idle_exit;
    part.runqueue_wait_ns = now_times.wait_rq - call.server_start.wait_rq;
  }
  const int client = txns_[static_cast<std::size_t>(call_id)].from_tid;
  const std::int64_t payload = txns_[static_cast<std::size_t>(call_id)].payload_bytes;
  const int request_buffer = txns_[static_cast<std::size_t>(call_id)].buffer;
  // A reply that found no space in the caller's process ends the caller's wait all the same,
  // without a buffer: binder_send_failed_reply() returns BR_FAILED_REPLY to it, so the call
  // failed (counted there, with no latency).
  const bool failed = t.alloc_failed;
  if (failed) {
    t.alloc_failed = false;
    ++counters_.failed_sends;
  }
  const int reply_id = alloc_txn();  // may grow the pool: take no references before this
  Transaction& r = txns_[static_cast<std::size_t>(reply_id)];
  r.is_reply = true;
  r.failed = failed;
  r.from_tid = tid;
  r.to_tid = client;
  r.payload_bytes = failed ? 0 : payload;  // nothing is copied for a failed reply
  r.payload_cpu = sched_.task(tid).cpu;
  r.from_parent = call_id;  // the call this reply answers
  r.buffer = th(tid).new_buffer;
  th(tid).new_buffer = -1;
  ++counters_.replies;
  if (auto* tracer = context_.tracer) tracer->binder_transaction(sched_, reply_id, r, client);
  th(client).todo.push_back(reply_id);
  // The server restores its own priority after waking the client; a failed reply restores it
  // first (binder_transaction()'s error path, then binder_send_failed_reply()). Upstream did
  // as the reply started (reply()).
  const bool android = options_.inheritance == PriorityInheritance::kAndroid;
  if (android && failed) restore_priority(tid, txns_[static_cast<std::size_t>(call_id)]);
  // A reply wakes its caller with WF_SYNC; binder_send_failed_reply() uses a plain
  // wake_up_interruptible().
  if (is_waiting(th(client).phase)) wake_thread(client, /*sync=*/!failed, tid);
  if (android && !failed) restore_priority(tid, txns_[static_cast<std::size_t>(call_id)]);
  // Then it frees the request's buffer (BC_FREE_BUFFER) on its way back to the read.
  if (auto* tracer = context_.tracer) {
    tracer->binder_return(sched_, tid, trace::BinderReturn::kTransactionComplete);
  }
  maybe_spawn(tid);
  begin_path(tid, Phase::kReturnToRead);
  // The request's buffer, unless libbinder freed it before the reply (reply()).
  if (!procs_[static_cast<std::size_t>(th(tid).proc)].config.free_before_reply) {
    if (auto* tracer = context_.tracer) {
      tracer->binder_command(sched_, tid, trace::BinderCommand::kFreeBuffer);
    }
    add_free(tid, th(tid).proc, request_buffer);
  }
  run_path(tid);
}

// --- priorities ----------------------------------------------------------------------------

void Driver::apply_android_priority(int actor_tid, int tid, Transaction& x) {
  if (x.priority_set) return;
  x.priority_set = true;
  const sched::Task& task = sched_.task(tid);
  x.saved_policy = task.policy;
  x.saved_nice = task.nice;
  x.saved_rt_priority = task.rt_priority;
  Policy policy = x.caller_policy;
  int nice = x.caller_nice;
  int rt = x.caller_rt_priority;
  if (x.oneway) {  // oneway work runs at the process's default priority
    policy = Policy::kNormal;
    nice = 0;
    rt = 0;
  }
  const NodeConfig& node =
      procs_[static_cast<std::size_t>(x.to_proc)].nodes[static_cast<std::size_t>(x.node)].config;
  // binder_transaction_priority(): the node's minimum (a SCHED_NORMAL nice) wins only over the
  // transaction's own priority, t->priority. An RT caller's is above any nice, so the nice 0 a
  // node without inherit_rt demotes it to stays nice 0, whatever the node's minimum.
  const bool normal_caller = policy == Policy::kNormal;
  if (policy == Policy::kFifo && !node.inherit_rt) {
    policy = Policy::kNormal;
    nice = 0;
    rt = 0;
  }
  if (normal_caller && nice > node.min_nice) nice = node.min_nice;
  set_priority(actor_tid, tid, policy, nice, rt);
}

void Driver::set_priority(int actor_tid, int tid, Policy policy, int nice, int rt_priority) {
  const int old_prio = sched_.task(tid).prio();
  sched_.set_attributes(tid, policy, nice, rt_priority);
  const int new_prio = sched_.task(tid).prio();
  if (new_prio == old_prio || options_.inheritance != PriorityInheritance::kAndroid) return;
  if (auto* tracer = context_.tracer) {
    tracer->binder_set_priority(sched_, actor_tid, tid, old_prio, new_prio);
  }
}

void Driver::apply_upstream_priority(int tid, Transaction& x) {
  if (x.priority_set) return;
  x.priority_set = true;
  const sched::Task& task = sched_.task(tid);
  x.saved_policy = task.policy;
  x.saved_nice = task.nice;
  x.saved_rt_priority = task.rt_priority;
  const int min_nice = procs_[static_cast<std::size_t>(x.to_proc)]
                           .nodes[static_cast<std::size_t>(x.node)]
                           .config.min_nice;
  if (!x.oneway && x.caller_nice < min_nice) {
    set_priority(tid, tid, task.policy, x.caller_nice, task.rt_priority);
  } else if (!x.oneway || task.nice > min_nice) {
    set_priority(tid, tid, task.policy, min_nice, task.rt_priority);
  }
}

void Driver::restore_priority(int tid, const Transaction& x) {
  if (!x.priority_set) return;
  set_priority(tid, tid, x.saved_policy, x.saved_nice, x.saved_rt_priority);
}

// The process's default priority (the model's processes open binder at nice 0): upstream
// binder_set_nice(proc->default_priority), nice only; Android binder_restore_priority().
void Driver::restore_default_priority(int tid) {
  if (options_.inheritance == PriorityInheritance::kAndroid) {
    set_priority(tid, tid, Policy::kNormal, 0, 0);
  } else {
    const sched::Task& task = sched_.task(tid);
    set_priority(tid, tid, task.policy, 0, task.rt_priority);
  }
}

// --- buffers and spawning ------------------------------------------------------------------

void Driver::free_buffer(int tid, int txn_id) {
  const Transaction& x = txns_[static_cast<std::size_t>(txn_id)];
  if (!x.oneway) return;
  Process& p = procs_[static_cast<std::size_t>(x.to_proc)];
  Node& node = p.nodes[static_cast<std::size_t>(x.node)];
  if (node.async_todo.empty()) {
    node.async_in_flight = false;
    return;
  }
  // The next parked oneway moves to proc->todo and one idle looper is woken (non-sync).
  p.todo.push_back(node.async_todo.front());
  node.async_todo.pop_front();
  Transaction& next = txns_[static_cast<std::size_t>(p.todo.back())];
  next.caller_cpu = sched_.task(tid).cpu;
  wakeup_proc(x.to_proc, tid);
}

void Driver::maybe_spawn(int spawner_tid) {
  const Thread& spawner = th(spawner_tid);
  if (!spawner.looper) return;  // (thread->looper & (REGISTERED | ENTERED))
  Process& p = procs_[static_cast<std::size_t>(spawner.proc)];
  const int proc = spawner.proc;
  if (p.requested_threads != 0 || !p.waiting.empty() || p.spawned >= p.config.max_threads) return;
  p.requested_threads = 1;
  ++p.spawned;
  ++counters_.spawn_requests;
  if (auto* tracer = context_.tracer) {
    tracer->binder_return(sched_, spawner_tid, trace::BinderReturn::kSpawnLooper);
  }
  // Userspace creates the thread (spawnPooledThread); it registers after thread_spawn_ns.
  context_.engine.schedule(sched_.now() + context_.topology.costs().thread_spawn_ns, target_,
                           kSpawnLooper, static_cast<std::uint32_t>(proc),
                           static_cast<std::uint64_t>(spawner_tid));
}

// --- scheduler callbacks and events --------------------------------------------------------

void Driver::on_work_done(int tid) {
  if (locks_.waiting(tid)) {
    locks_.on_work_done(tid);
    return;
  }
  if (!th(tid).program.empty()) {
    run_path(tid);
    return;
  }
  finish_phase(tid);
}

void Driver::on_switch(int tid, bool running) { locks_.on_switch(tid, running); }

void Driver::settle(int tid) {
  if (locks_.has_claim(tid)) locks_.settle(tid);
}

void Driver::on_claim_dropped(int tid, int /*lock*/) {
  th(tid).program.rewind_to(th(tid).claim_step);
}

// The claimant holds the lock; its path goes on at the first release (after claim_step's lock
// and the work under it).
void Driver::on_claim_cut(int tid, int /*lock*/) {
  th(tid).program.rewind_to(th(tid).claim_step + 2);
}

void Driver::on_lock_granted(int tid, int /*lock*/) { run_path(tid); }

void Driver::finish_phase(int tid) {
  Thread& t = th(tid);
  switch (t.phase) {
    case Phase::kUser:
      t.user_work += sched_.task(tid).times.work - t.user_work_mark;
      userspace_->on_user_work_done(tid);
      return;
    case Phase::kSend:
      do_transaction(tid);
      return;
    case Phase::kReply:
      do_reply(tid);
      return;
    case Phase::kReturnToRead:
      read(tid);
      return;
    case Phase::kReceive:
      finish_read(tid);
      return;
    case Phase::kDeliver:
      deliver_to_user(tid);
      return;
    case Phase::kRegister:
      register_looper(tid);
      return;
    case Phase::kShrinkStart:
      start_shrink_scan(tid);
      return;
    case Phase::kShrink:
      shrink_next(tid);
      return;
    case Phase::kFlushFree:
      return_flushed_call(tid);
      return;
    default:
      BSIM_CHECK_MSG(false, "work finished in a phase without work");
  }
}

void Driver::register_looper(int tid) {
  const Thread& t = th(tid);
  if (auto* tracer = context_.tracer) {
    const bool is_main =
        t.proc >= 0 && tid == procs_[static_cast<std::size_t>(t.proc)].loopers.front();
    tracer->binder_command(
        sched_, tid,
        is_main ? trace::BinderCommand::kEnterLooper : trace::BinderCommand::kRegisterLooper);
  }
  if (t.proc >= 0 && t.tid != procs_[static_cast<std::size_t>(t.proc)].loopers.front()) {
    procs_[static_cast<std::size_t>(t.proc)].requested_threads = 0;
  }
  read(tid);
}

void Driver::return_flushed_call(int tid) {
  Thread& t = th(tid);
  t.phase = Phase::kUser;
  const CallRecord record = t.flushed_call;  // userspace may create threads: `t` moves
  userspace_->on_reply(tid, record);
}

void Driver::on_event(const engine::Event& event) {
  switch (event.kind) {
    case kSpawnLooper:
      new_looper(static_cast<int>(event.id), static_cast<int>(event.arg));
      return;
    case kSleepDone: {
      const int tid = static_cast<int>(event.id);
      Thread& t = th(tid);
      BSIM_CHECK(t.phase == Phase::kSleep);
      compute(tid, t.pending_work_ref_ns);  // userspace goes on: its work counts from here
      sched_.wake(tid, sched::WakeContext{});
      return;
    }
    case kShrinkTimer: {
      const int tid = static_cast<int>(event.id);
      th(tid).phase = Phase::kShrinkStart;
      sched_.run(tid, 0);
      sched_.wake(tid, sched::WakeContext{});
      return;
    }
    default:
      BSIM_CHECK_MSG(false, "unknown driver event");
  }
}

// --- kernel paths with allocator locks --------------------------------------------------------

void Driver::begin_path(int tid, Phase phase) {
  Thread& t = th(tid);
  BSIM_CHECK(t.program.empty());
  t.phase = phase;
}

void Driver::add_work(int tid, std::int64_t ref_ns) {
  if (ref_ns > 0) th(tid).program.push(Step{Step::Kind::kWork, -1, -1, ref_ns, false});
}

// binder_alloc_new_buf(): the allocator lock, the best-fit search, then (for a buffer on pages
// not yet resident) the page installation, inside the lock or after it (see allocate()).
void Driver::add_allocation(int tid, int proc, std::int64_t bytes, bool async) {
  const int lock = procs_[static_cast<std::size_t>(proc)].alloc_lock;
  Step* steps = th(tid).program.append(4);
  steps[0] = Step{Step::Kind::kLock, proc, lock, 0, false};
  steps[1] =
      Step{Step::Kind::kWork, -1, -1, context_.topology.costs().binder_alloc_locked_ref_ns, false};
  steps[2] = Step{Step::Kind::kAllocate, proc, lock, bytes, async};
  steps[3] = Step{Step::Kind::kUnlock, proc, lock, 0, false};
}

// BC_FREE_BUFFER: the path up to the lock; binder_alloc_prepare_to_free() looks the buffer up
// under the allocator lock; binder_free_buf() takes the lock again to free it
// (binder_alloc_free_buf()).
void Driver::add_free(int tid, int proc, int buffer) {
  const auto& costs = context_.topology.costs();
  add_work(tid, costs.binder_free_ref_ns - costs.binder_free_lookup_locked_ref_ns -
                    costs.binder_free_locked_ref_ns);
  if (buffer < 0) return;  // nothing was allocated (a failed allocation)
  const int lock = procs_[static_cast<std::size_t>(proc)].alloc_lock;
  Step* steps = th(tid).program.append(7);
  steps[0] = Step{Step::Kind::kLock, proc, lock, 0, false};
  steps[1] = Step{Step::Kind::kWork, -1, -1, costs.binder_free_lookup_locked_ref_ns, false};
  steps[2] = Step{Step::Kind::kUnlock, proc, lock, 0, false};
  steps[3] = Step{Step::Kind::kLock, proc, lock, 0, false};
  steps[4] = Step{Step::Kind::kWork, -1, -1, costs.binder_free_locked_ref_ns, false};
  steps[5] = Step{Step::Kind::kFree, proc, lock, buffer, false};
  steps[6] = Step{Step::Kind::kUnlock, proc, lock, 0, false};
}

void Driver::add_pending_free(int tid) {
  Thread& t = th(tid);
  if (!t.free_pending) return;
  add_free(tid, t.proc, t.free_buffer);
  t.free_pending = false;
  t.free_buffer = -1;
}

// Runs the path's remaining steps until one needs time (work, a lock wait), then, at
// the end, the phase's action.
void Driver::run_path(int tid) {
  settle(tid);                         // a segment that reached a claimed lock is done
  Program& program = th(tid).program;  // threads_ does not grow while a path runs
  while (!program.done()) {
    // Steps stay in place while the path runs (allocate() inserts only after this one).
    const Step& step = program.take();
    switch (step.kind) {
      case Step::Kind::kWork:
        if (step.value == 0) break;
        run_work(tid, step.value);
        return;
      case Step::Kind::kLock:
        if (!locks_.acquire(tid, step.lock)) return;  // on_lock_granted() goes on
        break;
      case Step::Kind::kUnlock:
        if (locks_.release(tid, step.lock)) {
          sched_.run(tid, context_.topology.costs().wakeup_ref_ns);  // wake_up_q()
          return;
        }
        break;
      case Step::Kind::kAllocate:
        allocate(tid, step);
        break;
      case Step::Kind::kInstall: {
        Process& p = procs_[static_cast<std::size_t>(step.proc)];
        alloc_stats_.pages_installed +=
            static_cast<std::uint64_t>(p.alloc.install_pages(static_cast<int>(step.value)));
        break;
      }
      case Step::Kind::kFree:
        procs_[static_cast<std::size_t>(step.proc)].alloc.free(static_cast<int>(step.value),
                                                               ++lru_clock_);
        break;
      case Step::Kind::kRestorePriority:
        restore_priority(tid, txns_[static_cast<std::size_t>(step.value)]);
        break;
      case Step::Kind::kReclaim:
        procs_[static_cast<std::size_t>(step.proc)].alloc.reclaim_page(
            static_cast<int>(step.value));
        ++alloc_stats_.pages_reclaimed;
        break;
    }
  }
  program.clear();
  finish_phase(tid);
}

// Runs a work step. When the path goes on by taking a free lock and working under it, one
// segment runs both, with the lock claimed (KernelLocks::claim): one segment end fewer. When
// it then releases the lock and at once takes it again to work under it once more (the free
// path's two holds), the claim runs through both holds: two segment ends fewer.
inline void Driver::run_work(int tid, std::int64_t work_ref_ns) {
  Thread& t = th(tid);
  const std::span<const Step> after = t.program.upcoming();
  if (after.size() < 2 || after[0].kind != Step::Kind::kLock ||
      after[1].kind != Step::Kind::kWork || after[1].value <= 0) {
    sched_.run(tid, work_ref_ns);
    return;
  }
  const Step& lock = after[0];
  const Step& locked = after[1];
  const bool relock = after.size() >= 5 && after[2].kind == Step::Kind::kUnlock &&
                      after[2].lock == lock.lock && after[3].kind == Step::Kind::kLock &&
                      after[3].lock == lock.lock && after[4].kind == Step::Kind::kWork &&
                      after[4].value > 0;
  const std::int64_t relock_work = relock ? after[4].value : 0;
  if (!locks_.claim(tid, lock.lock, locked.value + relock_work, relock_work)) {
    sched_.run(tid, work_ref_ns);
    return;
  }
  t.claim_step = t.program.next();
  sched_.run(tid, work_ref_ns + locked.value + relock_work);
  t.program.skip(relock ? 5 : 2);
}

// The best-fit allocation under the lock. Pages not yet resident are installed: with the
// mutex of 6.1-era kernels right here, inside the lock; otherwise after the unlock (the next
// step), under the page-installation mutex in the spinlock variant.
void Driver::allocate(int tid, const Step& step) {
  Process& p = procs_[static_cast<std::size_t>(step.proc)];
  const Allocation a = p.alloc.allocate(step.value, 0, step.async);
  Thread& t = th(tid);
  if (!a.ok()) {
    t.alloc_failed = true;
    t.new_buffer = -1;
    if (a.failure == AllocFailure::kNoAsyncSpace) {
      ++alloc_stats_.failed_async_space;
    } else {
      ++alloc_stats_.failed_no_space;
    }
    return;
  }
  ++alloc_stats_.allocations;
  t.new_buffer = a.buffer;
  if (a.pages_to_install == 0) return;
  const std::int64_t install_ref =
      a.pages_to_install * context_.topology.costs().page_install_ref_ns;
  std::array<Step, 4> install;
  std::size_t count = 0;
  const bool locked = options_.alloc_lock == LockKind::kMutex && options_.install_pages_locked;
  if (p.page_lock >= 0)
    install[count++] = Step{Step::Kind::kLock, step.proc, p.page_lock, 0, false};
  install[count++] = Step{Step::Kind::kWork, -1, -1, install_ref, false};
  install[count++] = Step{Step::Kind::kInstall, step.proc, -1, a.buffer, false};
  if (p.page_lock >= 0)
    install[count++] = Step{Step::Kind::kUnlock, step.proc, p.page_lock, 0, false};
  // The allocation step is followed by its unlock.
  const std::size_t at = locked ? t.program.next() : t.program.next() + 1;
  t.program.insert(at, install.data(), count);
}

// --- the shrinker ------------------------------------------------------------------------------

void Driver::start_shrink_scan(int tid) {
  scan_left_ = options_.memory_pressure.pages_per_scan;
  shrink_next(tid);
}

void Driver::start_shrinker() {
  sched::TaskParams params;
  params.name = "kswapd0";
  const int tid = sched_.create_task(params);
  if (static_cast<std::size_t>(tid) >= threads_.size()) {
    threads_.resize(static_cast<std::size_t>(tid) + 1);
  }
  th(tid) = Thread{};
  th(tid).tid = tid;
  th(tid).phase = Phase::kShrinkStart;
  shrinker_tid_ = tid;
  sched_.run(tid, 0);
  sched_.wake_new(tid, -1);
}

// binder_alloc_free_page() over the LRU as list_lru_walk() walks it (__list_lru_walk_one()):
// from the head, oldest page first, each page looked at costing one of the scan's pages. A page
// whose allocator's trylock fails is skipped (LRU_SKIP) and the walk goes on with the next one;
// a page whose trylock succeeds is unmapped, under the mutex while holding it, or in the
// spinlock variant taken off the LRU under the lock and unmapped after it; then the walk starts
// again from the head (LRU_REMOVED_RETRY), where the pages it skipped are tried again.
void Driver::shrink_next(int tid) {
  const auto& costs = context_.topology.costs();
  int skipped_proc = -1;  // the page skipped last (the walk's place), none at the head
  LruPage skipped;
  while (scan_left_ > 0) {
    int proc = -1;
    LruPage next;
    for (std::size_t i = 0; i < procs_.size(); ++i) {
      const BufferAllocator& alloc = procs_[i].alloc;
      const auto page = skipped_proc < 0 ? alloc.oldest_lru_page()
                        : static_cast<int>(i) == skipped_proc
                            ? alloc.next_lru_page(skipped.page)
                            : alloc.oldest_lru_page_after(skipped.stamp);
      if (page && (proc < 0 || page->stamp < next.stamp)) {
        proc = static_cast<int>(i);
        next = *page;
      }
    }
    if (proc < 0) break;
    --scan_left_;
    const int lock = procs_[static_cast<std::size_t>(proc)].alloc_lock;
    if (!locks_.try_acquire(tid, lock)) {
      ++alloc_stats_.shrinker_skips;
      skipped_proc = proc;  // LRU_SKIP
      skipped = next;
      continue;
    }
    begin_path(tid, Phase::kShrink);
    auto& program = th(tid).program;
    if (options_.alloc_lock == LockKind::kMutex) {
      program.push(Step{Step::Kind::kWork, -1, -1, costs.page_reclaim_ref_ns, false});
      program.push(Step{Step::Kind::kReclaim, proc, -1, next.page, false});
      program.push(Step{Step::Kind::kUnlock, proc, lock, 0, false});
    } else {
      program.push(Step{Step::Kind::kReclaim, proc, -1, next.page, false});
      program.push(Step{Step::Kind::kUnlock, proc, lock, 0, false});
      program.push(Step{Step::Kind::kWork, -1, -1, costs.page_reclaim_ref_ns, false});
    }
    run_path(tid);
    return;
  }
  th(tid).phase = Phase::kShrinkSleep;
  const SimTime wake_at = sched_.now() + options_.memory_pressure.scan_interval_ns;
  sched_.block_until(tid, wake_at);
  context_.engine.schedule(wake_at, target_, kShrinkTimer, static_cast<std::uint32_t>(tid));
}

stats::AllocatorStats Driver::allocator_stats() const { return alloc_stats_; }

}  // namespace bindersim::binder
