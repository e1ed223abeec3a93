// `bindersim check`: the CI regression gate, a result compared with a baseline result.
#include <boost/program_options.hpp>
#include <iostream>
#include <sstream>

#include "bindersim/common/error.hpp"
#include "bindersim/io/check.hpp"
#include "command_line.hpp"
#include "commands.hpp"

namespace bindersim::cli {
namespace po = boost::program_options;

namespace {

constexpr const char* kCheckUsage =
    "usage: bindersim check RESULT --baseline FILE [--tolerance FILE]\n"
    "       bindersim check RESULT --baseline FILE --exact\n"
    "\n"
    "Compares RESULT with a baseline result (both bindersim.result/1 files, as written by\n"
    "`bindersim run --out`) and prints a table: metric, baseline, result, delta, tolerance,\n"
    "status. Gated metrics: transactions.completed and per_second, latency mean/p50/p99, each\n"
    "class x tier's share, mean and p99 (latencies only for tiers with enough share in the\n"
    "baseline), and the counters per completed call. Selection decisions and nudges are\n"
    "reported but not gated unless a tolerance file gates them. Scenario, topology, selector\n"
    "(with its parameters) and placement must be equal, and so must what the runs were made\n"
    "from (scenario_hash, topology_hash, overrides; null in a tolerance file reports them\n"
    "without gating); the seed may differ.\n"
    "\n"
    "A metric fails when it moves beyond its tolerance in EITHER direction: an unexpected\n"
    "improvement fails too, so that the baseline is updated on purpose.\n"
    "\n"
    "--exact compares the whole documents (all but provenance.version, and the inputs only\n"
    "when both record them) and the fingerprint: any difference fails. Use it for golden\n"
    "results of a deterministic model.\n"
    "\n"
    "exit status: 0 all within tolerance (or identical with --exact), 1 regression,\n"
    "             2 bad input (unreadable or invalid file, bad options)\n"
    "\n"
    "default tolerances (override them by name in a --tolerance file; see docs/check.md):\n";

constexpr const char* kCheckExamples =
    "\n"
    "tolerance file:\n"
    "  {\"schema\": \"bindersim.tolerances/1\", \"min_tier_share_percent\": 1.0,\n"
    "   \"tolerances\": {\"tiers.mean_ns\": 8, \"tiers.sched_other.cross_cluster.p99_ns\": 20,\n"
    "                  \"selection.decisions\": 10, \"transactions.per_second\": null}}\n"
    "  Values are percent, or percentage points for shares; null reports without gating. A\n"
    "  name is one row of the table or a group (tiers.share, tiers.mean_ns, tiers.p99_ns,\n"
    "  counters, selection.decisions, selection.nudges); a row's own entry wins.\n"
    "\n"
    "examples:\n"
    "  bindersim check result.json --baseline golden.json\n"
    "  bindersim check result.json --baseline golden.json --tolerance tolerances.json\n"
    "  bindersim check result.json --baseline tests/golden/schd-dbg-ctabs.json --exact\n";

}  // namespace

int check_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description options("options");
  options.add_options()("help,h", "show this help")("baseline,b", po::value<std::string>(),
                                                    "the baseline result JSON (required)")(
      "tolerance,t", po::value<std::string>(),
      "a tolerance file (JSON) overriding the defaults by metric name")(
      "exact", "require identical documents (all but provenance.version)")(
      "result", po::value<std::string>(), "the result JSON to check");
  po::variables_map vm;
  if (!parse_options("check", args, options, "result", vm, err)) return 2;
  if (vm.count("help")) {
    out << kCheckUsage;
    io::print_default_tolerances(out);
    out << kCheckExamples << "\n" << options;
    return 0;
  }
  if (!vm.count("result")) return usage_error(err, "check", "missing RESULT");
  if (!vm.count("baseline")) return usage_error(err, "check", "missing --baseline FILE");
  if (vm.count("exact") && vm.count("tolerance")) {
    return usage_error(err, "check", "--exact and --tolerance exclude each other");
  }
  try {
    // Everything is read before anything is printed: bad input gives one line and no table.
    const io::ResultDocument result = io::read_result_file(vm["result"].as<std::string>());
    const io::ResultDocument baseline = io::read_result_file(vm["baseline"].as<std::string>());
    std::ostringstream text;
    bool passed = false;
    if (vm.count("exact")) {
      const auto differences = io::exact_differences(result, baseline);
      io::print_exact_report(result, baseline, differences, text);
      passed = differences.empty();
    } else {
      const io::Tolerances tolerances =
          vm.count("tolerance") ? io::read_tolerances_file(vm["tolerance"].as<std::string>())
                                : io::default_tolerances();
      const io::CheckReport report = io::check_result(result, baseline, tolerances);
      io::print_check_report(report, text);
      passed = report.passed();
    }
    out << text.str();
    return passed ? 0 : 1;
  } catch (const ConfigError& error) {
    error_line(err, "bindersim", error.what());
    return 2;
  }
}

}  // namespace bindersim::cli
