// --set overrides: parsing KEY=VALUE and applying dotted paths to a scenario document.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>

#include "bindersim/common/error.hpp"
#include "bindersim/selectors/registry.hpp"
#include "bindersim/topology/topology.hpp"
#include "bindersim/workload/overrides.hpp"
#include "bindersim/workload/scenario.hpp"

namespace bindersim::workload {
namespace {

const std::string kSourceDir = BINDERSIM_SOURCE_DIR;

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "";
}

TEST(OverrideTest, ValuesAreJsonWhenTheyParseAndStringsOtherwise) {
  // Numbers and booleans keep their JSON type; a bare word is a string.
  EXPECT_EQ(parse_override("clients.0.iterations=100").value, nlohmann::json(100));
  EXPECT_EQ(parse_override("kernel.selector=ctabs").value, nlohmann::json("ctabs"));
  EXPECT_EQ(parse_override("processes.0.start_thread_pool=false").value, nlohmann::json(false));
  EXPECT_EQ(parse_override("a=\"42\"").value, nlohmann::json("42"));
  EXPECT_EQ(parse_override("a.b=x=y").path, "a.b");
  EXPECT_EQ(parse_override("a.b=x=y").value, nlohmann::json("x=y"));
}

TEST(OverrideTest, MalformedOverridesAreRejected) {
  // KEY=VALUE is required, and no key of the path may be empty.
  EXPECT_EQ(error_of([] { parse_override("kernel.placement"); }),
            "--set kernel.placement: expected KEY=VALUE (e.g. kernel.placement=mainline)");
  EXPECT_EQ(error_of([] { parse_override("kernel..placement=gki"); }),
            "--set kernel..placement=gki: empty key in \"kernel..placement\"");
}

TEST(OverrideTest, TextThatIsNotOneLineOfUtf8IsRejected) {
  // A byte 0xff reached nlohmann's dump() in a later message and ended the run with an internal
  // error; a newline split the error line in two.
  EXPECT_EQ(error_of([] { parse_override("clients.0.iterations=\xff"); }),
            "--set \"clients.0.iterations=\xef\xbf\xbd\": expected KEY=VALUE as UTF-8 text "
            "without control characters");
  EXPECT_EQ(error_of([] { parse_override("clients.0.process=a\nb"); }),
            "--set \"clients.0.process=a\\nb\": expected KEY=VALUE as UTF-8 text without "
            "control characters");
  EXPECT_EQ(parse_override("name=d\xc3\xa9j\xc3\xa0").value, "d\xc3\xa9j\xc3\xa0");  // UTF-8
}

TEST(OverrideTest, ValuesNestedDeeperThanTheLimitAreRejected) {
  // Copying the value into the document recurses once per level.
  EXPECT_EQ(error_of([] { parse_override("description=" + std::string(60000, '[')); }),
            "--set \"description=[[[[[[[[[[[[[[[[[[[[[[[[[[...\": expected a value nested at "
            "most 256 levels deep");
}

TEST(OverrideTest, ValuesNestedToTheLimitAreAcceptedAndOneLevelMoreIsNot) {
  // The limit is the scenario file's: 256 levels of arrays parse, as they would in the file;
  // the 257th level is the first one rejected, here and not later by the strict parser, whose
  // message would quote all 514 characters of the value.
  const std::string at_limit = std::string(256, '[') + std::string(256, ']');
  EXPECT_EQ(error_of([&] { parse_override("description=" + at_limit); }), "");
  EXPECT_TRUE(parse_override("description=" + at_limit).value.is_array());
  const std::string past_limit = "[" + at_limit + "]";
  EXPECT_EQ(error_of([&] { parse_override("description=" + past_limit); }),
            "--set \"description=[[[[[[[[[[[[[[[[[[[[[[[[[[...\": expected a value nested at "
            "most 256 levels deep");
}

TEST(OverrideTest, TheDeleteCharacterIsRejectedAsAControlCharacter) {
  // 0x7f (DEL) is valid UTF-8 but a control character, as the bytes below 0x20 are: refused
  // like them, not taken silently into a value such as a process name.
  EXPECT_EQ(error_of([] {
              parse_override(
                  "clients.0.process=a\x7f"
                  "b");
            }),
            "--set \"clients.0.process=a\x7f"
            "b\": expected KEY=VALUE as UTF-8 text without "
            "control characters");
}

TEST(OverrideTest, PathsWalkObjectsAndArraysAndCreateMissingKeys) {
  // Existing values are replaced, array elements are addressed by index, missing object keys
  // (and objects on the way) are created for the strict parser to judge.
  nlohmann::json doc = {{"clients", {{{"iterations", 10}}}}};
  apply_overrides(
      doc, {parse_override("clients.0.iterations=5"), parse_override("kernel.placement=mainline")});
  EXPECT_EQ(doc["clients"][0]["iterations"], 5);
  EXPECT_EQ(doc["kernel"]["placement"], "mainline");
}

TEST(OverrideTest, StarAppliesTheRestOfThePathToEveryArrayElement) {
  // clients.*.iterations sets every client's iterations; other keys are untouched.
  nlohmann::json doc = {{"clients", {{{"iterations", 10}, {"name", "a"}}, {{"iterations", 20}}}}};
  apply_overrides(doc, {parse_override("clients.*.iterations=5")});
  EXPECT_EQ(doc["clients"][0]["iterations"], 5);
  EXPECT_EQ(doc["clients"][1]["iterations"], 5);
  EXPECT_EQ(doc["clients"][0]["name"], "a");
  // "*" as the last part replaces each element.
  nlohmann::json list = {{"xs", {1, 2, 3}}};
  apply_overrides(list, {parse_override("xs.*=0")});
  EXPECT_EQ(list["xs"], nlohmann::json({0, 0, 0}));
}

TEST(OverrideTest, BadIndicesAndScalarsOnThePathAreErrors) {
  nlohmann::json doc = {{"clients", {{{"iterations", 10}}}}, {"seed", 1}};
  EXPECT_EQ(error_of([&] { apply_overrides(doc, {parse_override("clients.1.iterations=5")}); }),
            "--set clients.1.iterations=5: \"1\" is not an index of the 1-element array "
            "\"clients\" (or * for every element)");
  EXPECT_EQ(error_of([&] { apply_overrides(doc, {parse_override("seed.x=5")}); }),
            "--set seed.x=5: \"x\" is below a value that is neither an object nor an array");
  // One spelling per element: "00" would alias "0" past the checks that a path is set once.
  EXPECT_EQ(error_of([&] { apply_overrides(doc, {parse_override("clients.00.iterations=5")}); }),
            "--set clients.00.iterations=5: \"00\" is not an index of the 1-element array "
            "\"clients\" (or * for every element)");
  apply_overrides(doc, {parse_override("clients.0.iterations=5")});
  EXPECT_EQ(doc["clients"][0]["iterations"], 5);
}

TEST(OverrideTest, StarOrIndexAfterAMissingKeyNamesWhereItIsMissing) {
  // The second process has no "nodes": the * after it does not create an object that the
  // parser then calls "not an array", nor is the process skipped.
  nlohmann::json doc = {{"processes", {{{"nodes", {{{"min_nice", 5}}}}}, {{"name", "b"}}}}};
  EXPECT_EQ(
      error_of([&] { apply_overrides(doc, {parse_override("processes.*.nodes.*.min_nice=0")}); }),
      "--set processes.*.nodes.*.min_nice=0: processes.1 has no \"nodes\", so \"*\" after "
      "\"nodes\" addresses no element");
  EXPECT_EQ(
      error_of([&] { apply_overrides(doc, {parse_override("processes.1.nodes.0.min_nice=0")}); }),
      "--set processes.1.nodes.0.min_nice=0: processes.1 has no \"nodes\", so \"0\" after "
      "\"nodes\" addresses no element");
  EXPECT_EQ(error_of([&] { apply_overrides(doc, {parse_override("nosuch.*=1")}); }),
            "--set nosuch.*=1: the scenario has no \"nosuch\", so \"*\" after \"nosuch\" "
            "addresses no element");
  // Below a key the --set would create, the first missing key is named.
  EXPECT_EQ(error_of([&] { apply_overrides(doc, {parse_override("foo.bar.0=1")}); }),
            "--set foo.bar.0=1: the scenario has no \"foo\", so \"0\" after \"bar\" addresses "
            "no element");
  // However many keys would be created on the way, it is still the first one that is named:
  // here "foo", not "foo.bar", the last key created before the index. (A fresh document: the
  // --set above left an empty "foo" behind before it failed.)
  nlohmann::json fresh = {{"seed", 1}};
  EXPECT_EQ(error_of([&] { apply_overrides(fresh, {parse_override("foo.bar.baz.0=1")}); }),
            "--set foo.bar.baz.0=1: the scenario has no \"foo\", so \"0\" after \"baz\" "
            "addresses no element");
  // An empty array has no element for "*" to reach: an error as a missing key is, not a
  // --set that silently changes nothing.
  nlohmann::json with_empty = {{"background", nlohmann::json::array()},
                               {"processes", {{{"nodes", nlohmann::json::array()}}}}};
  EXPECT_EQ(error_of([&] { apply_overrides(with_empty, {parse_override("background.*.x=5")}); }),
            "--set background.*.x=5: \"background\" is an empty array, so \"*\" addresses no "
            "element");
  EXPECT_EQ(error_of([&] { apply_overrides(with_empty, {parse_override("background.*=5")}); }),
            "--set background.*=5: \"background\" is an empty array, so \"*\" addresses no "
            "element");
  EXPECT_EQ(error_of([&] {
              apply_overrides(with_empty, {parse_override("processes.*.nodes.*.min_nice=0")});
            }),
            "--set processes.*.nodes.*.min_nice=0: \"processes.0.nodes\" is an empty array, so "
            "\"*\" addresses no element");
  nlohmann::json topology = {{"shared_caches", nlohmann::json::array()}};
  EXPECT_EQ(error_of([&] {
              apply_topology_overrides(topology,
                                       {parse_override("topology.shared_caches.*.size=1")});
            }),
            "--set topology.shared_caches.*.size=1: \"topology.shared_caches\" is an empty "
            "array, so \"*\" addresses no element");
  // Where every element has the key, * reaches every element below it.
  doc["processes"][1]["nodes"] = {{{"min_nice", 7}}, {{"min_nice", 8}}};
  apply_overrides(doc, {parse_override("processes.*.nodes.*.min_nice=0")});
  EXPECT_EQ(doc["processes"][1]["nodes"][1]["min_nice"], 0);
  EXPECT_EQ(doc["processes"][0]["nodes"][0]["min_nice"], 0);
  // A missing key before an object key is still created.
  apply_overrides(doc, {parse_override("processes.*.free_before_reply=true")});
  EXPECT_EQ(doc["processes"][1]["free_before_reply"], true);
}

// Two paths overlap when one override would change the value at the other: the same path, or
// one inside the other at a part boundary. A "*" is only a part: it does not match an index.
TEST(OverrideTest, PathsOverlapWhenOneHoldsTheOther) {
  EXPECT_TRUE(paths_overlap("kernel.selector", "kernel.selector"));
  EXPECT_TRUE(paths_overlap("kernel.selector_params.fifo", "kernel.selector_params"));
  EXPECT_TRUE(paths_overlap("kernel", "kernel.selector_params.fifo.x"));
  EXPECT_FALSE(paths_overlap("kernel.selector", "kernel.selector_params"));
  EXPECT_FALSE(paths_overlap("kernel.selector_params", "kernel.selector"));
  EXPECT_FALSE(paths_overlap("clients.*.iterations", "clients.0.iterations"));
  EXPECT_FALSE(paths_overlap("clients.1", "clients.10"));
  // Setting one sets the other only from the outside in.
  EXPECT_TRUE(path_sets("kernel", "kernel.selector"));
  EXPECT_TRUE(path_sets("kernel.selector", "kernel.selector"));
  EXPECT_FALSE(path_sets("kernel.selector.x", "kernel.selector"));
  EXPECT_FALSE(path_sets("kernel.selector_params", "kernel.selector"));
}

// "topology" names the topology; "topology.<path>" changes a value of the topology named. The one
// does not undo the other.
TEST(OverrideTest, TopologyPathsReachIntoTheTopologyDocument) {
  EXPECT_TRUE(is_topology_path("topology.costs.wakeup_ref_ns"));
  EXPECT_FALSE(is_topology_path("topology"));
  EXPECT_FALSE(is_topology_path("topologyx.y"));
  EXPECT_FALSE(is_topology_path("kernel.topology.x"));
  EXPECT_FALSE(paths_overlap("topology", "topology.costs.wakeup_ref_ns"));
  EXPECT_FALSE(paths_overlap("topology.costs", "topology"));
  EXPECT_TRUE(paths_overlap("topology.costs", "topology.costs.wakeup_ref_ns"));
  EXPECT_FALSE(paths_overlap("topology.costs.wakeup_ref_ns", "costs.wakeup_ref_ns"));

  // Each document takes its own overrides, in order, and leaves the other's alone.
  const std::vector<Override> overrides = {
      parse_override("topology=sm8850"), parse_override("topology.costs.wakeup_ref_ns=900"),
      parse_override("clients.0.iterations=5"), parse_override("topology.clusters.*.capacity=7"),
      parse_override("topology.costs.wakeup_ref_ns=950")};
  nlohmann::json scenario = {{"topology", "sa8155p"}, {"clients", {{{"iterations", 10}}}}};
  apply_overrides(scenario, overrides);
  EXPECT_EQ(scenario, nlohmann::json({{"topology", "sm8850"}, {"clients", {{{"iterations", 5}}}}}));
  nlohmann::json topology = {{"costs", {{"wakeup_ref_ns", 700}}},
                             {"clusters", {{{"capacity", 1}}, {{"capacity", 2}}}}};
  apply_topology_overrides(topology, overrides);
  EXPECT_EQ(topology, nlohmann::json({{"costs", {{"wakeup_ref_ns", 950}}},
                                      {"clusters", {{{"capacity", 7}}, {{"capacity", 7}}}}}));

  // Messages name the path as given, "topology." included.
  EXPECT_EQ(error_of([&] {
              apply_topology_overrides(topology, {parse_override("topology.clusters.2.x=1")});
            }),
            "--set topology.clusters.2.x=1: \"2\" is not an index of the 2-element array "
            "\"topology.clusters\" (or * for every element)");
  EXPECT_EQ(error_of([&] {
              apply_topology_overrides(topology, {parse_override("topology.nosuch.0=1")});
            }),
            "--set topology.nosuch.0=1: topology has no \"nosuch\", so \"0\" after \"nosuch\" "
            "addresses no element");
}

TEST(OverrideTest, OverriddenScenarioIsCheckedAsStrictlyAsTheFile) {
  // An override is parsed like the file itself: a misspelt key is an unknown key.
  selectors::SelectorRegistry registry;
  selectors::register_builtin_selectors(registry);
  const std::string path = kSourceDir + "/scenarios/schd-dbg.json";
  const Scenario scenario = load_scenario(path, kSourceDir + "/scenarios", registry,
                                          {parse_override("clients.0.iterations=7")});
  EXPECT_EQ(scenario.clients[0].iterations, 7);
  EXPECT_EQ(scenario.file, path);
  const std::string message = error_of([&] {
    load_scenario(path, kSourceDir + "/scenarios", registry,
                  {parse_override("clients.0.iteratons=7")});
  });
  EXPECT_EQ(message.rfind(path + " (with --set): /clients/0/iteratons: unknown key (did you mean "
                                 "\"iterations\"?)",
                          0),
            0u)
      << message;
}

// The scenario's topology is loaded with its overrides applied, checked as strictly as the file,
// and still identified by the file's own hash: the overrides are recorded beside it.
TEST(OverrideTest, TopologyOverridesApplyWhenTheScenarioLoadsItsTopology) {
  selectors::SelectorRegistry registry;
  selectors::register_builtin_selectors(registry);
  const std::string scenarios = kSourceDir + "/scenarios";
  const std::string topologies = kSourceDir + "/topologies";
  const auto load = [&](const std::vector<std::string>& sets) {
    std::vector<Override> overrides;
    for (const std::string& text : sets) overrides.push_back(parse_override(text));
    return load_topology(load_scenario("schd-dbg", scenarios, registry, overrides), topologies);
  };
  const topology::Topology shipped = load({});
  const topology::Topology changed =
      load({"topology.costs.wakeup_ref_ns=2500", "topology.memory.latency_ns=150.5"});
  EXPECT_NE(shipped.costs().wakeup_ref_ns, 2500);
  EXPECT_EQ(changed.costs().wakeup_ref_ns, 2500);
  EXPECT_EQ(changed.costs().context_switch_ref_ns, shipped.costs().context_switch_ref_ns);
  EXPECT_EQ(changed.document_hash(), shipped.document_hash());
  // The scenario's choice of topology comes first, whatever the order of the options.
  const topology::Topology other = load({"topology.costs.wakeup_ref_ns=2500", "topology=sm8850"});
  EXPECT_EQ(other.name(), "sm8850");
  EXPECT_EQ(other.costs().wakeup_ref_ns, 2500);

  const std::string file = topologies + "/sa8155p.json";
  const std::string misspelt = error_of([&] { load({"topology.costs.wakeup_refns=1"}); });
  EXPECT_EQ(misspelt.rfind(file + " (with --set): /costs/wakeup_refns: unknown key (did you mean "
                                  "\"wakeup_ref_ns\"?)",
                           0),
            0u)
      << misspelt;
  EXPECT_EQ(error_of([&] { load({"topology.costs.wakeup_ref_ns=-5"}); }),
            file +
                " (with --set): /costs/wakeup_ref_ns: expected an integer in [0, "
                "1000000000000], got -5");
}

// Overrides of topology values alone leave the scenario as its file has it: its errors name the
// file alone, and it records them all the same.
TEST(OverrideTest, TopologyOverridesAloneLeaveTheScenarioDocumentAsTheFileHasIt) {
  selectors::SelectorRegistry registry;
  selectors::register_builtin_selectors(registry);
  const std::string scenarios = kSourceDir + "/scenarios";
  const Scenario plain = load_scenario("schd-dbg", scenarios, registry);
  const std::vector<Override> overrides = {parse_override("topology.costs.wakeup_ref_ns=900")};
  const Scenario changed = load_scenario("schd-dbg", scenarios, registry, overrides);
  EXPECT_EQ(changed.file, plain.file);
  EXPECT_EQ(changed.document_hash, plain.document_hash);
  ASSERT_EQ(changed.overrides.size(), 1u);
  EXPECT_EQ(changed.overrides[0].path, "topology.costs.wakeup_ref_ns");

  const std::string broken = ::testing::TempDir() + "/unknown-kernel-key.json";
  {
    std::ifstream in(kSourceDir + "/scenarios/schd-dbg.json");
    nlohmann::json document = nlohmann::json::parse(in);
    document["kernel"]["bogus"] = 1;
    document["topology"] = kSourceDir + "/topologies/sa8155p.json";
    std::ofstream(broken) << document.dump();
  }
  const std::string message =
      error_of([&] { load_scenario(broken, scenarios, registry, overrides); });
  EXPECT_EQ(message.rfind(broken + ": /kernel/bogus: unknown key", 0), 0u) << message;
}

}  // namespace
}  // namespace bindersim::workload
