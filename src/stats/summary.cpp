#include "bindersim/stats/summary.hpp"

#include <array>
#include <cmath>
#include <limits>

#include <boost/math/distributions/students_t.hpp>

namespace bindersim::stats {

namespace {

// Welch–Satterthwaite df is rounded down after this slack, so that a df that is an integer
// in exact arithmetic (e.g. 4 for two samples of 3 with equal variances) is not taken as the
// integer below through rounding error.
constexpr double kDfSlack = 1e-9;

std::optional<double> us(double ns) { return ns / 1e3; }

// `count` per completed call; undefined for a run without completed calls.
std::optional<double> per_call(std::uint64_t count, const RunResult& r) {
  if (r.completed == 0) return std::nullopt;
  return static_cast<double>(count) / static_cast<double>(r.completed);
}

std::uint64_t class_calls(const RunResult& r, SchedClass c) {
  std::uint64_t total = 0;
  for (Tier t : kAllTiers) total += r.tier(c, t).count();
  return total;
}

Metric make(std::string key, std::string label, std::string unit, Better better,
            std::function<std::optional<double>(const RunResult&)> value) {
  return Metric{std::move(key), std::move(label), std::move(unit), better, std::move(value)};
}

// Console label of a class and tier, as the published tier tables write them.
std::string tier_label(SchedClass c, Tier t) {
  std::string label = c == SchedClass::kFifo ? "SCHED_FIFO " : "SCHED_OTHER ";
  switch (t) {
    case Tier::kSameCore:
      return label + "same core";
    case Tier::kSameCluster:
      return label + "same cluster";
    case Tier::kCrossCluster:
      return label + "cross cluster";
  }
  BSIM_CHECK_MSG(false, "unknown tier");
  return label;
}

}  // namespace

std::string_view better_name(Better better) {
  switch (better) {
    case Better::kLower:
      return "lower";
    case Better::kHigher:
      return "higher";
    case Better::kNeutral:
      return "neutral";
  }
  BSIM_CHECK_MSG(false, "unknown direction");
  return {};
}

// The allocator lock: how contended, how long waits and holds are, and what spinning,
// lock-holder preemption and priority inversion cost per call.
void add_lock_metrics(std::vector<Metric>& m) {
  m.push_back(make("failed_calls", "failed sends", "per call", Better::kLower,
                   [](const RunResult& r) { return per_call(r.failed_calls, r); }));
  m.push_back(make("allocator.alloc_lock.contended_share", "alloc lock contended", "%",
                   Better::kLower, [](const RunResult& r) -> std::optional<double> {
                     const LockStats& l = r.allocator.alloc_lock;
                     if (l.acquisitions == 0) return std::nullopt;
                     return 100.0 * l.contended_share();
                   }));
  for (const auto& [key, quantile] : {std::pair{"p50", 0.50}, std::pair{"p99", 0.99}}) {
    const double q = quantile;
    m.push_back(make(std::string("allocator.alloc_lock.wait.") + key,
                     std::string("alloc lock wait ") + key, "us", Better::kLower,
                     [q](const RunResult& r) -> std::optional<double> {
                       const Histogram& h = r.allocator.alloc_lock.wait_ns;
                       if (h.count() == 0) return std::nullopt;
                       return us(static_cast<double>(h.percentile(q)));
                     }));
  }
  m.push_back(make("allocator.alloc_lock.hold.mean", "alloc lock hold mean", "us", Better::kLower,
                   [](const RunResult& r) -> std::optional<double> {
                     const Histogram& h = r.allocator.alloc_lock.hold_ns;
                     if (h.count() == 0) return std::nullopt;
                     return us(h.mean());
                   }));
  using Time = std::int64_t (*)(const RunResult&);
  struct PerCallTime {
    const char* key;
    const char* label;
    Time time;
  };
  const std::array<PerCallTime, 3> times = {{
      {"allocator.alloc_lock.spin", "alloc lock spin",
       [](const RunResult& r) { return r.allocator.alloc_lock.spin_ns; }},
      {"allocator.alloc_lock.owner_preempted", "alloc lock owner preempted",
       [](const RunResult& r) { return r.allocator.alloc_lock.owner_preempted_ns; }},
      {"allocator.alloc_lock.inversions", "alloc lock inversion",
       [](const RunResult& r) { return r.allocator.alloc_lock.inversion_ns; }},
  }};
  for (const PerCallTime& p : times) {
    const Time time = p.time;
    m.push_back(make(std::string(p.key) + ".time", p.label, "us per call", Better::kLower,
                     [time](const RunResult& r) -> std::optional<double> {
                       if (r.completed == 0) return std::nullopt;
                       return static_cast<double>(time(r)) / 1e3 / static_cast<double>(r.completed);
                     }));
  }
  m.push_back(make(
      "allocator.alloc_lock.inversions.count", "alloc lock inversions", "per call", Better::kLower,
      [](const RunResult& r) { return per_call(r.allocator.alloc_lock.inversions, r); }));
}

std::vector<Metric> comparison_metrics() {
  std::vector<Metric> m;
  m.push_back(make("throughput", "throughput", "calls/s", Better::kHigher,
                   [](const RunResult& r) -> std::optional<double> { return r.per_second(); }));
  m.push_back(make("latency.mean", "latency mean", "us", Better::kLower,
                   [](const RunResult& r) -> std::optional<double> {
                     if (r.latency.count() == 0) return std::nullopt;
                     return us(r.latency.mean());
                   }));
  for (const auto& [key, quantile] : {std::pair{"p50", 0.50}, std::pair{"p99", 0.99}}) {
    const double q = quantile;
    m.push_back(make(std::string("latency.") + key, std::string("latency ") + key, "us",
                     Better::kLower, [q](const RunResult& r) -> std::optional<double> {
                       if (r.latency.count() == 0) return std::nullopt;
                       return us(static_cast<double>(r.latency.percentile(q)));
                     }));
  }
  for (SchedClass c : kAllSchedClasses) {
    for (Tier t : kAllTiers) {
      const std::string key =
          "tiers." + std::string(sched_class_name(c)) + "." + std::string(tier_name(t));
      const std::string label = tier_label(c, t);
      m.push_back(make(key + ".share", label + " share", "%", Better::kNeutral,
                       [c, t](const RunResult& r) -> std::optional<double> {
                         const std::uint64_t total = class_calls(r, c);
                         if (total == 0) return std::nullopt;
                         return 100.0 * static_cast<double>(r.tier(c, t).count()) /
                                static_cast<double>(total);
                       }));
      m.push_back(make(key + ".mean", label + " mean", "us", Better::kLower,
                       [c, t](const RunResult& r) -> std::optional<double> {
                         const Histogram& h = r.tier(c, t);
                         if (h.count() == 0) return std::nullopt;
                         return us(h.mean());
                       }));
    }
  }
  using Count = std::uint64_t (*)(const RunResult&);
  struct PerCall {
    const char* key;
    const char* label;
    Better better;
    Count count;
  };
  const std::array<PerCall, 11> per_call_metrics = {{
      {"counters.cpu_cycles", "cpu cycles", Better::kLower,
       [](const RunResult& r) { return r.counters.cpu_cycles; }},
      {"counters.cache_refs", "cache references", Better::kLower,
       [](const RunResult& r) { return r.counters.cache_refs; }},
      {"counters.cache_misses", "cache misses", Better::kLower,
       [](const RunResult& r) { return r.counters.cache_misses; }},
      {"counters.migrations", "cpu migrations", Better::kLower,
       [](const RunResult& r) { return r.counters.migrations; }},
      {"counters.context_switches", "context switches", Better::kLower,
       [](const RunResult& r) { return r.counters.context_switches; }},
      {"selection.same_cpu", "selection same cpu", Better::kNeutral,
       [](const RunResult& r) { return r.selection.same_cpu; }},
      {"selection.same_cluster", "selection same cluster", Better::kNeutral,
       [](const RunResult& r) { return r.selection.same_cluster; }},
      {"selection.other", "selection other", Better::kNeutral,
       [](const RunResult& r) { return r.selection.other; }},
      {"selection.none_idle", "selection none idle", Better::kNeutral,
       [](const RunResult& r) { return r.selection.none_idle; }},
      {"nudges.applied", "nudges applied", Better::kNeutral,
       [](const RunResult& r) { return r.selection.nudges_applied; }},
      {"nudges.declined", "nudges declined", Better::kNeutral,
       [](const RunResult& r) { return r.selection.nudges_declined; }},
  }};
  for (const PerCall& p : per_call_metrics) {
    const Count count = p.count;
    m.push_back(make(p.key, p.label, "per call", p.better,
                     [count](const RunResult& r) { return per_call(count(r), r); }));
  }
  add_lock_metrics(m);
  return m;
}

std::vector<std::optional<double>> measure(std::span<const Metric> metrics, const RunResult& run) {
  std::vector<std::optional<double>> values;
  values.reserve(metrics.size());
  for (const Metric& metric : metrics) values.push_back(metric.value(run));
  return values;
}

// Rounded to three decimals as the tables publish it: for df = 1..30 these are exactly the
// values of the NIST/SEMATECH e-Handbook of Statistical Methods, section 1.3.6.7.2 "Critical
// Values of the Student's t Distribution" (12.706, 4.303, ..., 2.042).
double student_t975(std::size_t df) {
  BSIM_CHECK_MSG(df >= 1, "Student's t needs at least one degree of freedom");
  const boost::math::students_t distribution(static_cast<double>(df));
  const double t = boost::math::quantile(boost::math::complement(distribution, 0.025));
  return std::round(t * 1000.0) / 1000.0;
}

double mean(std::span<const double> samples) {
  if (samples.empty()) return 0.0;
  double sum = 0.0;
  for (double x : samples) sum += x;
  return sum / static_cast<double>(samples.size());
}

double sample_variance(std::span<const double> samples) {
  if (samples.size() < 2) return 0.0;
  const double m = mean(samples);
  double sum = 0.0;
  for (double x : samples) sum += (x - m) * (x - m);
  return sum / static_cast<double>(samples.size() - 1);
}

std::optional<double> ci95_half_width(std::span<const double> samples) {
  if (samples.size() < 2) return std::nullopt;
  const double n = static_cast<double>(samples.size());
  return student_t975(samples.size() - 1) * std::sqrt(sample_variance(samples) / n);
}

std::optional<WelchTest> welch_test(std::span<const double> a, std::span<const double> b) {
  if (a.size() < 2 || b.size() < 2) return std::nullopt;
  const double na = static_cast<double>(a.size());
  const double nb = static_cast<double>(b.size());
  const double diff = mean(a) - mean(b);
  const double va = sample_variance(a) / na;  // squared standard errors
  const double vb = sample_variance(b) / nb;
  WelchTest test;
  if (va + vb == 0.0) {
    // Both samples are constant: the difference is exact.
    test.df = na + nb - 2.0;
    test.t = diff == 0.0 ? 0.0 : std::copysign(std::numeric_limits<double>::infinity(), diff);
    test.significant = diff != 0.0;
    return test;
  }
  test.t = diff / std::sqrt(va + vb);
  test.df = (va + vb) * (va + vb) / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
  const double floored = std::floor(test.df + kDfSlack);
  const std::size_t df = floored < 1.0 ? 1 : static_cast<std::size_t>(floored);
  test.significant = std::fabs(test.t) > student_t975(df);
  return test;
}

std::vector<ColumnStats> compare_columns(const std::vector<std::vector<double>>& samples) {
  std::vector<ColumnStats> columns(samples.size());
  for (std::size_t c = 0; c < samples.size(); ++c) {
    ColumnStats& s = columns[c];
    s.n = samples[c].size();
    if (s.n > 0) s.mean = mean(samples[c]);
    s.ci95 = ci95_half_width(samples[c]);
    if (c == 0) continue;
    const std::optional<double>& base = columns[0].mean;
    if (s.mean && base) {
      if (*base != 0.0) {
        s.delta_pct = 100.0 * (*s.mean - *base) / std::fabs(*base);
      } else if (*s.mean == 0.0) {
        s.delta_pct = 0.0;
      }
    }
    if (const auto test = welch_test(samples[c], samples[0])) s.significant = test->significant;
  }
  return columns;
}

std::vector<MetricSummary> summarize(std::span<const Metric> metrics,
                                     std::span<const std::vector<std::optional<double>>> values,
                                     std::size_t num_columns) {
  BSIM_CHECK(num_columns > 0 && values.size() % num_columns == 0);
  const std::size_t seeds = values.size() / num_columns;
  std::vector<MetricSummary> out;
  out.reserve(metrics.size());
  for (std::size_t m = 0; m < metrics.size(); ++m) {
    std::vector<std::vector<double>> samples(num_columns);
    for (std::size_t c = 0; c < num_columns; ++c) {
      for (std::size_t s = 0; s < seeds; ++s) {
        const auto& run = values[c * seeds + s];
        BSIM_CHECK(run.size() == metrics.size());
        if (run[m]) samples[c].push_back(*run[m]);
      }
    }
    out.push_back(MetricSummary{metrics[m], compare_columns(samples)});
  }
  return out;
}

}  // namespace bindersim::stats
