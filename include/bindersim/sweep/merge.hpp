// Merging the runs of a sweep exactly: runs pooled per (axis values, selector, placement)
// across seeds, as if one run had made every call (histograms merged bucket by bucket, never
// averaged percentiles), the comparison tables of each point of the sweep and the summary
// document.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "bindersim/common/error.hpp"
#include "bindersim/stats/result.hpp"
#include "bindersim/stats/summary.hpp"
#include "bindersim/sweep/run_record.hpp"
#include "bindersim/sweep/sweep.hpp"

namespace bindersim::sweep {

// Value of the summary's "schema" key.
inline constexpr std::string_view kSummarySchema = "bindersim.sweep-summary/1";

// Adds every call and count of `run` to `pooled`: histograms merged bucket by bucket;
// completed calls, simulated time, counters, selections, breakdown sums, per-CPU busy times
// and scheduler counts added; clients_finished only while every run finished. Names, seed,
// version, fingerprint, governor and cluster mean frequencies of `pooled` are left as they
// are (SweepMerger pools the frequencies as time-weighted means). A sum beyond its type's range
// is a ConfigError naming the figure.
void pool_into(stats::RunResult& pooled, const stats::RunResult& run);

// The runs of one selector (and placement) at one point of the sweep, across seeds.
struct SweepColumn {
  std::string label;  // the selector, with the placement when a point has several
  std::string selector;
  std::string placement;
  std::size_t first_index = 0;               // lowest run index of the column, merged or missing
  std::vector<std::uint64_t> seeds;          // seeds merged, ascending
  std::vector<std::string> run_ids;          // of `seeds`, in the same order
  std::vector<std::uint64_t> missing_seeds;  // listed in the runs file, no result; ascending
  // Every merged run pooled (nullopt when none was merged). Its seed is the lowest seed; its
  // fingerprint is fnv1a64 of the runs' 16-digit fingerprints joined by "," in seed order.
  std::optional<stats::RunResult> pooled;
  // stats::measure() of each merged run, in seed order (for confidence and significance).
  std::vector<std::vector<std::optional<double>>> per_seed;
};

// One combination of axis values and its columns.
struct SweepPoint {
  std::vector<NamedValue> axes;      // (axis name, value), in axis order
  std::vector<SweepColumn> columns;  // by first_index
};

struct SweepSummary {
  std::string sweep;
  std::vector<std::string> axis_names;
  std::optional<std::size_t> listed;   // runs in the runs file; nullopt without one
  std::size_t merged = 0;              // results merged
  std::size_t ignored = 0;             // results whose run is not in the runs file
  std::vector<RunSpec> missing;        // runs of the runs file without a result, by index
  std::vector<stats::Metric> metrics;  // stats::comparison_metrics()
  std::vector<SweepPoint> points;      // by the lowest run index of their columns
};

// Collects the results of a sweep. The summary depends only on the set of records added,
// never on the order they are added in.
class SweepMerger {
 public:
  // Without `listed`, every record added is merged. With it (the runs file), only records of
  // listed runs are merged (others are counted as ignored), runs take their index, sweep and
  // axes from the list, and listed runs without a record are reported missing.
  explicit SweepMerger(std::optional<std::vector<RunSpec>> listed = std::nullopt);

  // Merges one record; `file` names it in messages. A ConfigError when it belongs to another
  // sweep or other axes than the records before it (without a runs file), or repeats the
  // seed of a column.
  void add(const RunRecord& record, const std::string& file);

  // The summary of everything added. Without a runs file, no record at all is a ConfigError.
  // The pooled runs move into the summary (each column's histograms are held once), so the
  // merger is spent: std::move(merger).finish().
  SweepSummary finish() &&;

 private:
  struct Entry {
    std::string run_id;
    std::string file;
    std::uint64_t fingerprint = 0;
    std::vector<std::optional<double>> metrics;
  };
  struct Column {
    std::vector<NamedValue> axes;
    std::string selector;
    std::string placement;
    std::size_t first_index = 0;
    std::string scenario_hash;          // of every run of the column
    std::vector<NamedValue> overrides;  // of every run of the column
    std::map<std::uint64_t, Entry> by_seed;
    std::optional<stats::RunResult> pooled;
    std::vector<Uint128> freq_time;  // per cluster: sum of mean_freq_khz x simulated_ns
  };
  Column& column_of(const RunSpec& run);

  std::optional<std::map<std::string, RunSpec>> listed_;  // by run id
  std::set<std::string> added_;                           // run ids merged
  std::map<std::string, Column> columns_;  // by canonical JSON of (axes, selector, placement)
  std::optional<std::string> sweep_;       // of the first record (without a runs file)
  std::optional<std::vector<std::string>> axis_names_;
  std::size_t ignored_ = 0;
  std::vector<stats::Metric> metrics_;
};

// The comparison of one point, metric by metric (in summary.metrics order): per column, mean
// is the metric of the pooled run, ci95 the 95% confidence half-width of the per-seed values,
// delta_pct the pooled value's difference from the first column's (as in
// stats::compare_columns), significant Welch's test of the per-seed values against the first
// column's.
std::vector<stats::MetricSummary> point_statistics(const SweepSummary& summary,
                                                   const SweepPoint& point);

// Per point: a title line with the axis values (none without axes), the table of
// io::print_compare_table (one column per selector) whose legend says how the values were
// pooled, a line naming missing runs if any, and an empty line. Deterministic.
void print_sweep_tables(const SweepSummary& summary, std::ostream& out);

// The keys of `metrics` ("throughput,latency.p50") as their indices in summary.metrics, in the
// order given; an unknown or repeated key is a ConfigError that names `option` and lists the
// valid keys.
std::vector<std::size_t> metric_indices(const std::vector<stats::Metric>& metrics,
                                        const std::string& keys, const std::string& option);

// One table across the points: a header line (the sweep, its seeds, the baseline column), two
// heading lines, and a row per point with its axis values and, for each metric of
// `metric_indices` (metric_indices()), the pooled value of the first column of the union of the
// points' columns (the baseline) and each other column's Δ% against it, marked as in
// io::print_compare_table; "-" where a point lacks a column or a value. Deterministic.
void print_sweep_overview(const SweepSummary& summary,
                          const std::vector<std::size_t>& metric_indices, std::ostream& out);

// The document, keys in this order: schema, sweep, axes [names], metrics [{key, label, unit,
// better}], runs {listed (null without a runs file), merged, ignored, missing [{index, run_id,
// axes {name: value}, selector, placement, seed}]}, points [{axes {name: value}, columns
// [{label, selector, placement, seeds, run_ids, missing_seeds, metrics {<key>: {value, ci95,
// delta_pct, significant}}, pooled (io::result_to_json of the pooled run without schema and
// seed, or null)}]}]. Doubles of metrics are rounded to 1e-6; undefined values are null.
nlohmann::ordered_json summary_to_json(const SweepSummary& summary);
// summary_to_json() with a 2-space indent and a trailing newline.
void write_summary_json(const SweepSummary& summary, std::ostream& out);

}  // namespace bindersim::sweep
