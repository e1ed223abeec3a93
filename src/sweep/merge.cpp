#include "bindersim/sweep/merge.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string_view>

#include "bindersim/common/error.hpp"
#include "bindersim/common/hash.hpp"
#include "bindersim/common/json_reader.hpp"
#include "bindersim/io/compare_report.hpp"
#include "bindersim/io/result_json.hpp"

namespace bindersim::sweep {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

ordered_json to_ordered(const json& value) { return ordered_json::parse(compact_json(value)); }

// Canonical text of a column's or a point's identity.
std::string key_of(const std::vector<NamedValue>& axes, const std::string* selector,
                   const std::string* placement) {
  json key = json::array();
  for (const auto& [name, value] : axes) key.push_back(json::array({name, value}));
  if (selector != nullptr) key.push_back(*selector);
  if (placement != nullptr) key.push_back(*placement);
  return compact_json(key);
}

std::vector<std::string> names_of(const std::vector<NamedValue>& axes) {
  std::vector<std::string> names;
  for (const auto& axis : axes) names.push_back(axis.first);
  return names;
}

ordered_json axes_object(const std::vector<NamedValue>& axes) {
  ordered_json j = ordered_json::object();
  for (const auto& [name, value] : axes) j[name] = to_ordered(value);
  return j;
}

std::string axes_text(const std::vector<NamedValue>& axes) {
  std::string text;
  for (const auto& [name, value] : axes) {
    if (!text.empty()) text += ", ";
    text += name;
    text += '=';
    text += value_label(value);
  }
  return text;
}

std::string seeds_list(const std::vector<std::uint64_t>& seeds) {
  std::string out;
  for (std::size_t i = 0; i < seeds.size(); ++i) out += fmt::format("{}{}", i ? "," : "", seeds[i]);
  return out;
}

// Adds one run's figure to its pooled sum. A sum beyond the figure's type is a ConfigError
// naming it: only runs far beyond any practical use get there (2^63 ns is 292 years).
template <typename T>
void add_to(T& sum, T run, std::string_view figure) {
  if (__builtin_add_overflow(sum, run, &sum)) {
    throw ConfigError(fmt::format("the pooled {} passes {} (pool fewer or shorter runs)", figure,
                                  std::numeric_limits<T>::max()));
  }
}

// Merges one run's histogram into its pooled one, with the same check on the count (a bucket
// never holds more than the count; the sum is 128-bit).
void merge_to(stats::Histogram& sum, const stats::Histogram& run, std::string_view figure) {
  std::uint64_t count = sum.count();
  add_to(count, run.count(), figure);
  sum.merge(run);
}

// Sums of one run's figures into the pooled run's.
void add_counters(stats::Counters& sum, const stats::Counters& run) {
  add_to(sum.cpu_cycles, run.cpu_cycles, "counters/cpu_cycles");
  add_to(sum.cache_refs, run.cache_refs, "counters/cache_refs");
  add_to(sum.cache_misses, run.cache_misses, "counters/cache_misses");
  add_to(sum.migrations, run.migrations, "counters/migrations");
  add_to(sum.context_switches, run.context_switches, "counters/context_switches");
}

// `name`: the lock's place in the result ("allocator/alloc_lock"), to name a figure.
void add_lock(stats::LockStats& sum, const stats::LockStats& lock, const std::string& name) {
  add_to(sum.acquisitions, lock.acquisitions, name + "/acquisitions");
  add_to(sum.contended, lock.contended, name + "/contended");
  add_to(sum.trylock_failures, lock.trylock_failures, name + "/trylock_failures");
  add_to(sum.sleeps, lock.sleeps, name + "/sleeps");
  add_to(sum.handoffs, lock.handoffs, name + "/handoffs");
  merge_to(sum.wait_ns, lock.wait_ns, name + "/wait samples");
  merge_to(sum.hold_ns, lock.hold_ns, name + "/hold samples");
  add_to(sum.spin_ns, lock.spin_ns, name + "/spin_ns");
  add_to(sum.inversions, lock.inversions, name + "/inversions");
  add_to(sum.inversion_ns, lock.inversion_ns, name + "/inversion_ns");
  add_to(sum.owner_preempted, lock.owner_preempted, name + "/owner_preempted");
  add_to(sum.owner_preempted_ns, lock.owner_preempted_ns, name + "/owner_preempted_ns");
}

void add_allocator(stats::AllocatorStats& sum, const stats::AllocatorStats& alloc) {
  add_to(sum.allocations, alloc.allocations, "allocator/allocations");
  add_to(sum.failed_no_space, alloc.failed_no_space, "allocator/failed_no_space");
  add_to(sum.failed_async_space, alloc.failed_async_space, "allocator/failed_async_space");
  add_to(sum.pages_installed, alloc.pages_installed, "allocator/pages_installed");
  add_to(sum.pages_reclaimed, alloc.pages_reclaimed, "allocator/pages_reclaimed");
  add_to(sum.shrinker_skips, alloc.shrinker_skips, "allocator/shrinker_skips");
  add_lock(sum.alloc_lock, alloc.alloc_lock, "allocator/alloc_lock");
  add_lock(sum.page_lock, alloc.page_lock, "allocator/page_lock");
}

}  // namespace

void pool_into(stats::RunResult& pooled, const stats::RunResult& run) {
  add_to(pooled.completed, run.completed, "completed calls");
  add_to(pooled.failed_calls, run.failed_calls, "failed calls");
  add_allocator(pooled.allocator, run.allocator);
  add_to(pooled.simulated_ns, run.simulated_ns, "simulated time (ns)");
  merge_to(pooled.latency, run.latency, "latency samples");
  for (std::size_t c = 0; c < stats::kNumSchedClasses; ++c) {
    for (std::size_t t = 0; t < stats::kNumTiers; ++t) {
      merge_to(pooled.tiers[c][t], run.tiers[c][t], "tier samples");
      pooled.breakdown[c][t] += run.breakdown[c][t];
    }
  }
  add_counters(pooled.counters, run.counters);
  add_counters(pooled.process_counters, run.process_counters);
  stats::SelectionCounts& selection = pooled.selection;
  add_to(selection.same_cpu, run.selection.same_cpu, "selection/same_cpu");
  add_to(selection.same_cluster, run.selection.same_cluster, "selection/same_cluster");
  add_to(selection.other, run.selection.other, "selection/other");
  add_to(selection.none_idle, run.selection.none_idle, "selection/none_idle");
  add_to(selection.nudges_applied, run.selection.nudges_applied, "selection/nudges_applied");
  add_to(selection.nudges_declined, run.selection.nudges_declined, "selection/nudges_declined");
  stats::SchedulerStats& sched = pooled.scheduler;
  if (sched.cpu_busy_ns.size() < run.scheduler.cpu_busy_ns.size()) {
    sched.cpu_busy_ns.resize(run.scheduler.cpu_busy_ns.size(), 0);
  }
  for (std::size_t cpu = 0; cpu < run.scheduler.cpu_busy_ns.size(); ++cpu) {
    add_to(sched.cpu_busy_ns[cpu], run.scheduler.cpu_busy_ns[cpu], "CPU busy time (ns)");
  }
  add_to(sched.frequency_changes, run.scheduler.frequency_changes, "frequency changes");
  add_to(sched.newidle_pulls, run.scheduler.newidle_pulls, "newidle pulls");
  add_to(sched.rt_pulls, run.scheduler.rt_pulls, "RT pulls");
  add_to(sched.rt_pushes, run.scheduler.rt_pushes, "RT pushes");
  add_to(sched.balance_pulls, run.scheduler.balance_pulls, "balance pulls");
  add_to(sched.misfit_migrations, run.scheduler.misfit_migrations, "misfit migrations");
  add_to(pooled.events, run.events, "events");
  pooled.clients_finished = pooled.clients_finished && run.clients_finished;
}

SweepMerger::SweepMerger(std::optional<std::vector<RunSpec>> listed)
    : metrics_(stats::comparison_metrics()) {
  if (!listed) return;
  listed_.emplace();
  for (RunSpec& run : *listed) {
    const std::string id = run.run_id;
    if (!listed_->emplace(id, std::move(run)).second) {
      throw ConfigError("the runs file lists run " + id + " twice");
    }
  }
}

SweepMerger::Column& SweepMerger::column_of(const RunSpec& run) {
  const std::string key = key_of(run.axes, &run.selector, &run.placement);
  auto [it, added] = columns_.try_emplace(key);
  Column& column = it->second;
  if (added) {
    column.axes = run.axes;
    column.selector = run.selector;
    column.placement = run.placement;
    column.first_index = run.index;
  }
  column.first_index = std::min(column.first_index, run.index);
  return column;
}

void SweepMerger::add(const RunRecord& record, const std::string& file) {
  const RunSpec* run = &record.run;
  if (listed_) {
    const auto it = listed_->find(record.run.run_id);
    if (it == listed_->end()) {
      ++ignored_;
      return;
    }
    run = &it->second;
  } else {
    if (sweep_ && *sweep_ != run->sweep) {
      throw ConfigError(file + ": /run/sweep: expected \"" + *sweep_ +
                        "\" (the sweep of the results merged before it), got \"" + run->sweep +
                        "\"; merge one sweep per directory, or pass the sweep's runs file");
    }
    const std::vector<std::string> names = names_of(run->axes);
    if (axis_names_ && *axis_names_ != names) {
      throw ConfigError(file + ": /run/axes: other axes than the results merged before it");
    }
    sweep_ = run->sweep;
    axis_names_ = names;
  }
  if (!added_.insert(run->run_id).second) {
    throw ConfigError(file + ": run " + run->run_id + " is merged twice");
  }
  Column& column = column_of(*run);
  // The seeds of a column differ in their seed alone: another scenario or other overrides
  // (a sweep edited and run again into the same directory) would pool different experiments.
  if (column.by_seed.empty()) {
    column.scenario_hash = run->scenario_hash;
    column.overrides = run->overrides;
  } else if (column.scenario_hash != run->scenario_hash || column.overrides != run->overrides) {
    const Entry& other = column.by_seed.begin()->second;
    throw ConfigError(
        file + ": " +
        (column.scenario_hash != run->scenario_hash ? "/run/scenario_hash" : "/run/overrides") +
        ": run " + run->run_id + " differs from the other seeds of its column (run " +
        other.run_id + ", " + other.file + ") in more than its seed; merge one sweep per " +
        "directory, or pass the sweep's runs file");
  }
  Entry entry{run->run_id, file, record.result.fingerprint,
              stats::measure(metrics_, record.result)};
  if (const auto [it, added] = column.by_seed.emplace(run->seed, std::move(entry)); !added) {
    throw ConfigError(file + ": run " + run->run_id + " repeats seed " + std::to_string(run->seed) +
                      " of " + run->selector +
                      (run->axes.empty() ? std::string() : " at " + axes_text(run->axes)) +
                      " (run " + it->second.run_id + ", " + it->second.file + ")");
  }
  if (!column.pooled) {
    column.pooled.emplace();
    stats::RunResult& pooled = *column.pooled;
    pooled.scenario = record.result.scenario;
    pooled.topology = record.result.topology;
    pooled.selector = record.result.selector;
    pooled.selector_params = record.result.selector_params;
    pooled.placement = record.result.placement;
    pooled.version = record.result.version;
    pooled.scenario_hash = record.result.scenario_hash;
    pooled.topology_hash = record.result.topology_hash;
    pooled.overrides = record.result.overrides;
    pooled.clients_finished = true;
    pooled.scheduler.governor = record.result.scheduler.governor;
    pooled.scheduler.clusters = record.result.scheduler.clusters;
    pooled.allocator.lock = record.result.allocator.lock;
    pooled.allocator.pages_installed_locked = record.result.allocator.pages_installed_locked;
    column.freq_time.assign(pooled.scheduler.clusters.size(), 0);
  } else {
    const stats::RunResult& pooled = *column.pooled;
    const auto differs = [&](const char* key, const std::string& a, const std::string& b) {
      if (a != b) {
        throw ConfigError(file + ": /result/" + key + ": expected " + quote_text(a) +
                          " (as the other seeds of its column), got " + quote_text(b));
      }
    };
    differs("scenario", pooled.scenario, record.result.scenario);
    differs("topology", pooled.topology, record.result.topology);
    if (pooled.selector_params != record.result.selector_params) {
      const auto shown = [](const std::string& params) { return params.empty() ? "{}" : params; };
      throw ConfigError(
          file + ": /result/selector_params: expected " + shown(pooled.selector_params) +
          " (as the other seeds of its column), got " + shown(record.result.selector_params));
    }
    differs("provenance/version", pooled.version, record.result.version);
    // What the runs were made from: the scenario and overrides are the run's (read_run_record
    // checks them against it), the topology file must be the same for every seed. A result
    // written before results recorded them leaves the column's unknown.
    for (auto [key, field] :
         {std::pair{"provenance/scenario_hash", &stats::RunResult::scenario_hash},
          std::pair{"provenance/topology_hash", &stats::RunResult::topology_hash},
          std::pair{"provenance/overrides", &stats::RunResult::overrides}}) {
      std::string& known = column.pooled.value().*field;
      const std::string& seen = record.result.*field;
      if (known.empty() || seen.empty()) {
        known.clear();
      } else {
        differs(key, known, seen);
      }
    }
    differs("scheduler/governor", pooled.scheduler.governor, record.result.scheduler.governor);
    differs("allocator/lock", pooled.allocator.lock, record.result.allocator.lock);
    const auto install = [](const stats::AllocatorStats& alloc) {
      return std::string(alloc.pages_installed_locked ? "locked" : "unlocked");
    };
    differs("allocator/page_install", install(pooled.allocator), install(record.result.allocator));
    const auto cluster_names = [](const stats::SchedulerStats& stats) {
      std::string names;
      for (const auto& cluster : stats.clusters) {
        if (!names.empty()) names += ',';
        names += cluster.name;
      }
      return names + " (" + std::to_string(stats.cpu_busy_ns.size()) + " CPUs)";
    };
    differs("scheduler/clusters", cluster_names(pooled.scheduler),
            cluster_names(record.result.scheduler));
  }
  // Cluster frequencies are time-weighted means: kept as exact sums of mean x time until the
  // summary divides them by the pooled time.
  for (std::size_t c = 0; c < column.freq_time.size(); ++c) {
    column.freq_time[c] += static_cast<Uint128>(record.result.scheduler.clusters[c].mean_freq_khz) *
                           static_cast<Uint128>(record.result.simulated_ns);
  }
  try {
    pool_into(*column.pooled, record.result);
  } catch (const ConfigError& error) {
    throw ConfigError(file + ": " + error.what());
  }
}

SweepSummary SweepMerger::finish() && {
  SweepSummary summary;
  summary.metrics = metrics_;
  summary.ignored = ignored_;
  summary.merged = added_.size();
  std::map<std::string, Column> columns = std::move(columns_);
  std::map<std::string, std::set<std::uint64_t>> missing_seeds;
  if (listed_) {
    summary.listed = listed_->size();
    for (const auto& [id, run] : *listed_) {
      if (added_.count(id)) continue;
      summary.missing.push_back(run);
      const std::string key = key_of(run.axes, &run.selector, &run.placement);
      auto [it, added] = columns.try_emplace(key);
      if (added) {
        it->second.axes = run.axes;
        it->second.selector = run.selector;
        it->second.placement = run.placement;
        it->second.first_index = run.index;
      }
      it->second.first_index = std::min(it->second.first_index, run.index);
      missing_seeds[key].insert(run.seed);
    }
    std::sort(summary.missing.begin(), summary.missing.end(),
              [](const RunSpec& a, const RunSpec& b) { return a.index < b.index; });
    // The sweep and its axes as the runs file names them (its lowest index).
    const RunSpec* first = nullptr;
    for (const auto& [id, run] : *listed_) {
      if (first == nullptr || run.index < first->index) first = &run;
    }
    if (first != nullptr) {
      summary.sweep = first->sweep;
      summary.axis_names = names_of(first->axes);
    }
  } else {
    if (added_.empty()) throw ConfigError("no results to merge");
    summary.sweep = sweep_.value_or("");
    summary.axis_names = axis_names_.value_or(std::vector<std::string>{});
  }

  // Points by the canonical text of their axis values; each takes its columns' lowest index.
  std::map<std::string, SweepPoint> points;
  for (auto& [key, column] : columns) {
    const std::string point_key = key_of(column.axes, nullptr, nullptr);
    SweepPoint& point = points[point_key];
    point.axes = column.axes;

    SweepColumn out;
    out.label = column.selector;
    out.selector = column.selector;
    out.placement = column.placement;
    out.first_index = column.first_index;
    std::string fingerprints;
    for (const auto& [seed, entry] : column.by_seed) {
      out.seeds.push_back(seed);
      out.run_ids.push_back(entry.run_id);
      out.per_seed.push_back(entry.metrics);
      if (!fingerprints.empty()) fingerprints += ',';
      fingerprints += hex64(entry.fingerprint);
    }
    if (const auto it_missing = missing_seeds.find(key); it_missing != missing_seeds.end()) {
      out.missing_seeds.assign(it_missing->second.begin(), it_missing->second.end());
    }
    out.pooled = std::move(column.pooled);
    if (out.pooled && out.pooled->simulated_ns > 0) {
      const auto time = static_cast<Uint128>(out.pooled->simulated_ns);
      for (std::size_t c = 0; c < column.freq_time.size(); ++c) {
        out.pooled->scheduler.clusters[c].mean_freq_khz =
            static_cast<std::int64_t>((2 * column.freq_time[c] + time) / (2 * time));
      }
    }
    if (out.pooled) {
      out.pooled->seed = out.seeds.front();
      out.pooled->fingerprint = fnv1a64(fingerprints);
    }
    point.columns.push_back(std::move(out));
  }
  for (auto& [key, point] : points) {
    std::sort(
        point.columns.begin(), point.columns.end(),
        [](const SweepColumn& a, const SweepColumn& b) { return a.first_index < b.first_index; });
    for (SweepColumn& column : point.columns) {
      const std::size_t same = static_cast<std::size_t>(
          std::count_if(point.columns.begin(), point.columns.end(),
                        [&](const SweepColumn& c) { return c.selector == column.selector; }));
      if (same > 1) column.label = column.selector + " " + column.placement;
    }
    summary.points.push_back(std::move(point));
  }
  std::sort(summary.points.begin(), summary.points.end(),
            [](const SweepPoint& a, const SweepPoint& b) {
              return a.columns.front().first_index < b.columns.front().first_index;
            });
  return summary;
}

namespace {

// The seeds any column of `point` merged: those its table is over.
std::set<std::uint64_t> seeds_of(const SweepPoint& point) {
  std::set<std::uint64_t> seeds;
  for (const SweepColumn& column : point.columns) {
    seeds.insert(column.seeds.begin(), column.seeds.end());
  }
  return seeds;
}

}  // namespace

std::vector<stats::MetricSummary> point_statistics(const SweepSummary& summary,
                                                   const SweepPoint& point) {
  std::vector<stats::MetricSummary> out;
  for (std::size_t m = 0; m < summary.metrics.size(); ++m) {
    std::vector<std::vector<double>> samples(point.columns.size());
    std::vector<std::optional<double>> pooled(point.columns.size());
    for (std::size_t c = 0; c < point.columns.size(); ++c) {
      const SweepColumn& column = point.columns[c];
      for (const auto& values : column.per_seed) {
        BSIM_CHECK(values.size() == summary.metrics.size());
        if (values[m]) samples[c].push_back(*values[m]);
      }
      if (column.pooled) pooled[c] = summary.metrics[m].value(*column.pooled);
    }
    std::vector<stats::ColumnStats> stats = stats::compare_columns(samples);
    for (std::size_t c = 0; c < stats.size(); ++c) {
      stats[c].mean = pooled[c];
      stats[c].delta_pct.reset();
      if (c == 0 || !pooled[c] || !pooled[0]) continue;
      if (*pooled[0] != 0.0) {
        stats[c].delta_pct = 100.0 * (*pooled[c] - *pooled[0]) / std::fabs(*pooled[0]);
      } else if (*pooled[c] == 0.0) {
        stats[c].delta_pct = 0.0;
      }
    }
    out.push_back(stats::MetricSummary{summary.metrics[m], std::move(stats)});
  }
  return out;
}

void print_sweep_tables(const SweepSummary& summary, std::ostream& out) {
  for (const SweepPoint& point : summary.points) {
    if (!point.axes.empty()) out << "== " << axes_text(point.axes) << " ==\n";
    io::CompareReport report;
    const std::set<std::uint64_t> seeds = seeds_of(point);
    for (const SweepColumn& column : point.columns) {
      if (report.scenario.empty() && column.pooled) report.scenario = column.pooled->scenario;
      io::CompareColumn c;
      c.label = column.label;
      c.selector = column.selector;
      c.placement = column.placement;
      c.topology = column.pooled ? column.pooled->topology : "-";
      report.columns.push_back(std::move(c));
    }
    if (report.scenario.empty()) report.scenario = "-";
    report.seeds.assign(seeds.begin(), seeds.end());
    report.summary = point_statistics(summary, point);

    // The compare table, with a legend of its own: its last line is compare's legend.
    std::ostringstream table;
    io::print_compare_table(report, table);
    std::string text = table.str();
    BSIM_CHECK(!text.empty() && text.back() == '\n');
    text.pop_back();
    text.erase(text.rfind('\n') + 1);
    out << text;
    const std::string& baseline = point.columns.front().label;
    if (seeds.size() >= 2) {
      out << fmt::format(
          "values pooled over the calls of {} seeds (histograms merged bucket by bucket) ± 95% "
          "confidence half-width of the per-seed values (Student's t)\n",
          seeds.size());
      if (point.columns.size() > 1) {
        out << fmt::format(
            "Δ% of the pooled values against {}; ~ = not significant (Welch's t-test of the "
            "per-seed values, 5% level)\n",
            baseline);
      }
    } else {
      out << "one seed per column: no confidence interval or significance";
      if (point.columns.size() > 1) out << fmt::format("; Δ% against {}", baseline);
      out << '\n';
    }
    std::string missing;
    for (const SweepColumn& column : point.columns) {
      if (column.missing_seeds.empty()) continue;
      missing +=
          fmt::format("{}{} seed{} {}", missing.empty() ? "" : "; ", column.label,
                      column.missing_seeds.size() > 1 ? "s" : "", seeds_list(column.missing_seeds));
    }
    if (!missing.empty()) out << "missing runs: " << missing << '\n';
    // Without the runs file a missing run is unknown, but a seed that other columns of the
    // point have and this one lacks shows one.
    std::string uneven;
    for (const SweepColumn& column : point.columns) {
      std::vector<std::uint64_t> lacking;
      for (const std::uint64_t seed : seeds) {
        const bool merged = std::binary_search(column.seeds.begin(), column.seeds.end(), seed);
        const bool listed = std::find(column.missing_seeds.begin(), column.missing_seeds.end(),
                                      seed) != column.missing_seeds.end();
        if (!merged && !listed) lacking.push_back(seed);
      }
      if (lacking.empty()) continue;
      uneven += fmt::format("{}{} seed{} {}", uneven.empty() ? "" : "; ", column.label,
                            lacking.size() > 1 ? "s" : "", seeds_list(lacking));
    }
    if (!uneven.empty()) {
      out << "no result for " << uneven << " (which other columns have; --runs lists every "
          << "missing run)\n";
    }
    out << '\n';
  }
}

std::vector<std::size_t> metric_indices(const std::vector<stats::Metric>& metrics,
                                        const std::string& keys, const std::string& option) {
  std::string valid;
  for (const stats::Metric& metric : metrics) valid += (valid.empty() ? "" : ", ") + metric.key;
  std::vector<std::size_t> indices;
  std::size_t start = 0;
  while (start <= keys.size()) {
    const std::size_t comma = std::min(keys.find(',', start), keys.size());
    const std::string key = keys.substr(start, comma - start);
    const auto found = std::find_if(metrics.begin(), metrics.end(),
                                    [&](const stats::Metric& m) { return m.key == key; });
    if (found == metrics.end()) {
      throw ConfigError(option + " " + quote_text(keys) + ": unknown metric " + quote_text(key) +
                        "; valid metrics: " + valid);
    }
    const auto index = static_cast<std::size_t>(found - metrics.begin());
    if (std::find(indices.begin(), indices.end(), index) != indices.end()) {
      throw ConfigError(option + " " + quote_text(keys) + ": " + quote_text(key) + " given twice");
    }
    indices.push_back(index);
    start = comma + 1;
  }
  return indices;
}

void print_sweep_overview(const SweepSummary& summary,
                          const std::vector<std::size_t>& metric_indices, std::ostream& out) {
  // The columns of the sweep, each a (selector, placement) wherever a point has it, less what
  // an axis varies (io::sweep_overview_keys()).
  using ColumnKey = io::SweepColumnKey;
  std::vector<std::vector<ColumnKey>> own_keys;
  std::vector<std::vector<nlohmann::json>> axis_values;
  std::set<std::uint64_t> seeds;
  for (const SweepPoint& point : summary.points) {
    std::vector<ColumnKey>& keys_of_point = own_keys.emplace_back();
    for (const SweepColumn& c : point.columns) keys_of_point.emplace_back(c.selector, c.placement);
    std::vector<nlohmann::json>& values = axis_values.emplace_back();
    for (const auto& axis : point.axes) values.push_back(axis.second);
    seeds.merge(seeds_of(point));
  }
  const std::vector<std::vector<ColumnKey>> point_keys =
      io::sweep_overview_keys(own_keys, axis_values);
  const std::vector<ColumnKey> keys = io::sweep_column_order(point_keys);
  const std::vector<std::string> labels = io::sweep_column_labels(keys);
  out << fmt::format("sweep {} | {}", console_text(summary.sweep),
                     io::seeds_text({seeds.begin(), seeds.end()}));
  if (labels.size() > 1) out << " | Δ% against " << console_text(labels.front());
  out << '\n';
  if (labels.empty()) return;

  // Every cell first, row 0 and 1 the headings, so that each column is as wide as its widest
  // cell; a metric's label heads its group of columns.
  const std::size_t num_axes = summary.axis_names.size();
  std::vector<std::vector<std::string>> rows(2);
  std::vector<std::size_t> group_start;  // the column of each metric's first cell
  for (const std::string& name : summary.axis_names) {
    rows[0].emplace_back();
    rows[1].push_back(console_text(name));
  }
  for (const std::size_t m : metric_indices) {
    const stats::Metric& metric = summary.metrics[m];
    group_start.push_back(rows[1].size());
    for (std::size_t c = 0; c < labels.size(); ++c) {
      rows[0].push_back(c == 0 ? metric.label + " (" + metric.unit + ")" : "");
      rows[1].push_back(console_text(labels[c]) + (c == 0 ? "" : " Δ%"));
    }
  }
  bool any_untested = false;
  bool any_several_seeds = false;
  for (std::size_t p = 0; p < summary.points.size(); ++p) {
    const SweepPoint& point = summary.points[p];
    const std::vector<ColumnKey>& keys_of_point = point_keys[p];  // by the point's columns
    std::vector<std::string>& row = rows.emplace_back();
    for (const auto& axis : point.axes) row.push_back(console_text(value_label(axis.second)));
    row.resize(num_axes);
    // As the point's own table: marks only where the point has several seeds.
    const bool several_seeds = seeds_of(point).size() >= 2;
    any_several_seeds |= several_seeds;
    // A Δ is against the point's own first column: only where that is the baseline.
    const bool has_baseline = keys_of_point.front() == keys.front();
    const std::vector<stats::MetricSummary> statistics = point_statistics(summary, point);
    for (const std::size_t m : metric_indices) {
      for (std::size_t c = 0; c < keys.size(); ++c) {
        const auto column = std::find(keys_of_point.begin(), keys_of_point.end(), keys[c]);
        if (column == keys_of_point.end() || (c != 0 && !has_baseline)) {
          row.emplace_back("-");
          continue;
        }
        const stats::ColumnStats& s =
            statistics[m].columns[static_cast<std::size_t>(column - keys_of_point.begin())];
        any_untested |= c != 0 && several_seeds && s.delta_pct && !s.significant;
        row.push_back(c == 0 ? io::mean_cell(s, /*with_ci=*/false)
                             : io::delta_cell(s, several_seeds));
      }
    }
  }
  std::vector<std::size_t> width(rows[1].size(), 0);
  for (std::size_t r = 1; r < rows.size(); ++r) {
    for (std::size_t i = 0; i < rows[r].size(); ++i) {
      width[i] = std::max(width[i], io::display_width(rows[r][i]));
    }
  }
  // The width of the group of columns from `first`, gaps between them included.
  const auto group_span = [&](std::size_t first) {
    std::size_t span = 0;
    for (std::size_t i = first; i < first + labels.size(); ++i) {
      span += width[i] + (i == first ? 0 : io::kGap);
    }
    return span;
  };
  // A metric's label may be wider than its columns: the last of them widens to hold it.
  for (const std::size_t first : group_start) {
    const std::size_t span = group_span(first);
    const std::size_t need = io::display_width(rows[0][first]);
    if (need > span) width[first + labels.size() - 1] += need - span;
  }
  const auto print = [&out](std::string line) {
    line.erase(line.find_last_not_of(' ') + 1);
    out << line << '\n';
  };
  // The first heading: blank over the axes, each metric's label over its group of columns.
  std::string heading;
  for (std::size_t i = 0; i < num_axes; ++i) {
    heading += std::string(i == 0 ? 0 : io::kGap, ' ') + std::string(width[i], ' ');
  }
  for (const std::size_t first : group_start) {
    heading += std::string(first == 0 ? 0 : io::kGap, ' ') +
               io::pad_right(rows[0][first], group_span(first));
  }
  print(heading);
  // The rest: axis values to the left, figures to the right.
  for (std::size_t r = 1; r < rows.size(); ++r) {
    std::string line;
    for (std::size_t i = 0; i < rows[r].size(); ++i) {
      line +=
          std::string(i == 0 ? 0 : io::kGap, ' ') +
          (i < num_axes ? io::pad_right(rows[r][i], width[i]) : io::pad_left(rows[r][i], width[i]));
    }
    print(line);
  }
  // The legend of the per-point tables, for the values shown here.
  if (any_untested) out << "? = not tested: fewer than two seeds gave the metric a value\n";
  out << "values pooled over the calls of each point's seeds";
  if (labels.size() > 1) {
    out << "; Δ% of the pooled values against " << console_text(labels.front());
    if (any_several_seeds) {
      out << "; ~ = not significant (Welch's t-test of the per-seed values, 5% level)";
    }
  }
  out << '\n';
}

ordered_json summary_to_json(const SweepSummary& summary) {
  ordered_json j = ordered_json::object();
  j["schema"] = kSummarySchema;
  j["sweep"] = summary.sweep;
  j["axes"] = summary.axis_names;
  ordered_json& metrics = j["metrics"];
  metrics = ordered_json::array();
  for (const stats::Metric& metric : summary.metrics) {
    ordered_json m = ordered_json::object();
    m["key"] = metric.key;
    m["label"] = metric.label;
    m["unit"] = metric.unit;
    m["better"] = stats::better_name(metric.better);
    metrics.push_back(std::move(m));
  }

  ordered_json& runs = j["runs"];
  runs["listed"] = summary.listed ? ordered_json(*summary.listed) : ordered_json(nullptr);
  runs["merged"] = summary.merged;
  runs["ignored"] = summary.ignored;
  ordered_json& missing = runs["missing"];
  missing = ordered_json::array();
  for (const RunSpec& run : summary.missing) {
    ordered_json m = ordered_json::object();
    m["index"] = run.index;
    m["run_id"] = run.run_id;
    m["axes"] = axes_object(run.axes);
    m["selector"] = run.selector;
    m["placement"] = run.placement;
    m["seed"] = run.seed;
    missing.push_back(std::move(m));
  }

  ordered_json& points = j["points"];
  points = ordered_json::array();
  for (const SweepPoint& point : summary.points) {
    const std::vector<stats::MetricSummary> statistics = point_statistics(summary, point);
    ordered_json p = ordered_json::object();
    p["axes"] = axes_object(point.axes);
    ordered_json& columns = p["columns"];
    columns = ordered_json::array();
    for (std::size_t c = 0; c < point.columns.size(); ++c) {
      const SweepColumn& column = point.columns[c];
      ordered_json col = ordered_json::object();
      col["label"] = column.label;
      col["selector"] = column.selector;
      col["placement"] = column.placement;
      col["seeds"] = column.seeds;
      col["run_ids"] = column.run_ids;
      col["missing_seeds"] = column.missing_seeds;
      ordered_json& values = col["metrics"];
      values = ordered_json::object();
      for (const stats::MetricSummary& row : statistics) {
        const stats::ColumnStats& s = row.columns[c];
        ordered_json cell = ordered_json::object();
        cell["value"] = io::summary_value_json(s.mean);
        cell["ci95"] = io::summary_value_json(s.ci95);
        cell["delta_pct"] = io::summary_value_json(s.delta_pct);
        cell["significant"] = s.significant ? ordered_json(*s.significant) : ordered_json(nullptr);
        values[row.metric.key] = std::move(cell);
      }
      if (column.pooled) {
        ordered_json pooled = io::result_to_json(*column.pooled);
        pooled.erase("schema");
        pooled.erase("seed");
        col["pooled"] = std::move(pooled);
      } else {
        col["pooled"] = nullptr;
      }
      columns.push_back(std::move(col));
    }
    points.push_back(std::move(p));
  }
  return j;
}

void write_summary_json(const SweepSummary& summary, std::ostream& out) {
  out << summary_to_json(summary).dump(2, ' ', false, ordered_json::error_handler_t::replace)
      << '\n';
}

}  // namespace bindersim::sweep
