// Tracer: the hooks through which the scheduler and the binder driver report a traced run, one
// virtual per kind of event. SimContext::tracer points to one while a run is traced (nullptr
// otherwise, so an untraced run pays one predictable branch per hook).
#pragma once

#include <cstdint>
#include <string_view>

namespace bindersim::sched {
class Scheduler;
struct WakeContext;
}  // namespace bindersim::sched
namespace bindersim::binder {
struct Transaction;
}
namespace bindersim::selectors {
struct SelectionRequest;
struct Selection;
}  // namespace bindersim::selectors

namespace bindersim::trace {

// Commands a thread writes to the binder driver (BC_*), as the binder_command tracepoint shows.
enum class BinderCommand : std::uint8_t {
  kTransaction,     // BC_TRANSACTION: a call starts
  kReply,           // BC_REPLY: a server answers
  kFreeBuffer,      // BC_FREE_BUFFER: a received buffer goes back to its allocator
  kRegisterLooper,  // BC_REGISTER_LOOPER: a spawned looper joins the pool
  kEnterLooper,     // BC_ENTER_LOOPER: the main looper (startThreadPool) joins the pool
};

// What the driver returns to a thread (BR_*), as the binder_return tracepoint shows.
enum class BinderReturn : std::uint8_t {
  kTransaction,          // BR_TRANSACTION: work for a looper
  kReply,                // BR_REPLY: the answer to a two-way call
  kTransactionComplete,  // BR_TRANSACTION_COMPLETE: the driver took a transaction or reply
  kSpawnLooper,          // BR_SPAWN_LOOPER: userspace should start one more looper
  kFailedReply,          // BR_FAILED_REPLY: a send, or the reply to a call, found no buffer space
};

// Receives the events of a traced run. Every hook is called at the simulated time
// `sched.now()`, in the order the events happen, and gets read-only views of the model: a
// tracer observes and never changes the run (a traced run has the same trajectory and result
// as an untraced one). Task ids (tids) are the scheduler's; a tid of an exited task may be
// given again to a new task after task_created().
class Tracer {
 public:
  virtual ~Tracer() = default;

  // The machine before the first event (frequencies, idle CPUs), and the end of the run.
  virtual void begin(const sched::Scheduler& sched) = 0;
  virtual void end(const sched::Scheduler& sched) = 0;

  // --- scheduler ---
  // A task was created (its name and process are in sched.task(tid).params).
  virtual void task_created(const sched::Scheduler& sched, int tid) = 0;
  // try_to_wake_up() starts for `tid` (also for the first wakeup of a new task, ctx.fork);
  // sched.task(tid).cpu is still the CPU it last ran on.
  virtual void sched_waking(const sched::Scheduler& sched, int tid,
                            const sched::WakeContext& ctx) = 0;
  // The woken task is queued on sched.task(tid).cpu.
  virtual void sched_wakeup(const sched::Scheduler& sched, int tid,
                            const sched::WakeContext& ctx) = 0;
  // `tid` moves from sched.task(tid).cpu (>= 0) to `dest_cpu` (set_task_cpu()).
  virtual void sched_migrate(const sched::Scheduler& sched, int tid, int dest_cpu) = 0;
  // The running `tid` stops running: it sleeps, or exits when `exiting`. Its CPU's next
  // sched_switch() or cpu_idle() is the switch away from it.
  virtual void sched_block(const sched::Scheduler& sched, int tid, bool exiting) = 0;
  // `cpu` switches to `next_tid` (from whatever ran there, or from idle).
  virtual void sched_switch(const sched::Scheduler& sched, int cpu, int next_tid) = 0;
  // `cpu` has nothing to run and enters sched.rq(cpu).idle_state (possibly again).
  virtual void cpu_idle(const sched::Scheduler& sched, int cpu) = 0;
  // `cluster` switched to its current frequency.
  virtual void cpu_frequency(const sched::Scheduler& sched, int cluster) = 0;

  // --- binder driver (each from a running thread's context) ---
  virtual void binder_command(const sched::Scheduler& sched, int tid, BinderCommand command) = 0;
  virtual void binder_return(const sched::Scheduler& sched, int tid, BinderReturn ret) = 0;
  // Transaction (or reply) `txn` (the driver's pool index, live until it is received, or until
  // binder_return(kFailedReply) for a send that found no buffer space) was sent by
  // txn.from_tid to `dest_tid` (the selected or addressed thread; -1: no thread yet, the work
  // waits on proc->todo or node->async_todo, or the send failed before selection).
  virtual void binder_transaction(const sched::Scheduler& sched, int txn,
                                  const binder::Transaction& transaction, int dest_tid) = 0;
  // `tid` took transaction (or reply) `txn` off its todo list, on its way back to userspace. A
  // reply with `transaction.failed` set found no buffer space: the caller gets BR_FAILED_REPLY
  // instead (binder_send_failed_reply()).
  virtual void binder_transaction_received(const sched::Scheduler& sched, int tid, int txn,
                                           const binder::Transaction& transaction) = 0;
  // The selector `selector` answered `request` with `selection`, in the context of the thread
  // running on request.caller_cpu.
  virtual void binder_select(const sched::Scheduler& sched, std::string_view selector,
                             const selectors::SelectionRequest& request,
                             const selectors::Selection& selection) = 0;
  // The CTABS nudge rewrites `tid`'s wake_cpu from `from_cpu` to `to_cpu`, in the context of
  // the running `waker_tid`, just before a sync wakeup.
  virtual void binder_nudge(const sched::Scheduler& sched, int waker_tid, int tid, int from_cpu,
                            int to_cpu) = 0;
  // Android binder changed `tid`'s priority from kernel prio `old_prio` to `new_prio`
  // (binder_do_set_priority(): inheritance, or a restore), in the context of the running
  // `actor_tid` (the sender for inheritance before a wakeup, else `tid` itself).
  virtual void binder_set_priority(const sched::Scheduler& sched, int actor_tid, int tid,
                                   int old_prio, int new_prio) = 0;
};

}  // namespace bindersim::trace
