// Unit tests of the binder driver (drivers/android/binder.c and the CTABS patch) on the SA8155P
// stack.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "driver_fixture.hpp"

namespace bindersim::binder::testing {
namespace {

using sched::Policy;

constexpr SimTime kUs = kMicrosecond;
constexpr SimTime kMs = kMillisecond;

// The tids of records (Received, Finished, ...) in order.
template <typename Record>
std::vector<int> tids_of(const std::vector<Record>& records) {
  std::vector<int> out;
  for (const auto& r : records) out.push_back(r.tid);
  return out;
}

// "<prefix><i>", for thread names.
std::string numbered(const std::string& prefix, int i) {
  std::string name = prefix;
  name += std::to_string(i);
  return name;
}

// Test names may not contain '-'.
std::string selector_test_name(const ::testing::TestParamInfo<std::string>& param_info) {
  std::string name = param_info.param;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

std::string inheritance_test_name(const ::testing::TestParamInfo<PriorityInheritance>& param_info) {
  return param_info.param == PriorityInheritance::kAndroid ? "android" : "upstream";
}

class DriverSelectorTest : public ::testing::TestWithParam<std::string> {};

class DriverInheritanceTest : public ::testing::TestWithParam<PriorityInheritance> {};

// --- waiting_threads and thread selection (binder_select_thread_ilocked) ------------------------

TEST_P(DriverSelectorTest, IdleLoopersAreInsertedAtTheHeadOfWaitingThreads) {
  // Kernel rule (1.1): a looper that goes idle is pushed at the HEAD of proc->waiting_threads,
  // so the list runs from the most recently idle looper to the longest idle one, whatever the
  // selection policy.
  DriverHarness h(GetParam());
  h.pin_loopers("srv", {6, 7});
  const int srv = h.add_server("srv", 1);
  const int clients = h.add_client_process();
  const int a = h.add_thread(clients, "a", 4);
  const int b = h.add_thread(clients, "b", 5);
  h.call_at(a, 10 * kUs, srv, 1 * kMs);   // main looper; it asks for a second looper
  h.call_at(b, 500 * kUs, srv, 3 * kMs);  // the spawned looper, which finishes last
  h.run_until(10 * kMs);

  const std::vector<int> loopers = h.driver.loopers(srv);
  ASSERT_EQ(loopers.size(), 2U);
  ASSERT_EQ(tids_of(h.user.received()), (std::vector<int>{loopers[0], loopers[1]}));
  ASSERT_EQ(tids_of(h.user.finished()), (std::vector<int>{loopers[0], loopers[1]}));
  EXPECT_EQ(h.driver.waiting_threads(srv), (std::vector<int>{loopers[1], loopers[0]}));
}

TEST(DriverTest, FifoGivesTheNextCallToTheMostRecentlyIdleLooper) {
  // Kernel rule (1.2): the default selection takes the first entry of waiting_threads; with
  // head insertion that is the looper that went idle most recently, not the longest idle one.
  DriverHarness h("fifo");
  h.pin_loopers("srv", {6, 7});
  const int srv = h.add_server("srv", 1);
  const int clients = h.add_client_process();
  std::vector<int> c;
  for (int i = 0; i < 6; ++i) c.push_back(h.add_thread(clients, numbered("c", i), 4 + i % 2));
  h.call_at(c[0], 10 * kUs, srv, 1 * kMs);   // main looper
  h.call_at(c[1], 500 * kUs, srv, 3 * kMs);  // spawned looper, idle last
  h.call_at(c[2], 10 * kMs, srv, 100 * kUs);
  // Both busy again; this time the main looper finishes last.
  h.call_at(c[3], 20 * kMs, srv, 300 * kUs);
  h.call_at(c[4], 20 * kMs + 100 * kUs, srv, 2 * kMs);
  h.call_at(c[5], 30 * kMs, srv, 100 * kUs);
  h.run_until(10 * kMs);
  const std::vector<int> loopers = h.driver.loopers(srv);
  ASSERT_EQ(loopers.size(), 2U);
  EXPECT_EQ(h.driver.waiting_threads(srv), (std::vector<int>{loopers[1], loopers[0]}));

  h.run_until(20 * kMs);
  ASSERT_EQ(h.user.received().size(), 3U);
  EXPECT_EQ(h.user.received()[2].tid, loopers[1]);
  EXPECT_EQ(h.driver.waiting_threads(srv), (std::vector<int>{loopers[1], loopers[0]}));

  h.run_until(30 * kMs);
  ASSERT_EQ(h.user.received().size(), 5U);
  EXPECT_EQ(h.user.received()[3].tid, loopers[1]);
  EXPECT_EQ(h.user.received()[4].tid, loopers[0]);
  EXPECT_EQ(h.driver.waiting_threads(srv), (std::vector<int>{loopers[0], loopers[1]}));

  h.run_until(40 * kMs);
  ASSERT_EQ(h.user.received().size(), 6U);
  EXPECT_EQ(h.user.received()[5].tid, loopers[0]);
  EXPECT_EQ(h.user.received()[5].from_tid, c[5]);
}

TEST_P(DriverSelectorTest, SelectionSeesEachLooperLastCpu) {
  // CTABS rule (3): the selector gets each idle looper's last_cpu; fifo takes the head of
  // waiting_threads, ctabs takes a looper whose last_cpu is the caller's CPU even when it is
  // not the head.
  DriverHarness h(GetParam());
  h.pin_loopers("srv", {2, 6});
  const int srv = h.add_server("srv", 1);
  const int clients = h.add_client_process();
  const int a = h.add_thread(clients, "a", 5);
  const int b = h.add_thread(clients, "b", 5);
  const int c = h.add_thread(clients, "c", 2);
  h.call_at(a, 10 * kUs, srv, 1 * kMs);   // main looper, on CPU 2 (done at about 3.4 ms)
  h.call_at(b, 500 * kUs, srv, 5 * kMs);  // spawned looper, on CPU 6 (done at about 5.5 ms)
  h.call_at(c, 10 * kMs, srv, 50 * kUs);
  h.run_until(20 * kMs);

  const std::vector<int> loopers = h.driver.loopers(srv);
  ASSERT_EQ(loopers.size(), 2U);
  ASSERT_EQ(h.selector.log().size(), 3U);
  const SelectionRecord& third = h.selector.log()[2];
  ASSERT_EQ(third.waiting.size(), 2U);
  EXPECT_EQ(third.waiting[0].tid, loopers[1]);
  EXPECT_EQ(third.waiting[0].last_cpu, 6);
  EXPECT_EQ(third.waiting[1].tid, loopers[0]);
  EXPECT_EQ(third.waiting[1].last_cpu, 2);
  EXPECT_EQ(third.caller_cpu, 2);
  const int expected = GetParam() == "fifo" ? loopers[1] : loopers[0];
  ASSERT_EQ(h.user.received().size(), 3U);
  EXPECT_EQ(h.user.received()[2].tid, expected);
  EXPECT_EQ(h.user.received()[2].from_tid, c);
}

// --- cpusets ------------------------------------------------------------------------------------

TEST(DriverTest, ProcessCpusetConfinesLoopersAndIntersectsAffinity) {
  // A process's cpuset holds every thread of it: the main looper, loopers spawned later, and
  // threads created with their own affinity (which is intersected with the cpuset). Calls from
  // clients on big cores are then handled on the cpuset's CPUs only.
  DriverHarness h("fifo");
  ProcessConfig config;
  config.name = "srv";
  config.max_threads = 15;
  config.cpuset = 0b1111;  // the silver cluster, CPUs 0-3
  const int srv = h.driver.create_process(config);
  sched::TaskParams own;
  own.name = "srv-thread";
  own.affinity = 0b11110000 | 0b0100;  // CPUs 2 and 4-7: only CPU 2 is in the cpuset
  const int inside = h.driver.create_thread(srv, own);
  EXPECT_EQ(h.sched.task(inside).params.affinity, std::uint64_t{0b0100});

  const int clients = h.add_client_process();
  std::vector<int> callers;
  const char* const names[] = {"c4", "c5", "c6", "c7"};
  for (int cpu = 4; cpu < 8; ++cpu) callers.push_back(h.add_thread(clients, names[cpu - 4], cpu));
  for (std::size_t i = 0; i < callers.size(); ++i) {
    h.call_at(callers[i], (10 + static_cast<SimTime>(i)) * kUs, srv, 2 * kMs);
  }
  h.run_until(50 * kMs);

  ASSERT_EQ(h.user.received().size(), callers.size());
  EXPECT_GT(h.driver.loopers(srv).size(), 1U);  // loopers were spawned for the concurrent calls
  for (int looper : h.driver.loopers(srv)) {
    EXPECT_EQ(h.sched.task(looper).params.affinity, config.cpuset) << looper;
  }
  for (const Received& r : h.user.received()) {
    EXPECT_LT(r.cpu, 4) << "handled on CPU " << r.cpu;
  }
  // No cpuset: a thread keeps its own affinity.
  const int free_thread = h.add_thread(clients, "free", 6);
  EXPECT_EQ(h.sched.task(free_thread).params.affinity, std::uint64_t{1} << 6);
}

// --- BR_SPAWN_LOOPER (binder_thread_read) -------------------------------------------------------

TEST(DriverTest, SpawnLooperAppearsOnlyAfterThreadSpawnTime) {
  // Kernel rule (1.1): a looper leaving its read with work while no looper is idle asks for
  // one more looper (BR_SPAWN_LOOPER); userspace creates it, so it registers only
  // thread_spawn_ns later. With an idle looper left, no looper is requested.
  DriverHarness h("fifo");
  const int srv = h.add_server("srv", 15);
  const int clients = h.add_client_process();
  const int a = h.add_thread(clients, "a", 4);
  const int b = h.add_thread(clients, "b", 5);
  h.user.set_handler(srv, 0, [&h](int tid, int txn) {
    h.context.engine.stop();  // look at the driver right after the looper took the call
    h.user.compute_then_finish(tid, txn);
  });
  h.call_at(a, 10 * kUs, srv, 1 * kMs);
  h.run_until(engine::kNever);

  ASSERT_EQ(h.user.received().size(), 1U);
  const SimTime taken = h.user.received()[0].time;
  const SimTime spawn = h.topology.costs().thread_spawn_ns;
  ASSERT_GT(spawn, 0);
  EXPECT_EQ(h.driver.counters().spawn_requests, 1U);
  EXPECT_EQ(h.driver.loopers(srv).size(), 1U);
  h.run_until(taken + spawn - 1);
  EXPECT_EQ(h.driver.loopers(srv).size(), 1U);
  h.run_until(taken + spawn);
  ASSERT_EQ(h.driver.loopers(srv).size(), 2U);
  const int spawned = h.driver.loopers(srv)[1];
  h.run_until(taken + 2 * spawn);
  EXPECT_EQ(h.driver.waiting_threads(srv), (std::vector<int>{spawned}));

  // Two idle loopers: the next call leaves one idle, so nothing is requested.
  h.user.set_handler(srv, 0, [&h](int tid, int txn) { h.user.compute_then_finish(tid, txn); });
  h.call_at(b, 10 * kMs, srv, 1 * kMs);
  h.run_until(20 * kMs);
  ASSERT_EQ(h.user.received().size(), 2U);
  EXPECT_EQ(h.driver.counters().spawn_requests, 1U);
  EXPECT_EQ(h.driver.loopers(srv).size(), 2U);
}

TEST(DriverTest, NoSpawnRequestWhileOneIsOutstanding) {
  // Kernel rule (1.1): no BR_SPAWN_LOOPER is sent while one is outstanding (requested_threads
  // != 0), even when another looper leaves its read with work and no looper is idle.
  DriverHarness h("fifo");
  h.pin_loopers("srv", {5, 6, 7});
  const int srv = h.add_server("srv", 15);
  const int clients = h.add_client_process();
  std::vector<int> c;
  for (int i = 0; i < 4; ++i) c.push_back(h.add_thread(clients, numbered("c", i), i));
  h.call_at(c[0], 10 * kUs, srv, 50 * kUs);  // grows the pool to two idle loopers
  h.run_until(1 * kMs);
  ASSERT_EQ(h.driver.waiting_threads(srv).size(), 2U);
  ASSERT_EQ(h.driver.counters().spawn_requests, 1U);

  h.call_at(c[1], 2 * kMs, srv, 30 * kUs);            // head looper, back at its read soon
  h.call_at(c[2], 2 * kMs + 10 * kUs, srv, 5 * kMs);  // last idle looper: a request
  h.call_at(c[3], 2 * kMs + 20 * kUs, srv, 5 * kMs);  // nobody idle: proc->todo
  const SimTime spawn = h.topology.costs().thread_spawn_ns;
  h.run_until(2 * kMs + spawn);
  // The first looper came back and took c3's call from proc->todo while the request was
  // outstanding: no second request.
  ASSERT_EQ(h.user.received().size(), 4U);
  EXPECT_EQ(h.user.received()[3].from_tid, c[3]);
  EXPECT_EQ(h.user.received()[3].tid, h.user.received()[1].tid);
  EXPECT_EQ(h.driver.counters().spawn_requests, 2U);
  EXPECT_EQ(h.driver.loopers(srv).size(), 2U);

  h.run_until(50 * kMs);
  EXPECT_EQ(h.driver.counters().spawn_requests, 2U);
  EXPECT_EQ(h.driver.loopers(srv).size(), 3U);
}

TEST(DriverTest, SpawnedLoopersArriveOneAtATime) {
  // Kernel rule (1.1): with calls waiting on proc->todo, each spawned looper registers, takes
  // one of them and, with no looper idle, asks for the next; requests are thread_spawn_ns
  // apart because only one is outstanding at a time.
  DriverHarness h("fifo");
  const int srv = h.add_server("srv", 15);
  const int clients = h.add_client_process();
  std::vector<int> c;
  for (int i = 0; i < 3; ++i) {
    c.push_back(h.add_thread(clients, numbered("c", i), 4 + i));
    h.call_at(c.back(), (10 + 10 * i) * kUs, srv, 5 * kMs);
  }
  const SimTime spawn = h.topology.costs().thread_spawn_ns;
  h.run_until(10 * kUs + spawn - 1);
  // Three calls, one looper busy, two calls waiting: still a single request.
  EXPECT_EQ(h.driver.counters().spawn_requests, 1U);
  EXPECT_EQ(h.driver.counters().proc_todo_queued, 2U);
  EXPECT_EQ(h.driver.loopers(srv).size(), 1U);

  h.run_until(50 * kMs);
  ASSERT_EQ(h.user.replies().size(), 3U);
  // Each spawned looper took a waiting call and, with no looper idle, asked for the next one.
  const std::vector<int> loopers = h.driver.loopers(srv);
  ASSERT_EQ(loopers.size(), 4U);
  EXPECT_EQ(h.driver.counters().spawn_requests, 3U);
  std::vector<SimTime> created;
  for (int tid : loopers) created.push_back(h.placement.wakeups_of(tid).front().time);
  for (std::size_t i = 2; i < created.size(); ++i) {
    EXPECT_GE(created[i] - created[i - 1], spawn) << "looper " << i;
  }
}

TEST(DriverTest, AReplyingLooperAsksForALooperWhenTheIdleOneWasTakenButHasNotRun) {
  // Kernel rule (1.1): the spawn check ends every return of a looper's read, its
  // BR_TRANSACTION_COMPLETE after a reply included. binder_2 is selected for c1's call while
  // an RT task holds its CPU: no looper waits for work, so binder_1, replying to c0 in that
  // window, asks for a third looper.
  DriverHarness h("fifo");
  h.pin_loopers("srv", {6, 1});
  const int srv = h.add_server("srv", 15);
  const int clients = h.add_client_process();
  const int c0 = h.add_thread(clients, "c0", 4);
  const int c1 = h.add_thread(clients, "c1", 5);
  const int hog = h.add_thread(clients, "hog", 1, Policy::kFifo, 0, 90);
  h.call_at(c0, 10 * kUs, srv, 2 * kMs);  // binder_1 on CPU 6; binder_2 is spawned, waits
  h.user.start_at(hog, 1 * kMs);
  h.user.then(hog, [&h](int tid) { h.driver.compute(tid, 3 * kMs); });  // ~10 ms on silver
  h.call_at(c1, 1500 * kUs, srv, 10 * kUs);
  h.run_until(1 * kMs);
  ASSERT_EQ(h.driver.loopers(srv).size(), 2U);
  // binder_2 may run on CPU 1 only: no idle CPU pulls it from behind the RT task.
  h.sched.task_for_update(h.driver.loopers(srv)[1]).params.affinity = std::uint64_t{1} << 1;
  h.run_until(1600 * kUs);
  ASSERT_TRUE(h.driver.waiting_threads(srv).empty());  // binder_2 taken, not running yet
  ASSERT_EQ(h.user.received().size(), 1U);
  EXPECT_EQ(h.driver.counters().spawn_requests, 1U);
  h.run_until(5 * kMs);
  ASSERT_EQ(h.user.replies_to(c0).size(), 1U);  // binder_1 replied at about 2.4 ms
  EXPECT_EQ(h.user.received().size(), 1U);      // binder_2 still behind the RT task
  EXPECT_EQ(h.driver.counters().spawn_requests, 2U);
  EXPECT_EQ(h.driver.loopers(srv).size(), 3U);
}

TEST(DriverTest, PoolNeverGrowsBeyondMaxThreads) {
  // Kernel rule (1.1): fewer than max_threads spawned is a condition of BR_SPAWN_LOOPER; the
  // main looper (BC_ENTER_LOOPER) is not counted, so a pool has at most 1 + max_threads.
  DriverHarness h("fifo");
  h.pin_loopers("srv", {5, 6, 7, 7});
  const int srv = h.add_server("srv", 2);
  const int clients = h.add_client_process();
  for (int i = 0; i < 6; ++i) {
    const int tid = h.add_thread(clients, numbered("c", i), std::min(i, 4));
    h.call_at(tid, (10 + 200 * i) * kUs, srv, 3 * kMs);
  }
  h.run_until(100 * kMs);
  EXPECT_EQ(h.user.replies().size(), 6U);
  EXPECT_EQ(h.driver.loopers(srv).size(), 3U);
  EXPECT_EQ(h.driver.counters().spawn_requests, 2U);
  EXPECT_GE(h.driver.counters().proc_todo_queued, 1U);
}

// --- proc->todo (binder_proc_transaction) -------------------------------------------------------

TEST(DriverTest, CallWithNoIdleLooperWaitsOnProcTodoForTheNextReturningLooper) {
  // Kernel rule (1.3.5): with no idle looper the work goes on proc->todo and nobody is woken;
  // the next looper that returns to read takes it, without going idle.
  DriverHarness h("fifo");
  h.pin_loopers("srv", {6, 7});
  const int srv = h.add_server("srv", 1);
  const int clients = h.add_client_process();
  const int a = h.add_thread(clients, "a", 4);
  const int b = h.add_thread(clients, "b", 5);
  const int c = h.add_thread(clients, "c", 1);
  h.call_at(a, 10 * kUs, srv, 2 * kMs);   // main looper, done at about 2 ms
  h.call_at(b, 500 * kUs, srv, 5 * kMs);  // spawned looper, done at about 5.5 ms
  h.call_at(c, 1 * kMs, srv, 100 * kUs);  // nobody idle
  h.run_until(1 * kMs + 100 * kUs);
  EXPECT_EQ(h.driver.counters().proc_todo_queued, 1U);
  EXPECT_EQ(h.counts().none_idle, 1U);
  EXPECT_EQ(h.user.received().size(), 2U);
  const std::size_t placements = h.placement.log().size();
  h.run_until(1 * kMs + 500 * kUs);
  EXPECT_EQ(h.placement.log().size(), placements) << "nobody is woken for proc->todo work";

  h.run_until(20 * kMs);
  const std::vector<int> loopers = h.driver.loopers(srv);
  ASSERT_EQ(h.user.received().size(), 3U);
  const Received& late = h.user.received()[2];
  EXPECT_EQ(late.from_tid, c);
  EXPECT_EQ(late.tid, loopers[0]);
  ASSERT_GE(h.user.finished().size(), 2U);
  EXPECT_EQ(h.user.finished()[0].tid, loopers[0]);
  EXPECT_GE(late.time, h.user.finished()[0].time);
  EXPECT_LT(late.time, h.user.finished()[1].time);
  // The main looper took it at its read: it was never woken for it.
  EXPECT_EQ(h.placement.wakeups_of(loopers[0]).size(), 2U);  // fork and a's call
}

TEST(DriverTest, WorkLeftOnProcTodoWithNoIdleLooperConsultsNoSelector) {
  // Kernel rule (binder_wakeup_proc_ilocked()): after a read that leaves work on proc->todo,
  // binder_select_thread_ilocked() finds no thread when waiting_threads is empty, and nothing
  // is selected or woken. Only a transaction's own delivery counts as a decision that found
  // nobody idle. One looper, three calls: the first is delivered to it, the other two go to
  // proc->todo (two decisions with none idle); when the looper takes the second at its read,
  // the third is left there with no looper waiting: no fourth decision.
  DriverHarness h("fifo");
  const int srv = h.add_server("srv", 0);
  const int clients = h.add_client_process();
  const int a = h.add_thread(clients, "a", 4);
  const int b = h.add_thread(clients, "b", 5);
  const int c = h.add_thread(clients, "c", 6);
  h.call_at(a, 10 * kUs, srv, 1 * kMs);
  h.call_at(b, 200 * kUs, srv, 1 * kMs);
  h.call_at(c, 400 * kUs, srv, 1 * kMs);
  h.run_until(20 * kMs);

  ASSERT_EQ(h.user.received().size(), 3U);
  EXPECT_EQ(h.driver.counters().proc_todo_queued, 2U);
  EXPECT_EQ(h.decisions(), 3U);
  EXPECT_EQ(h.counts().none_idle, 2U);
  EXPECT_EQ(h.user.replies().size(), 3U);
}

TEST(DriverTest, ReadLeavingWorkOnProcTodoWakesOneMoreIdleLooper) {
  // Kernel rule (1.3): after a read, if proc->todo still holds work, one more idle looper is
  // selected and woken (non-sync). Set-up: two nodes each with a oneway in flight and one
  // parked. Both handlers free their buffers close together, so both parked oneways reach
  // proc->todo (each with a proc wakeup); the second freeing looper takes the first one at its
  // read, and the one left makes it wake a third idle looper.
  DriverHarness h("fifo");
  h.pin_loopers("srv", {3, 4, 5, 6, 7});
  const int srv = h.add_server("srv", 4, {NodeConfig{"n0", true, 19}, NodeConfig{"n1", true, 19}});
  const int clients = h.add_client_process();
  // Warm-up: five loopers; the main one (on silver CPU 3) finishes last, so it is the head.
  for (int i = 0; i < 5; ++i) {
    const int tid = h.add_thread(clients, numbered("w", i), i % 3);
    h.call_at(tid, (10 + 200 * i) * kUs, srv, i == 0 ? 3 * kMs : 1 * kMs);
  }
  const int hog = h.add_thread(clients, "hog", 3, Policy::kFifo, 0, 50);
  h.user.start_at(hog, 0);  // parks at once
  h.run_until(12 * kMs);
  const std::vector<int> loopers = h.driver.loopers(srv);
  ASSERT_EQ(loopers.size(), 5U);
  ASSERT_EQ(h.driver.waiting_threads(srv),
            (std::vector<int>{loopers[0], loopers[4], loopers[3], loopers[2], loopers[1]}));

  // Both oneway handlers block in userspace until told to finish.
  int la = -1;
  int lb = -1;
  h.user.set_handler(srv, 0, [&](int tid, int) {
    la = tid;
    h.driver.wait_user(tid);
  });
  h.user.set_handler(srv, 1, [&](int tid, int) {
    lb = tid;
    h.user.then(tid, [&h](int t) { h.user.finish(t); });
    h.driver.wait_user(tid);
  });
  const int x = h.add_thread(clients, "x", 0);
  h.user.start_at(x, 12 * kMs);
  h.oneway_next(x, srv, 0, 0);
  h.oneway_next(x, srv, 0, 1);
  h.oneway_next(x, srv, 0, 0);  // parked on n0
  h.oneway_next(x, srv, 0, 1);  // parked on n1
  h.run_until(14 * kMs);
  ASSERT_EQ(la, loopers[0]);
  ASSERT_EQ(lb, loopers[4]);
  ASSERT_EQ(h.driver.counters().oneway_parked, 2U);
  ASSERT_EQ(h.driver.waiting_threads(srv), (std::vector<int>{loopers[3], loopers[2], loopers[1]}));

  // At 14 ms the first handler finishes: it lets the second one finish and is itself held up
  // on its CPU by an RT task, so it does not take the parked oneway back at once.
  h.user.then(la, [&](int tid) {
    h.driver.wake_user(hog, tid, 200 * kUs);
    h.driver.wake_user(lb, tid, 0);
    h.user.finish(tid);
  });
  const int trigger = h.add_thread(clients, "trigger", 1);
  h.user.start_at(trigger, 14 * kMs);
  h.user.then(trigger, [&](int tid) {
    h.driver.wake_user(la, tid, 0);
    h.driver.wait_user(tid);
  });
  const std::size_t selections_before = h.selector.log().size();
  h.run_until(30 * kMs);

  std::vector<SelectionRecord> wakeups(h.selector.log().begin() + selections_before,
                                       h.selector.log().end());
  ASSERT_EQ(wakeups.size(), 3U);  // two proc wakeups on free, one after a read
  for (const auto& record : wakeups) EXPECT_FALSE(record.sync);
  EXPECT_EQ(wakeups[0].chosen_tid, loopers[3]);  // for the oneway la freed
  EXPECT_EQ(wakeups[1].chosen_tid, loopers[2]);  // for the oneway lb freed
  EXPECT_EQ(wakeups[2].chosen_tid, loopers[1]);  // the read left work on proc->todo
  EXPECT_EQ(wakeups[2].caller_cpu, 7);           // lb's read, on CPU 7
  EXPECT_GT(wakeups[2].time, wakeups[1].time);
  int oneways = 0;
  for (const auto& r : h.user.received()) oneways += r.oneway ? 1 : 0;
  EXPECT_EQ(oneways, 4);
}

// --- Replies, oneway and nested transactions (binder_transaction) -------------------------------

TEST_P(DriverSelectorTest, RepliesGoToTheCallingThreadWithoutSelection) {
  // Kernel rule (1.4): BC_REPLY goes straight to the thread that sent the call; no thread is
  // selected, so only the calls themselves count as selector decisions, and the reply is not
  // given to an idle looper of the caller's process.
  DriverHarness h(GetParam());
  const int srv = h.add_server("srv", 0);
  const int app = h.add_server("app", 0);  // the caller's process has an idle looper
  const int a = h.add_thread(app, "a", 4);
  h.call_at(a, 10 * kUs, srv, 50 * kUs);
  h.call_next(a, srv, 50 * kUs);
  h.call_next(a, srv, 50 * kUs);
  h.run_until(10 * kMs);

  ASSERT_EQ(h.user.replies_to(a).size(), 3U);
  EXPECT_EQ(h.driver.counters().replies, 3U);
  EXPECT_EQ(h.driver.counters().transactions, 3U);
  EXPECT_EQ(h.decisions(), 3U);
  for (const auto& selection : h.selector.log()) EXPECT_TRUE(selection.sync);
  EXPECT_TRUE(h.user.received_by(h.driver.loopers(app).front()).empty());
}

TEST(DriverTest, OnewaySenderReturnsAtOnceAndASecondOnewayIsParked) {
  // Kernel rule (1.5): the sender of a oneway returns at once; at most one oneway per node is
  // in flight, a second one is parked on node->async_todo without waking anybody and is
  // delivered once the first one's buffer is freed.
  DriverHarness h("fifo");
  h.pin_loopers("srv", {5, 6});
  const int srv = h.add_server("srv", 1);
  const int clients = h.add_client_process();
  const int w = h.add_thread(clients, "w", 4);
  const int a = h.add_thread(clients, "a", 4);
  h.call_at(w, 10 * kUs, srv, 500 * kUs);  // grows the pool to two loopers
  h.run_until(5 * kMs);
  ASSERT_EQ(h.driver.waiting_threads(srv).size(), 2U);
  const std::uint64_t decisions_before = h.decisions();

  std::vector<int> waiting_after_second;
  std::uint64_t decisions_after_second = 0;
  h.user.start_at(a, 5 * kMs);
  h.oneway_next(a, srv, 1 * kMs);
  h.oneway_next(a, srv, 1 * kMs + 1);
  h.user.then(a, [&](int tid) {
    waiting_after_second = h.driver.waiting_threads(srv);
    decisions_after_second = h.decisions();
    h.driver.wait_user(tid);
  });
  h.run_until(20 * kMs);

  EXPECT_EQ(h.driver.counters().oneway, 2U);
  EXPECT_EQ(h.driver.counters().oneway_parked, 1U);
  EXPECT_TRUE(h.user.replies_to(a).empty());
  ASSERT_EQ(h.user.oneway_sent().size(), 2U);
  EXPECT_LT(h.user.oneway_sent()[1].time, 5 * kMs + 100 * kUs);
  // The parked send woke nobody and selected nobody: one looper is still idle.
  EXPECT_EQ(waiting_after_second.size(), 1U);
  EXPECT_EQ(decisions_after_second, decisions_before + 1);

  std::vector<Received> oneways;
  for (const auto& r : h.user.received()) {
    if (r.oneway) oneways.push_back(r);
  }
  ASSERT_EQ(oneways.size(), 2U);
  EXPECT_EQ(oneways[0].cookie, static_cast<std::uint64_t>(1 * kMs));
  EXPECT_EQ(oneways[1].cookie, static_cast<std::uint64_t>(1 * kMs + 1));
  SimTime first_freed = -1;
  for (const auto& f : h.user.finished()) {
    if (f.txn == oneways[0].txn && f.time >= oneways[0].time) first_freed = f.time;
  }
  ASSERT_GE(first_freed, 0);
  EXPECT_LT(h.user.oneway_sent()[1].time, first_freed);
  EXPECT_GE(oneways[1].time, first_freed);
}

TEST(DriverTest, ParkedOnewaysAreDeliveredInTheOrderTheyWereSent) {
  // binder_free_buf(): when the oneway in flight is freed, the head of node->async_todo (a
  // FIFO list) moves to the process's todo. Three oneways sent back to back to one node: the
  // first is delivered at once, the other two are parked, and the server receives all three in
  // the order they were sent.
  DriverHarness h("fifo");
  h.pin_loopers("srv", {5});
  const int srv = h.add_server("srv", 0);
  const int clients = h.add_client_process();
  const int a = h.add_thread(clients, "a", 4);
  h.user.start_at(a, 10 * kUs);
  const std::vector<std::int64_t> sent = {1 * kMs, 1 * kMs + 1, 1 * kMs + 2};
  for (const std::int64_t cookie : sent) h.oneway_next(a, srv, cookie);
  h.user.then(a, [&](int tid) { h.driver.wait_user(tid); });
  h.run_until(20 * kMs);

  EXPECT_EQ(h.driver.counters().oneway, 3U);
  EXPECT_EQ(h.driver.counters().oneway_parked, 2U);
  std::vector<std::uint64_t> delivered;
  for (const auto& r : h.user.received()) {
    if (r.oneway) delivered.push_back(r.cookie);
  }
  ASSERT_EQ(delivered.size(), sent.size());
  for (std::size_t i = 0; i < sent.size(); ++i) {
    EXPECT_EQ(delivered[i], static_cast<std::uint64_t>(sent[i])) << "delivery " << i;
  }
}

TEST(DriverTest, NestedCallGoesToTheWaitingCallerThread) {
  // Kernel rule (1.3.2): server A, handling a call from client C of process P, calls back into
  // P; the chain contains C, so C's thread gets the call directly (no selection), not a looper
  // of P.
  DriverHarness h("fifo");
  const int p = h.add_server("p", 0);  // P has an idle looper
  const int q = h.add_server("q", 0);
  const int c = h.add_thread(p, "c", 4);
  int a = -1;
  h.user.set_handler(q, 0, [&](int tid, int /*txn*/) {
    a = tid;
    h.user.then(tid, [&h](int t) { h.user.finish(t); });  // reply once the nested call returns
    h.driver.call(tid, p, 0, 0, false, 50 * kUs);
  });
  h.call_at(c, 10 * kUs, q, 0);
  h.run_until(10 * kMs);

  ASSERT_EQ(h.user.received().size(), 2U);
  EXPECT_EQ(h.user.received()[0].tid, a);
  EXPECT_EQ(h.user.received()[0].from_tid, c);
  EXPECT_EQ(h.user.received()[1].tid, c);
  EXPECT_EQ(h.user.received()[1].from_tid, a);
  EXPECT_EQ(h.driver.counters().nested, 1U);
  EXPECT_EQ(h.decisions(), 1U);  // only C's call selected a thread
  EXPECT_TRUE(h.user.received_by(h.driver.loopers(p).front()).empty());
  ASSERT_EQ(h.user.replies_to(a).size(), 1U);
  ASSERT_EQ(h.user.replies_to(c).size(), 1U);
  EXPECT_LT(h.user.replies_to(a)[0].time, h.user.replies_to(c)[0].time);
}

TEST(DriverTest, NestedCallsUnwindThroughTheCallChain) {
  // Kernel rule (1.3.2): nested calls follow the chain both ways. C calls A; A, handling it,
  // calls back into C's process (to C); C, handling that, calls back into A's process (to A).
  // Each thread answers the innermost call first and then still answers its own.
  DriverHarness h("fifo");
  const int p = h.add_server("p", 0);
  const int q = h.add_server("q", 0);
  const int c = h.add_thread(p, "c", 4);
  h.user.set_handler(q, 0, [&h, p](int tid, int txn) {
    if (h.driver.transaction(txn).cookie != 1) {  // the nested call back into q: just answer
      h.user.compute_then_finish(tid, txn);
      return;
    }
    h.user.then(tid, [&h](int t) { h.user.finish(t); });
    h.driver.call(tid, p, 0, 0, false, 2);
  });
  h.user.set_handler(p, 0, [&h, q](int tid, int /*txn*/) {
    h.user.then(tid, [&h](int t) { h.user.finish(t); });
    h.driver.call(tid, q, 0, 0, false, 20 * kUs);
  });
  h.call_at(c, 10 * kUs, q, 1);
  h.run_until(10 * kMs);

  ASSERT_EQ(h.user.received().size(), 3U);
  const int a = h.user.received()[0].tid;
  EXPECT_EQ(tids_of(h.user.received()), (std::vector<int>{a, c, a}));
  EXPECT_EQ(h.driver.counters().nested, 2U);
  EXPECT_EQ(h.decisions(), 1U);
  // Innermost first: A's reply to C's nested call, then C's reply to A, then A's to C.
  ASSERT_EQ(h.user.replies().size(), 3U);
  EXPECT_EQ(h.user.replies()[0].tid, c);
  EXPECT_EQ(h.user.replies()[1].tid, a);
  EXPECT_EQ(h.user.replies()[2].tid, c);
  EXPECT_EQ(h.user.replies()[2].record.cookie, 1U);
  EXPECT_EQ(h.driver.waiting_threads(q), (std::vector<int>{a}));
}

TEST(DriverTest, ACallMadeWhileHandlingAOnewayIsNoNestedCallOfItsSender) {
  // Kernel rule (binder_transaction()): a call goes straight to a thread of the call chain only
  // when one is found on the caller's transaction_stack, and a oneway is never on it
  // (binder_thread_read() pushes only two-way calls) nor has a sender (t->from is NULL). Thread
  // C of process P sends a oneway to Q; Q's looper, handling it, calls P: P's own looper takes
  // that call, not C, and the looper's reply lets Q free the oneway.
  DriverHarness h("fifo");
  const int p = h.add_server("p", 0);
  const int q = h.add_server("q", 0);
  const int c = h.add_thread(p, "c", 4);
  const int p_looper = h.driver.loopers(p).front();
  const int q_looper = h.driver.loopers(q).front();
  h.user.set_handler(q, 0, [&h, p](int tid, int /*txn*/) {
    h.user.then(tid, [&h](int t) { h.user.finish(t); });
    h.driver.call(tid, p, 0, 0, false, 20 * kUs);
  });
  h.user.start_at(c, 10 * kUs);
  h.oneway_next(c, q, 0);
  h.run_until(10 * kMs);

  ASSERT_EQ(h.user.received().size(), 2U);
  EXPECT_EQ(h.user.received()[0].tid, q_looper);
  EXPECT_TRUE(h.user.received()[0].oneway);
  EXPECT_EQ(h.user.received()[1].tid, p_looper);
  EXPECT_EQ(h.user.received()[1].from_tid, q_looper);
  EXPECT_TRUE(h.user.received_by(c).empty());
  EXPECT_EQ(h.driver.counters().nested, 0U);
  EXPECT_EQ(h.user.replies_to(q_looper).size(), 1U);
  EXPECT_EQ(h.user.finished().size(), 2U);  // the call answered, the oneway freed
}

// --- Priority inheritance (binder_set_priority) -------------------------------------------------

TEST(DriverTest, AndroidInheritanceRunsTheServerAtTheRtCallersPriority) {
  // Kernel rule (1.6, Android): a SCHED_FIFO caller's policy and priority are given to the
  // server thread before it is woken (the node allows RT inheritance); the server restores its
  // own priority after the reply.
  DriverHarness h("fifo");
  const int srv = h.add_server("srv", 0, {NodeConfig{"rt", true, 19}});
  const int rt = h.add_thread(h.add_client_process(), "rt", 4, Policy::kFifo, 0, 50);
  const int looper = h.driver.loopers(srv).front();
  sched::Task at_reply;
  h.call_at(rt, 10 * kUs, srv, 100 * kUs);
  h.user.then(rt, [&](int tid) {
    at_reply = h.sched.task(looper);
    h.driver.wait_user(tid);
  });
  h.run_until(10 * kMs);

  ASSERT_EQ(h.user.received().size(), 1U);
  EXPECT_EQ(h.user.received()[0].policy, Policy::kFifo);
  EXPECT_EQ(h.user.received()[0].rt_priority, 50);
  const auto wakeups = h.placement.wakeups_of(looper);
  ASSERT_EQ(wakeups.size(), 2U);  // fork, then the call
  EXPECT_EQ(wakeups[1].policy, Policy::kFifo) << "raised before the wakeup";
  ASSERT_EQ(h.user.replies_to(rt).size(), 1U);
  EXPECT_EQ(at_reply.policy, Policy::kNormal);
  EXPECT_EQ(at_reply.rt_priority, 0);
  EXPECT_EQ(at_reply.nice, 0);
}

TEST(DriverTest, AndroidInheritanceRestoresTheServerPriorityAfterItsReply) {
  // Kernel rule (1.6, Android): a server restores its own priority after its reply. Here server
  // L runs at the RT priority of client C; it calls D through a node without RT inheritance,
  // and D calls back into L's process, which reaches L itself (nested) at D's normal priority.
  // Once L has answered that nested call it is back at C's RT priority for the rest of C's call.
  DriverHarness h("fifo");
  const int p1 = h.add_server("p1", 0, {NodeConfig{"rt", true, 19}});
  const int p2 = h.add_server("p2", 0, {NodeConfig{"no_rt", false, 19}});
  const int c = h.add_thread(h.add_client_process(), "c", 4, Policy::kFifo, 0, 50);
  int l = -1;
  sched::Task l_at_reply;
  h.user.set_handler(p1, 0, [&](int tid, int txn) {
    if (h.driver.transaction(txn).from_tid != c) {  // the nested call from D
      h.user.compute_then_finish(tid, txn);
      return;
    }
    l = tid;
    h.user.then(tid, [&](int t) {
      l_at_reply = h.sched.task(t);
      h.user.finish(t);
    });
    h.driver.call(tid, p2, 0, 0, false, 0);
  });
  h.user.set_handler(p2, 0, [&](int tid, int /*txn*/) {
    h.user.then(tid, [&h](int t) { h.user.finish(t); });
    h.driver.call(tid, p1, 0, 0, false, 20 * kUs);
  });
  h.call_at(c, 10 * kUs, p1, 0);
  h.run_until(10 * kMs);

  ASSERT_EQ(h.user.received().size(), 3U);
  EXPECT_EQ(h.driver.counters().nested, 1U);
  const Received& nested = h.user.received()[2];
  EXPECT_EQ(nested.tid, l);
  EXPECT_EQ(nested.policy, Policy::kNormal);  // D's priority: the no_rt node dropped RT
  ASSERT_EQ(h.user.replies_to(c).size(), 1U);
  EXPECT_EQ(l_at_reply.policy, Policy::kFifo);
  EXPECT_EQ(l_at_reply.rt_priority, 50);
}

// Android inheritance: an RT caller (SCHED_FIFO 50) at 10 us, then a SCHED_NORMAL caller at
// `caller_nice` at 2 ms, each call a node without inherit_rt whose minimum is `min_nice`; what
// the server received, in that order.
std::vector<Received> calls_through_a_node_without_inherit_rt(int min_nice, int caller_nice) {
  DriverHarness h("fifo");
  const int srv = h.add_server("srv", 0, {NodeConfig{"no_rt", false, min_nice}});
  const int clients = h.add_client_process();
  const int rt = h.add_thread(clients, "rt", 4, Policy::kFifo, 0, 50);
  const int normal = h.add_thread(clients, "normal", 5, Policy::kNormal, caller_nice);
  h.call_at(rt, 10 * kUs, srv, 100 * kUs);
  h.call_at(normal, 2 * kMs, srv, 100 * kUs);
  h.run_until(10 * kMs);
  const std::vector<Received> received = h.user.received();
  EXPECT_TRUE(received.size() == 2 && received[0].from_tid == rt && received[1].from_tid == normal);
  return received;
}

TEST(DriverTest, AndroidInheritanceWithoutInheritRtRunsAnRtCallersServerAtNiceZero) {
  // Kernel rule (1.6, Android): without FLAT_BINDER_FLAG_INHERIT_RT on the node, an RT
  // caller's server runs SCHED_NORMAL at nice 0; a normal caller's nice is still inherited.
  const std::vector<Received> received = calls_through_a_node_without_inherit_rt(19, -5);
  ASSERT_EQ(received.size(), 2U);
  EXPECT_EQ(received[0].policy, Policy::kNormal);
  EXPECT_EQ(received[0].rt_priority, 0);
  EXPECT_EQ(received[0].nice, 0);
  EXPECT_EQ(received[1].policy, Policy::kNormal);
  EXPECT_EQ(received[1].nice, -5);
}

TEST(DriverTest, AndroidInheritanceAppliesTheNodeMinimumOnlyOverTheCallersOwnPriority) {
  // Kernel rule (binder_transaction_priority(), Android): the node's minimum priority replaces
  // the transaction's when it is higher than the caller's own (t->priority). A nice 5 caller
  // runs at the node's nice -10; an RT caller demoted by a node without inherit_rt stays at nice
  // 0, as its own RT priority is above nice -10.
  const std::vector<Received> received = calls_through_a_node_without_inherit_rt(-10, 5);
  ASSERT_EQ(received.size(), 2U);
  EXPECT_EQ(received[0].policy, Policy::kNormal);
  EXPECT_EQ(received[0].nice, 0);
  EXPECT_EQ(received[1].nice, -10);
}

TEST(DriverTest, UpstreamInheritanceIsNiceOnlyAndAppliedAtTheRead) {
  // Kernel rule (1.6, upstream): the server takes the caller's nice when it reads the
  // transaction (not before the wakeup) and restores it on reply; an RT caller's policy and
  // priority are not propagated.
  KernelOptions options;
  options.inheritance = PriorityInheritance::kUpstream;
  DriverHarness h("fifo", options);
  const int srv = h.add_server("srv", 0);
  const int clients = h.add_client_process();
  const int nice = h.add_thread(clients, "nice", 4, Policy::kNormal, -5);
  const int rt = h.add_thread(clients, "rt", 5, Policy::kFifo, 0, 50);
  const int looper = h.driver.loopers(srv).front();
  h.call_at(nice, 10 * kUs, srv, 100 * kUs);
  h.call_at(rt, 2 * kMs, srv, 100 * kUs);
  h.run_until(1 * kMs);
  // Between the calls: restored on reply (upstream has no reset when the looper goes idle).
  EXPECT_EQ(h.sched.task(looper).nice, 0);
  h.run_until(10 * kMs);

  ASSERT_EQ(h.user.received().size(), 2U);
  EXPECT_EQ(h.user.received()[0].from_tid, nice);
  EXPECT_EQ(h.user.received()[0].nice, -5);
  EXPECT_EQ(h.user.received()[0].policy, Policy::kNormal);
  const auto wakeups = h.placement.wakeups_of(looper);
  ASSERT_EQ(wakeups.size(), 3U);  // fork and two calls
  EXPECT_EQ(wakeups[1].nice, 0) << "upstream raises the nice only when the thread reads";
  EXPECT_EQ(h.user.received()[1].from_tid, rt);
  EXPECT_EQ(h.user.received()[1].policy, Policy::kNormal);
  EXPECT_EQ(h.user.received()[1].rt_priority, 0);
  EXPECT_EQ(h.sched.task(looper).nice, 0);
  EXPECT_EQ(h.sched.task(looper).policy, Policy::kNormal);
}

TEST_P(DriverInheritanceTest, NodeMinimumPriorityBoundsTheInheritedNice) {
  // Kernel rule (1.6): the inherited nice is bounded by the node's minimum priority: a caller
  // less important than the node's floor gets its server at the floor.
  KernelOptions options;
  options.inheritance = GetParam();
  DriverHarness h("fifo", options);
  const int srv = h.add_server("srv", 0, {NodeConfig{"floor", true, -2}});
  const int clients = h.add_client_process();
  const int low = h.add_thread(clients, "low", 4, Policy::kNormal, 10);
  const int high = h.add_thread(clients, "high", 5, Policy::kNormal, -8);
  h.call_at(low, 10 * kUs, srv, 100 * kUs);
  h.call_at(high, 2 * kMs, srv, 100 * kUs);
  h.run_until(10 * kMs);

  ASSERT_EQ(h.user.received().size(), 2U);
  EXPECT_EQ(h.user.received()[0].nice, -2);
  EXPECT_EQ(h.user.received()[1].nice, -8);
}

TEST_P(DriverInheritanceTest, ACallerBelowTheNodeFloorRunsItsServerAtTheFloorEvenBelowItsOwnNice) {
  // Kernel rule (1.6): a two-way call's server is set to the node's minimum whenever the
  // caller's priority is not above it, even when the server's own nice is higher. Upstream
  // binder_thread_read(): binder_set_nice(target_node->min_priority) for any non-oneway
  // transaction (only a oneway is left alone when the thread already runs above the floor);
  // Android binder_transaction_priority() sets the node's priority as it replaces t->priority.
  // A nice 10 caller through a floor of nice 5 runs the nice 0 looper at nice 5.
  KernelOptions options;
  options.inheritance = GetParam();
  DriverHarness h("fifo", options);
  const int srv = h.add_server("srv", 0, {NodeConfig{"floor", true, 5}});
  const int low = h.add_thread(h.add_client_process(), "low", 4, Policy::kNormal, 10);
  const int looper = h.driver.loopers(srv).front();
  h.call_at(low, 10 * kUs, srv, 100 * kUs);
  h.run_until(10 * kMs);

  ASSERT_EQ(h.user.received().size(), 1U);
  EXPECT_EQ(h.user.received()[0].tid, looper);
  EXPECT_EQ(h.user.received()[0].nice, 5);
  ASSERT_EQ(h.user.replies_to(low).size(), 1U);
  EXPECT_EQ(h.sched.task(looper).nice, 0);  // restored on reply
}

TEST_P(DriverInheritanceTest, TheServerRestoresItsNiceBeforeOrAfterWakingTheCaller) {
  // Kernel rule (1.6): upstream binder_transaction() restores the server's nice as the reply
  // path starts (binder_set_nice(in_reply_to->saved_priority)), so it sends the reply and
  // wakes its caller at its own priority. The Android common kernel restores it after the
  // wakeup (binder_restore_priority() after wake_up_interruptible_sync()), but before it when
  // the reply fails: its error path restores, then binder_send_failed_reply() wakes.
  const bool upstream = GetParam() == PriorityInheritance::kUpstream;
  for (const bool fits : {true, false}) {
    KernelOptions options;
    options.inheritance = GetParam();
    DriverHarness h("fifo", options);
    h.user.reply_bytes = 8192;
    const int srv = h.add_server("srv", 0);
    const int clients = h.add_client_process("clients", fits ? 0 : 4096);
    const int client = h.add_thread(clients, "client", 4, Policy::kNormal, -5);
    const int looper = h.driver.loopers(srv).front();
    h.call_at(client, 10 * kUs, srv, 100 * kUs);
    h.run_until(10 * kMs);

    ASSERT_EQ(h.user.received().size(), 1U);
    EXPECT_EQ(h.user.received()[0].nice, -5);
    ASSERT_EQ(h.user.replies_to(client).size(), 1U);
    EXPECT_EQ(h.user.replies_to(client).front().record.failed, !fits);
    const auto wakeups = h.placement.wakeups_of(client);
    ASSERT_FALSE(wakeups.empty());
    const PlacementRecord& by_reply = wakeups.back();
    EXPECT_EQ(by_reply.sync, fits);
    EXPECT_EQ(by_reply.waker_nice, upstream || !fits ? 0 : -5) << (fits ? "fits" : "no space");
    EXPECT_EQ(h.sched.task(looper).nice, 0);
  }
}

TEST_P(DriverInheritanceTest, ANestedCallsReplyIsFreedBeforeTheServerRestoresItsPriority) {
  // libbinder writes the BC_FREE_BUFFER of a nested call's reply ahead of BC_REPLY, and
  // binder_thread_write() runs them in order: the free (and its allocator lock holds) runs at
  // the inherited priority, then the reply restores it (upstream as the reply starts, Android
  // after waking the caller).
  KernelOptions options;
  options.inheritance = GetParam();
  DriverHarness h("fifo", options);
  const int p = h.add_server("p", 0);
  const int q = h.add_server("q", 0);
  const int c = h.add_thread(p, "c", 4, Policy::kNormal, -5);
  int a = -1;
  int nice_after_reply_written = 99;
  h.user.set_handler(q, 0, [&](int tid, int /*txn*/) {
    a = tid;
    h.user.then(tid, [&](int t) {  // the nested call returned: reply
      h.user.finish(t);
      nice_after_reply_written = h.sched.task(t).nice;
    });
    h.driver.call(tid, p, 0, 0, false, 50 * kUs);  // back into P: to C itself
  });
  h.call_at(c, 10 * kUs, q, 0);
  h.run_until(10 * kMs);

  ASSERT_EQ(h.user.replies_to(c).size(), 1U);
  EXPECT_EQ(h.driver.counters().nested, 1U);
  EXPECT_EQ(nice_after_reply_written, -5) << "the nested reply's free runs first";
  const auto wakeups = h.placement.wakeups_of(c);
  ASSERT_FALSE(wakeups.empty());
  EXPECT_EQ(wakeups.back().waker_nice, GetParam() == PriorityInheritance::kUpstream ? 0 : -5);
  EXPECT_EQ(h.sched.task(a).nice, 0);
}

TEST_P(DriverInheritanceTest, ALooperFreeForProcessWorkTakesTheDefaultPriorityBack) {
  // binder_thread_read(): a thread free for process work (wait_for_proc_work) takes the
  // process's default priority back, upstream (binder_set_nice(proc->default_priority)) as on
  // Android. A oneway to a node with a floor leaves its looper at the floor until then.
  KernelOptions options;
  options.inheritance = GetParam();
  DriverHarness h("fifo", options);
  const int srv = h.add_server("srv", 0, {NodeConfig{"floor", true, -2}});
  const int x = h.add_thread(h.add_client_process(), "x", 4);
  const int looper = h.driver.loopers(srv).front();
  h.user.start_at(x, 10 * kUs);
  h.oneway_next(x, srv, 100 * kUs);
  h.run_until(10 * kMs);

  ASSERT_EQ(h.user.received().size(), 1U);
  EXPECT_EQ(h.user.received()[0].nice, -2);
  EXPECT_EQ(h.sched.task(looper).nice, 0);
}

// --- CTABS: last_cpu and the wake_cpu nudge (the patch) -----------------------------------------

TEST(DriverTest, LastCpuIsWhereTheLooperReturnedFromWaiting) {
  // CTABS rule (3): a binder thread's last_cpu is the CPU it runs on right after it returns
  // from waiting for work, -1 until then; the call's server_cpu is the same CPU.
  DriverHarness h("ctabs");
  h.pin_loopers("srv", {5});
  const int srv = h.add_server("srv", 0);
  const int clients = h.add_client_process();
  const int a = h.add_thread(clients, "a", 4);
  const int b = h.add_thread(clients, "b", 4);
  const int looper = h.driver.loopers(srv).front();
  h.run_until(50 * kUs);
  ASSERT_EQ(h.driver.waiting_threads(srv), (std::vector<int>{looper}));
  EXPECT_EQ(h.driver.last_cpu(looper), -1) << "registered and idle, never woken from waiting";

  h.call_at(a, 100 * kUs, srv, 50 * kUs);
  h.run_until(1 * kMs);
  h.placement.pin(looper, 1);  // its next wakeup lands on CPU 1
  h.call_at(b, 2 * kMs, srv, 50 * kUs);
  h.run_until(10 * kMs);

  ASSERT_EQ(h.user.received().size(), 2U);
  EXPECT_EQ(h.user.received()[0].last_cpu, 5);
  EXPECT_EQ(h.user.received()[0].cpu, 5);
  EXPECT_EQ(h.user.received()[1].last_cpu, 1);
  EXPECT_EQ(h.user.received()[1].cpu, 1);
  EXPECT_EQ(h.driver.last_cpu(looper), 1);
  ASSERT_EQ(h.user.replies().size(), 2U);
  EXPECT_EQ(h.user.replies()[0].record.server_cpu, 5);
  EXPECT_EQ(h.user.replies()[1].record.server_cpu, 1);
  // The second selection saw the first wakeup's CPU.
  ASSERT_EQ(h.selector.log().size(), 2U);
  EXPECT_EQ(h.selector.log()[1].waiting.front().last_cpu, 5);
}

TEST(DriverTest, AFailedReplyWakesTheCallerWithoutSync) {
  // A reply wakes its caller with WF_SYNC; a reply that finds no buffer space in the caller's
  // process ends the wait through binder_send_failed_reply(), a plain wake_up_interruptible().
  for (const bool fits : {true, false}) {
    DriverHarness h;
    h.user.reply_bytes = 8192;
    const int srv = h.add_server("srv", 0);
    const int a = h.add_thread(h.add_client_process("clients", fits ? 0 : 4096), "a", 4);
    h.call_at(a, 10 * kUs, srv, 50 * kUs);
    h.run_until(10 * kMs);
    ASSERT_EQ(h.user.replies_to(a).size(), 1U) << (fits ? "fits" : "no space");
    EXPECT_EQ(h.user.replies_to(a).front().record.failed, !fits);
    const auto wakeups = h.placement.wakeups_of(a);
    ASSERT_FALSE(wakeups.empty());
    EXPECT_EQ(wakeups.back().sync, fits) << (fits ? "fits" : "no space");
  }
}

TEST_P(DriverSelectorTest, NoCallSelectionEverNudgesWithAnHonestMachine) {
  // CTABS rule (3): a nudge needs available_idle_cpu(caller_cpu) at selection time, but a
  // synchronous caller runs on its CPU while it selects; so a cluster-match win is declined
  // (ctabs-nudge counts it) and no nudge is applied, whatever the policy.
  DriverHarness h(GetParam());
  h.pin_loopers("srv", {5});
  const int srv = h.add_server("srv", 0);
  const int a = h.add_thread(h.add_client_process(), "a", 4);
  h.call_at(a, 10 * kUs, srv, 50 * kUs);  // the looper then has last_cpu 5
  h.call_next(a, srv, 50 * kUs);          // cluster match: 5 and 4 are both gold
  h.run_until(10 * kMs);

  const int looper = h.driver.loopers(srv).front();
  ASSERT_EQ(h.user.replies_to(a).size(), 2U);
  ASSERT_EQ(h.selector.log().size(), 2U);
  EXPECT_EQ(h.selector.log()[1].waiting.front().last_cpu, 5);
  EXPECT_EQ(h.selector.log()[1].preferred_cpu, -1);
  EXPECT_EQ(h.counts().nudges_declined, GetParam() == "ctabs-nudge" ? 1U : 0U);
  EXPECT_EQ(h.driver.counters().nudges_applied, 0U);
  // The looper's second wakeup saw its own previous CPU as wake_cpu.
  const auto wakeups = h.placement.wakeups_of(looper);
  ASSERT_EQ(wakeups.size(), 3U);  // fork, then two calls
  EXPECT_EQ(wakeups[2].prev_cpu, 5);
  EXPECT_TRUE(wakeups[2].sync);
}

TEST(DriverTest, NudgeIsAppliedOnlyOnSyncWakeups) {
  // CTABS rule (3, patch 2): a cluster-match win with the caller's CPU idle gives a preferred
  // CPU; the driver writes it to wake_cpu only just before a SYNC wakeup (a two-way call) and
  // never on a non-sync one (a oneway send). The machine view here claims every CPU idle, so
  // that the policy does nudge.
  DriverHarness h("ctabs-nudge");
  h.selector.set_claim_idle(true);
  h.pin_loopers("srv", {5});
  const int srv = h.add_server("srv", 0);
  const int a = h.add_thread(h.add_client_process(), "a", 4);
  const int looper = h.driver.loopers(srv).front();
  h.call_at(a, 10 * kUs, srv, 50 * kUs);  // last_cpu -1: no cluster match, no nudge
  h.oneway_next(a, srv, 50 * kUs);        // cluster match, non-sync
  h.user.then(a, [&h](int tid) { h.driver.sleep(tid, 1 * kMs, 0); });
  h.call_next(a, srv, 50 * kUs);  // cluster match, sync
  h.run_until(10 * kMs);

  ASSERT_EQ(h.selector.log().size(), 3U);
  EXPECT_EQ(h.selector.log()[0].preferred_cpu, -1);
  EXPECT_FALSE(h.selector.log()[1].sync);
  EXPECT_EQ(h.selector.log()[1].preferred_cpu, 4);
  EXPECT_TRUE(h.selector.log()[2].sync);
  EXPECT_EQ(h.selector.log()[2].preferred_cpu, 4);
  EXPECT_EQ(h.driver.counters().nudges_applied, 1U);

  const auto wakeups = h.placement.wakeups_of(looper);
  ASSERT_EQ(wakeups.size(), 4U);  // fork, call, oneway, call
  EXPECT_FALSE(wakeups[2].sync);
  EXPECT_EQ(wakeups[2].prev_cpu, 5) << "the oneway wakeup is not nudged";
  EXPECT_TRUE(wakeups[3].sync);
  EXPECT_EQ(wakeups[3].prev_cpu, 4) << "the sync wakeup is nudged to the caller's CPU";
}

TEST(DriverTest, NudgeIsClearedOnEveryWakeup) {
  // CTABS rule (3, patch 2): preferred_cpu is reset on every wakeup, so a nudge chosen for a
  // non-sync wakeup (not applied) is not applied later either, e.g. when the same looper is
  // woken by the SYNC wakeup of a reply to a call it made while handling the oneway.
  DriverHarness h("ctabs-nudge");
  h.selector.set_claim_idle(true);
  h.pin_loopers("srv", {5});
  h.pin_loopers("other", {7});
  const int srv = h.add_server("srv", 0);
  const int other = h.add_server("other", 0);
  const int a = h.add_thread(h.add_client_process(), "a", 4);
  const int looper = h.driver.loopers(srv).front();
  h.user.set_handler(srv, 0, [&h, other](int tid, int txn) {
    if (!h.driver.transaction(txn).oneway) {
      h.user.compute_then_finish(tid, txn);
      return;
    }
    h.user.then(tid, [&h](int t) { h.user.finish(t); });
    h.driver.call(tid, other, 0, 0, false, 50 * kUs);
  });
  h.call_at(a, 10 * kUs, srv, 50 * kUs);  // gives the looper last_cpu 5
  h.oneway_next(a, srv, 0);               // nudge to CPU 4 chosen, non-sync
  h.run_until(10 * kMs);

  ASSERT_EQ(h.selector.log().size(), 3U);  // call, oneway, the looper's call to `other`
  EXPECT_EQ(h.selector.log()[1].preferred_cpu, 4);
  EXPECT_FALSE(h.selector.log()[1].sync);
  EXPECT_EQ(h.selector.log()[2].preferred_cpu, -1);  // `other`'s looper never ran: no match
  const auto replies = h.user.replies_to(looper);
  ASSERT_EQ(replies.size(), 1U);
  EXPECT_EQ(h.driver.counters().nudges_applied, 0U);
  const auto wakeups = h.placement.wakeups_of(looper);
  ASSERT_EQ(wakeups.size(), 4U);  // fork, call, oneway, reply
  EXPECT_TRUE(wakeups[3].sync);
  EXPECT_EQ(wakeups[3].prev_cpu, 5);
}

TEST(DriverTest, ProcWakeupNeverNudges) {
  // CTABS rule (3): binder_wakeup_proc_ilocked selects with the same policy but its wakeup is
  // non-sync, so the preferred CPU it returns is never written to wake_cpu. Here it runs when
  // the first of two oneways to a node is freed and the parked one moves to proc->todo.
  DriverHarness h("ctabs-nudge");
  h.selector.set_claim_idle(true);
  h.pin_loopers("srv", {5, 6});
  const int srv = h.add_server("srv", 1);
  const int clients = h.add_client_process();
  const int a = h.add_thread(clients, "a", 4);
  const int b = h.add_thread(clients, "b", 4);
  const int c = h.add_thread(clients, "c", 4);
  h.call_at(a, 10 * kUs, srv, 2 * kMs);   // main looper: last_cpu 5
  h.call_at(b, 500 * kUs, srv, 5 * kMs);  // spawned looper: last_cpu 6, idle last
  h.user.start_at(c, 10 * kMs);
  h.oneway_next(c, srv, 1 * kMs);
  h.oneway_next(c, srv, 1 * kMs);
  h.run_until(30 * kMs);

  const std::vector<int> loopers = h.driver.loopers(srv);
  ASSERT_EQ(loopers.size(), 2U);
  EXPECT_EQ(h.driver.counters().oneway_parked, 1U);
  // The proc wakeup: non-sync, caller = the freeing looper on CPU 6, the idle one on CPU 5.
  const SelectionRecord* proc_wakeup = nullptr;
  for (const auto& record : h.selector.log()) {
    if (record.caller_cpu == 6) proc_wakeup = &record;
  }
  ASSERT_NE(proc_wakeup, nullptr);
  EXPECT_FALSE(proc_wakeup->sync);
  EXPECT_EQ(proc_wakeup->chosen_tid, loopers[0]);
  EXPECT_EQ(proc_wakeup->preferred_cpu, 6);
  EXPECT_EQ(h.driver.counters().nudges_applied, 0U);
  const auto wakeups = h.placement.wakeups_of(loopers[0]);
  ASSERT_FALSE(wakeups.empty());
  EXPECT_FALSE(wakeups.back().sync);
  EXPECT_EQ(wakeups.back().prev_cpu, 5);
}

// --- What a completed call reports --------------------------------------------------------------

TEST(DriverTest, CallRecordHoldsTimesAndTheObservedCpus) {
  // Driver contract (CallRecord): started is when the caller entered the send path, finished
  // when the reply reached its userspace (so the latency covers the handler's work; the
  // client's free of the reply buffer follows, before on_reply),
  // caller_cpu and server_cpu are the CPUs the caller and the server ran on, and the cookie
  // and caller policy are the caller's.
  DriverHarness h("fifo");
  h.pin_loopers("srv", {6});
  const int srv = h.add_server("srv", 0);
  const int rt = h.add_thread(h.add_client_process(), "rt", 2, Policy::kFifo, 0, 10);
  SimTime called = -1;
  h.user.start_at(rt, 10 * kUs);
  h.user.then(rt, [&](int tid) {
    called = h.sched.now();
    h.driver.call(tid, srv, 0, 64, false, 200 * kUs);
  });
  h.run_until(10 * kMs);

  const auto replies = h.user.replies_to(rt);  // a copy: the record below refers into it
  ASSERT_EQ(replies.size(), 1U);
  const CallRecord& record = replies[0].record;
  ASSERT_EQ(h.user.received().size(), 1U);
  EXPECT_EQ(record.started, called);
  EXPECT_LT(record.finished, replies[0].time);
  EXPECT_LT(replies[0].time - record.finished, 20 * kUs);  // BC_FREE_BUFFER on CPU 2
  EXPECT_GT(record.finished - record.started, 200 * kUs);  // CPU 6 runs at reference speed
  EXPECT_LT(record.started, h.user.received()[0].time);
  EXPECT_EQ(record.caller_cpu, 2);
  EXPECT_EQ(record.server_cpu, 6);
  EXPECT_EQ(record.server_cpu, h.user.received()[0].cpu);
  EXPECT_EQ(record.caller_policy, Policy::kFifo);
  EXPECT_EQ(record.cookie, static_cast<std::uint64_t>(200 * kUs));
}

// --- Instantiations -----------------------------------------------------------------------------

INSTANTIATE_TEST_SUITE_P(Selectors, DriverSelectorTest,
                         ::testing::Values("fifo", "ctabs", "ctabs-nudge"), selector_test_name);

INSTANTIATE_TEST_SUITE_P(Modes, DriverInheritanceTest,
                         ::testing::Values(PriorityInheritance::kAndroid,
                                           PriorityInheritance::kUpstream),
                         inheritance_test_name);

}  // namespace
}  // namespace bindersim::binder::testing
