#include "bindersim/io/check.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <ostream>
#include <sstream>
#include <utility>

#include "bindersim/io/result_json.hpp"
#include "bindersim/stats/result.hpp"

namespace bindersim::io {

namespace {

// The headline metrics, each read from a document as a double.
struct HeadlineMetric {
  std::string_view name;
  double (*value)(const ResultDocument&);
  int decimals;  // printed with this many decimals
};
constexpr std::array<HeadlineMetric, 5> kHeadline = {{
    {"transactions.completed",
     [](const ResultDocument& d) { return static_cast<double>(d.completed); }, 0},
    {"transactions.per_second", [](const ResultDocument& d) { return d.per_second; }, 3},
    {"latency.mean_ns",
     [](const ResultDocument& d) { return static_cast<double>(d.latency.mean_ns); }, 0},
    {"latency.p50_ns",
     [](const ResultDocument& d) { return static_cast<double>(d.latency.p50_ns); }, 0},
    {"latency.p99_ns",
     [](const ResultDocument& d) { return static_cast<double>(d.latency.p99_ns); }, 0},
}};

// Per-tier metrics: the share (points) and the latencies gated above the minimum share.
constexpr std::string_view kTierShare = "share";
constexpr std::array<std::string_view, 2> kTierLatencies = {"mean_ns", "p99_ns"};

struct CounterField {
  std::string_view name;
  std::uint64_t stats::Counters::*member;
};
constexpr std::array<CounterField, 5> kCounterFields = {{
    {"cpu_cycles", &stats::Counters::cpu_cycles},
    {"cache_refs", &stats::Counters::cache_refs},
    {"cache_misses", &stats::Counters::cache_misses},
    {"migrations", &stats::Counters::migrations},
    {"context_switches", &stats::Counters::context_switches},
}};
// What a run was made from (provenance): equal or not, gated unless a tolerance file gives null.
struct InputField {
  std::string_view name;
  std::string ResultDocument::*member;
};
constexpr std::array<InputField, 3> kInputFields = {
    {{"scenario_hash", &ResultDocument::scenario_hash},
     {"topology_hash", &ResultDocument::topology_hash},
     {"overrides", &ResultDocument::overrides}}};

constexpr std::string_view kCountersGroup = "counters";

struct SelectionField {
  std::string_view group;
  std::string_view name;
  std::uint64_t stats::SelectionCounts::*member;
};
constexpr std::string_view kDecisionsGroup = "selection.decisions";
constexpr std::string_view kNudgesGroup = "selection.nudges";
constexpr std::array<SelectionField, 6> kSelectionFields = {{
    {kDecisionsGroup, "same_cpu", &stats::SelectionCounts::same_cpu},
    {kDecisionsGroup, "same_cluster", &stats::SelectionCounts::same_cluster},
    {kDecisionsGroup, "other", &stats::SelectionCounts::other},
    {kDecisionsGroup, "none_idle", &stats::SelectionCounts::none_idle},
    {kNudgesGroup, "applied", &stats::SelectionCounts::nudges_applied},
    {kNudgesGroup, "declined", &stats::SelectionCounts::nudges_declined},
}};

std::string tier_group(std::string_view metric) { return "tiers." + std::string(metric); }

std::string tier_metric(stats::SchedClass c, stats::Tier t, std::string_view metric) {
  return "tiers." + std::string(stats::sched_class_name(c)) + "." +
         std::string(stats::tier_name(t)) + "." + std::string(metric);
}

// ---- strict reading ----

// Latencies are clamped to the histograms' largest value, 2^40 ns.
std::uint64_t read_ns(const JsonNode& node) {
  constexpr std::uint64_t kMaxNs = std::uint64_t{1} << 40;
  const std::uint64_t value = node.as_strict_uint64();
  if (value > kMaxNs) node.fail_expected("an integer in [0, " + std::to_string(kMaxNs) + "]");
  return value;
}

// Any 64-bit signed integer (a breakdown part's mean, which may be negative for other_ns).
std::int64_t read_int(const JsonNode& node) {
  const nlohmann::json& raw = node.raw();
  if (raw.is_number_unsigned()) {
    if (raw.get<std::uint64_t>() <=
        static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return static_cast<std::int64_t>(raw.get<std::uint64_t>());
    }
  } else if (raw.is_number_integer()) {
    return raw.get<std::int64_t>();
  }
  node.fail_expected("a 64-bit signed integer");
}

// A `breakdown` object: every part an integer, non-negative unless it may be negative.
stats::Breakdown read_breakdown(const JsonNode& node) {
  ObjectReader r(node);
  stats::Breakdown b;
  for (const BreakdownPart& part : kBreakdownParts) {
    if (part.absent_from_older_results && !r.has(part.key)) continue;  // 0, in other_ns
    const JsonNode value = r.required(part.key);
    if (part.may_be_negative) {
      b.*part.member = read_int(value);
    } else {
      const std::uint64_t v = value.as_strict_uint64();
      if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        value.fail_expected("a non-negative 64-bit signed integer");
      }
      b.*part.member = static_cast<std::int64_t>(v);
    }
  }
  r.finish();
  return b;
}

double read_non_negative(const JsonNode& node) {
  const double value = node.as_number();
  if (!(value >= 0.0) || !std::isfinite(value)) node.fail_expected("a number >= 0");
  return value;
}

// Reads the keys of DistributionFields from `r` (the caller reads the others and finishes).
void read_distribution(ObjectReader& r, DistributionFields& f) {
  f.count = r.required("count").as_strict_uint64();
  f.mean_ns = read_ns(r.required("mean_ns"));
  f.p50_ns = read_ns(r.required("p50_ns"));
  f.p90_ns = read_ns(r.required("p90_ns"));
  f.p99_ns = read_ns(r.required("p99_ns"));
  f.max_ns = read_ns(r.required("max_ns"));
}

LatencyFields read_latency(const JsonNode& node) {
  ObjectReader r(node);
  LatencyFields f;
  read_distribution(r, f);
  f.min_ns = read_ns(r.required("min_ns"));
  r.finish();
  return f;
}

TierFields read_tier(const JsonNode& node) {
  ObjectReader r(node);
  TierFields f;
  read_distribution(r, f);
  f.share = r.required("share").as_number(0.0, 1.0);
  f.breakdown = read_breakdown(r.required("breakdown"));
  r.finish();
  return f;
}

stats::Counters read_counters(const JsonNode& node) {
  ObjectReader r(node);
  stats::Counters counters;
  for (const CounterField& field : kCounterFields) {
    counters.*field.member = r.required(field.name).as_strict_uint64();
  }
  r.finish();
  return counters;
}

// The `scheduler` object, checked for the documented layout (its values are not kept).
void validate_scheduler(const JsonNode& node) {
  ObjectReader r(node);
  r.required("governor").as_enum(stats::kGovernorNames);
  for (const JsonNode& cluster : r.required("clusters").items()) {
    ObjectReader c(cluster);
    c.required("name").as_string();
    c.required("mean_freq_khz").as_strict_uint64();
    c.finish();
  }
  for (const JsonNode& share : r.required("cpu_busy_share").items()) share.as_number(0.0, 1.0);
  for (const char* key :
       {"frequency_changes", "newidle_pulls", "balance_pulls", "misfit_migrations"}) {
    r.required(key).as_strict_uint64();
  }
  // Results written before RT push and pull were modelled have no counts of them.
  for (const char* key : {"rt_pulls", "rt_pushes"}) {
    if (auto count = r.optional(key)) count->as_strict_uint64();
  }
  r.finish();
}

// A lock's statistics in the `allocator` object (validated only, as `scheduler`).
void validate_lock(const JsonNode& node) {
  ObjectReader r(node);
  for (const char* key : {"acquisitions", "contended"}) r.required(key).as_strict_uint64();
  r.required("contended_share").as_number(0.0, 1.0);
  for (const char* key : {"trylock_failures", "sleeps", "handoffs"}) {
    r.required(key).as_strict_uint64();
  }
  for (const char* key : {"wait", "hold"}) {
    ObjectReader d(r.required(key));
    d.required("count").as_strict_uint64();
    for (const char* ns : {"mean_ns", "p50_ns", "p99_ns", "max_ns"}) read_ns(d.required(ns));
    d.finish();
  }
  r.required("spin_ns").as_strict_uint64();
  for (const char* key : {"inversions", "owner_preempted"}) {
    ObjectReader e(r.required(key));
    e.required("count").as_strict_uint64();
    e.required("total_ns").as_strict_uint64();
    e.finish();
  }
  r.finish();
}

void validate_allocator(const JsonNode& node) {
  ObjectReader r(node);
  r.required("lock").as_enum({"mutex", "spinlock"});
  r.required("page_install").as_enum({"locked", "unlocked"});
  for (const char* key : {"allocations", "failed_no_space", "failed_async_space", "pages_installed",
                          "pages_reclaimed", "shrinker_skips"}) {
    r.required(key).as_strict_uint64();
  }
  validate_lock(r.required("alloc_lock"));
  validate_lock(r.required("page_lock"));
  r.finish();
}

bool is_fingerprint(const std::string& text) {
  return text.size() == 16 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// ---- comparison ----

// Δ in percent of the baseline; +inf when only the result is non-zero. A baseline so small that
// the quotient overflows is not 0: Δ is then the largest finite value of its sign.
double relative_delta_percent(double baseline, double result) {
  if (baseline == 0.0) return result == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
  const double delta = (result - baseline) / baseline * 100.0;
  return std::isfinite(delta) ? delta : std::copysign(std::numeric_limits<double>::max(), delta);
}

// Slack for a bound given in the file: absorbs rounding in the value compared with it.
double slack(double bound) { return 1e-9 * std::max(1.0, std::fabs(bound)); }

bool within(double delta, double tolerance) {
  // Exactly 5% passes a ±5% tolerance, whatever the division rounded to.
  return std::fabs(delta) <= tolerance + slack(tolerance);
}

std::string format_fixed(double value, int decimals) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(decimals) << value;
  return out.str();
}

std::string format_int(double value) { return format_fixed(value, 0); }

// A tolerance as given: "5", "2.5", "0.25".
std::string format_plain(double value) {
  std::ostringstream out;
  out << std::setprecision(6) << value;
  return out.str();
}

std::string format_share(double fraction) { return format_fixed(fraction * 100.0, 2) + "%"; }

std::string format_per_call(double value) { return format_fixed(value, 3) + "/call"; }

void gate(CheckRow& row) {
  if (!row.tolerance) {
    row.status = CheckStatus::kReported;
  } else {
    row.status = within(row.delta, *row.tolerance) ? CheckStatus::kOk : CheckStatus::kFail;
  }
}

CheckRow numeric_row(std::string metric, MetricKind kind, double baseline, double result,
                     std::string baseline_text, std::string result_text,
                     std::optional<double> tolerance) {
  CheckRow row;
  row.metric = std::move(metric);
  row.kind = kind;
  row.baseline = baseline;
  row.result = result;
  row.baseline_text = std::move(baseline_text);
  row.result_text = std::move(result_text);
  row.delta = kind == MetricKind::kPoints ? (result - baseline) * 100.0
                                          : relative_delta_percent(baseline, result);
  row.tolerance = tolerance;
  gate(row);
  return row;
}

std::string delta_text(const CheckRow& row) {
  switch (row.kind) {
    case MetricKind::kIdentity:
      return row.status == CheckStatus::kFail ? "differs" : "";
    case MetricKind::kInfo:
      return row.baseline_text == row.result_text ? "" : "differs";
    case MetricKind::kPoints: {
      std::ostringstream out;
      out << std::showpos << std::fixed << std::setprecision(2) << row.delta << " pt";
      return out.str();
    }
    case MetricKind::kRelative: {
      if (std::isinf(row.delta)) return "from 0";
      std::ostringstream out;
      out << std::showpos << std::setprecision(2);
      // Beyond a million percent, fixed notation would print hundreds of digits.
      if (std::fabs(row.delta) < 1e6) out << std::fixed;
      out << row.delta << "%";
      return out.str();
    }
  }
  return "";
}

std::string tolerance_text(const CheckRow& row) {
  if (row.kind == MetricKind::kIdentity) return "equal";
  if (!row.tolerance || row.status == CheckStatus::kSkipped) return "-";
  if (row.kind == MetricKind::kPoints) return "±" + format_plain(*row.tolerance) + " pt";
  if (*row.tolerance == 0.0) return "exact";
  return "±" + format_plain(*row.tolerance) + "%";
}

std::string status_text(const CheckRow& row) {
  switch (row.status) {
    case CheckStatus::kOk:
      return "OK";
    case CheckStatus::kReported:
      return "info";
    case CheckStatus::kSkipped:
      return "skip";
    case CheckStatus::kFail:
      if (row.kind == MetricKind::kIdentity) return "FAIL (differs)";
      return row.result > row.baseline ? "FAIL (higher)" : "FAIL (lower)";
  }
  return "";
}

// Display width of UTF-8 text (code points; every character here is one column wide).
std::size_t display_width(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

void pad(std::ostream& out, const std::string& text, std::size_t width, bool right) {
  const std::size_t fill = width > display_width(text) ? width - display_width(text) : 0;
  if (right) out << std::string(fill, ' ');
  out << text;
  if (!right) out << std::string(fill, ' ');
}

// Prints rows of cells with columns sized to fit; `right[i]` right-aligns column i. Cells are
// names and values from the input files: their control characters are escaped.
void print_table(std::vector<std::vector<std::string>> rows, const std::vector<bool>& right,
                 std::ostream& out) {
  std::vector<std::size_t> widths(right.size(), 0);
  for (auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      row[i] = console_text(row[i]);
      widths[i] = std::max(widths[i], display_width(row[i]));
    }
  }
  for (const auto& row : rows) {
    std::ostringstream cells;
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (i) cells << "  ";
      // The last column is not padded, so lines carry no trailing blanks.
      pad(cells, row[i], i + 1 == row.size() && !right[i] ? 0 : widths[i], right[i]);
    }
    out << cells.str() << "\n";
  }
}

void diff_json(const nlohmann::json& baseline, const nlohmann::json& result,
               const std::string& pointer, std::vector<ExactDifference>& out) {
  if (baseline.is_object() && result.is_object()) {
    for (const auto& [key, value] : baseline.items()) {
      const std::string child = pointer + "/" + escape_pointer_token(key);
      if (!result.contains(key)) {
        out.push_back({child, compact_json(value), "(missing)"});
      } else {
        diff_json(value, result.at(key), child, out);
      }
    }
    for (const auto& [key, value] : result.items()) {
      if (!baseline.contains(key)) {
        out.push_back(
            {pointer + "/" + escape_pointer_token(key), "(missing)", compact_json(value)});
      }
    }
    return;
  }
  if (baseline != result) out.push_back({pointer, compact_json(baseline), compact_json(result)});
}

// The parts of a document --exact compares: all but provenance.version, and the inputs a
// result records only where `other` records them too (results written before did not).
nlohmann::json exact_part(nlohmann::json value, const ResultDocument& other) {
  nlohmann::json& provenance = value["provenance"];  // read_result() required it
  provenance.erase("version");
  for (const InputField& input : kInputFields) {
    if ((other.*input.member).empty()) provenance.erase(std::string(input.name));
  }
  return value;
}

}  // namespace

// ---- result documents ----

ResultDocument read_result(const JsonDocument& document) {
  ResultDocument doc;
  doc.file = document.name();
  ObjectReader root(document.root());
  // The schema comes first: another document type fails here, not on its first odd key.
  const JsonNode schema = root.required("schema");
  if (!schema.is_string() || schema.as_string() != kResultSchema) {
    schema.fail_expected("\"" + std::string(kResultSchema) + "\"");
  }
  doc.scenario = root.required("scenario").as_string();
  doc.topology = root.required("topology").as_string();
  doc.selector = root.required("selector").as_string();
  if (const auto params = root.optional("selector_params")) {
    // Written only for a selector that ran with parameters other than its defaults: never empty.
    if (!params->is_object() || params->raw().empty()) {
      params->fail_expected("an object of the selector's parameters, not empty");
    }
    doc.selector_params = compact_json(params->raw());
  }
  doc.placement = root.required("placement").as_string();
  doc.seed = root.required("seed").as_strict_uint64();

  ObjectReader transactions(root.required("transactions"));
  doc.completed = transactions.required("completed").as_strict_uint64();
  doc.per_second = read_non_negative(transactions.required("per_second"));
  if (auto failed = transactions.optional("failed")) doc.failed = failed->as_strict_uint64();
  transactions.finish();

  doc.latency = read_latency(root.required("latency"));

  ObjectReader tiers(root.required("tiers"));
  for (stats::SchedClass c : stats::kAllSchedClasses) {
    ObjectReader cls(tiers.required(stats::sched_class_name(c)));
    for (stats::Tier t : stats::kAllTiers) {
      doc.tiers[static_cast<std::size_t>(c)][static_cast<std::size_t>(t)] =
          read_tier(cls.required(stats::tier_name(t)));
    }
    cls.finish();
  }
  tiers.finish();

  doc.counters = read_counters(root.required("counters"));
  // Informative: compared only by --exact (whole documents). Results written before it
  // existed have none.
  if (auto process = root.optional("process_counters")) {
    doc.process_counters = read_counters(*process);
  }

  ObjectReader selection(root.required("selection"));
  ObjectReader decisions(selection.required("decisions"));
  ObjectReader nudges(selection.required("nudges"));
  for (const SelectionField& field : kSelectionFields) {
    ObjectReader& group = field.group == kDecisionsGroup ? decisions : nudges;
    doc.selection.*field.member = group.required(field.name).as_strict_uint64();
  }
  decisions.finish();
  nudges.finish();
  selection.finish();

  // Scheduler and allocator statistics are informative: compared only by --exact. Results
  // written before they existed have none; when present they are read as strictly as the rest.
  if (auto scheduler = root.optional("scheduler")) validate_scheduler(*scheduler);
  if (auto allocator = root.optional("allocator")) validate_allocator(*allocator);

  ObjectReader provenance(root.required("provenance"));
  doc.version = provenance.required("version").as_string();
  // Added after the format's first release: absent from older results.
  for (auto [key, field] : {std::pair{"scenario_hash", &doc.scenario_hash},
                            std::pair{"topology_hash", &doc.topology_hash}}) {
    if (const auto hash = provenance.optional(key)) {
      *field = hash->as_string();
      if (!is_fingerprint(*field)) hash->fail_expected("16 lowercase hex digits");
    }
  }
  if (const auto overrides = provenance.optional("overrides")) {
    for (const JsonNode& pair : overrides->items()) {
      if (!pair.is_array() || pair.raw().size() != 2) pair.fail_expected("a [path, value] pair");
      if (pair.child(std::size_t{0}).as_string().empty()) {
        pair.child(std::size_t{0}).fail_expected("a dotted scenario path");
      }
    }
    doc.overrides = compact_json(overrides->raw());
  }
  const JsonNode fingerprint = provenance.required("fingerprint");
  doc.fingerprint = fingerprint.as_string();
  if (!is_fingerprint(doc.fingerprint)) fingerprint.fail_expected("16 lowercase hex digits");
  provenance.finish();
  root.finish();

  doc.value = document.value();
  return doc;
}

ResultDocument read_result_file(const std::filesystem::path& path) {
  return read_result(JsonDocument::parse_file(path));
}

// ---- tolerances ----

std::optional<double> Tolerances::lookup(std::string_view metric, std::string_view group) const {
  if (const auto it = by_name.find(metric); it != by_name.end()) return it->second;
  if (group.empty()) return std::nullopt;
  if (const auto it = by_name.find(group); it != by_name.end()) return it->second;
  return std::nullopt;
}

Tolerances default_tolerances() {
  Tolerances t;
  t.by_name = {
      {"transactions.completed", 0.0},
      {"transactions.per_second", 5.0},
      {"latency.mean_ns", 5.0},
      {"latency.p50_ns", 5.0},
      {"latency.p99_ns", 10.0},
      {tier_group(kTierShare), 2.0},
      {tier_group("mean_ns"), 5.0},
      {tier_group("p99_ns"), 10.0},
      {std::string(kCountersGroup), 10.0},
      {std::string(kDecisionsGroup), std::nullopt},
      {std::string(kNudgesGroup), std::nullopt},
  };
  t.min_tier_share_percent = 1.0;
  return t;
}

std::vector<std::string> tolerance_names() {
  std::vector<std::string> names;
  for (const HeadlineMetric& metric : kHeadline) names.emplace_back(metric.name);
  names.push_back(tier_group(kTierShare));
  for (std::string_view metric : kTierLatencies) names.push_back(tier_group(metric));
  for (stats::SchedClass c : stats::kAllSchedClasses) {
    for (stats::Tier t : stats::kAllTiers) {
      names.push_back(tier_metric(c, t, kTierShare));
      for (std::string_view metric : kTierLatencies) names.push_back(tier_metric(c, t, metric));
    }
  }
  for (const InputField& input : kInputFields) names.emplace_back(input.name);
  names.emplace_back(kCountersGroup);
  for (const CounterField& field : kCounterFields) {
    names.push_back(std::string(kCountersGroup) + "." + std::string(field.name));
  }
  for (std::string_view group : {kDecisionsGroup, kNudgesGroup}) {
    names.emplace_back(group);
    for (const SelectionField& field : kSelectionFields) {
      if (field.group == group) names.push_back(std::string(group) + "." + std::string(field.name));
    }
  }
  return names;
}

Tolerances read_tolerances(const JsonDocument& document) {
  Tolerances tolerances = default_tolerances();
  ObjectReader root(document.root());
  const JsonNode schema = root.required("schema");
  if (!schema.is_string() || schema.as_string() != kTolerancesSchema) {
    schema.fail_expected("\"" + std::string(kTolerancesSchema) + "\"");
  }
  if (const auto min_share = root.optional("min_tier_share_percent")) {
    tolerances.min_tier_share_percent = min_share->as_number(0.0, 100.0);
  }
  const JsonNode entries = root.required("tolerances");
  if (!entries.is_object()) entries.fail_expected("an object");
  const std::vector<std::string> valid = tolerance_names();
  for (const auto& [name, value] : entries.raw().items()) {
    const JsonNode entry = entries.child(name);
    if (std::find(valid.begin(), valid.end(), name) == valid.end()) {
      std::string message = "unknown metric name" + did_you_mean(name, valid);
      message +=
          "; valid names: transactions.completed, transactions.per_second, latency.mean_ns, "
          "latency.p50_ns, latency.p99_ns, tiers.share, tiers.mean_ns, tiers.p99_ns, "
          "tiers.<class>.<tier>.share|mean_ns|p99_ns, scenario_hash, topology_hash, overrides, "
          "counters, counters.<name>, "
          "selection.decisions, selection.decisions.<name>, selection.nudges, "
          "selection.nudges.<name> (see bindersim check --help)";
      entry.fail(message);
    }
    if (entry.is_null()) {
      tolerances.by_name[name] = std::nullopt;
      continue;
    }
    if (std::any_of(kInputFields.begin(), kInputFields.end(),
                    [&](const InputField& input) { return input.name == name; })) {
      entry.fail_expected("null (the inputs are equal or not; null reports them without gating)");
    }
    const nlohmann::json& raw = entry.raw();
    if (!raw.is_number() || !(raw.get<double>() >= 0.0) || !std::isfinite(raw.get<double>())) {
      entry.fail_expected("a tolerance >= 0 (percent, or percentage points for shares) or null");
    }
    tolerances.by_name[name] = raw.get<double>();
  }
  root.finish();
  return tolerances;
}

Tolerances read_tolerances_file(const std::filesystem::path& path) {
  return read_tolerances(JsonDocument::parse_file(path));
}

void print_default_tolerances(std::ostream& out) {
  const Tolerances t = default_tolerances();
  const auto text = [&](std::string_view name, std::string_view unit) -> std::string {
    const std::optional<double> value = t.lookup(name, "");
    if (!value) return "reported, not gated";
    if (*value == 0.0) return "exact";
    return "±" + format_plain(*value) + std::string(unit);
  };
  const std::vector<std::vector<std::string>> rows = {
      {"transactions.completed", text("transactions.completed", "%")},
      {"transactions.per_second", text("transactions.per_second", "%")},
      {"latency.mean_ns", text("latency.mean_ns", "%")},
      {"latency.p50_ns", text("latency.p50_ns", "%")},
      {"latency.p99_ns", text("latency.p99_ns", "%")},
      {"tiers.share", text("tiers.share", " percentage points")},
      {"tiers.mean_ns", text("tiers.mean_ns", "%") + " (tiers with >= " +
                            format_plain(t.min_tier_share_percent) + "% share in the baseline)"},
      {"tiers.p99_ns", text("tiers.p99_ns", "%") + " (same)"},
      {"counters", text("counters", "%") + " per completed call"},
      {"selection.decisions", text("selection.decisions", "%")},
      {"selection.nudges", text("selection.nudges", "%")},
  };
  for (const auto& row : rows) {
    out << "  ";
    pad(out, row[0], 25, false);
    out << row[1] << "\n";
  }
}

// ---- comparison by tolerance ----

std::size_t CheckReport::failures() const {
  return static_cast<std::size_t>(std::count_if(rows.begin(), rows.end(), [](const CheckRow& row) {
    return row.status == CheckStatus::kFail;
  }));
}

const CheckRow* CheckReport::find(std::string_view metric) const {
  for (const CheckRow& row : rows) {
    if (row.metric == metric) return &row;
  }
  return nullptr;
}

CheckReport check_result(const ResultDocument& result, const ResultDocument& baseline,
                         const Tolerances& tolerances) {
  CheckReport report;
  report.result_file = result.file;
  report.baseline_file = baseline.file;
  report.min_tier_share_percent = tolerances.min_tier_share_percent;

  // Results of another configuration are not comparable: names must match.
  const auto identity = [&](std::string metric, const std::string& b, const std::string& r) {
    CheckRow row;
    row.metric = std::move(metric);
    row.kind = MetricKind::kIdentity;
    row.baseline_text = b;
    row.result_text = r;
    row.status = b == r ? CheckStatus::kOk : CheckStatus::kFail;
    report.rows.push_back(std::move(row));
  };
  const auto shown_only = [&](std::string metric, const std::string& b, const std::string& r) {
    CheckRow row;
    row.metric = std::move(metric);
    row.kind = MetricKind::kInfo;
    row.baseline_text = b;
    row.result_text = r;
    row.status = CheckStatus::kReported;
    report.rows.push_back(std::move(row));
  };
  identity("scenario", baseline.scenario, result.scenario);
  identity("topology", baseline.topology, result.topology);
  identity("selector", baseline.selector, result.selector);
  // A row only where a run had parameters: most runs have none.
  if (!baseline.selector_params.empty() || !result.selector_params.empty()) {
    const auto shown = [](const std::string& params) { return params.empty() ? "{}" : params; };
    identity("selector_params", shown(baseline.selector_params), shown(result.selector_params));
  }
  identity("placement", baseline.placement, result.placement);
  // Another seed is a legitimate check of robustness: shown, not gated.
  shown_only("seed", std::to_string(baseline.seed), std::to_string(result.seed));
  // What the runs were made from must match too, unless the tolerance file says null; a result
  // written before results recorded it is shown as such, not gated.
  for (const InputField& input : kInputFields) {
    const std::string& b = baseline.*input.member;
    const std::string& r = result.*input.member;
    const auto entry = tolerances.by_name.find(input.name);
    const bool gated = entry == tolerances.by_name.end() || entry->second.has_value();
    if (gated && !b.empty() && !r.empty()) {
      identity(std::string(input.name), b, r);
    } else {
      const auto text = [](const std::string& t) { return t.empty() ? "(not recorded)" : t; };
      shown_only(std::string(input.name), text(b), text(r));
    }
  }

  for (const HeadlineMetric& metric : kHeadline) {
    const double b = metric.value(baseline);
    const double r = metric.value(result);
    const auto format = [&](double v) { return format_fixed(v, metric.decimals); };
    report.rows.push_back(numeric_row(std::string(metric.name), MetricKind::kRelative, b, r,
                                      format(b), format(r), tolerances.lookup(metric.name, "")));
  }

  for (stats::SchedClass c : stats::kAllSchedClasses) {
    for (stats::Tier t : stats::kAllTiers) {
      const TierFields& b = baseline.tier(c, t);
      const TierFields& r = result.tier(c, t);
      report.rows.push_back(
          numeric_row(tier_metric(c, t, kTierShare), MetricKind::kPoints, b.share, r.share,
                      format_share(b.share), format_share(r.share),
                      tolerances.lookup(tier_metric(c, t, kTierShare), tier_group(kTierShare))));
      // A tier's latency is gated only where the baseline has enough calls to make it stable.
      // A share of 0.57 (56.99999999999999%) meets a 57% minimum.
      const bool gated = b.share * 100.0 >= tolerances.min_tier_share_percent -
                                                slack(tolerances.min_tier_share_percent);
      for (std::string_view metric : kTierLatencies) {
        const double bv = static_cast<double>(metric == "mean_ns" ? b.mean_ns : b.p99_ns);
        const double rv = static_cast<double>(metric == "mean_ns" ? r.mean_ns : r.p99_ns);
        const std::string name = tier_metric(c, t, metric);
        CheckRow row = numeric_row(name, MetricKind::kRelative, bv, rv, format_int(bv),
                                   format_int(rv), tolerances.lookup(name, tier_group(metric)));
        if (!gated) row.status = CheckStatus::kSkipped;
        report.rows.push_back(std::move(row));
      }
    }
  }

  // Counts over the whole run scale with the number of calls: compare them per call.
  const auto per_call = [](std::uint64_t count, const ResultDocument& d) {
    return static_cast<double>(count) /
           static_cast<double>(std::max<std::uint64_t>(d.completed, 1));
  };
  for (const CounterField& field : kCounterFields) {
    const double b = per_call(baseline.counters.*field.member, baseline);
    const double r = per_call(result.counters.*field.member, result);
    const std::string name = std::string(kCountersGroup) + "." + std::string(field.name);
    report.rows.push_back(numeric_row(name, MetricKind::kRelative, b, r, format_per_call(b),
                                      format_per_call(r), tolerances.lookup(name, kCountersGroup)));
  }
  for (const SelectionField& field : kSelectionFields) {
    const double b = per_call(baseline.selection.*field.member, baseline);
    const double r = per_call(result.selection.*field.member, result);
    const std::string name = std::string(field.group) + "." + std::string(field.name);
    report.rows.push_back(numeric_row(name, MetricKind::kRelative, b, r, format_per_call(b),
                                      format_per_call(r), tolerances.lookup(name, field.group)));
  }
  return report;
}

void print_check_report(const CheckReport& report, std::ostream& out) {
  out << "check: " << console_text(report.result_file) << " against baseline "
      << console_text(report.baseline_file) << "\n";
  std::vector<std::vector<std::string>> cells = {
      {"metric", "baseline", "result", "Δ", "tolerance", "status"}};
  // A value wider than this (a long list of overrides) is printed in full under the table, so
  // that it does not widen every row; its cell refers to it by number.
  constexpr std::size_t kMaxValueWidth = 32;
  std::vector<std::string> notes;
  const auto value_cell = [&](const CheckRow& row, const char* side, const std::string& text) {
    if (display_width(text) <= kMaxValueWidth) return text;
    const std::string mark = "[" + std::to_string(notes.size() + 1) + "]";
    notes.push_back(mark + " " + row.metric + ", " + side + ": " + console_text(text));
    return mark;
  };
  std::size_t gated = 0;
  std::size_t failed = 0;
  for (const CheckRow& row : report.rows) {
    cells.push_back({row.metric, value_cell(row, "baseline", row.baseline_text),
                     value_cell(row, "result", row.result_text), delta_text(row),
                     tolerance_text(row), status_text(row)});
    if (row.status == CheckStatus::kOk || row.status == CheckStatus::kFail) ++gated;
    if (row.status == CheckStatus::kFail) ++failed;
  }
  print_table(std::move(cells), {false, true, true, true, true, false}, out);
  for (const std::string& note : notes) out << note << "\n";
  out << "counters and selection counts are per completed call; info: reported, not gated;\n"
      << "skip: tier below " << format_plain(report.min_tier_share_percent)
      << "% share in the baseline, its latency not gated\n";
  if (failed == 0) {
    out << "check: OK: all " << gated << " gated metrics within tolerance\n";
    return;
  }
  out << "check: REGRESSION: " << failed << " of " << gated
      << " gated metrics outside tolerance (rows marked FAIL; a move in either direction "
         "fails: if it is intended, update the baseline)\n";
}

// ---- exact comparison ----

std::vector<ExactDifference> exact_differences(const ResultDocument& result,
                                               const ResultDocument& baseline) {
  std::vector<ExactDifference> differences;
  diff_json(exact_part(baseline.value, result), exact_part(result.value, baseline), "",
            differences);
  std::stable_partition(differences.begin(), differences.end(), [](const ExactDifference& d) {
    return d.pointer == "/provenance/fingerprint";
  });
  return differences;
}

void print_exact_report(const ResultDocument& result, const ResultDocument& baseline,
                        const std::vector<ExactDifference>& differences, std::ostream& out) {
  out << "check --exact: " << console_text(result.file) << " against baseline "
      << console_text(baseline.file) << " (provenance.version not compared)\n";
  if (differences.empty()) {
    out << "check: OK: identical runs (fingerprint " << result.fingerprint << ")\n";
    return;
  }
  std::vector<std::vector<std::string>> cells = {{"field", "baseline", "result"}};
  for (const ExactDifference& d : differences) cells.push_back({d.pointer, d.baseline, d.result});
  print_table(std::move(cells), {false, true, true}, out);
  out << "check: FAIL: the result differs from the baseline in " << differences.size()
      << (differences.size() == 1 ? " field" : " fields");
  if (baseline.fingerprint == result.fingerprint) {
    out << " (same fingerprint " << result.fingerprint << ")";
  } else {
    out << " (fingerprint " << baseline.fingerprint << " -> " << result.fingerprint << ")";
  }
  out << "; if the change is intended, update the baseline\n";
}

}  // namespace bindersim::io
