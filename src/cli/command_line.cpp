#include "command_line.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <ostream>

#include "bindersim/common/json_reader.hpp"

namespace bindersim::cli {
namespace po = boost::program_options;

void error_line(std::ostream& err, const std::string& prefix, const std::string& message) {
  err << prefix << ": " << console_text(message) << '\n';
}

bool output_reached(std::ostream& out) {
  out.flush();
  if (!out) return false;
  if (&out != &std::cout) return true;
  return std::fflush(stdout) == 0 && std::ferror(stdout) == 0;
}

int usage_error(std::ostream& err, const std::string& command, const std::string& message) {
  error_line(err, "bindersim " + command, message + " (see bindersim " + command + " --help)");
  return 2;
}

bool parse_options(const std::string& command, const std::vector<std::string>& args,
                   const po::options_description& options, const std::string& positional_name,
                   po::variables_map& vm, std::ostream& err) {
  po::positional_options_description positional;
  positional.add(positional_name.c_str(), 1);
  try {
    po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& error) {
    usage_error(err, command, error.what());
    return false;
  }
  return true;
}

std::vector<workload::Override> set_overrides(const po::variables_map& vm) {
  std::vector<workload::Override> overrides;
  if (vm.count("set")) {
    for (const auto& text : vm["set"].as<std::vector<std::string>>()) {
      overrides.push_back(workload::parse_override(text));
    }
  }
  return overrides;
}

void reject_key_of_chosen(std::string_view given, std::string_view key, std::string_view path,
                          std::string_view option) {
  if (!workload::path_sets(key, path)) return;
  const std::string what =
      key == path ? std::string(key) : fmt::format("{} holds {}, which", key, path);
  throw ConfigError(
      fmt::format("{} {}: {} is chosen by {}; drop one of them", given, key, what, option));
}

void reject_set_of_chosen(const std::vector<workload::Override>& overrides, std::string_view path,
                          std::string_view option) {
  for (const workload::Override& o : overrides) reject_key_of_chosen("--set", o.path, path, option);
}

namespace {

// The display appears after this long, and is redrawn at most this often.
constexpr std::chrono::milliseconds kProgressDelay{1000};
constexpr std::chrono::milliseconds kProgressInterval{250};
constexpr std::size_t kProgressWidth = 79;

}  // namespace

ProgressLine::ProgressLine(std::ostream& err)
    : err_(err),
      enabled_(&err == &std::cerr && isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

bool ProgressLine::due() {
  if (!enabled_) return false;
  const auto now = std::chrono::steady_clock::now();
  if (now - start_ < kProgressDelay || (shown_ && now - last_ < kProgressInterval)) return false;
  last_ = now;
  return true;
}

void ProgressLine::show(const std::string& text) {
  // Carriage return, the text, then erase to the end of the line (ECMA-48 EL).
  err_ << '\r' << text.substr(0, kProgressWidth) << "\x1b[K" << std::flush;
  shown_ = true;
}

void ProgressLine::clear() {
  if (!shown_) return;
  err_ << "\r\x1b[K" << std::flush;
  shown_ = false;
}

double ProgressLine::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::string format_eta(double seconds) {
  const auto total = static_cast<std::uint64_t>(std::llround(std::max(0.0, seconds)));
  const std::uint64_t minutes = total / 60;
  const std::uint64_t rest = total % 60;
  return std::to_string(minutes) + (rest < 10 ? ":0" : ":") + std::to_string(rest);
}

}  // namespace bindersim::cli
