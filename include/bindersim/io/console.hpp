// Console tables of run results: one run's latency tiers, and several runs side by side.
#pragma once

#include <ostream>
#include <span>

#include "bindersim/stats/result.hpp"

namespace bindersim::io {

// One run: a header line (scenario, selector, placement, seed, completed calls, calls per
// simulated second), the tier table in the layout of the published schd-dbg "tiered" table
// (class | tier | avg latency | calls | share, then p50 and p99; latencies in ms with 3
// decimals, share in % of the class's calls with 1 decimal, "-" for the latency of an empty
// tier), then the breakdown block "breakdown (mean per call, us)": one row per class × tier
// with calls, columns kernel, wakeup+IPI, idle exit, rq wait, cache, service, other (means of
// the result JSON's `breakdown`, in microseconds with 3 decimals; the block is left out when
// no tier has calls), and a line of selection decisions and nudges. Fixed-width and
// deterministic.
void print_tier_table(const stats::RunResult& result, std::ostream& out);

// Several runs side by side, one column per run headed by its selector: seed, completed
// calls, throughput, latency mean/p50/p99, every tier's share and mean, selection decisions,
// nudges and counters. Fixed-width and deterministic; prints nothing for an empty span.
void print_comparison(std::span<const stats::RunResult> results, std::ostream& out);

}  // namespace bindersim::io
