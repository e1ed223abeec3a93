// Whole-simulation properties: determinism, seeds, selectors and the consistency of results.
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "bindersim/common/error.hpp"
#include "bindersim/common/json_reader.hpp"
#include "bindersim/io/result_json.hpp"
#include "bindersim/trace/ftrace_writer.hpp"
#include "sim_fixture.hpp"

namespace bindersim {
namespace {

using stats::SchedClass;
using stats::Tier;
using testing::run_scenario;
using testing::scaled_scenario;

std::string json_text(const stats::RunResult& result) {
  std::ostringstream out;
  io::write_result_json(result, out);
  return out.str();
}

class SchdDbgTest : public ::testing::Test {
 protected:
  workload::Scenario scenario_ = scaled_scenario("schd-dbg", 500);
};

TEST_F(SchdDbgTest, SameSeedGivesByteIdenticalResults) {
  // Same scenario, options and seed: the same trajectory and the same file, byte for byte.
  const auto first = run_scenario(scenario_, "ctabs", 3);
  const auto second = run_scenario(scenario_, "ctabs", 3);
  EXPECT_EQ(first.fingerprint, second.fingerprint);
  EXPECT_EQ(json_text(first), json_text(second));
}

TEST_F(SchdDbgTest, AnotherSeedGivesAnotherTrajectory) {
  // The background load draws from the seeded streams, so another seed is another run.
  EXPECT_NE(run_scenario(scenario_, "fifo", 1).fingerprint,
            run_scenario(scenario_, "fifo", 2).fingerprint);
}

TEST_F(SchdDbgTest, TheKernelsPeltClockIsAnotherDeterministicTrajectory) {
  // kernel.pelt_clock "scaled" ages PELT by each run queue's scaled clock: utilisation on the
  // small and slowed CPUs moves faster, so the same seed takes another trajectory, and again
  // the same one, byte for byte.
  workload::Scenario scaled = scenario_;
  scaled.kernel.sched.scaled_pelt_clock = true;
  const auto first = run_scenario(scaled, "fifo", 1);
  const auto second = run_scenario(scaled, "fifo", 1);
  EXPECT_EQ(json_text(first), json_text(second));
  const auto wall = run_scenario(scenario_, "fifo", 1);
  EXPECT_NE(first.fingerprint, wall.fingerprint);
  EXPECT_EQ(first.completed, wall.completed);  // the same calls, on another trajectory
}

TEST_F(SchdDbgTest, EveryCallIsCountedInExactlyOneTier) {
  // Each client iteration makes one SCHED_FIFO and one SCHED_OTHER call.
  const auto result = run_scenario(scenario_, "fifo");
  EXPECT_EQ(result.completed, 2u * 500u);
  std::uint64_t per_class[2] = {0, 0};
  for (auto cls : {SchedClass::kFifo, SchedClass::kOther}) {
    for (auto tier : {Tier::kSameCore, Tier::kSameCluster, Tier::kCrossCluster}) {
      per_class[static_cast<int>(cls)] += result.tier(cls, tier).count();
    }
  }
  EXPECT_EQ(per_class[0], 500u);
  EXPECT_EQ(per_class[1], 500u);
  EXPECT_EQ(result.latency.count(), result.completed);
}

TEST_F(SchdDbgTest, SelectionsAreCountedByReason) {
  // Every call selects a looper (replies never do); the reasons add up to the selections.
  const auto result = run_scenario(scenario_, "fifo");
  const auto& s = result.selection;
  EXPECT_EQ(s.same_cpu + s.same_cluster + s.other + s.none_idle, result.completed);
}

TEST_F(SchdDbgTest, CtabsDecidesDifferentlyFromTheDefault) {
  // With several idle loopers whose last CPUs differ, CTABS prefers the caller's CPU or
  // cluster where the default takes the most recently idle looper. (Under gki the sync rule
  // keeps the pair on one CPU and the loopers rarely differ, so mainline shows it here.)
  const auto fifo = run_scenario(scenario_, "fifo", 1, "mainline");
  const auto ctabs = run_scenario(scenario_, "ctabs", 1, "mainline");
  const auto& a = fifo.selection;
  const auto& b = ctabs.selection;
  EXPECT_TRUE(a.same_cpu != b.same_cpu || a.same_cluster != b.same_cluster || a.other != b.other)
      << "fifo and ctabs made the same decisions";
  EXPECT_NE(fifo.fingerprint, ctabs.fingerprint);
}

TEST_F(SchdDbgTest, NudgeIsDeclinedWhileTheCallerRuns) {
  // On a synchronous call the caller runs on its CPU while it selects, so
  // available_idle_cpu(caller_cpu) is false and ctabs-nudge declines every cluster-match
  // nudge; ctabs and fifo never nudge.
  const auto nudge = run_scenario(scenario_, "ctabs-nudge");
  EXPECT_EQ(nudge.selection.nudges_applied, 0u);
  EXPECT_EQ(nudge.selection.nudges_declined, nudge.selection.same_cluster);
  const auto ctabs = run_scenario(scenario_, "ctabs");
  EXPECT_EQ(ctabs.selection.nudges_declined, 0u);
}

TEST_F(SchdDbgTest, CountersArePlausible) {
  // Every call wakes a looper and the caller sleeps: at least two switches per call; cycles
  // are counted at the running CPU's frequency; misses never exceed references.
  const auto result = run_scenario(scenario_, "fifo");
  EXPECT_GE(result.counters.context_switches, 2 * result.completed);
  EXPECT_GT(result.counters.cpu_cycles, 0u);
  EXPECT_GT(result.counters.cache_refs, result.counters.cache_misses);
  EXPECT_GT(result.counters.migrations, 0u);
}

TEST_F(SchdDbgTest, LatenciesAreOrderedWithinEachTier) {
  // min <= p50 <= p90 <= p99 <= max for every tier with calls.
  const auto result = run_scenario(scenario_, "ctabs");
  for (const auto& per_class : result.tiers) {
    for (const auto& h : per_class) {
      if (h.count() == 0) continue;
      EXPECT_LE(h.min(), h.percentile(0.5));
      EXPECT_LE(h.percentile(0.5), h.percentile(0.9));
      EXPECT_LE(h.percentile(0.9), h.percentile(0.99));
      EXPECT_LE(h.percentile(0.99), h.max());
    }
  }
}

TEST_F(SchdDbgTest, TimeLimitStopsARunThatCannotFinish) {
  // A run stops at the scenario's time limit even when clients are not done.
  auto scenario = scenario_;
  scenario.time_limit_ns = 5'000'000;  // 5 ms: far too short for 500 iterations
  const auto result = run_scenario(scenario, "fifo");
  EXPECT_LE(result.simulated_ns, 5'000'000);
  EXPECT_LT(result.completed, 1000u);
}

}  // namespace
}  // namespace bindersim

namespace bindersim {
namespace {

TEST(SimulationLimitsTest, HandlersCallingEachOtherWithoutEndStopWithOneError) {
  // The server's handler calls back into the client process and the client's handler calls
  // the server again: the chain nests without end. The run stops with a ConfigError instead of
  // growing until the time limit.
  auto scenario = testing::scaled_scenario("schd-dbg", 10);
  auto call_to = [](int process) {
    workload::Step step;
    step.op = workload::Step::Op::kCall;
    step.target.processes = {process};
    step.pointer = "/processes/" + std::to_string(1 - process) + "/nodes/0/handler/0";
    return step;
  };
  scenario.processes[0].nodes[0].handler = {call_to(1)};
  scenario.processes[1].nodes[0].handler = {call_to(0)};
  try {
    testing::run_scenario(scenario, "fifo");
    FAIL() << "an endless call chain ran to completion";
  } catch (const ConfigError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("256 nested transactions"), std::string::npos) << message;
    // It names the scenario's file and the step that made the last call.
    EXPECT_EQ(message.rfind(scenario.source() + ": /processes/", 0), 0U) << message;
    EXPECT_NE(message.find("/nodes/0/handler/0: "), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(SimulationLimitsTest, HandlerCallingItsOwnProcessStopsWithOneError) {
  // The server's handler calls the server: a local call, run on the looper itself, whose handler
  // calls again. The frames nested without end (the run hung); now the run stops at the step.
  auto scenario = testing::scaled_scenario("sync-wakeup", 10);
  workload::Step call;
  call.op = workload::Step::Op::kCall;
  call.target.processes = {0};
  call.pointer = "/processes/0/nodes/0/handler/0";
  scenario.processes[0].nodes[0].handler = {call};
  try {
    testing::run_scenario(scenario, "fifo");
    FAIL() << "an endless chain of local calls ran to completion";
  } catch (const ConfigError& error) {
    EXPECT_EQ(std::string(error.what()),
              scenario.source() +
                  ": /processes/0/nodes/0/handler/0: the scenario's handlers call each other "
                  "without end: a chain of calls within process \"server\" reached 256 nested "
                  "calls");
  }
}

TEST(SimulationLimitsTest, HandlerStartingThreadsThatCallItsOwnProcessStopsWithOneError) {
  // The handler starts a thread that calls the handler's own process: each local call runs on
  // a new thread, whose frames started afresh, so the depth never reached the limit and the
  // threads, each waiting for the next, grew without end (gigabytes in seconds).
  auto scenario = testing::scaled_scenario("sync-wakeup", 10);
  workload::Step call;
  call.op = workload::Step::Op::kCall;
  call.target.processes = {0};
  call.pointer = "/processes/0/nodes/0/handler/0/steps/0";
  workload::Step thread;
  thread.op = workload::Step::Op::kThread;
  thread.steps = std::make_shared<workload::Steps>(workload::Steps{call});
  thread.pointer = "/processes/0/nodes/0/handler/0";
  scenario.processes[0].nodes[0].handler = {thread};
  try {
    testing::run_scenario(scenario, "fifo");
    FAIL() << "an endless chain of threads and local calls ran to completion";
  } catch (const ConfigError& error) {
    EXPECT_EQ(std::string(error.what()),
              scenario.source() +
                  ": /processes/0/nodes/0/handler/0/steps/0: the scenario's handlers call each "
                  "other without end: a chain of calls within process \"server\" reached 256 "
                  "nested calls, counting the threads waiting for helpers");
  }
}

TEST(SimulationLimitsTest, AHandlerThatSleepsCountsTheSleepAsOtherNotAsService) {
  // After a sleep the handler's userspace work was counted from a stale mark: its service grew
  // by the looper's kernel work of every earlier call, and its kernel part went negative.
  auto scenario = testing::scaled_scenario("sync-wakeup", 10);
  workload::Step nap;
  nap.op = workload::Step::Op::kSleep;
  nap.amount.a = 20'000;
  scenario.processes[0].nodes[0].handler = {nap};
  const stats::RunResult result = testing::run_scenario(scenario, "fifo");
  ASSERT_EQ(result.completed, 10u);
  std::uint64_t calls = 0;
  for (std::size_t c = 0; c < result.tiers.size(); ++c) {
    for (std::size_t t = 0; t < result.tiers[c].size(); ++t) {
      const stats::BreakdownSums& sums = result.breakdown[c][t];
      calls += result.tiers[c][t].count();
      EXPECT_EQ(sums.service_ns, 0) << "class " << c << " tier " << t;  // no handler work
      EXPECT_GE(sums.kernel_ns, 0) << "class " << c << " tier " << t;
      // Each call's 20 us sleep is neither kernel path nor wait: it is the rest.
      EXPECT_EQ(sums.other_ns, static_cast<std::int64_t>(result.tiers[c][t].count()) * 20'000)
          << "class " << c << " tier " << t;
    }
  }
  EXPECT_EQ(calls, 10u);
}

TEST(SimulationLimitsTest, AReplyWithoutBufferSpaceFailsTheCall) {
  // The reply (8 KiB) cannot fit the caller's 4 KiB of buffer space: the caller gets
  // BR_FAILED_REPLY. Such calls were counted as completed, with a latency.
  auto scenario = testing::scaled_scenario("sync-wakeup", 10);
  scenario.processes[0].nodes[0].reply_bytes = 8192;
  scenario.processes[1].buffer_space_bytes = 4096;
  const stats::RunResult result = testing::run_scenario(scenario, "fifo");
  EXPECT_EQ(result.completed, 0u);
  EXPECT_EQ(result.failed_calls, 10u);
  EXPECT_EQ(result.latency.count(), 0u);
  EXPECT_EQ(result.allocator.failed_no_space, 10u);
}

TEST(SimulationLimitsTest, CallsWithinAProcessRunLocallyOnewayOrNot) {
  // libbinder runs a call to its own process's object on the calling thread
  // (BBinder::transact, whatever FLAG_ONEWAY says): no transaction, no buffer; the kernel
  // rejects self transactions. Only a two-way call counts as a call (same core, all service).
  for (const bool oneway : {false, true}) {
    auto scenario = testing::scaled_scenario("sync-wakeup", 10);
    workload::Step work;
    work.op = workload::Step::Op::kCompute;
    work.amount = workload::Quantity{workload::Quantity::Kind::kConstant, 3000, 0};
    scenario.processes[1].nodes[0].handler = {work};
    workload::Step call;
    call.op = workload::Step::Op::kCall;
    call.target.processes = {1};  // the client's own process
    call.oneway = oneway;
    call.pointer = "/clients/0/iteration/2";
    scenario.clients[0].iteration.push_back(call);
    const auto result = testing::run_scenario(scenario, "fifo");
    // Each iteration: a call to the server (request and reply buffers) and the local call.
    EXPECT_EQ(result.allocator.allocations, 20U) << (oneway ? "oneway" : "two-way");
    EXPECT_EQ(result.completed, oneway ? 10U : 20U) << (oneway ? "oneway" : "two-way");
  }
}

TEST(SimulationLimitsTest, CountersCoverTasksStillRunningAtTheEnd) {
  // A background task pinned to CPU 7 computes for 1 s, longer than the run: its time up to
  // the end was in the busy share but not in the cycles (simpleperf stat -a counts it).
  auto scenario = testing::scaled_scenario("sync-wakeup", 10);  // performance governor
  workload::ClientSpec hog;
  hog.name = "hog";
  hog.process = -1;
  hog.affinity.cpus = {7};
  workload::Step spin;
  spin.op = workload::Step::Op::kCompute;
  spin.amount.a = 1'000'000'000;
  hog.iteration = {spin};
  scenario.background.push_back(hog);
  const stats::RunResult result = testing::run_scenario(scenario, "fifo");
  ASSERT_EQ(result.completed, 10u);
  const auto topology = testing::topology_of(scenario);
  double busy_cycles = 0;  // busy time x the (fixed) frequency of each CPU
  for (int cpu = 0; cpu < topology.num_cpus(); ++cpu) {
    const auto& cluster =
        result.scheduler.clusters[static_cast<std::size_t>(topology.cluster_of(cpu))];
    busy_cycles +=
        static_cast<double>(result.scheduler.cpu_busy_ns[static_cast<std::size_t>(cpu)]) *
        static_cast<double>(cluster.mean_freq_khz) / 1e6;
  }
  EXPECT_GT(result.scheduler.cpu_busy_ns[7], result.simulated_ns * 99 / 100);
  // Within rounding: cycles are counted per segment, in whole numbers.
  EXPECT_NEAR(static_cast<double>(result.counters.cpu_cycles), busy_cycles, busy_cycles * 1e-4);
}

TEST(SimulationLimitsTest, LoopWhoseIterationsTakeNoTimeStopsWithOneError) {
  // A background task that only computes 0 ns never lets the clock advance: the run hung at
  // one instant. After 1000 zero-time iterations in a row it stops with one line.
  auto scenario = testing::scaled_scenario("sync-wakeup", 10);
  workload::ClientSpec spinner;
  spinner.name = "spinner";
  spinner.process = -1;
  workload::Step nothing;
  nothing.op = workload::Step::Op::kCompute;
  spinner.iteration = {nothing};
  scenario.background.push_back(spinner);
  try {
    testing::run_scenario(scenario, "fifo");
    FAIL() << "a loop of zero-time iterations ran to completion";
  } catch (const ConfigError& error) {
    EXPECT_EQ(std::string(error.what()),
              scenario.source() +
                  ": /background/0/iteration: 1000 iterations in a row took no simulated time, so "
                  "the loop would never let time advance; give it a step that takes time (a sleep "
                  "or a compute above 0 ns)");
  }
  // Zero-time iterations now and then are fine: uniform work in [0, 1] ns is often 0.
  scenario.background.back().iteration[0].amount = {workload::Quantity::Kind::kUniform, 0, 1};
  scenario.background.back().iteration.push_back(nothing);
  EXPECT_TRUE(testing::run_scenario(scenario, "fifo").clients_finished);
}

TEST(SimulationLimitsTest, AClientMayTakeNoTimeFor999IterationsInARowButNot1000) {
  // A client outside every process whose iteration only computes 0 ns: its first iteration
  // takes time (the thread is woken and switched in), every later one none. So 1000 iterations
  // are 999 zero-time iterations in a row, which is allowed, and the run finishes; 1001 are
  // 1000 in a row, the limit, and the run stops with one line naming the client.
  const auto run_with = [](std::int64_t iterations) {
    auto scenario = testing::scaled_scenario("sync-wakeup", 10);
    workload::ClientSpec idler;
    idler.name = "idler";
    idler.process = -1;
    idler.iterations = iterations;
    workload::Step nothing;
    nothing.op = workload::Step::Op::kCompute;
    idler.iteration = {nothing};
    scenario.clients.push_back(idler);
    return scenario;
  };
  const auto allowed = run_with(1000);
  const auto result = testing::run_scenario(allowed, "fifo");
  EXPECT_TRUE(result.clients_finished);
  EXPECT_EQ(result.completed, 10U);
  const auto stopped = run_with(1001);
  try {
    testing::run_scenario(stopped, "fifo");
    FAIL() << "1000 zero-time iterations in a row ran to completion";
  } catch (const ConfigError& error) {
    EXPECT_EQ(std::string(error.what()),
              stopped.source() +
                  ": /clients/1/iteration: 1000 iterations in a row took no simulated time, so "
                  "the loop would never let time advance; give it a step that takes time (a sleep "
                  "or a compute above 0 ns)");
  }
}

// A thread step (1 us each to create, start and exit the thread) whose thread computes
// `work_ref_ns` of reference work; `pointer` is where a scenario file would hold it.
workload::Step thread_step(std::int64_t work_ref_ns, const std::string& pointer) {
  workload::Step work;
  work.op = workload::Step::Op::kCompute;
  work.amount = {workload::Quantity::Kind::kConstant, work_ref_ns, 0};
  workload::Step thread;
  thread.op = workload::Step::Op::kThread;
  thread.create_ref_ns = 1'000;
  thread.start_ref_ns = 1'000;
  thread.exit_ref_ns = 1'000;
  thread.steps = std::make_shared<workload::Steps>(workload::Steps{work});
  thread.pointer = pointer;
  return thread;
}

TEST(SimulationLimitsTest, HandlerCreatingAThreadRunsItAndReplies) {
  // A node's handler creates a thread and joins it before replying: the thread belongs to the
  // server process (named and sized like its loopers), and every call completes. A looper has
  // no client loop to name the thread after (the run crashed).
  auto scenario = testing::scaled_scenario("sync-wakeup", 20);
  const workload::Step thread = thread_step(20'000, "/processes/0/nodes/0/handler/0");
  scenario.processes[0].nodes[0].handler = {thread};
  const auto result = testing::run_scenario(scenario, "fifo");
  EXPECT_TRUE(result.clients_finished);
  EXPECT_EQ(result.completed, 20U);
  // Each call waited for its helper's 20 us of reference work.
  EXPECT_GT(result.latency.mean(), 20'000.0);
}

TEST(SimulationLimitsTest, BackgroundTaskOutsideEveryProcessCreatesAThreadDirectly) {
  // A background task without a process creates a thread: it is created directly (no process's
  // bionic setting to read; the run read processes[-1]) and runs its steps, so the CPUs are busy
  // at least the first helper's 50 us longer than without the task.
  auto scenario = testing::scaled_scenario("sync-wakeup", 5);
  const workload::Step thread = thread_step(50'000, "/background/0/iteration/0");
  workload::Step nap;
  nap.op = workload::Step::Op::kSleep;
  nap.amount = {workload::Quantity::Kind::kConstant, 100'000, 0};
  workload::ClientSpec spawner;
  spawner.name = "spawner";
  spawner.process = -1;
  spawner.iteration = {thread, nap};
  const auto busy_ns = [](const stats::RunResult& result) {
    return std::accumulate(result.scheduler.cpu_busy_ns.begin(), result.scheduler.cpu_busy_ns.end(),
                           std::int64_t{0});
  };
  const auto without = testing::run_scenario(scenario, "fifo");
  scenario.background.push_back(spawner);
  scenario.processes[0].bionic_thread_creation = true;  // not the task's: it has no process
  const auto with = testing::run_scenario(scenario, "fifo");
  EXPECT_TRUE(with.clients_finished);
  EXPECT_EQ(with.completed, 5U);
  // At least the first helper's 50 us of work ran on some CPU.
  EXPECT_GT(busy_ns(with), busy_ns(without) + 50'000);
}

TEST(SimulationLimitsTest, WaltWithoutAnEnergyModelFallsBackToTheKernelsPlacement) {
  // A topology without operating points has no energy model: WALT's energy search has nothing
  // to estimate with (it read past an empty table), and select_task_rq_fair() decides.
  const std::string path = testing::kSourceDir + "/topologies/sa8155p.json";
  std::ifstream in(path);
  nlohmann::json doc = nlohmann::json::parse(in);
  for (nlohmann::json& cluster : doc.at("clusters")) cluster.erase("cpufreq");
  const auto topology = topology::Topology::from_json(
      JsonNode(doc, std::make_shared<const std::string>(path + " (no cpufreq)"), ""));
  ASSERT_FALSE(topology.has_energy_model());
  auto scenario = testing::scaled_scenario("schd-dbg", 100);
  scenario.kernel.sched.governor = sched::Governor::kPerformance;
  sim::RunOptions options;
  options.selector = "fifo";
  options.placement = "walt";
  const auto result = sim::run(scenario, topology, testing::builtin_registry(), options);
  EXPECT_TRUE(result.clients_finished);
  EXPECT_EQ(result.completed, 200U);
}

TEST(SimulationLimitsTest, ALooperGivenAnExitedHelpersIdStartsAfresh) {
  // Client "deep" runs a chain of 254 local calls whose last handler starts a helper thread:
  // the helper counts its creator's 254 frames and is one call short of the depth limit. It
  // exits, and the looper spawned later for two calls to node "x" is given its thread id. That
  // looper's chain is two calls deep: it must not inherit the helper's depth (or its client).
  constexpr int kChain = 254;
  using nlohmann::json;
  const auto node_name = [](int i) {
    std::string name = "n";  // not "n" + to_string(): GCC 12 warns of a false overlap there
    name += std::to_string(i);
    return name;
  };
  json nodes = json::array();
  nodes.push_back({{"name", "x"},
                   {"handler", json::array({{{"op", "compute"}, {"ref_ns", 1000000}},
                                            {{"op", "call"}, {"target", "P"}, {"node", "y"}}})}});
  nodes.push_back(
      {{"name", "y"}, {"handler", json::array({{{"op", "compute"}, {"ref_ns", 1000}}})}});
  for (int i = 0; i < kChain; ++i) {
    const json step = i + 1 < kChain
                          ? json{{"op", "call"}, {"target", "P"}, {"node", node_name(i + 1)}}
                          : json{{"op", "thread"},
                                 {"create_ref_ns", 1000},
                                 {"start_ref_ns", 1000},
                                 {"exit_ref_ns", 1000},
                                 {"steps", json::array({{{"op", "compute"}, {"ref_ns", 1000}}})}};
    nodes.push_back({{"name", node_name(i)}, {"handler", json::array({step})}});
  }
  const json call_x = json::array({{{"op", "call"}, {"target", "P"}, {"node", "x"}}});
  const json doc = {
      {"schema", "bindersim.scenario/1"},
      {"name", "reused-id"},
      {"topology", "sa8155p"},
      {"time_limit_s", 1},
      {"processes",
       json::array({{{"name", "P"}, {"max_threads", 2}, {"nodes", nodes}},
                    {{"name", "C"}, {"start_thread_pool", false}, {"max_threads", 0}}})},
      {"clients",
       json::array({{{"name", "deep"},
                     {"process", "P"},
                     {"iterations", 1},
                     {"iteration", json::array({{{"op", "call"}, {"target", "P"}, {"node", "n0"}},
                                                {{"op", "sleep"}, {"ns", 10000000}}})}},
                    {{"name", "c2"},
                     {"process", "C"},
                     {"start_ns", 2000000},
                     {"iterations", 1},
                     {"iteration", call_x}},
                    {{"name", "c3"},
                     {"process", "C"},
                     {"start_ns", 2000000},
                     {"iterations", 1},
                     {"iteration", call_x}}})}};
  const auto scenario = workload::parse_scenario(
      JsonNode(doc, std::make_shared<const std::string>("reused-id.json"), ""),
      testing::builtin_registry());
  const auto result = testing::run_scenario(scenario, "fifo");
  EXPECT_TRUE(result.clients_finished);
  EXPECT_EQ(result.completed, kChain + 4U);  // the chain, and "x" and its "y" twice
}

TEST(TierTest, EachCallCountsInTheTierOfItsCallersAndItsServersCpu) {
  // sync-wakeup's client pinned to CPU 0 (silver) and its server's process to one CPU: every
  // call is same core (CPU 0), same cluster (CPU 1, silver too) or cross cluster (CPU 4, gold).
  const std::pair<int, stats::Tier> cases[] = {
      {0, stats::Tier::kSameCore}, {1, stats::Tier::kSameCluster}, {4, stats::Tier::kCrossCluster}};
  for (const auto& [server_cpu, tier] : cases) {
    SCOPED_TRACE(server_cpu);
    auto scenario = testing::scaled_scenario("sync-wakeup", 50);
    ASSERT_EQ(scenario.processes[0].name, "server");
    scenario.processes[0].cpuset.cpus = {server_cpu};
    scenario.clients[0].affinity.cpus = {0};
    const auto result = testing::run_scenario(scenario, "fifo");
    ASSERT_EQ(result.completed, 50U);
    std::uint64_t in_tier = 0;
    for (const auto cls : {stats::SchedClass::kFifo, stats::SchedClass::kOther}) {
      in_tier += result.tier(cls, tier).count();
    }
    EXPECT_EQ(in_tier, result.completed);
  }
}

TEST(SimulationLimitsTest, DroppingStaleEventsChangesNothingButTheFingerprint) {
  // The scheduler's superseded completions and frequency changes, dropped from the queue at
  // every 64th event whatever its size, are events the model would have ignored: the result
  // is the same but for the events dispatched and the fingerprint that hashes them.
  for (const char* name : {"schd-dbg", "binder-throughput"}) {
    SCOPED_TRACE(name);
    const auto scenario = testing::scaled_scenario(name, 200);
    const auto topology = testing::topology_of(scenario);
    sim::RunOptions options;
    options.selector = "ctabs";
    const auto plain = sim::run(scenario, topology, testing::builtin_registry(), options);
    options.compact_every_events = 64;
    options.compact_at_pending = 0;
    const auto compacted = sim::run(scenario, topology, testing::builtin_registry(), options);
    EXPECT_LT(compacted.events, plain.events);
    EXPECT_NE(compacted.fingerprint, plain.fingerprint);
    auto without_trajectory_hash = [](const stats::RunResult& result) {
      nlohmann::ordered_json j = io::result_to_json(result);
      j.at("provenance").erase("fingerprint");
      return j.dump();
    };
    EXPECT_EQ(without_trajectory_hash(compacted), without_trajectory_hash(plain));
  }
}

TEST(SimulationLimitsTest, UnfinishedClientsAreReported) {
  // Without a thread pool the server never reads its calls: the background load keeps the run
  // going until the time limit, and the result says the clients did not finish.
  auto scenario = testing::scaled_scenario("schd-dbg", 10);
  scenario.processes[0].start_thread_pool = false;
  scenario.time_limit_ns = 50'000'000;  // 50 ms
  const auto result = testing::run_scenario(scenario, "fifo");
  EXPECT_FALSE(result.clients_finished);
  EXPECT_EQ(result.completed, 0U);
  EXPECT_TRUE(
      testing::run_scenario(testing::scaled_scenario("schd-dbg", 10), "fifo").clients_finished);
}

}  // namespace
}  // namespace bindersim

namespace bindersim {
namespace {

TEST(BreakdownTest, PartsAddUpToTheRoundTripOfEveryTier) {
  // Each call's breakdown is its round trip split into parts, "other" being the rest: per
  // tier, the parts sum to the latency sum exactly. The server's handler work is service, and
  // both sides' send and receive paths are kernel time.
  const auto result = testing::run_scenario(testing::scaled_scenario("schd-dbg", 300), "fifo");
  std::int64_t calls = 0;
  for (std::size_t c = 0; c < stats::kNumSchedClasses; ++c) {
    for (std::size_t t = 0; t < stats::kNumTiers; ++t) {
      const auto& h = result.tiers[c][t];
      const auto& b = result.breakdown[c][t];
      const auto sum = static_cast<double>(h.count()) * h.mean();
      EXPECT_DOUBLE_EQ(
          static_cast<double>(b.kernel_ns + b.wakeup_ipi_ns + b.idle_exit_ns + b.runqueue_wait_ns +
                              b.lock_wait_ns + b.cache_refill_ns + b.service_ns + b.other_ns),
          sum);
      if (h.count() == 0) {
        EXPECT_EQ(b, stats::BreakdownSums{});
        continue;
      }
      calls += static_cast<std::int64_t>(h.count());
      const auto n = static_cast<std::int64_t>(h.count());
      // The schd-dbg handler does 4 us of reference work: at least 4 us on any CPU.
      EXPECT_GE(b.service_ns / n, 4'000);
      EXPECT_GT(b.kernel_ns, b.service_ns);
      EXPECT_GE(b.wakeup_ipi_ns, 0);
      EXPECT_GE(b.idle_exit_ns, 0);
      EXPECT_GE(b.runqueue_wait_ns, 0);
      EXPECT_GE(b.lock_wait_ns, 0);
    }
  }
  EXPECT_EQ(calls, 600);
}

// --- the sync wakeup rule, isolated ------------------------------------------------------------

double same_core_share(const stats::RunResult& result) {
  const auto& tier = result.tier(SchedClass::kOther, Tier::kSameCore);
  return static_cast<double>(tier.count()) / static_cast<double>(result.completed);
}

TEST(SyncWakeupScenarioTest, SyncWakeesLandOnTheWakersCpuUnderGkiOnly) {
  // scenarios/sync-wakeup.json: one caller, one looper, nothing else running. Under gki the
  // "honor sync" rule puts the looper on the caller's CPU (the caller runs alone there) and the
  // reply brings the caller back to it: every call is a same-core call. Under mainline
  // select_idle_sibling() moves the wakee to an idle CPU (the waker's CPU is busy until it
  // blocks), so almost no call is.
  const auto scenario = scaled_scenario("sync-wakeup", 300);
  const auto gki = run_scenario(scenario, "fifo", 1, "gki");
  const auto mainline = run_scenario(scenario, "fifo", 1, "mainline");
  ASSERT_EQ(gki.completed, 300u);
  ASSERT_EQ(mainline.completed, 300u);
  EXPECT_GT(same_core_share(gki), 0.95);
  EXPECT_LT(same_core_share(mainline), 0.05);
  EXPECT_EQ(gki.placement, "gki");
  EXPECT_EQ(mainline.placement, "mainline");
}

// --- how a thread step creates its thread ------------------------------------------------------

// Where schd-dbg's SCHED_FIFO threads start, from the run's trace: each new thread's first
// wakeup, as the creator's CPU, the target CPU and the priority it is woken with.
struct NewThreadWakeup {
  int creator_cpu = -1;
  int target_cpu = -1;
  int prio = -1;
};

std::vector<NewThreadWakeup> fifo_thread_wakeups(const workload::Scenario& scenario) {
  const auto topology = testing::topology_of(scenario);
  std::ostringstream text;
  trace::FtraceWriter writer(text, topology);
  sim::RunOptions options;
  options.selector = "fifo";
  options.tracer = &writer;
  sim::run(scenario, topology, testing::builtin_registry(), options);
  writer.flush();
  std::vector<NewThreadWakeup> out;
  std::istringstream lines(text.str());
  for (std::string line; std::getline(lines, line);) {
    if (line.find("sched_wakeup_new: comm=client:thread ") == std::string::npos) continue;
    NewThreadWakeup w;
    w.creator_cpu = std::stoi(line.substr(line.find('[') + 1, 3));
    w.target_cpu = std::stoi(line.substr(line.find("target_cpu=") + 11));
    w.prio = std::stoi(line.substr(line.find("prio=") + 5));
    out.push_back(w);
  }
  return out;
}

TEST(ThreadCreationTest, DirectlyInItsClassOnItsCreatorsCpu) {
  // The calibrated model: the thread is created SCHED_FIFO (prio 0) and RT placement keeps it
  // on its creator's CPU, where only the fair creator runs.
  const auto wakeups = fifo_thread_wakeups(scaled_scenario("schd-dbg", 20));
  ASSERT_EQ(wakeups.size(), 20U);
  for (const NewThreadWakeup& w : wakeups) {
    EXPECT_EQ(w.prio, 0);
    EXPECT_EQ(w.target_cpu, w.creator_cpu);
  }
}

TEST(ThreadCreationTest, AsBionicInItsCreatorsClassWhereForkBalancingPutsIt) {
  // bionic's pthread_create(): clone() in the creator's class (SCHED_OTHER, prio 120), placed by
  // fork balancing on an idle CPU (the creator's is busy), then made SCHED_FIFO there.
  auto scenario = scaled_scenario("schd-dbg", 20);
  for (auto& process : scenario.processes) process.bionic_thread_creation = true;
  const auto wakeups = fifo_thread_wakeups(scenario);
  ASSERT_EQ(wakeups.size(), 20U);
  int moved = 0;
  for (const NewThreadWakeup& w : wakeups) {
    EXPECT_EQ(w.prio, 120);
    if (w.target_cpu != w.creator_cpu) ++moved;
  }
  EXPECT_GE(moved, 18);
  // They call as SCHED_FIFO threads all the same.
  const auto result = run_scenario(scenario, "fifo");
  std::uint64_t fifo_calls = 0;
  for (auto tier : {Tier::kSameCore, Tier::kSameCluster, Tier::kCrossCluster}) {
    fifo_calls += result.tier(SchedClass::kFifo, tier).count();
  }
  EXPECT_EQ(fifo_calls, 20U);
}

}  // namespace
}  // namespace bindersim
