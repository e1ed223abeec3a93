#include <filesystem>
#include <ostream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "bindersim/common/data_file.hpp"
#include "bindersim/common/error.hpp"
#include "bindersim/common/json_reader.hpp"
#include "bindersim/topology/topology.hpp"
#include "bindersim/workload/overrides.hpp"
#include "bindersim/workload/scenario.hpp"
#include "command_line.hpp"
#include "commands.hpp"

namespace bindersim::cli {
namespace {

constexpr const char* kUsage =
    "usage: bindersim topology show [--dot | --json] [--set topology.KEY=VALUE]... [--]\n"
    "                               NAME_OR_PATH\n"
    "       bindersim topology list\n"
    "\n"
    "show   prints a topology: clusters, capacities, idle states, operating points, caches,\n"
    "       platform costs and the CPU x CPU transfer cost per cache line. NAME_OR_PATH is a\n"
    "       name from `bindersim topology list` (topologies/NAME.json) or a path to a .json\n"
    "       file.\n"
    "       --dot  writes the cache graph in Graphviz format instead.\n"
    "       --json writes the topology document instead, with the --set values in it: a\n"
    "              topology file (keys in alphabetical order) that runs as the original\n"
    "              with those overrides does.\n"
    "       --set  changes a value first, as `bindersim run --set topology.KEY=VALUE` does\n"
    "              (repeatable).\n"
    "list   prints the names of the available topologies.\n"
    "\n"
    "examples:\n"
    "  bindersim topology show sa8155p\n"
    "  bindersim topology show sa8155p --dot | dot -Tsvg -o sa8155p.svg\n"
    "  bindersim topology show sa8155p --set topology.shared_caches.0.latency_ns=45\n"
    "  bindersim topology show sa8155p --json --set topology.costs.context_switch_ref_ns=900 \\\n"
    "      > fast-switch.json\n";

// One usage error line; the exit code of bad input.
int usage_error(std::ostream& err, const std::string& message) {
  error_line(err, "bindersim: topology", message + " (see bindersim topology --help)");
  return 2;
}

int show(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::string name;
  bool dot = false;
  bool json = false;
  std::vector<workload::Override> overrides;
  bool options_done = false;  // after "--", every argument is NAME_OR_PATH
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (!options_done && arg == "--") {
      options_done = true;
      continue;
    }
    const bool option = !options_done && arg.size() > 1 && arg.front() == '-';
    if (!option) {
      if (!name.empty()) {
        return usage_error(err, "show: unexpected argument \"" + arg + "\" after \"" + name + "\"");
      }
      name = arg;
    } else if (arg == "--dot") {
      dot = true;
    } else if (arg == "--json") {
      json = true;
    } else if (arg == "--set" || arg.starts_with("--set=")) {
      if (arg == "--set" && i + 1 == args.size()) {
        return usage_error(err, "show: --set needs topology.KEY=VALUE");
      }
      const std::string text = arg == "--set" ? args[++i] : arg.substr(6);
      if (!workload::is_topology_path(text) || text.find('=') == std::string::npos) {
        throw ConfigError("--set " + quote_text(text) +
                          ": expected topology.KEY=VALUE, a value of the topology (e.g. "
                          "topology.costs.wakeup_ref_ns=900)");
      }
      overrides.push_back(workload::parse_override(text));
    } else {
      return usage_error(
          err, "show: unknown option \"" + arg + "\"; valid: --dot, --json, --set, --help");
    }
  }
  if (name.empty()) return usage_error(err, "show: missing NAME_OR_PATH");
  if (dot && json) return usage_error(err, "show: --dot and --json exclude each other");

  const topology::Topology topology =
      workload::load_topology(name, data_dir() / "topologies", overrides);
  // Rendered in full before anything is written, so a failure leaves no partial output.
  std::ostringstream text;
  if (dot) {
    topology::write_dot(topology, text);
  } else if (json) {
    // The document load_topology() has just read and checked, with the same overrides.
    nlohmann::json document =
        JsonDocument::parse_file(
            resolve_data_file(name, data_dir() / "topologies", "topology", "topologies"))
            .value();
    workload::apply_topology_overrides(document, overrides);
    text << document.dump(2) << '\n';
  } else {
    topology::print_topology(topology, text);
  }
  out << text.str();
  return 0;
}

int list(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.size() > 1) return usage_error(err, "list: unexpected argument \"" + args[1] + "\"");
  const std::filesystem::path dir = data_dir() / "topologies";
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) {
    throw ConfigError(dir.string() +
                      ": expected the directory of the topologies, found none (BINDERSIM_DATA_DIR "
                      "names the directory that holds topologies/ and scenarios/)");
  }
  for (const std::string& name : topology::Topology::available(dir)) {
    out << name << '\n';
  }
  return 0;
}

}  // namespace

int topology_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  for (const std::string& arg : args) {
    if (arg == "--help" || arg == "-h") {
      out << kUsage;
      return 0;
    }
  }
  if (args.empty()) return usage_error(err, "missing subcommand: show or list");
  try {
    if (args[0] == "show") return show(args, out, err);
    if (args[0] == "list") return list(args, out, err);
  } catch (const ConfigError& error) {
    error_line(err, "bindersim", error.what());
    return 2;
  }
  return usage_error(err, "unknown subcommand \"" + args[0] + "\"; valid: show, list");
}

}  // namespace bindersim::cli
