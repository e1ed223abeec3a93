// The regression gate behind `bindersim check`: result documents read back strictly, tolerances,
// and the comparison of a result with a baseline (by tolerance, or exactly).
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bindersim/common/json_reader.hpp"
#include "bindersim/stats/result.hpp"

namespace bindersim::io {

// ---- Result documents read back -------------------------------------------------------------

// The distribution fields shared by `latency` and each tier (nanoseconds, calls).
struct DistributionFields {
  std::uint64_t count = 0;
  std::uint64_t mean_ns = 0;
  std::uint64_t p50_ns = 0;
  std::uint64_t p90_ns = 0;
  std::uint64_t p99_ns = 0;
  std::uint64_t max_ns = 0;
};

// The `latency` object of a result document.
struct LatencyFields : DistributionFields {
  std::uint64_t min_ns = 0;
};

// One `tiers.<class>.<tier>` object; `share` is a fraction in [0, 1]; `breakdown` holds the
// mean per call of each part in nanoseconds (only other_ns may be negative).
struct TierFields : DistributionFields {
  double share = 0.0;
  stats::Breakdown breakdown;
};

// A `bindersim.result/1` document (docs/result-schema.md) as read from a file.
struct ResultDocument {
  std::string file;  // where it was read from, for messages
  std::string scenario;
  std::string topology;
  std::string selector;
  std::string selector_params;  // compact JSON text as RunResult writes it; "" for none
  std::string placement;
  std::uint64_t seed = 0;
  std::uint64_t completed = 0;
  double per_second = 0.0;   // calls per simulated second
  std::uint64_t failed = 0;  // sends refused for lack of buffer space (BR_FAILED_REPLY)
  LatencyFields latency;
  // Indexed by stats::SchedClass, then stats::Tier.
  std::array<std::array<TierFields, stats::kNumTiers>, stats::kNumSchedClasses> tiers{};
  stats::Counters counters;
  stats::Counters process_counters;  // zero in results written before they existed
  stats::SelectionCounts selection;
  std::string version;
  // What the run was made from (stats::RunResult): 16 lowercase hex digits each, and compact
  // JSON of the [path, value] pairs. Empty in results written before results recorded them.
  std::string scenario_hash;
  std::string topology_hash;
  std::string overrides;
  std::string fingerprint;  // 16 lowercase hex digits
  nlohmann::json value;     // the whole document, for exact comparison

  const TierFields& tier(stats::SchedClass c, stats::Tier t) const {
    return tiers[static_cast<std::size_t>(c)][static_cast<std::size_t>(t)];
  }
};

// Reads a result document strictly: the schema must be "bindersim.result/1", every documented
// key must be present with its documented type and range, and no other key may appear. Any
// mismatch is a ConfigError "<file>: <json pointer>: expected X, got Y".
ResultDocument read_result(const JsonDocument& document);
// As read_result(); a missing file or malformed JSON is a ConfigError naming line and column.
ResultDocument read_result_file(const std::filesystem::path& path);

// ---- Tolerances -----------------------------------------------------------------------------

// Value of the "schema" key of a tolerance file.
inline constexpr std::string_view kTolerancesSchema = "bindersim.tolerances/1";

// How a metric's result is set against its baseline.
enum class MetricKind : std::uint8_t {
  kIdentity,  // a name (scenario, selector, ...): must be equal
  kInfo,      // shown only (seed)
  kRelative,  // Δ = (result - baseline) / baseline in percent; tolerance in percent
  kPoints,    // a share: Δ = result - baseline in percentage points; tolerance in points
};

// Tolerances by metric name. A name is either one row of the check table
// ("tiers.sched_fifo.same_core.mean_ns") or a group of rows ("tiers.mean_ns", "counters",
// "selection.decisions"); a row takes its own entry if present, else its group's. A value is
// the allowed |Δ| (percent or points, by the metric's kind); std::nullopt reports the metric
// without gating it.
struct Tolerances {
  std::map<std::string, std::optional<double>, std::less<>> by_name;
  // Tier latencies (mean_ns, p99_ns) are gated only for tiers whose baseline share is at least
  // this many percent; below it a handful of calls would make them noise.
  double min_tier_share_percent = 1.0;

  // The tolerance of row `metric` in group `group` ("" for none). A name missing from both
  // is not gated.
  std::optional<double> lookup(std::string_view metric, std::string_view group) const;
};

// The documented defaults: completed exact, per_second ±5%, latency mean and p50 ±5%, p99 ±10%,
// tier share ±2 points, tier mean ±5%, tier p99 ±10% (tiers with at least 1% share), counters
// per call ±10%; selection decisions and nudges reported, not gated.
Tolerances default_tolerances();

// Reads a tolerance file over the defaults. Layout:
//   {"schema": "bindersim.tolerances/1", "min_tier_share_percent": 1.0,   (optional)
//    "tolerances": {"<metric name>": <number >= 0> | null, ...}}
// An unknown metric name is a ConfigError naming its JSON pointer and the closest valid name.
Tolerances read_tolerances(const JsonDocument& document);
Tolerances read_tolerances_file(const std::filesystem::path& path);

// Every name a tolerance file accepts, groups first within each section, in table order.
std::vector<std::string> tolerance_names();

// The default tolerances as a short table for --help and documentation.
void print_default_tolerances(std::ostream& out);

// ---- Comparison by tolerance ----------------------------------------------------------------

enum class CheckStatus : std::uint8_t {
  kOk,        // gated and within tolerance (or an equal identity field)
  kFail,      // gated and outside tolerance, in either direction
  kReported,  // not gated: shown for information
  kSkipped,   // a tier latency not gated because the tier's baseline share is too small
};

// One line of the check table. Counters and selection counts are compared per completed call.
struct CheckRow {
  std::string metric;  // dotted name, as tolerance files spell it
  MetricKind kind = MetricKind::kRelative;
  std::string baseline_text;  // values as printed
  std::string result_text;
  double baseline = 0.0;  // numeric values (kRelative, kPoints), shares as fractions
  double result = 0.0;
  // Δ in the unit of the tolerance: percent (kRelative; +inf when the baseline is 0 and the
  // result is not) or percentage points (kPoints). 0 for names.
  double delta = 0.0;
  std::optional<double> tolerance;  // percent or points; nullopt when not gated
  CheckStatus status = CheckStatus::kOk;
};

struct CheckReport {
  std::string result_file;
  std::string baseline_file;
  double min_tier_share_percent = 1.0;
  std::vector<CheckRow> rows;

  std::size_t failures() const;
  bool passed() const { return failures() == 0; }
  // The row of `metric`, or nullptr.
  const CheckRow* find(std::string_view metric) const;
};

// Compares `result` with `baseline` metric by metric: identity fields, transactions, latency,
// every class × tier (share; mean_ns and p99_ns when the baseline share is large enough),
// counters and selection counts per call. Tier breakdowns are not compared here (check
// --exact compares them with every other field).
CheckReport check_result(const ResultDocument& result, const ResultDocument& baseline,
                         const Tolerances& tolerances);

// The table (metric, baseline, result, Δ, tolerance, status) and a one-line verdict.
void print_check_report(const CheckReport& report, std::ostream& out);

// ---- Exact comparison -----------------------------------------------------------------------

// One field that differs between two documents; values as compact JSON text.
struct ExactDifference {
  std::string pointer;
  std::string baseline;
  std::string result;
};

// Every field (by JSON pointer) where the documents differ, provenance.version excepted.
// Empty when the runs are identical. The fingerprint comes first when it differs.
std::vector<ExactDifference> exact_differences(const ResultDocument& result,
                                               const ResultDocument& baseline);

// The differing fields and a one-line verdict.
void print_exact_report(const ResultDocument& result, const ResultDocument& baseline,
                        const std::vector<ExactDifference>& differences, std::ostream& out);

}  // namespace bindersim::io
