// The HTML report behind `bindersim report`: result and compare documents read back strictly,
// the per-policy figures its charts draw, and the self-contained HTML page (inline CSS and
// SVG, no script, no network) that shows them.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bindersim/common/json_reader.hpp"
#include "bindersim/io/check.hpp"
#include "bindersim/io/compare_report.hpp"
#include "bindersim/io/result_json.hpp"
#include "bindersim/stats/result.hpp"
#include "bindersim/stats/summary.hpp"

namespace bindersim::io {

// The `scheduler` object of a result document, as far as the report uses it. Results written
// before the object existed have none.
struct SchedulerFields {
  std::string governor;
  // Each cluster's name and time-weighted mean frequency (kHz), in topology order.
  std::vector<std::pair<std::string, std::uint64_t>> cluster_mean_freq_khz;
  std::vector<double> cpu_busy_share;  // per CPU in id order: fraction of simulated time busy
};

// One policy of the report, drawn as one series in every chart: a result file, or one column
// of a compare file (its runs over several seeds).
struct ReportPolicy {
  std::string label;   // unique in the report (see read_report_documents)
  std::string source;  // the file it came from
  std::string scenario;
  std::string topology;
  std::string selector;
  std::string placement;
  std::string overrides;  // the overrides of a compare column or a result, "key=value, ..."
  std::vector<ResultDocument> runs;  // one per seed, at least one
  // The scheduler object of each run (same order as runs); nullopt where the run has none.
  std::vector<std::optional<SchedulerFields>> schedulers;
};

// One cell of a compare file's summary: a metric of one column.
struct ReportCompareCell {
  std::optional<double> mean;
  std::optional<double> ci95;
  std::optional<double> delta_pct;  // against the first column
  std::optional<bool> significant;  // Welch's test against the first column
};

// One metric row of a compare file's summary.
struct ReportCompareRow {
  std::string key;    // "latency.p99", ...
  std::string label;  // the console's row label for known keys, else the key
  std::string unit;
  stats::Better better = stats::Better::kNeutral;
  std::vector<ReportCompareCell> cells;  // one per column
};

// The summary table of one compare file.
struct ReportCompareTable {
  std::string source;
  std::string scenario;
  std::string topology;
  std::vector<std::uint64_t> seeds;
  std::vector<std::string> columns;  // labels as in the file
  std::string varies;  // report_varied_paths() of the columns: what their --vary values are of
  std::vector<ReportCompareRow> rows;  // in the compare report's metric order
};

// One point of a sweep summary: its axis values and its table, one column per (selector,
// placement) pooled over its seeds.
struct ReportSweepPoint {
  std::vector<std::string> axis_values;  // per axis of the sweep, as text ("20", "mainline")
  // The table of the point: each cell's `mean` is the pooled run's value (all seeds' calls as
  // one run), `ci95` the half-width over the per-seed values; `seeds` every seed of a column.
  ReportCompareTable table;
  std::vector<std::vector<std::uint64_t>> column_seeds;   // per column, the seeds merged
  std::vector<std::vector<std::uint64_t>> missing_seeds;  // per column, seeds without a result
  std::vector<SweepColumnKey> column_keys;                // per column, (selector, placement)
  std::vector<std::size_t> sweep_columns;  // per column, its index in ReportSweep::column_labels
};

// A sweep summary ("bindersim.sweep-summary/1", from `bindersim sweep merge --out`).
struct ReportSweep {
  std::string source;
  std::string name;
  std::string scenario;  // of the pooled runs, distinct values joined; "" when none was merged
  std::string topology;
  std::vector<std::string> axes;        // axis names, in order
  std::optional<std::uint64_t> listed;  // runs listed by --runs; nullopt without
  std::uint64_t merged = 0;
  std::uint64_t ignored = 0;
  std::uint64_t missing = 0;
  // The sweep's columns, keyed (selector, placement) across the points in the order
  // sweep_column_order() gives, labelled by sweep_column_labels(): as `sweep merge --across`
  // has them. The first is the baseline of the overview.
  std::vector<std::string> column_labels;
  std::vector<ReportSweepPoint> points;  // in sweep order
};

// What one input file is, for the page's list of inputs.
struct ReportInput {
  std::string source;
  std::string what;  // "result document", "compare document: 3 column(s) x 2 seed(s)", ...
};

// Everything a report shows, in input order.
struct ReportData {
  std::vector<ReportInput> inputs;
  std::vector<ReportPolicy> policies;
  std::vector<ReportCompareTable> compares;
  std::vector<ReportSweep> sweeps;
};

// Reads result ("bindersim.result/1"), compare ("bindersim.compare/1") and sweep summary
// ("bindersim.sweep-summary/1") documents, in any mix. A result adds one policy (labelled by its
// selector and its parameters, if any); a compare file adds one policy per column (labelled by
// the column label, with the column's runs as seeds) and its summary table; a sweep summary adds
// one ReportSweep and no policy (its points' pooled runs are read as strictly as results, with
// their column's selector and placement, but not drawn). Labels that occur more than once get "
// (<file name>)" appended, then " #2", " #3" for any still equal. Reading is strict: an unknown
// schema, a missing, unknown or mistyped key, a run of a column that does not exist, a (column,
// seed) run listed twice or not at all, a label that is empty or repeated, a seed listed twice, a
// run of another scenario, a negative ci95, an unknown summary metric or a summary cell per column
// that does not match the columns is a ConfigError "<file>: <json pointer>: expected X, got Y";
// errors inside a compare file's runs name the full pointer ("/runs/3/result/tiers/..."). Of a
// result's optional `scheduler` object, the keys the report uses (governor, clusters,
// cpu_busy_share) are required and checked; others are left to `bindersim check --exact`.
ReportData read_report_documents(const std::vector<JsonDocument>& documents);
// As read_report_documents(); a missing file or malformed JSON is a ConfigError naming it.
ReportData read_report_files(const std::vector<std::filesystem::path>& paths);

// Distinct values in order of first appearance, joined by ", ".
std::string distinct_joined(const std::vector<std::string>& values);

// ---- figures drawn by the charts ------------------------------------------------------------

// A point of a latency CDF: `fraction` of the calls took at most `latency_ns`.
struct CdfPoint {
  double fraction = 0.0;
  double latency_ns = 0.0;
};

// The CDF through the quantiles a tier carries: (0.5, p50), (0.9, p90), (0.99, p99), (1, max),
// each the mean over the policy's runs that have calls in the tier. Empty when no run has any.
std::vector<CdfPoint> tier_cdf(const ReportPolicy& policy, stats::SchedClass sched_class,
                               stats::Tier tier);
// The CDF of every call, which also carries the minimum: (0, min), then as tier_cdf().
std::vector<CdfPoint> latency_cdf(const ReportPolicy& policy);

// a + b, or 2^64 - 1 where that would wrap: counts summed over a policy's runs (each read as
// up to 2^64 - 1) stay an upper bound instead of wrapping to a small number.
constexpr std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

// Calls of a class and tier summed over the policy's runs (saturating_add()).
std::uint64_t tier_count(const ReportPolicy& policy, stats::SchedClass sched_class,
                         stats::Tier tier);
// The tier's share of the class's calls, pooled over the runs (summed counts); nullopt when
// the class has no calls.
std::optional<double> pooled_share(const ReportPolicy& policy, stats::SchedClass sched_class,
                                   stats::Tier tier);

// Mean per call of each breakdown part (ns), in io::kBreakdownParts order, over the tier's
// calls of every run (each run's means weighted by its count); nullopt without calls.
std::optional<std::array<double, kBreakdownParts.size()>> tier_breakdown(
    const ReportPolicy& policy, stats::SchedClass sched_class, stats::Tier tier);

// Selection decisions of every run summed, as fractions of all decisions, in the order
// same_cpu, same_cluster, other, none_idle; nullopt when no selection was made.
std::optional<std::array<double, 4>> selection_shares(const ReportPolicy& policy);

// Busy share of each CPU (fraction of simulated time, id order), the mean over the runs that
// carry it; nullopt when no run carries per-CPU data.
std::optional<std::vector<double>> cpu_busy_shares(const ReportPolicy& policy);

// Mean frequency of each cluster (kHz), the mean over the runs that carry it, clusters in the
// order of first appearance; empty when no run carries it.
std::vector<std::pair<std::string, double>> cluster_frequencies(const ReportPolicy& policy);

// ---- the page -------------------------------------------------------------------------------

struct ReportOptions {
  std::string title;  // page title; empty: "bindersim report: <scenarios>"
};

// Writes the page: inputs and a policy table, then one SVG chart per kind (tier shares per
// scheduling class, latency CDFs per class and tier, latency breakdown, per-CPU utilization
// when any input carries it, else a note that it is missing, and selection decisions), the
// clusters' mean frequencies, then one table per compare file; without policies, none of
// these. Then one section per sweep: its headline metrics (throughput, latency mean, p50, p99,
// the same-core share of each scheduling class) as dots with 95% whiskers per column across the
// points, a table with a row per point (the first column's value and each other's Δ%), and the full
// table of each point in a <details> element. Light and dark colour schemes follow
// prefers-color-scheme. Every string from the inputs is escaped. Byte-identical for equal data and
// options. `data` must hold at least one policy or sweep.
void write_report_html(const ReportData& data, const ReportOptions& options, std::ostream& out);

}  // namespace bindersim::io
