// The policy comparison report: its console table (one row per metric, one column per
// policy, mean ± 95% CI and Δ% against the first column) and its versioned JSON document.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bindersim/stats/summary.hpp"

namespace bindersim::io {

// Value of the "schema" key; bumped on any incompatible change of the layout.
inline constexpr std::string_view kCompareSchema = "bindersim.compare/1";

// Decimal places kept for the summary's doubles (mean, ci95, delta_pct), so their text is
// stable: 1e-6.
inline constexpr double kSummaryScale = 1e6;

// A summary value as written: rounded to 1/kSummaryScale, without negative zero; null when
// undefined.
nlohmann::ordered_json summary_value_json(const std::optional<double>& x);

// One column of the comparison: a selector, and the scenario overrides its runs used.
struct CompareColumn {
  std::string label;      // column heading, unique in the report
  std::string selector;   // the selector its runs used
  std::string placement;  // the placement its runs used
  std::string topology;   // name of the topology its runs used
  // Every override applied to the scenario for this column (--set, then the --vary value), as
  // dotted path and value, in the order applied.
  std::vector<std::pair<std::string, nlohmann::ordered_json>> overrides;
};

// One simulation of the comparison.
struct CompareRun {
  std::size_t column = 0;
  std::uint64_t seed = 0;
  nlohmann::ordered_json result;  // as io::result_to_json gives it
};

struct CompareReport {
  std::string scenario;
  std::vector<std::uint64_t> seeds;  // the same seeds for every column
  std::vector<CompareColumn> columns;
  std::vector<CompareRun> runs;  // column by column, seeds in order within a column
  std::vector<stats::MetricSummary> summary;
};

// The topologies (or placements) of the columns, distinct ones in column order joined by ",".
std::string report_topology(const CompareReport& report);
std::string report_placement(const CompareReport& report);
// The override paths whose value is not the same in every column (compare's --vary key), in
// order of first appearance, joined by ", "; "" when the columns share every override.
std::string report_varied_paths(const CompareReport& report);

// The console table: a header line (scenario, topology, placement, seeds, and the override paths
// whose values differ between the columns, "varies a.b, c"), a heading row, one row per
// metric with its unit and, per column, "mean ± ci95" (the mean alone without a CI),
// "-" where undefined; every column after the first is followed by its Δ% against the first,
// marked "~" when Welch's test finds it not significant, or "?" when either column has fewer
// than two values to test (with several seeds; one seed tests nothing); then a line that
// explains "?" if one was given, and a legend line. Numbers keep four significant digits (at
// least one decimal, at most four) with thousands grouped. Fixed-width (columns as wide as
// their widest cell) and deterministic; nothing about threads or time.
void print_compare_table(const CompareReport& report, std::ostream& out);

// The cells of the comparison tables, shared with sweep merge's overview.
inline constexpr std::size_t kGap = 2;  // spaces between the columns of a table
// Display width of UTF-8 text ("±" and "Δ" are one column each): the bytes that do not
// continue a multi-byte sequence.
std::size_t display_width(std::string_view text);
// `text` padded with spaces to `width` display columns, on the left or the right.
std::string pad_left(const std::string& text, std::size_t width);
std::string pad_right(const std::string& text, std::size_t width);
// `number` (an optional "-", digits, then optionally "." and decimals) with a comma between
// each group of three digits before the point: "-1234567.5" -> "-1,234,567.5".
std::string group_thousands(std::string_view number);
// The same for a count: 1234567 -> "1,234,567".
std::string group_thousands(std::uint64_t count);
// The decimals that give a value of this size four significant digits, within [1, 4]: 1 from
// 100 on (and for 0), 2 from 10, 3 from 1, else 4.
int four_significant_decimals(double x);
// The mean with four significant digits (at least one decimal, at most four) and grouped
// thousands, followed by " ± ci95" when `with_ci` and the CI is defined; "-" when undefined.
std::string mean_cell(const stats::ColumnStats& s, bool with_ci);
// Δ% with one decimal ("+4.3%"), "-" when undefined. With several seeds, a difference is marked
// "~" when not significant, or "?" when either column has fewer than two values to test (a
// tier that some seeds never reach); with one seed, nothing is.
std::string delta_cell(const stats::ColumnStats& s, bool several_seeds);
// "seed 1", "seeds 1..5" (consecutive) or "seeds 1,3,7"; "seeds none" when empty.
std::string seeds_text(const std::vector<std::uint64_t>& seeds);

// A column of a sweep: its (selector, placement).
using SweepColumnKey = std::pair<std::string, std::string>;
// The keys of a sweep's columns in the table across its points (`points`: each point's
// (selector, placement) keys; `axis_values`: each point's axis values): with a part left out
// ("") where an axis varies it by row, so that every point's column stands under one heading.
// That is where, at every point, the part is one value in all the point's columns and an axis
// value gives it (the value itself, or an object's "selector" or "placement" member: an axis
// over kernel.placement or kernel, however named), and it is not one value at every point.
std::vector<std::vector<SweepColumnKey>> sweep_overview_keys(
    const std::vector<std::vector<SweepColumnKey>>& points,
    const std::vector<std::vector<nlohmann::json>>& axis_values);
// The columns of a sweep across its points (`points`: each point's column keys, in its order):
// each key once, in the order of the points' own columns, so that a column a point lacks does
// not move the others; the first is the baseline. Shared by sweep merge's overview and the
// report, which must agree.
std::vector<SweepColumnKey> sweep_column_order(
    const std::vector<std::vector<SweepColumnKey>>& points);
// Labels of sweep_column_order()'s keys: the selector, with its placement when the sweep runs
// it under several ("ctabs gki"); the placement alone when the selector is left out
// (sweep_overview_keys()); "all" when both are.
std::vector<std::string> sweep_column_labels(const std::vector<SweepColumnKey>& keys);

// The document, keys in this order: schema, scenario, topology, seeds, columns [{label,
// selector, overrides}], runs [{column, seed, result}], summary {<metric key>: {unit, better,
// columns [{label, mean, ci95, delta_pct, significant}]}}; undefined values are null. Doubles
// of the summary are rounded to 1/kSummaryScale.
nlohmann::ordered_json compare_to_json(const CompareReport& report);

// compare_to_json() dumped with a 2-space indent and a trailing newline. Byte-identical for
// equal reports. Invalid UTF-8 is replaced by U+FFFD rather than failing.
void write_compare_json(const CompareReport& report, std::ostream& out);

}  // namespace bindersim::io
