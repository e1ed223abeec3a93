// Command-line overrides of scenario options: `--set KEY=VALUE` with a dotted path into the
// scenario document (e.g. kernel.placement=mainline, clients.0.iterations=100).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace bindersim::workload {

struct Override {
  std::string path;  // dotted: object keys, or array indices for arrays
  nlohmann::json value;
  std::string text;  // as given, with the option that gave it ("--set k=v"), for messages
};

// Parses "KEY=VALUE", given by `option` ("--set", "--vary"; empty for a sweep file, whose
// messages name the JSON pointer instead). VALUE is read as JSON when it is valid JSON
// (numbers, true, false, objects, quoted strings) and as a plain string otherwise. Bad syntax is
// a ConfigError that names the option.
Override parse_override(const std::string& text, std::string_view option = "--set");

// The overrides as a result records them (provenance.overrides): compact JSON, an array of
// [path, value] pairs in order ("[]" for none).
std::string overrides_text(const std::vector<Override>& overrides);

// Whether `path` reaches into the scenario's topology document ("topology.costs.wakeup_ref_ns")
// rather than the scenario's own: such an override is applied when the topology is loaded, to
// whichever topology the scenario names. "topology" alone is the scenario's key that names it.
bool is_topology_path(std::string_view path);

// Whether an override of one dotted path changes the value at the other: the same path, or one
// inside the other ("kernel.a" holds "kernel.a.b"), so that the later of the two would undo the
// earlier in part or whole. "*" is a path part like any other here: "clients.*.iterations" and
// "clients.0.iterations" do not overlap (the later refines the earlier; docs/scenario-format.md).
// "topology" and a path into the topology's document do not overlap either: the one chooses the
// topology, the other changes a value of the one chosen.
bool paths_overlap(std::string_view a, std::string_view b);
// True when `outer` is `inner` or an object holding it ("kernel" holds "kernel.selector"), so
// that setting `outer` sets `inner`.
bool path_sets(std::string_view outer, std::string_view inner);

// Applies the scenario's `overrides` (all but the topology's, is_topology_path()) to the
// scenario document in order. "*" in place of an array index applies the rest of the path to
// every element (clients.*.iterations=100). A path that runs into a missing array index, through
// a value that is neither object nor array, or into a "*" or an index after a missing key is a
// ConfigError naming the --set (and, for the missing key, where it is missing: "processes.1 has
// no \"nodes\""); any other missing object key is created, and the strict scenario parser then
// rejects it if it is not a valid key.
void apply_overrides(nlohmann::json& document, const std::vector<Override>& overrides);

// Applies the topology's `overrides` (is_topology_path(); the rest are skipped) to a topology
// document in order, each path without its leading "topology.", as apply_overrides() applies
// the scenario's; the strict topology parser then judges the document.
void apply_topology_overrides(nlohmann::json& topology_document,
                              const std::vector<Override>& overrides);

}  // namespace bindersim::workload
