#include "bindersim/binder/kernel_lock.hpp"

#include <algorithm>

#include "bindersim/common/error.hpp"

namespace bindersim::binder {

using sched::TaskState;

std::string_view lock_kind_name(LockKind kind) {
  return kind == LockKind::kMutex ? "mutex" : "spinlock";
}

KernelLocks::KernelLocks(engine::SimContext& context, sched::Scheduler& sched, LockClient& client)
    : context_(context), sched_(sched), client_(client) {
  target_ = context_.engine.add_handler(*this);
}

int KernelLocks::add(LockKind kind, LockStats& stats) {
  Lock lock;
  lock.kind = kind;
  lock.stats = &stats;
  locks_.push_back(std::move(lock));
  return static_cast<int>(locks_.size()) - 1;
}

KernelLocks::Waiter* KernelLocks::find_waiter(Lock& lock, int tid) {
  for (Waiter& w : lock.waiters) {
    if (w.tid == tid) return &w;
  }
  return nullptr;
}

KernelLocks::Waiter* KernelLocks::first_on_wait_list(Lock& lock) {
  for (Waiter& w : lock.waiters) {
    if (w.counted_sleep) return &w;
  }
  return nullptr;
}

void KernelLocks::watch(int tid) { sched_.task_for_update(tid).watch_switches = true; }

void KernelLocks::unwatch(int tid, const ThreadState& thread) {
  if (thread.holding == 0 && thread.waiting_for < 0) {
    sched_.task_for_update(tid).watch_switches = false;
  }
}

bool KernelLocks::owner_running(const Lock& lock) const {
  return lock.owner >= 0 && sched_.task(lock.owner).state == TaskState::kRunning;
}

// --- acquiring -------------------------------------------------------------------------------

bool KernelLocks::acquire(int tid, int lock_id) {
  Lock& lock = lk(lock_id);
  ThreadState& thread = ts(tid);
  BSIM_CHECK(sched_.task(tid).state == TaskState::kRunning);
  BSIM_CHECK_MSG(thread.waiting_for < 0 && lock.owner != tid, "a lock taken twice");
  settle_claim_on(lock);
  // spin_lock(): preemption is disabled before the first attempt and stays so until unlock.
  if (lock.kind == LockKind::kSpinlock) sched_.preempt_disable(tid);
  const bool free_for_me =
      lock.owner < 0 && (lock.handoff_to < 0 || lock.handoff_to == tid) &&
      (lock.kind == LockKind::kMutex || lock.waiters.empty());  // queued spinlock: FIFO
  if (free_for_me) {
    grant(lock, thread, tid);
    return true;
  }
  ++lock.stats->contended;
  thread.waiting_for = lock_id;
  watch(tid);
  lock.waiters.push_back(
      Waiter{tid, WaitState::kSpinning, sched_.now(), 0, false, accounted(tid), 0});
  wait_or_spin(lock_id, lock.waiters.back());
  update_episodes(lock);
  return false;
}

bool KernelLocks::try_acquire(int tid, int lock_id) {
  Lock& lock = lk(lock_id);
  BSIM_CHECK(sched_.task(tid).state == TaskState::kRunning && lock.owner != tid);
  settle_claim_on(lock);
  // mutex_trylock() takes an unowned mutex unless it is being handed off, waiters or not (as
  // acquire() can); spin_trylock() takes a queued spinlock only with no one queued on it.
  if (lock.owner >= 0 || lock.handoff_to >= 0 ||
      (lock.kind == LockKind::kSpinlock && !lock.waiters.empty())) {
    ++lock.stats->trylock_failures;
    return false;
  }
  if (lock.kind == LockKind::kSpinlock) sched_.preempt_disable(tid);
  grant(lock, ts(tid), tid);
  return true;
}

// --- running through a lock -----------------------------------------------------------------

bool KernelLocks::claim(int tid, int lock_id, std::int64_t locked_work, std::int64_t relock_work) {
  Lock& lock = lk(lock_id);
  BSIM_CHECK(locked_work > 0 && relock_work >= 0 && relock_work < locked_work);
  if (!free_now(lock) || lock.claimant >= 0 || sched_.task(tid).state != TaskState::kRunning) {
    return false;
  }
  ThreadState& thread = ts(tid);
  BSIM_CHECK_MSG(thread.claim < 0 && thread.waiting_for < 0, "a second claim");
  thread.claim = lock_id;
  thread.claim_locked_work = locked_work;
  thread.claim_relock_work = relock_work;
  lock.claimant = tid;
  sched_.task_for_update(tid).runs_ahead = true;
  return true;
}

void KernelLocks::settle(int tid) {
  ThreadState& thread = ts(tid);
  BSIM_CHECK(thread.claim >= 0);
  const int lock_id = thread.claim;
  Lock& lock = lk(lock_id);
  const std::int64_t locked_work = thread.claim_locked_work;
  thread.claim = -1;
  lock.claimant = -1;
  sched_.task_for_update(tid).runs_ahead = false;
  BSIM_CHECK_MSG(free_now(lock), "a claimed lock was taken without settling the claim");
  const std::int64_t left = sched_.remaining_work(tid);
  if (left > locked_work) {
    sched_.replace_work(tid, left - locked_work);
    client_.on_claim_dropped(tid, lock_id);
    return;
  }
  // Taken when the segment's work left was `locked_work`, as acquire() would have then.
  const int cpu = sched_.task(tid).cpu;
  if (lock.kind == LockKind::kSpinlock) sched_.preempt_disable(tid);
  grant(lock, thread, tid);
  lock.owned_since = sched_.now() - sched_.run_time(locked_work - left, cpu);
  const std::int64_t relock_work = thread.claim_relock_work;
  if (relock_work == 0) return;
  if (left > relock_work) {
    // Inside the first hold: the release and what follows run as steps of their own.
    sched_.replace_work(tid, left - relock_work);
    client_.on_claim_cut(tid, lock_id);
    return;
  }
  // Past the first hold: it ended where `relock_work` was left, and the second began there
  // (release() and grant() with nothing between them, and no waiter to tell).
  const SimTime relocked_at = sched_.now() - sched_.run_time(relock_work - left, cpu);
  lock.stats->hold_ns.record(relocked_at - lock.owned_since);
  ++lock.stats->acquisitions;
  lock.owned_since = relocked_at;
}

// `tid` (whose state is `thread`) becomes the owner (a waiter's wait ends here; the caller
// continues it).
inline void KernelLocks::grant(Lock& lock, ThreadState& thread, int tid) {
  lock.owner = tid;
  lock.owned_since = sched_.now();
  if (lock.handoff_to == tid) lock.handoff_to = -1;
  ++lock.stats->acquisitions;
  ++thread.holding;
  watch(tid);
}

// A waiter spins (mutex: only while the owner runs) or sleeps.
void KernelLocks::wait_or_spin(int lock_id, Waiter& waiter) {
  Lock& lock = lk(lock_id);
  if (lock.kind == LockKind::kSpinlock || owner_running(lock)) {
    spin(waiter.tid, waiter);
  } else {
    sleep(lock, waiter);
  }
}

SimTime KernelLocks::accounted(int tid) const {
  const sched::TimeAccount& t = sched_.task(tid).times;
  return t.work + t.switch_stall + t.cache_stall + t.wait_ipi + t.wait_idle_exit + t.wait_rq;
}

void KernelLocks::record_wait(Lock& lock, const Waiter& waiter) {
  const SimTime span = sched_.now() - waiter.since;
  lock.stats->wait_ns.record(span);
  // Asleep: the span less everything accounted meanwhile; spinning: accounted as work.
  const SimTime asleep = span - (accounted(waiter.tid) - waiter.accounted_at_since);
  totals(waiter.tid).waited += asleep + waiter.spun;
}

void KernelLocks::spin(int tid, Waiter& waiter) {
  waiter.state = WaitState::kSpinning;
  waiter.spin_mark = sched_.task(tid).times.work;
  sched_.replace_work(tid, kSpinChunkRefNs);
}

void KernelLocks::stop_spin(Waiter& waiter) {
  if (waiter.state != WaitState::kSpinning) return;
  Lock& lock = lk(ts(waiter.tid).waiting_for);
  const SimTime spun = sched_.task(waiter.tid).times.work - waiter.spin_mark;
  lock.stats->spin_ns += spun;
  totals(waiter.tid).spun += spun;
  waiter.spun += spun;
  waiter.spin_mark = sched_.task(waiter.tid).times.work;
}

void KernelLocks::sleep(Lock& lock, Waiter& waiter) {
  waiter.state = WaitState::kSleeping;
  if (!waiter.counted_sleep) {
    waiter.counted_sleep = true;  // now on the mutex's wait list
    ++lock.stats->sleeps;
  }
  sched_.block(waiter.tid);
}

void KernelLocks::remove_waiter(Lock& lock, int tid) {
  const auto it = std::find_if(lock.waiters.begin(), lock.waiters.end(),
                               [tid](const Waiter& w) { return w.tid == tid; });
  BSIM_CHECK(it != lock.waiters.end());
  lock.waiters.erase(it);
}

// --- releasing -------------------------------------------------------------------------------

bool KernelLocks::release(int tid, int lock_id) {
  Lock& lock = lk(lock_id);
  BSIM_CHECK_MSG(lock.owner == tid, "a lock released by a thread that does not hold it");
  lock.stats->hold_ns.record(sched_.now() - lock.owned_since);
  lock.owner = -1;
  ThreadState& thread = ts(tid);
  --thread.holding;
  unwatch(tid, thread);
  bool woke = false;
  if (lock.kind == LockKind::kSpinlock) {
    // Queued spinlock: the head of the queue, spinning with preemption off, takes it.
    if (!lock.waiters.empty()) {
      Waiter& next = lock.waiters.front();
      BSIM_CHECK(next.state == WaitState::kSpinning);
      const int next_tid = next.tid;
      sched_.replace_work(next_tid, 0);
      stop_spin(next);
      record_wait(lock, next);
      lock.waiters.pop_front();
      grant(lock, ts(next_tid), next_tid);  // its wait ends at its segment's end (on_work_done)
    }
    sched_.preempt_enable(tid);
  } else if (lock.handoff_to >= 0) {
    // A starved waiter asked for the lock: it is given to it directly (__mutex_handoff).
    const int next_tid = lock.handoff_to;
    Waiter* next = find_waiter(lock, next_tid);
    BSIM_CHECK(next != nullptr);
    ++lock.stats->handoffs;
    lock.handoff_to = -1;
    lock.owner = next_tid;  // owner in name; the grant completes when it runs
    if (next->state == WaitState::kSleeping) {
      next->state = WaitState::kWoken;
      woke = true;
      sched_.run(next_tid, 0);
      sched_.wake(next_tid, sched::WakeContext{tid, sched_.task(tid).cpu, false, false});
    } else if (next->state == WaitState::kSpinning &&
               sched_.task(next_tid).state == TaskState::kRunning) {
      sched_.replace_work(next_tid, 0);  // it sees the lock at once
    }
  } else if (!lock.waiters.empty()) {
    // mutex_unlock(): the lock is free; a running optimistic spinner takes it first, and the
    // first waiter on the wait list is woken to try again.
    for (Waiter& w : lock.waiters) {
      if (w.state == WaitState::kSpinning && sched_.task(w.tid).state == TaskState::kRunning) {
        sched_.replace_work(w.tid, 0);  // takes the lock when its segment ends
        break;
      }
    }
    Waiter* first = first_on_wait_list(lock);
    if (first != nullptr && first->state == WaitState::kSleeping) {
      first->state = WaitState::kWoken;
      woke = true;
      sched_.run(first->tid, 0);
      sched_.wake(first->tid, sched::WakeContext{tid, sched_.task(tid).cpu, false, false});
    }
  }
  update_episodes(lock);
  return woke;
}

// --- waiting threads' callbacks --------------------------------------------------------------

// A waiter's segment ended: a spin stretch, a spin cut short by an unlock or a grant, or the
// retry of a woken sleeper. It tries the lock again.
void KernelLocks::on_work_done(int tid) {
  const int lock_id = ts(tid).waiting_for;
  BSIM_CHECK(lock_id >= 0);
  Lock& lock = lk(lock_id);
  if (lock.owner == tid) {
    // Granted on release (spinlock queue or mutex handoff) while it spun or slept.
    Waiter* w = find_waiter(lock, tid);
    if (w != nullptr) {
      stop_spin(*w);
      record_wait(lock, *w);
      remove_waiter(lock, tid);
      // A handed-off owner was counted at the grant in name only: count it now.
      lock.owned_since = sched_.now();
      ++lock.stats->acquisitions;
      ++ts(tid).holding;
    }
    ts(tid).waiting_for = -1;
    update_episodes(lock);
    client_.on_lock_granted(tid, lock_id);
    return;
  }
  Waiter* w = find_waiter(lock, tid);
  BSIM_CHECK(w != nullptr);
  const bool may_take = lock.owner < 0 && (lock.handoff_to < 0 || lock.handoff_to == tid) &&
                        (lock.kind == LockKind::kMutex || &lock.waiters.front() == w);
  if (may_take) {
    stop_spin(*w);
    record_wait(lock, *w);
    remove_waiter(lock, tid);
    ThreadState& thread = ts(tid);
    thread.waiting_for = -1;
    grant(lock, thread, tid);
    update_episodes(lock);
    client_.on_lock_granted(tid, lock_id);
    return;
  }
  if (w->state == WaitState::kWoken) {
    // Woken and beaten to the lock: the first waiter on the wait list asks for a handoff at the
    // next unlock (__mutex_waiter_is_first(), MUTEX_FLAG_HANDOFF).
    if (lock.handoff_to < 0 && first_on_wait_list(lock) == w) lock.handoff_to = tid;
    wait_or_spin(lock_id, *w);
  } else if (lock.kind == LockKind::kMutex && !owner_running(lock)) {
    stop_spin(*w);
    sleep(lock, *w);
  } else {
    stop_spin(*w);
    spin(tid, *w);  // another stretch
  }
  update_episodes(lock);
}

void KernelLocks::on_switch(int tid, bool /*running*/) {
  for (std::size_t id = 0; id < locks_.size(); ++id) {
    const Lock& lock = locks_[id];
    if (lock.owner == tid || ts(tid).waiting_for == static_cast<int>(id)) {
      defer_check(static_cast<int>(id));
    }
  }
}

// Switches happen deep inside the scheduler: the lock looks at its threads again from a
// separate event at the same time.
void KernelLocks::defer_check(int lock_id) {
  Lock& lock = lk(lock_id);
  if (lock.check_pending) return;
  lock.check_pending = true;
  context_.engine.schedule(sched_.now(), target_, 0, static_cast<std::uint32_t>(lock_id));
}

void KernelLocks::on_event(const engine::Event& event) { check(static_cast<int>(event.id)); }

// mutex: running spinners whose owner no longer runs go to sleep (mutex_spin_on_owner gives
// up); a running spinner finding the lock free is cut short to take it. Then the episodes.
void KernelLocks::check(int lock_id) {
  Lock& lock = lk(lock_id);
  lock.check_pending = false;
  if (lock.kind == LockKind::kMutex) {
    std::vector<int> to_sleep;
    for (Waiter& w : lock.waiters) {
      if (w.state != WaitState::kSpinning || sched_.task(w.tid).state != TaskState::kRunning) {
        continue;
      }
      if (lock.owner < 0 || lock.owner == w.tid) {
        sched_.replace_work(w.tid, 0);  // takes it at its segment's end
      } else if (!owner_running(lock)) {
        to_sleep.push_back(w.tid);
      }
    }
    for (int tid : to_sleep) {
      Waiter* w = find_waiter(lock, tid);
      stop_spin(*w);
      sleep(lock, *w);
    }
  }
  update_episodes(lock);
}

// Most calls find no waiter and no open episode, and so nothing to do: that case is decided
// inline, without the call.
inline void KernelLocks::update_episodes(Lock& lock) {
  if (lock.waiters.empty() && lock.preempted_since < 0 && lock.inversion_since < 0) return;
  update_open_episodes(lock);
}

void KernelLocks::update_open_episodes(Lock& lock) {
  const SimTime now = sched_.now();
  bool preempted = false;
  bool inverted = false;
  if (lock.owner >= 0 && sched_.task(lock.owner).state == TaskState::kRunnable &&
      !lock.waiters.empty()) {
    preempted = true;
    const int owner_prio = sched_.task(lock.owner).prio();
    for (const Waiter& w : lock.waiters) {
      if (sched_.task(w.tid).prio() < owner_prio) inverted = true;
    }
  }
  LockStats& s = *lock.stats;
  if (preempted && lock.preempted_since < 0) {
    lock.preempted_since = now;
    ++s.owner_preempted;
  } else if (!preempted && lock.preempted_since >= 0) {
    s.owner_preempted_ns += now - lock.preempted_since;
    lock.preempted_since = -1;
  }
  if (inverted && lock.inversion_since < 0) {
    lock.inversion_since = now;
    ++s.inversions;
  } else if (!inverted && lock.inversion_since >= 0) {
    s.inversion_ns += now - lock.inversion_since;
    lock.inversion_since = -1;
  }
}

}  // namespace bindersim::binder
