// Deterministic fuzzing of the input boundary. Every shipped scenario and topology, and a test
// scenario that uses every scenario feature at once (tests/data/scenarios/every-feature.json,
// where nested calls meet the options that lengthen kernel paths), is mutated a few hundred times
// with the project's own RNG: values replaced by another JSON type, zero, negative, huge or
// NaN-like values, keys deleted or added, arrays duplicated into or truncated, and (for scenarios)
// --set overrides. Each mutant goes through the loading path of `bindersim run`. It must either
// load and then run a scaled-down simulation to the end, or fail with a one-line ConfigError naming
// the file and a JSON pointer. Each mutant runs in a child process, so that a crash, a failed
// invariant check or a hang is reported with its mutations.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bindersim/common/error.hpp"
#include "bindersim/common/json_reader.hpp"
#include "bindersim/engine/rng.hpp"
#include "bindersim/selectors/registry.hpp"
#include "bindersim/sim/simulation.hpp"
#include "bindersim/topology/topology.hpp"
#include "bindersim/workload/overrides.hpp"
#include "bindersim/workload/scenario.hpp"

namespace bindersim {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using Pointer = Json::json_pointer;

const fs::path kSourceDir = BINDERSIM_SOURCE_DIR;
const fs::path kScenariosDir = kSourceDir / "scenarios";
const fs::path kTopologiesDir = kSourceDir / "topologies";

// The mutants are the same on every run; BINDERSIM_FUZZ_SEED=N explores other ones.
constexpr std::uint64_t kFuzzSeed = 0xf022;
constexpr int kMutantsPerFile = 250;
// The runs of mutants that load are scaled down to keep the whole test within seconds.
constexpr std::int64_t kMaxIterations = 20;                 // per client
constexpr engine::SimTime kMaxSimulatedNs = 1'000'000'000;  // 1 s of simulated time
// A child that takes longer than this (wall clock) is reported as a hang.
constexpr unsigned kTimeoutSeconds = 20;
// Failures reported in full per file; the rest are only counted.
constexpr int kMaxReportedFailures = 15;

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

// Every pointer in `value`, the root ("") included, in document order.
void collect_pointers(const Json& value, const Pointer& at, std::vector<Pointer>& out) {
  out.push_back(at);
  if (value.is_object()) {
    for (const auto& [key, child] : value.items()) collect_pointers(child, at / key, out);
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) collect_pointers(value[i], at / i, out);
  }
}

// One of `pointers` for which `eligible` holds, chosen uniformly; nullopt when there is none.
std::optional<Pointer> pick_pointer(
    const Json& document, const std::vector<Pointer>& pointers, engine::Rng& rng,
    const std::function<bool(const Pointer&, const Json&)>& eligible) {
  std::vector<const Pointer*> candidates;
  for (const Pointer& pointer : pointers) {
    if (eligible(pointer, document.at(pointer))) candidates.push_back(&pointer);
  }
  if (candidates.empty()) return std::nullopt;
  return *candidates[rng.uniform_below(candidates.size())];
}

std::string show(const Pointer& pointer) {
  const std::string text = pointer.to_string();
  return text.empty() ? "/" : text;
}

// A number negated, moved by one, or scaled by a power of two: values just past a bound, or far
// beyond it.
Json nudged_number(const Json& value, engine::Rng& rng) {
  const double x = value.get<double>();
  switch (rng.uniform_below(4)) {
    case 0:
      return -x;
    case 1:
      return x * std::ldexp(1.0, static_cast<int>(1 + rng.uniform_below(62)));
    case 2:
      return x * std::ldexp(1.0, -static_cast<int>(1 + rng.uniform_below(20)));
    default: {
      // One up or down, kept an integer where it is one (and the step cannot overflow).
      const std::int64_t step = rng.bernoulli(0.5) ? 1 : -1;
      if (value.is_number_integer() && std::fabs(x) < 9e15) {
        return Json(static_cast<std::int64_t>(x) + step);
      }
      return Json(x + static_cast<double>(step));
    }
  }
}

// Applies one random mutation to `document`; returns what it did, e.g.
// "/clients/0/iterations: replaced by -1".
std::string mutate_once(Json& document, engine::Rng& rng) {
  std::vector<Pointer> pointers;
  collect_pointers(document, Pointer(), pointers);
  const auto any = [](const Pointer&, const Json&) { return true; };
  const auto has_parent = [](const Pointer& p, const Json&) { return !p.empty(); };
  switch (rng.uniform_below(8)) {
    case 0:
    case 1: {  // the most productive: a hostile value anywhere
      const Pointer at = *pick_pointer(document, pointers, rng, any);  // the root at least
      const Json& value = hostile_values()[rng.uniform_below(hostile_values().size())];
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
    case 4: {
      const auto at = pick_pointer(document, pointers, rng, has_parent);
      if (!at) return "nothing to delete";
      Json& parent = document[at->parent_pointer()];
      if (parent.is_object()) {
        parent.erase(at->back());
      } else {
        parent.erase(static_cast<std::size_t>(std::stoul(at->back())));
      }
      return show(*at) + ": deleted";
    }
    case 5: {
      const auto is_object = [](const Pointer&, const Json& v) { return v.is_object(); };
      const auto at = pick_pointer(document, pointers, rng, is_object);
      if (!at) return "no object to add a key to";
      document[*at]["fuzz_unknown_key"] = 1;
      return show(*at) + ": unknown key added";
    }
    case 6: {
      const auto non_empty_array = [](const Pointer&, const Json& v) {
        return v.is_array() && !v.empty();
      };
      if (const auto at = pick_pointer(document, pointers, rng, non_empty_array)) {
        Json& array = document[*at];
        const std::size_t from = rng.uniform_below(array.size());
        const std::size_t copies = 1 + rng.uniform_below(3);
        const Json element = array[from];
        for (std::size_t i = 0; i < copies; ++i) {
          array.insert(array.begin() + static_cast<std::ptrdiff_t>(from), element);
        }
        return show(*at) + ": element " + std::to_string(from) + " duplicated " +
               std::to_string(copies) + " times";
      }
      return "no array to duplicate into";
    }
    default: {
      const auto non_empty_array = [](const Pointer&, const Json& v) {
        return v.is_array() && !v.empty();
      };
      if (const auto at = pick_pointer(document, pointers, rng, non_empty_array)) {
        Json& array = document[*at];
        const std::size_t size = rng.uniform_below(array.size());
        array.erase(array.begin() + static_cast<std::ptrdiff_t>(size), array.end());
        return show(*at) + ": truncated to " + std::to_string(size) + " elements";
      }
      return "no array to truncate";
    }
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

// How a mutant fared in its child process.
struct Outcome {
  enum class Kind { kRan, kConfigError, kOtherException, kCrashed, kHung };
  Kind kind = Kind::kCrashed;
  std::string message;  // the exception's text, or the signal
};

// Runs `body` in a child process and reports how it ended. `body` returns normally (kRan) or
// throws; the child reports through a pipe and exits without running the parent's handlers.
Outcome run_isolated(const std::function<void()>& body) {
  int fds[2];
  if (pipe(fds) != 0) return {Outcome::Kind::kCrashed, "pipe() failed"};
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return {Outcome::Kind::kCrashed, "fork() failed"};
  if (pid == 0) {
    close(fds[0]);
    alarm(kTimeoutSeconds);
    char kind = 'R';
    std::string message;
    try {
      body();
    } catch (const ConfigError& error) {
      kind = 'C';
      message = error.what();
    } catch (const std::exception& error) {
      kind = 'E';
      message = error.what();
    } catch (...) {
      kind = 'E';
      message = "an exception that is not a std::exception";
    }
    message.insert(message.begin(), kind);
    std::size_t written = 0;
    while (written < message.size()) {
      const ssize_t n = write(fds[1], message.data() + written, message.size() - written);
      if (n <= 0) break;
      written += static_cast<std::size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string report;
  char buffer[4096];
  while (true) {
    const ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    report.append(buffer, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    if (WTERMSIG(status) == SIGALRM) {
      return {Outcome::Kind::kHung, "no result after " + std::to_string(kTimeoutSeconds) + " s"};
    }
    return {Outcome::Kind::kCrashed, "killed by signal " + std::to_string(WTERMSIG(status))};
  }
  if (report.empty()) return {Outcome::Kind::kCrashed, "exited without a report"};
  const std::string message = report.substr(1);
  switch (report[0]) {
    case 'R':
      return {Outcome::Kind::kRan, ""};
    case 'C':
      return {Outcome::Kind::kConfigError, message};
    default:
      return {Outcome::Kind::kOtherException, message};
  }
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

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

std::uint64_t fuzz_seed() {
  const char* text = std::getenv("BINDERSIM_FUZZ_SEED");
  return text != nullptr && *text != '\0' ? std::strtoull(text, nullptr, 0) : kFuzzSeed;
}

// A stream id per file name (FNV-1a), so that adding a file leaves the others' mutants alone.
std::uint64_t stream_of(const std::string& name) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char c : name) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return hash;
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
      case Outcome::Kind::kRan:
        ++ran_;
        return;
      case Outcome::Kind::kConfigError:
        ++rejected_;
        if (acceptable_error(outcome.message, files)) return;
        problem = "unclear ConfigError: " + outcome.message;
        break;
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
  const std::uint64_t seed = fuzz_seed();
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
    if (is_scenario && rng.bernoulli(0.15)) {
      set_texts.push_back(random_override_text(mutant, rng));
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
      check(host_file, {}, {file.string(), host_file.string()}, description);
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

// "scenarios/schd-dbg.json" -> "scenarios_schd_dbg_json": a test name gtest accepts.
std::string test_name(const ::testing::TestParamInfo<std::string>& param) {
  std::string name = param.param;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Shipped, InputFuzzTest, ::testing::ValuesIn(subjects()), test_name);

}  // namespace
}  // namespace bindersim
