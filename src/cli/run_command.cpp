// `bindersim run`: simulate one scenario under one selector.
#include <boost/program_options.hpp>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bindersim/common/error.hpp"
#include "bindersim/common/json_reader.hpp"
#include "bindersim/io/compare_report.hpp"
#include "bindersim/io/console.hpp"
#include "bindersim/io/result_json.hpp"
#include "bindersim/sched/placement.hpp"
#include "bindersim/selectors/registry.hpp"
#include "bindersim/sim/simulation.hpp"
#include "bindersim/topology/topology.hpp"
#include "bindersim/trace/ftrace_writer.hpp"
#include "bindersim/workload/scenario.hpp"
#include "command_line.hpp"
#include "commands.hpp"
#include "output_file.hpp"

namespace bindersim::cli {
namespace po = boost::program_options;

namespace {

constexpr const char* kRunUsage =
    "usage: bindersim run SCENARIO [--selector NAME] [--placement NAME] [--seed N]\n"
    "                     [--set KEY=VALUE]... [--out FILE] [--log-level LEVEL]\n"
    "                     [--trace FILE [--trace-window START:END]]\n"
    "       bindersim run --list-selectors\n"
    "\n"
    "Simulates SCENARIO (a file, or a name in scenarios/) and prints its latency tiers.\n"
    "With --trace, also writes the run as kernel ftrace text (sched, cpu_idle, cpu_frequency,\n"
    "binder events and the selector's decisions): open it in ui.perfetto.dev with \"Open trace\n"
    "file\" (docs/trace.md). On a terminal, runs longer than a second show their progress on\n"
    "stderr.\n"
    "\n"
    "examples:\n"
    "  bindersim run scenarios/schd-dbg.json --selector ctabs --out ctabs.json\n"
    "  bindersim run schd-dbg --selector ctabs-nudge --seed 7\n"
    "  bindersim run schd-dbg --set clients.0.iterations=1000 --set kernel.selector=ctabs\n"
    "  bindersim run schd-dbg --selector ctabs --trace ctabs.trace --trace-window 1:1.05\n";

// A file written while the run goes on: into a temporary beside `path` (temporary_path()),
// renamed over it once complete (as write_file_atomically() does for whole contents); removed
// if the run fails, so no partial file is left. A path that exists and is not a regular file
// (/dev/null, a FIFO) is written directly: renaming over it would replace the device.
class StreamedFile {
 public:
  explicit StreamedFile(std::string path) : path_(std::move(path)) {
    std::error_code error;
    const auto status = std::filesystem::status(path_, error);
    direct_ =
        !error && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status);
    temporary_ = direct_ ? path_ : temporary_path(path_);
    if (!direct_) removed_if_interrupted_.emplace(temporary_);
    stream_.open(temporary_, std::ios::binary | std::ios::trunc);
    if (!stream_) throw ConfigError(path_ + ": cannot write file");
  }
  StreamedFile(const StreamedFile&) = delete;
  StreamedFile& operator=(const StreamedFile&) = delete;
  ~StreamedFile() {
    if (committed_ || direct_) return;
    stream_.close();
    std::remove(temporary_.c_str());
  }

  std::ostream& stream() { return stream_; }

  // Completes the writing: failure is a ConfigError naming the path. The file stays a
  // temporary, removed by the destructor, until commit().
  void finish() {
    if (finished_) return;
    stream_.flush();
    if (!stream_) throw ConfigError(path_ + ": write failed");
    stream_.close();
    finished_ = true;
  }

  // Completes the file and renames it into place; failure is a ConfigError naming the path
  // (and the file is removed).
  void commit() {
    finish();
    committed_ = true;
    if (direct_) return;
    std::error_code error;
    std::filesystem::rename(temporary_, path_, error);
    if (error) {
      committed_ = false;  // the destructor removes the temporary
      throw ConfigError(path_ + ": cannot write file: " + error.message());
    }
  }

  // Removes a committed file: the other output of the same run could not be committed.
  void withdraw() {
    if (!committed_ || direct_) return;
    std::remove(path_.c_str());
  }

 private:
  std::string path_;
  std::string temporary_;
  std::ofstream stream_;
  bool direct_ = false;  // writing to a device or FIFO in place
  bool finished_ = false;
  bool committed_ = false;
  std::optional<RemovedIfInterrupted> removed_if_interrupted_;  // the temporary's
};

// Draws a run's progress: simulated time, calls done (of those expected), rate and ETA.
class RunProgress final : public sim::ProgressSink {
 public:
  explicit RunProgress(ProgressLine& line) : line_(line) {}
  void on_progress(const sim::Progress& p) override {
    if (!line_.due()) return;
    const double elapsed = line_.elapsed_s();
    const double rate = elapsed > 0 ? static_cast<double>(p.calls_done) / elapsed : 0.0;
    std::string text =
        fmt::format("{:.3f} s simulated | {}", static_cast<double>(p.simulated_ns) / 1e9,
                    io::group_thousands(p.calls_done));
    if (p.calls_expected > 0 && p.calls_done <= p.calls_expected) {
      const double done = static_cast<double>(p.calls_done) / static_cast<double>(p.calls_expected);
      text += fmt::format("/{} calls ({:.0f}%) | {}/s", io::group_thousands(p.calls_expected),
                          100 * done, io::group_thousands(static_cast<std::uint64_t>(rate)));
      if (done > 0) text += " | ETA " + format_eta(elapsed * (1 - done) / done);
    } else {
      text += fmt::format(" calls | {}/s", io::group_thousands(static_cast<std::uint64_t>(rate)));
    }
    line_.show(text);
  }

 private:
  ProgressLine& line_;
};

// The --seed value: a decimal integer in [0, 2^64 - 1]. Read as text, since the option
// parser turned "-1" into 2^64 - 1.
std::uint64_t parse_seed(const std::string& text) {
  std::uint64_t seed = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seed);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) {
    throw ConfigError("--seed: expected an integer in [0, " +
                      std::to_string(std::numeric_limits<std::uint64_t>::max()) + "], got \"" +
                      text + "\"");
  }
  return seed;
}

}  // namespace

int run_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  selectors::SelectorRegistry registry;
  selectors::register_builtin_selectors(registry);

  po::options_description options("options");
  options.add_options()("help,h", "show this help")(
      "selector", po::value<std::string>(), "thread-selection policy (default: the scenario's)")(
      "placement", po::value<std::string>(),
      "wakeup placement policy: mainline, gki or walt (default: the scenario's)")(
      "seed", po::value<std::string>(), "random seed (default: the scenario's)")(
      "out,o", po::value<std::string>(), "write the result JSON to FILE")(
      "trace", po::value<std::string>(),
      "write the run as ftrace text to FILE (open it in ui.perfetto.dev)")(
      "trace-window", po::value<std::string>(),
      "with --trace: only START:END, in seconds of simulated time, either side optional "
      "(e.g. 2.5:3)")("list-selectors", "list the selectors and exit")(
      "log-level", po::value<std::string>(),
      "log level of the model's decisions on stderr: warn (default), info, debug")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a scenario option by its dotted path, e.g. --set kernel.placement=mainline, "
      "or a value of its topology, e.g. --set topology.costs.wakeup_ref_ns=900 (repeatable)")(
      "scenario", po::value<std::string>(), "scenario file or name");
  po::variables_map vm;
  if (!parse_options("run", args, options, "scenario", vm, err)) return 2;
  if (vm.count("help")) {
    out << kRunUsage << "\n" << options;
    return 0;
  }
  if (vm.count("list-selectors")) {
    // Listing runs nothing: an option beside it would be silently ignored.
    for (const auto& [name, value] : vm) {
      if (name == "list-selectors") continue;
      return usage_error(err, "run",
                         "--list-selectors takes no other option; found " +
                             (name == "scenario" ? "SCENARIO" : "--" + name));
    }
    for (const auto& entry : registry.entries()) {
      out << std::left << std::setw(14) << entry.name << entry.description << "\n";
    }
    return 0;
  }
  if (!vm.count("scenario")) return usage_error(err, "run", "missing SCENARIO");
  if (vm.count("trace-window") && !vm.count("trace")) {
    return usage_error(err, "run", "--trace-window needs --trace FILE");
  }
  if (vm.count("out") && vm.count("trace") &&
      same_file(vm["out"].as<std::string>(), vm["trace"].as<std::string>())) {
    return usage_error(err, "run",
                       "--out and --trace both name \"" + vm["trace"].as<std::string>() +
                           "\"; expected two different files");
  }
  try {
    std::optional<trace::TraceWindow> window;
    if (vm.count("trace-window")) {
      window = trace::parse_trace_window(vm["trace-window"].as<std::string>());
    }
    const std::vector<workload::Override> overrides = set_overrides(vm);
    // --selector, --placement and --seed win over the scenario: a --set of the same value would
    // be recorded in the result and have no effect.
    for (const auto& [option, path] :
         {std::pair{"selector", "kernel.selector"}, std::pair{"placement", "kernel.placement"},
          std::pair{"seed", "seed"}}) {
      if (vm.count(option)) reject_set_of_chosen(overrides, path, std::string("--") + option);
    }
    const auto scenario = workload::load_scenario(vm["scenario"].as<std::string>(),
                                                  data_dir() / "scenarios", registry, overrides);
    const std::string topology_path =
        workload::topology_file(scenario, data_dir() / "topologies").string();
    const auto topology = workload::load_topology(scenario, data_dir() / "topologies");
    const std::vector<NamedInput> inputs = {{"the scenario", scenario.file},
                                            {"the topology", topology_path}};
    for (const char* option : {"out", "trace"}) {
      if (vm.count(option)) {
        check_not_an_input(std::string("--") + option, vm[option].as<std::string>(), inputs);
      }
    }
    sim::RunOptions run_options;
    if (vm.count("selector")) {
      const std::string name = vm["selector"].as<std::string>();
      check_option("--selector", [&] { registry.create(name); });  // before the run
      run_options.selector = name;
    }
    if (vm.count("placement")) {
      run_options.placement = vm["placement"].as<std::string>();
      check_option("--placement", [&] { sched::make_placement(*run_options.placement); });
    }
    if (vm.count("seed")) run_options.seed = parse_seed(vm["seed"].as<std::string>());
    if (vm.count("log-level")) {
      const std::string level = vm["log-level"].as<std::string>();
      if (level != "warn" && level != "info" && level != "debug") {
        error_line(err, "bindersim run",
                   "--log-level: expected one of warn, info, debug, got \"" + level + "\"");
        return 2;
      }
      run_options.log_level = level;
    }

    // The result and the trace land together or not at all: both are written to temporary
    // files (opened before the run, so that an unwritable path fails first), and renamed into
    // place only once both are complete.
    std::unique_ptr<StreamedFile> result_file;
    if (vm.count("out")) result_file = std::make_unique<StreamedFile>(vm["out"].as<std::string>());
    // The trace streams into its file while the run goes on.
    std::unique_ptr<StreamedFile> trace_file;
    std::unique_ptr<trace::FtraceWriter> tracer;
    if (vm.count("trace")) {
      trace_file = std::make_unique<StreamedFile>(vm["trace"].as<std::string>());
      const std::string title =
          fmt::format("bindersim {}: scenario {}, topology {}, selector {}, placement {}, seed {}",
                      BINDERSIM_VERSION, scenario.name, topology.name(),
                      run_options.selector.value_or(scenario.kernel.selector),
                      run_options.placement.value_or(scenario.kernel.placement),
                      run_options.seed.value_or(scenario.seed));
      tracer = std::make_unique<trace::FtraceWriter>(trace_file->stream(), topology,
                                                     window.value_or(trace::TraceWindow{}), title);
      run_options.tracer = tracer.get();
    }
    ProgressLine progress_line(err);
    RunProgress progress(progress_line);
    if (progress_line.enabled()) run_options.progress = &progress;

    const auto wall_start = std::chrono::steady_clock::now();
    const stats::RunResult result = sim::run(scenario, topology, registry, run_options);
    const double wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    progress_line.clear();
    if (result_file) {
      io::write_result_json(result, result_file->stream());
      result_file->finish();
    }
    if (trace_file) trace_file->commit();
    if (result_file) {
      try {
        result_file->commit();
      } catch (const ConfigError&) {
        if (trace_file) trace_file->withdraw();
        throw;
      }
    }
    io::print_tier_table(result, out);
    if (scenario.report == "binder-throughput") {
      io::print_binder_throughput(result, static_cast<int>(scenario.processes.size()),
                                  static_cast<int>(scenario.clients.size()), out);
    }
    out << std::fixed << std::setprecision(3) << "simulated "
        << static_cast<double>(result.simulated_ns) / 1e9 << " s, " << result.events
        << " events in " << wall_s << " s wall (" << std::setprecision(2)
        << (wall_s > 0 ? static_cast<double>(result.events) / wall_s / 1e6 : 0.0)
        << " M events/s)\n";
    if (!output_reached(out)) return 0;  // finish_output() reports the failed write
    if (!result.clients_finished) {
      err << "bindersim: warning: the clients did not finish their iterations ("
          << kUnfinishedClientsReason << ")\n";
    }
    if (tracer) {
      out << "trace: " << tracer->lines() << " events written to " << vm["trace"].as<std::string>()
          << "\n";
    }
    return 0;
  } catch (const ConfigError& error) {
    error_line(err, "bindersim", error.what());
    return 2;
  }
}

}  // namespace bindersim::cli
