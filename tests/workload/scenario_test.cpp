#include "bindersim/workload/scenario.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "../common/config_error.hpp"
#include "../selectors/fake_machine.hpp"
#include "bindersim/common/error.hpp"
#include "bindersim/common/hash.hpp"
#include "bindersim/common/json_reader.hpp"
#include "bindersim/sched/placement.hpp"
#include "bindersim/selectors/registry.hpp"
#include "bindersim/selectors/selector.hpp"
#include "bindersim/topology/topology.hpp"

namespace bindersim::workload {
namespace {

const std::string kSourceDir = BINDERSIM_SOURCE_DIR;
const std::string kDataDir = BINDERSIM_TEST_DATA_DIR;
const std::string kFile = "scenarios/x.json";  // the name bad inputs are reported under

class ScenarioTest : public ::testing::Test {
 protected:
  ScenarioTest() { selectors::register_builtin_selectors(registry_); }

  // The shipped schd-dbg scenario as a JSON value, to be edited into bad variants.
  static nlohmann::json shipped() {
    return JsonDocument::parse_file(kSourceDir + "/scenarios/schd-dbg.json").value();
  }

  Scenario parse(const nlohmann::json& value) const {
    const JsonDocument doc = JsonDocument::parse_text(value.dump(2), kFile);
    return parse_scenario(doc.root(), registry_);
  }

  // The ConfigError message of parsing schd-dbg after `edit`, or a marker if it parsed.
  std::string error_after(const std::function<void(nlohmann::json&)>& edit) const {
    nlohmann::json value = shipped();
    edit(value);
    try {
      parse(value);
    } catch (const ConfigError& error) {
      return error.what();
    }
    return "<parsed without error>";
  }

  selectors::SelectorRegistry registry_;
};

// The call step of the schd-dbg client's main thread, and the one inside its fifo thread.
nlohmann::json& main_call(nlohmann::json& s) { return s["clients"][0]["iteration"][2]; }
nlohmann::json& thread_step(nlohmann::json& s) { return s["clients"][0]["iteration"][0]; }

// ---------------------------------------------------------------------------------------------
// The shipped scenario

TEST_F(ScenarioTest, ShippedSchdDbgLoads) {
  // The mirror of schd-dbg: 10,000 iterations, each a call from a fresh SCHED_FIFO priority-99
  // thread and one from the SCHED_OTHER main thread, both with 16-byte payloads to "server".
  const Scenario s =
      load_scenario("schd-dbg", kSourceDir + "/scenarios", registry_);  // looked up by name
  EXPECT_EQ(s.name, "schd-dbg");
  EXPECT_EQ(s.file, kSourceDir + "/scenarios/schd-dbg.json");
  EXPECT_EQ(s.topology, "sa8155p");
  EXPECT_EQ(s.seed, 1u);
  EXPECT_EQ(s.kernel.placement, "gki");  // the reference device's kernel
  EXPECT_EQ(s.kernel.sched.governor, sched::Governor::kSchedutil);
  EXPECT_EQ(s.kernel.sched.rt_uclamp_min, 0);
  EXPECT_EQ(s.kernel.selector, "fifo");
  EXPECT_EQ(s.kernel.inheritance, binder::PriorityInheritance::kAndroid);

  ASSERT_EQ(s.processes.size(), 2u);
  EXPECT_EQ(s.processes[0].name, "server");
  ASSERT_EQ(s.processes[0].nodes.size(), 1u);
  EXPECT_EQ(s.processes[0].nodes[0].config.name, "binderWorker0");
  EXPECT_EQ(s.processes[0].nodes[0].reply_bytes, 8);
  ASSERT_EQ(s.processes[0].nodes[0].handler.size(), 1u);
  EXPECT_EQ(s.processes[0].nodes[0].handler[0].op, Step::Op::kCompute);
  EXPECT_EQ(s.processes[0].nodes[0].handler[0].amount.a, 4000);

  ASSERT_EQ(s.clients.size(), 1u);
  const ClientSpec& client = s.clients[0];
  EXPECT_EQ(client.iterations, 10'000);
  EXPECT_EQ(client.process, 1);
  EXPECT_EQ(client.policy, sched::Policy::kNormal);
  ASSERT_EQ(client.iteration.size(), 3u);

  const Step& thread = client.iteration[0];
  EXPECT_EQ(thread.op, Step::Op::kThread);
  EXPECT_EQ(thread.policy, sched::Policy::kFifo);
  EXPECT_EQ(thread.rt_priority, 99);
  ASSERT_NE(thread.steps, nullptr);
  ASSERT_EQ(thread.steps->size(), 2u);
  const Step& thread_call = (*thread.steps)[1];
  EXPECT_EQ(thread_call.op, Step::Op::kCall);
  EXPECT_EQ(thread_call.payload_bytes, 16);
  EXPECT_EQ(thread_call.target.processes, std::vector<int>{0});
  EXPECT_FALSE(thread_call.oneway);

  const Step& call = client.iteration[2];
  EXPECT_EQ(call.op, Step::Op::kCall);
  EXPECT_EQ(call.payload_bytes, 16);
  EXPECT_EQ(call.target.processes, std::vector<int>{0});

  // The calibrated background (docs/calibration.md): six system tasks that may run anywhere,
  // then one housekeeping kworker pinned to each of the eight CPUs; all outside any binder
  // process, each alternating exponential work and exponential sleeps.
  ASSERT_EQ(s.background.size(), 14u);
  for (std::size_t i = 0; i < s.background.size(); ++i) {
    const ClientSpec& task = s.background[i];
    EXPECT_EQ(task.process, -1);
    ASSERT_EQ(task.iteration.size(), 2u);
    EXPECT_EQ(task.iteration[0].op, Step::Op::kCompute);
    EXPECT_EQ(task.iteration[0].amount.kind, Quantity::Kind::kExponential);
    EXPECT_EQ(task.iteration[1].op, Step::Op::kSleep);
    EXPECT_EQ(task.iteration[1].amount.kind, Quantity::Kind::kExponential);
    if (i < 6) {
      EXPECT_TRUE(task.affinity.cpus.empty()) << task.name;
    } else {
      EXPECT_EQ(task.affinity.cpus, std::vector<int>{static_cast<int>(i) - 6}) << task.name;
    }
  }
}

TEST_F(ScenarioTest, LoadsByPathAndListsScenariosForAnUnknownName) {
  const Scenario s =
      load_scenario(kSourceDir + "/scenarios/schd-dbg.json", "/nonexistent", registry_);
  EXPECT_EQ(s.name, "schd-dbg");
  try {
    load_scenario("schd-dgb", kSourceDir + "/scenarios", registry_);
    FAIL() << "an unknown scenario name loaded";
  } catch (const ConfigError& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.rfind("unknown scenario \"schd-dgb\" (did you mean \"schd-dbg\"?); "
                            "available scenarios: ",
                            0),
              0u)
        << message;
    EXPECT_NE(message.find("schd-dbg"), std::string::npos) << message;
  }
}

// A scenario keeps what it was made from: the hash of its document as read, which the
// overrides do not change, and the overrides in the order given.
TEST_F(ScenarioTest, RecordsItsDocumentHashAndOverrides) {
  const std::string file = kSourceDir + "/scenarios/schd-dbg.json";
  const Scenario plain = load_scenario(file, kSourceDir + "/scenarios", registry_);
  EXPECT_EQ(plain.document_hash, document_hash(JsonDocument::parse_file(file).value()));
  EXPECT_TRUE(plain.overrides.empty());
  EXPECT_EQ(load_scenario("schd-dbg", kSourceDir + "/scenarios", registry_).document_hash,
            plain.document_hash);  // by name or by path

  const Scenario overridden = load_scenario(
      file, kSourceDir + "/scenarios", registry_,
      {parse_override("clients.*.iterations=10"), parse_override("kernel.placement=mainline")});
  EXPECT_EQ(overridden.document_hash, plain.document_hash);
  ASSERT_EQ(overridden.overrides.size(), 2u);
  EXPECT_EQ(overridden.overrides[0].path, "clients.*.iterations");
  EXPECT_EQ(overridden.overrides[1].value, "mainline");
  EXPECT_EQ(overridden.kernel.placement, "mainline");

  const Scenario minimal =
      load_scenario(kDataDir + "/scenarios/minimal.json", kSourceDir + "/scenarios", registry_);
  EXPECT_NE(minimal.document_hash, plain.document_hash);
}

TEST_F(ScenarioTest, DocumentedDefaultsApply) {
  // tests/data/scenarios/minimal.json leaves out every optional key it can.
  const Scenario s =
      load_scenario(kDataDir + "/scenarios/minimal.json", kSourceDir + "/scenarios", registry_);
  EXPECT_EQ(s.description, "");
  EXPECT_EQ(s.seed, 1u);
  EXPECT_EQ(s.time_limit_ns, 3600LL * 1'000'000'000LL);
  EXPECT_EQ(s.kernel.placement, "mainline");
  EXPECT_EQ(s.kernel.sched.governor, sched::Governor::kPerformance);
  EXPECT_EQ(s.kernel.sched.schedutil_rate_limit_ns, 1'000'000);
  EXPECT_EQ(s.kernel.sched.rt_uclamp_min, 1024);
  EXPECT_TRUE(s.kernel.sched.newidle_balance);
  EXPECT_TRUE(s.kernel.sched.periodic_balance);
  EXPECT_TRUE(s.kernel.sched.misfit_migration);
  EXPECT_TRUE(s.kernel.sched.util_est);
  EXPECT_FALSE(s.kernel.sched.normalise_vruntime_across_rt);
  EXPECT_FALSE(s.kernel.sched.scaled_pelt_clock);
  EXPECT_FALSE(s.kernel.sched.idle_wakeup_after_entry);
  EXPECT_EQ(s.kernel.selector, "fifo");
  EXPECT_EQ(s.kernel.inheritance, binder::PriorityInheritance::kAndroid);

  ASSERT_EQ(s.processes.size(), 2u);
  const ProcessSpec& a = s.processes[0];
  EXPECT_EQ(a.max_threads, 15);
  EXPECT_TRUE(a.start_thread_pool);
  EXPECT_FALSE(a.free_before_reply);
  EXPECT_FALSE(a.bionic_thread_creation);
  EXPECT_EQ(a.looper_working_set_bytes, 0);
  EXPECT_TRUE(a.cpuset.cpus.empty());  // every CPU
  ASSERT_EQ(a.nodes.size(), 1u);       // the default node
  EXPECT_EQ(a.nodes[0].config.name, "service");
  EXPECT_TRUE(a.nodes[0].config.inherit_rt);
  EXPECT_EQ(a.nodes[0].config.min_nice, 19);
  EXPECT_TRUE(a.nodes[0].handler.empty());

  const ProcessSpec& b = s.processes[1];
  EXPECT_EQ(b.max_threads, 2);
  EXPECT_FALSE(b.start_thread_pool);
  ASSERT_EQ(b.nodes.size(), 2u);
  EXPECT_FALSE(b.nodes[1].config.inherit_rt);
  EXPECT_EQ(b.nodes[1].config.min_nice, -5);
  EXPECT_EQ(b.nodes[1].reply_bytes, 4);
  ASSERT_EQ(b.nodes[0].handler.size(), 1u);
  EXPECT_EQ(b.nodes[0].handler[0].amount.kind, Quantity::Kind::kUniform);
  EXPECT_EQ(b.nodes[0].handler[0].amount.a, 100);
  EXPECT_EQ(b.nodes[0].handler[0].amount.b, 200);
  // A handler may call another process (parsed after every process is known).
  ASSERT_EQ(b.nodes[1].handler.size(), 1u);
  EXPECT_TRUE(b.nodes[1].handler[0].oneway);
  EXPECT_EQ(b.nodes[1].handler[0].target.processes, std::vector<int>{0});

  ASSERT_EQ(s.clients.size(), 1u);
  const ClientSpec& c = s.clients[0];
  EXPECT_EQ(c.policy, sched::Policy::kNormal);
  EXPECT_EQ(c.nice, 0);
  EXPECT_EQ(c.start_ns, 0);
  EXPECT_EQ(c.iterations, 3);
  EXPECT_EQ(c.affinity.cpus, (std::vector<int>{4, 5}));
  EXPECT_EQ(c.affinity.pointer, "/clients/0/affinity");
  ASSERT_EQ(c.iteration.size(), 3u);
  EXPECT_EQ(c.iteration[0].target.processes, (std::vector<int>{0, 1}));
  EXPECT_EQ(c.iteration[0].target.node, 0);
  EXPECT_EQ(c.iteration[0].payload_bytes, 64);
  EXPECT_FALSE(c.iteration[0].oneway);
  EXPECT_EQ(c.iteration[1].target.node, 1);  // "second"
  EXPECT_EQ(c.iteration[1].target.node_name, "second");
  EXPECT_EQ(c.iteration[1].payload_bytes, 0);
  EXPECT_EQ(c.iteration[2].op, Step::Op::kSleep);
  EXPECT_EQ(c.iteration[2].amount.kind, Quantity::Kind::kExponential);

  // A background task may make calls when it belongs to a process; one without does not.
  ASSERT_EQ(s.background.size(), 2u);
  EXPECT_EQ(s.background[0].process, 1);
  EXPECT_EQ(s.background[1].process, -1);
  EXPECT_EQ(s.background[1].nice, 5);
}

// ---------------------------------------------------------------------------------------------
// Bad input: one exact line naming the file and the JSON pointer

TEST_F(ScenarioTest, BalanceSwitchesParse) {
  nlohmann::json value = shipped();
  value["kernel"]["misfit_migration"] = false;
  value["kernel"]["periodic_balance"] = false;
  value["kernel"]["util_est"] = false;
  const Scenario parsed = parse(value);
  EXPECT_FALSE(parsed.kernel.sched.util_est);
  EXPECT_FALSE(parsed.kernel.sched.misfit_migration);
  EXPECT_FALSE(parsed.kernel.sched.periodic_balance);
  EXPECT_TRUE(parsed.kernel.sched.newidle_balance);
  EXPECT_EQ(error_after([](auto& s) { s["kernel"]["misfit_migration"] = "yes"; }),
            kFile + ": /kernel/misfit_migration: expected true or false, got \"yes\"");
}

TEST_F(ScenarioTest, TheKernelsAndLibbindersBehavioursCanBeChosenWhereTheModelDiffers) {
  // Behaviours in which the calibrated model differs from the kernel and libbinder
  // (docs/model.md, "What is simplified", "PELT") can be switched to theirs.
  nlohmann::json value = shipped();
  value["kernel"]["vruntime_across_rt"] = "normalised";
  value["kernel"]["pelt_clock"] = "scaled";
  value["kernel"]["idle_wakeup"] = "after_entry";
  value["processes"][0]["free_before_reply"] = true;
  value["processes"][1]["thread_creation"] = "bionic";
  const Scenario parsed = parse(value);
  EXPECT_TRUE(parsed.kernel.sched.normalise_vruntime_across_rt);
  EXPECT_TRUE(parsed.kernel.sched.scaled_pelt_clock);
  EXPECT_TRUE(parsed.kernel.sched.idle_wakeup_after_entry);
  EXPECT_TRUE(parsed.processes[0].free_before_reply);
  EXPECT_FALSE(parsed.processes[1].free_before_reply);
  EXPECT_FALSE(parsed.processes[0].bionic_thread_creation);
  EXPECT_TRUE(parsed.processes[1].bionic_thread_creation);
  value["kernel"]["vruntime_across_rt"] = "clamped";
  EXPECT_FALSE(parse(value).kernel.sched.normalise_vruntime_across_rt);
  value["kernel"]["pelt_clock"] = "wall";
  EXPECT_FALSE(parse(value).kernel.sched.scaled_pelt_clock);
  value["kernel"]["idle_wakeup"] = "exit";
  EXPECT_FALSE(parse(value).kernel.sched.idle_wakeup_after_entry);
  EXPECT_EQ(error_after([](auto& s) { s["kernel"]["idle_wakeup"] = "wakeup"; }),
            kFile + ": /kernel/idle_wakeup: expected one of exit, after_entry, got \"wakeup\"");
  EXPECT_EQ(error_after([](auto& s) { s["kernel"]["pelt_clock"] = "rq"; }),
            kFile + ": /kernel/pelt_clock: expected one of wall, scaled, got \"rq\"");
  EXPECT_EQ(error_after([](auto& s) { s["kernel"]["vruntime_across_rt"] = "relative"; }),
            kFile +
                ": /kernel/vruntime_across_rt: expected one of clamped, normalised, got "
                "\"relative\"");
  EXPECT_EQ(error_after([](auto& s) { s["processes"][0]["free_before_reply"] = 1; }),
            kFile + ": /processes/0/free_before_reply: expected true or false, got 1");
  EXPECT_EQ(
      error_after([](auto& s) { s["processes"][1]["thread_creation"] = "glibc"; }),
      kFile + ": /processes/1/thread_creation: expected one of direct, bionic, got \"glibc\"");
}

TEST_F(ScenarioTest, WrongTypeNamesPointerExpectedAndFound) {
  EXPECT_EQ(error_after([](auto& s) { s["clients"][0]["iterations"] = "many"; }),
            kFile + ": /clients/0/iterations: expected an integer, got \"many\"");
  EXPECT_EQ(error_after([](auto& s) { main_call(s)["payload_bytes"] = "16"; }),
            kFile + ": /clients/0/iteration/2/payload_bytes: expected an integer, got \"16\"");
  EXPECT_EQ(error_after([](auto& s) { s["processes"] = nlohmann::json::object(); }),
            kFile + ": /processes: expected an array, got an object");
}

TEST_F(ScenarioTest, SourcesAreNonEmptyStringsWherever) {
  // A "source" says where an object's numbers come from: text, as in a topology.
  EXPECT_EQ(error_after([](auto& s) { s["source"] = 3; }),
            kFile + ": /source: expected a string, got 3");
  EXPECT_EQ(error_after([](auto& s) { s["kernel"]["source"] = nlohmann::json::object(); }),
            kFile + ": /kernel/source: expected a string, got an object");
  EXPECT_EQ(error_after([](auto& s) { s["processes"][0]["source"] = nullptr; }),
            kFile + ": /processes/0/source: expected a string, got null");
  EXPECT_EQ(error_after([](auto& s) { s["clients"][0]["source"] = ""; }),
            kFile +
                ": /clients/0/source: expected a non-empty string naming where the numbers come "
                "from, got \"\"");
}

TEST_F(ScenarioTest, OutOfRangeValuesNameTheRange) {
  EXPECT_EQ(error_after([](auto& s) { thread_step(s)["priority"] = 100; }),
            kFile + ": /clients/0/iteration/0/priority: expected an integer in [1, 99], got 100");
  EXPECT_EQ(error_after([](auto& s) { main_call(s)["payload_bytes"] = 2'097'152; }),
            kFile +
                ": /clients/0/iteration/2/payload_bytes: expected an integer in [0, 1048576], "
                "got 2097152");
  EXPECT_EQ(error_after([](auto& s) { s["clients"][0]["iterations"] = 0; }),
            kFile + ": /clients/0/iterations: expected an integer in [1, 1099511627776], got 0");
}

TEST_F(ScenarioTest, APayloadOfOneMebibyteIsTheLargestAccepted) {
  // The range [0, 1048576] is inclusive: a call may carry exactly 1 MiB, but not a byte more.
  EXPECT_EQ(error_after([](auto& s) { main_call(s)["payload_bytes"] = 1'048'576; }),
            "<parsed without error>");
  EXPECT_EQ(error_after([](auto& s) { main_call(s)["payload_bytes"] = 1'048'577; }),
            kFile +
                ": /clients/0/iteration/2/payload_bytes: expected an integer in [0, 1048576], "
                "got 1048577");
}

TEST_F(ScenarioTest, MaxThreadsIsRangeCheckedBeforeNarrowing) {
  // 2^32 + 5 does not fit an int: it is out of range, not read as 5.
  EXPECT_EQ(error_after([](auto& s) { s["processes"][0]["max_threads"] = 4'294'967'301LL; }),
            kFile + ": /processes/0/max_threads: expected an integer in [0, 1000], got 4294967301");
  EXPECT_EQ(error_after([](auto& s) { s["processes"][0]["max_threads"] = -1; }),
            kFile + ": /processes/0/max_threads: expected an integer in [0, 1000], got -1");
}

TEST_F(ScenarioTest, TimeLimitMustBePositiveAndBounded) {
  // Checked in seconds before the conversion to int64 nanoseconds, which 1e300 would overflow.
  EXPECT_EQ(error_after([](auto& s) { s["time_limit_s"] = 0; }),
            kFile + ": /time_limit_s: expected a number in [1e-09, 1e+06], got 0");
  EXPECT_EQ(error_after([](auto& s) { s["time_limit_s"] = 1e300; }),
            kFile + ": /time_limit_s: expected a number in [1e-09, 1e+06], got 1e+300");
  nlohmann::json value = shipped();
  value["time_limit_s"] = 2.5;
  EXPECT_EQ(parse(value).time_limit_ns, 2'500'000'000);
}

TEST_F(ScenarioTest, WorkAmountsAreBoundedSoTheirTimeOnACpuFitsInt64) {
  // One step is at most 1000 s of reference work; 2^36 s of it overflowed the scheduler's
  // conversion to time on a CPU and failed an invariant check.
  EXPECT_EQ(error_after([](auto& s) {
              main_call(s) = {{"op", "compute"}, {"ref_ns", 1LL << 46}};
            }),
            kFile +
                ": /clients/0/iteration/2/ref_ns: expected an integer in [0, 1000000000000], got "
                "70368744177664");
  // An exponential draw reaches about 37 times its mean: the mean is bounded 64 times lower.
  EXPECT_EQ(error_after([](auto& s) {
              s["background"][0]["iteration"][0]["ref_ns"] = {{"exponential_mean", 1e11}};
            }),
            kFile +
                ": /background/0/iteration/0/ref_ns/exponential_mean: expected an integer in [0, "
                "15625000000], got 100000000000.0");
  EXPECT_EQ(error_after([](auto& s) { thread_step(s)["create_ref_ns"] = 1LL << 46; }),
            kFile +
                ": /clients/0/iteration/0/create_ref_ns: expected an integer in [0, "
                "1000000000000], got 70368744177664");
  // Sleeps take no CPU work: they keep the wider bound of times.
  nlohmann::json value = shipped();
  value["background"][0]["iteration"][1]["ns"] = 1LL << 46;
  EXPECT_EQ(parse(value).background[0].iteration[1].amount.a, 1LL << 46);
}

TEST_F(ScenarioTest, ThreadStepsNestAtMost64Deep) {
  // Thread steps 100000 deep overflowed the parser's stack; 64 levels are allowed.
  const auto nest = [](int depth) {
    nlohmann::json steps = {{{"op", "compute"}, {"ref_ns", 1}}};
    for (int i = 0; i < depth; ++i) {
      steps = {{{"op", "thread"},
                {"create_ref_ns", 1},
                {"start_ref_ns", 1},
                {"exit_ref_ns", 1},
                {"steps", steps}}};
    }
    return steps;
  };
  nlohmann::json value = shipped();
  value["clients"][0]["iteration"] = nest(64);
  EXPECT_NO_THROW(parse(value));
  const std::string error = error_after([&](auto& s) { s["clients"][0]["iteration"] = nest(65); });
  EXPECT_NE(error.find(": thread steps nest more than 64 deep"), std::string::npos) << error;
  EXPECT_EQ(error.rfind(kFile + ": /clients/0/iteration/0/steps/0/steps/0/", 0), 0u) << error;
}

TEST_F(ScenarioTest, TopologyThatNamesNoFileIsReportedAtTopology) {
  const std::string topologies = kSourceDir + "/topologies";
  nlohmann::json value = shipped();
  value["topology"] = "sa8155";
  try {
    load_topology(parse(value), topologies);
    FAIL() << "an unknown topology loaded";
  } catch (const ConfigError& error) {
    EXPECT_EQ(std::string(error.what())
                  .rfind(kFile + ": /topology: unknown topology \"sa8155\" "
                                 "(did you mean \"sa8155p\"?); available topologies: ",
                         0),
              0u)
        << error.what();
  }
  value["topology"] = "../topologies/";  // a directory, not a file
  try {
    load_topology(parse(value), topologies);
    FAIL() << "a directory loaded as a topology";
  } catch (const ConfigError& error) {
    EXPECT_EQ(std::string(error.what()),
              kFile +
                  ": /topology: expected a topology name or the path of a topology file, got "
                  "\"topologies/\", which is not a file");
  }
  EXPECT_EQ(error_after([](auto& s) { s["topology"] = ""; }),
            kFile +
                ": /topology: expected a topology name or the path of a topology file, got "
                "\"\"");
}

TEST_F(ScenarioTest, MissingKeyNamesTheObjectAndTheKey) {
  EXPECT_EQ(error_after([](auto& s) { s["clients"][0].erase("iterations"); }),
            kFile + ": /clients/0: missing required key \"iterations\"");
  EXPECT_EQ(error_after([](auto& s) { thread_step(s).erase("create_ref_ns"); }),
            kFile + ": /clients/0/iteration/0: missing required key \"create_ref_ns\"");
  EXPECT_EQ(error_after([](auto& s) { s.erase("topology"); }),
            kFile + ": /: missing required key \"topology\"");
}

TEST_F(ScenarioTest, UnknownKeySuggestsTheClosestName) {
  EXPECT_EQ(error_after([](auto& s) {
              auto& call = main_call(s);
              call["payload_byts"] = call["payload_bytes"];
              call.erase("payload_bytes");
            }),
            kFile +
                ": /clients/0/iteration/2/payload_byts: unknown key (did you mean "
                "\"payload_bytes\"?); valid keys: node, oneway, op, payload_bytes, target");
  EXPECT_EQ(error_after([](auto& s) { s["descripton"] = "typo"; }),
            kFile +
                ": /descripton: unknown key (did you mean \"description\"?); valid keys: "
                "background, clients, description, kernel, name, processes, report, schema, seed, "
                "source, time_limit_s, topology");
  EXPECT_EQ(error_after([](auto& s) { s["kernel"]["selecter"] = "ctabs"; }),
            kFile +
                ": /kernel/selecter: unknown key (did you mean \"selector\"?); valid keys: "
                "alloc_lock, alloc_page_install, cpufreq_governor, idle_wakeup, memory_pressure, "
                "misfit_migration, newidle_balance, pelt_clock, periodic_balance, placement, "
                "priority_inheritance, sched_util_clamp_min_rt_default, schedutil_rate_limit_us, "
                "selector, selector_params, source, util_est, vruntime_across_rt");
}

TEST_F(ScenarioTest, UnknownProcessInACallTargetListsValidProcesses) {
  EXPECT_EQ(error_after([](auto& s) { main_call(s)["target"] = "sever"; }),
            kFile +
                ": /clients/0/iteration/2/target: unknown process \"sever\" (did you mean "
                "\"server\"?); valid processes: server, client");
  // In a list of targets, the pointer names the bad element.
  EXPECT_EQ(error_after([](auto& s) {
              main_call(s)["target"] = {"server", "nobody"};
            }),
            kFile +
                ": /clients/0/iteration/2/target/1: unknown process \"nobody\"; valid "
                "processes: server, client");
  // A client's own process is checked the same way.
  EXPECT_EQ(error_after([](auto& s) { s["clients"][0]["process"] = "clinet"; }),
            kFile +
                ": /clients/0/process: unknown process \"clinet\" (did you mean \"client\"?); "
                "valid processes: server, client");
}

TEST_F(ScenarioTest, ALongListOfValidProcessesIsCut) {
  // A scenario of many processes: the message lists ten of them and counts the rest.
  const std::string message = error_after([](auto& s) {
    for (int i = 0; i < 30; ++i) {
      auto copy = s["processes"][0];
      copy["name"] = "worker" + std::to_string(i);
      s["processes"].push_back(copy);
    }
    main_call(s)["target"] = "nobody";
  });
  EXPECT_EQ(message, kFile +
                         ": /clients/0/iteration/2/target: unknown process \"nobody\"; valid "
                         "processes: server, client, worker0, worker1, worker2, worker3, "
                         "worker4, worker5, worker6, worker7 and 22 more");
}

TEST_F(ScenarioTest, NamesInMessagesAreEscapedAndShortened) {
  // A name with a newline split the error line in two; a name of megabytes made a line as long.
  EXPECT_EQ(error_after([](auto& s) { main_call(s)["target"] = "a\nb"; }),
            kFile +
                ": /clients/0/iteration/2/target: unknown process \"a\\nb\"; valid processes: "
                "server, client");
  EXPECT_EQ(error_after([](auto& s) { main_call(s)["target"] = std::string(1 << 20, 'x'); }),
            kFile + ": /clients/0/iteration/2/target: unknown process \"" + std::string(38, 'x') +
                "...\"; valid processes: server, client");
  // A key with a newline is escaped in the pointer.
  EXPECT_EQ(error_after([](auto& s) { s["a\nb"] = 1; }).rfind(kFile + ": /a\\nb: unknown key", 0),
            0u);
}

TEST_F(ScenarioTest, UnknownNodeListsTheTargetsNodes) {
  EXPECT_EQ(error_after([](auto& s) { main_call(s)["node"] = "binderWorker1"; }),
            kFile +
                ": /clients/0/iteration/2/node: process \"server\" has no node "
                "\"binderWorker1\" (did you mean \"binderWorker0\"?); valid nodes: "
                "binderWorker0");
}

TEST_F(ScenarioTest, CallToAProcessWithoutNodesIsAnError) {
  // "nodes": [] exports nothing; a call without "node" would otherwise go to a missing node 0.
  EXPECT_EQ(error_after([](auto& s) { s["processes"][0]["nodes"] = nlohmann::json::array(); }),
            kFile +
                ": /clients/0/iteration/0/steps/1/target: process \"server\" has no nodes to "
                "call");
}

TEST_F(ScenarioTest, FifoThreadWithoutPriorityIsAnError) {
  EXPECT_EQ(error_after([](auto& s) { thread_step(s).erase("priority"); }),
            kFile + ": /clients/0/iteration/0: a \"fifo\" thread needs \"priority\" (1..99)");
  EXPECT_EQ(error_after([](auto& s) { s["clients"][0]["policy"] = "fifo"; }),
            kFile + ": /clients/0: a \"fifo\" client needs \"priority\" (1..99)");
}

TEST_F(ScenarioTest, BadPlacementListsValidValues) {
  // The valid placements are whatever the scheduler layer offers, listed in its order.
  std::string valid;
  for (const std::string& name : sched::placement_names()) {
    valid += (valid.empty() ? "" : ", ") + name;
  }
  ASSERT_NE(valid.find("mainline"), std::string::npos);
  EXPECT_EQ(error_after([](auto& s) { s["kernel"]["placement"] = "eas"; }),
            kFile + ": /kernel/placement: expected one of " + valid + ", got \"eas\"");
}

TEST_F(ScenarioTest, BadSelectorListsValidValues) {
  EXPECT_EQ(error_after([](auto& s) { s["kernel"]["selector"] = "ctab"; }),
            kFile + ": /kernel/selector: expected one of fifo, ctabs, ctabs-nudge, got \"ctab\"");
  EXPECT_EQ(
      error_after([](auto& s) { s["kernel"]["priority_inheritance"] = "rt"; }),
      kFile + ": /kernel/priority_inheritance: expected one of android, upstream, got \"rt\"");
  EXPECT_EQ(error_after([](auto& s) { thread_step(s)["policy"] = "rr"; }),
            kFile + ": /clients/0/iteration/0/policy: expected one of normal, fifo, got \"rr\"");
  EXPECT_EQ(error_after([](auto& s) { main_call(s)["op"] = "transact"; }),
            kFile +
                ": /clients/0/iteration/2/op: expected one of compute, sleep, call, thread, "
                "got \"transact\"");
}

// kernel.selector_params: parameters by selector name, checked by the selector's factory when
// the scenario is read, for every selector named, and given to the selector a run builds.
TEST_F(ScenarioTest, SelectorParamsAreCheckedAndUsed) {
  const auto params = [](nlohmann::json& s) -> nlohmann::json& {
    return s["kernel"]["selector_params"];
  };
  // The parameters of a selector the run does not choose are checked all the same.
  EXPECT_EQ(error_after([&](auto& s) { params(s)["ctabs-nudge"]["check_caller_idle"] = "no"; }),
            kFile +
                ": /kernel/selector_params/ctabs-nudge/check_caller_idle: expected true or "
                "false, got \"no\"");
  EXPECT_EQ(error_after([&](auto& s) {
              params(s)["ctabs"]["check_caller_idle"] = false;
            }).rfind(kFile + ": /kernel/selector_params/ctabs/check_caller_idle: unknown key", 0),
            0u);
  // Its keys are the registered selectors (the list is not spelt out: a new policy adds to it).
  const std::string unknown =
      error_after([&](auto& s) { params(s)["ctab"] = nlohmann::json::object(); });
  EXPECT_EQ(unknown.rfind(kFile + ": /kernel/selector_params/ctab: unknown key (did you mean "
                                  "\"ctabs\"?); valid keys: ",
                          0),
            0u)
      << unknown;
  EXPECT_NE(unknown.find("ctabs-nudge"), std::string::npos) << unknown;
  EXPECT_EQ(error_after([&](auto& s) { params(s) = "ctabs-nudge"; }),
            kFile + ": /kernel/selector_params: expected an object, got \"ctabs-nudge\"");
  EXPECT_EQ(error_after([&](auto& s) { params(s)["fifo"] = 1; }),
            kFile + ": /kernel/selector_params/fifo: expected an object, got 1");

  // Read: each selector named keeps its own parameters; a selector not named gets none.
  nlohmann::json value = shipped();
  params(value)["ctabs-nudge"]["check_caller_idle"] = false;
  params(value)["fifo"] = nlohmann::json::object();
  const Scenario s = parse(value);
  ASSERT_EQ(s.kernel.selector_params.size(), 2u);
  EXPECT_EQ(s.kernel.selector_params.at("ctabs-nudge").pointer,
            "/kernel/selector_params/ctabs-nudge");
  EXPECT_EQ(s.kernel.selector_params.at("ctabs-nudge").file, kFile);

  // Used: ctabs-nudge without the check nudges towards a busy caller CPU (a cluster-match win:
  // CPU 5's thread for a caller on CPU 4); as patched, it declines.
  const topology::Topology topology = testing::load_sa8155p();
  testing::FakeMachine machine(topology);
  machine.set_caller_idle(4, false);
  const std::vector<selectors::IdleThread> waiting = {{100, 0}, {101, 5}};
  const selectors::SelectionRequest request{waiting, 4, true};
  const auto unchecked = create_selector(registry_, "ctabs-nudge", s.kernel);
  EXPECT_EQ(unchecked->select(request, machine).preferred_cpu, 4);
  const auto patched = create_selector(registry_, "ctabs-nudge", KernelSpec{});
  EXPECT_TRUE(patched->select(request, machine).nudge_declined);
  EXPECT_EQ(create_selector(registry_, "ctabs", s.kernel)->name(), "ctabs");
  EXPECT_EQ(testing::error_of([&] {
              create_selector(registry_, "nope", s.kernel);
            }).rfind("unknown selector \"nope\"", 0),
            0u);
}

// What a --vary or a sweep axis of selector parameters is judged by: the key lies within
// kernel.selector_params, and some selector takes more than one set of parameters over it.
TEST(SelectorParamsVaryTest, WithinTheKeyAndUnchangedSelectors) {
  EXPECT_TRUE(within_selector_params("kernel.selector_params"));
  EXPECT_TRUE(within_selector_params("kernel.selector_params.ctabs-nudge.check_caller_idle"));
  EXPECT_FALSE(within_selector_params("kernel"));
  EXPECT_FALSE(within_selector_params("kernel.selector"));
  EXPECT_FALSE(within_selector_params("kernel.selector_paramsx"));
  EXPECT_EQ(unchanged_selectors({}), std::nullopt);
  EXPECT_EQ(unchanged_selectors({{"fifo", {""}}, {"ctabs", {""}}}), "ctabs, fifo");
  EXPECT_EQ(unchanged_selectors({{"fifo", {""}}, {"ctabs-nudge", {"", "{}"}}}), std::nullopt);
}

TEST_F(ScenarioTest, BackgroundTaskWithoutProcessCannotCall) {
  const nlohmann::json call = {{"op", "call"}, {"target", "server"}};
  EXPECT_EQ(error_after([&](auto& s) { s["background"][0]["iteration"].push_back(call); }),
            kFile +
                ": /background/0/iteration: a background task without \"process\" cannot "
                "make calls");
  // A call hidden inside a thread step counts too.
  const nlohmann::json thread = {{"op", "thread"},
                                 {"create_ref_ns", 1},
                                 {"start_ref_ns", 1},
                                 {"exit_ref_ns", 1},
                                 {"steps", {call}}};
  EXPECT_EQ(error_after([&](auto& s) { s["background"][2]["iteration"].push_back(thread); }),
            kFile +
                ": /background/2/iteration: a background task without \"process\" cannot "
                "make calls");
}

TEST_F(ScenarioTest, SchemaMismatchIsAnError) {
  EXPECT_EQ(error_after([](auto& s) { s["schema"] = "bindersim.scenario/2"; }),
            kFile + ": /schema: expected \"bindersim.scenario/1\", got \"bindersim.scenario/2\"");
  EXPECT_EQ(error_after([](auto& s) { s["schema"] = 1; }),
            kFile + ": /schema: expected a string, got 1");
}

TEST_F(ScenarioTest, NamesAreUniqueAndPrintable) {
  // A second node of the same name was accepted, and calls naming it went to the first.
  EXPECT_EQ(error_after([](auto& s) {
              s["processes"][0]["nodes"].push_back({{"name", "binderWorker0"}});
            }),
            kFile +
                ": /processes/0/nodes/1/name: duplicate node name \"binderWorker0\" in process "
                "\"server\"");
  // Clients and background tasks name threads in results and traces.
  EXPECT_EQ(error_after([](auto& s) { s["background"][1]["name"] = "client"; }),
            kFile + ": /background/1/name: duplicate client or background task name \"client\"");
  EXPECT_EQ(error_after([](auto& s) { s["background"][1]["name"] = "system-0"; }),
            kFile + ": /background/1/name: duplicate client or background task name \"system-0\"");
  // A newline in a name split the one-line summaries.
  EXPECT_EQ(error_after([](auto& s) { s["name"] = "two\nlines"; }),
            kFile + ": /name: expected a name without control characters, got \"two\\nlines\"");
  EXPECT_EQ(error_after([](auto& s) { s["processes"][1]["name"] = ""; }),
            kFile + ": /processes/1/name: expected a non-empty name, got \"\"");
  EXPECT_EQ(error_after([](auto& s) {
              s["clients"][0]["affinity"] = {0, 2, 0};
            }),
            kFile + ": /clients/0/affinity/2: CPU 0 given twice");
}

TEST_F(ScenarioTest, OtherStructuralErrors) {
  EXPECT_EQ(error_after([](auto& s) { s["processes"][1]["name"] = "server"; }),
            kFile + ": /processes/1/name: duplicate process name \"server\"");
  EXPECT_EQ(error_after([](auto& s) { s["clients"] = nlohmann::json::array(); }),
            kFile + ": /clients: expected at least one client, got an array");
  EXPECT_EQ(error_after([](auto& s) { s["clients"][0]["iteration"] = nlohmann::json::array(); }),
            kFile + ": /clients/0/iteration: expected at least one step, got an array");
  EXPECT_EQ(error_after([](auto& s) {
              thread_step(s)["steps"][0]["ref_ns"] = {{"uniform", {9, 3}}};
            }),
            kFile +
                ": /clients/0/iteration/0/steps/0/ref_ns/uniform/1: expected an integer in [9, "
                "1000000000000], got 3");
  EXPECT_EQ(error_after([](auto& s) {
              thread_step(s)["steps"][0]["ref_ns"] = {{"normal", 3}};
            }),
            kFile +
                ": /clients/0/iteration/0/steps/0/ref_ns: expected a number or an object with "
                "\"uniform\" or \"exponential_mean\"");
}

}  // namespace
TEST_F(ScenarioTest, SeedsTakeTheWholeUnsignedRange) {
  // The same range as run --seed and the sweeps' seeds: [0, 2^64 - 1].
  nlohmann::json value = shipped();
  value["seed"] = std::numeric_limits<std::uint64_t>::max();
  EXPECT_EQ(parse(value).seed, std::numeric_limits<std::uint64_t>::max());
  value["seed"] = 0;
  EXPECT_EQ(parse(value).seed, 0u);
  EXPECT_EQ(error_after([](nlohmann::json& s) { s["seed"] = -1; }),
            "scenarios/x.json: /seed: expected an integer in [0, 18446744073709551615], got -1");
}

}  // namespace bindersim::workload
