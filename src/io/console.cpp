#include "bindersim/io/console.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "bindersim/common/json_reader.hpp"
#include "bindersim/io/compare_report.hpp"
#include "bindersim/io/result_json.hpp"

namespace bindersim::io {

namespace {

using stats::tier_label;
std::string_view class_label(stats::SchedClass c) { return stats::sched_class_label(c); }

// A non-negative rate with one decimal and grouped thousands: 41045.06 -> "41,045.1".
std::string grouped_rate(double x) {
  const double tenths = std::round(x * 10.0);
  const auto whole = static_cast<std::uint64_t>(tenths / 10.0);
  const auto frac = static_cast<std::uint64_t>(tenths - static_cast<double>(whole) * 10.0);
  return fmt::format("{}.{}", group_thousands(whole), frac);
}

// Nanoseconds as milliseconds with 3 decimals, bare (for columns titled "(ms)") or with unit.
std::string ms_value(double ns) { return fmt::format("{:.3f}", ns / 1e6); }
std::string ms_value(std::int64_t ns) { return ms_value(static_cast<double>(ns)); }
std::string ms(double ns) { return ms_value(ns) + " ms"; }
std::string ms(std::int64_t ns) { return ms_value(ns) + " ms"; }
std::string percent(double share) { return fmt::format("{:.1f}%", share * 100.0); }

// Tier table columns: label widths and right-aligned number widths.
constexpr std::size_t kClassWidth = 13;
constexpr std::size_t kTierWidth = 15;
constexpr std::size_t kLatencyWidth = 13;
constexpr std::size_t kCallsWidth = 13;
constexpr std::size_t kShareWidth = 8;
constexpr std::size_t kPartWidth = 12;  // breakdown columns

// `text` right-aligned in `width` columns, or wider by as much as it needs: a number too long
// for its column still keeps one space from the one before.
std::string right(const std::string& text, std::size_t width) {
  return fmt::format("{:>{}}", text, std::max(width, text.size() + 1));
}

// Integer nanoseconds as microseconds with 3 decimals, exactly: -1500 -> "-1.500".
std::string us_value(std::int64_t ns) {
  const std::uint64_t magnitude =
      ns < 0 ? static_cast<std::uint64_t>(-(ns + 1)) + 1 : static_cast<std::uint64_t>(ns);
  return fmt::format("{}{}.{:03}", ns < 0 ? "-" : "", magnitude / 1000, magnitude % 1000);
}

std::string us_text(std::int64_t ns) { return us_value(ns) + " us"; }

// The breakdown block: one row per class × tier with calls, mean per call of every part in
// microseconds. Nothing when no tier has calls.
void print_breakdown(const stats::RunResult& result, std::ostream& out) {
  bool any = false;
  for (stats::SchedClass c : stats::kAllSchedClasses) {
    for (stats::Tier t : stats::kAllTiers) any = any || result.tier(c, t).count() != 0;
  }
  if (!any) return;
  out << "breakdown (mean per call, us)\n";
  std::string line = fmt::format("{:<{}}{:<{}}", "class", kClassWidth, "tier", kTierWidth);
  for (const BreakdownPart& part : kBreakdownParts) {
    line += fmt::format("{:>{}}", part.label, kPartWidth);
  }
  out << line << '\n';
  for (stats::SchedClass c : stats::kAllSchedClasses) {
    bool first = true;  // the class is named on its first row only
    for (stats::Tier t : stats::kAllTiers) {
      if (result.tier(c, t).count() == 0) continue;
      const stats::Breakdown mean = tier_breakdown_mean(result, c, t);
      line = fmt::format("{:<{}}{:<{}}", first ? class_label(c) : "", kClassWidth, tier_label(t),
                         kTierWidth);
      for (const BreakdownPart& part : kBreakdownParts) {
        line += right(us_value(mean.*part.member), kPartWidth);
      }
      out << line << '\n';
      first = false;
    }
  }
}

}  // namespace

void print_tier_table(const stats::RunResult& result, std::ostream& out) {
  out << fmt::format(
      "scenario {} | selector {} | placement {} | seed {} | {} calls | {} calls/s\n",
      console_text(result.scenario),
      console_text(result.selector_params.empty() ? result.selector
                                                  : result.selector + " " + result.selector_params),
      console_text(result.placement), result.seed, group_thousands(result.completed),
      grouped_rate(result.per_second()));
  out << fmt::format("{:<{}}{:<{}}{:>{}}{:>{}}{:>{}}{:>{}}{:>{}}\n", "class", kClassWidth, "tier",
                     kTierWidth, "avg latency", kLatencyWidth, "calls", kCallsWidth, "share",
                     kShareWidth, "p50 latency", kLatencyWidth, "p99 latency", kLatencyWidth);
  for (stats::SchedClass c : stats::kAllSchedClasses) {
    for (stats::Tier t : stats::kAllTiers) {
      const stats::Histogram& h = result.tier(c, t);
      const bool empty = h.count() == 0;
      out << fmt::format("{:<{}}{:<{}}", t == stats::Tier::kSameCore ? class_label(c) : "",
                         kClassWidth, tier_label(t), kTierWidth)
          << right(empty ? "-" : ms(h.mean()), kLatencyWidth)
          << right(group_thousands(h.count()), kCallsWidth)
          << right(percent(tier_share(result, c, t)), kShareWidth)
          << right(empty ? "-" : ms(h.percentile(0.50)), kLatencyWidth)
          << right(empty ? "-" : ms(h.percentile(0.99)), kLatencyWidth) << '\n';
    }
  }
  print_breakdown(result, out);
  const stats::SelectionCounts& s = result.selection;
  out << fmt::format(
      "selection: same cpu {}, same cluster {}, other {}, none idle {} | nudges: applied {}, "
      "declined {}\n",
      group_thousands(s.same_cpu), group_thousands(s.same_cluster), group_thousands(s.other),
      group_thousands(s.none_idle), group_thousands(s.nudges_applied),
      group_thousands(s.nudges_declined));
  const stats::SchedulerStats& sched = result.scheduler;
  std::string freqs;
  for (const auto& cluster : sched.clusters) {
    if (!freqs.empty()) freqs += ", ";
    freqs += fmt::format(
        "{} {}", cluster.name,
        group_thousands(static_cast<std::uint64_t>((cluster.mean_freq_khz + 500) / 1000)));
  }
  out << fmt::format(
      "scheduler: {} governor, mean MHz {} | frequency changes {} | migrations {}, pulls: "
      "new-idle {}, balance {}, misfit {}, RT {} | RT pushes {}\n",
      sched.governor, freqs, group_thousands(sched.frequency_changes),
      group_thousands(result.counters.migrations), group_thousands(sched.newidle_pulls),
      group_thousands(sched.balance_pulls), group_thousands(sched.misfit_migrations),
      group_thousands(sched.rt_pulls), group_thousands(sched.rt_pushes));
  print_allocator(result, out);
}

void print_allocator(const stats::RunResult& result, std::ostream& out) {
  const stats::AllocatorStats& a = result.allocator;
  if (a.allocations == 0 && result.failed_calls == 0) return;  // no binder buffer was asked for
  out << fmt::format(
      "allocator: {} lock, pages installed {} ({}), reclaimed {} (shrinker skips {}) | failed "
      "sends {} (no space {}, no async space {})\n",
      a.lock, group_thousands(a.pages_installed),
      a.pages_installed_locked ? "under the lock" : "unlocked", group_thousands(a.pages_reclaimed),
      group_thousands(a.shrinker_skips), group_thousands(result.failed_calls),
      group_thousands(a.failed_no_space), group_thousands(a.failed_async_space));
  const auto lock_line = [&out](std::string_view name, const stats::LockStats& l) {
    if (l.acquisitions == 0) return;
    out << fmt::format(
        "{}: {} acquisitions, contended {} | wait p50 {} p99 {} | hold mean {} p99 {} | spin {} "
        "| sleeps {}, handoffs {} | owner preempted {} ({}), inversions {} ({})\n",
        name, group_thousands(l.acquisitions), percent(l.contended_share()),
        us_text(l.wait_ns.percentile(0.50)), us_text(l.wait_ns.percentile(0.99)),
        us_text(l.hold_ns.mean_rounded()), us_text(l.hold_ns.percentile(0.99)),
        ms(static_cast<double>(l.spin_ns)), group_thousands(l.sleeps), group_thousands(l.handoffs),
        group_thousands(l.owner_preempted), ms(static_cast<double>(l.owner_preempted_ns)),
        group_thousands(l.inversions), ms(static_cast<double>(l.inversion_ns)));
  };
  lock_line("alloc lock", a.alloc_lock);
  lock_line("page lock", a.page_lock);
}

std::int64_t legacy_bucket_midpoint_ns(const stats::Histogram& latency, double q) {
  // 128 buckets over 50 ms; a sample beyond the last bucket counts in the last one.
  constexpr std::int64_t kBucketNs = 50'000'000 / 128;  // 390,625 ns exactly
  constexpr std::int64_t kBuckets = 128;
  const std::int64_t bucket = std::min(latency.percentile(q) / kBucketNs, kBuckets - 1);
  return bucket * kBucketNs + kBucketNs / 2;
}

void print_binder_throughput(const stats::RunResult& result, int workers, int clients,
                             std::ostream& out) {
  const stats::Histogram& h = result.latency;
  const double elapsed_s = static_cast<double>(result.simulated_ns) / 1e9;
  const double iterations = clients > 0 ? static_cast<double>(result.completed) / clients : 0.0;
  const double per_sec = elapsed_s > 0 ? iterations * workers / elapsed_s : 0.0;
  auto ms_value = [](std::int64_t ns) {
    return fmt::format("{:.3f}", static_cast<double>(ns) / 1e6);
  };
  out << "binderThroughputTest terms (" << workers << " workers, "
      << group_thousands(static_cast<std::uint64_t>(iterations)) << " iterations each)\n";
  out << fmt::format("iterations per sec: {:.1f}\n", per_sec);
  // Without a call there is no latency to state, no bucket to name, nor anything to divide the
  // counters by: "-".
  const bool any_call = result.completed > 0;
  if (any_call) {
    out << fmt::format("average: {}ms worst: {}ms best: {}ms\n",
                       fmt::format("{:.3f}", h.mean() / 1e6), ms_value(h.max()), ms_value(h.min()));
    out << fmt::format("percentiles: 50%: {}ms 90%: {}ms 95%: {}ms 99%: {}ms\n",
                       ms_value(h.percentile(0.50)), ms_value(h.percentile(0.90)),
                       ms_value(h.percentile(0.95)), ms_value(h.percentile(0.99)));
    out << fmt::format(
        "128-bucket midpoints: 50%: {}ms 90%: {}ms 95%: {}ms 99%: {}ms\n",
        ms_value(legacy_bucket_midpoint_ns(h, 0.50)), ms_value(legacy_bucket_midpoint_ns(h, 0.90)),
        ms_value(legacy_bucket_midpoint_ns(h, 0.95)), ms_value(legacy_bucket_midpoint_ns(h, 0.99)));
  } else {
    out << "average: - worst: - best: -\npercentiles: -\n128-bucket midpoints: -\n";
  }
  const auto calls = static_cast<double>(result.completed);
  // simpleperf stat -a, then simpleperf stat of the benchmark command.
  for (const auto& [label, c] : {std::pair{"counters (all tasks)", &result.counters},
                                 std::pair{"counters (benchmark)", &result.process_counters}}) {
    const std::string per_call =
        any_call ? fmt::format("{:.0f} cycles, {:.2f} migrations, {:.2f} switches",
                               static_cast<double>(c->cpu_cycles) / calls,
                               static_cast<double>(c->migrations) / calls,
                               static_cast<double>(c->context_switches) / calls)
                 : std::string("-");
    out << fmt::format(
        "{}: cpu-cycles {} | cache-references {} | cache-misses {} | cpu-migrations {} | "
        "context-switches {} | per call: {}\n",
        label, group_thousands(c->cpu_cycles), group_thousands(c->cache_refs),
        group_thousands(c->cache_misses), group_thousands(c->migrations),
        group_thousands(c->context_switches), per_call);
  }
}

void print_comparison(std::span<const stats::RunResult> results, std::ostream& out) {
  if (results.empty()) return;

  // One row: a label and one cell per run.
  using Cell = std::function<std::string(const stats::RunResult&)>;
  std::vector<std::pair<std::string, Cell>> rows;
  auto count_row = [&rows](std::string label,
                           std::function<std::uint64_t(const stats::RunResult&)> f) {
    rows.emplace_back(std::move(label),
                      [f](const stats::RunResult& r) { return group_thousands(f(r)); });
  };

  rows.emplace_back("seed", [](const stats::RunResult& r) { return fmt::format("{}", r.seed); });
  count_row("completed calls", [](const stats::RunResult& r) { return r.completed; });
  rows.emplace_back("throughput (calls/s)",
                    [](const stats::RunResult& r) { return grouped_rate(r.per_second()); });
  rows.emplace_back("latency mean (ms)",
                    [](const stats::RunResult& r) { return ms_value(r.latency.mean()); });
  rows.emplace_back("latency p50 (ms)",
                    [](const stats::RunResult& r) { return ms_value(r.latency.percentile(0.50)); });
  rows.emplace_back("latency p99 (ms)",
                    [](const stats::RunResult& r) { return ms_value(r.latency.percentile(0.99)); });
  for (stats::SchedClass c : stats::kAllSchedClasses) {
    for (stats::Tier t : stats::kAllTiers) {
      const std::string name = fmt::format("{} {}", class_label(c), tier_label(t));
      rows.emplace_back(name + " share",
                        [c, t](const stats::RunResult& r) { return percent(tier_share(r, c, t)); });
      rows.emplace_back(name + " mean (ms)", [c, t](const stats::RunResult& r) {
        const stats::Histogram& h = r.tier(c, t);
        return h.count() == 0 ? std::string("-") : ms_value(h.mean());
      });
    }
  }
  count_row("selection same cpu", [](const stats::RunResult& r) { return r.selection.same_cpu; });
  count_row("selection same cluster",
            [](const stats::RunResult& r) { return r.selection.same_cluster; });
  count_row("selection other", [](const stats::RunResult& r) { return r.selection.other; });
  count_row("selection none idle", [](const stats::RunResult& r) { return r.selection.none_idle; });
  count_row("nudges applied", [](const stats::RunResult& r) { return r.selection.nudges_applied; });
  count_row("nudges declined",
            [](const stats::RunResult& r) { return r.selection.nudges_declined; });
  count_row("cpu cycles", [](const stats::RunResult& r) { return r.counters.cpu_cycles; });
  count_row("cache references", [](const stats::RunResult& r) { return r.counters.cache_refs; });
  count_row("cache misses", [](const stats::RunResult& r) { return r.counters.cache_misses; });
  count_row("cpu migrations", [](const stats::RunResult& r) { return r.counters.migrations; });
  count_row("context switches",
            [](const stats::RunResult& r) { return r.counters.context_switches; });

  // Render every cell first so that each column is as wide as its widest cell.
  std::size_t label_width = 0;
  for (const auto& row : rows) label_width = std::max(label_width, row.first.size());
  label_width += 2;
  std::vector<std::vector<std::string>> cells(rows.size());
  std::vector<std::size_t> widths(results.size());
  for (std::size_t j = 0; j < results.size(); ++j) {
    widths[j] = std::max<std::size_t>(12, results[j].selector.size()) + 2;
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (std::size_t j = 0; j < results.size(); ++j) {
      cells[i].push_back(rows[i].second(results[j]));
      widths[j] = std::max(widths[j], cells[i].back().size() + 2);
    }
  }

  std::string line = fmt::format("{:<{}}", "selector", label_width);
  for (std::size_t j = 0; j < results.size(); ++j) {
    line += fmt::format("{:>{}}", results[j].selector, widths[j]);
  }
  out << line << '\n' << std::string(line.size(), '-') << '\n';
  for (std::size_t i = 0; i < rows.size(); ++i) {
    line = fmt::format("{:<{}}", rows[i].first, label_width);
    for (std::size_t j = 0; j < results.size(); ++j) {
      line += fmt::format("{:>{}}", cells[i][j], widths[j]);
    }
    out << line << '\n';
  }
}

}  // namespace bindersim::io
