// Parameter sweeps (docs/sweep-format.md): a sweep file and its expansion into fully resolved
// runs, one per (axis values, selector, seed), each named by a stable run id. The sweep layer
// sits above sim and io: it loads scenarios, runs them and merges their results.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bindersim/workload/overrides.hpp"

namespace bindersim {
class JsonNode;
}
namespace bindersim::selectors {
class SelectorRegistry;
}

namespace bindersim::sweep {

// Value of the sweep file's "schema" key.
inline constexpr std::string_view kSweepSchema = "bindersim.sweep/1";

// The most runs a sweep may expand into (points x selectors x seeds): a sweep file is checked
// against it before anything is built, since each run is a line of runs.jsonl and a scenario
// loaded in memory while expanding.
inline constexpr std::uint64_t kMaxSweepRuns = 100'000;

// A (name, JSON value) pair: an axis and its value, or a dotted override path and its value.
using NamedValue = std::pair<std::string, nlohmann::json>;

// The text of an axis value in tables: a string without its quotes (its control characters
// escaped, see console_text()), anything else as JSON.
std::string value_label(const nlohmann::json& value);

// One option axis: every value is applied, as --set KEY=VALUE, to each of `keys`.
struct Axis {
  std::string name;                    // unique within the sweep
  std::vector<std::string> keys;       // dotted scenario paths, as --set takes them
  std::vector<nlohmann::json> values;  // non-empty, distinct
};

struct Sweep {
  std::string name;
  std::string description;
  std::string file;  // where it was read from (for messages)
  // The base scenario as workload::load_scenario takes it: a shipped name, or a path resolved
  // against the sweep file's directory (relative to the working directory when the sweep
  // file's path was).
  std::string scenario;
  std::vector<NamedValue> set;  // overrides of every run, applied first, sorted by path
  std::vector<Axis> axes;
  std::vector<std::string> selectors;    // empty: each run uses its scenario's own selector
  std::optional<std::string> placement;  // nullopt: each run uses its scenario's own
  std::vector<std::uint64_t> seeds;      // non-empty, distinct, in the order given
};

// Reads a sweep document strictly; `file` names the document and its directory anchors a
// relative scenario path. Every error is a ConfigError "<file>: <pointer>: ...". A sweep of
// more than kMaxSweepRuns runs is refused, at /axes, /selectors or /seeds (the largest factor),
// before its parts are read.
Sweep parse_sweep(const JsonNode& root, const std::filesystem::path& file);
Sweep load_sweep(const std::filesystem::path& file);

// One fully resolved run: a line of runs.jsonl.
struct RunSpec {
  std::size_t index = 0;              // position in the expansion
  std::string run_id;                 // run_id_of(*this), 16 lowercase hex digits
  std::string sweep;                  // the sweep's name
  std::string scenario;               // as Sweep::scenario
  std::string scenario_hash;          // scenario_hash() of the scenario file when it was expanded
  std::vector<NamedValue> axes;       // (axis name, value), in axis order
  std::vector<NamedValue> overrides;  // (dotted path, value), in the order applied
  std::string selector;
  std::string placement;
  std::uint64_t seed = 0;
};

// The canonical JSON that a run id hashes: an object with the keys overrides (an array of
// [path, value] pairs in order), placement, scenario (the scenario hash), seed and selector,
// printed by nlohmann::json::dump() without spaces and with keys sorted. The index, the sweep
// name, the scenario reference and the axis names are not part of a run's identity.
std::string identity_json(const RunSpec& run);
// fnv1a64(identity_json(run)) as 16 lowercase hex digits.
std::string run_id_of(const RunSpec& run);

// fnv1a64 of a scenario document's canonical JSON (keys sorted, no spaces), as 16 hex digits:
// independent of the file's whitespace and key order.
std::string scenario_hash(const nlohmann::json& document);
std::string scenario_file_hash(const std::filesystem::path& file);

// The overrides of a run as workload::load_scenario takes them.
std::vector<workload::Override> to_overrides(const std::vector<NamedValue>& values);

// Where expand_sweep() and the runner look up scenarios and topologies by name.
struct DataDirs {
  std::filesystem::path scenarios;
  std::filesystem::path topologies;
};

// Every run of `sweep`, in order: the cartesian product of the axes' values (the first axis
// outermost, each axis's values in file order), then the selectors, then the seeds
// (innermost). Before returning anything, loads the scenario under every combination of
// overrides and checks every selector, placement and topology; an error is a ConfigError
// naming the sweep file and the JSON pointer of the part at fault. `topology_files`, if given,
// receives the file of every topology the runs use, each once, in the order first met.
std::vector<RunSpec> expand_sweep(const Sweep& sweep, const selectors::SelectorRegistry& registry,
                                  const DataDirs& dirs,
                                  std::vector<std::string>* topology_files = nullptr);

// A run as its runs.jsonl line: one JSON object, keys index, run_id, sweep, scenario,
// scenario_hash, axes ([[name, value], ...]), overrides ([[path, value], ...]), selector,
// placement, seed; no spaces, then a newline.
nlohmann::ordered_json run_to_json(const RunSpec& run);
std::string run_line(const RunSpec& run);

// Reads a run object strictly (the layout of run_to_json); a run_id that is not the hash of
// the other fields, an override of seed, or one of kernel.selector or kernel.placement that
// differs from the run's selector or placement, is an error.
RunSpec parse_run(const JsonNode& node);
// Reads runs.jsonl: one run per non-blank line, errors naming "<file>:<line>"; indices and
// run ids must be distinct. The file is read as read_input_file() reads it: a regular file of at
// most kMaxInputFileBytes.
std::vector<RunSpec> read_runs_file(const std::filesystem::path& file);

}  // namespace bindersim::sweep
