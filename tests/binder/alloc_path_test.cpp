// The binder allocator on the driver's paths: which process's allocator each side of a call
// uses, page installation inside or outside the allocator mutex, the async budget running out
// (the send fails and is counted), and the shrinker reclaiming freed pages.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>

#include "driver_fixture.hpp"

namespace bindersim::binder::testing {
namespace {

constexpr int kGold0 = 4;
constexpr int kGold1 = 5;

// A server whose looper runs on gold 1 and a client thread on gold 0 that starts at 100 us;
// the tests script what the client does.
struct ServerAndClient {
  explicit ServerAndClient(KernelOptions options = {}) : h("fifo", options) {
    server = h.add_server("server", 0);
    h.pin_loopers("server", {kGold1});
    clients = h.add_client_process();
    client = h.add_thread(clients, "client", kGold0);
    h.user.start_at(client, 100 * kMicrosecond);
  }
  DriverHarness h;
  int server = -1;
  int clients = -1;  // the client's process
  int client = -1;
};

// One two-way call of `payload` bytes from the client to the server, then, after `pause`, a
// second one.
struct TwoCalls : ServerAndClient {
  explicit TwoCalls(KernelOptions options, std::int64_t payload = 0, SimTime pause = kMillisecond)
      : ServerAndClient(options) {
    for (int i = 0; i < 2; ++i) {
      if (i == 1) h.user.then(client, [this, pause](int t) { h.driver.sleep(t, pause, 0); });
      h.user.then(client,
                  [this, payload](int t) { h.driver.call(t, server, 0, payload, false, 10'000); });
    }
    h.run_until(100 * kMillisecond);
  }
};

TEST(AllocPathTest, EachSideAllocatesInThePeerAndFreesInItsOwnProcess) {
  // Per call the request is allocated in the server and freed by the server's looper, the
  // reply allocated in the client and freed by the client at once (it is no looper):
  // two calls take four allocations and four frees. Each allocation takes an allocator lock,
  // each free two (the buffer's lookup, then its free).
  TwoCalls run{KernelOptions{}};
  ASSERT_EQ(run.h.user.replies().size(), 2U);
  const stats::AllocatorStats stats = run.h.driver.allocator_stats();
  EXPECT_EQ(stats.allocations, 4U);
  EXPECT_EQ(run.h.driver.allocator(run.server).allocated_buffers(), 0);
  EXPECT_EQ(run.h.driver.allocator(run.clients).allocated_buffers(), 0);
  EXPECT_EQ(stats.alloc_lock.acquisitions, 4U + 4U * 2U);
  EXPECT_EQ(stats.alloc_lock.contended, 0U);
}

TEST(AllocPathTest, AClientFreesItsReplyBufferBeforeItGoesOnAfterTheCall) {
  // IPCThreadState::flushIfNeeded(): a thread that is no looper sends the BC_FREE_BUFFER of
  // its reply in a write of its own, after the call's latency ends and before its code goes
  // on: when it exits right after, nothing stays allocated, so threads made per call
  // (schd-dbg's) do not fill the buffer space.
  ServerAndClient pair;
  DriverHarness& h = pair.h;
  const int server = pair.server;
  const int clients = pair.clients;
  const int client = pair.client;
  int allocated_on_return = -1;
  h.user.then(client, [&h, server](int t) { h.driver.call(t, server, 0, 64, false, 10'000); });
  h.user.then(client, [&](int t) {
    allocated_on_return = h.driver.allocator(clients).allocated_buffers();
    h.driver.exit_thread(t);
  });
  h.run_until(100 * kMillisecond);
  ASSERT_EQ(h.user.replies().size(), 1U);
  EXPECT_EQ(allocated_on_return, 0);
  EXPECT_LT(h.user.replies()[0].record.finished, h.user.replies()[0].time);  // the free's time
  EXPECT_EQ(h.driver.allocator(server).allocated_buffers(), 0);
  // Two allocations and two frees; a free takes the lock twice.
  EXPECT_EQ(h.driver.allocator_stats().alloc_lock.acquisitions, 2U + 2U * 2U);
  EXPECT_EQ(h.sched.task(client).state, sched::TaskState::kDead);
}

TEST(AllocPathTest, ALooperFreesItsNestedCallsReplyWithItsOwnReply) {
  // A looper that called out while handling a call is serving a transaction: libbinder keeps
  // the BC_FREE_BUFFER of the nested call's reply and sends it with the BC_REPLY that ends the
  // outer call. Nothing stays allocated in any process.
  DriverHarness h("fifo");
  const int q = h.add_server("q", 0);
  const int r = h.add_server("r", 0);
  const int clients = h.add_client_process();
  const int c = h.add_thread(clients, "c", kGold0);
  int allocated_in_q_before_reply = -1;
  h.user.set_handler(q, 0, [&](int tid, int /*txn*/) {
    h.user.then(tid, [&](int t) {
      allocated_in_q_before_reply = h.driver.allocator(q).allocated_buffers();
      h.user.finish(t);
    });
    h.driver.call(tid, r, 0, 64, false, 20 * kMicrosecond);
  });
  h.call_at(c, 10 * kMicrosecond, q, 0);
  h.run_until(10 * kMillisecond);
  ASSERT_EQ(h.user.replies_to(c).size(), 1U);
  // Before the reply: the outer request and the nested call's reply, both in q.
  EXPECT_EQ(allocated_in_q_before_reply, 2);
  EXPECT_EQ(h.driver.allocator(q).allocated_buffers(), 0);
  EXPECT_EQ(h.driver.allocator(r).allocated_buffers(), 0);
  EXPECT_EQ(h.driver.allocator(clients).allocated_buffers(), 0);
  EXPECT_EQ(h.driver.allocator_stats().allocations, 4U);
}

// One call from a client on gold 0 to a server on gold 1 whose libbinder frees the request's
// buffer before it replies (or after).
struct OneCall {
  explicit OneCall(bool free_before_reply) : h("fifo") {
    server = h.add_server("server", 0, {}, free_before_reply);
    h.pin_loopers("server", {kGold1});
    const int clients = h.add_client_process();
    client = h.add_thread(clients, "client", kGold0);
    h.user.start_at(client, 100 * kMicrosecond);
    h.user.then(client,
                [this](int t) { h.driver.call(t, server, 0, 64, false, 10 * kMicrosecond); });
    h.user.then(client, [this](int t) {
      allocated_in_server_on_return = h.driver.allocator(server).allocated_buffers();
      h.driver.exit_thread(t);
    });
    h.run_until(100 * kMillisecond);
  }
  SimTime latency() const {
    const auto record = h.user.replies_to(client).at(0).record;  // replies_to() is a copy
    return record.finished - record.started;
  }
  DriverHarness h;
  int server = -1;
  int client = -1;
  int allocated_in_server_on_return = -1;
};

TEST(AllocPathTest, ALibbinderThatFreesBeforeItRepliesDelaysTheReplyByTheFree) {
  // libbinder (b/238777741) writes BC_FREE_BUFFER of the request before BC_REPLY: the server
  // runs the free path before the reply's, so the caller waits that much longer, and the
  // request's buffer is gone when the caller returns. The same allocations and lock holds.
  OneCall after(false);
  OneCall before(true);
  ASSERT_EQ(after.h.user.replies_to(after.client).size(), 1U);
  ASSERT_EQ(before.h.user.replies_to(before.client).size(), 1U);
  const SimTime free_path =
      before.h.sched.run_time(before.h.topology.costs().binder_free_ref_ns, kGold1);
  ASSERT_GT(free_path, 0);
  EXPECT_NEAR(static_cast<double>(before.latency() - after.latency()),
              static_cast<double>(free_path), 0.05 * static_cast<double>(free_path));
  EXPECT_EQ(before.allocated_in_server_on_return, 0);
  for (const OneCall* run : {&after, &before}) {
    const stats::AllocatorStats stats = run->h.driver.allocator_stats();
    EXPECT_EQ(stats.allocations, 2U);
    EXPECT_EQ(stats.alloc_lock.acquisitions, 2U + 2U * 2U);
    EXPECT_EQ(run->h.driver.allocator(run->server).allocated_buffers(), 0);
  }
}

TEST(AllocPathTest, ALooperThatFreesBeforeItRepliesAfterANestedCallBuildsTheLongestPath) {
  // The reply path of a looper that called out while handling a call and frees before it
  // replies: the nested call's reply, the request, the upstream priority restore, the reply's
  // allocation and, on first use of the caller's buffer space, its page installation under
  // the spinlock variant's page mutex. It runs to the end; nothing stays allocated.
  KernelOptions options;
  options.alloc_lock = LockKind::kSpinlock;
  options.inheritance = PriorityInheritance::kUpstream;
  DriverHarness h("fifo", options);
  const int q = h.add_server("q", 0, {}, /*free_before_reply=*/true);
  const int r = h.add_server("r", 0);
  const int clients = h.add_client_process();
  const int c = h.add_thread(clients, "c", kGold0);
  h.user.set_handler(q, 0, [&](int tid, int /*txn*/) {
    h.user.then(tid, [&](int t) { h.user.finish(t); });
    h.driver.call(tid, r, 0, 64, false, 20 * kMicrosecond);
  });
  h.call_at(c, 10 * kMicrosecond, q, 0);
  h.run_until(10 * kMillisecond);
  ASSERT_EQ(h.user.replies_to(c).size(), 1U);
  EXPECT_EQ(h.driver.allocator(q).allocated_buffers(), 0);
  EXPECT_EQ(h.driver.allocator(r).allocated_buffers(), 0);
  EXPECT_EQ(h.driver.allocator(clients).allocated_buffers(), 0);
  EXPECT_EQ(h.driver.allocator_stats().allocations, 4U);
}

TEST(AllocPathTest, FirstUseInstallsPagesInsideTheMutexOnlyWhenToldSo) {
  // The first call installs one page in each process (request and reply buffers); the second
  // reuses them from the LRU. With page installation inside the mutex (6.1) the longest hold
  // covers an installation (3 us of reference work); outside it, no hold does.
  KernelOptions locked;
  locked.install_pages_locked = true;
  KernelOptions unlocked;
  unlocked.install_pages_locked = false;
  TwoCalls in{locked};
  TwoCalls out{unlocked};
  for (const TwoCalls* run : {&in, &out}) {
    const stats::AllocatorStats stats = run->h.driver.allocator_stats();
    EXPECT_EQ(stats.pages_installed, 2U);
    EXPECT_EQ(stats.pages_installed_locked, run == &in);
  }
  const SimTime install = in.h.topology.costs().page_install_ref_ns;
  ASSERT_GT(install, 0);
  EXPECT_GE(in.h.driver.allocator_stats().alloc_lock.hold_ns.max(), install);
  EXPECT_LT(out.h.driver.allocator_stats().alloc_lock.hold_ns.max(), install);
}

TEST(AllocPathTest, ShrinkerReclaimsFreedPagesAndTheNextCallInstallsThemAgain) {
  // Under memory pressure the shrinker unmaps the freed pages between the two calls (10 ms
  // apart, a scan every millisecond), so the second call installs its pages again; without
  // pressure the pages stay and are installed once.
  KernelOptions pressure;
  pressure.memory_pressure.scan_interval_ns = kMillisecond;
  TwoCalls with{pressure, 0, 10 * kMillisecond};
  TwoCalls without{KernelOptions{}, 0, 10 * kMillisecond};
  EXPECT_GE(with.h.driver.shrinker_tid(), 0);
  EXPECT_EQ(without.h.driver.shrinker_tid(), -1);
  EXPECT_GE(with.h.driver.allocator_stats().pages_reclaimed, 1U);
  EXPECT_GT(with.h.driver.allocator_stats().pages_installed,
            without.h.driver.allocator_stats().pages_installed);
  EXPECT_EQ(without.h.driver.allocator_stats().pages_reclaimed, 0U);
  EXPECT_EQ(without.h.driver.allocator_stats().pages_installed, 2U);
}

// Two clients call the server one after the other, the second while the server's looper frees
// the first's request, under memory pressure (a scan every millisecond) or not, on the shipped
// topology or, with `hold_ref_ns`, on one whose allocator holds last that long (send and free
// paths' locked parts; each path keeps 500 us of other work). The first call starts at
// `start` + 100 us, the second at `start` + 11 ms. Runs to 40 ms unless `run` is false (the
// test runs it).
struct HeldLocks {
  HeldLocks(std::optional<SimTime> hold_ref_ns, bool pressure, bool run = true, SimTime start = 0)
      : h("fifo", options(pressure), [hold_ref_ns](nlohmann::json& doc) {
          if (!hold_ref_ns) return;
          nlohmann::json& costs = doc.at("costs");
          costs["binder_alloc_locked_ref_ns"] = *hold_ref_ns;
          costs["binder_free_locked_ref_ns"] = *hold_ref_ns;
          costs["binder_send_ref_ns"] = *hold_ref_ns + 500 * kMicrosecond;
          costs["binder_free_ref_ns"] = *hold_ref_ns + 500 * kMicrosecond;
        }) {
    server = h.add_server("server", 0);
    h.pin_loopers("server", {kGold1});
    clients = h.add_client_process();
    first = h.add_thread(clients, "first", kGold0);
    second = h.add_thread(clients, "second", 6);
    h.call_at(first, start + 100 * kMicrosecond, server, 10 * kMicrosecond);
    // The first call's two allocations and the request's free take about 4 x 3.5 ms on the
    // gold CPUs: the second call's allocation waits for the free and then holds the lock, the
    // freed request page on the server's LRU, for about 3.5 ms.
    h.call_at(second, start + 11 * kMillisecond, server, 10 * kMicrosecond);
    if (!run) return;
    h.run_until(40 * kMillisecond);
    EXPECT_EQ(h.user.replies().size(), 2U);
  }
  static KernelOptions options(bool pressure) {
    KernelOptions options;
    if (pressure) options.memory_pressure.scan_interval_ns = kMillisecond;
    return options;
  }
  DriverHarness h;
  int server = -1;
  int clients = -1;  // the two clients' process
  int first = -1;
  int second = -1;
};

TEST(AllocPathTest, TheShrinkerSkipsAPageWhoseAllocatorLockIsHeldAndTakesTheOthers) {
  // binder_alloc_free_page(): a page whose allocator's trylock fails is skipped (LRU_SKIP) and
  // counted; the walk goes on to the next page. With locked parts of 3 ms the second call's
  // allocation holds the server's lock across scans while the page it will take back is on the
  // LRU; the client's freed reply page, under a free lock, is reclaimed. With the shipped
  // holds (under a microsecond) no scan meets a held lock.
  const stats::AllocatorStats held = HeldLocks(3 * kMillisecond, true).h.driver.allocator_stats();
  EXPECT_GE(held.shrinker_skips, 1U);
  EXPECT_GE(held.pages_reclaimed, 1U);
  const stats::AllocatorStats brief = HeldLocks(std::nullopt, true).h.driver.allocator_stats();
  EXPECT_EQ(brief.shrinker_skips, 0U);
  EXPECT_GE(brief.pages_reclaimed, 1U);
}

TEST(AllocPathTest, AfterSkippingALockedPageTheShrinkerGoesOnToTheNextPageInTheSameScan) {
  // __list_lru_walk_one(): a page skipped because its allocator's trylock fails (LRU_SKIP)
  // stays where it is and the walk goes on from it to the next page of the LRU; only a page
  // taken sends the walk back to the head. The second call's allocation holds the server's
  // lock while the server's freed request page heads the LRU, the client's reply page (freed
  // after it) behind it: the first scan that skips the server's page reclaims the client's
  // page while the server's lock is still held.
  HeldLocks run(3 * kMillisecond, true, /*run=*/false);
  DriverHarness& h = run.h;
  SimTime t = 0;
  while (h.driver.allocator_stats().shrinker_skips == 0 && t < 40 * kMillisecond) {
    t += 100 * kMicrosecond;
    h.run_until(t);
  }
  const KernelLocks& locks = h.driver.locks();
  const int holder = locks.owner(h.driver.alloc_lock(run.server));
  ASSERT_GE(holder, 0);
  ASSERT_NE(holder, h.driver.shrinker_tid());
  const auto skipped = h.driver.allocator(run.server).oldest_lru_page();
  const auto behind = h.driver.allocator(run.clients).oldest_lru_page();
  ASSERT_TRUE(skipped.has_value());
  ASSERT_TRUE(behind.has_value());
  ASSERT_LT(skipped->stamp, behind->stamp);
  EXPECT_EQ(h.driver.allocator_stats().pages_reclaimed, 0U);
  // The page reclaim takes well under a millisecond (the next scan's interval).
  h.run_until(t + kMillisecond / 2);
  EXPECT_EQ(locks.owner(h.driver.alloc_lock(run.server)), holder);
  EXPECT_EQ(h.driver.allocator(run.server).lru_pages(), 1);
  EXPECT_EQ(h.driver.allocator(run.clients).lru_pages(), 0);
  EXPECT_EQ(h.driver.allocator_stats().pages_reclaimed, 1U);
}

TEST(AllocPathTest, AfterSkippingLockedPagesOfTwoProcessesTheShrinkerGoesOnToTheNewerPageOfAThird) {
  // __list_lru_walk_one() walks one LRU, in the order the pages were freed whatever their
  // process: a page skipped (LRU_SKIP) stays where it is and the walk goes on from it, so a
  // skipped page of one process is not tried again before a newer page of another process
  // after it (going back to each other process's oldest page, the walk would try the two
  // skipped pages in turn until its budget ran out). A second server and client process on other
  // CPUs make the same two calls from 100 us: the second call's reply allocation holds the second
  // client process's lock while the first call's freed reply page is on the LRU. The first pair,
  // started 15 ms later, holds the server's lock with its freed request page on the LRU, and its
  // client frees its reply page after both: the scan skips the two locked pages and reclaims the
  // newer one.
  HeldLocks run(3 * kMillisecond, true, /*run=*/false, /*start=*/15 * kMillisecond);
  DriverHarness& h = run.h;
  const int server2 = h.add_server("server2", 0);
  h.pin_loopers("server2", {7});
  const int clients2 = h.add_client_process("clients2");
  const int first2 = h.add_thread(clients2, "first2", 0);
  const int second2 = h.add_thread(clients2, "second2", 1);
  h.call_at(first2, 100 * kMicrosecond, server2, 10 * kMicrosecond);
  h.call_at(second2, 11 * kMillisecond, server2, 10 * kMicrosecond);
  const KernelLocks& locks = h.driver.locks();
  const auto locked_with_lru_page = [&](int proc) {
    return locks.owner(h.driver.alloc_lock(proc)) >= 0 && h.driver.allocator(proc).lru_pages() > 0;
  };
  SimTime t = 0;
  while (!(locked_with_lru_page(run.server) && locked_with_lru_page(clients2) &&
           h.driver.allocator(run.clients).lru_pages() > 0) &&
         t < 60 * kMillisecond) {
    t += 100 * kMicrosecond;
    h.run_until(t);
  }
  ASSERT_TRUE(locked_with_lru_page(run.server));
  ASSERT_TRUE(locked_with_lru_page(clients2));
  ASSERT_EQ(locks.owner(h.driver.alloc_lock(run.clients)), -1);
  const int server_holder = locks.owner(h.driver.alloc_lock(run.server));
  const int clients2_holder = locks.owner(h.driver.alloc_lock(clients2));
  ASSERT_NE(server_holder, h.driver.shrinker_tid());
  ASSERT_NE(clients2_holder, h.driver.shrinker_tid());
  const auto first_skipped = h.driver.allocator(clients2).oldest_lru_page();
  const auto second_skipped = h.driver.allocator(run.server).oldest_lru_page();
  const auto newer = h.driver.allocator(run.clients).oldest_lru_page();
  ASSERT_TRUE(first_skipped.has_value() && second_skipped.has_value() && newer.has_value());
  ASSERT_LT(first_skipped->stamp, second_skipped->stamp);
  ASSERT_LT(second_skipped->stamp, newer->stamp);
  const int first_skipped_lru = h.driver.allocator(clients2).lru_pages();
  const int second_skipped_lru = h.driver.allocator(run.server).lru_pages();
  const std::uint64_t reclaimed = h.driver.allocator_stats().pages_reclaimed;
  // A scan comes within its interval; both locks are still held after it.
  h.run_until(t + kMillisecond);
  EXPECT_EQ(locks.owner(h.driver.alloc_lock(run.server)), server_holder);
  EXPECT_EQ(locks.owner(h.driver.alloc_lock(clients2)), clients2_holder);
  EXPECT_EQ(h.driver.allocator(clients2).lru_pages(), first_skipped_lru);
  EXPECT_EQ(h.driver.allocator(run.server).lru_pages(), second_skipped_lru);
  EXPECT_EQ(h.driver.allocator(run.clients).lru_pages(), 0);
  EXPECT_EQ(h.driver.allocator_stats().pages_reclaimed, reclaimed + 1);
}

TEST(AllocPathTest, ACallThatWaitsForTheAllocatorLockCountsTheWaitAsLockWait) {
  // The second call's send path finds the server's allocator lock held by the looper's 3 ms
  // free, with about 0.9 ms of it left: it waits that long (asleep on the mutex), which its
  // breakdown shows as lock wait, not as kernel work or "other". The first call waits for
  // nothing. The parts still add up to the round trip.
  HeldLocks run(3 * kMillisecond, false);
  const auto replies = run.h.user.replies();
  ASSERT_EQ(replies.size(), 2U);
  for (const auto& reply : replies) {
    const stats::Breakdown& b = reply.record.breakdown;
    const SimTime parts = b.kernel_ns + b.wakeup_ipi_ns + b.idle_exit_ns + b.runqueue_wait_ns +
                          b.lock_wait_ns + b.cache_refill_ns + b.service_ns + b.other_ns;
    EXPECT_EQ(parts, reply.record.finished - reply.record.started);
    EXPECT_GE(b.other_ns, 0);
    if (reply.tid == run.first) {
      EXPECT_EQ(b.lock_wait_ns, 0);
    } else {
      EXPECT_GT(b.lock_wait_ns, 500 * kMicrosecond);
      EXPECT_LT(b.other_ns, b.lock_wait_ns);
    }
  }
}

TEST(AllocPathTest, AsyncBudgetExhaustionFailsTheOnewaySendAndIsCounted) {
  // The server handles oneway work slowly (one at a time per node), so the buffers of queued
  // oneway sends stay allocated. Six 100 KiB sends: the async budget (half of 1 MiB - 2 pages,
  // 520,192 bytes) holds five; the sixth fails with BR_FAILED_REPLY, is counted, and is never
  // delivered. A two-way call of the same size still finds room in the rest of the space.
  ServerAndClient pair;
  DriverHarness& h = pair.h;
  const int server = pair.server;
  const int client = pair.client;
  constexpr std::int64_t kPayload = 100 * 1024;
  for (int i = 0; i < 6; ++i) {
    h.user.then(client, [&h, server](int t) {
      h.driver.call(t, server, 0, kPayload, true, 50 * kMillisecond);
    });
  }
  h.user.then(client, [&h, server](int t) { h.driver.call(t, server, 0, kPayload, false, 1000); });
  h.run_until(20 * kMillisecond);
  EXPECT_EQ(h.user.failed_oneway(), 1);
  EXPECT_EQ(h.user.oneway_sent().size(), 6U);
  EXPECT_EQ(h.driver.allocator_stats().failed_async_space, 1U);
  EXPECT_EQ(h.driver.counters().failed_sends, 1U);
  // The two-way call was allocated beside the five oneway buffers; its reply came back.
  EXPECT_EQ(h.driver.allocator_stats().failed_no_space, 0U);
  // Only the first oneway is being handled; the two-way call waits behind it for the looper.
  h.run_until(2000 * kMillisecond);
  ASSERT_EQ(h.user.replies().size(), 1U);
  EXPECT_FALSE(h.user.replies()[0].record.failed);
  EXPECT_EQ(h.user.received().size(), 6U);  // five oneway, one two-way
}

TEST(AllocPathTest, ATwoWayCallThatDoesNotFitTheTargetFailsBackToItsCaller) {
  // A two-way call of 2 MiB to a server with 1 MiB of buffer space: binder_alloc_new_buf()
  // finds no free space, and the caller's read returns BR_FAILED_REPLY. The failure is counted,
  // nothing reaches the server, the transaction's buffer is not held, and the client goes on:
  // its next call, of a size that fits, is served.
  ServerAndClient pair;
  DriverHarness& h = pair.h;
  const int server = pair.server;
  h.user.then(pair.client,
              [&h, server](int t) { h.driver.call(t, server, 0, 2 * 1024 * 1024, false, 10'000); });
  h.user.then(pair.client,
              [&h, server](int t) { h.driver.call(t, server, 0, 4096, false, 10'000); });
  h.run_until(100 * kMillisecond);
  ASSERT_EQ(h.user.replies().size(), 2U);
  EXPECT_TRUE(h.user.replies()[0].record.failed);
  EXPECT_FALSE(h.user.replies()[1].record.failed);
  EXPECT_EQ(h.driver.counters().failed_sends, 1U);
  EXPECT_EQ(h.driver.allocator_stats().failed_no_space, 1U);
  EXPECT_EQ(h.user.received().size(), 1U);  // only the second call
  EXPECT_EQ(h.driver.allocator(server).allocated_buffers(), 0);
}

}  // namespace
}  // namespace bindersim::binder::testing
