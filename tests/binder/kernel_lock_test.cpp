// Behaviour of the kernel locks on the allocator paths: the mutex (optimistic spinning while
// the owner runs, sleeping otherwise, wakeup on unlock, handoff to a starved waiter), the
// queued spinlock (no preemption while held, FIFO grant), trylock, and the statistics of
// lock-holder preemption and priority inversion, on the SA8155P scheduler.
#include "bindersim/binder/kernel_lock.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <map>
#include <utility>
#include <vector>

#include "../sched/sched_fixture.hpp"

namespace bindersim::binder {
namespace {

using engine::kMicrosecond;
using engine::kMillisecond;
using engine::SimTime;
using sched::fixture::fair_params;
using sched::fixture::only;
using sched::fixture::rt_params;

// What a test thread does, step by step.
struct Op {
  enum class Kind { kWork, kLock, kTryLock, kUnlock } kind;
  std::int64_t value = 0;  // work: reference ns; lock and unlock: the harness's lock, 0 first
};
Op work(std::int64_t ns) { return Op{Op::Kind::kWork, ns}; }
Op lock(int which = 0) { return Op{Op::Kind::kLock, which}; }
Op try_lock() { return Op{Op::Kind::kTryLock, 0}; }
Op unlock(int which = 0) { return Op{Op::Kind::kUnlock, which}; }

// A scheduler, one lock (more with add_lock()), and threads that run scripts of work, lock and
// unlock, then block. Granted and released times are a thread's last, whatever the lock.
// With `run_through`, work followed by taking the lock and working under it runs as one
// segment with the lock claimed (KernelLocks::claim), as the driver does.
class LockHarness final : public sched::TaskOwner, public LockClient {
 public:
  explicit LockHarness(LockKind kind, bool run_through = false)
      : run_through_(run_through),
        topology_(sched::fixture::load_sa8155p()),
        context_(topology_, 1),
        cost_(topology_),
        placement_("mainline"),
        sched_(context_, cost_, placement_, sched::SchedTunables{}),
        locks_(context_, sched_, *this),
        timer_(context_.engine) {
    sched_.set_owner(*this);
    lock_ = locks_.add(kind, stats_);
    lock_ids_.push_back(lock_);
  }

  // Another lock, for lock(n) and unlock(n) with the n returned (the first lock is 0).
  int add_lock(LockKind kind) {
    lock_ids_.push_back(locks_.add(kind, more_stats_.emplace_back()));
    return static_cast<int>(lock_ids_.size()) - 1;
  }

  // A thread that starts at `start` (woken on its allowed CPU) and runs `script`.
  int thread(const sched::TaskParams& params, SimTime start, std::vector<Op> script) {
    const int tid = sched_.create_task(params);
    scripts_[tid] = Script{std::move(script), 0};
    timer_.at(start, [this, tid] {
      sched_.run(tid, 0);
      sched_.wake_new(tid, -1);
    });
    return tid;
  }
  void run_until(SimTime time) {
    timer_.at(time, [] {});
    context_.engine.run(time);
  }

  // sched::TaskOwner
  void on_work_done(int tid) override {
    if (locks_.waiting(tid)) {
      locks_.on_work_done(tid);
      return;
    }
    settle(tid);
    advance(tid);
  }
  engine::SimTime on_resume(int /*tid*/, int /*cpu*/) override { return 0; }
  void on_switch(int tid, bool running) override { locks_.on_switch(tid, running); }
  void settle(int tid) override {
    if (locks_.has_claim(tid)) locks_.settle(tid);
  }
  // LockClient
  void on_lock_granted(int tid, int /*lock*/) override {
    granted_at_[tid] = sched_.now();
    advance(tid);
  }
  void on_claim_dropped(int tid, int /*lock*/) override {
    scripts_.at(tid).next = claim_step_.at(tid);
  }
  void on_claim_cut(int tid, int /*lock*/) override {
    scripts_.at(tid).next = claim_step_.at(tid) + 2;  // the first release
  }

  const LockStats& stats() const { return stats_; }
  const LockStats& stats(int which) const {
    return which == 0 ? stats_ : more_stats_.at(static_cast<std::size_t>(which) - 1);
  }
  sched::Scheduler& sched() { return sched_; }
  KernelLocks& locks() { return locks_; }
  int lock_id() const { return lock_; }
  SimTime granted_at(int tid) const { return granted_at_.at(tid); }
  SimTime released_at(int tid) const { return released_at_.at(tid); }
  bool has_granted(int tid) const { return granted_at_.count(tid) != 0; }
  bool try_failed(int tid) const { return try_failed_.count(tid) != 0; }
  SimTime finished_at(int tid) const { return finished_at_.at(tid); }
  std::uint64_t events() const { return context_.engine.events_dispatched(); }
  // Every time recorded, by thread: granted, released, finished (-1: never).
  std::map<int, std::vector<SimTime>> times() const {
    std::map<int, std::vector<SimTime>> all;
    for (const auto& [tid, script] : scripts_) {
      for (const auto* map : {&granted_at_, &released_at_, &finished_at_}) {
        const auto it = map->find(tid);
        all[tid].push_back(it == map->end() ? -1 : it->second);
      }
    }
    return all;
  }

 private:
  struct Script {
    std::vector<Op> ops;
    std::size_t next = 0;
  };
  // As Driver::run_work: work, then taking the lock and working under it (and then releasing
  // it, taking it again and working under it once more) run as one segment with the lock
  // claimed. False when the script does not go on so or the lock cannot be claimed.
  bool run_through(int tid, Script& s, std::int64_t work_before) {
    const auto is = [&s](std::size_t ahead, Op::Kind kind) {
      return s.next + ahead < s.ops.size() && s.ops[s.next + ahead].kind == kind &&
             (kind != Op::Kind::kWork || s.ops[s.next + ahead].value > 0);
    };
    if (!is(0, Op::Kind::kLock) || s.ops[s.next].value != 0 || !is(1, Op::Kind::kWork)) {
      return false;
    }
    const bool relock =
        is(2, Op::Kind::kUnlock) && is(3, Op::Kind::kLock) && is(4, Op::Kind::kWork);
    const std::int64_t relock_work = relock ? s.ops[s.next + 4].value : 0;
    const std::int64_t locked_work = s.ops[s.next + 1].value + relock_work;
    if (!locks_.claim(tid, lock_, locked_work, relock_work)) return false;
    claim_step_[tid] = s.next;
    sched_.run(tid, work_before + locked_work);
    s.next += relock ? 5 : 2;
    return true;
  }
  void advance(int tid) {
    Script& s = scripts_.at(tid);
    while (s.next < s.ops.size()) {
      const Op op = s.ops[s.next++];
      switch (op.kind) {
        case Op::Kind::kWork:
          if (!run_through_ || !run_through(tid, s, op.value)) sched_.run(tid, op.value);
          return;
        case Op::Kind::kLock:
          if (!locks_.acquire(tid, lock_ids_.at(static_cast<std::size_t>(op.value)))) return;
          granted_at_[tid] = sched_.now();
          break;
        case Op::Kind::kTryLock:
          if (locks_.try_acquire(tid, lock_)) {
            granted_at_[tid] = sched_.now();
          } else {
            try_failed_[tid] = true;
            s.next = s.ops.size();  // gives up
          }
          break;
        case Op::Kind::kUnlock:
          // A claimed lock may have been taken in the past: its time is the lock's.
          if (run_through_) granted_at_[tid] = locks_.owned_since(lock_);
          released_at_[tid] = sched_.now();
          if (locks_.release(tid, lock_ids_.at(static_cast<std::size_t>(op.value)))) {
            sched_.run(tid, 1000);  // waking a waiter costs the releaser
            return;
          }
          break;
      }
    }
    finished_at_[tid] = sched_.now();
    sched_.block(tid);
  }

  bool run_through_ = false;
  topology::Topology topology_;
  engine::SimContext context_;
  cost::CostModel cost_;
  sched::fixture::RecordingPlacement placement_;
  sched::Scheduler sched_;
  LockStats stats_;
  KernelLocks locks_;
  sched::fixture::Timer timer_;
  int lock_ = -1;
  std::vector<int> lock_ids_;         // by harness index: KernelLocks' ids
  std::deque<LockStats> more_stats_;  // of the locks after the first
  std::map<int, Script> scripts_;
  std::map<int, SimTime> granted_at_;
  std::map<int, SimTime> released_at_;
  std::map<int, SimTime> finished_at_;
  std::map<int, bool> try_failed_;
  std::map<int, std::size_t> claim_step_;  // with a claim: the script's lock step
};

constexpr int kGold0 = 4;
constexpr int kGold1 = 5;
constexpr int kGold2 = 6;
constexpr int kPrimeCpu = 7;

TEST(KernelLockTest, UncontendedMutexIsTakenAtOnce) {
  // A free mutex is taken without waiting: one acquisition, not contended, its hold time the
  // work done under it.
  LockHarness h(LockKind::kMutex);
  const int a = h.thread(fair_params("a", 0, only(kGold0)), 0,
                         {work(10 * kMicrosecond), lock(), work(50 * kMicrosecond), unlock()});
  h.run_until(10 * kMillisecond);
  EXPECT_EQ(h.stats().acquisitions, 1U);
  EXPECT_EQ(h.stats().contended, 0U);
  EXPECT_EQ(h.stats().wait_ns.count(), 0U);
  ASSERT_EQ(h.stats().hold_ns.count(), 1U);
  EXPECT_EQ(h.released_at(a) - h.granted_at(a), h.stats().hold_ns.max());
  EXPECT_GE(h.stats().hold_ns.max(), 50 * kMicrosecond);
  EXPECT_EQ(h.locks().owner(h.lock_id()), -1);
}

TEST(KernelLockTest, MutexWaiterSpinsWhileTheOwnerRunsAndTakesTheLockAtTheUnlock) {
  // The owner runs on gold 0 for 200 us under the lock; a waiter on gold 1 arrives while it
  // runs: it spins (never sleeps), burning its CPU, and holds the lock at the owner's unlock.
  LockHarness h(LockKind::kMutex);
  const int owner = h.thread(fair_params("owner", 0, only(kGold0)), 0,
                             {lock(), work(200 * kMicrosecond), unlock()});
  const int waiter = h.thread(fair_params("waiter", 0, only(kGold1)), 50 * kMicrosecond,
                              {lock(), work(10 * kMicrosecond), unlock()});
  h.run_until(10 * kMillisecond);
  ASSERT_TRUE(h.has_granted(waiter));
  EXPECT_EQ(h.granted_at(waiter), h.released_at(owner));
  EXPECT_EQ(h.stats().contended, 1U);
  EXPECT_EQ(h.stats().sleeps, 0U);
  // It spun from its attempt to the grant: most of the owner's 200 us.
  EXPECT_GT(h.stats().spin_ns, 100 * kMicrosecond);
  EXPECT_LE(h.stats().spin_ns, h.granted_at(waiter) - 50 * kMicrosecond);
  ASSERT_EQ(h.stats().wait_ns.count(), 1U);
  EXPECT_GE(h.stats().wait_ns.max(), h.stats().spin_ns);
  EXPECT_EQ(h.stats().owner_preempted, 0U);
}

TEST(KernelLockTest, MutexSpinnerKeepsSpinningPastItsStretchWhileTheOwnerRuns) {
  // The owner runs on gold 0 for 3 ms under the lock, longer than a spinner's 1 ms stretch
  // (KernelLocks::kSpinChunkRefNs). The waiter (gold 1, from 50 us) reaches the end of its
  // stretches with the owner still running: it spins another stretch each time, never
  // sleeps, and takes the lock at the owner's unlock, having spun over 2.5 ms.
  LockHarness h(LockKind::kMutex);
  const int owner = h.thread(fair_params("owner", 0, only(kGold0)), 0,
                             {lock(), work(3 * kMillisecond), unlock()});
  const int waiter = h.thread(fair_params("waiter", 0, only(kGold1)), 50 * kMicrosecond,
                              {lock(), work(10 * kMicrosecond), unlock()});
  h.run_until(20 * kMillisecond);
  ASSERT_TRUE(h.has_granted(waiter));
  ASSERT_GT(h.released_at(owner), 50 * kMicrosecond + 2 * KernelLocks::kSpinChunkRefNs);
  EXPECT_EQ(h.stats().sleeps, 0U);
  EXPECT_EQ(h.granted_at(waiter), h.released_at(owner));
  EXPECT_GT(h.stats().spin_ns, 2500 * kMicrosecond);
}

TEST(KernelLockTest, PreemptedMutexOwnerSendsSpinnersToSleepAndCountsAnInversion) {
  // A nice-0 owner on gold 0 is preempted by an RT task for 300 us while it holds the mutex.
  // The nice -10 waiter on gold 1 stops spinning and sleeps (mutex_spin_on_owner gives up when
  // the owner is off the CPU): one lock-holder preemption and, since the waiter has the
  // higher priority, one inversion lasting as long as the preemption.
  LockHarness h(LockKind::kMutex);
  const int owner = h.thread(fair_params("owner", 0, only(kGold0)), 0,
                             {lock(), work(100 * kMicrosecond), unlock()});
  const int waiter = h.thread(fair_params("waiter", -10, only(kGold1)), 20 * kMicrosecond,
                              {lock(), work(10 * kMicrosecond), unlock()});
  h.thread(rt_params("rt", 50, only(kGold0)), 40 * kMicrosecond, {work(300 * kMicrosecond)});
  h.run_until(10 * kMillisecond);
  ASSERT_TRUE(h.has_granted(waiter));
  EXPECT_EQ(h.stats().sleeps, 1U);
  EXPECT_EQ(h.stats().owner_preempted, 1U);
  EXPECT_EQ(h.stats().inversions, 1U);
  // The episode lasts while the RT task runs: about 300 us (its switch costs aside).
  EXPECT_GE(h.stats().inversion_ns, 300 * kMicrosecond);
  EXPECT_LT(h.stats().inversion_ns, 400 * kMicrosecond);
  EXPECT_EQ(h.stats().inversion_ns, h.stats().owner_preempted_ns);
  // The waiter sleeps: the owner's unlock wakes it, after the RT task is done.
  EXPECT_GT(h.granted_at(waiter), h.released_at(owner));
  EXPECT_GT(h.released_at(owner), 340 * kMicrosecond);
}

TEST(KernelLockTest, EqualPriorityWaiterIsLockHolderPreemptionButNoInversion) {
  // The same preemption with a waiter of the owner's own priority: an episode of lock-holder
  // preemption, no priority inversion.
  LockHarness h(LockKind::kMutex);
  h.thread(fair_params("owner", 0, only(kGold0)), 0, {lock(), work(100 * kMicrosecond), unlock()});
  h.thread(fair_params("waiter", 0, only(kGold1)), 20 * kMicrosecond,
           {lock(), work(10 * kMicrosecond), unlock()});
  h.thread(rt_params("rt", 50, only(kGold0)), 40 * kMicrosecond, {work(300 * kMicrosecond)});
  h.run_until(10 * kMillisecond);
  EXPECT_EQ(h.stats().owner_preempted, 1U);
  EXPECT_GE(h.stats().owner_preempted_ns, 300 * kMicrosecond);
  EXPECT_EQ(h.stats().inversions, 0U);
  EXPECT_EQ(h.stats().inversion_ns, 0);
}

TEST(KernelLockTest, SpinlockOwnerIsNotPreemptedUntilItUnlocks) {
  // Preemption is disabled while a spinlock is held: an RT task woken on the owner's CPU
  // while it holds the lock runs only once the lock is released. With a mutex it runs at
  // once and the owner waits.
  for (const LockKind kind : {LockKind::kSpinlock, LockKind::kMutex}) {
    LockHarness h(kind);
    const int owner =
        h.thread(fair_params("owner", 0, only(kGold0)), 0,
                 {lock(), work(200 * kMicrosecond), unlock(), work(50 * kMicrosecond)});
    const int rt =
        h.thread(rt_params("rt", 50, only(kGold0)), 50 * kMicrosecond, {work(100 * kMicrosecond)});
    h.run_until(10 * kMillisecond);
    if (kind == LockKind::kSpinlock) {
      EXPECT_GE(h.finished_at(rt), h.released_at(owner) + 100 * kMicrosecond);
      EXPECT_LT(h.released_at(owner), 260 * kMicrosecond);
    } else {
      EXPECT_LT(h.finished_at(rt), 200 * kMicrosecond);
      EXPECT_GT(h.released_at(owner), 300 * kMicrosecond);
    }
    EXPECT_EQ(h.sched().task(owner).preempt_count, 0);
  }
}

TEST(KernelLockTest, SpinlockWaitersSpinAndAreGrantedInArrivalOrder) {
  // Two waiters spin on a held spinlock; the one that arrived first gets it first, the second
  // at the first's unlock. Nobody sleeps; all the waiting is spinning.
  LockHarness h(LockKind::kSpinlock);
  const int owner = h.thread(fair_params("owner", 0, only(kGold0)), 0,
                             {lock(), work(100 * kMicrosecond), unlock()});
  const int first = h.thread(fair_params("first", 0, only(kGold1)), 20 * kMicrosecond,
                             {lock(), work(30 * kMicrosecond), unlock()});
  const int second = h.thread(fair_params("second", 0, only(kGold2)), 30 * kMicrosecond,
                              {lock(), work(30 * kMicrosecond), unlock()});
  h.run_until(10 * kMillisecond);
  EXPECT_EQ(h.granted_at(first), h.released_at(owner));
  EXPECT_EQ(h.granted_at(second), h.released_at(first));
  EXPECT_EQ(h.stats().sleeps, 0U);
  EXPECT_EQ(h.stats().contended, 2U);
  EXPECT_EQ(h.stats().acquisitions, 3U);
  ASSERT_EQ(h.stats().wait_ns.count(), 2U);
  // Spinning covers the waits (less the switch-in stalls before each started spinning).
  const SimTime waits = static_cast<SimTime>(h.stats().wait_ns.sum());
  EXPECT_LE(h.stats().spin_ns, waits);
  EXPECT_GT(h.stats().spin_ns, waits - 20 * kMicrosecond);
}

TEST(KernelLockTest, TrylockFailsOnAHeldLockAndSucceedsOnAFreeOne) {
  // mutex_trylock(): fails (and is counted) while another thread holds the lock, succeeds once
  // it is free; it never waits.
  LockHarness h(LockKind::kMutex);
  h.thread(fair_params("owner", 0, only(kGold0)), 0, {lock(), work(100 * kMicrosecond), unlock()});
  const int early = h.thread(fair_params("early", 0, only(kGold1)), 20 * kMicrosecond,
                             {try_lock(), work(5 * kMicrosecond), unlock()});
  const int late = h.thread(fair_params("late", 0, only(kGold2)), 500 * kMicrosecond,
                            {try_lock(), work(5 * kMicrosecond), unlock()});
  h.run_until(10 * kMillisecond);
  EXPECT_TRUE(h.try_failed(early));
  EXPECT_FALSE(h.has_granted(early));
  EXPECT_FALSE(h.try_failed(late));
  EXPECT_TRUE(h.has_granted(late));
  EXPECT_EQ(h.stats().trylock_failures, 1U);
  EXPECT_EQ(h.stats().contended, 0U);
  EXPECT_EQ(h.stats().acquisitions, 2U);
}

// The owner (gold 0) takes the mutex for 100 us of work; A (gold 1) asks for it at 20 us; an RT
// task preempts the owner at 40 us for 300 us of work (about 350 us on gold), so A, finding the
// owner off its CPU, sleeps on the mutex. Returns (owner, A).
std::pair<int, int> owner_preempted_while_a_sleeps(LockHarness& h) {
  const int owner = h.thread(fair_params("owner", 0, only(kGold0)), 0,
                             {lock(), work(100 * kMicrosecond), unlock()});
  const int a = h.thread(fair_params("a", 0, only(kGold1)), 20 * kMicrosecond,
                         {lock(), work(10 * kMicrosecond), unlock()});
  h.thread(rt_params("rt", 50, only(kGold0)), 40 * kMicrosecond, {work(300 * kMicrosecond)});
  return {owner, a};
}

TEST(KernelLockTest, MutexTrylockTakesAnUnownedMutexThatWaitersAreQueuedOn) {
  // mutex_trylock() fails only on an owned mutex or one being handed off: a sleeping waiter
  // queued on a free mutex does not stop it. A sleeps on the mutex while the owner is preempted
  // by an RT task; an RT task on A's CPU then keeps A from running once the owner's unlock has
  // woken it. The trylock in that window takes the mutex; A gets it after the trylock's unlock.
  LockHarness h(LockKind::kMutex);
  const auto [owner, a] = owner_preempted_while_a_sleeps(h);
  h.thread(rt_params("rt-a", 50, only(kGold1)), 200 * kMicrosecond, {work(2000 * kMicrosecond)});
  const int tryer = h.thread(fair_params("tryer", 0, only(sched::fixture::kPrime)),
                             1000 * kMicrosecond, {try_lock(), work(5 * kMicrosecond), unlock()});
  h.run_until(20 * kMillisecond);
  ASSERT_TRUE(h.has_granted(owner) && h.has_granted(a));
  ASSERT_LT(h.released_at(owner), 1000 * kMicrosecond);  // A was woken before the trylock
  EXPECT_FALSE(h.try_failed(tryer));
  ASSERT_TRUE(h.has_granted(tryer));
  EXPECT_GT(h.granted_at(tryer), h.released_at(owner));
  EXPECT_GE(h.granted_at(a), h.released_at(tryer));
  EXPECT_EQ(h.stats().trylock_failures, 0U);
  EXPECT_EQ(h.stats().sleeps, 1U);
}

TEST(KernelLockTest, WokenWaiterBeatenByASpinnerGetsTheLockHandedOff) {
  // A sleeps on the mutex while the owner is preempted by an RT task (on gold, 300 us of
  // reference work take about 350 us). C arrives once the owner runs again and spins; at the
  // owner's unlock C, running, takes the lock while A is only being woken. A, beaten, asks for
  // a handoff and spins; D arrives later and spins too. At C's unlock the lock goes to A,
  // not to D: one handoff.
  LockHarness h(LockKind::kMutex);
  const auto [owner, a] = owner_preempted_while_a_sleeps(h);
  const int c = h.thread(fair_params("c", 0, only(sched::fixture::kPrime)), 450 * kMicrosecond,
                         {lock(), work(100 * kMicrosecond), unlock()});
  const int d = h.thread(fair_params("d", 0, only(sched::fixture::kSilver0)), 520 * kMicrosecond,
                         {lock(), work(10 * kMicrosecond), unlock()});
  h.run_until(20 * kMillisecond);
  ASSERT_TRUE(h.has_granted(a) && h.has_granted(c) && h.has_granted(d));
  EXPECT_EQ(h.granted_at(c), h.released_at(owner));
  EXPECT_EQ(h.granted_at(a), h.released_at(c));
  EXPECT_GT(h.granted_at(d), h.granted_at(a));
  EXPECT_EQ(h.stats().handoffs, 1U);
  EXPECT_EQ(h.stats().sleeps, 1U);  // A only: C and D found the owner running
}

TEST(KernelLockTest, HandoffTargetPreemptedAtTheUnlockTakesTheLockAsSoonAsItRunsAgain) {
  // A sleeps on the mutex while the owner is preempted; C (prime, from 450 us) spins, takes the
  // mutex at the owner's unlock (about 480 us) and holds it for 300 us. A, woken and beaten,
  // asks for a handoff and spins. An RT task on A's CPU preempts it at 600 us for about
  // 350 us, so at C's unlock (about 780 us) the mutex is handed to A while A is off its CPU.
  // A takes it as soon as it runs again, within 20 us of the RT task's end, not at the end of
  // its 1 ms spin stretch (after 2 ms).
  LockHarness h(LockKind::kMutex);
  const auto [owner, a] = owner_preempted_while_a_sleeps(h);
  const int c = h.thread(fair_params("c", 0, only(sched::fixture::kPrime)), 450 * kMicrosecond,
                         {lock(), work(300 * kMicrosecond), unlock()});
  const int rt =
      h.thread(rt_params("rt-a", 50, only(kGold1)), 600 * kMicrosecond, {work(300 * kMicrosecond)});
  h.run_until(20 * kMillisecond);
  ASSERT_TRUE(h.has_granted(a) && h.has_granted(c));
  ASSERT_EQ(h.granted_at(c), h.released_at(owner));
  ASSERT_LT(h.granted_at(c), 600 * kMicrosecond);  // A beaten before
  ASSERT_GT(h.finished_at(rt), h.released_at(c));  // preempted at unlock
  EXPECT_EQ(h.stats().handoffs, 1U);
  EXPECT_GT(h.granted_at(a), h.finished_at(rt));
  EXPECT_LT(h.granted_at(a), h.finished_at(rt) + 20 * kMicrosecond);
}

TEST(KernelLockTest, MutexWaiterArrivingWhileTheOwnerIsOffItsCpuSleepsWithoutSpinning) {
  // The owner (gold 0) holds the mutex when an RT task preempts it at 40 us for about 350 us.
  // The waiter asks for the mutex at 100 us, with the owner off its CPU: it goes to sleep at
  // once (mutex_spin_on_owner does not start), not a nanosecond of spinning, and the owner's
  // unlock wakes it.
  LockHarness h(LockKind::kMutex);
  const int owner = h.thread(fair_params("owner", 0, only(kGold0)), 0,
                             {lock(), work(100 * kMicrosecond), unlock()});
  h.thread(rt_params("rt", 50, only(kGold0)), 40 * kMicrosecond, {work(300 * kMicrosecond)});
  const int waiter = h.thread(fair_params("waiter", 0, only(kGold1)), 100 * kMicrosecond,
                              {lock(), work(10 * kMicrosecond), unlock()});
  h.run_until(10 * kMillisecond);
  ASSERT_TRUE(h.has_granted(waiter));
  EXPECT_EQ(h.stats().contended, 1U);
  EXPECT_EQ(h.stats().sleeps, 1U);
  EXPECT_EQ(h.stats().spin_ns, 0);
  EXPECT_GT(h.granted_at(waiter), h.released_at(owner));  // woken, not spinning at the unlock
}

TEST(KernelLockTest, MutexUnlockWakesOnlyTheFirstSleeper) {
  // While the owner (gold 0) is preempted by an RT task from 40 us, A (gold 1, at 100 us) and
  // then B (gold 2, at 150 us) ask for the mutex and sleep on it. The owner's unlock wakes A
  // alone, which takes the mutex; B sleeps on until A's unlock wakes it. No one spins, and
  // there is nothing to hand off: B was never woken to be beaten.
  LockHarness h(LockKind::kMutex);
  h.thread(fair_params("owner", 0, only(kGold0)), 0, {lock(), work(100 * kMicrosecond), unlock()});
  h.thread(rt_params("rt", 50, only(kGold0)), 40 * kMicrosecond, {work(300 * kMicrosecond)});
  const int a = h.thread(fair_params("a", 0, only(kGold1)), 100 * kMicrosecond,
                         {lock(), work(50 * kMicrosecond), unlock()});
  const int b = h.thread(fair_params("b", 0, only(kGold2)), 150 * kMicrosecond,
                         {lock(), work(10 * kMicrosecond), unlock()});
  h.run_until(10 * kMillisecond);
  ASSERT_TRUE(h.has_granted(a) && h.has_granted(b));
  EXPECT_EQ(h.stats().sleeps, 2U);
  EXPECT_LT(h.granted_at(a), h.granted_at(b));
  EXPECT_GT(h.granted_at(b), h.released_at(a));  // woken by A's unlock, not spinning at it
  EXPECT_EQ(h.stats().spin_ns, 0);
  EXPECT_EQ(h.stats().handoffs, 0U);
}

// S (gold 1) asks for the mutex at 20 us and spins while the owner (gold 0) runs; an RT task
// preempts S at 40 us for about 1.2 ms, so S stays queued first without ever having slept (it
// is not on the wait list). An RT task preempts the owner at 60 us for about 120 us; W (gold 2)
// asks at 80 us, finds the owner off its CPU and sleeps behind S. The owner unlocks at about
// 360 us.
struct SpinnerAheadOfSleeper {
  int owner = -1;
  int s = -1;
  int rt_s = -1;  // the RT task preempting S
  int w = -1;
};
SpinnerAheadOfSleeper spinner_ahead_of_sleeper(LockHarness& h) {
  SpinnerAheadOfSleeper t;
  t.owner = h.thread(fair_params("owner", 0, only(kGold0)), 0,
                     {lock(), work(200 * kMicrosecond), unlock()});
  t.s = h.thread(fair_params("s", 0, only(kGold1)), 20 * kMicrosecond,
                 {lock(), work(10 * kMicrosecond), unlock()});
  t.rt_s =
      h.thread(rt_params("rt-s", 50, only(kGold1)), 40 * kMicrosecond, {work(1000 * kMicrosecond)});
  h.thread(rt_params("rt-owner", 50, only(kGold0)), 60 * kMicrosecond, {work(100 * kMicrosecond)});
  t.w = h.thread(fair_params("w", 0, only(kGold2)), 80 * kMicrosecond,
                 {lock(), work(10 * kMicrosecond), unlock()});
  return t;
}

TEST(KernelLockTest, MutexUnlockWakesTheSleeperBehindAPreemptedSpinner) {
  // spinner_ahead_of_sleeper(): the owner's unlock wakes W, which takes the mutex within 20 us;
  // S takes it after its RT task, once W is done, not W after S.
  LockHarness h(LockKind::kMutex);
  const auto [owner, s, rt_s, w] = spinner_ahead_of_sleeper(h);
  h.run_until(20 * kMillisecond);
  ASSERT_TRUE(h.has_granted(s) && h.has_granted(w));
  ASSERT_LT(h.released_at(owner), h.finished_at(rt_s));  // S still preempted at the unlock
  EXPECT_EQ(h.stats().sleeps, 1U);                       // W only
  EXPECT_GT(h.granted_at(w), h.released_at(owner));
  EXPECT_LT(h.granted_at(w), h.released_at(owner) + 20 * kMicrosecond);
  EXPECT_GE(h.granted_at(s), h.released_at(w));
}

TEST(KernelLockTest, TheFirstWaiterOnTheWaitListAsksForAHandoffNotASpinnerAheadOfIt) {
  // spinner_ahead_of_sleeper(): S is queued first without ever having slept, and W sleeps
  // behind it. X (prime) asks at 250 us, while the owner runs again, and spins. At the owner's
  // unlock X takes the mutex and W, woken, finds it taken: W is the first waiter on the wait
  // list (S is not on it), so it asks for a handoff, and X's unlock hands the mutex to W.
  LockHarness h(LockKind::kMutex);
  const auto [owner, s, rt_s, w] = spinner_ahead_of_sleeper(h);
  const int x = h.thread(fair_params("x", 0, only(kPrimeCpu)), 250 * kMicrosecond,
                         {lock(), work(10 * kMicrosecond), unlock()});
  h.run_until(20 * kMillisecond);
  ASSERT_TRUE(h.has_granted(s) && h.has_granted(w) && h.has_granted(x));
  ASSERT_LT(h.released_at(owner), h.finished_at(rt_s));  // S still preempted at both unlocks
  ASSERT_LT(h.released_at(x), h.finished_at(rt_s));
  EXPECT_EQ(h.granted_at(x), h.released_at(owner));
  EXPECT_EQ(h.stats().handoffs, 1U);
  EXPECT_EQ(h.granted_at(w), h.released_at(x));
  EXPECT_GE(h.granted_at(s), h.released_at(w));
}

TEST(KernelLockTest, OwnerStillHoldingAnotherLockIsWatchedForPreemption) {
  // The owner (gold 0) takes mutex 0 and then mutex 1, releases 1 after 20 us and holds 0 for
  // 100 us more. The waiter (gold 1) asks for mutex 0 at 50 us and spins while the owner runs.
  // An RT task preempts the owner at 80 us for about 350 us: the waiter sees the owner of
  // mutex 0 go off its CPU and sleeps after about 30 us of spinning, not spinning on for the
  // 350 us; the preemption is one lock-holder preemption episode of at least 300 us.
  LockHarness h(LockKind::kMutex);
  const int second = h.add_lock(LockKind::kMutex);
  const int owner = h.thread(fair_params("owner", 0, only(kGold0)), 0,
                             {lock(), lock(second), work(20 * kMicrosecond), unlock(second),
                              work(100 * kMicrosecond), unlock()});
  const int waiter = h.thread(fair_params("waiter", 0, only(kGold1)), 50 * kMicrosecond,
                              {lock(), work(10 * kMicrosecond), unlock()});
  h.thread(rt_params("rt", 50, only(kGold0)), 80 * kMicrosecond, {work(300 * kMicrosecond)});
  h.run_until(10 * kMillisecond);
  ASSERT_TRUE(h.has_granted(waiter));
  ASSERT_GT(h.released_at(owner), 380 * kMicrosecond);
  EXPECT_EQ(h.stats(second).acquisitions, 1U);
  EXPECT_EQ(h.stats().sleeps, 1U);
  EXPECT_LT(h.stats().spin_ns, 50 * kMicrosecond);
  EXPECT_EQ(h.stats().owner_preempted, 1U);
  EXPECT_GE(h.stats().owner_preempted_ns, 300 * kMicrosecond);
  EXPECT_GT(h.granted_at(waiter), h.released_at(owner));  // woken, not spinning at the unlock
}

// --- running through a lock (KernelLocks::claim) -------------------------------------------

// A script of threads, run step by step and with claims: both must give the same lock
// history. Times may differ by rounding (the segments' work is converted to time in one piece
// instead of two): up to a few nanoseconds.
struct RunThroughCase {
  const char* name;
  LockKind kind;
  void (*script)(LockHarness& h);
};

void expect_same_history(const RunThroughCase& c) {
  LockHarness steps(c.kind, false);
  LockHarness claims(c.kind, true);
  c.script(steps);
  c.script(claims);
  steps.run_until(20 * kMillisecond);
  claims.run_until(20 * kMillisecond);
  const auto a = steps.times();
  const auto b = claims.times();
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [tid, times] : a) {
    for (std::size_t i = 0; i < times.size(); ++i) {
      EXPECT_NEAR(static_cast<double>(times[i]), static_cast<double>(b.at(tid)[i]), 4.0)
          << c.name << ": thread " << tid << ", time " << i;
    }
  }
  const LockStats& x = steps.stats();
  const LockStats& y = claims.stats();
  EXPECT_EQ(x.acquisitions, y.acquisitions) << c.name;
  EXPECT_EQ(x.contended, y.contended) << c.name;
  EXPECT_EQ(x.sleeps, y.sleeps) << c.name;
  EXPECT_EQ(x.handoffs, y.handoffs) << c.name;
  EXPECT_EQ(x.trylock_failures, y.trylock_failures) << c.name;
  EXPECT_EQ(x.owner_preempted, y.owner_preempted) << c.name;
  EXPECT_EQ(x.inversions, y.inversions) << c.name;
  EXPECT_NEAR(static_cast<double>(x.owner_preempted_ns), static_cast<double>(y.owner_preempted_ns),
              8.0)
      << c.name;
  EXPECT_NEAR(static_cast<double>(x.spin_ns), static_cast<double>(y.spin_ns), 8.0) << c.name;
  EXPECT_EQ(x.hold_ns.count(), y.hold_ns.count()) << c.name;
  EXPECT_NEAR(static_cast<double>(x.hold_ns.sum()), static_cast<double>(y.hold_ns.sum()), 8.0)
      << c.name;
  EXPECT_EQ(x.wait_ns.count(), y.wait_ns.count()) << c.name;
  EXPECT_NEAR(static_cast<double>(x.wait_ns.sum()), static_cast<double>(y.wait_ns.sum()), 8.0)
      << c.name;
}

// The owner works 40 us, takes the lock and works 100 us under it, then 20 us more.
int owner_with_work_before(LockHarness& h, int nice = 0) {
  return h.thread(fair_params("owner", nice, only(kGold0)), 0,
                  {work(40 * kMicrosecond), lock(), work(100 * kMicrosecond), unlock(),
                   work(20 * kMicrosecond)});
}

// The owner works 40 us, then holds the lock twice in a row (as binder's free path does): 40 us
// under it, released and taken again at once, 60 us under it; then 20 us more.
int owner_holding_twice(LockHarness& h) {
  return h.thread(fair_params("owner", 0, only(kGold0)), 0,
                  {work(40 * kMicrosecond), lock(), work(40 * kMicrosecond), unlock(), lock(),
                   work(60 * kMicrosecond), unlock(), work(20 * kMicrosecond)});
}

TEST(KernelLockRunThroughTest, ClaimedLocksHaveTheStepByStepHistory) {
  const RunThroughCase cases[] = {
      {"uncontended", LockKind::kMutex, [](LockHarness& h) { owner_with_work_before(h); }},
      {"another thread takes it before the owner gets there", LockKind::kMutex,
       [](LockHarness& h) {
         owner_with_work_before(h);
         h.thread(fair_params("early", 0, only(kGold1)), 5 * kMicrosecond,
                  {lock(), work(80 * kMicrosecond), unlock()});
       }},
      {"a waiter arrives while the owner holds it (mutex)", LockKind::kMutex,
       [](LockHarness& h) {
         owner_with_work_before(h);
         h.thread(fair_params("waiter", 0, only(kGold1)), 90 * kMicrosecond,
                  {lock(), work(10 * kMicrosecond), unlock()});
       }},
      {"a waiter arrives while the owner holds it (spinlock)", LockKind::kSpinlock,
       [](LockHarness& h) {
         owner_with_work_before(h);
         h.thread(fair_params("waiter", 0, only(kGold1)), 90 * kMicrosecond,
                  {work(5 * kMicrosecond), lock(), work(10 * kMicrosecond), unlock()});
       }},
      {"a trylock while the owner holds it", LockKind::kMutex,
       [](LockHarness& h) {
         owner_with_work_before(h);
         h.thread(fair_params("try", 0, only(kGold1)), 90 * kMicrosecond,
                  {try_lock(), work(5 * kMicrosecond), unlock()});
       }},
      {"an RT task preempts the owner before the lock", LockKind::kSpinlock,
       [](LockHarness& h) {
         owner_with_work_before(h);
         h.thread(rt_params("rt", 50, only(kGold0)), 10 * kMicrosecond, {work(100 * kMicrosecond)});
       }},
      {"an RT task waits for the spinlock holder", LockKind::kSpinlock,
       [](LockHarness& h) {
         owner_with_work_before(h);
         h.thread(rt_params("rt", 50, only(kGold0)), 80 * kMicrosecond, {work(100 * kMicrosecond)});
       }},
      {"an RT task preempts the mutex holder; a higher-priority waiter sleeps", LockKind::kMutex,
       [](LockHarness& h) {
         owner_with_work_before(h);
         h.thread(fair_params("waiter", -10, only(kGold1)), 100 * kMicrosecond,
                  {lock(), work(10 * kMicrosecond), unlock()});
         h.thread(rt_params("rt", 50, only(kGold0)), 80 * kMicrosecond, {work(300 * kMicrosecond)});
       }},
      {"two claimants in turn", LockKind::kMutex,
       [](LockHarness& h) {
         owner_with_work_before(h);
         h.thread(fair_params("second", 0, only(kGold1)), 30 * kMicrosecond,
                  {work(40 * kMicrosecond), lock(), work(30 * kMicrosecond), unlock()});
       }},
  };
  for (const RunThroughCase& c : cases) expect_same_history(c);
}

TEST(KernelLockRunThroughTest, ClaimsThroughTwoHoldsHaveTheStepByStepHistory) {
  // The owner's first hold is 40-80 us after its start, the second 80-140 us (at full speed).
  const RunThroughCase cases[] = {
      {"uncontended", LockKind::kMutex, [](LockHarness& h) { owner_holding_twice(h); }},
      {"another thread takes it before the owner gets there", LockKind::kMutex,
       [](LockHarness& h) {
         owner_holding_twice(h);
         h.thread(fair_params("early", 0, only(kGold1)), 5 * kMicrosecond,
                  {lock(), work(80 * kMicrosecond), unlock()});
       }},
      {"a waiter arrives in the first hold (mutex)", LockKind::kMutex,
       [](LockHarness& h) {
         owner_holding_twice(h);
         h.thread(fair_params("waiter", 0, only(kGold1)), 60 * kMicrosecond,
                  {lock(), work(10 * kMicrosecond), unlock()});
       }},
      {"a waiter arrives in the first hold (spinlock)", LockKind::kSpinlock,
       [](LockHarness& h) {
         owner_holding_twice(h);
         h.thread(fair_params("waiter", 0, only(kGold1)), 60 * kMicrosecond,
                  {work(5 * kMicrosecond), lock(), work(10 * kMicrosecond), unlock()});
       }},
      {"a waiter arrives in the second hold (mutex)", LockKind::kMutex,
       [](LockHarness& h) {
         owner_holding_twice(h);
         h.thread(fair_params("waiter", 0, only(kGold1)), 110 * kMicrosecond,
                  {lock(), work(10 * kMicrosecond), unlock()});
       }},
      {"a trylock in the second hold", LockKind::kMutex,
       [](LockHarness& h) {
         owner_holding_twice(h);
         h.thread(fair_params("try", 0, only(kGold1)), 110 * kMicrosecond,
                  {try_lock(), work(5 * kMicrosecond), unlock()});
       }},
      {"an RT task waits for the spinlock holder in its first hold", LockKind::kSpinlock,
       [](LockHarness& h) {
         owner_holding_twice(h);
         h.thread(rt_params("rt", 50, only(kGold0)), 60 * kMicrosecond, {work(100 * kMicrosecond)});
       }},
      {"an RT task waits for the spinlock holder in its second hold", LockKind::kSpinlock,
       [](LockHarness& h) {
         owner_holding_twice(h);
         h.thread(rt_params("rt", 50, only(kGold0)), 110 * kMicrosecond,
                  {work(100 * kMicrosecond)});
       }},
      {"an RT task preempts the mutex holder in its first hold; a waiter sleeps", LockKind::kMutex,
       [](LockHarness& h) {
         owner_holding_twice(h);
         h.thread(fair_params("waiter", -10, only(kGold1)), 70 * kMicrosecond,
                  {lock(), work(10 * kMicrosecond), unlock()});
         h.thread(rt_params("rt", 50, only(kGold0)), 60 * kMicrosecond, {work(300 * kMicrosecond)});
       }},
  };
  for (const RunThroughCase& c : cases) expect_same_history(c);
}

TEST(KernelLockRunThroughTest, AClaimThroughTwoHoldsSavesTwoSegmentEnds) {
  // Uncontended, the work before the lock and the work of both holds end in one event instead
  // of three (each hold ends a segment step by step); both holds are counted, with their
  // lengths.
  LockHarness steps(LockKind::kMutex, false);
  LockHarness claims(LockKind::kMutex, true);
  const int a = owner_holding_twice(steps);
  owner_holding_twice(claims);
  steps.run_until(10 * kMillisecond);
  claims.run_until(10 * kMillisecond);
  EXPECT_EQ(claims.events(), steps.events() - 2);
  EXPECT_EQ(claims.stats().acquisitions, 2U);
  ASSERT_EQ(claims.stats().hold_ns.count(), 2U);
  EXPECT_NEAR(static_cast<double>(claims.stats().hold_ns.sum()),
              static_cast<double>(steps.stats().hold_ns.sum()), 4.0);
  EXPECT_GT(claims.stats().hold_ns.min(), 0);
  EXPECT_LT(claims.stats().hold_ns.min(), claims.stats().hold_ns.max());  // 40 us, then 60 us
  EXPECT_NEAR(static_cast<double>(claims.granted_at(a)), static_cast<double>(steps.granted_at(a)),
              4.0);
  EXPECT_EQ(claims.locks().owner(claims.lock_id()), -1);
  EXPECT_FALSE(claims.locks().has_claim(a));
}

TEST(KernelLockRunThroughTest, AClaimSavesTheSegmentEndAtTheLock) {
  // The uncontended owner: with the claim, the work before the lock and the work under it end
  // in one event instead of two.
  LockHarness steps(LockKind::kMutex, false);
  LockHarness claims(LockKind::kMutex, true);
  const int a = owner_with_work_before(steps);
  owner_with_work_before(claims);
  steps.run_until(10 * kMillisecond);
  claims.run_until(10 * kMillisecond);
  EXPECT_EQ(claims.events(), steps.events() - 1);
  EXPECT_EQ(claims.stats().acquisitions, 1U);
  EXPECT_NEAR(static_cast<double>(claims.granted_at(a)), static_cast<double>(steps.granted_at(a)),
              4.0);
  EXPECT_EQ(claims.locks().owner(claims.lock_id()), -1);
  EXPECT_FALSE(claims.locks().has_claim(a));
  EXPECT_FALSE(claims.sched().task(a).runs_ahead);
}

TEST(KernelLockRunThroughTest, OnlyAFreeUnclaimedLockCanBeClaimed) {
  LockHarness h(LockKind::kMutex);
  const int holder = h.thread(fair_params("holder", 0, only(kGold0)), 0,
                              {lock(), work(500 * kMicrosecond), unlock()});
  const int other = h.thread(fair_params("other", 0, only(kGold1)), 0, {work(500 * kMicrosecond)});
  h.run_until(100 * kMicrosecond);
  EXPECT_FALSE(h.locks().claim(other, h.lock_id(), 10 * kMicrosecond));  // held
  EXPECT_FALSE(h.locks().has_claim(other));
  h.run_until(2 * kMillisecond);
  ASSERT_EQ(h.locks().owner(h.lock_id()), -1);
  EXPECT_FALSE(h.locks().claim(holder, h.lock_id(), 10 * kMicrosecond));  // not running
}

}  // namespace
}  // namespace bindersim::binder
