// The binder driver: processes with looper pools, waiting_threads with head insertion, todo
// lists, two-way / oneway / reply / nested transactions, BR_SPAWN_LOOPER and priority
// inheritance (drivers/android/binder.c). Thread selection is delegated to a Selector.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "bindersim/binder/allocator.hpp"
#include "bindersim/binder/kernel_lock.hpp"
#include "bindersim/common/error.hpp"
#include "bindersim/engine/context.hpp"
#include "bindersim/sched/scheduler.hpp"
#include "bindersim/selectors/selector.hpp"
#include "bindersim/stats/result.hpp"

namespace bindersim::cost {
class CostModel;
}

namespace bindersim::binder {

using engine::SimTime;

// How a server thread inherits the caller's priority.
enum class PriorityInheritance : std::uint8_t {
  kAndroid,   // policy and priority, applied before the wakeup (RT only if the node allows)
  kUpstream,  // nice only, applied when the thread reads the transaction
};

// Memory pressure that runs binder's shrinker: every `scan_interval_ns` the shrinker thread
// (kswapd) scans up to `pages_per_scan` pages of the global LRU of freed buffer pages, oldest
// first. 0: no pressure, freed pages stay mapped.
struct MemoryPressure {
  SimTime scan_interval_ns = 0;
  int pages_per_scan = 32;
};

struct KernelOptions {
  PriorityInheritance inheritance = PriorityInheritance::kAndroid;
  // The allocator lock: alloc->mutex (6.1-era kernels) or alloc->lock, a spinlock for the
  // buffer metadata with a separate mutex around page installation.
  LockKind alloc_lock = LockKind::kMutex;
  // With the mutex: pages are installed inside it (kernels 6.1 to 6.6) or outside (newer).
  bool install_pages_locked = true;
  MemoryPressure memory_pressure;
};

struct NodeConfig {
  std::string name;
  bool inherit_rt = true;  // FLAT_BINDER_FLAG_INHERIT_RT
  int min_nice = 19;       // the node's minimum priority as a nice value (19: no floor)
};

struct ProcessConfig {
  std::string name;
  int max_threads = 15;           // BINDER_SET_MAX_THREADS (libbinder default 15)
  bool start_thread_pool = true;  // startThreadPool(): one main looper
  std::int64_t looper_working_set_bytes = 0;
  std::vector<NodeConfig> nodes;
  AllocatorConfig buffer_space;  // the mapped buffer space (libbinder: 1 MiB - 2 pages)
  // The process's cpuset, a CPU mask (bit i: CPU i; 0: every CPU). Every thread of the process
  // runs only there: loopers, and threads created with an affinity (intersected with it).
  std::uint64_t cpuset = 0;
  // libbinder frees a transaction's buffer before it replies (IPCThreadState::executeCommand():
  // buffer.setDataSize(0) before sendReply(), b/238777741): BC_FREE_BUFFER, then BC_REPLY, in
  // one write. false (the calibrated model): the free follows the reply, on the way back to the
  // read. docs/model.md.
  bool free_before_reply = false;
};

// The CPUs a thread may run on: its affinity within its process's cpuset, as masks (0 in either:
// no restriction). An empty intersection gives 0, which callers must reject (sched_setaffinity
// fails with EINVAL when no allowed CPU is in the cpuset).
constexpr std::uint64_t restrict_to_cpuset(std::uint64_t affinity, std::uint64_t cpuset) {
  if (cpuset == 0) return affinity;
  if (affinity == 0) return cpuset;
  return affinity & cpuset;
}

// What the driver reports about a completed two-way call.
struct CallRecord {
  SimTime started = 0;   // the caller entered the send path
  SimTime finished = 0;  // the reply was returned to the caller's userspace
  int caller_cpu = -1;   // CPU the caller ran on when it called
  int server_cpu = -1;   // CPU where the server thread started handling the call
  sched::Policy caller_policy = sched::Policy::kNormal;
  std::uint64_t cookie = 0;    // the caller's tag
  stats::Breakdown breakdown;  // where the round trip went
  bool failed = false;         // BR_FAILED_REPLY: no buffer space (nothing was delivered)
};

// The userspace above the driver (libbinder and the workload), told when control returns to it.
class UserSpace {
 public:
  virtual ~UserSpace() = default;
  // `tid` finished a user-code segment started with Driver::compute().
  virtual void on_user_work_done(int tid) = 0;
  // A looper `tid` received transaction `txn` (handle it, then Driver::reply or
  // Driver::finish_oneway).
  virtual void on_transaction(int tid, int txn) = 0;
  // The two-way call of `tid` completed.
  virtual void on_reply(int tid, const CallRecord& record) = 0;
  // A oneway send of `tid` returned to userspace (`failed`: BR_FAILED_REPLY, not delivered).
  virtual void on_oneway_sent(int tid, bool failed) = 0;
};

struct Transaction {
  bool oneway = false;
  bool is_reply = false;
  bool failed = false;  // a reply whose buffer could not be allocated: BR_FAILED_REPLY
  int from_tid = -1;
  int to_proc = -1;
  int to_tid = -1;  // target thread (nested call or reply), -1: selected
  int node = -1;    // index into the target process's nodes
  std::int64_t payload_bytes = 0;
  int payload_cpu = -1;  // CPU where the payload was written
  int caller_cpu = -1;
  sched::Policy caller_policy = sched::Policy::kNormal;
  int caller_nice = 0;
  int caller_rt_priority = 0;
  int from_parent = -1;  // transaction the sender was handling when it sent this one
  SimTime started = 0;
  int server_cpu = -1;
  bool priority_set = false;  // set_priority_called
  sched::Policy saved_policy = sched::Policy::kNormal;
  int saved_nice = 0;
  int saved_rt_priority = 0;
  bool transfer_charged = false;
  int buffer = -1;  // its buffer in the receiving process's allocator, -1: none
  // Breakdown bookkeeping: the caller's time account and lock waits when it called, the
  // server's when it was chosen (and its handler work so far), and the server's share once it
  // replied.
  sched::TimeAccount client_start;
  KernelLocks::WaitTotals client_locks_start;
  sched::TimeAccount server_start;
  KernelLocks::WaitTotals server_locks_start;
  SimTime server_user_start = 0;
  bool server_marked = false;
  stats::Breakdown server_part;
  std::uint64_t cookie = 0;
  bool in_use = false;
};

// Counters of the driver's own behaviour.
struct DriverCounters {
  std::uint64_t transactions = 0;
  std::uint64_t replies = 0;
  std::uint64_t oneway = 0;
  std::uint64_t oneway_parked = 0;
  std::uint64_t nested = 0;
  std::uint64_t proc_todo_queued = 0;  // no idle thread: queued on proc->todo
  std::uint64_t spawn_requests = 0;    // BR_SPAWN_LOOPER sent
  std::uint64_t nudges_applied = 0;
  std::uint64_t failed_sends = 0;  // transactions refused for lack of buffer space
};

// Deepest chain of nested transactions on one thread before the run stops with a ConfigError.
inline constexpr std::size_t kMaxCallDepth = 256;

class Driver final : public sched::TaskOwner,
                     public selectors::MachineView,
                     public engine::EventHandler,
                     public LockClient {
 public:
  Driver(engine::SimContext& context, sched::Scheduler& sched, cost::CostModel& cost,
         selectors::Selector& selector, KernelOptions options);

  void set_userspace(UserSpace& userspace) { userspace_ = &userspace; }

  // Creates a process; with start_thread_pool its main looper starts at time 0.
  int create_process(const ProcessConfig& config);
  // Creates a userspace thread of `proc` (not a looper) that the workload drives. It starts
  // (is woken as a new task) at `start`, beginning with a compute of `first_work_ref_ns`.
  int create_thread(int proc, const sched::TaskParams& params);
  void start_thread(int tid, std::int64_t first_work_ref_ns, int parent_tid = -1);

  // Userspace actions of the running thread `tid`.
  void compute(int tid, std::int64_t work_ref_ns);
  void call(int tid, int target_proc, int node, std::int64_t payload_bytes, bool oneway,
            std::uint64_t cookie);
  void reply(int tid, std::int64_t payload_bytes);
  void finish_oneway(int tid);
  void sleep(int tid, SimTime duration, std::int64_t then_work_ref_ns);
  void exit_thread(int tid);
  // The running `tid` sleeps in userspace until wake_user() (pthread_join and the like).
  void wait_user(int tid);
  // Wakes `tid` (sleeping in userspace, e.g. in pthread_join) from the running `waker`.
  void wake_user(int tid, int waker_tid, std::int64_t then_work_ref_ns);
  // sched_setscheduler() of thread `tid` from userspace: its policy and priority.
  void set_scheduler(int tid, sched::Policy policy, int nice, int rt_priority) {
    sched_.set_attributes(tid, policy, nice, rt_priority);
  }

  // Transactions `tid` is handling, nested (its transaction_stack's depth).
  std::size_t transaction_depth(int tid) const { return th(tid).stack.size(); }

  // sched::TaskOwner
  void on_work_done(int tid) override;
  SimTime on_resume(int tid, int cpu) override;
  void on_switch(int tid, bool running) override;
  void settle(int tid) override;
  // LockClient
  void on_lock_granted(int tid, int lock) override;
  void on_claim_dropped(int tid, int lock) override;
  void on_claim_cut(int tid, int lock) override;
  // selectors::MachineView
  bool available_idle_cpu(int cpu) const override { return sched_.available_idle_cpu(cpu); }
  const topology::Topology& topology() const override { return context_.topology; }
  // engine::EventHandler: spawned loopers and timers.
  void on_event(const engine::Event& event) override;

  const Transaction& transaction(int id) const { return txns_[static_cast<std::size_t>(id)]; }
  int process_of(int tid) const;
  const sched::Scheduler& scheduler() const { return sched_; }
  int num_processes() const { return static_cast<int>(procs_.size()); }
  // Looper threads of a process, in creation order.
  const std::vector<int>& loopers(int proc) const;
  // waiting_threads of a process, head first.
  std::vector<int> waiting_threads(int proc) const;
  int last_cpu(int tid) const;
  const DriverCounters& counters() const { return counters_; }
  // The run's statistics of the allocators and their locks (an episode still open is counted,
  // its time so far is not).
  stats::AllocatorStats allocator_stats() const;
  // The same, moved out at the end of a run (their histograms are large): the driver's own are
  // left empty, and it records nothing more into them.
  stats::AllocatorStats take_allocator_stats() { return std::move(alloc_stats_); }
  const BufferAllocator& allocator(int proc) const {
    return procs_[static_cast<std::size_t>(proc)].alloc;
  }
  const KernelLocks& locks() const { return locks_; }
  int alloc_lock(int proc) const { return procs_[static_cast<std::size_t>(proc)].alloc_lock; }
  // The shrinker thread (kswapd) under memory pressure, else -1.
  int shrinker_tid() const { return shrinker_tid_; }

 private:
  enum class Phase : std::uint8_t {
    kNone,
    kUser,          // userspace work
    kSend,          // BC_TRANSACTION path
    kReply,         // BC_REPLY path
    kReturnToRead,  // BC_FREE_BUFFER and entering the read again
    kWaitReply,     // asleep until the reply (or a nested call) arrives
    kIdle,          // asleep in waiting_threads
    kReceive,       // woken, returning from the read with work
    kDeliver,       // copying the transaction's data in, then back to userspace
    kRegister,      // a new looper registering (BC_REGISTER_LOOPER / BC_ENTER_LOOPER)
    kSleep,         // userspace sleep
    kUserBlocked,   // userspace wait (pthread_join and the like)
    kShrinkStart,   // the shrinker thread starts a scan
    kShrink,        // the shrinker thread reclaims a page
    kShrinkSleep,   // the shrinker thread waits for the next scan
    kFlushFree,     // a client frees its reply buffer in a write of its own
  };

  // One step of a kernel path that takes locks: the path runs its steps in order, then its
  // phase's action (on_work_done's switch).
  struct Step {
    enum class Kind : std::uint8_t {
      kWork,             // `value` ns of reference work
      kLock,             // take `lock` (may wait)
      kUnlock,           // release `lock` (waking a waiter costs the releaser a wakeup)
      kAllocate,         // allocate `value` bytes (async if `async`) in `proc`'s allocator
      kInstall,          // installing the allocated buffer's pages is done
      kFree,             // free buffer `value` of `proc`
      kReclaim,          // the shrinker unmaps page `value` of `proc`
      kRestorePriority,  // the thread takes back the priority saved by transaction `value`
    };
    Kind kind = Kind::kWork;
    int proc = -1;
    int lock = -1;
    std::int64_t value = 0;
    bool async = false;
  };

  // The steps of one kernel path, stored inline (a path is built and run several times per
  // call). The longest path, a reply of a looper that frees before it replies
  // (ProcessConfig::free_before_reply), has 27 steps: the free of a nested call's reply (8), the
  // free of the request (8), the priority restore (upstream, 1), the send's work and allocation
  // (1 + 4), the wakeup (1) and a page installation under the page lock (4).
  class Program {
   public:
    static constexpr std::size_t kCapacity = 32;
    bool empty() const { return size_ == 0; }
    bool done() const { return next_ == size_; }
    std::size_t next() const { return next_; }
    void push(const Step& step) {
      BSIM_CHECK(size_ < kCapacity);
      steps_[size_++] = step;
    }
    // Adds `count` steps at the end, for the caller to fill in: returns the first of them.
    Step* append(std::size_t count) {
      BSIM_CHECK(size_ + count <= kCapacity);
      Step* first = steps_.data() + size_;
      size_ += count;
      return first;
    }
    // Inserts `count` steps before step `at` (at most size()).
    void insert(std::size_t at, const Step* steps, std::size_t count) {
      BSIM_CHECK(at <= size_ && size_ + count <= kCapacity);
      std::copy_backward(steps_.begin() + at, steps_.begin() + size_,
                         steps_.begin() + size_ + count);
      std::copy(steps, steps + count, steps_.begin() + at);
      size_ += count;
    }
    // The next step to run; the path moves past it.
    const Step& take() { return steps_[next_++]; }
    // The steps not taken yet, the next one first.
    std::span<const Step> upcoming() const { return {steps_.data() + next_, size_ - next_}; }
    // Moves past the next `count` steps without running them.
    void skip(std::size_t count) {
      BSIM_CHECK(next_ + count <= size_);
      next_ += count;
    }
    // Makes step `index` (one already taken) the next one again.
    void rewind_to(std::size_t index) {
      BSIM_CHECK(index <= next_);
      next_ = index;
    }
    void clear() {
      size_ = 0;
      next_ = 0;
    }

   private:
    std::array<Step, kCapacity> steps_{};
    std::size_t size_ = 0;
    std::size_t next_ = 0;
  };

  struct Thread {
    int tid = -1;
    int proc = -1;
    bool looper = false;
    Phase phase = Phase::kNone;
    std::vector<int> stack;  // transaction_stack: ids, top at back
    std::deque<int> todo;
    int pending = -1;           // transaction picked by the current read, being delivered
    int outgoing = -1;          // two-way call awaiting its reply
    int last_cpu = -1;          // CTABS: CPU where it last resumed or found work at a read
    int preferred_cpu = -1;     // CTABS nudge
    int resume_cpu = -1;        // CPU where it returned from waiting this time
    bool free_pending = false;  // a received buffer to free with the next write
    std::int64_t pending_work_ref_ns = 0;  // user work after a sleep or wake_user
    SimTime user_work = 0;       // running time spent in userspace work (handlers), cumulative
    SimTime user_work_mark = 0;  // the task's work time when the current user segment began
    int free_buffer = -1;        // with free_pending: the received buffer (own process)
    Program program;             // the kernel path being run
    std::size_t claim_step = 0;  // with a lock claim: the path's step that takes the lock
    int new_buffer = -1;         // allocated by the path (-1: none, or it failed)
    bool alloc_failed = false;   // the path's allocation failed
    CallRecord flushed_call;     // kFlushFree: the call returned to userspace once it is done
  };

  struct Node {
    NodeConfig config;
    bool async_in_flight = false;
    std::deque<int> async_todo;
  };

  struct Process {
    explicit Process(const ProcessConfig& c) : config(c), alloc(c.buffer_space) {}
    ProcessConfig config;
    std::vector<Node> nodes;
    std::vector<int> loopers;
    // waiting_threads with the head at the BACK: the default selection takes the head, and a
    // vector pops its back for free.
    std::vector<int> waiting;
    std::deque<int> todo;  // proc->todo
    int requested_threads = 0;
    int spawned = 0;
    BufferAllocator alloc;
    int alloc_lock = -1;
    int page_lock = -1;  // spinlock variant: the page-installation mutex
  };

  enum EventKind : std::uint16_t { kSpawnLooper = 1, kSleepDone = 2, kShrinkTimer = 3 };

  static bool is_waiting(Phase phase);
  Thread& th(int tid);
  const Thread& th(int tid) const;
  int new_looper(int proc, int parent_tid);
  int alloc_txn();
  void free_txn(int id);
  void begin_kernel(int tid, Phase phase, std::int64_t work_ref_ns);
  void do_transaction(int tid);
  // The call a two-way call from `t` nests in: the top of its stack, unless that is a oneway
  // (part of no call chain) or the stack is empty (-1).
  int call_parent(const Thread& t) const;
  // The thread of `proc` that sent a call of the chain ending at `parent`, which gets a nested
  // call directly (-1: none).
  int chain_thread_of(int parent, int proc) const;
  void do_reply(int tid);
  void deliver(int txn_id, bool sync_wakeup, int waker_tid);
  void wakeup_proc(int proc, int waker_tid);
  int select_thread(int proc, int caller_cpu, bool sync, int* preferred_cpu);
  void wake_thread(int tid, bool sync, int waker_tid);
  void read(int tid);
  void finish_read(int tid);
  void start_handling(int tid, int txn_id);
  void deliver_to_user(int tid);
  // What the caller is told of `call`, finished now (the breakdown is the caller's to add).
  CallRecord call_record(const Transaction& call) const;
  void take_work(int tid, int txn_id);
  void mark_server(int tid, Transaction& x);
  // Sets `tid`'s scheduling attributes for binder, in the context of `actor_tid`'s binder call
  // (traced in Android mode as binder_set_priority when the prio changes).
  void set_priority(int actor_tid, int tid, sched::Policy policy, int nice, int rt_priority);
  void apply_android_priority(int actor_tid, int tid, Transaction& txn);
  void apply_upstream_priority(int tid, Transaction& txn);
  void restore_priority(int tid, const Transaction& txn);
  void restore_default_priority(int tid);
  // The end of binder_thread_read() for a looper returning to userspace: BR_SPAWN_LOOPER when
  // no spawn is outstanding, no looper waits for work and fewer than max_threads were spawned.
  void maybe_spawn(int spawner_tid);
  void free_buffer(int tid, int txn_id);
  // Kernel paths with allocator locks.
  void begin_path(int tid, Phase phase);
  void add_work(int tid, std::int64_t ref_ns);
  void add_allocation(int tid, int proc, std::int64_t bytes, bool async);
  void add_free(int tid, int proc, int buffer);
  // The BC_FREE_BUFFER that libbinder holds in the thread's output buffer, if any, goes with
  // the path being built.
  void add_pending_free(int tid);
  void run_path(int tid);
  // Inline in run_path(), its only caller, which runs it for most segments.
  [[gnu::always_inline]] inline void run_work(int tid, std::int64_t work_ref_ns);
  void allocate(int tid, const Step& step);
  // The action that follows a finished segment, by the thread's phase.
  void finish_phase(int tid);
  // kRegister done: the looper is registered (BC_ENTER_LOOPER / BC_REGISTER_LOOPER) and reads.
  void register_looper(int tid);
  // kFlushFree done: the call whose reply buffer was freed returns to userspace.
  void return_flushed_call(int tid);
  void start_shrinker();
  // kShrinkStart done: the shrinker begins a scan of the LRU.
  void start_shrink_scan(int tid);
  void shrink_next(int tid);

  engine::SimContext& context_;
  sched::Scheduler& sched_;
  cost::CostModel& cost_;
  selectors::Selector& selector_;
  KernelOptions options_;
  UserSpace* userspace_ = nullptr;
  std::uint16_t target_ = 0;
  std::vector<Process> procs_;
  std::vector<Thread> threads_;  // indexed by tid; tid of non-binder tasks has proc -1
  std::vector<Transaction> txns_;
  std::vector<int> free_txns_;
  std::vector<selectors::IdleThread> scratch_;  // reused selection input
  DriverCounters counters_;
  KernelLocks locks_;
  stats::AllocatorStats alloc_stats_;
  std::uint64_t lru_clock_ = 0;  // stamps of freed pages: the global LRU's order
  int shrinker_tid_ = -1;
  int scan_left_ = 0;  // pages the current shrinker scan may still look at
};

}  // namespace bindersim::binder
