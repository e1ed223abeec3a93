// Deterministic fuzzing of the input boundary. Every shipped scenario and topology, and a test
// scenario that uses every scenario feature at once (tests/data/scenarios/every-feature.json,
// where nested calls meet the options that lengthen kernel paths), is mutated a few hundred times
// with the project's own RNG: values replaced by another JSON type, zero, negative, huge or
// NaN-like values, keys deleted or added, arrays duplicated into or truncated, and --set overrides
// (for a topology, topology.KEY paths given with a scenario that names it). Each mutant goes
// through the loading path of `bindersim run`. It must either load and then run a scaled-down
// simulation to the end, or fail with a one-line ConfigError naming the file and a JSON pointer.
// Each mutant runs in a child process, so that a crash, a failed invariant check or a hang is
// reported with its mutations.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bindersim/common/error.hpp"
#include "bindersim/common/json_reader.hpp"
#include "bindersim/engine/rng.hpp"
#include "bindersim/selectors/registry.hpp"
#include "bindersim/sim/simulation.hpp"
#include "bindersim/topology/topology.hpp"
#include "bindersim/workload/overrides.hpp"
#include "bindersim/workload/scenario.hpp"
#include "fuzz_support.hpp"

namespace bindersim {
namespace {

using namespace testing::fuzz;
namespace fs = std::filesystem;

const fs::path kSourceDir = BINDERSIM_SOURCE_DIR;
const fs::path kScenariosDir = kSourceDir / "scenarios";
const fs::path kTopologiesDir = kSourceDir / "topologies";

// The mutants are the same on every run; BINDERSIM_FUZZ_SEED=N explores other ones.
constexpr std::uint64_t kFuzzSeed = 0xf022;
constexpr int kMutantsPerFile = 250;
// The runs of mutants that load are scaled down to keep the whole test within seconds.
constexpr std::int64_t kMaxIterations = 20;                 // per client
constexpr engine::SimTime kMaxSimulatedNs = 1'000'000'000;  // 1 s of simulated time

// Values a mutation puts in place of another: other JSON types, zero, negative and huge
// numbers (beyond int64 and double-exact integers), NaN-like strings, empty containers, and
// strings that are awkward to quote in a message.
const std::vector<Json>& hostile_values() {
  static const std::vector<Json> values = [] {
    std::vector<Json> out = Json::parse(R"([
        "fuzz", true, false, null, 0, 0.5, -1, -0.5, -1e9, -9223372036854775808, 1e300, -1e300,
        9223372036854775807, 9223372036854775808, 18446744073709551615, 9007199254740993,
        4294967296, 2147483648, "NaN", "Infinity", "-inf", "1e999", "", [], {}, [0], [[]],
        {"uniform": [5, 1]}, {"exponential_mean": -1}, "line\nbreak", "d\u00e9j\u00e0"])")
                                .get<std::vector<Json>>();
    out.push_back(std::string(100'000, 'x'));
    return out;
  }();
  return values;
}

// Applies one random mutation to `document`; returns what it did, e.g.
// "/clients/0/iterations: replaced by -1".
std::string mutate_once(Json& document, engine::Rng& rng) {
  std::vector<Pointer> pointers;
  collect_pointers(document, Pointer(), pointers);
  const auto any = [](const Pointer&, const Json&) { return true; };
  switch (rng.uniform_below(8)) {
    case 0:
    case 1: {  // the most productive: a hostile value anywhere
      const Pointer at = *pick_pointer(document, pointers, rng, any);  // the root at least
      const Json& value = pick(hostile_values(), rng);
      document[at] = value;
      return show(at) + ": replaced by " + describe_json(value);
    }
    case 2: {
      const auto is_number = [](const Pointer&, const Json& v) { return v.is_number(); };
      if (const auto at = pick_pointer(document, pointers, rng, is_number)) {
        document[*at] = nudged_number(document[*at], rng);
        return show(*at) + ": number changed to " + describe_json(document[*at]);
      }
      return "no number to change";
    }
    case 3: {  // a value from elsewhere: names of other processes, nodes, clusters, ...
      const Pointer from = *pick_pointer(document, pointers, rng, any);
      const Pointer to = *pick_pointer(document, pointers, rng, any);
      const Json value = document[from];
      document[to] = value;
      return show(to) + ": replaced by the value at " + show(from);
    }
    case 4:
      return delete_one(document, pointers, rng);
    case 5: {
      const auto is_object = [](const Pointer&, const Json& v) { return v.is_object(); };
      const auto at = pick_pointer(document, pointers, rng, is_object);
      if (!at) return "no object to add a key to";
      document[*at]["fuzz_unknown_key"] = 1;
      return show(*at) + ": unknown key added";
    }
    case 6:
      return duplicate_element(document, pointers, rng);
    default:
      return truncate_array(document, pointers, rng);
  }
}

// A random --set: a dotted path into the document (or a malformed one) and a hostile value.
std::string random_override_text(const Json& document, engine::Rng& rng) {
  static const auto kBadKeys = Json::parse(R"([
      "", ".", "a..b", "clients.", ".clients", "clients.-1.iterations",
      "clients.99999999999999999999.iterations", "clients.*.*", "*", "clients.0x1.iterations",
      "=", "kernel.placement.x", "processes.*.nodes.*.handler.*.ref_ns.*"])")
                                   .get<std::vector<std::string>>();
  static const auto kValues = [] {
    auto values = Json::parse(R"([
        "1", "-1", "0", "1e300", "9223372036854775808", "NaN", "abc", "\"abc\"", "[]", "{}",
        "null", "true", "", "{", "[1,", "\"unterminated", "ctabs", "mainline", "[\"server\"]",
        "{\"uniform\": [1, 2]}", "=", "1=2", "line\nbreak"])")
                      .get<std::vector<std::string>>();
    values.push_back("\xff");  // not UTF-8, as a command line may hold
    return values;
  }();
  std::string key;
  if (rng.bernoulli(0.3)) {
    key = kBadKeys[rng.uniform_below(kBadKeys.size())];
  } else {
    std::vector<Pointer> pointers;
    collect_pointers(document, Pointer(), pointers);
    const Pointer& at = pointers[1 + rng.uniform_below(pointers.size() - 1)];
    std::string dotted = at.to_string();
    std::replace(dotted.begin(), dotted.end(), '/', '.');
    key = dotted.substr(1);
    if (rng.bernoulli(0.2)) {  // every element of an array on the way
      const std::size_t dot = key.find(".0");
      if (dot != std::string::npos) key.replace(dot, 2, ".*");
    }
  }
  if (rng.bernoulli(0.05)) return key;  // no '=' at all
  return key + "=" + kValues[rng.uniform_below(kValues.size())];
}

// What `bindersim run FILE [--set ...]` does up to its output, on a scaled-down run.
void load_and_run(const fs::path& scenario_file, const std::vector<std::string>& set_texts) {
  selectors::SelectorRegistry registry;
  selectors::register_builtin_selectors(registry);
  std::vector<workload::Override> overrides;
  for (const std::string& text : set_texts) overrides.push_back(workload::parse_override(text));
  workload::Scenario scenario =
      workload::load_scenario(scenario_file.string(), kScenariosDir, registry, overrides);
  const topology::Topology topology = workload::load_topology(scenario, kTopologiesDir);
  for (workload::ClientSpec& client : scenario.clients) {
    client.iterations = std::min(client.iterations, kMaxIterations);
  }
  scenario.time_limit_ns = std::min(scenario.time_limit_ns, kMaxSimulatedNs);
  sim::run(scenario, topology, registry, sim::RunOptions{});
}

// A ConfigError is acceptable when it is one short line that starts with one of `files` and a
// JSON pointer, or with "--set " for a bad override.
bool acceptable_error(const std::string& message, const std::vector<std::string>& files) {
  // Long enough for a list of valid names, short enough that a huge value was not quoted whole.
  constexpr std::size_t kMaxMessageChars = 1000;
  if (message.find('\n') != std::string::npos || message.size() > kMaxMessageChars) return false;
  if (message.starts_with("--set ")) return true;
  for (const std::string& file : files) {
    for (const std::string& origin : {file + ": /", file + " (with --set): /"}) {
      if (message.starts_with(origin)) return true;
    }
  }
  return false;
}

// The shipped files of one directory, sorted by name.
std::vector<std::string> shipped_files(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".json") out.push_back(entry.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// One fuzzed file: `subject` is "scenarios/x.json" or "topologies/x.json".
class InputFuzzTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    work_dir_ =
        fs::temp_directory_path() /
        ("bindersim-fuzz-" + std::to_string(getpid()) + "-" + fs::path(GetParam()).stem().string() +
         "-" + fs::path(GetParam()).parent_path().filename().string());
    fs::create_directories(work_dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(work_dir_, ignored);
  }

  // Checks one mutant: `scenario_file` is loaded with `set_texts`; a ConfigError must name one
  // of `files`. Failures are recorded with `description`.
  void check(const fs::path& scenario_file, const std::vector<std::string>& set_texts,
             const std::vector<std::string>& files, const std::string& description) {
    const Outcome outcome = run_isolated([&] { load_and_run(scenario_file, set_texts); });
    std::string problem;
    switch (outcome.kind) {
      case Outcome::Kind::kReturned:
        ++ran_;
        return;
      case Outcome::Kind::kConfigError:
        ++rejected_;
        if (acceptable_error(outcome.message, files)) return;
        problem = "unclear ConfigError: " + outcome.message;
        break;
      case Outcome::Kind::kProblem:  // not thrown by load_and_run
      case Outcome::Kind::kOtherException:
        problem = "exception other than ConfigError: " + outcome.message;
        break;
      case Outcome::Kind::kCrashed:
        problem = "crashed (" + outcome.message + "; see stderr for a failed check)";
        break;
      case Outcome::Kind::kHung:
        problem = "hung (" + outcome.message + ")";
        break;
    }
    if (++failures_ <= kMaxReportedFailures) {
      ADD_FAILURE() << GetParam() << " " << description << "\n  " << problem;
    }
  }

  void report() const {
    std::printf("%s: %d mutants ran, %d rejected with a ConfigError, %d failed\n",
                GetParam().c_str(), ran_, rejected_, failures_);
    EXPECT_EQ(failures_, 0) << (failures_ > kMaxReportedFailures
                                    ? "only the first failures are shown above"
                                    : "each failure is shown above");
  }

  fs::path work_dir_;
  int ran_ = 0;
  int rejected_ = 0;
  int failures_ = 0;
};

// The scenario a topology mutant is loaded by: the first shipped scenario that names it.
std::string host_scenario_of(const std::string& topology_stem) {
  for (const std::string& name : shipped_files(kScenariosDir)) {
    const Json scenario = Json::parse(read_text(kScenariosDir / name));
    if (scenario.at("topology") == topology_stem) return name;
  }
  return "";
}

TEST_P(InputFuzzTest, MutantsLoadAndRunOrFailWithOneClearLine) {
  const fs::path subject = GetParam();
  const bool is_scenario = subject.parent_path().filename() == "scenarios";
  const Json original = Json::parse(read_text(kSourceDir / subject));
  const std::uint64_t seed = fuzz_seed(kFuzzSeed);
  engine::Rng rng(seed, stream_of(subject.string()));

  // A topology mutant is loaded through a copy of a scenario that names it by path.
  fs::path host_file;
  if (!is_scenario) {
    const std::string host = host_scenario_of(subject.stem().string());
    ASSERT_FALSE(host.empty()) << "no shipped scenario uses " << subject;
    host_file = work_dir_ / ("host-" + host);
    Json host_value = Json::parse(read_text(kScenariosDir / host));
    host_value["topology"] = (work_dir_ / "topology.json").string();
    write_text(host_file, host_value.dump(1));
  }

  for (int index = 0; index < kMutantsPerFile; ++index) {
    Json mutant = original;
    std::vector<std::string> set_texts;
    std::string description =
        "seed " + std::to_string(seed) + " mutant " + std::to_string(index) + ":";
    if (rng.bernoulli(0.15)) {
      // A topology is changed through the host scenario's topology.KEY paths.
      set_texts.push_back((is_scenario ? "" : "topology.") + random_override_text(mutant, rng));
      description += " --set '" + set_texts.back() + "'";
    } else {
      const int mutations = rng.bernoulli(0.7) ? 1 : 2 + static_cast<int>(rng.uniform_below(2));
      for (int m = 0; m < mutations; ++m) description += " [" + mutate_once(mutant, rng) + "]";
    }
    if (is_scenario) {
      const fs::path file = work_dir_ / ("mutant-" + subject.filename().string());
      write_text(file, mutant.dump(1));
      check(file, set_texts, {file.string()}, description);
    } else {
      const fs::path file = work_dir_ / "topology.json";
      write_text(file, mutant.dump(1));
      check(host_file, set_texts, {file.string(), host_file.string()}, description);
    }
  }
  report();
}

std::vector<std::string> subjects() {
  std::vector<std::string> out;
  for (const std::string& name : shipped_files(kScenariosDir)) out.push_back("scenarios/" + name);
  for (const std::string& name : shipped_files(kTopologiesDir)) out.push_back("topologies/" + name);
  out.push_back("tests/data/scenarios/every-feature.json");
  return out;
}

INSTANTIATE_TEST_SUITE_P(Shipped, InputFuzzTest, ::testing::ValuesIn(subjects()), test_name);

}  // namespace
}  // namespace bindersim
