// Statistics over repeated runs: the named metrics a policy comparison reports, and their
// per-column means, 95% confidence intervals, differences and Welch's t-tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bindersim/stats/result.hpp"

namespace bindersim::stats {

// Which direction of a metric is an improvement.
enum class Better : std::uint8_t { kLower, kHigher, kNeutral };
std::string_view better_name(Better better);  // "lower", "higher", "neutral"

// One named metric of a run.
struct Metric {
  std::string key;    // stable JSON key, e.g. "latency.p99" or "tiers.sched_fifo.same_core.share"
  std::string label;  // console row label, e.g. "latency p99"
  std::string unit;   // "calls/s", "us", "%" or "per call"
  Better better = Better::kNeutral;
  // The metric of one run; nullopt where it is undefined (a latency of no calls, a count per
  // call of a run without completed calls).
  std::function<std::optional<double>(const RunResult&)> value;
};

// The comparison's metrics, in report order: throughput (calls per simulated second);
// latency mean, p50 and p99 (us); for each class and tier its share of the class's calls (%)
// and its mean latency (us); counters per completed call (cpu cycles, cache references, cache
// misses, migrations, context switches); selection decisions per call (same cpu, same
// cluster, other, none idle); nudges applied and declined per call.
std::vector<Metric> comparison_metrics();

// Every metric of `metrics` for one run, in the same order.
std::vector<std::optional<double>> measure(std::span<const Metric> metrics, const RunResult& run);

// Two-sided 95% critical value t_{0.975} of Student's t distribution with `df` degrees of
// freedom, to three decimals as tables give it (Boost.Math's quantile, rounded). df 0 is an
// internal error.
double student_t975(std::size_t df);

// Arithmetic mean (summed in order); 0 for no samples.
double mean(std::span<const double> samples);
// Unbiased sample variance (divisor n - 1); 0 for fewer than two samples.
double sample_variance(std::span<const double> samples);
// Half-width of the 95% confidence interval of the mean, t_{0.975}(n-1) * s / sqrt(n);
// nullopt for fewer than two samples.
std::optional<double> ci95_half_width(std::span<const double> samples);

// Welch's unequal-variance t-test of mean(a) - mean(b), two-sided at the 5% level.
struct WelchTest {
  double t = 0;   // ±infinity when both samples have zero variance and different means
  double df = 0;  // Welch–Satterthwaite degrees of freedom (n_a + n_b - 2 with zero variances)
  bool significant = false;
};
// nullopt (no claim) when either sample has fewer than two values. The critical value is
// student_t975 of df rounded down (at least 1), which is conservative. Two samples without
// variance differ significantly exactly when their means differ.
std::optional<WelchTest> welch_test(std::span<const double> a, std::span<const double> b);

// One column's statistics of one metric.
struct ColumnStats {
  std::size_t n = 0;                // runs where the metric is defined
  std::optional<double> mean;       // nullopt when n == 0
  std::optional<double> ci95;       // 95% half-width; nullopt when n < 2
  std::optional<double> delta_pct;  // 100 * (mean - mean_0) / |mean_0| against column 0;
                                    // nullopt for column 0, an undefined mean, or mean_0 == 0
                                    // with mean != 0 (0 when both are 0)
  std::optional<bool> significant;  // Welch's test against column 0; nullopt for column 0 or
                                    // when either column has n < 2
};

// Statistics of each column's samples (the defined values of one metric, in seed order),
// each compared with column 0.
std::vector<ColumnStats> compare_columns(const std::vector<std::vector<double>>& samples);

struct MetricSummary {
  Metric metric;
  std::vector<ColumnStats> columns;
};

// Summaries of every metric over runs laid out column by column: values[column * seeds +
// seed][metric], as measure() gives them, with seeds = values.size() / num_columns (the
// layout must be exact). Undefined values are left out of their column's samples.
std::vector<MetricSummary> summarize(std::span<const Metric> metrics,
                                     std::span<const std::vector<std::optional<double>>> values,
                                     std::size_t num_columns);

}  // namespace bindersim::stats
