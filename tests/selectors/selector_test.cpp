// Behaviour of the built-in selectors (fifo, ctabs, ctabs-nudge), the decision counting of
// Selector::select() and the registry, on the SA8155P cluster map
// (silver 0-3 = cluster 0, gold 4-6 = cluster 1, prime 7 = cluster 2).
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "../common/config_error.hpp"
#include "bindersim/common/error.hpp"
#include "bindersim/common/json_reader.hpp"
#include "bindersim/selectors/ctabs.hpp"
#include "bindersim/selectors/fifo.hpp"
#include "bindersim/selectors/registry.hpp"
#include "bindersim/selectors/selector.hpp"
#include "bindersim/topology/topology.hpp"
#include "fake_machine.hpp"

namespace bindersim::selectors {
namespace {

using testing::FakeMachine;
using testing::load_sa8155p;

// Idle threads with the given last CPUs, head first; tids are 100, 101, ...
std::vector<IdleThread> threads(const std::vector<int>& last_cpus) {
  std::vector<IdleThread> out;
  for (std::size_t i = 0; i < last_cpus.size(); ++i) {
    out.push_back(IdleThread{static_cast<int>(100 + i), last_cpus[i]});
  }
  return out;
}

class SelectorTest : public ::testing::Test {
 protected:
  SelectorTest() : topology_(load_sa8155p()), machine_(topology_) {
    register_builtin_selectors(registry_);
  }

  std::unique_ptr<Selector> make(const std::string& name) { return registry_.create(name); }

  // One selection by `selector` with the caller on `caller_cpu`, whose idleness is given.
  Selection run(Selector& selector, const std::vector<int>& last_cpus, int caller_cpu,
                bool caller_idle = true, bool sync = true) {
    const std::vector<IdleThread> waiting = threads(last_cpus);
    machine_.set_caller_idle(caller_cpu, caller_idle);
    return selector.select(SelectionRequest{waiting, caller_cpu, sync}, machine_);
  }
  Selection run(const std::string& name, const std::vector<int>& last_cpus, int caller_cpu,
                bool caller_idle = true) {
    return run(*make(name), last_cpus, caller_cpu, caller_idle);
  }

  topology::Topology topology_;
  FakeMachine machine_;
  SelectorRegistry registry_;
};

// ---------------------------------------------------------------------------------------------
// The worked vectors.

class CtabsVectorsTest : public SelectorTest {
 protected:
  CtabsVectorsTest()
      : document_(JsonDocument::parse_file(std::filesystem::path(BINDERSIM_TEST_DATA_DIR) /
                                           "ctabs-vectors.json")) {}
  const nlohmann::json& vectors() const { return document_.value(); }

  JsonDocument document_;
};

// The vectors were worked out on the SA8155P cluster map: it must be the shipped topology's.
TEST_F(CtabsVectorsTest, ClusterMapMatchesTheShippedTopology) {
  const auto& map = vectors().at("cluster_of_cpu");
  ASSERT_EQ(map.size(), static_cast<std::size_t>(topology_.num_cpus()));
  for (int cpu = 0; cpu < topology_.num_cpus(); ++cpu) {
    EXPECT_EQ(map.at(static_cast<std::size_t>(cpu)).get<int>(), topology_.cluster_of(cpu))
        << "cpu " << cpu;
  }
}

// Every case gives, for every policy, the expected pick and preferred CPU. The same answer
// comes for a non-sync request: the policy still reports its nudge and the driver drops it.
TEST_F(CtabsVectorsTest, EveryCaseForEveryPolicy) {
  const auto& cases = vectors().at("cases");
  ASSERT_GE(cases.size(), 10u);
  for (const std::string policy : {"fifo", "ctabs", "ctabs-nudge"}) {
    for (const auto& vector : cases) {
      const std::string name = vector.at("name").get<std::string>();
      SCOPED_TRACE(policy + ": " + name);
      const auto last_cpus = vector.at("waiting").get<std::vector<int>>();
      const int caller_cpu = vector.at("caller_cpu").get<int>();
      const bool caller_idle = vector.at("caller_cpu_idle").get<bool>();
      const auto& expect = vector.at("expect").at(policy);
      std::optional<std::size_t> pick;
      if (!expect.at("pick").is_null()) pick = expect.at("pick").get<std::size_t>();
      const int preferred = expect.value("preferred_cpu", -1);

      for (const bool sync : {true, false}) {
        auto selector = make(policy);
        const Selection selection = run(*selector, last_cpus, caller_cpu, caller_idle, sync);
        EXPECT_EQ(selection.index, pick) << "sync " << sync;
        EXPECT_EQ(selection.preferred_cpu, preferred) << "sync " << sync;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// fifo

// fifo takes the head whatever the CPUs, and never nudges.
TEST_F(SelectorTest, FifoTakesTheHead) {
  const Selection selection = run("fifo", {5, 2, 3}, 2);
  EXPECT_EQ(selection.index, 0u);
  EXPECT_EQ(selection.preferred_cpu, -1);
  EXPECT_FALSE(selection.nudge_declined);
}

// ---------------------------------------------------------------------------------------------
// ctabs and ctabs-nudge

// The first thread that last ran on the caller's CPU is taken, even after a cluster match and
// before a second same-CPU thread; it is never nudged.
TEST_F(SelectorTest, CtabsSameCpuIsAnEarlyExit) {
  for (const std::string policy : {"ctabs", "ctabs-nudge"}) {
    SCOPED_TRACE(policy);
    const Selection selection = run(policy, {4, 1, 2, 2}, 2, /*caller_idle=*/true);
    EXPECT_EQ(selection.index, 2u);
    EXPECT_EQ(selection.preferred_cpu, -1);
    EXPECT_FALSE(selection.nudge_declined);
  }
}

// A thread that last ran in the caller's cluster beats threads of other clusters before it.
TEST_F(SelectorTest, CtabsPrefersTheCallersCluster) {
  // Caller on gold CPU 5: silver 0 and prime 7 score 0, gold 6 scores 1.
  EXPECT_EQ(run("ctabs", {0, 7, 6, 4}, 5).index, 2u);
  // Caller on silver CPU 3: gold threads score 0, silver 0 scores 1.
  EXPECT_EQ(run("ctabs", {4, 5, 0}, 3).index, 2u);
}

// Among threads of equal score the first in list order wins.
TEST_F(SelectorTest, CtabsTiesKeepListOrder) {
  // Two cluster matches (3 and 0) for a caller on CPU 1: the first one.
  EXPECT_EQ(run("ctabs", {5, 3, 0, 2}, 1).index, 1u);
  // Two cross-cluster threads (4 and 0) for a caller on prime CPU 7: the head.
  EXPECT_EQ(run("ctabs", {4, 0}, 7).index, 0u);
}

// With no same-CPU or same-cluster thread, ctabs answers like fifo: the head.
TEST_F(SelectorTest, CtabsFallsBackToTheHead) {
  for (const std::string policy : {"ctabs", "ctabs-nudge"}) {
    SCOPED_TRACE(policy);
    const Selection selection = run(policy, {7, 5, 4}, 0);
    EXPECT_EQ(selection.index, run("fifo", {7, 5, 4}, 0).index);
    EXPECT_EQ(selection.index, 0u);
    EXPECT_EQ(selection.preferred_cpu, -1);
  }
}

// A thread that never ran (last_cpu -1) matches no CPU and no cluster.
TEST_F(SelectorTest, CtabsThreadThatNeverRanScoresZero) {
  // A gold thread behind two fresh ones is still found for a gold caller.
  EXPECT_EQ(run("ctabs", {-1, -1, 6}, 4).index, 2u);
  // For a silver caller, a fresh thread does not count as cluster 0: the head stays.
  EXPECT_EQ(run("ctabs", {5, -1}, 0).index, 0u);
  // Only fresh threads: the head.
  EXPECT_EQ(run("ctabs", {-1, -1}, 2).index, 0u);
}

// ctabs-nudge prefers the caller's CPU only after a cluster-match win with that CPU idle.
TEST_F(SelectorTest, NudgeOnlyOnClusterMatchWithIdleCallerCpu) {
  // Cluster match, caller CPU 5 idle: nudged to 5.
  EXPECT_EQ(run("ctabs-nudge", {0, 6}, 5, /*caller_idle=*/true).preferred_cpu, 5);
  // Cluster match, caller CPU busy (every other CPU idle): no nudge.
  EXPECT_EQ(run("ctabs-nudge", {0, 6}, 5, /*caller_idle=*/false).preferred_cpu, -1);
  // Same-CPU win with the caller CPU idle: no nudge.
  EXPECT_EQ(run("ctabs-nudge", {0, 5}, 5, /*caller_idle=*/true).preferred_cpu, -1);
  // No match with the caller CPU idle: no nudge.
  EXPECT_EQ(run("ctabs-nudge", {0, 7}, 5, /*caller_idle=*/true).preferred_cpu, -1);
  // Plain ctabs never nudges.
  EXPECT_EQ(run("ctabs", {0, 6}, 5, /*caller_idle=*/true).preferred_cpu, -1);
}

// ctabs-nudge with {"check_caller_idle": false} nudges on every cluster-match win, busy caller
// CPU or not, and so never declines; a same-CPU win and a win without a match still do not
// nudge. With true, it is the patch.
TEST_F(SelectorTest, NudgeWithoutTheIdleCheck) {
  const JsonDocument document = JsonDocument::parse_text(
      R"({"off": {"check_caller_idle": false}, "on": {"check_caller_idle": true}})",
      "scenario.json");
  const JsonNode off = document.root().child("off");
  const JsonNode on = document.root().child("on");
  auto unchecked = registry_.create("ctabs-nudge", &off);
  EXPECT_EQ(unchecked->name(), "ctabs-nudge");
  for (const bool caller_idle : {true, false}) {
    SCOPED_TRACE(caller_idle ? "caller idle" : "caller busy");
    const Selection match = run(*unchecked, {0, 6}, 5, caller_idle);
    EXPECT_EQ(match.index, 1u);
    EXPECT_EQ(match.preferred_cpu, 5);
    EXPECT_FALSE(match.nudge_declined);
    EXPECT_EQ(run(*unchecked, {0, 5}, 5, caller_idle).preferred_cpu, -1);  // same CPU
    EXPECT_EQ(run(*unchecked, {0, 7}, 5, caller_idle).preferred_cpu, -1);  // no match
  }
  EXPECT_EQ(unchecked->counts().nudges_declined, 0u);

  // What a result records: the parameters that differ from the defaults.
  EXPECT_EQ(unchecked->non_default_params(), R"({"check_caller_idle":false})");

  auto patched = registry_.create("ctabs-nudge", &on);
  EXPECT_EQ(patched->non_default_params(), "");
  EXPECT_EQ(run(*patched, {0, 6}, 5, /*caller_idle=*/true).preferred_cpu, 5);
  EXPECT_TRUE(run(*patched, {0, 6}, 5, /*caller_idle=*/false).nudge_declined);

  // The parameter is ctabs-nudge's: a bad value is an error at its pointer, and ctabs, which
  // has no nudge, does not know it.
  const JsonDocument bad = JsonDocument::parse_text(R"({"p": {"check_caller_idle": 0}})", "s.json");
  const JsonNode p = bad.root().child("p");
  EXPECT_EQ(testing::error_of([&] { registry_.create("ctabs-nudge", &p); }),
            "s.json: /p/check_caller_idle: expected true or false, got 0");
  EXPECT_EQ(testing::error_of([&] {
              registry_.create("ctabs", &off);
            }).rfind("scenario.json: /off/check_caller_idle: unknown key", 0),
            0u);
}

// A cluster-match win while the caller's CPU is busy is a declined nudge, in the answer and in
// the counts; other outcomes are not.
TEST_F(SelectorTest, DeclinedNudgesAreCounted) {
  auto nudge = make("ctabs-nudge");
  EXPECT_TRUE(run(*nudge, {6}, 4, /*caller_idle=*/false).nudge_declined);   // declined
  EXPECT_FALSE(run(*nudge, {6}, 4, /*caller_idle=*/true).nudge_declined);   // applied
  EXPECT_FALSE(run(*nudge, {4}, 4, /*caller_idle=*/false).nudge_declined);  // same CPU
  EXPECT_FALSE(run(*nudge, {0}, 4, /*caller_idle=*/false).nudge_declined);  // other cluster
  EXPECT_TRUE(run(*nudge, {0, 5}, 6, /*caller_idle=*/false, /*sync=*/false).nudge_declined);
  EXPECT_EQ(nudge->counts().nudges_declined, 2u);
  // Applied nudges are the driver's to count.
  EXPECT_EQ(nudge->counts().nudges_applied, 0u);

  // Plain ctabs has no nudge to decline.
  auto plain = make("ctabs");
  EXPECT_FALSE(run(*plain, {6}, 4, /*caller_idle=*/false).nudge_declined);
  EXPECT_EQ(plain->counts().nudges_declined, 0u);
}

// ---------------------------------------------------------------------------------------------
// Decision counting in Selector::select()

// Each decision is counted by the relation of the chosen thread's last CPU to the caller's.
TEST_F(SelectorTest, DecisionsAreCountedByReason) {
  auto fifo = make("fifo");
  run(*fifo, {2, 5}, 2);   // same CPU
  run(*fifo, {1, 2}, 2);   // same cluster (silver)
  run(*fifo, {3}, 2);      // same cluster again
  run(*fifo, {5, 2}, 2);   // gold thread for a silver caller: other
  run(*fifo, {-1, 2}, 2);  // never ran: other
  run(*fifo, {6}, 7);      // gold thread for the prime caller: other
  run(*fifo, {}, 2);       // nothing idle
  const stats::SelectionCounts& counts = fifo->counts();
  EXPECT_EQ(counts.same_cpu, 1u);
  EXPECT_EQ(counts.same_cluster, 2u);
  EXPECT_EQ(counts.other, 3u);
  EXPECT_EQ(counts.none_idle, 1u);
  EXPECT_EQ(counts.nudges_declined, 0u);
}

// The reason is the chosen thread's, not the head's: ctabs picking the same-CPU thread behind a
// cross-cluster head counts same_cpu.
TEST_F(SelectorTest, CountsFollowTheChosenThread) {
  auto ctabs = make("ctabs");
  run(*ctabs, {5, 2}, 2);
  run(*ctabs, {5, 1}, 2);
  EXPECT_EQ(ctabs->counts().same_cpu, 1u);
  EXPECT_EQ(ctabs->counts().same_cluster, 1u);
  EXPECT_EQ(ctabs->counts().other, 0u);
}

// A policy that breaks the contract is stopped by select().
class BrokenSelector final : public Selector {
 public:
  explicit BrokenSelector(Selection answer) : Selector("broken"), answer_(answer) {}

 protected:
  Selection do_select(const SelectionRequest&, const MachineView&) override { return answer_; }

 private:
  Selection answer_;
};

using SelectorDeathTest = SelectorTest;

// Not picking while a thread is idle, picking from an empty list, an index past the end and a
// preferred CPU outside the topology are internal errors.
TEST_F(SelectorDeathTest, BrokenAnswersAbort) {
  BrokenSelector no_pick(Selection{});
  EXPECT_DEATH(run(no_pick, {1}, 2), "must pick");
  BrokenSelector head(Selection{0, -1, false});
  EXPECT_DEATH(run(head, {}, 2), "must pick");
  BrokenSelector past_end(Selection{3, -1, false});
  EXPECT_DEATH(run(past_end, {1, 2}, 2), "index");
  BrokenSelector bad_cpu(Selection{0, 8, false});
  EXPECT_DEATH(run(bad_cpu, {1}, 2), "preferred_cpu");
}

// ---------------------------------------------------------------------------------------------
// Registry

// The built-in policies are registered in order, each with a one-line description, and each
// is created under its own name.
TEST_F(SelectorTest, RegistryHoldsTheBuiltinPolicies) {
  EXPECT_EQ(registry_.names(), (std::vector<std::string>{"fifo", "ctabs", "ctabs-nudge"}));
  for (const auto& entry : registry_.entries()) {
    SCOPED_TRACE(entry.name);
    EXPECT_TRUE(registry_.contains(entry.name));
    EXPECT_FALSE(entry.description.empty());
    EXPECT_EQ(entry.description.find('\n'), std::string::npos);
    EXPECT_EQ(registry_.create(entry.name)->name(), entry.name);
  }
  EXPECT_FALSE(registry_.contains("lifo"));
}

// A registered policy is created by its factory; a second one under the same name is an
// internal error.
TEST_F(SelectorTest, RegistryAddsAPolicy) {
  registry_.add("head", "always the head", [](const JsonNode* params) {
    expect_no_params(params);
    return std::make_unique<FifoSelector>();
  });
  EXPECT_TRUE(registry_.contains("head"));
  EXPECT_EQ(registry_.names().back(), "head");
  EXPECT_DEATH(registry_.add("fifo", "again", make_fifo_selector), "registered twice");
}

// An unknown name lists the valid ones, and suggests a close one.
TEST_F(SelectorTest, UnknownSelectorErrorText) {
  auto message_of = [&](const std::string& name) -> std::string {
    try {
      registry_.create(name);
    } catch (const ConfigError& error) {
      return error.what();
    }
    return "(no error)";
  };
  EXPECT_EQ(message_of("x"), "unknown selector \"x\"; valid selectors: fifo, ctabs, ctabs-nudge");
  EXPECT_EQ(message_of("ctab"),
            "unknown selector \"ctab\" (did you mean \"ctabs\"?); valid selectors: fifo, ctabs, "
            "ctabs-nudge");
  EXPECT_EQ(message_of("ctabs_nudge"),
            "unknown selector \"ctabs_nudge\" (did you mean \"ctabs-nudge\"?); valid selectors: "
            "fifo, ctabs, ctabs-nudge");
}

}  // namespace
}  // namespace bindersim::selectors
