#include "bindersim/io/result_json.hpp"

#include <array>
#include <cmath>

#include "bindersim/common/error.hpp"
#include "bindersim/common/hash.hpp"

namespace bindersim::io {

namespace {

using nlohmann::ordered_json;

// x rounded to the nearest multiple of 1/scale (IEEE arithmetic only: same on every machine).
double round_to_scale(double x, double scale) { return std::round(x * scale) / scale; }

ordered_json counters_json(const stats::Counters& counters) {
  ordered_json j = ordered_json::object();
  j["cpu_cycles"] = counters.cpu_cycles;
  j["cache_refs"] = counters.cache_refs;
  j["cache_misses"] = counters.cache_misses;
  j["migrations"] = counters.migrations;
  j["context_switches"] = counters.context_switches;
  return j;
}

ordered_json tier_json(const stats::RunResult& result, stats::SchedClass c, stats::Tier t) {
  const stats::Histogram& h = result.tier(c, t);
  ordered_json j = ordered_json::object();
  j["count"] = h.count();
  j["share"] = round_to_scale(tier_share(result, c, t), kShareScale);
  j["mean_ns"] = h.mean_rounded();
  j["p50_ns"] = h.percentile(0.50);
  j["p90_ns"] = h.percentile(0.90);
  j["p99_ns"] = h.percentile(0.99);
  j["max_ns"] = h.max();
  const stats::Breakdown mean = tier_breakdown_mean(result, c, t);
  ordered_json& breakdown = j["breakdown"];
  for (const BreakdownPart& part : kBreakdownParts) {
    breakdown[std::string(part.key)] = mean.*part.member;
  }
  return j;
}

// A wait or hold distribution: count, mean and percentiles in nanoseconds.
ordered_json distribution_json(const stats::Histogram& h) {
  ordered_json j = ordered_json::object();
  j["count"] = h.count();
  j["mean_ns"] = h.mean_rounded();
  j["p50_ns"] = h.percentile(0.50);
  j["p99_ns"] = h.percentile(0.99);
  j["max_ns"] = h.max();
  return j;
}

ordered_json lock_json(const stats::LockStats& lock) {
  ordered_json j = ordered_json::object();
  j["acquisitions"] = lock.acquisitions;
  j["contended"] = lock.contended;
  j["contended_share"] = round_to_scale(lock.contended_share(), kShareScale);
  j["trylock_failures"] = lock.trylock_failures;
  j["sleeps"] = lock.sleeps;
  j["handoffs"] = lock.handoffs;
  j["wait"] = distribution_json(lock.wait_ns);
  j["hold"] = distribution_json(lock.hold_ns);
  j["spin_ns"] = lock.spin_ns;
  j["inversions"] = {{"count", lock.inversions}, {"total_ns", lock.inversion_ns}};
  j["owner_preempted"] = {{"count", lock.owner_preempted}, {"total_ns", lock.owner_preempted_ns}};
  return j;
}

}  // namespace

double tier_share(const stats::RunResult& result, stats::SchedClass sched_class, stats::Tier tier) {
  std::uint64_t class_total = 0;
  for (stats::Tier t : stats::kAllTiers) class_total += result.tier(sched_class, t).count();
  if (class_total == 0) return 0.0;
  return static_cast<double>(result.tier(sched_class, tier).count()) /
         static_cast<double>(class_total);
}

stats::Breakdown tier_breakdown_mean(const stats::RunResult& result, stats::SchedClass sched_class,
                                     stats::Tier tier) {
  const std::uint64_t count = result.tier(sched_class, tier).count();
  const stats::BreakdownSums& sum = result.tier_breakdown(sched_class, tier);
  stats::Breakdown mean;
  if (count == 0) return mean;
  // round(|s| / n) = floor((2 |s| + n) / (2 n)) in 128 bits, then the sign of s back on. The
  // mean of per-call values fits their 64 bits.
  const Uint128 n = count;
  for (const BreakdownPart& part : kBreakdownParts) {
    const Int128 s = sum.*part.sum_member;
    const auto rounded = static_cast<std::int64_t>((2 * magnitude(s) + n) / (2 * n));
    mean.*part.member = s < 0 ? -rounded : rounded;
  }
  return mean;
}

ordered_json result_to_json(const stats::RunResult& result) {
  ordered_json j = ordered_json::object();
  j["schema"] = kResultSchema;
  j["scenario"] = result.scenario;
  j["topology"] = result.topology;
  j["selector"] = result.selector;
  if (!result.selector_params.empty()) {
    j["selector_params"] = ordered_json::parse(result.selector_params);
  }
  j["placement"] = result.placement;
  j["seed"] = result.seed;

  ordered_json& transactions = j["transactions"];
  transactions["completed"] = result.completed;
  transactions["per_second"] = round_to_scale(result.per_second(), kPerSecondScale);
  transactions["failed"] = result.failed_calls;

  const stats::Histogram& lat = result.latency;
  ordered_json& latency = j["latency"];
  latency["count"] = lat.count();
  latency["mean_ns"] = lat.mean_rounded();
  latency["min_ns"] = lat.min();
  latency["p50_ns"] = lat.percentile(0.50);
  latency["p90_ns"] = lat.percentile(0.90);
  latency["p99_ns"] = lat.percentile(0.99);
  latency["max_ns"] = lat.max();

  ordered_json& tiers = j["tiers"];
  for (stats::SchedClass c : stats::kAllSchedClasses) {
    ordered_json& cls = tiers[std::string(stats::sched_class_name(c))];
    for (stats::Tier t : stats::kAllTiers)
      cls[std::string(stats::tier_name(t))] = tier_json(result, c, t);
  }

  j["counters"] = counters_json(result.counters);
  j["process_counters"] = counters_json(result.process_counters);

  const stats::SelectionCounts& sel = result.selection;
  ordered_json& selection = j["selection"];
  ordered_json& decisions = selection["decisions"];
  decisions["same_cpu"] = sel.same_cpu;
  decisions["same_cluster"] = sel.same_cluster;
  decisions["other"] = sel.other;
  decisions["none_idle"] = sel.none_idle;
  ordered_json& nudges = selection["nudges"];
  nudges["applied"] = sel.nudges_applied;
  nudges["declined"] = sel.nudges_declined;

  const stats::SchedulerStats& sched = result.scheduler;
  ordered_json& scheduler = j["scheduler"];
  scheduler["governor"] = sched.governor;
  ordered_json& clusters = scheduler["clusters"];
  clusters = ordered_json::array();
  for (const auto& cluster : sched.clusters) {
    ordered_json entry = ordered_json::object();
    entry["name"] = cluster.name;
    entry["mean_freq_khz"] = cluster.mean_freq_khz;
    clusters.push_back(entry);
  }
  ordered_json& busy = scheduler["cpu_busy_share"];
  busy = ordered_json::array();
  for (const std::int64_t ns : sched.cpu_busy_ns) {
    const double share = result.simulated_ns > 0
                             ? static_cast<double>(ns) / static_cast<double>(result.simulated_ns)
                             : 0.0;
    busy.push_back(round_to_scale(share, kShareScale));
  }
  scheduler["frequency_changes"] = sched.frequency_changes;
  scheduler["newidle_pulls"] = sched.newidle_pulls;
  scheduler["rt_pulls"] = sched.rt_pulls;
  scheduler["rt_pushes"] = sched.rt_pushes;
  scheduler["balance_pulls"] = sched.balance_pulls;
  scheduler["misfit_migrations"] = sched.misfit_migrations;

  const stats::AllocatorStats& alloc = result.allocator;
  ordered_json& allocator = j["allocator"];
  allocator["lock"] = alloc.lock;
  allocator["page_install"] = alloc.pages_installed_locked ? "locked" : "unlocked";
  allocator["allocations"] = alloc.allocations;
  allocator["failed_no_space"] = alloc.failed_no_space;
  allocator["failed_async_space"] = alloc.failed_async_space;
  allocator["pages_installed"] = alloc.pages_installed;
  allocator["pages_reclaimed"] = alloc.pages_reclaimed;
  allocator["shrinker_skips"] = alloc.shrinker_skips;
  allocator["alloc_lock"] = lock_json(alloc.alloc_lock);
  allocator["page_lock"] = lock_json(alloc.page_lock);

  ordered_json& provenance = j["provenance"];
  provenance["version"] = result.version;
  if (!result.scenario_hash.empty()) provenance["scenario_hash"] = result.scenario_hash;
  if (!result.topology_hash.empty()) provenance["topology_hash"] = result.topology_hash;
  if (!result.overrides.empty()) provenance["overrides"] = ordered_json::parse(result.overrides);
  provenance["fingerprint"] = hex64(result.fingerprint);
  return j;
}

void write_result_json(const stats::RunResult& result, std::ostream& out) {
  out << result_to_json(result).dump(2, ' ', false,
                                     nlohmann::ordered_json::error_handler_t::replace)
      << '\n';
}

}  // namespace bindersim::io
