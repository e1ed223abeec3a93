// The result JSON writer: a RunResult as the versioned document described in
// docs/result-schema.md.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>

#include "bindersim/stats/result.hpp"

namespace bindersim::io {

// Value of the "schema" key; bumped on any incompatible change of the layout.
inline constexpr std::string_view kResultSchema = "bindersim.result/1";

// Decimal places kept for the two floating-point fields, so that their text is stable.
inline constexpr double kPerSecondScale = 1e3;  // transactions.per_second to 0.001
inline constexpr double kShareScale = 1e6;      // tiers.*.*.share to 1e-6

// The document, keys in the documented order. Equal results give equal documents; wall-clock
// and engine figures (RunResult::events) are not part of it.
nlohmann::ordered_json result_to_json(const stats::RunResult& result);

// result_to_json() dumped with a 2-space indent and a trailing newline. Byte-identical for
// equal results. Invalid UTF-8 in names is replaced by U+FFFD rather than failing.
void write_result_json(const stats::RunResult& result, std::ostream& out);

// Share of the calls of `sched_class` that fell in `tier`: 0 when the class has no calls.
// Not rounded (the JSON rounds it to 1e-6).
double tier_share(const stats::RunResult& result, stats::SchedClass sched_class, stats::Tier tier);

// One part of stats::Breakdown: its key in the `breakdown` object of a tier, its column title
// on the console, the members that hold it per call and summed, whether it may be negative
// (readers reject a negative value of every other part), and whether results of earlier
// versions lack it (readers then take 0: those results counted it in other_ns), so that stored
// baselines stay readable.
struct BreakdownPart {
  std::string_view key;    // "kernel_ns", ...
  std::string_view label;  // "kernel", ...
  std::int64_t stats::Breakdown::*member;
  Int128 stats::BreakdownSums::*sum_member;
  bool may_be_negative = false;
  bool absent_from_older_results = false;
};
// Every part, in the documented key order. Only other_ns, what is left of the latency after
// the measured parts, may be negative.
inline constexpr std::array<BreakdownPart, 8> kBreakdownParts = {{
    {"kernel_ns", "kernel", &stats::Breakdown::kernel_ns, &stats::BreakdownSums::kernel_ns},
    {"wakeup_ipi_ns", "wakeup+IPI", &stats::Breakdown::wakeup_ipi_ns,
     &stats::BreakdownSums::wakeup_ipi_ns},
    {"idle_exit_ns", "idle exit", &stats::Breakdown::idle_exit_ns,
     &stats::BreakdownSums::idle_exit_ns},
    {"runqueue_wait_ns", "rq wait", &stats::Breakdown::runqueue_wait_ns,
     &stats::BreakdownSums::runqueue_wait_ns},
    {"lock_wait_ns", "lock wait", &stats::Breakdown::lock_wait_ns,
     &stats::BreakdownSums::lock_wait_ns, false, true},
    {"cache_refill_ns", "cache", &stats::Breakdown::cache_refill_ns,
     &stats::BreakdownSums::cache_refill_ns},
    {"service_ns", "service", &stats::Breakdown::service_ns, &stats::BreakdownSums::service_ns},
    {"other_ns", "other", &stats::Breakdown::other_ns, &stats::BreakdownSums::other_ns, true},
}};

// Mean per call of every breakdown part of a tier: the tier's summed breakdown divided by its
// call count, each rounded to the nearest nanosecond (halves away from zero, as mean_ns); all
// parts 0 for a tier without calls.
stats::Breakdown tier_breakdown_mean(const stats::RunResult& result, stats::SchedClass sched_class,
                                     stats::Tier tier);

}  // namespace bindersim::io
