#include "bindersim/sweep/sweep.hpp"

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include "bindersim/common/data_file.hpp"
#include "bindersim/common/error.hpp"
#include "bindersim/common/hash.hpp"
#include "bindersim/common/json_reader.hpp"
#include "bindersim/io/result_json.hpp"
#include "bindersim/sched/placement.hpp"
#include "bindersim/selectors/registry.hpp"
#include "bindersim/selectors/selector.hpp"
#include "bindersim/topology/topology.hpp"
#include "bindersim/workload/overrides.hpp"
#include "bindersim/workload/scenario.hpp"

namespace bindersim::sweep {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

constexpr std::int64_t kMaxSeedCount = 1'000'000;
constexpr std::int64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();

// Keys that the sweep chooses itself rather than through overrides.
constexpr std::string_view kSeedKey = "seed";
constexpr std::string_view kSelectorKey = "kernel.selector";
constexpr std::string_view kPlacementKey = "kernel.placement";

// Checks the syntax of a dotted path as --set does; a bad one fails at `node`.
void check_path(const JsonNode& node, const std::string& path, const json& value) {
  try {
    workload::parse_override(path + "=" + compact_json(value), "");
  } catch (const ConfigError& error) {
    node.fail(error.what());
  }
}

bool is_hex16(const std::string& text) {
  return text.size() == 16 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// The scenario reference of a sweep: a name stays a name; a path is taken from the sweep
// file's directory.
std::string resolve_scenario(const std::string& reference, const fs::path& sweep_file) {
  const fs::path path(reference);
  const bool is_path = reference.find('/') != std::string::npos || path.extension() == ".json";
  if (!is_path || path.is_absolute()) return reference;
  return (sweep_file.parent_path() / path).lexically_normal().string();
}

std::vector<NamedValue> read_pairs(const JsonNode& node) {
  std::vector<NamedValue> pairs;
  for (const JsonNode& item : node.items()) {
    if (!item.is_array() || item.raw().size() != 2) item.fail_expected("a [name, value] pair");
    pairs.emplace_back(item.child(std::size_t{0}).as_string(), item.child(std::size_t{1}).raw());
  }
  return pairs;
}

ordered_json pairs_json(const std::vector<NamedValue>& pairs) {
  ordered_json out = ordered_json::array();
  for (const auto& [name, value] : pairs) {
    out.push_back(ordered_json::array({name, ordered_json::parse(compact_json(value))}));
  }
  return out;
}

// Takes every key of `keys`, then rejects any other key (naming the closest valid one), so that
// a misspelt required key is reported as unknown, with the right spelling, not as missing.
void reject_unknown_keys(ObjectReader& reader, std::initializer_list<std::string_view> keys) {
  for (const std::string_view key : keys) reader.optional(key);
  reader.finish();
}

// a * b, or UINT64_MAX when the product does not fit.
std::uint64_t saturating_product(std::uint64_t a, std::uint64_t b) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  return a != 0 && b > kMax / a ? kMax : a * b;
}

std::string count_text(std::uint64_t count) {
  return count == std::numeric_limits<std::uint64_t>::max() ? "at least " + std::to_string(count)
                                                            : std::to_string(count);
}

// Refuses a sweep of more than kMaxSweepRuns runs, counted from the raw document before any
// part of it is read: axes of many values, or many seeds, would otherwise be built and compared
// first. A part of the wrong type counts as one; reading it fails later.
void check_run_count(const JsonNode& root) {
  const json& raw = root.raw();
  const auto array_size = [&](const char* key) -> std::uint64_t {
    const auto it = raw.find(key);
    return it != raw.end() && it->is_array() && !it->empty() ? it->size() : 1;
  };
  std::uint64_t points = 1;
  if (const auto axes = raw.find("axes"); axes != raw.end() && axes->is_array()) {
    for (const json& axis : *axes) {
      if (!axis.is_object()) continue;
      const auto values = axis.find("values");
      if (values != axis.end() && values->is_array() && !values->empty()) {
        points = saturating_product(points, values->size());
      }
    }
  }
  const std::uint64_t selectors = array_size("selectors");
  std::uint64_t seeds = array_size("seeds");
  if (const auto it = raw.find("seeds"); it != raw.end() && it->is_number()) {
    // A count, written as an integer or as a float (1e6 and 1000000.0 are counts too); only
    // its size matters here.
    const double count = it->get<double>();
    if (count > 1) seeds = count < 1.8e19 ? static_cast<std::uint64_t>(count) : UINT64_MAX;
  }
  const std::uint64_t runs = saturating_product(saturating_product(points, selectors), seeds);
  if (runs <= kMaxSweepRuns) return;
  const char* largest = points >= selectors && points >= seeds ? "axes"
                        : selectors >= seeds                   ? "selectors"
                                                               : "seeds";
  root.child(largest).fail("expected at most " + std::to_string(kMaxSweepRuns) +
                           " runs (points x selectors x seeds), got " + count_text(runs) + " (" +
                           count_text(points) + " point(s) x " + std::to_string(selectors) +
                           " selector(s) x " + std::to_string(seeds) +
                           " seed(s)); use fewer values, selectors or seeds, or split the sweep");
}

// A hash of a JSON value that is equal for values that compare equal: every number is hashed
// by its value as a double, since 1 and 1.0 are equal.
std::size_t value_hash(const json& value) {
  const auto combine = [](std::size_t seed, std::size_t hash) {
    return seed ^ (hash + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
  };
  if (value.is_number()) return std::hash<double>{}(value.get<double>());
  std::size_t hash = static_cast<std::size_t>(value.type());
  if (value.is_string())
    return combine(hash, std::hash<std::string>{}(value.get_ref<const std::string&>()));
  if (value.is_boolean()) return combine(hash, value.get<bool>() ? 1 : 0);
  if (value.is_object()) {
    for (const auto& [key, element] : value.items()) {
      hash = combine(combine(hash, std::hash<std::string>{}(key)), value_hash(element));
    }
  } else if (value.is_array()) {
    for (const json& element : value) hash = combine(hash, value_hash(element));
  }
  return hash;
}

}  // namespace

std::string value_label(const json& value) {
  return value.is_string() ? console_text(value.get<std::string>()) : compact_json(value);
}

Sweep parse_sweep(const JsonNode& root, const fs::path& file) {
  ObjectReader reader(root);
  Sweep sweep;
  sweep.file = root.file();

  const JsonNode schema = reader.required("schema");
  if (schema.as_string() != kSweepSchema) {
    schema.fail_expected("\"" + std::string(kSweepSchema) + "\"");
  }
  reject_unknown_keys(reader, {"name", "description", "scenario", "set", "axes", "selectors",
                               "placement", "seeds"});
  check_run_count(root);
  sweep.name = reader.required("name").as_name();
  sweep.description = reader.string_or("description", "");
  const JsonNode scenario = reader.required("scenario");
  const std::string reference = scenario.as_string();
  if (reference.empty()) scenario.fail_expected("a scenario name or path");
  sweep.scenario = resolve_scenario(reference, file);

  // Every overridden path, with where it was given, so that no path is set twice.
  std::map<std::string, std::string> seen_keys;
  const auto take_key = [&](const JsonNode& at, const std::string& key) {
    if (key == kSeedKey) at.fail("seeds are chosen by \"seeds\", not by an override of \"seed\"");
    for (const auto& [seen, pointer] : seen_keys) {
      if (seen == key) at.fail("\"" + key + "\" is already set at " + pointer);
      if (workload::paths_overlap(seen, key)) {
        at.fail("\"" + key + "\" overlaps \"" + seen + "\", set at " + pointer +
                ": the later would undo the earlier");
      }
    }
    seen_keys.emplace(key, at.pointer());
  };

  if (const auto set = reader.optional("set")) {
    if (!set->is_object()) set->fail_expected("an object of dotted paths and values");
    for (const auto& [key, value] : set->raw().items()) {
      const JsonNode at = set->child(key);
      check_path(at, key, value);
      take_key(at, key);
      sweep.set.emplace_back(key, value);
    }
  }

  if (const auto axes = reader.optional("axes")) {
    for (const JsonNode& node : axes->items()) {
      ObjectReader axis_reader(node);
      reject_unknown_keys(axis_reader, {"name", "key", "keys", "values"});
      Axis axis;
      const auto key = axis_reader.optional("key");
      const auto keys = axis_reader.optional("keys");
      if (key.has_value() == keys.has_value()) {
        node.fail(key ? "give \"key\" or \"keys\", not both"
                      : "missing required key \"key\" (one dotted path) or \"keys\" (several)");
      }
      std::vector<JsonNode> key_nodes;
      if (key) {
        key_nodes.push_back(*key);
      } else {
        key_nodes = keys->items();
        if (key_nodes.empty()) keys->fail_expected("a non-empty array of dotted paths");
      }
      for (const JsonNode& k : key_nodes) axis.keys.push_back(k.as_string());
      if (const auto axis_name = axis_reader.optional("name")) {
        axis.name = axis_name->as_name();
      } else if (axis.keys.size() == 1) {
        axis.name = axis.keys[0];
      } else {
        node.fail("missing required key \"name\" (an axis of several keys needs a name)");
      }
      for (const Axis& other : sweep.axes) {
        if (other.name == axis.name) {
          node.fail("axis name \"" + axis.name + "\" is used by an earlier axis");
        }
      }
      const JsonNode values = axis_reader.required("values");
      std::unordered_multimap<std::size_t, std::size_t> seen_values;  // hash -> index
      for (const JsonNode& value : values.items()) {
        const std::size_t hash = value_hash(value.raw());
        const auto [begin, end] = seen_values.equal_range(hash);
        for (auto it = begin; it != end; ++it) {
          if (axis.values[it->second] == value.raw()) {
            value.fail("value " + compact_json(value.raw()) + " given twice");
          }
        }
        seen_values.emplace(hash, axis.values.size());
        axis.values.push_back(value.raw());
      }
      if (axis.values.empty()) values.fail_expected("a non-empty array of values");
      for (std::size_t k = 0; k < axis.keys.size(); ++k) {
        check_path(key_nodes[k], axis.keys[k], axis.values[0]);
        take_key(key_nodes[k], axis.keys[k]);
      }
      sweep.axes.push_back(std::move(axis));
    }
  }

  // "selectors" and "placement" choose for every run: a key of "set" or an axis that sets the
  // same value, or an object holding it ("kernel"), would be overridden without a word.
  const auto reject_chosen = [&](std::string_view path, std::string_view field) {
    for (const auto& [key, pointer] : seen_keys) {
      if (!workload::path_sets(key, path)) continue;
      const std::string what =
          key == path ? quote_text(std::string(path))
                      : quote_text(key) + " holds " + quote_text(std::string(path)) + ", which";
      throw ConfigError(sweep.file + ": " + pointer + ": " + what + " is chosen by \"" +
                        std::string(field) + "\"; drop one of them");
    }
  };
  if (const auto selectors = reader.optional("selectors")) {
    const std::vector<JsonNode> items = selectors->items();
    if (items.empty()) selectors->fail_expected("a non-empty array of selector names");
    std::set<std::string> seen_selectors;
    for (const JsonNode& item : items) {
      std::string selector = item.as_string();
      if (!seen_selectors.insert(selector).second) {
        item.fail("selector \"" + selector + "\" given twice");
      }
      sweep.selectors.push_back(std::move(selector));
    }
    reject_chosen(kSelectorKey, "selectors");
  }
  if (const auto placement = reader.optional("placement")) {
    sweep.placement = placement->as_string();
    reject_chosen(kPlacementKey, "placement");
  }

  const JsonNode seeds = reader.required("seeds");
  if (seeds.is_array()) {
    const std::vector<JsonNode> items = seeds.items();
    if (items.empty()) seeds.fail_expected("a non-empty array of seeds, or a count");
    std::set<std::uint64_t> seen_seeds;
    for (const JsonNode& item : items) {
      const std::uint64_t seed = item.as_uint64();
      if (!seen_seeds.insert(seed).second) {
        item.fail("seed " + std::to_string(seed) + " given twice");
      }
      sweep.seeds.push_back(seed);
    }
  } else {
    if (!seeds.raw().is_number()) seeds.fail_expected("a count of seeds or an array of seeds");
    const std::int64_t count = seeds.as_int(1, kMaxSeedCount);
    for (std::int64_t s = 1; s <= count; ++s) sweep.seeds.push_back(static_cast<std::uint64_t>(s));
  }
  return sweep;
}

Sweep load_sweep(const fs::path& file) {
  const JsonDocument document = JsonDocument::parse_file(file);
  return parse_sweep(document.root(), file);
}

std::string identity_json(const RunSpec& run) {
  json identity = json::object();
  json overrides = json::array();
  for (const auto& [path, value] : run.overrides) overrides.push_back(json::array({path, value}));
  identity["overrides"] = std::move(overrides);
  identity["placement"] = run.placement;
  identity["scenario"] = run.scenario_hash;
  identity["seed"] = run.seed;
  identity["selector"] = run.selector;
  return compact_json(identity);
}

std::string run_id_of(const RunSpec& run) { return hex64(fnv1a64(identity_json(run))); }

std::string scenario_hash(const json& document) { return hex64(document_hash(document)); }

std::string scenario_file_hash(const fs::path& file) {
  return scenario_hash(JsonDocument::parse_file(file).value());
}

std::vector<workload::Override> to_overrides(const std::vector<NamedValue>& values) {
  std::vector<workload::Override> out;
  out.reserve(values.size());
  for (const auto& [path, value] : values) {
    out.push_back(workload::Override{path, value, path + "=" + compact_json(value)});
  }
  return out;
}

std::vector<RunSpec> expand_sweep(const Sweep& sweep, const selectors::SelectorRegistry& registry,
                                  const DataDirs& dirs, std::vector<std::string>* topology_files) {
  const auto fail_at = [&](const std::string& pointer, const std::string& message) {
    throw ConfigError(sweep.file + ": " + pointer + ": " + message);
  };
  // Loads the scenario under `overrides` and checks its topology and (unless the sweep sets
  // them) its placement: what a run needs before it can start.
  // Each topology is checked once for each set of its values the sweep overrides.
  std::set<std::string> checked_topologies;
  const auto load = [&](const std::vector<NamedValue>& overrides) {
    workload::Scenario scenario =
        workload::load_scenario(sweep.scenario, dirs.scenarios, registry, to_overrides(overrides));
    if (!sweep.placement) sched::make_placement(scenario.kernel.placement);
    std::string topology = workload::topology_reference(scenario);
    for (const NamedValue& o : overrides) {
      if (workload::is_topology_path(o.first))
        topology += '\n' + o.first + '=' + compact_json(o.second);
    }
    if (!checked_topologies.count(topology)) {
      static_cast<void>(workload::load_topology(scenario, dirs.topologies));
      checked_topologies.insert(topology);  // only once it loaded: a retry must fail again
      const std::string file = workload::topology_file(scenario, dirs.topologies).string();
      if (topology_files && std::find(topology_files->begin(), topology_files->end(), file) ==
                                topology_files->end()) {
        topology_files->push_back(file);
      }
    }
    return scenario;
  };

  std::string hash;
  try {
    hash = scenario_file_hash(
        resolve_data_file(sweep.scenario, dirs.scenarios, "scenario", "scenarios"));
    load(sweep.set);
  } catch (const ConfigError& error) {
    // The set is at fault only if the scenario loads without it.
    if (sweep.set.empty()) fail_at("/scenario", error.what());
    try {
      load({});
    } catch (const ConfigError& own_error) {
      fail_at("/scenario", own_error.what());
    }
    fail_at("/set", error.what());
  }
  // Each axis value on its own first, so that an error names the value at fault.
  for (std::size_t a = 0; a < sweep.axes.size(); ++a) {
    const Axis& axis = sweep.axes[a];
    // An axis within the selectors' parameters must change some selector's: the parameters
    // other than the defaults of each selector the sweep runs, by axis value.
    const bool of_selector_params =
        std::all_of(axis.keys.begin(), axis.keys.end(), workload::within_selector_params);
    workload::ParamsBySelector params_by_selector;
    for (std::size_t v = 0; v < axis.values.size(); ++v) {
      std::vector<NamedValue> overrides = sweep.set;
      for (const std::string& key : axis.keys) overrides.emplace_back(key, axis.values[v]);
      try {
        const workload::Scenario scenario = load(overrides);
        if (!of_selector_params) continue;
        const std::vector<std::string> own = {scenario.kernel.selector};
        for (const std::string& selector : sweep.selectors.empty() ? own : sweep.selectors) {
          if (!registry.contains(selector)) continue;  // reported at /selectors below
          params_by_selector[selector].insert(
              workload::create_selector(registry, selector, scenario.kernel)->non_default_params());
        }
      } catch (const ConfigError& error) {
        fail_at("/axes/" + std::to_string(a) + "/values/" + std::to_string(v), error.what());
      }
    }
    if (const auto selectors = workload::unchanged_selectors(params_by_selector)) {
      fail_at("/axes/" + std::to_string(a),
              "it changes the parameters of no selector the sweep "
              "runs (" +
                  *selectors + "), so its points would be alike");
    }
  }
  for (std::size_t s = 0; s < sweep.selectors.size(); ++s) {
    try {
      registry.create(sweep.selectors[s]);
    } catch (const ConfigError& error) {
      fail_at("/selectors/" + std::to_string(s), error.what());
    }
  }
  if (sweep.placement) {
    try {
      sched::make_placement(*sweep.placement);
    } catch (const ConfigError& error) {
      fail_at("/placement", error.what());
    }
  }

  std::vector<RunSpec> runs;
  std::vector<std::size_t> position(sweep.axes.size(), 0);  // odometer, last axis fastest
  while (true) {
    std::vector<NamedValue> axes;
    std::vector<NamedValue> overrides = sweep.set;
    std::string where;
    for (std::size_t a = 0; a < sweep.axes.size(); ++a) {
      const Axis& axis = sweep.axes[a];
      const json& value = axis.values[position[a]];
      axes.emplace_back(axis.name, value);
      for (const std::string& key : axis.keys) overrides.emplace_back(key, value);
      if (a > 0) where += ", ";
      where += axis.name;
      where += '=';
      where += value_label(value);
    }
    const std::string pointer = sweep.axes.empty() ? "/scenario" : "/axes";
    const std::string context = sweep.axes.empty() ? std::string() : "the run with " + where + ": ";
    std::vector<std::string> selector_names = sweep.selectors;
    std::string placement;
    try {
      const workload::Scenario scenario = load(overrides);
      if (selector_names.empty()) selector_names.push_back(scenario.kernel.selector);
      placement = sweep.placement.value_or(scenario.kernel.placement);
    } catch (const ConfigError& error) {
      fail_at(pointer, context + error.what());
    }
    for (const std::string& selector : selector_names) {
      for (const std::uint64_t seed : sweep.seeds) {
        RunSpec run;
        run.index = runs.size();
        run.sweep = sweep.name;
        run.scenario = sweep.scenario;
        run.scenario_hash = hash;
        run.axes = axes;
        run.overrides = overrides;
        run.selector = selector;
        run.placement = placement;
        run.seed = seed;
        run.run_id = run_id_of(run);
        runs.push_back(std::move(run));
      }
    }
    // Next combination: advance the last axis, carrying into earlier ones.
    std::size_t a = sweep.axes.size();
    while (a > 0 && ++position[a - 1] == sweep.axes[a - 1].values.size()) position[--a] = 0;
    if (a == 0) break;
  }
  return runs;
}

ordered_json run_to_json(const RunSpec& run) {
  ordered_json j = ordered_json::object();
  j["index"] = run.index;
  j["run_id"] = run.run_id;
  j["sweep"] = run.sweep;
  j["scenario"] = run.scenario;
  j["scenario_hash"] = run.scenario_hash;
  j["axes"] = pairs_json(run.axes);
  j["overrides"] = pairs_json(run.overrides);
  j["selector"] = run.selector;
  j["placement"] = run.placement;
  j["seed"] = run.seed;
  return j;
}

std::string run_line(const RunSpec& run) {
  return run_to_json(run).dump(-1, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

RunSpec parse_run(const JsonNode& node) {
  ObjectReader reader(node);
  RunSpec run;
  run.index = static_cast<std::size_t>(reader.required("index").as_int(0, kMaxInt64));
  const JsonNode run_id = reader.required("run_id");
  run.run_id = run_id.as_string();
  run.sweep = reader.required("sweep").as_name();
  run.scenario = reader.required("scenario").as_string();
  const JsonNode hash = reader.required("scenario_hash");
  run.scenario_hash = hash.as_string();
  if (!is_hex16(run.scenario_hash)) hash.fail_expected("16 lowercase hex digits");
  const JsonNode axes = reader.required("axes");
  run.axes = read_pairs(axes);
  // Names, as the sweep file gives them: no control characters.
  for (const JsonNode& axis : axes.items()) axis.child(std::size_t{0}).as_name();
  const JsonNode overrides = reader.required("overrides");
  run.overrides = read_pairs(overrides);
  run.selector = reader.required("selector").as_name();
  run.placement = reader.required("placement").as_name();
  run.seed = reader.required("seed").as_uint64();
  // The run's own fields choose these. sweep expand writes a sweep's own set or axis of the
  // selector or placement (the sweep naming no selectors or placement) with the same value as
  // the field; an override of the seed, or one that disagrees with the field, would change the
  // run id and nothing else.
  for (std::size_t i = 0; i < run.overrides.size(); ++i) {
    const auto& [path, value] = run.overrides[i];
    const std::string* field = path == kSelectorKey    ? &run.selector
                               : path == kPlacementKey ? &run.placement
                                                       : nullptr;
    if (path == kSeedKey || (field != nullptr && value != nlohmann::json(*field))) {
      overrides.child(i)
          .child(std::size_t{0})
          .fail("\"" + path + "\" is chosen by the run's own field" +
                (field != nullptr ? " (\"" + *field + "\")" : std::string()) +
                ", not by an override that differs from it");
    }
  }
  reader.finish();
  const std::string expected = run_id_of(run);
  if (run.run_id != expected) {
    run_id.fail_expected("\"" + expected +
                         "\" (the hash of scenario_hash, overrides, selector, placement and seed)");
  }
  return run;
}

std::vector<RunSpec> read_runs_file(const fs::path& file) {
  const std::string text = read_input_file(file, "a runs file (JSON Lines)");
  std::vector<RunSpec> runs;
  std::map<std::size_t, std::size_t> line_of_index;
  std::map<std::string, std::size_t> line_of_run;
  std::size_t line_number = 0;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t newline = std::min(text.find('\n', start), text.size());
    const std::string_view line(text.data() + start, newline - start);
    start = newline + 1;
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const std::string name = file.string() + ":" + std::to_string(line_number);
    const JsonDocument document = JsonDocument::parse_text(line, name);
    RunSpec run = parse_run(document.root());
    if (const auto [it, added] = line_of_index.emplace(run.index, line_number); !added) {
      document.root().child("index").fail("index " + std::to_string(run.index) +
                                          " is also the index of line " +
                                          std::to_string(it->second));
    }
    // A run listed twice would be run twice at once into the same result file.
    if (const auto [it, added] = line_of_run.emplace(run.run_id, line_number); !added) {
      document.root().child("run_id").fail("run " + run.run_id + " is also the run of line " +
                                           std::to_string(it->second));
    }
    runs.push_back(std::move(run));
  }
  if (runs.empty()) throw ConfigError(file.string() + ": no runs (the file has no lines)");
  return runs;
}

}  // namespace bindersim::sweep
