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

// The allocator lines (also printed by print_tier_table): lock kind, pages installed and
// reclaimed, failed sends; then per lock class with acquisitions, the contended share, wait
// p50/p99 (over contended acquisitions), hold mean/p99, spin time, sleeps and handoffs,
// lock-holder preemption and priority-inversion episodes with their total time.
void print_allocator(const stats::RunResult& result, std::ostream& out);

// binderThroughputTest's summary of a run of `workers` worker processes: "iterations per sec"
// as the tool computes it (calls x workers / clients / elapsed: twice the true rate in pair
// mode, where half the workers only serve), average / worst / best in ms, and 50/90/95/99%
// both as true percentiles and as the older tool's 128-bucket histogram midpoints (buckets of
// 50 ms / 128 = 0.390625 ms).
void print_binder_throughput(const stats::RunResult& result, int workers, int clients,
                             std::ostream& out);
// Midpoint of the older binderThroughputTest's histogram bucket that holds quantile q.
std::int64_t legacy_bucket_midpoint_ns(const stats::Histogram& latency, double q);

// Several runs side by side, one column per run headed by its selector: seed, completed
// calls, throughput, latency mean/p50/p99, every tier's share and mean, selection decisions,
// nudges and counters. Fixed-width and deterministic; prints nothing for an empty span.
void print_comparison(std::span<const stats::RunResult> results, std::ostream& out);

}  // namespace bindersim::io
