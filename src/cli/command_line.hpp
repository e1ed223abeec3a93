// Command-line plumbing shared by the subcommands: option parsing, one-line usage errors, the
// repeatable --set option and the progress line of long runs.
#pragma once

#include <boost/program_options.hpp>
#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "bindersim/common/error.hpp"
#include "bindersim/workload/overrides.hpp"

namespace bindersim::cli {

// Why a run's clients may not have finished their iterations, for the warnings of run and compare.
inline constexpr const char* kUnfinishedClientsReason =
    "the time limit, or work that can never run, ended the run first";

// Writes "PREFIX: MESSAGE" as one line on `err`, the message's control characters escaped
// (console_text()): a message may quote command-line values, paths or names from input files,
// which must neither split the line nor drive the terminal.
void error_line(std::ostream& err, const std::string& prefix, const std::string& message);

// Whether all written to `out` so far has reached its destination (flushed here). Commands
// print their closing summaries and warnings on stderr only when it has: when standard output
// failed, the one line of finish_output() in main.cpp is all that stderr gets.
bool output_reached(std::ostream& out);

// Writes "bindersim COMMAND: MESSAGE (see bindersim COMMAND --help)" as one line on `err`
// (error_line()) and returns 2, the exit code of bad input.
int usage_error(std::ostream& err, const std::string& command, const std::string& message);

// Parses `args` into `vm` against `options`, the first positional argument stored as
// `positional_name`. A malformed command line is reported through usage_error() and gives
// false.
bool parse_options(const std::string& command, const std::vector<std::string>& args,
                   const boost::program_options::options_description& options,
                   const std::string& positional_name, boost::program_options::variables_map& vm,
                   std::ostream& err);

// The overrides of the repeatable --set KEY=VALUE option, in the order given (none when the
// option is absent). A malformed one is a ConfigError.
std::vector<workload::Override> set_overrides(const boost::program_options::variables_map& vm);

// A ConfigError when `key`, given by `given` ("--set", "--vary"), sets `path` or is an object
// holding it ("kernel"), which the command's `option` (given too) chooses: the value would be
// overridden without a word.
void reject_key_of_chosen(std::string_view given, std::string_view key, std::string_view path,
                          std::string_view option);
// reject_key_of_chosen() for each --set of `overrides`.
void reject_set_of_chosen(const std::vector<workload::Override>& overrides, std::string_view path,
                          std::string_view option);

// Runs `check` on the value of `option`; a ConfigError it throws is thrown again with the
// option's name in front ("--placement: unknown placement ...").
template <typename Check>
void check_option(const char* option, Check&& check) {
  try {
    check();
  } catch (const ConfigError& e) {
    throw ConfigError(std::string(option) + ": " + e.what());
  }
}

// A one-line progress display for commands that can run for seconds. It draws only when `err`
// is the process's standard error and that is a terminal; then not before a second has passed,
// and at most four times a second. Nothing is ever written to a file or a pipe, so output and
// results are the same with or without it. Not thread-safe: one thread draws.
class ProgressLine {
 public:
  explicit ProgressLine(std::ostream& err);
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ~ProgressLine() { clear(); }

  bool enabled() const { return enabled_; }
  // True when a redraw is due; the caller then builds its text and calls show().
  bool due();
  // Replaces the line with `text` (shortened to the terminal's usual 79 columns).
  void show(const std::string& text);
  // Erases the line if one is shown.
  void clear();
  // Wall-clock seconds since construction.
  double elapsed_s() const;

 private:
  std::ostream& err_;
  bool enabled_ = false;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
};

// An ETA for progress lines: 75.2 s -> "1:15".
std::string format_eta(double seconds);

}  // namespace bindersim::cli
