// The guide's example selector, idle-last-cpu (docs/selectors.md): its rule on chosen machines
// and at every selection of a whole simulated run, and the guide's quotes of its code and of
// the interface it implements. The contract every policy keeps is conformance_test.cpp's.
#include <gtest/gtest.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../sim/sim_fixture.hpp"
#include "bindersim/common/json_reader.hpp"
#include "bindersim/selectors/registry.hpp"
#include "bindersim/selectors/selector.hpp"
#include "bindersim/topology/topology.hpp"
#include "example_selector.hpp"
#include "fake_machine.hpp"

namespace bindersim::selectors {
namespace {

using bindersim::testing::FakeMachine;

// On the SA8155P: silver 0-3, gold 4-6, prime 7.
class IdleLastCpuTest : public ::testing::Test {
 protected:
  IdleLastCpuTest() : topology_(bindersim::testing::load_sa8155p()), machine_(topology_) {}

  // The example's answer for waiting threads with `last_cpus` (head first), a caller on
  // `caller_cpu`, and the CPUs `idle_cpus` idle (every other CPU busy).
  Selection pick(const std::vector<int>& last_cpus, int caller_cpu,
                 const std::vector<int>& idle_cpus) {
    for (int cpu = 0; cpu < topology_.num_cpus(); ++cpu) machine_.set_idle(cpu, false);
    for (int cpu : idle_cpus) machine_.set_idle(cpu, true);
    waiting_.clear();
    for (std::size_t i = 0; i < last_cpus.size(); ++i) {
      waiting_.push_back(IdleThread{static_cast<int>(100 + i), last_cpus[i]});
    }
    return selector_.select(SelectionRequest{waiting_, caller_cpu, true}, machine_);
  }

  topology::Topology topology_;
  FakeMachine machine_;
  IdleLastCpuSelector selector_;
  std::vector<IdleThread> waiting_;
};

TEST_F(IdleLastCpuTest, TakesTheFirstThreadWhoseLastCpuIsIdle) {
  // Last CPUs 2 (busy), 5 (idle), 6 (idle): the first with an idle CPU, not the later one.
  EXPECT_EQ(pick({2, 5, 6}, 0, {5, 6}).index, 1u);
  EXPECT_EQ(pick({2, 5, 6}, 0, {6}).index, 2u);
  // The caller's own CPU counts like any other CPU (in a simulated run it is never idle at
  // selection: the caller is running there).
  EXPECT_EQ(pick({4, 0}, 0, {0}).index, 1u);
}

TEST_F(IdleLastCpuTest, TakesTheHeadWhenNoLastCpuIsIdle) {
  EXPECT_EQ(pick({2, 5, 6}, 0, {1, 3, 7}).index, 0u);
  // A thread whose last CPU is not known yet (-1) is not taken for an idle one, however idle
  // the machine.
  EXPECT_EQ(pick({-1, -1}, 0, {0, 1, 2, 3, 4, 5, 6, 7}).index, 0u);
  EXPECT_EQ(pick({-1, 3}, 0, {0, 1, 2, 3, 4, 5, 6, 7}).index, 1u);
}

TEST_F(IdleLastCpuTest, NeverNudges) {
  // Where ctabs-nudge would nudge (a win in the caller's cluster with the caller's CPU idle),
  // and elsewhere.
  for (const Selection& selection :
       {pick({1}, 0, {0, 1}), pick({5}, 5, {5}), pick({1, 2}, 7, {})}) {
    EXPECT_EQ(selection.preferred_cpu, -1);
    EXPECT_FALSE(selection.nudge_declined);
  }
}

// One selection as the simulated driver asked for it, with what the machine said of the CPUs
// at that instant.
struct Decision {
  std::vector<bool> last_cpu_idle;  // per waiting thread, head first: its last CPU was idle
  bool caller_idle = false;
  bool sync = false;
  Selection answer;
};

// The example under its own name, recording every decision of a run.
class RecordingIdleLastCpu final : public Selector {
 public:
  explicit RecordingIdleLastCpu(std::vector<Decision>& log)
      : Selector(std::string(kIdleLastCpuName)), log_(log) {}

 protected:
  Selection do_select(const SelectionRequest& request, const MachineView& machine) override {
    Decision decision;
    for (const IdleThread& thread : request.waiting) {
      decision.last_cpu_idle.push_back(thread.last_cpu >= 0 &&
                                       machine.available_idle_cpu(thread.last_cpu));
    }
    decision.caller_idle = machine.available_idle_cpu(request.caller_cpu);
    decision.sync = request.sync;
    decision.answer = example_.select(request, machine);
    log_.push_back(decision);
    return decision.answer;
  }

 private:
  IdleLastCpuSelector example_;
  std::vector<Decision>& log_;
};

stats::RunResult run_schd_dbg(const SelectorRegistry& registry, const std::string& selector) {
  return bindersim::testing::run_scenario(bindersim::testing::scaled_scenario("schd-dbg", 300),
                                          selector, 1, "", registry);
}

// On the machine states of a whole schd-dbg run, the example takes the first thread whose last
// CPU is idle, or the head. The run also shows what the driver's questions look like: the
// caller's own CPU is never idle (the thread that asks, the sender or the waker of a looper
// for the process's work, is running there: why ctabs-nudge never nudges), most requests are
// synchronous, and the rule decides some picks.
TEST(IdleLastCpuRunTest, KeepsItsRuleAtEverySelectionOfARun) {
  std::vector<Decision> log;
  SelectorRegistry registry;
  registry.add(std::string(kIdleLastCpuName), "recording", [&log](const JsonNode* params) {
    expect_no_params(params);
    return std::make_unique<RecordingIdleLastCpu>(log);
  });
  const stats::RunResult result = run_schd_dbg(registry, std::string(kIdleLastCpuName));
  ASSERT_TRUE(result.clients_finished);
  ASSERT_GE(log.size(), 600u);  // every call of the 300 iterations of both clients

  std::size_t rule_broken = 0;
  std::size_t past_head = 0;
  std::size_t caller_idle = 0;
  std::size_t sync = 0;
  for (const Decision& decision : log) {
    if (decision.caller_idle) ++caller_idle;
    if (decision.sync) ++sync;
    if (decision.last_cpu_idle.empty()) continue;
    std::size_t expected = 0;
    for (std::size_t i = 0; i < decision.last_cpu_idle.size(); ++i) {
      if (decision.last_cpu_idle[i]) {
        expected = i;
        break;
      }
    }
    if (decision.answer.index != expected) ++rule_broken;
    if (expected > 0) ++past_head;
  }
  EXPECT_EQ(rule_broken, 0u);
  EXPECT_EQ(caller_idle, 0u);
  EXPECT_GT(sync, log.size() / 2);
  EXPECT_GT(past_head, 0u);
}

// Registered by its one line, the example runs like a shipped policy: the same result twice,
// and another run than fifo's.
TEST(IdleLastCpuRunTest, RunsDeterministicallyAndDiffersFromFifo) {
  const SelectorRegistry registry = builtin_and_example_selectors();
  const stats::RunResult first = run_schd_dbg(registry, "idle-last-cpu");
  const stats::RunResult second = run_schd_dbg(registry, "idle-last-cpu");
  const stats::RunResult fifo = run_schd_dbg(registry, "fifo");
  EXPECT_EQ(first.fingerprint, second.fingerprint);
  EXPECT_EQ(first.latency.mean(), second.latency.mean());
  EXPECT_NE(first.fingerprint, fifo.fingerprint);
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every C++ block of the guide is a quote, character for character, of one of the example's
// files or of the selector interface's headers: the guide cannot drift from the code it
// teaches.
TEST(SelectorGuideTest, QuotesTheCodeAsItIs) {
  const std::filesystem::path root = bindersim::testing::kSourceDir;
  const std::string guide = read_file(root / "docs" / "selectors.md");
  std::vector<std::string> sources;
  for (const char* file :
       {"tests/selectors/example_selector.hpp", "tests/selectors/example_selector.cpp",
        "include/bindersim/selectors/selector.hpp", "include/bindersim/selectors/registry.hpp"}) {
    sources.push_back(read_file(root / file));
  }
  const std::string open = "```cpp\n";
  const std::string close = "```\n";
  std::size_t blocks = 0;
  for (std::size_t at = guide.find(open); at != std::string::npos; at = guide.find(open, at)) {
    const std::size_t begin = at + open.size();
    const std::size_t end = guide.find(close, begin);
    ASSERT_NE(end, std::string::npos) << "an unclosed block";
    const std::string block = guide.substr(begin, end - begin);
    bool quoted = false;
    for (const std::string& source : sources)
      quoted = quoted || source.find(block) != std::string::npos;
    EXPECT_TRUE(quoted) << "not in the code:\n" << block;
    ++blocks;
    at = end + close.size();
  }
  EXPECT_EQ(blocks, 10u);  // all ten: a block whose fence lost its tag would escape the check
}

}  // namespace
}  // namespace bindersim::selectors
