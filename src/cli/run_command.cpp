// `bindersim run`: simulate one scenario under one selector.
#include <boost/program_options.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "bindersim/common/error.hpp"
#include "bindersim/io/console.hpp"
#include "bindersim/io/result_json.hpp"
#include "bindersim/selectors/registry.hpp"
#include "bindersim/sim/simulation.hpp"
#include "bindersim/topology/topology.hpp"
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
    "       bindersim run --list-selectors\n"
    "\n"
    "Simulates SCENARIO (a file, or a name in scenarios/) and prints its latency tiers.\n"
    "\n"
    "examples:\n"
    "  bindersim run scenarios/schd-dbg.json --selector ctabs --out ctabs.json\n"
    "  bindersim run schd-dbg --selector ctabs-nudge --seed 7\n"
    "  bindersim run schd-dbg --set clients.0.iterations=1000 --set kernel.selector=ctabs\n";

}  // namespace

int run_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  selectors::SelectorRegistry registry;
  selectors::register_builtin_selectors(registry);

  po::options_description options("options");
  options.add_options()("help,h", "show this help")(
      "selector", po::value<std::string>(), "thread-selection policy (default: the scenario's)")(
      "placement", po::value<std::string>(), "wakeup placement policy: mainline")(
      "seed", po::value<std::uint64_t>(), "random seed (default: the scenario's)")(
      "out,o", po::value<std::string>(), "write the result JSON to FILE")(
      "list-selectors", "list the selectors and exit")(
      "log-level", po::value<std::string>(),
      "log level of the model's decisions on stderr: warn (default), info, debug")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a scenario option by its dotted path, e.g. --set kernel.placement=mainline "
      "(repeatable)")("scenario", po::value<std::string>(), "scenario file or name");
  po::variables_map vm;
  if (!parse_options("run", args, options, "scenario", vm, err)) return 2;
  if (vm.count("help")) {
    out << kRunUsage << "\n" << options;
    return 0;
  }
  if (vm.count("list-selectors")) {
    for (const auto& entry : registry.entries()) {
      out << std::left << std::setw(14) << entry.name << entry.description << "\n";
    }
    return 0;
  }
  if (!vm.count("scenario")) return usage_error(err, "run", "missing SCENARIO");
  try {
    const auto scenario = workload::load_scenario(
        vm["scenario"].as<std::string>(), data_dir() / "scenarios", registry, set_overrides(vm));
    const auto topology =
        topology::Topology::load(workload::topology_reference(scenario), data_dir() / "topologies");
    sim::RunOptions run_options;
    if (vm.count("selector")) {
      const std::string name = vm["selector"].as<std::string>();
      registry.create(name);  // validates the name before the run
      run_options.selector = name;
    }
    if (vm.count("placement")) run_options.placement = vm["placement"].as<std::string>();
    if (vm.count("seed")) run_options.seed = vm["seed"].as<std::uint64_t>();
    if (vm.count("log-level")) {
      const std::string level = vm["log-level"].as<std::string>();
      if (level != "warn" && level != "info" && level != "debug") {
        err << "bindersim run: --log-level: expected one of warn, info, debug, got \"" << level
            << "\"\n";
        return 2;
      }
      run_options.log_level = level;
    }

    const auto wall_start = std::chrono::steady_clock::now();
    const stats::RunResult result = sim::run(scenario, topology, registry, run_options);
    const double wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();

    if (vm.count("out")) {
      std::ostringstream json;
      io::write_result_json(result, json);
      write_file_atomically(vm["out"].as<std::string>(), json.str());
    }
    io::print_tier_table(result, out);
    if (scenario.report == "binder-throughput") {
      io::print_binder_throughput(result, static_cast<int>(scenario.processes.size()),
                                  static_cast<int>(scenario.clients.size()), out);
    }
    if (!result.clients_finished) {
      err << "bindersim: warning: the clients did not finish their iterations (the time limit, "
             "or work that can never run, ended the run first)\n";
    }
    out << std::fixed << std::setprecision(3) << "simulated "
        << static_cast<double>(result.simulated_ns) / 1e9 << " s, " << result.events
        << " events in " << wall_s << " s wall (" << std::setprecision(2)
        << (wall_s > 0 ? static_cast<double>(result.events) / wall_s / 1e6 : 0.0)
        << " M events/s)\n";
    return 0;
  } catch (const ConfigError& error) {
    err << "bindersim: " << error.what() << "\n";
    return 2;
  }
}

}  // namespace bindersim::cli
