// bindersim command-line entry point: dispatches to the subcommands.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "bindersim/common/error.hpp"
#include "command_line.hpp"
#include "commands.hpp"
#include "output_file.hpp"

namespace bindersim::cli {

std::filesystem::path data_dir() {
  if (const char* env = std::getenv("BINDERSIM_DATA_DIR"); env != nullptr && *env != '\0') {
    return env;
  }
  return BINDERSIM_DATA_DIR;
}

namespace {

constexpr const char* kUsage =
    "usage: bindersim <command> [options]\n"
    "\n"
    "Deterministic simulator of Android binder thread selection on asymmetric SoCs.\n"
    "\n"
    "commands:\n"
    "  run SCENARIO       simulate a scenario and print its latency tiers\n"
    "  compare SCENARIO   run several selectors (and seeds) side by side\n"
    "  check RESULT       compare a result with a baseline (CI regression gate)\n"
    "  topology show NAME print a topology (clusters, capacities, transfer costs)\n"
    "  topology list      list the topologies shipped in topologies/\n"
    "  report INPUT...    an HTML report (SVG charts) of result, compare and sweep summary files\n"
    "  sweep expand SWEEP expand a sweep file into runs; sweep run, sweep merge: run, pool\n"
    "\n"
    "examples:\n"
    "  bindersim run scenarios/schd-dbg.json --selector ctabs --out result.json\n"
    "  bindersim run --list-selectors\n"
    "  bindersim topology show sa8155p --dot > sa8155p.dot\n"
    "\n"
    "Run 'bindersim <command> --help' for the options of a command.\n";

constexpr const char* kValidCommands =
    "valid commands: run, compare, check, topology, sweep, report (see bindersim --help)";

int dispatch(const std::vector<std::string>& args) {
  if (args.empty()) {
    error_line(std::cerr, "bindersim", std::string("missing command; ") + kValidCommands);
    return 2;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help" || args[0] == "--version") {
    if (args.size() > 1) {
      error_line(std::cerr, "bindersim",
                 args[0] + " takes no arguments; found \"" + args[1] + "\"");
      return 2;
    }
    if (args[0] == "--version") {
      std::cout << "bindersim " << BINDERSIM_VERSION << "\n";
    } else {
      std::cout << kUsage;
    }
    return 0;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "run") return run_command(rest, std::cout, std::cerr);
  if (args[0] == "compare") return compare_command(rest, std::cout, std::cerr);
  if (args[0] == "check") return check_command(rest, std::cout, std::cerr);
  if (args[0] == "topology") return topology_command(rest, std::cout, std::cerr);
  if (args[0] == "report") return report_command(rest, std::cout, std::cerr);
  if (args[0] == "sweep") return sweep_command(rest, std::cout, std::cerr);
  error_line(std::cerr, "bindersim", "unknown command \"" + args[0] + "\"; " + kValidCommands);
  return 2;
}

// Standard output carries data (a runs file, a page, tables): a write to it that failed, now or
// while the command ran, makes the exit status 2, with one line on stderr, unless the command
// already failed on bad input and said why.
int finish_output(int status) {
  std::cout.flush();
  if (std::cout && std::fflush(stdout) == 0 && std::ferror(stdout) == 0) return status;
  if (status != 2) std::cerr << "bindersim: writing standard output failed\n";
  return 2;
}

}  // namespace
}  // namespace bindersim::cli

int main(int argc, char** argv) {
  // A reader that closes its end (`| head`) makes writes fail instead of killing the process:
  // finish_output() then exits 2 with its one line, as for any failed write.
  std::signal(SIGPIPE, SIG_IGN);
  // An interrupted command leaves no temporary file behind.
  bindersim::cli::remove_temporaries_on_interrupt();
  try {
    return bindersim::cli::finish_output(
        bindersim::cli::dispatch(std::vector<std::string>(argv + 1, argv + argc)));
  } catch (const bindersim::ConfigError& error) {
    bindersim::cli::error_line(std::cerr, "bindersim", error.what());
    return 2;
  } catch (const std::exception& error) {
    // Not bad input: a defect of bindersim itself.
    bindersim::cli::error_line(std::cerr, "bindersim: internal error", error.what());
    return 3;
  }
}
