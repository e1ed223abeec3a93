// The contract every registered selector must keep, run over every name in the registry and
// the guide's example (docs/selectors.md): a policy added with one registry line is tested here
// for free.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "../common/config_error.hpp"
#include "../common/test_rng.hpp"
#include "bindersim/common/json_reader.hpp"
#include "bindersim/selectors/registry.hpp"
#include "bindersim/selectors/selector.hpp"
#include "bindersim/topology/topology.hpp"
#include "example_selector.hpp"
#include "fake_machine.hpp"

namespace bindersim::selectors {
namespace {

using testing::FakeMachine;

using testing::TestRng;

// One selection input: the waiting list, the caller's CPU and which CPUs are idle.
struct Input {
  std::vector<IdleThread> waiting;
  int caller_cpu = 0;
  std::vector<bool> idle;
  bool sync = true;
};

// A policy as the suite builds it: its registry name and its parameters as JSON text ("": none
// given); `label` names the test instance.
struct Policy {
  std::string name;
  std::string params;
  std::string label;
};

// GoogleTest prints a parameter in test listings: the label, not the object's bytes.
void PrintTo(const Policy& policy, std::ostream* out) { *out << policy.label; }

// Every registered policy with its defaults, and each parameter setting that changes a rule.
std::vector<Policy> policies() {
  std::vector<Policy> out;
  for (const std::string& name : builtin_and_example_selectors().names()) {
    out.push_back({name, "", name});
  }
  out.push_back({"ctabs-nudge", R"({"check_caller_idle": false})", "ctabs-nudge unchecked"});
  return out;
}

class SelectorConformance : public ::testing::TestWithParam<Policy> {
 protected:
  SelectorConformance()
      : topology_(testing::load_sa8155p()),
        machine_(topology_),
        registry_(builtin_and_example_selectors()) {}

  const std::string& name() const { return GetParam().name; }
  std::unique_ptr<Selector> make() {
    if (GetParam().params.empty()) return registry_.create(name());
    const JsonDocument document = JsonDocument::parse_text(GetParam().params, "params.json");
    const JsonNode params = document.root();
    return registry_.create(name(), &params);
  }

  // Inputs covering empty lists, fresh threads, every CPU as caller and mixed idleness; about a
  // quarter of the lists are empty.
  std::vector<Input> inputs(std::size_t count) const {
    TestRng stream(0x5eed);
    std::vector<Input> out;
    const int cpus = topology_.num_cpus();
    for (std::size_t n = 0; n < count; ++n) {
      Input input;
      const int length = stream.between(0, 3) == 0 ? 0 : stream.between(1, 16);
      for (int i = 0; i < length; ++i) {
        input.waiting.push_back(IdleThread{1000 + i, stream.between(-1, cpus - 1)});
      }
      input.caller_cpu = stream.between(0, cpus - 1);
      for (int cpu = 0; cpu < cpus; ++cpu) input.idle.push_back(stream.between(0, 1) == 1);
      input.sync = stream.between(0, 3) != 0;
      out.push_back(std::move(input));
    }
    return out;
  }

  Selection run(Selector& selector, const Input& input) {
    machine_.set_idle(input.idle);
    return selector.select(SelectionRequest{input.waiting, input.caller_cpu, input.sync}, machine_);
  }

  topology::Topology topology_;
  FakeMachine machine_;
  SelectorRegistry registry_;
};

// The selector carries its registry name.
TEST_P(SelectorConformance, NameMatchesTheRegistry) { EXPECT_EQ(make()->name(), name()); }

// With no idle thread there is no pick, no nudge, and the decision counts as none_idle, for
// every caller CPU and whatever the idleness of the CPUs.
TEST_P(SelectorConformance, EmptyListSelectsNothing) {
  auto selector = make();
  const int cpus = topology_.num_cpus();
  for (int caller = 0; caller < cpus; ++caller) {
    for (const bool idle : {false, true}) {
      const Selection selection = run(
          *selector, Input{{}, caller, std::vector<bool>(static_cast<std::size_t>(cpus), idle)});
      EXPECT_FALSE(selection.index.has_value());
      EXPECT_EQ(selection.preferred_cpu, -1);
      EXPECT_FALSE(selection.nudge_declined);
    }
  }
  EXPECT_EQ(selector->counts().none_idle, static_cast<std::uint64_t>(2 * cpus));
  EXPECT_EQ(
      selector->counts().same_cpu + selector->counts().same_cluster + selector->counts().other, 0u);
}

// With idle threads the answer is a valid index; a nudge is -1 or a CPU of the topology and
// never comes together with a declined nudge.
TEST_P(SelectorConformance, AnswersAreValid) {
  auto selector = make();
  for (const Input& input : inputs(2000)) {
    const Selection selection = run(*selector, input);
    if (input.waiting.empty()) {
      EXPECT_FALSE(selection.index.has_value());
      continue;
    }
    ASSERT_TRUE(selection.index.has_value());
    EXPECT_LT(*selection.index, input.waiting.size());
    EXPECT_TRUE(selection.preferred_cpu == -1 ||
                (selection.preferred_cpu >= 0 && selection.preferred_cpu < topology_.num_cpus()))
        << selection.preferred_cpu;
    EXPECT_FALSE(selection.preferred_cpu >= 0 && selection.nudge_declined);
  }
}

// Same inputs, same answers: two selectors fed the same sequence agree on every call, and
// asking one the same question twice in a row gives the same answer.
TEST_P(SelectorConformance, IsDeterministic) {
  auto first = make();
  auto second = make();
  for (const Input& input : inputs(1000)) {
    const Selection a = run(*first, input);
    const Selection b = run(*second, input);
    const Selection again = run(*first, input);
    EXPECT_EQ(a.index, b.index);
    EXPECT_EQ(a.preferred_cpu, b.preferred_cpu);
    EXPECT_EQ(a.nudge_declined, b.nudge_declined);
    EXPECT_EQ(a.index, again.index);
    EXPECT_EQ(a.preferred_cpu, again.preferred_cpu);
  }
}

// Every call is counted exactly once by reason, none_idle matches the empty lists, and the
// declined nudges match the answers that said so.
TEST_P(SelectorConformance, CountsAddUp) {
  auto selector = make();
  const std::vector<Input> all = inputs(1500);
  std::uint64_t empty = 0, declined = 0;
  for (const Input& input : all) {
    if (input.waiting.empty()) ++empty;
    if (run(*selector, input).nudge_declined) ++declined;
  }
  const stats::SelectionCounts& counts = selector->counts();
  EXPECT_EQ(counts.same_cpu + counts.same_cluster + counts.other + counts.none_idle, all.size());
  EXPECT_EQ(counts.none_idle, empty);
  EXPECT_GT(empty, 0u);
  EXPECT_EQ(counts.nudges_declined, declined);
  // Whether a nudge is applied is the driver's to count (it writes wake_cpu on a sync
  // wakeup): a selector that counted its own preferred CPUs as applied would count them twice.
  EXPECT_EQ(counts.nudges_applied, 0u);
}

// Every policy takes null and {} (its defaults); a key it does not know or a non-object is a
// ConfigError naming the file and the JSON pointer.
// A policy built with its defaults reports no parameters; one built from the parameters it
// reports reports them again (a result's selector_params rebuild the policy that ran).
TEST_P(SelectorConformance, ReportedParamsRebuildThePolicy) {
  EXPECT_EQ(registry_.create(name())->non_default_params(), "");
  const std::string reported = make()->non_default_params();
  if (reported.empty()) return;
  EXPECT_EQ(nlohmann::json::parse(reported).dump(), reported);  // compact, keys sorted
  const JsonDocument document = JsonDocument::parse_text(reported, "result.json");
  const JsonNode params = document.root();
  EXPECT_EQ(registry_.create(name(), &params)->non_default_params(), reported);
}

TEST_P(SelectorConformance, UnknownParamsAreRejected) {
  const JsonDocument document = JsonDocument::parse_text(
      R"({"empty": {}, "none": null, "keyed": {"depth": 2}, "number": 3})", "scenario.json");
  const JsonNode root = document.root();
  const JsonNode empty = root.child("empty");
  const JsonNode none = root.child("none");
  const JsonNode keyed = root.child("keyed");
  const JsonNode number = root.child("number");
  EXPECT_EQ(registry_.create(name(), &empty)->name(), name());
  EXPECT_EQ(registry_.create(name(), &none)->name(), name());
  EXPECT_EQ(testing::error_of([&] {
              registry_.create(name(), &keyed);
            }).rfind("scenario.json: /keyed/depth: unknown key", 0),
            0u);
  EXPECT_EQ(testing::error_of([&] { registry_.create(name(), &number); }),
            "scenario.json: /number: expected an object, got 3");
}

INSTANTIATE_TEST_SUITE_P(Registered, SelectorConformance, ::testing::ValuesIn(policies()),
                         [](const ::testing::TestParamInfo<Policy>& param) {
                           std::string name = param.param.label;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace bindersim::selectors
