#include "bindersim/sweep/run_record.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <sstream>

#include "bindersim/common/error.hpp"
#include "bindersim/common/json_reader.hpp"
#include "bindersim/io/check.hpp"
#include "bindersim/io/result_json.hpp"
#include "bindersim/stats/result.hpp"

namespace bindersim::sweep {

namespace {

using nlohmann::ordered_json;
using stats::Histogram;

constexpr std::int64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();

std::string uint128_text(Uint128 value) {
  if (value == 0) return "0";
  std::string digits;
  while (value != 0) {
    digits.push_back(static_cast<char>('0' + static_cast<int>(value % 10)));
    value /= 10;
  }
  std::reverse(digits.begin(), digits.end());
  return digits;
}

// The value of `digits`, decimal without leading zeros, at most `max`; `node` (which holds
// them) reports malformed digits as not `expected`, and a larger value as not `in_range`.
Uint128 parse_decimal(const JsonNode& node, std::string_view digits, Uint128 max,
                      const std::string& expected, const std::string& in_range) {
  if (digits.empty() || digits.size() > 39 || (digits.size() > 1 && digits[0] == '0')) {
    node.fail_expected(expected);
  }
  Uint128 value = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') node.fail_expected(expected);
    const auto digit = static_cast<unsigned>(c - '0');
    if (value > (max - digit) / 10) node.fail_expected(in_range);
    value = value * 10 + digit;
  }
  return value;
}

Uint128 read_uint128(const JsonNode& node) {
  return parse_decimal(node, node.as_string(), ~Uint128{0},
                       "a decimal unsigned integer as a string", "an unsigned 128-bit integer");
}

std::uint64_t read_count(const JsonNode& node) {
  return static_cast<std::uint64_t>(node.as_int(0, kMaxInt64));
}

std::uint64_t parse_fingerprint(const std::string& text) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  BSIM_CHECK_MSG(error == std::errc() && end == text.data() + text.size(),
                 "read_result accepted a fingerprint that is not hex");
  return value;
}

// A breakdown sum: a JSON integer where it fits 64 bits (every run of ordinary length), else
// its decimal text.
ordered_json breakdown_sum_json(Int128 sum) {
  if (sum >= std::numeric_limits<std::int64_t>::min() &&
      sum <= std::numeric_limits<std::int64_t>::max()) {
    return static_cast<std::int64_t>(sum);
  }
  std::string text = uint128_text(magnitude(sum));
  if (sum < 0) text.insert(text.begin(), '-');
  return text;
}

Int128 read_breakdown_sum(const JsonNode& node, bool may_be_negative) {
  if (!node.is_string()) return may_be_negative ? node.as_int() : node.as_int(0, kMaxInt64);
  const std::string text = node.as_string();
  const bool negative = may_be_negative && text.starts_with('-');
  const std::string_view digits = std::string_view(text).substr(negative ? 1 : 0);
  const Uint128 value = parse_decimal(
      node, digits, static_cast<Uint128>(std::numeric_limits<Int128>::max()) + (negative ? 1 : 0),
      may_be_negative ? "a decimal integer as a string (beyond 64 bits)"
                      : "a decimal unsigned integer as a string (beyond 64 bits)",
      "a 128-bit integer");
  if (negative) return value == 0 ? 0 : -static_cast<Int128>(value - 1) - 1;
  return static_cast<Int128>(value);
}

ordered_json breakdown_sums_json(const stats::BreakdownSums& sums) {
  ordered_json j = ordered_json::object();
  for (const io::BreakdownPart& part : io::kBreakdownParts) {
    j[std::string(part.key)] = breakdown_sum_json(sums.*part.sum_member);
  }
  return j;
}

stats::BreakdownSums read_breakdown_sums(const JsonNode& node) {
  ObjectReader reader(node);
  stats::BreakdownSums sums;
  for (const io::BreakdownPart& part : io::kBreakdownParts) {
    if (part.absent_from_older_results && !reader.has(part.key)) continue;  // 0, in other_ns
    // nanoseconds
    sums.*part.sum_member = read_breakdown_sum(reader.required(part.key), part.may_be_negative);
  }
  reader.finish();
  return sums;
}

// The scheduler statistics as RunResult holds them (busy times in nanoseconds, not shares).
ordered_json scheduler_json(const stats::SchedulerStats& scheduler) {
  ordered_json j = ordered_json::object();
  j["governor"] = scheduler.governor;
  ordered_json clusters = ordered_json::array();
  for (const auto& cluster : scheduler.clusters) {
    clusters.push_back(ordered_json::array({cluster.name, cluster.mean_freq_khz}));
  }
  j["clusters"] = std::move(clusters);
  j["cpu_busy_ns"] = scheduler.cpu_busy_ns;
  j["frequency_changes"] = scheduler.frequency_changes;
  j["newidle_pulls"] = scheduler.newidle_pulls;
  j["rt_pulls"] = scheduler.rt_pulls;
  j["rt_pushes"] = scheduler.rt_pushes;
  j["balance_pulls"] = scheduler.balance_pulls;
  j["misfit_migrations"] = scheduler.misfit_migrations;
  return j;
}

stats::SchedulerStats read_scheduler(const JsonNode& node) {
  ObjectReader reader(node);
  stats::SchedulerStats scheduler;
  scheduler.governor = reader.required("governor").as_enum(stats::kGovernorNames);
  for (const JsonNode& item : reader.required("clusters").items()) {
    if (!item.is_array() || item.raw().size() != 2)
      item.fail_expected("a [name, mean_freq_khz] pair");
    scheduler.clusters.push_back(stats::SchedulerStats::Cluster{
        item.child(std::size_t{0}).as_string(), item.child(std::size_t{1}).as_int(0, kMaxInt64)});
  }
  for (const JsonNode& item : reader.required("cpu_busy_ns").items()) {
    scheduler.cpu_busy_ns.push_back(item.as_int(0, kMaxInt64));
  }
  scheduler.frequency_changes = read_count(reader.required("frequency_changes"));
  scheduler.newidle_pulls = read_count(reader.required("newidle_pulls"));
  // Records written before RT push and pull were modelled have none.
  if (auto pulls = reader.optional("rt_pulls")) scheduler.rt_pulls = read_count(*pulls);
  if (auto pushes = reader.optional("rt_pushes")) scheduler.rt_pushes = read_count(*pushes);
  scheduler.balance_pulls = read_count(reader.required("balance_pulls"));
  // Records written before misfit migration was modelled have none.
  if (auto misfit = reader.optional("misfit_migrations")) {
    scheduler.misfit_migrations = read_count(*misfit);
  }
  reader.finish();
  return scheduler;
}

// Two spaces more after every line break of `text`: a nested block of a hand-built document.
std::string indented(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    out.push_back(c);
    if (c == '\n') out += "  ";
  }
  return out;
}

}  // namespace

ordered_json histogram_to_json(const Histogram& histogram) {
  ordered_json j = ordered_json::object();
  j["count"] = histogram.count();
  j["sum"] = uint128_text(histogram.sum());
  j["min"] = histogram.min();
  j["max"] = histogram.max();
  j["clamped"] = histogram.clamped();
  ordered_json buckets = ordered_json::array();
  for (const auto& [bucket, count] : histogram.nonzero_buckets()) {
    buckets.push_back(ordered_json::array({bucket, count}));
  }
  j["buckets"] = std::move(buckets);
  return j;
}

Histogram histogram_from_json(const JsonNode& node) {
  ObjectReader reader(node);
  const JsonNode count_node = reader.required("count");
  const std::uint64_t count = read_count(count_node);
  const JsonNode sum_node = reader.required("sum");
  const Uint128 sum = read_uint128(sum_node);
  const JsonNode min_node = reader.required("min");
  const std::int64_t min = min_node.as_int(0, Histogram::kMaxValue);
  const JsonNode max_node = reader.required("max");
  const std::int64_t max = max_node.as_int(0, Histogram::kMaxValue);
  const JsonNode clamped_node = reader.required("clamped");
  const std::uint64_t clamped = read_count(clamped_node);
  const JsonNode buckets_node = reader.required("buckets");
  reader.finish();

  // Buckets: ascending, in range, non-empty, adding up to count.
  struct Bucket {
    std::size_t index;
    std::uint64_t remaining;  // samples not yet recorded by the rebuild
    std::int64_t low;         // value range of the bucket within [min, max]
    std::int64_t high;
  };
  std::vector<Bucket> buckets;
  std::uint64_t total = 0;
  for (const JsonNode& item : buckets_node.items()) {
    if (!item.is_array() || item.raw().size() != 2) item.fail_expected("a [bucket, count] pair");
    const JsonNode index_node = item.child(std::size_t{0});
    const auto index = static_cast<std::size_t>(
        index_node.as_int(0, static_cast<std::int64_t>(Histogram::bucket_count()) - 1));
    if (!buckets.empty() && index <= buckets.back().index) {
      index_node.fail_expected("a bucket above " + std::to_string(buckets.back().index) +
                               " (buckets ascending, each once)");
    }
    const JsonNode bucket_count = item.child(std::size_t{1});
    const std::uint64_t n = read_count(bucket_count);
    if (n == 0) bucket_count.fail_expected("a positive count (only non-empty buckets are listed)");
    if (n > std::numeric_limits<std::uint64_t>::max() - total) {
      bucket_count.fail("bucket counts overflow");
    }
    total += n;
    buckets.push_back(
        Bucket{index, n, Histogram::bucket_lowest(index), Histogram::bucket_highest(index)});
  }
  if (total != count) {
    count_node.fail_expected(std::to_string(total) + " (the sum of the bucket counts)");
  }
  Histogram histogram;
  if (count == 0) {
    if (sum != 0) sum_node.fail_expected("\"0\" for an empty histogram");
    if (min != 0) min_node.fail_expected("0 for an empty histogram");
    if (max != 0) max_node.fail_expected("0 for an empty histogram");
    if (clamped != 0) clamped_node.fail_expected("0 for an empty histogram");
    return histogram;
  }
  if (Histogram::bucket_of(min) != buckets.front().index) {
    min_node.fail_expected("a value in the lowest bucket, " + std::to_string(buckets.front().low) +
                           ".." + std::to_string(buckets.front().high));
  }
  if (Histogram::bucket_of(max) != buckets.back().index || max < min) {
    max_node.fail_expected("a value in the highest bucket, at least min");
  }
  if (clamped > 0 && (max != Histogram::kMaxValue || clamped > buckets.back().remaining)) {
    clamped_node.fail("clamped samples must lie in the highest bucket, with max " +
                      std::to_string(Histogram::kMaxValue));
  }
  for (Bucket& b : buckets) {
    b.low = std::max(b.low, min);
    b.high = std::min(b.high, max);
  }

  // The end values first: clamped samples (recorded above kMaxValue, counted as kMaxValue),
  // then one sample at min and one at max unless those are already there.
  bool have_min = false;
  bool have_max = false;
  if (clamped > 0) {
    histogram.record_n(Histogram::kMaxValue + 1, clamped);
    buckets.back().remaining -= clamped;
    have_max = true;
    have_min = min == max;
  }
  if (!have_min) {
    histogram.record(min);
    buckets.front().remaining -= 1;
    have_max = have_max || min == max;
  }
  if (!have_max) {
    if (buckets.back().remaining == 0) max_node.fail_expected("a value in the highest bucket");
    histogram.record(max);
    buckets.back().remaining -= 1;
  }
  // Every other sample starts at its bucket's low end; the rest of the sum is then spread by
  // raising samples towards their bucket's high end, lowest buckets first.
  Uint128 floor_sum = histogram.sum();
  Uint128 room = 0;
  for (const Bucket& b : buckets) {
    floor_sum += static_cast<Uint128>(b.remaining) * static_cast<Uint128>(b.low);
    room += static_cast<Uint128>(b.remaining) * static_cast<Uint128>(b.high - b.low);
  }
  if (sum < floor_sum || sum - floor_sum > room) {
    sum_node.fail_expected("a sum between " + uint128_text(floor_sum) + " and " +
                           uint128_text(floor_sum + room) + " (what the buckets can hold)");
  }
  Uint128 excess = sum - floor_sum;
  for (const Bucket& b : buckets) {
    if (b.remaining == 0) continue;
    const auto width = static_cast<Uint128>(b.high - b.low);
    const Uint128 take = std::min(excess, static_cast<Uint128>(b.remaining) * width);
    excess -= take;
    const auto raised = static_cast<std::uint64_t>(width == 0 ? 0 : take / width);
    const auto partial = static_cast<std::int64_t>(width == 0 ? 0 : take % width);
    histogram.record_n(b.high, raised);
    std::uint64_t rest = b.remaining - raised;
    if (partial > 0) {
      histogram.record(b.low + partial);
      --rest;
    }
    histogram.record_n(b.low, rest);
  }
  BSIM_CHECK(excess == 0 && histogram.count() == count && histogram.sum() == sum &&
             histogram.min() == min && histogram.max() == max && histogram.clamped() == clamped);
  return histogram;
}

// Lock statistics as RunResult holds them (whole histograms: merged runs keep exact figures).
ordered_json lock_json(const stats::LockStats& lock) {
  ordered_json j = ordered_json::object();
  j["acquisitions"] = lock.acquisitions;
  j["contended"] = lock.contended;
  j["trylock_failures"] = lock.trylock_failures;
  j["sleeps"] = lock.sleeps;
  j["handoffs"] = lock.handoffs;
  j["wait"] = histogram_to_json(lock.wait_ns);
  j["hold"] = histogram_to_json(lock.hold_ns);
  j["spin_ns"] = lock.spin_ns;
  j["inversions"] = lock.inversions;
  j["inversion_ns"] = lock.inversion_ns;
  j["owner_preempted"] = lock.owner_preempted;
  j["owner_preempted_ns"] = lock.owner_preempted_ns;
  return j;
}

stats::LockStats read_lock(const JsonNode& node) {
  ObjectReader reader(node);
  stats::LockStats lock;
  lock.acquisitions = read_count(reader.required("acquisitions"));
  lock.contended = read_count(reader.required("contended"));
  lock.trylock_failures = read_count(reader.required("trylock_failures"));
  lock.sleeps = read_count(reader.required("sleeps"));
  lock.handoffs = read_count(reader.required("handoffs"));
  lock.wait_ns = histogram_from_json(reader.required("wait"));
  lock.hold_ns = histogram_from_json(reader.required("hold"));
  lock.spin_ns = reader.required("spin_ns").as_int(0, kMaxInt64);
  lock.inversions = read_count(reader.required("inversions"));
  lock.inversion_ns = reader.required("inversion_ns").as_int(0, kMaxInt64);
  lock.owner_preempted = read_count(reader.required("owner_preempted"));
  lock.owner_preempted_ns = reader.required("owner_preempted_ns").as_int(0, kMaxInt64);
  reader.finish();
  return lock;
}

ordered_json allocator_json(const stats::AllocatorStats& alloc) {
  ordered_json j = ordered_json::object();
  j["lock"] = alloc.lock;
  j["pages_installed_locked"] = alloc.pages_installed_locked;
  j["allocations"] = alloc.allocations;
  j["failed_no_space"] = alloc.failed_no_space;
  j["failed_async_space"] = alloc.failed_async_space;
  j["pages_installed"] = alloc.pages_installed;
  j["pages_reclaimed"] = alloc.pages_reclaimed;
  j["shrinker_skips"] = alloc.shrinker_skips;
  j["alloc_lock"] = lock_json(alloc.alloc_lock);
  j["page_lock"] = lock_json(alloc.page_lock);
  return j;
}

stats::AllocatorStats read_allocator(const JsonNode& node) {
  ObjectReader reader(node);
  stats::AllocatorStats alloc;
  alloc.lock = reader.required("lock").as_enum({"mutex", "spinlock"});
  alloc.pages_installed_locked = reader.required("pages_installed_locked").as_bool();
  alloc.allocations = read_count(reader.required("allocations"));
  alloc.failed_no_space = read_count(reader.required("failed_no_space"));
  alloc.failed_async_space = read_count(reader.required("failed_async_space"));
  alloc.pages_installed = read_count(reader.required("pages_installed"));
  alloc.pages_reclaimed = read_count(reader.required("pages_reclaimed"));
  alloc.shrinker_skips = read_count(reader.required("shrinker_skips"));
  alloc.alloc_lock = read_lock(reader.required("alloc_lock"));
  alloc.page_lock = read_lock(reader.required("page_lock"));
  reader.finish();
  return alloc;
}

void write_run_record(const RunSpec& run, const stats::RunResult& result, std::ostream& out) {
  ordered_json exact = ordered_json::object();
  exact["simulated_ns"] = result.simulated_ns;
  exact["clients_finished"] = result.clients_finished;
  exact["scheduler"] = scheduler_json(result.scheduler);
  exact["allocator"] = allocator_json(result.allocator);
  exact["failed_calls"] = result.failed_calls;
  exact["latency"] = histogram_to_json(result.latency);
  ordered_json& tiers = exact["tiers"];
  for (const stats::SchedClass c : stats::kAllSchedClasses) {
    ordered_json& cls = tiers[std::string(stats::sched_class_name(c))];
    for (const stats::Tier t : stats::kAllTiers) {
      ordered_json& tier = cls[std::string(stats::tier_name(t))];
      tier["histogram"] = histogram_to_json(result.tier(c, t));
      tier["breakdown_sums"] = breakdown_sums_json(result.tier_breakdown(c, t));
    }
  }
  constexpr auto kReplace = ordered_json::error_handler_t::replace;
  out << "{\n  \"schema\": " << ordered_json(kRunRecordSchema).dump()
      << ",\n  \"run\": " << run_to_json(run).dump(-1, ' ', false, kReplace)
      << ",\n  \"result\": " << indented(io::result_to_json(result).dump(2, ' ', false, kReplace))
      << ",\n  \"exact\": " << exact.dump(-1, ' ', false, kReplace) << "\n}\n";
}

RunRecord read_run_record(const JsonNode& root) {
  ObjectReader reader(root);
  const JsonNode schema = reader.required("schema");
  if (schema.as_string() != kRunRecordSchema) {
    schema.fail_expected("\"" + std::string(kRunRecordSchema) + "\"");
  }
  RunRecord record;
  const JsonNode run_node = reader.required("run");
  record.run = parse_run(run_node);
  const JsonNode result_node = reader.required("result");
  const io::ResultDocument document =
      io::read_result(JsonDocument::from_value(result_node.raw(), root.file() + ": /result"));
  ObjectReader exact(reader.required("exact"));
  reader.finish();

  stats::RunResult& r = record.result;
  r.scenario = document.scenario;
  r.topology = document.topology;
  r.selector = document.selector;
  r.selector_params = document.selector_params;
  r.placement = document.placement;
  r.seed = document.seed;
  r.completed = document.completed;
  r.counters = document.counters;
  r.process_counters = document.process_counters;
  r.selection = document.selection;
  r.version = document.version;
  r.scenario_hash = document.scenario_hash;
  r.topology_hash = document.topology_hash;
  r.overrides = document.overrides;
  r.fingerprint = parse_fingerprint(document.fingerprint);
  r.simulated_ns = exact.required("simulated_ns").as_int(0, kMaxInt64);
  r.clients_finished = exact.required("clients_finished").as_bool();
  r.scheduler = read_scheduler(exact.required("scheduler"));
  r.allocator = read_allocator(exact.required("allocator"));
  r.failed_calls = read_count(exact.required("failed_calls"));
  r.latency = histogram_from_json(exact.required("latency"));
  ObjectReader tiers(exact.required("tiers"));
  for (const stats::SchedClass c : stats::kAllSchedClasses) {
    ObjectReader cls(tiers.required(stats::sched_class_name(c)));
    for (const stats::Tier t : stats::kAllTiers) {
      ObjectReader tier(cls.required(stats::tier_name(t)));
      r.tier(c, t) = histogram_from_json(tier.required("histogram"));
      const JsonNode sums = tier.required("breakdown_sums");
      r.tier_breakdown(c, t) = read_breakdown_sums(sums);
      // A tier without calls has nothing to sum (its means, which /result cross-checks for
      // the other tiers, are not written).
      if (r.tier(c, t).count() == 0 && r.tier_breakdown(c, t) != stats::BreakdownSums{}) {
        sums.fail_expected("zero sums (the tier has no calls)");
      }
      tier.finish();
    }
    cls.finish();
  }
  tiers.finish();
  exact.finish();

  // The stored result must be what the exact data gives, and the run it claims to be.
  const nlohmann::json rebuilt = nlohmann::json::parse(io::result_to_json(r).dump());
  if (rebuilt != result_node.raw()) {
    result_node.fail("does not match the record's exact data (the file was edited or damaged)");
  }
  const auto mismatch = [&](const char* key, const std::string& in_run,
                            const std::string& in_result) {
    if (in_run != in_result) {
      run_node.child(key).fail_expected(quote_text(in_result) + " (the " + key + " of /result)");
    }
  };
  mismatch("selector", record.run.selector, r.selector);
  mismatch("placement", record.run.placement, r.placement);
  // What the result was made from, where it records it (results written before did not).
  if (!r.scenario_hash.empty())
    mismatch("scenario_hash", record.run.scenario_hash, r.scenario_hash);
  if (!r.overrides.empty() &&
      workload::overrides_text(to_overrides(record.run.overrides)) != r.overrides) {
    run_node.child("overrides")
        .fail("does not match /result/provenance/overrides (the result was made with others)");
  }
  if (record.run.seed != r.seed) {
    run_node.child("seed").fail_expected(std::to_string(r.seed) + " (the seed of /result)");
  }
  return record;
}

RunRecord read_run_record_file(const std::filesystem::path& file) {
  const JsonDocument document = JsonDocument::parse_file(file);
  return read_run_record(document.root());
}

}  // namespace bindersim::sweep
