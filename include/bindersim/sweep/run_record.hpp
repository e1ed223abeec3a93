// The result file of one sweep run (`<run_id>.json`): the run's identity, its normal result
// document, and the exact data (latency histograms, breakdown sums, simulated time) from
// which sweep merge pools runs without losing anything.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>

#include "bindersim/stats/histogram.hpp"
#include "bindersim/stats/result.hpp"
#include "bindersim/sweep/sweep.hpp"

namespace bindersim {
class JsonNode;
}

namespace bindersim::sweep {

// Value of the record's "schema" key.
inline constexpr std::string_view kRunRecordSchema = "bindersim.sweep-run/1";

// A histogram in a compact lossless form: {"count", "sum" (a decimal string: the sum is
// 128-bit), "min", "max", "clamped", "buckets": [[bucket index, count], ...] ascending, the
// non-empty buckets only}.
nlohmann::ordered_json histogram_to_json(const stats::Histogram& histogram);
// Reads histogram_to_json's form strictly and rebuilds the histogram: the result compares
// equal (operator==) to the one that was written. A Histogram keeps only bucket counts,
// count, sum, min, max and the clamped count, so it is rebuilt by recording values inside
// each bucket chosen to give exactly those. Inconsistent data (counts that do not add up, a
// min or max outside its end bucket, a sum no values in the buckets can have) is a
// ConfigError naming the file and pointer.
stats::Histogram histogram_from_json(const JsonNode& node);

// The record as text: an object with keys schema, run (sweep::run_to_json), result
// (io::result_to_json, unchanged) and exact {simulated_ns, clients_finished, scheduler
// {governor, clusters [[name, mean_freq_khz]], cpu_busy_ns, frequency_changes, newidle_pulls,
// rt_pulls, rt_pushes, balance_pulls, misfit_migrations}, latency, tiers
// {<class>: {<tier>: {histogram, breakdown_sums}}}}. run (as its runs.jsonl line) and exact
// are one line each; result is indented by two spaces. Byte-identical for equal runs and
// results.
void write_run_record(const RunSpec& run, const stats::RunResult& result, std::ostream& out);

struct RunRecord {
  RunSpec run;
  stats::RunResult result;  // everything of the run but its engine event count (0)
};

// Reads a record strictly. Its "result" must be exactly the document that the rebuilt
// RunResult gives, and agree with "run" on selector, placement and seed; otherwise a
// ConfigError naming the file.
RunRecord read_run_record(const JsonNode& root);
RunRecord read_run_record_file(const std::filesystem::path& file);

}  // namespace bindersim::sweep
