// Test helper for the fuzz tests (tests/fuzz/*_fuzz_test.cpp): the pieces they share to mutate a
// JSON document with the project's own RNG, reproducibly, and to run each mutant in a child
// process:
// - Json and Pointer, collect_pointers(), pick_pointer(), pick(), show() and nudged_number();
// - delete_one(), duplicate_element() and truncate_array(), mutations both tests make;
// - fuzz_seed() and stream_of(), the seed and the stream of a file's mutants;
// - read_text() and write_text(), files as bytes;
// - Outcome, run_isolated() and FuzzProblem, how a mutant's run in a child process ended;
// - test_name(), kTimeoutSeconds and kMaxReportedFailures.
// What a test mutates and what it requires of a mutant (its hostile values, its errors) stays in
// its own file.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bindersim/common/error.hpp"
#include "bindersim/engine/rng.hpp"

namespace bindersim::testing::fuzz {

using Json = nlohmann::json;
using Pointer = Json::json_pointer;

// A child that takes longer than this (wall clock) is reported as a hang.
inline constexpr unsigned kTimeoutSeconds = 20;
// Failures reported in full per file; the rest are only counted.
inline constexpr int kMaxReportedFailures = 15;

// ---- mutations ----------------------------------------------------------------------------------

// Appends every pointer in `value` below `at` to `out`, `at` itself included, in document order.
inline void collect_pointers(const Json& value, const Pointer& at, std::vector<Pointer>& out) {
  out.push_back(at);
  if (value.is_object()) {
    for (const auto& [key, child] : value.items()) collect_pointers(child, at / key, out);
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) collect_pointers(value[i], at / i, out);
  }
}

// One of `pointers` (each of which must exist in `document`) for which `eligible` holds, chosen
// uniformly with one draw of `rng`; nullopt, and no draw, when there is none.
inline std::optional<Pointer> pick_pointer(
    const Json& document, const std::vector<Pointer>& pointers, engine::Rng& rng,
    const std::function<bool(const Pointer&, const Json&)>& eligible) {
  std::vector<const Pointer*> candidates;
  for (const Pointer& pointer : pointers) {
    if (eligible(pointer, document.at(pointer))) candidates.push_back(&pointer);
  }
  if (candidates.empty()) return std::nullopt;
  return *candidates[rng.uniform_below(candidates.size())];
}

// One of `values` (not empty), chosen uniformly with one draw of `rng`.
template <typename T>
T pick(const std::vector<T>& values, engine::Rng& rng) {
  return values[rng.uniform_below(values.size())];
}

// `pointer` for a mutation's log line: "/" for the root.
inline std::string show(const Pointer& pointer) {
  const std::string text = pointer.to_string();
  return text.empty() ? "/" : text;
}

// The number `value` negated, scaled by a power of two, or moved by one: values just past a
// bound, or far beyond it.
inline Json nudged_number(const Json& value, engine::Rng& rng) {
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

// Mutations both tests make. Each chooses with `rng` among `pointers`, those of `document` as
// collect_pointers() lists them, and returns its log line, e.g. "/clients/0: deleted".

// Deletes a value below the root.
inline std::string delete_one(Json& document, const std::vector<Pointer>& pointers,
                              engine::Rng& rng) {
  const auto has_parent = [](const Pointer& p, const Json&) { return !p.empty(); };
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

// Whether `value` is an array with elements: one to duplicate or truncate.
inline bool is_non_empty_array(const Pointer&, const Json& value) {
  return value.is_array() && !value.empty();
}

// Inserts one to three copies of an element of an array before it.
inline std::string duplicate_element(Json& document, const std::vector<Pointer>& pointers,
                                     engine::Rng& rng) {
  if (const auto at = pick_pointer(document, pointers, rng, is_non_empty_array)) {
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

// Truncates an array to fewer elements (none, possibly).
inline std::string truncate_array(Json& document, const std::vector<Pointer>& pointers,
                                  engine::Rng& rng) {
  if (const auto at = pick_pointer(document, pointers, rng, is_non_empty_array)) {
    Json& array = document[*at];
    const std::size_t size = rng.uniform_below(array.size());
    array.erase(array.begin() + static_cast<std::ptrdiff_t>(size), array.end());
    return show(*at) + ": truncated to " + std::to_string(size) + " elements";
  }
  return "no array to truncate";
}

// ---- seeds and files ----------------------------------------------------------------------------

// The seed of the mutants: BINDERSIM_FUZZ_SEED=N when it is set (decimal, or hex as 0x...), so
// that other mutants can be explored; else `default_seed`, the same on every run.
inline std::uint64_t fuzz_seed(std::uint64_t default_seed) {
  const char* text = std::getenv("BINDERSIM_FUZZ_SEED");
  return text != nullptr && *text != '\0' ? std::strtoull(text, nullptr, 0) : default_seed;
}

// A stream id per file name (FNV-1a), so that adding a file leaves the others' mutants alone.
inline std::uint64_t stream_of(const std::string& name) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char c : name) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return hash;
}

// The bytes of the file at `path`; "" when it cannot be read.
inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Replaces the file at `path` by `text`; a fatal test failure when it cannot be written.
inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

// "scenarios/schd-dbg.json" -> "scenarios_schd_dbg_json": a test name gtest accepts for a
// parameter that is a path.
inline std::string test_name(const ::testing::TestParamInfo<std::string>& param) {
  std::string name = param.param;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

// ---- isolation ----------------------------------------------------------------------------------

// A property of the consumers that a mutant broke, thrown by a test's checks.
class FuzzProblem : public std::runtime_error {
 public:
  explicit FuzzProblem(const std::string& message) : std::runtime_error(message) {}
};

// How a mutant fared in its child process.
struct Outcome {
  enum class Kind { kReturned, kConfigError, kProblem, kOtherException, kCrashed, kHung };
  Kind kind = Kind::kCrashed;
  std::string stage;    // the step it was in when it ended, for a test that names its steps
  std::string message;  // the exception's text, or the signal
};

// Runs `body` in a child process and reports how it ended: it returns normally (kReturned), or
// throws a ConfigError, a FuzzProblem or something else, or crashes (a signal, or no report) or
// hangs (no end within kTimeoutSeconds). The child reports through a pipe and exits without
// running the parent's handlers. The stage of the outcome is left empty.
inline Outcome run_isolated(const std::function<void()>& body) {
  int fds[2];
  if (pipe(fds) != 0) return {Outcome::Kind::kCrashed, "", "pipe() failed"};
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return {Outcome::Kind::kCrashed, "", "fork() failed"};
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
    } catch (const FuzzProblem& error) {
      kind = 'P';
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
      return {Outcome::Kind::kHung, "",
              "no result after " + std::to_string(kTimeoutSeconds) + " s"};
    }
    return {Outcome::Kind::kCrashed, "", "killed by signal " + std::to_string(WTERMSIG(status))};
  }
  if (report.empty()) return {Outcome::Kind::kCrashed, "", "exited without a report"};
  const std::string message = report.substr(1);
  switch (report[0]) {
    case 'R':
      return {Outcome::Kind::kReturned, "", ""};
    case 'C':
      return {Outcome::Kind::kConfigError, "", message};
    case 'P':
      return {Outcome::Kind::kProblem, "", message};
    default:
      return {Outcome::Kind::kOtherException, "", message};
  }
}

}  // namespace bindersim::testing::fuzz
