// Reading the report's inputs (result, compare and sweep summary documents) and the per-policy
// figures its charts draw.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "bindersim/common/error.hpp"
#include "bindersim/io/compare_report.hpp"
#include "bindersim/io/report.hpp"
#include "bindersim/io/result_json.hpp"
#include "bindersim/stats/result.hpp"
#include "bindersim/sweep/merge.hpp"

namespace bindersim::io {

namespace {

std::optional<double> read_optional_number(const JsonNode& node) {
  if (node.is_null()) return std::nullopt;
  if (!node.raw().is_number() || !std::isfinite(node.raw().get<double>())) {
    node.fail_expected("a number or null");
  }
  return node.raw().get<double>();
}

// A confidence half-width: a non-negative number, or null.
std::optional<double> read_optional_half_width(const JsonNode& node) {
  const std::optional<double> value = read_optional_number(node);
  if (value && *value < 0.0) node.fail_expected("a non-negative number or null");
  return value;
}

std::optional<bool> read_optional_bool(const JsonNode& node) {
  if (node.is_null()) return std::nullopt;
  if (!node.raw().is_boolean()) node.fail_expected("true, false or null");
  return node.raw().get<bool>();
}

// Stands for the file in messages of a result read out of a compare file; replaced by the
// compare file's name and the result's pointer. Control characters keep it from matching a
// real file name.
constexpr std::string_view kEmbeddedName =
    "\x1e"
    "embedded result\x1e";

// Reads `value`, the result document at `node` of a compare or sweep summary file (as written,
// or completed with the keys the file leaves out). Its errors name the file and the full
// pointer ("/runs/3/result/tiers/...").
ResultDocument read_embedded_result(const nlohmann::json& value, const JsonNode& node) {
  const JsonDocument document = JsonDocument::from_value(value, std::string(kEmbeddedName));
  try {
    ResultDocument result = read_result(document);
    result.file = node.file();
    return result;
  } catch (const ConfigError& error) {
    const std::string message = error.what();
    const std::string prefix = std::string(kEmbeddedName) + ": ";
    if (message.rfind(prefix, 0) != 0) throw;
    std::string rest = message.substr(prefix.size());
    // The embedded root is written "/"; every pointer below it starts with "/".
    if (rest.rfind("/: ", 0) == 0) rest.erase(0, 1);
    throw ConfigError(node.file() + ": " + node.pointer() + rest);
  }
}

// The `scheduler` object of the result document at `root`, if it has one.
std::optional<SchedulerFields> read_scheduler(const JsonNode& root) {
  if (!root.is_object() || !root.raw().contains("scheduler")) return std::nullopt;
  ObjectReader r(root.child("scheduler"));
  SchedulerFields fields;
  fields.governor = r.required("governor").as_enum(stats::kGovernorNames);
  for (const JsonNode& cluster : r.required("clusters").items()) {
    ObjectReader c(cluster);
    std::string name = c.required("name").as_string();
    fields.cluster_mean_freq_khz.emplace_back(std::move(name),
                                              c.required("mean_freq_khz").as_strict_uint64());
  }
  for (const JsonNode& share : r.required("cpu_busy_share").items()) {
    fields.cpu_busy_share.push_back(share.as_number(0.0, 1.0));
  }
  return fields;
}

// A value as a table shows it: a string without its quotes, anything else as compact JSON.
std::string value_text(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : compact_json(value);
}

// Appends "key=value" to a policy's overrides text, ", " between them.
void add_override(std::string& text, const std::string& key, const nlohmann::json& value) {
  if (!text.empty()) text += ", ";
  text += key + "=" + value_text(value);
}

ReportPolicy policy_of_result(ResultDocument result, std::optional<SchedulerFields> scheduler) {
  ReportPolicy policy;
  if (!result.overrides.empty()) {  // read_result() checked the [path, value] pairs
    for (const nlohmann::json& pair : nlohmann::json::parse(result.overrides)) {
      add_override(policy.overrides, pair[0].get<std::string>(), pair[1]);
    }
  }
  // A selector run with parameters is another policy: they are part of its label.
  policy.label = result.selector_params.empty() ? result.selector
                                                : result.selector + " " + result.selector_params;
  policy.source = result.file;
  policy.scenario = result.scenario;
  policy.topology = result.topology;
  policy.selector = result.selector;
  policy.placement = result.placement;
  policy.runs.push_back(std::move(result));
  policy.schedulers.push_back(std::move(scheduler));
  return policy;
}

// Position of a summary key in the compare report's metric order; the number of metrics for an
// unknown key.
std::size_t metric_rank(const std::vector<stats::Metric>& metrics, const std::string& key) {
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    if (metrics[i].key == key) return i;
  }
  return metrics.size();
}

std::string metric_label(const std::vector<stats::Metric>& metrics, const std::string& key) {
  const std::size_t rank = metric_rank(metrics, key);
  return rank < metrics.size() ? metrics[rank].label : key;
}

stats::Better read_better(const JsonNode& node) {
  const std::string better = node.as_enum({"lower", "higher", "neutral"});
  return better == "lower"    ? stats::Better::kLower
         : better == "higher" ? stats::Better::kHigher
                              : stats::Better::kNeutral;
}

// The error message for a summary key that is not one of the comparison metrics.
std::string unknown_metric(const std::string& key, const std::vector<stats::Metric>& metrics) {
  std::vector<std::string> keys;
  for (const stats::Metric& metric : metrics) keys.push_back(metric.key);
  return "unknown metric" + did_you_mean(key, keys) + "; valid metrics: " + name_list(keys);
}

// The mean (or value), ci95, delta_pct and significant of one cell, after `r` read its other
// keys.
ReportCompareCell read_cell(ObjectReader& r, std::string_view value_key) {
  ReportCompareCell cell;
  cell.mean = read_optional_number(r.required(value_key));
  cell.ci95 = read_optional_half_width(r.required("ci95"));
  cell.delta_pct = read_optional_number(r.required("delta_pct"));
  cell.significant = read_optional_bool(r.required("significant"));
  r.finish();
  return cell;
}

ReportCompareRow read_summary_row(const JsonNode& node, const std::string& key,
                                  const std::vector<std::string>& columns,
                                  const std::vector<stats::Metric>& metrics) {
  ObjectReader r(node);
  ReportCompareRow row;
  row.key = key;
  row.label = metric_label(metrics, key);
  row.unit = r.required("unit").as_string();
  row.better = read_better(r.required("better"));
  const JsonNode cells = r.required("columns");
  const std::vector<JsonNode> items = cells.items();
  if (items.size() != columns.size()) {
    cells.fail("expected " + std::to_string(columns.size()) + " cells (one per column), got " +
               std::to_string(items.size()));
  }
  for (std::size_t c = 0; c < items.size(); ++c) {
    ObjectReader cell_reader(items[c]);
    const JsonNode label = cell_reader.required("label");
    if (label.as_string() != columns[c]) {
      label.fail_expected(quote_text(columns[c]) + " (the label of column " + std::to_string(c) +
                          ")");
    }
    row.cells.push_back(read_cell(cell_reader, "mean"));
  }
  r.finish();
  return row;
}

// Seeds, each once: non-negative integers listed at most once, and none of `exclude`.
std::vector<std::uint64_t> read_seed_list(const JsonNode& node,
                                          const std::vector<std::uint64_t>& exclude = {}) {
  std::vector<std::uint64_t> seeds;
  for (const JsonNode& item : node.items()) {
    const std::uint64_t seed = item.as_strict_uint64();
    if (std::find(seeds.begin(), seeds.end(), seed) != seeds.end() ||
        std::find(exclude.begin(), exclude.end(), seed) != exclude.end()) {
      item.fail_expected("each seed once");
    }
    seeds.push_back(seed);
  }
  return seeds;
}

// A compare document: one policy per column, and its summary table.
void read_compare(const JsonDocument& document, ReportData& data) {
  ObjectReader root(document.root());
  root.required("schema");  // checked by the caller
  ReportCompareTable table;
  table.source = document.name();
  table.scenario = root.required("scenario").as_string();
  table.topology = root.required("topology").as_string();
  table.seeds = read_seed_list(root.required("seeds"));

  std::vector<ReportPolicy> policies;
  CompareReport overrides_only;  // the columns' overrides, for report_varied_paths()
  // The scenario name each column's runs carry: the document's, or the column's override of
  // "name" (compare --vary name=...).
  std::vector<std::string> run_scenarios;
  const JsonNode columns = root.required("columns");
  for (const JsonNode& column : columns.items()) {
    ObjectReader c(column);
    ReportPolicy policy;
    policy.source = document.name();
    const JsonNode label = c.required("label");
    policy.label = label.as_name();
    const auto same = std::find(table.columns.begin(), table.columns.end(), policy.label);
    if (same != table.columns.end()) {
      label.fail_expected("a label unique among the columns (/columns/" +
                          std::to_string(same - table.columns.begin()) + " has it too)");
    }
    policy.selector = c.required("selector").as_string();
    const JsonNode overrides = c.required("overrides");
    if (!overrides.is_object()) overrides.fail_expected("an object");
    std::string run_scenario = table.scenario;
    CompareColumn& with_overrides = overrides_only.columns.emplace_back();
    for (const auto& [key, value] : overrides.raw().items()) {
      with_overrides.overrides.emplace_back(key,
                                            nlohmann::ordered_json::parse(compact_json(value)));
      add_override(policy.overrides, key, value);
      if (key == "name" && value.is_string()) run_scenario = value.get<std::string>();
    }
    c.finish();
    table.columns.push_back(policy.label);
    policies.push_back(std::move(policy));
    run_scenarios.push_back(std::move(run_scenario));
  }
  if (policies.empty()) columns.fail("expected at least one column, got none");
  table.varies = report_varied_paths(overrides_only);

  // Where each (column, seed) was listed: every run is listed once.
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::string> listed;
  for (const JsonNode& run : root.required("runs").items()) {
    ObjectReader r(run);
    const JsonNode column_node = r.required("column");
    const std::uint64_t column = column_node.as_strict_uint64();
    if (column >= policies.size()) {
      column_node.fail_expected("a column index below " + std::to_string(policies.size()));
    }
    const JsonNode seed_node = r.required("seed");
    const std::uint64_t seed = seed_node.as_strict_uint64();
    if (std::find(table.seeds.begin(), table.seeds.end(), seed) == table.seeds.end()) {
      seed_node.fail_expected("one of the document's seeds (/seeds)");
    }
    const auto [first, added] = listed.try_emplace({column, seed}, run.pointer());
    if (!added) {
      run.fail("expected each (column, seed) once, got column " + std::to_string(column) +
               " seed " + std::to_string(seed) + " again (first at " + first->second + ")");
    }
    const JsonNode result_node = r.required("result");
    ResultDocument result = read_embedded_result(result_node.raw(), result_node);
    ReportPolicy& policy = policies[column];
    if (result.seed != seed) {
      result_node.child("seed").fail_expected("the run's seed " + std::to_string(seed));
    }
    if (result.scenario != run_scenarios[column]) {
      result_node.child("scenario")
          .fail_expected(
              quote_text(run_scenarios[column]) +
              (run_scenarios[column] == table.scenario
                   ? " (the document's /scenario)"
                   : " (the \"name\" of column " + std::to_string(column) + "'s overrides)"));
    }
    if (result.selector != policy.selector) {
      result_node.child("selector")
          .fail_expected(quote_text(policy.selector) + " (the selector of column " +
                         std::to_string(column) + ")");
    }
    r.finish();
    policy.runs.push_back(std::move(result));
    policy.schedulers.push_back(read_scheduler(result_node));
  }
  for (std::size_t c = 0; c < policies.size(); ++c) {
    if (policies[c].runs.empty()) {
      columns.child(c).fail("expected at least one run of this column in /runs, got none");
    }
    for (const std::uint64_t seed : table.seeds) {
      if (!listed.contains({c, seed})) {
        columns.child(c).fail(
            "expected a run of this column for each seed in /seeds, got none "
            "for seed " +
            std::to_string(seed));
      }
    }
    const ResultDocument& first = policies[c].runs.front();
    policies[c].scenario = first.scenario;
    policies[c].topology = first.topology;
    policies[c].placement = first.placement;
  }

  const std::vector<stats::Metric> metrics = stats::comparison_metrics();
  const JsonNode summary = root.required("summary");
  if (!summary.is_object()) summary.fail_expected("an object");
  for (const auto& item : summary.raw().items()) {
    if (metric_rank(metrics, item.key()) == metrics.size()) {
      summary.child(item.key()).fail(unknown_metric(item.key(), metrics));
    }
    table.rows.push_back(
        read_summary_row(summary.child(item.key()), item.key(), table.columns, metrics));
  }
  // The parsed object orders keys by name; the compare report's order is the metrics' order.
  std::stable_sort(table.rows.begin(), table.rows.end(),
                   [&](const ReportCompareRow& a, const ReportCompareRow& b) {
                     return metric_rank(metrics, a.key) < metric_rank(metrics, b.key);
                   });
  root.finish();

  data.inputs.push_back({document.name(), fmt::format("compare document: {} column(s) × {} seed(s)",
                                                      table.columns.size(), table.seeds.size())});
  for (ReportPolicy& policy : policies) data.policies.push_back(std::move(policy));
  data.compares.push_back(std::move(table));
}

// A point's (or missing run's) axis values: an object with exactly the sweep's axes, read as
// text in the order of `axes`.
std::vector<std::string> read_axis_values(const JsonNode& node,
                                          const std::vector<std::string>& axes) {
  ObjectReader r(node);
  std::vector<std::string> values;
  for (const std::string& axis : axes) values.push_back(value_text(r.required(axis).raw()));
  r.finish();
  return values;
}

// The `runs` object of a sweep summary: how many runs were listed, merged, ignored and missing.
void read_sweep_runs(const JsonNode& node, ReportSweep& sweep) {
  ObjectReader r(node);
  const JsonNode listed = r.required("listed");
  if (!listed.is_null()) sweep.listed = listed.as_strict_uint64();
  sweep.merged = r.required("merged").as_strict_uint64();
  sweep.ignored = r.required("ignored").as_strict_uint64();
  for (const JsonNode& run : r.required("missing").items()) {
    ObjectReader m(run);
    m.required("index").as_strict_uint64();
    m.required("run_id").as_name();
    read_axis_values(m.required("axes"), sweep.axes);
    m.required("selector").as_name();
    m.required("placement").as_name();
    m.required("seed").as_strict_uint64();
    m.finish();
    ++sweep.missing;
  }
  r.finish();
}

// One column of a sweep point into the point's table: its label, seeds and metric cells (one
// per row of `point.table`, whose rows name the sweep's metrics). Returns the pooled run's
// scenario and topology, or nullopt when the column merged no run.
std::optional<std::pair<std::string, std::string>> read_sweep_column(const JsonNode& node,
                                                                     ReportSweepPoint& point) {
  ObjectReader c(node);
  const JsonNode label = c.required("label");
  const std::string name = label.as_name();
  const auto same = std::find(point.table.columns.begin(), point.table.columns.end(), name);
  if (same != point.table.columns.end()) {
    label.fail_expected("a label unique among the point's columns (column " +
                        std::to_string(same - point.table.columns.begin()) + " has it too)");
  }
  point.table.columns.push_back(name);
  const std::string selector = c.required("selector").as_name();
  const std::string placement = c.required("placement").as_name();
  const JsonNode seeds_node = c.required("seeds");
  std::vector<std::uint64_t> seeds = read_seed_list(seeds_node);
  const JsonNode run_ids = c.required("run_ids");
  const std::vector<JsonNode> ids = run_ids.items();
  if (ids.size() != seeds.size()) {
    run_ids.fail("expected " + std::to_string(seeds.size()) + " run ids (one per seed), got " +
                 std::to_string(ids.size()));
  }
  for (const JsonNode& id : ids) id.as_name();
  const JsonNode missing_node = c.required("missing_seeds");
  std::vector<std::uint64_t> missing = read_seed_list(missing_node, seeds);
  if (seeds.empty() && missing.empty()) {
    seeds_node.fail("expected at least one seed, merged or missing, got none");
  }
  ObjectReader metrics(c.required("metrics"));
  for (ReportCompareRow& row : point.table.rows) {
    ObjectReader cell(metrics.required(row.key));
    row.cells.push_back(read_cell(cell, "value"));
  }
  metrics.finish();

  const JsonNode pooled = c.required("pooled");
  std::optional<std::pair<std::string, std::string>> names;
  if (seeds.empty()) {
    if (!pooled.is_null()) pooled.fail_expected("null (the column merged no run)");
  } else {
    if (!pooled.is_object()) pooled.fail_expected("the pooled run (an object)");
    // The pooled run is a result document without a schema and a seed of its own.
    for (const std::string_view key : {"schema", "seed"}) {
      if (pooled.raw().contains(key)) pooled.child(key).fail("unknown key");
    }
    nlohmann::json value = pooled.raw();
    value["schema"] = kResultSchema;
    value["seed"] = seeds.front();
    const ResultDocument result = read_embedded_result(value, pooled);
    if (result.selector != selector) {
      pooled.child("selector").fail_expected(quote_text(selector) + " (the column's selector)");
    }
    if (result.placement != placement) {
      pooled.child("placement").fail_expected(quote_text(placement) + " (the column's placement)");
    }
    names.emplace(result.scenario, result.topology);
  }
  c.finish();
  for (const std::uint64_t seed : seeds) {
    if (std::find(point.table.seeds.begin(), point.table.seeds.end(), seed) ==
        point.table.seeds.end()) {
      point.table.seeds.push_back(seed);
    }
  }
  point.column_seeds.push_back(std::move(seeds));
  point.missing_seeds.push_back(std::move(missing));
  point.column_keys.emplace_back(selector, placement);
  return names;
}

// A sweep summary: one ReportSweep, a table per point.
void read_sweep(const JsonDocument& document, ReportData& data) {
  ObjectReader root(document.root());
  root.required("schema");  // checked by the caller
  ReportSweep sweep;
  sweep.source = document.name();
  sweep.name = root.required("sweep").as_string();
  for (const JsonNode& axis : root.required("axes").items()) {
    std::string name = axis.as_name();
    if (std::find(sweep.axes.begin(), sweep.axes.end(), name) != sweep.axes.end()) {
      axis.fail_expected("each axis name once");
    }
    sweep.axes.push_back(std::move(name));
  }

  // The rows every point's table has, without cells.
  const std::vector<stats::Metric> known = stats::comparison_metrics();
  std::vector<ReportCompareRow> rows;
  const JsonNode metrics = root.required("metrics");
  for (const JsonNode& metric : metrics.items()) {
    ObjectReader m(metric);
    ReportCompareRow& row = rows.emplace_back();
    const JsonNode key = m.required("key");
    row.key = key.as_string();
    if (metric_rank(known, row.key) == known.size()) key.fail(unknown_metric(row.key, known));
    if (std::count_if(rows.begin(), rows.end(),
                      [&](const ReportCompareRow& r) { return r.key == row.key; }) > 1) {
      key.fail_expected("each metric once");
    }
    row.label = m.required("label").as_name();
    row.unit = m.required("unit").as_string();
    row.better = read_better(m.required("better"));
    m.finish();
  }
  if (rows.empty()) metrics.fail("expected at least one metric, got none");

  read_sweep_runs(root.required("runs"), sweep);

  std::vector<std::string> scenarios;
  std::vector<std::string> topologies;
  std::vector<std::vector<nlohmann::json>> axis_values;  // per point, as in the file
  const JsonNode points = root.required("points");
  for (const JsonNode& point_node : points.items()) {
    ObjectReader p(point_node);
    ReportSweepPoint& point = sweep.points.emplace_back();
    const JsonNode axes = p.required("axes");
    point.axis_values = read_axis_values(axes, sweep.axes);
    std::vector<nlohmann::json>& values = axis_values.emplace_back();
    for (const std::string& axis : sweep.axes) values.push_back(axes.raw().at(axis));
    for (std::size_t k = 0; k + 1 < sweep.points.size(); ++k) {
      if (sweep.points[k].axis_values == point.axis_values) {
        axes.fail_expected("axis values of one point only (/points/" + std::to_string(k) +
                           " has them too)");
      }
    }
    point.table.source = sweep.source;
    point.table.rows = rows;
    const JsonNode columns = p.required("columns");
    for (const JsonNode& column : columns.items()) {
      if (const auto names = read_sweep_column(column, point)) {
        scenarios.push_back(names->first);
        topologies.push_back(names->second);
        point.table.scenario = names->first;
        point.table.topology = names->second;
      }
      const auto same = std::find(point.column_keys.begin(), point.column_keys.end() - 1,
                                  point.column_keys.back());
      if (same != point.column_keys.end() - 1) {
        column.fail(
            "expected one column per selector and placement, got a second " +
            quote_text(point.column_keys.back().first + " " + point.column_keys.back().second) +
            " (column " + std::to_string(same - point.column_keys.begin()) + ")");
      }
    }
    if (point.table.columns.empty()) columns.fail("expected at least one column, got none");
    std::sort(point.table.seeds.begin(), point.table.seeds.end());
    p.finish();
  }
  if (sweep.points.empty()) points.fail("expected at least one point, got none");
  root.finish();
  // The overview's keys: less what an axis varies (sweep_overview_keys()).
  std::vector<std::vector<SweepColumnKey>> own_keys;
  for (const ReportSweepPoint& point : sweep.points) own_keys.push_back(point.column_keys);
  const std::vector<std::vector<SweepColumnKey>> point_keys =
      sweep_overview_keys(own_keys, axis_values);
  const std::vector<SweepColumnKey> keys = sweep_column_order(point_keys);
  sweep.column_labels = sweep_column_labels(keys);
  for (std::size_t p_index = 0; p_index < sweep.points.size(); ++p_index) {
    for (const SweepColumnKey& key : point_keys[p_index]) {
      sweep.points[p_index].sweep_columns.push_back(
          static_cast<std::size_t>(std::find(keys.begin(), keys.end(), key) - keys.begin()));
    }
  }
  sweep.scenario = distinct_joined(scenarios);
  sweep.topology = distinct_joined(topologies);

  data.inputs.push_back(
      {document.name(),
       fmt::format("sweep summary: {} point(s), {} run(s) merged{}", sweep.points.size(),
                   sweep.merged,
                   sweep.missing == 0 ? "" : fmt::format(", {} missing", sweep.missing))});
  data.sweeps.push_back(std::move(sweep));
}

// Makes every label unique: repeated labels get " (<file name>)", then " #k" for the k-th of
// any that are still equal.
void disambiguate_labels(std::vector<ReportPolicy>& policies) {
  std::map<std::string, std::size_t> uses;
  for (const ReportPolicy& p : policies) ++uses[p.label];
  for (ReportPolicy& p : policies) {
    if (uses[p.label] > 1) {
      p.label += " (" + std::filesystem::path(p.source).filename().string() + ")";
    }
  }
  std::map<std::string, std::size_t> seen;
  for (ReportPolicy& p : policies) {
    const std::size_t k = ++seen[p.label];
    if (k > 1) p.label += " #" + std::to_string(k);
  }
}

double mean_of(double sum, std::size_t n) { return n == 0 ? 0.0 : sum / static_cast<double>(n); }

}  // namespace

ReportData read_report_documents(const std::vector<JsonDocument>& documents) {
  ReportData data;
  for (const JsonDocument& document : documents) {
    const JsonNode root = document.root();
    if (!root.is_object()) {
      root.fail_expected("an object (a result, compare or sweep summary document)");
    }
    if (!root.raw().contains("schema")) root.fail("missing required key \"schema\"");
    const JsonNode schema = root.child("schema");
    if (schema.is_string() && schema.as_string() == kResultSchema) {
      ResultDocument result = read_result(document);
      data.policies.push_back(policy_of_result(std::move(result), read_scheduler(root)));
      data.inputs.push_back({document.name(), "result document"});
    } else if (schema.is_string() && schema.as_string() == kCompareSchema) {
      read_compare(document, data);
    } else if (schema.is_string() && schema.as_string() == sweep::kSummarySchema) {
      read_sweep(document, data);
    } else {
      schema.fail_expected(fmt::format("\"{}\", \"{}\" or \"{}\"", kResultSchema, kCompareSchema,
                                       sweep::kSummarySchema));
    }
  }
  disambiguate_labels(data.policies);
  return data;
}

ReportData read_report_files(const std::vector<std::filesystem::path>& paths) {
  std::vector<JsonDocument> documents;
  documents.reserve(paths.size());
  for (const auto& path : paths) documents.push_back(JsonDocument::parse_file(path));
  return read_report_documents(documents);
}

std::string distinct_joined(const std::vector<std::string>& values) {
  std::vector<std::string> seen;
  for (const std::string& v : values) {
    if (std::find(seen.begin(), seen.end(), v) == seen.end()) seen.push_back(v);
  }
  std::string out;
  for (const std::string& v : seen) out += (out.empty() ? "" : ", ") + v;
  return out;
}

// ---- figures ----

std::vector<CdfPoint> tier_cdf(const ReportPolicy& policy, stats::SchedClass sched_class,
                               stats::Tier tier) {
  std::array<double, 4> sums{};
  std::size_t n = 0;
  for (const ResultDocument& run : policy.runs) {
    const TierFields& f = run.tier(sched_class, tier);
    if (f.count == 0) continue;
    sums[0] += static_cast<double>(f.p50_ns);
    sums[1] += static_cast<double>(f.p90_ns);
    sums[2] += static_cast<double>(f.p99_ns);
    sums[3] += static_cast<double>(f.max_ns);
    ++n;
  }
  if (n == 0) return {};
  return {{0.5, mean_of(sums[0], n)},
          {0.9, mean_of(sums[1], n)},
          {0.99, mean_of(sums[2], n)},
          {1.0, mean_of(sums[3], n)}};
}

std::vector<CdfPoint> latency_cdf(const ReportPolicy& policy) {
  std::array<double, 5> sums{};
  std::size_t n = 0;
  for (const ResultDocument& run : policy.runs) {
    const LatencyFields& f = run.latency;
    if (f.count == 0) continue;
    sums[0] += static_cast<double>(f.min_ns);
    sums[1] += static_cast<double>(f.p50_ns);
    sums[2] += static_cast<double>(f.p90_ns);
    sums[3] += static_cast<double>(f.p99_ns);
    sums[4] += static_cast<double>(f.max_ns);
    ++n;
  }
  if (n == 0) return {};
  return {{0.0, mean_of(sums[0], n)},
          {0.5, mean_of(sums[1], n)},
          {0.9, mean_of(sums[2], n)},
          {0.99, mean_of(sums[3], n)},
          {1.0, mean_of(sums[4], n)}};
}

std::uint64_t tier_count(const ReportPolicy& policy, stats::SchedClass sched_class,
                         stats::Tier tier) {
  std::uint64_t count = 0;
  for (const ResultDocument& run : policy.runs) {
    count = saturating_add(count, run.tier(sched_class, tier).count);
  }
  return count;
}

std::optional<double> pooled_share(const ReportPolicy& policy, stats::SchedClass sched_class,
                                   stats::Tier tier) {
  std::uint64_t total = 0;
  for (std::size_t t = 0; t < stats::kNumTiers; ++t) {
    total = saturating_add(total, tier_count(policy, sched_class, static_cast<stats::Tier>(t)));
  }
  if (total == 0) return std::nullopt;
  return static_cast<double>(tier_count(policy, sched_class, tier)) / static_cast<double>(total);
}

std::optional<std::array<double, kBreakdownParts.size()>> tier_breakdown(
    const ReportPolicy& policy, stats::SchedClass sched_class, stats::Tier tier) {
  std::array<double, kBreakdownParts.size()> sums{};
  std::uint64_t calls = 0;
  for (const ResultDocument& run : policy.runs) {
    const TierFields& f = run.tier(sched_class, tier);
    if (f.count == 0) continue;
    for (std::size_t p = 0; p < kBreakdownParts.size(); ++p) {
      sums[p] += static_cast<double>(f.breakdown.*kBreakdownParts[p].member) *
                 static_cast<double>(f.count);
    }
    calls += f.count;
  }
  if (calls == 0) return std::nullopt;
  for (double& sum : sums) sum /= static_cast<double>(calls);
  return sums;
}

std::optional<std::array<double, 4>> selection_shares(const ReportPolicy& policy) {
  std::array<double, 4> sums{};
  for (const ResultDocument& run : policy.runs) {
    sums[0] += static_cast<double>(run.selection.same_cpu);
    sums[1] += static_cast<double>(run.selection.same_cluster);
    sums[2] += static_cast<double>(run.selection.other);
    sums[3] += static_cast<double>(run.selection.none_idle);
  }
  const double total = sums[0] + sums[1] + sums[2] + sums[3];
  if (total == 0.0) return std::nullopt;
  for (double& sum : sums) sum /= total;
  return sums;
}

std::optional<std::vector<double>> cpu_busy_shares(const ReportPolicy& policy) {
  std::vector<double> sums;
  std::vector<std::size_t> counts;
  for (const std::optional<SchedulerFields>& scheduler : policy.schedulers) {
    if (!scheduler) continue;
    const std::vector<double>& shares = scheduler->cpu_busy_share;
    if (shares.size() > sums.size()) {
      sums.resize(shares.size(), 0.0);
      counts.resize(shares.size(), 0);
    }
    for (std::size_t cpu = 0; cpu < shares.size(); ++cpu) {
      sums[cpu] += shares[cpu];
      ++counts[cpu];
    }
  }
  if (sums.empty()) return std::nullopt;
  for (std::size_t cpu = 0; cpu < sums.size(); ++cpu) sums[cpu] = mean_of(sums[cpu], counts[cpu]);
  return sums;
}

std::vector<std::pair<std::string, double>> cluster_frequencies(const ReportPolicy& policy) {
  std::vector<std::pair<std::string, double>> sums;
  std::vector<std::size_t> counts;
  for (const std::optional<SchedulerFields>& scheduler : policy.schedulers) {
    if (!scheduler) continue;
    for (const auto& [name, khz] : scheduler->cluster_mean_freq_khz) {
      auto it = std::find_if(sums.begin(), sums.end(),
                             [&key = name](const auto& s) { return s.first == key; });
      if (it == sums.end()) {
        sums.emplace_back(name, 0.0);
        counts.push_back(0);
        it = sums.end() - 1;
      }
      it->second += static_cast<double>(khz);
      ++counts[static_cast<std::size_t>(it - sums.begin())];
    }
  }
  for (std::size_t i = 0; i < sums.size(); ++i) sums[i].second = mean_of(sums[i].second, counts[i]);
  return sums;
}

}  // namespace bindersim::io
