// Kernel locks taken on binder's allocator paths: a sleeping mutex (optimistic spinning while
// the owner runs, no priority inheritance, wakeup of a waiter on unlock, handoff to a waiter
// that lost a race) and a queued spinlock (preemption disabled while spinning and holding,
// FIFO grant), with their statistics and priority-inversion episodes (binder_alloc.c's locks).
#pragma once

#include <cstdint>
#include <deque>
#include <string_view>
#include <vector>

#include "bindersim/engine/context.hpp"
#include "bindersim/sched/scheduler.hpp"
#include "bindersim/stats/result.hpp"

namespace bindersim::binder {

using engine::SimTime;

enum class LockKind : std::uint8_t { kMutex, kSpinlock };
std::string_view lock_kind_name(LockKind kind);  // "mutex", "spinlock"

using stats::LockStats;

// What the locks tell the thread's owner (the binder driver).
class LockClient {
 public:
  virtual ~LockClient() = default;
  // `tid`, which waited for `lock`, holds it now and is running: it goes on with its path.
  virtual void on_lock_granted(int tid, int lock) = 0;
  // `tid`'s claim on `lock` was dropped before its segment reached the lock (KernelLocks::
  // claim): its segment now ends there, and its next step must be the acquisition again.
  virtual void on_claim_dropped(int tid, int lock) = 0;
  // `tid`'s claim on `lock` with a relock (KernelLocks::claim) was settled inside the first
  // hold: `tid` holds the lock, its segment now ends at the first release, and its next step
  // must be that release.
  virtual void on_claim_cut(int tid, int lock) = 0;
};

// Every kernel lock of a simulation. Threads that wait are driven through the scheduler: a
// spinner runs a spin segment until the grant, a mutex sleeper blocks until an unlock wakes it.
// While a thread waits, its owner must route its scheduler callbacks here: on_work_done() for
// TaskOwner::on_work_done and on_switch() for TaskOwner::on_switch.
class KernelLocks final : public engine::EventHandler {
 public:
  // Reference work of one stretch of spinning; a longer spin runs several.
  static constexpr std::int64_t kSpinChunkRefNs = 1'000'000;

  KernelLocks(engine::SimContext& context, sched::Scheduler& sched, LockClient& client);

  // Adds a lock; its statistics go to `stats` (shared by a class of locks; must outlive this).
  int add(LockKind kind, LockStats& stats);
  LockKind kind(int lock) const { return locks_[static_cast<std::size_t>(lock)].kind; }
  int owner(int lock) const { return locks_[static_cast<std::size_t>(lock)].owner; }
  SimTime owned_since(int lock) const { return locks_[static_cast<std::size_t>(lock)].owned_since; }

  // The running `tid` takes `lock`: true when it holds it at once. Otherwise it spins or sleeps
  // and on_lock_granted() follows once it holds it. A spinlock disables preemption from here
  // to the release.
  bool acquire(int tid, int lock);
  // Takes `lock` only if it is free now (mutex_trylock / spin_trylock).
  bool try_acquire(int tid, int lock);

  // Running through a lock. The running `tid`, whose segment was just given `work before` +
  // `locked_work` of reference work, claims `lock` to be taken part-way: where the first part
  // ends. Only a free lock without waiters or another claim can be claimed (returns false
  // otherwise, and nothing changes). Until the segment ends, the claim stands for the
  // acquisition: another thread's acquire() or try_acquire() of the lock settles it first, and
  // so must the owner when the segment ends and when the scheduler asks (TaskOwner::settle, for
  // the task has runs_ahead set). The lock is thus taken at the same point as step by step,
  // with one segment end fewer.
  // With `relock_work` > 0 (less than `locked_work`), the lock is released and at once taken
  // again where that much of the segment's work is left: two holds in a row with nothing
  // between them, as binder's free path takes the allocator lock for the buffer's lookup,
  // then again to free it. Settled inside the first hold, the segment is cut at its release
  // (LockClient::on_claim_cut); past it, both acquisitions happened: two segment ends fewer.
  bool claim(int tid, int lock, std::int64_t locked_work, std::int64_t relock_work = 0);
  bool has_claim(int tid) const {
    return static_cast<std::size_t>(tid) < threads_.size() &&
           threads_[static_cast<std::size_t>(tid)].claim >= 0;
  }
  // Brings `tid`'s claim up to now and ends it. At or past the lock: `tid` took it when it got
  // there, and holds it. Not there yet: the segment is cut where the lock comes and the owner
  // told (LockClient::on_claim_dropped), to take it as a step of its own.
  // The owner `tid` releases `lock`. Returns true when the release woke a sleeping waiter (the
  // releaser pays for that wakeup).
  bool release(int tid, int lock);

  // How long `tid` has waited for locks so far, nanoseconds: spinning or asleep, from each first
  // attempt that found the lock taken to its grant, less what the scheduler accounted to it
  // otherwise meanwhile (a woken sleeper's wait to run, its switch-in); and the part of that spent
  // spinning, which the scheduler counts as the thread's work. A call's latency breakdown takes
  // the difference over the call.
  struct WaitTotals {
    SimTime waited = 0;
    SimTime spun = 0;
  };
  WaitTotals wait_totals(int tid) const {
    return static_cast<std::size_t>(tid) < totals_.size() ? totals_[static_cast<std::size_t>(tid)]
                                                          : WaitTotals{};
  }

  // True while `tid` waits for a lock (its scheduler callbacks belong here).
  bool waiting(int tid) const {
    return static_cast<std::size_t>(tid) < threads_.size() &&
           threads_[static_cast<std::size_t>(tid)].waiting_for >= 0;
  }
  void settle(int tid);

  void on_work_done(int tid);
  void on_switch(int tid, bool running);
  void on_event(const engine::Event& event) override;

 private:
  enum class WaitState : std::uint8_t { kSpinning, kSleeping, kWoken };
  struct Waiter {
    int tid = -1;
    WaitState state = WaitState::kSpinning;
    SimTime since = 0;               // the first attempt
    SimTime spin_mark = 0;           // the task's work time when the current spin began
    bool counted_sleep = false;      // slept once: on the mutex's wait list from then on
    SimTime accounted_at_since = 0;  // the task's accounted time (accounted()) at `since`
    SimTime spun = 0;                // spinning so far in this wait
  };
  struct Lock {
    LockKind kind = LockKind::kMutex;
    LockStats* stats = nullptr;
    int owner = -1;
    SimTime owned_since = 0;
    int handoff_to = -1;           // mutex: the next owner, set by a starved first waiter
    std::deque<Waiter> waiters;    // arrival order
    bool check_pending = false;    // a deferred re-evaluation is scheduled
    SimTime preempted_since = -1;  // open lock-holder-preemption episode
    SimTime inversion_since = -1;  // open inversion episode
    int claimant = -1;             // the thread with a claim on it (see claim())
  };
  struct ThreadState {
    int waiting_for = -1;                // lock, or -1
    int holding = 0;                     // locks held (switches are watched while > 0 or waiting)
    int claim = -1;                      // the lock it claims, or -1
    std::int64_t claim_locked_work = 0;  // reference work of its segment after that lock
    std::int64_t claim_relock_work = 0;  // 0, or the work left where the lock is taken again
  };

  Lock& lk(int lock) { return locks_[static_cast<std::size_t>(lock)]; }
  // A thread's state; threads are added as they first take a lock.
  ThreadState& ts(int tid) {
    const auto index = static_cast<std::size_t>(tid);
    if (index >= threads_.size()) [[unlikely]]
      threads_.resize(index + 1);
    return threads_[index];
  }
  Waiter* find_waiter(Lock& lock, int tid);
  // The first waiter on a mutex's wait list (nullptr: none). Optimistic spinners that never
  // slept are queued as waiters but are not on it (__mutex_waiter_is_first()).
  static Waiter* first_on_wait_list(Lock& lock);
  bool free_now(const Lock& lock) const {
    return lock.owner < 0 && lock.waiters.empty() && lock.handoff_to < 0;
  }
  void settle_claim_on(Lock& lock) {
    if (lock.claimant >= 0) settle(lock.claimant);
  }
  void grant(Lock& lock, ThreadState& thread, int tid);
  void spin(int tid, Waiter& waiter);
  void sleep(Lock& lock, Waiter& waiter);
  void stop_spin(Waiter& waiter);
  // `waiter`'s wait ends now with the grant: the lock's statistics and the thread's totals.
  void record_wait(Lock& lock, const Waiter& waiter);
  WaitTotals& totals(int tid) {
    const auto index = static_cast<std::size_t>(tid);
    if (index >= totals_.size()) totals_.resize(index + 1);
    return totals_[index];
  }
  // Everything the scheduler has accounted to `tid`: work, stalls and waits to run.
  SimTime accounted(int tid) const;
  void wait_or_spin(int lock_id, Waiter& waiter);
  void remove_waiter(Lock& lock, int tid);
  void watch(int tid);
  void unwatch(int tid, const ThreadState& thread);
  void defer_check(int lock_id);
  void check(int lock_id);
  void update_episodes(Lock& lock);
  void update_open_episodes(Lock& lock);
  bool owner_running(const Lock& lock) const;

  engine::SimContext& context_;
  sched::Scheduler& sched_;
  LockClient& client_;
  std::uint16_t target_ = 0;
  std::vector<Lock> locks_;
  std::vector<ThreadState> threads_;  // by tid
  std::vector<WaitTotals> totals_;    // by tid, of the threads that waited (wait_totals())
};

}  // namespace bindersim::binder
