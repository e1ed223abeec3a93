// Sweep files and their expansion: cartesian order, run ids, strict errors, runs.jsonl lines.
#include "bindersim/sweep/sweep.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "bindersim/common/error.hpp"
#include "bindersim/common/hash.hpp"
#include "bindersim/common/json_reader.hpp"
#include "bindersim/selectors/registry.hpp"
#include "bindersim/workload/scenario.hpp"

namespace bindersim::sweep {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kScenario = std::string(BINDERSIM_TEST_DATA_DIR) + "/scenarios/minimal.json";

class SweepTest : public ::testing::Test {
 protected:
  SweepTest() { selectors::register_builtin_selectors(registry_); }

  // The sweep document `text` with "scenario" set to the minimal test scenario, parsed as if
  // read from "sweeps/test.json".
  Sweep parse(const std::string& text) const {
    json value = json::parse(text);
    if (!value.contains("scenario")) value["scenario"] = kScenario;
    const JsonDocument document = JsonDocument::from_value(value, "sweeps/test.json");
    return parse_sweep(document.root(), "sweeps/test.json");
  }
  std::vector<RunSpec> expand(const std::string& text) const {
    return expand_sweep(parse(text), registry_, dirs_);
  }
  // The message of the ConfigError that parsing and expanding `text` throws ("" if none).
  std::string error_of(const std::string& text) const {
    try {
      expand(text);
    } catch (const ConfigError& error) {
      return error.what();
    }
    return "";
  }

  selectors::SelectorRegistry registry_;
  DataDirs dirs_{fs::path(BINDERSIM_SOURCE_DIR) / "scenarios",
                 fs::path(BINDERSIM_SOURCE_DIR) / "topologies"};
};

// A run built by hand, its id computed from its fields.
RunSpec sample_run() {
  RunSpec run;
  run.index = 3;
  run.sweep = "demo";
  run.scenario = "schd-dbg";
  run.scenario_hash = "0123456789abcdef";
  run.axes = {{"payload", 16}};
  run.overrides = {{"clients.0.iterations", 100}, {"clients.0.iteration.2.payload_bytes", 16}};
  run.selector = "ctabs";
  run.placement = "mainline";
  run.seed = 2;
  run.run_id = run_id_of(run);
  return run;
}

TEST_F(SweepTest, ExpandsAxesThenSelectorsThenSeedsInFileOrder) {
  // Two axes (3 x 2 values), two selectors, two seeds: 24 runs, the first axis outermost and
  // the seed innermost; each run applies the fixed overrides, then one per axis key.
  const auto runs = expand(R"({
    "schema": "bindersim.sweep/1", "name": "order",
    "set": {"time_limit_s": 5},
    "axes": [
      {"key": "clients.0.iterations", "values": [3, 1, 2]},
      {"name": "pi", "keys": ["kernel.priority_inheritance"], "values": ["upstream", "android"]}
    ],
    "selectors": ["ctabs", "fifo"],
    "seeds": [7, 5]
  })");
  ASSERT_EQ(runs.size(), 24u);
  // Without "placement", every run takes the scenario's own.
  const std::string own_placement =
      workload::load_scenario(kScenario, dirs_.scenarios, registry_).kernel.placement;
  std::size_t i = 0;
  for (const int iterations : {3, 1, 2}) {
    for (const char* pi : {"upstream", "android"}) {
      for (const char* selector : {"ctabs", "fifo"}) {
        for (const std::uint64_t seed : {7u, 5u}) {
          const RunSpec& run = runs[i];
          EXPECT_EQ(run.index, i);
          EXPECT_EQ(run.axes,
                    (std::vector<NamedValue>{{"clients.0.iterations", iterations}, {"pi", pi}}));
          EXPECT_EQ(run.overrides, (std::vector<NamedValue>{{"time_limit_s", 5},
                                                            {"clients.0.iterations", iterations},
                                                            {"kernel.priority_inheritance", pi}}));
          EXPECT_EQ(run.selector, selector);
          EXPECT_EQ(run.seed, seed);
          EXPECT_EQ(run.placement, own_placement);
          EXPECT_EQ(run.sweep, "order");
          EXPECT_EQ(run.scenario, kScenario);
          ++i;
        }
      }
    }
  }
}

TEST_F(SweepTest, SeedCountStartsAtOneAndSelectorsDefaultToTheScenarios) {
  // "seeds": 3 means seeds 1, 2, 3; without "selectors" every run takes the selector of its
  // scenario, here set by an axis.
  const auto runs = expand(R"({
    "schema": "bindersim.sweep/1", "name": "defaults",
    "axes": [{"key": "kernel.selector", "values": ["ctabs-nudge", "fifo"]}],
    "seeds": 3
  })");
  ASSERT_EQ(runs.size(), 6u);
  const std::vector<std::string> selectors = {"ctabs-nudge", "ctabs-nudge", "ctabs-nudge",
                                              "fifo",        "fifo",        "fifo"};
  for (std::size_t i = 0; i < runs.size(); ++i) {
    EXPECT_EQ(runs[i].seed, i % 3 + 1);
    EXPECT_EQ(runs[i].selector, selectors[i]);
  }
}

TEST_F(SweepTest, AnAxisOfSeveralKeysSetsEachOfThemToTheSameValue) {
  // One value, two paths: both overrides carry it; the sweep's placement is every run's.
  const auto runs = expand(R"({
    "schema": "bindersim.sweep/1", "name": "multi",
    "axes": [{"name": "both", "keys": ["clients.0.iterations", "processes.1.max_threads"],
              "values": [4]}],
    "placement": "mainline",
    "seeds": [1]
  })");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].axes, (std::vector<NamedValue>{{"both", 4}}));
  EXPECT_EQ(runs[0].placement, "mainline");  // the sweep's placement
  EXPECT_EQ(runs[0].overrides,
            (std::vector<NamedValue>{{"clients.0.iterations", 4}, {"processes.1.max_threads", 4}}));
}

TEST_F(SweepTest, ARelativeScenarioPathIsTakenFromTheSweepFilesDirectory) {
  // "../scenarios/x.json" in sweeps/test.json names scenarios/x.json; a bare name stays a name.
  EXPECT_EQ(parse(R"({"schema": "bindersim.sweep/1", "name": "n", "seeds": 1,
                      "scenario": "../scenarios/x.json"})")
                .scenario,
            "scenarios/x.json");
  EXPECT_EQ(parse(R"({"schema": "bindersim.sweep/1", "name": "n", "seeds": 1,
                      "scenario": "schd-dbg"})")
                .scenario,
            "schd-dbg");
}

TEST(RunIdTest, IsTheFnv1aOfTheDocumentedCanonicalIdentity) {
  // The identity is the sorted-key JSON of overrides, placement, scenario hash, seed and
  // selector, written without spaces (docs/sweep-format.md); the id is its FNV-1a in hex.
  const RunSpec run = sample_run();
  const std::string expected_identity =
      R"({"overrides":[["clients.0.iterations",100],["clients.0.iteration.2.payload_bytes",16]],)"
      R"("placement":"mainline","scenario":"0123456789abcdef","seed":2,"selector":"ctabs"})";
  EXPECT_EQ(identity_json(run), expected_identity);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(fnv1a64(expected_identity)));
  EXPECT_EQ(run.run_id, hex);
}

TEST(RunIdTest, ChangesWithEveryFieldOfTheIdentity) {
  // Each identity field, changed on its own, gives another id.
  const RunSpec base = sample_run();
  std::vector<RunSpec> variants(7, base);
  variants[0].scenario_hash = "0123456789abcdee";
  variants[1].overrides[0].second = 101;
  variants[2].overrides[1].first = "clients.0.iteration.0.steps.1.payload_bytes";
  std::swap(variants[3].overrides[0], variants[3].overrides[1]);  // order of application
  variants[4].selector = "ctabs-nudge";
  variants[5].placement = "gki";
  variants[6].seed = 3;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    EXPECT_NE(run_id_of(variants[i]), base.run_id) << "variant " << i;
  }
}

TEST(RunIdTest, IgnoresPresentationFields) {
  // Index, sweep name, scenario reference and axis names do not change what runs.
  RunSpec other = sample_run();
  other.index = 40;
  other.sweep = "renamed";
  other.scenario = "scenarios/schd-dbg.json";
  other.axes = {{"payload_bytes", 16}};
  EXPECT_EQ(run_id_of(other), sample_run().run_id);
}

TEST_F(SweepTest, RunIdsAreStableAcrossExpansionsAndScenarioFormatting) {
  // The same sweep expanded twice gives the same ids, all distinct; a copy of the scenario
  // with other whitespace and key order has the same hash, so the same ids.
  const std::string sweep = R"({
    "schema": "bindersim.sweep/1", "name": "stable",
    "axes": [{"key": "clients.0.iterations", "values": [1, 2]}],
    "selectors": ["fifo", "ctabs"], "seeds": 2
  })";
  const auto first = expand(sweep);
  const auto second = expand(sweep);
  ASSERT_EQ(first.size(), 8u);
  std::set<std::string> ids;
  for (std::size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].run_id, second[i].run_id);
    EXPECT_EQ(first[i].run_id.size(), 16u);
    ids.insert(first[i].run_id);
  }
  EXPECT_EQ(ids.size(), first.size());

  const fs::path copy = fs::temp_directory_path() / "bindersim-sweep-test-scenario.json";
  {
    std::ofstream out(copy);
    out << JsonDocument::parse_file(kScenario).value().dump(7);  // other indent, sorted keys
  }
  json value = json::parse(sweep);
  value["scenario"] = copy.string();
  const auto reformatted = expand(value.dump());
  fs::remove(copy);
  ASSERT_EQ(reformatted.size(), first.size());
  for (std::size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(reformatted[i].run_id, first[i].run_id);
  }
}

TEST_F(SweepTest, ErrorsNameTheFileAndThePointer) {
  // Each bad sweep gives one ConfigError naming sweeps/test.json, the JSON pointer of the part
  // at fault and what is wrong.
  struct Case {
    const char* sweep;
    const char* message;
  };
  const Case cases[] = {
      {R"({"schema": "bindersim.sweep/2", "name": "x", "seeds": 1})",
       R"(sweeps/test.json: /schema: expected "bindersim.sweep/1")"},
      {R"({"schema": "bindersim.sweep/1", "name": "x", "seeds": 1, "axis": []})",
       R"(sweeps/test.json: /axis: unknown key (did you mean "axes"?))"},
      {R"({"schema": "bindersim.sweep/1", "name": "x"})",
       R"(sweeps/test.json: /: missing required key "seeds")"},
      {"{\"schema\": \"bindersim.sweep/1\", \"name\": \"a\\nb\", \"seeds\": 1}",
       "sweeps/test.json: /name: expected a name without control characters, got \"a\\nb\""},
      {R"({"schema": "bindersim.sweep/1", "name": "x", "seeds": 1,
           "axes": [{"name": "n\t", "key": "clients.0.iterations", "values": [1]}]})",
       "sweeps/test.json: /axes/0/name: expected a name without control characters, got "
       "\"n\\t\""},
      {R"({"schema": "bindersim.sweep/1", "name": "x", "seeds": 0})",
       "sweeps/test.json: /seeds: expected an integer in [1, 1000000], got 0"},
      {R"({"schema": "bindersim.sweep/1", "name": "x", "seeds": [1, 2, 1]})",
       "sweeps/test.json: /seeds/2: seed 1 given twice"},
      {R"({"schema": "bindersim.sweep/1", "name": "x", "seeds": [1, -2]})",
       "sweeps/test.json: /seeds/1: expected an integer in [0, 18446744073709551615], got -2"},
      {R"({"schema": "bindersim.sweep/1", "name": "x", "seeds": 1,
           "axes": [{"key": "clients.0.iterations", "values": [1, 2, 1]}]})",
       "sweeps/test.json: /axes/0/values/2: value 1 given twice"},
      {R"({"schema": "bindersim.sweep/1", "name": "x", "seeds": 1,
           "axes": [{"key": "clients.0.iterations", "values": []}]})",
       "sweeps/test.json: /axes/0/values: expected a non-empty array of values"},
      {R"({"schema": "bindersim.sweep/1", "name": "x", "seeds": 1,
           "axes": [{"key": "a", "keys": ["b"], "values": [1]}]})",
       "sweeps/test.json: /axes/0: give \"key\" or \"keys\", not both"},
      {R"({"schema": "bindersim.sweep/1", "name": "x", "seeds": 1,
           "axes": [{"keys": ["a", "b"], "values": [1]}]})",
       "sweeps/test.json: /axes/0: missing required key \"name\""},
      {R"({"schema": "bindersim.sweep/1", "name": "x", "seeds": 1,
           "axes": [{"key": "seed", "values": [1, 2]}]})",
       "sweeps/test.json: /axes/0/key: seeds are chosen by \"seeds\""},
      {R"({"schema": "bindersim.sweep/1", "name": "x", "seeds": 1,
           "set": {"clients.0.iterations": 2},
           "axes": [{"key": "clients.0.iterations", "values": [1, 2]}]})",
       "sweeps/test.json: /axes/0/key: \"clients.0.iterations\" is already set at "
       "/set/clients.0.iterations"},
      {R"({"schema": "bindersim.sweep/1", "name": "x", "seeds": 1,
           "set": {"kernel.selector_params.ctabs-nudge.check_caller_idle": false},
           "axes": [{"key": "kernel.selector_params.ctabs-nudge", "values": [{}]}]})",
       "sweeps/test.json: /axes/0/key: \"kernel.selector_params.ctabs-nudge\" overlaps "
       "\"kernel.selector_params.ctabs-nudge.check_caller_idle\", set at "
       "/set/kernel.selector_params.ctabs-nudge.check_caller_idle: the later would undo the "
       "earlier"},
      {R"({"schema": "bindersim.sweep/1", "name": "x", "seeds": 1, "selectors": ["fifo"],
           "axes": [{"key": "kernel.selector", "values": ["ctabs"]}]})",
       "sweeps/test.json: /axes/0/key: \"kernel.selector\" is chosen by \"selectors\""},
      {R"({"schema": "bindersim.sweep/1", "name": "x", "seeds": 1, "placement": "gki",
           "set": {"kernel": {"placement": "walt"}}})",
       "sweeps/test.json: /set/kernel: \"kernel\" holds \"kernel.placement\", which is chosen by "
       "\"placement\""},
      {R"({"schema": "bindersim.sweep/1", "name": "x", "seeds": 1,
           "selectors": ["fifo", "nosuch"]})",
       "sweeps/test.json: /selectors/1: unknown selector"},
      {R"({"schema": "bindersim.sweep/1", "name": "x", "seeds": 1, "placement": "nosuch"})",
       "sweeps/test.json: /placement: "},
      {R"({"schema": "bindersim.sweep/1", "name": "x", "seeds": 1,
           "axes": [{"key": "kernel.priority_inheritance", "values": ["android", "bogus"]}]})",
       "sweeps/test.json: /axes/0/values/1: "},
      {R"({"schema": "bindersim.sweep/1", "name": "x", "seeds": 1,
           "axes": [{"key": "clients.7.iterations", "values": [1]}]})",
       "sweeps/test.json: /axes/0/values/0: clients.7.iterations=1: \"7\" is not an index"},
      {R"({"schema": "bindersim.sweep/1", "name": "x", "seeds": 1,
           "set": {"kernel.nosuch": 1}})",
       "sweeps/test.json: /set: "},
      {R"({"schema": "bindersim.sweep/1", "name": "x", "seeds": 1, "scenario": "nosuch"})",
       "sweeps/test.json: /scenario: unknown scenario \"nosuch\""},
      // The scenario at fault, not the set that comes with it.
      {R"({"schema": "bindersim.sweep/1", "name": "x", "seeds": 1, "scenario": "nosuch",
           "set": {"time_limit_s": 0.01}})",
       "sweeps/test.json: /scenario: unknown scenario \"nosuch\""},
  };
  for (const Case& c : cases) {
    const std::string message = error_of(c.sweep);
    EXPECT_NE(message.find(c.message), std::string::npos)
        << "sweep: " << c.sweep << "\nmessage: " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(RunLineTest, ReadsBackWhatItWrites) {
  // A runs.jsonl line is one line of JSON that parse_run reads back field for field.
  const RunSpec run = sample_run();
  const std::string line = run_line(run);
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  const JsonDocument document = JsonDocument::parse_text(line, "runs.jsonl:1");
  const RunSpec back = parse_run(document.root());
  EXPECT_EQ(back.index, run.index);
  EXPECT_EQ(back.run_id, run.run_id);
  EXPECT_EQ(back.sweep, run.sweep);
  EXPECT_EQ(back.scenario, run.scenario);
  EXPECT_EQ(back.scenario_hash, run.scenario_hash);
  EXPECT_EQ(back.axes, run.axes);
  EXPECT_EQ(back.overrides, run.overrides);
  EXPECT_EQ(back.selector, run.selector);
  EXPECT_EQ(back.placement, run.placement);
  EXPECT_EQ(back.seed, run.seed);
}

TEST_F(SweepTest, SeedsTakeTheWholeUnsignedRangeThroughTheRunsFile) {
  // The largest seed, as run --seed and scenarios take it, expands and reads back exactly.
  const auto runs = expand(R"({"schema": "bindersim.sweep/1", "name": "s",
                               "seeds": [18446744073709551615, 0]})");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].seed, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(runs[1].seed, 0u);
  const JsonDocument document = JsonDocument::parse_text(run_line(runs[0]), "runs.jsonl:1");
  EXPECT_EQ(parse_run(document.root()).seed, std::numeric_limits<std::uint64_t>::max());
}

TEST(RunLineTest, RejectsControlCharactersInTheSweepAndAxisNames) {
  // Names go into one-line output: as in a sweep file, a control character is refused.
  for (const auto& [field, pointer] :
       {std::pair{"sweep", "/sweep"}, std::pair{"axes", "/axes/0/0"}}) {
    json value = json::parse(run_line(sample_run()));
    if (std::string(field) == "sweep") {
      value["sweep"] = "a\nb";
    } else {
      value["axes"][0][0] = "a\nb";
    }
    const JsonDocument document = JsonDocument::from_value(value, "runs.jsonl:2");
    try {
      parse_run(document.root());
      FAIL() << "a name with a newline was accepted at " << pointer;
    } catch (const ConfigError& error) {
      EXPECT_EQ(std::string(error.what()),
                std::string("runs.jsonl:2: ") + pointer +
                    ": expected a name without control characters, got \"a\\nb\"");
    }
  }
}

TEST(RunLineTest, ValueLabelEscapesControlCharacters) {
  // An axis value goes into titles and progress lines as one line, without terminal escapes.
  EXPECT_EQ(value_label(json("x\ny\x1b[31m")), "x\\ny\\x1b[31m");
  EXPECT_EQ(value_label(json("plain")), "plain");
  EXPECT_EQ(value_label(json::array({1, "a\nb"})), "[1,\"a\\nb\"]");
}

TEST(RunLineTest, RejectsALineWhoseRunIdIsNotItsHash) {
  // An edited field no longer matches the run id: the line is refused, naming /run_id.
  json value = json::parse(run_line(sample_run()));
  value["seed"] = 9;
  const JsonDocument document = JsonDocument::from_value(value, "runs.jsonl:4");
  try {
    parse_run(document.root());
    FAIL() << "an edited run was accepted";
  } catch (const ConfigError& error) {
    EXPECT_NE(std::string(error.what()).find("runs.jsonl:4: /run_id: expected \""),
              std::string::npos)
        << error.what();
  }
}

TEST(RunLineTest, RunsFileRejectsRepeatedIndicesAndNamesTheLine) {
  // Two lines with index 3: the second is refused with its line number.
  const fs::path file = fs::temp_directory_path() / "bindersim-sweep-test-runs.jsonl";
  {
    std::ofstream out(file);
    out << run_line(sample_run()) << "\n" << run_line(sample_run());
  }
  try {
    read_runs_file(file);
    FAIL() << "a repeated index was accepted";
  } catch (const ConfigError& error) {
    EXPECT_NE(std::string(error.what())
                  .find(file.string() + ":3: /index: index 3 is also the "
                                        "index of line 1"),
              std::string::npos)
        << error.what();
  }
  fs::remove(file);
}

}  // namespace
}  // namespace bindersim::sweep
