// Deterministic fuzzing of the output boundary read back: result documents (every golden result,
// tests/golden/*.json), a compare document (tests/data/compare/schd-dbg-fifo-ctabs.json,
// written by `bindersim compare schd-dbg --selectors fifo,ctabs --seeds 2 --set
// clients.0.iterations=100`) and a sweep summary (tests/data/sweeps/small-summary.json, written
// by `bindersim sweep merge --runs` over the runs of tests/data/sweeps/small.json, the last run's
// result removed so that one run is missing) are mutated with the project's own RNG: values
// replaced by another JSON type, huge, negative, fractional or NaN-like numbers, empty or deeply
// nested values, keys deleted or added, arrays duplicated into or truncated, strings with control
// characters, bytes that are not UTF-8 and number tokens JSON cannot hold, and edits a result's
// consumers must survive (shares above 1, zero calls, counts at 2^64 - 1, quantiles out of order,
// extreme breakdowns, odd provenance). Each mutant is written to a file and read as `bindersim
// check` and `bindersim report` read it. Reading must either succeed or fail with one ConfigError
// line that names the file and a JSON pointer (or, for text that is not JSON, a line and column),
// and the result reader and the report reader must agree. A result that reads is checked against
// its golden in both directions, by tolerance and exactly, both reports are printed, and the HTML
// report of [golden, mutant] is rendered: nothing may throw, printed numbers may not be "nan" or
// "inf" (a Δ from a baseline of 0 prints "from 0"), and the text must be valid UTF-8 without
// control characters. A compare mutant that reads has the results of its runs checked against
// the original's and is rendered the same way, as is a sweep summary mutant that reads. Each mutant
// runs in a child process, so that a crash, a failed invariant check or a hang is reported with its
// mutations.
//
// Bugs this test found, each kept as a test at the end of this file (the wrong figures of the
// third and fourth do not throw, which the mutants are not checked for; the last needs a
// document built in memory, and mutants are read from files):
// - a Δ from a tiny but non-zero baseline (per_second 5e-324) was +inf, printed "from 0";
// - a compare file's error about a column quoted its selector or label whole and unescaped;
// - the report's pooled tier share overflowed when tier counts summed beyond 2^64;
// - the report printed "+inf%" for a summary delta_pct near the largest double, and "inf"
//   calls/s for throughputs that summed beyond it;
// - a document built in memory (JsonDocument::from_value) with a string that is not UTF-8 made
//   read_result or exact_differences throw nlohmann::json::type_error;
// - a sweep summary with one column's value at the largest double and another's at its
//   negative made the sweep chart's axis span infinite (kept in tests/io/report_test.cpp, where
//   the sweep's mutation that finds it was added after it was found by hand).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "bindersim/common/error.hpp"
#include "bindersim/common/json_reader.hpp"
#include "bindersim/engine/rng.hpp"
#include "bindersim/io/check.hpp"
#include "bindersim/io/report.hpp"
#include "bindersim/stats/result.hpp"
#include "fuzz_support.hpp"

namespace bindersim {
namespace {

using namespace testing::fuzz;
namespace fs = std::filesystem;

const fs::path kSourceDir = BINDERSIM_SOURCE_DIR;
const fs::path kGoldenDir = kSourceDir / "tests" / "golden";
const fs::path kCompareFile =
    kSourceDir / "tests" / "data" / "compare" / "schd-dbg-fifo-ctabs.json";
const fs::path kSweepSummaryFile = kSourceDir / "tests" / "data" / "sweeps" / "small-summary.json";

// The mutants are the same on every run; BINDERSIM_FUZZ_SEED=N explores other ones. Mutant i
// of a file draws from its own stream, so it can be reproduced alone.
constexpr std::uint64_t kFuzzSeed = 0xf023;
constexpr int kMutantsPerResult = 20;    // of each golden result
constexpr int kMutantsPerCompare = 100;  // of the compare document
constexpr int kMutantsPerSweep = 100;    // of the sweep summary
// Where the mutants that fail are kept.
const fs::path kFailedMutantsDir = fs::temp_directory_path() / "bindersim-result-fuzz-failures";

// ---- mutations --------------------------------------------------------------------------------

// Text that the JSON library cannot hold in a value, put into the dumped text in place of a
// token: number tokens beyond a double or not JSON at all, and bytes that are not UTF-8 (or raw
// control characters) inside a string or key.
const std::vector<std::string> kRawValues = {
    "1e999",  "-1e999",      "NaN", "Infinity", "-0",          "18446744073709551616",
    "01",     "1.",          ".5",  "+1",       "0x10",        "-9223372036854775809",
    "1e-400", "\"\\ud800\"", "tru", "[1,]",     "{\"a\": 1,}", "\"\\u0000\""};
const std::vector<std::string> kRawBytes = {
    "\xff", "\xc3", "\xed\xa0\x80", "\xc0\xaf", "\xf4\x90\x80\x80", "\x80", "\x01", "\t"};
constexpr std::string_view kRawValueToken = "@@fuzz-raw-value-";
constexpr std::string_view kRawBytesToken = "@@fuzz-raw-bytes-";

std::string raw_value_token(std::size_t i) {
  return std::string(kRawValueToken) + std::to_string(i) + "@@";
}
std::string raw_bytes_token(std::size_t i) {
  return std::string(kRawBytesToken) + std::to_string(i) + "@@";
}

// `text` with every `from` replaced by `to`.
std::string replaced(const std::string& text, const std::string& from, const std::string& to) {
  std::string out;
  std::size_t done = 0;
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, done)) {
    out.append(text, done, at - done);
    out += to;
    done = at + from.size();
  }
  out.append(text, done);
  return out;
}

// `document` as a file holds it, the tokens replaced by their raw text.
std::string text_of(const Json& document) {
  std::string text = document.dump(1);
  if (text.find("@@fuzz-raw-") == std::string::npos) return text;
  for (std::size_t i = 0; i < kRawValues.size(); ++i) {
    std::string quoted_token = "\"";  // built by appending: GCC 12 warns on "\"" + string
    quoted_token += raw_value_token(i);
    quoted_token += '"';
    text = replaced(text, quoted_token, kRawValues[i]);
  }
  for (std::size_t i = 0; i < kRawBytes.size(); ++i) {
    text = replaced(text, raw_bytes_token(i), kRawBytes[i]);
  }
  return text;
}

// An array nested `depth` levels deep around 0.
Json nested(int depth) {
  Json value = 0;
  for (int i = 0; i < depth; ++i) value = Json::array({std::move(value)});
  return value;
}

// Values a mutation puts in place of another: other JSON types, zero, negative, fractional and
// huge numbers (beyond int64, at 2^64 - 1 and beyond it, near the largest double, tiny ones),
// NaN-like strings, empty containers, hashes that are almost right, and strings that are awkward
// to print (control characters, escape sequences, markup, pointer syntax).
const std::vector<Json>& hostile_values() {
  static const std::vector<Json> values = [] {
    std::vector<Json> out = Json::parse(R"([
        "fuzz", true, false, null, 0, 0.5, 1.0, -1, -0.5, 1e308, -1e308, 1e-300, 1e300,
        9223372036854775807, 9223372036854775808, -9223372036854775808, 18446744073709551615,
        18446744073709551616, 1099511627776, 1099511627777, 4294967296, 9007199254740993,
        "NaN", "Infinity", "-inf", "nan", "1e999", "", [], {}, [0], [[]], {"": null},
        "line\nbreak", "tab\there", "\r", "\u001b[31mred", "nul\u0000byte", "\u007f\u0085\u009b",
        "d\u00e9j\u00e0", "ffff", "FFFFFFFFFFFFFFFF", "0123456789abcdeg", "0123456789abcdef",
        "<script>alert(1)</script>", "a/b~c", "bindersim.compare/1"])")
                                .get<std::vector<Json>>();
    out.push_back(std::string(100'000, 'x'));
    out.push_back(nested(40));
    return out;
  }();
  return values;
}

// A description of a value for a mutation's log line: short, on one line.
std::string brief(const Json& value) { return short_text(describe_json(value)); }

// One generic mutation anywhere in `document`; returns what it did, e.g.
// "/latency/count: replaced by -1".
std::string mutate_anywhere(Json& document, engine::Rng& rng) {
  std::vector<Pointer> pointers;
  collect_pointers(document, Pointer(), pointers);
  const auto any = [](const Pointer&, const Json&) { return true; };
  const auto has_parent = [](const Pointer& p, const Json&) { return !p.empty(); };
  const auto is_string = [](const Pointer&, const Json& v) { return v.is_string(); };
  switch (rng.uniform_below(11)) {
    case 0:
    case 1:
    case 2: {  // the most productive: a hostile value anywhere below the root
      const Pointer at = pick_pointer(document, pointers, rng, has_parent).value_or(Pointer());
      const Json& value = pick(hostile_values(), rng);
      document[at] = value;
      return show(at) + ": replaced by " + brief(value);
    }
    case 3: {
      const auto is_number = [](const Pointer&, const Json& v) { return v.is_number(); };
      if (const auto at = pick_pointer(document, pointers, rng, is_number)) {
        document[*at] = nudged_number(document[*at], rng);
        return show(*at) + ": number changed to " + brief(document[*at]);
      }
      return "no number to change";
    }
    case 4: {  // a value from elsewhere: a name where a count was, a tier where a share was, ...
      const Pointer from = *pick_pointer(document, pointers, rng, any);
      const Pointer to = *pick_pointer(document, pointers, rng, has_parent);
      if (from.empty() || to.to_string().starts_with(from.to_string() + "/")) {
        return "no value to copy";  // an ancestor into its own descendant would grow the tree
      }
      const Json value = document[from];
      document[to] = value;
      return show(to) + ": replaced by the value at " + show(from);
    }
    case 5:
      return delete_one(document, pointers, rng);
    case 6: {
      const auto is_object = [](const Pointer&, const Json& v) { return v.is_object(); };
      const auto at = pick_pointer(document, pointers, rng, is_object);
      if (!at) return "no object to add a key to";
      static const std::vector<std::string> kKeys = {"fuzz_unknown_key", "",      "a/b~c",
                                                     "line\nbreak",      "Count", "count "};
      const std::string key = pick(kKeys, rng);
      document[*at][key] = 1;
      return show(*at) + ": key " + quote_text(key) + " added";
    }
    case 7:
      return duplicate_element(document, pointers, rng);
    case 8:
      return truncate_array(document, pointers, rng);
    case 9: {  // text the JSON library cannot hold: raw bytes in a string or key, or a raw token
      if (rng.bernoulli(0.5)) {
        const Pointer at = pick_pointer(document, pointers, rng, has_parent).value_or(Pointer());
        const std::size_t i = rng.uniform_below(kRawValues.size());
        document[at] = raw_value_token(i);
        return show(at) + ": replaced by the raw text " + quote_text(kRawValues[i]);
      }
      const std::size_t i = rng.uniform_below(kRawBytes.size());
      const auto is_object = [](const Pointer&, const Json& v) {
        return v.is_object() && !v.empty();
      };
      if (rng.bernoulli(0.3)) {
        if (const auto at = pick_pointer(document, pointers, rng, is_object)) {
          Json& object = document[*at];
          auto member = object.begin();
          std::advance(member, static_cast<std::ptrdiff_t>(rng.uniform_below(object.size())));
          const std::string key = member.key();
          Json value = object[key];
          object.erase(key);
          object[key + raw_bytes_token(i)] = std::move(value);
          return show(*at) + ": key " + quote_text(key) + " gets the raw bytes " +
                 quote_text(kRawBytes[i]);
        }
      }
      if (const auto at = pick_pointer(document, pointers, rng, is_string)) {
        document[*at] = document[*at].get<std::string>() + raw_bytes_token(i);
        return show(*at) + ": the raw bytes " + quote_text(kRawBytes[i]) + " appended";
      }
      return "no string for raw bytes";
    }
    default: {  // nesting: within the reader's limit of 256 levels, at it, and far beyond it
      const Pointer at = pick_pointer(document, pointers, rng, has_parent).value_or(Pointer());
      static const std::vector<int> kDepths = {20, 250, 260, 1000};
      const int depth = pick(kDepths, rng);
      document[at] = nested(depth);
      return show(at) + ": replaced by arrays nested " + std::to_string(depth) + " deep";
    }
  }
}

const std::vector<std::string> kClassKeys = {"sched_fifo", "sched_other"};
const std::vector<std::string> kTierKeys = {"same_core", "same_cluster", "cross_cluster"};
const std::vector<std::string> kBreakdownKeys = {
    "kernel_ns",    "wakeup_ipi_ns",   "idle_exit_ns", "runqueue_wait_ns",
    "lock_wait_ns", "cache_refill_ns", "service_ns",   "other_ns"};

// Sets `document[at]` when the path to it exists (a parent an earlier mutation deleted stays
// deleted); returns the log line.
std::string set_if_present(Json& document, const Pointer& at, const Json& value) {
  if (!document.contains(at.parent_pointer())) return show(at) + ": no longer there";
  Json& parent = document[at.parent_pointer()];
  if (!parent.is_object()) return show(at) + ": no longer there";
  parent[at.back()] = value;
  return show(at) + ": set to " + brief(value);
}

// One edit of the result document at `root` that keeps its layout but not its sense: the values
// a reader must either refuse or let its consumers survive.
std::string mutate_result_fields(Json& document, const Pointer& root, engine::Rng& rng) {
  const Pointer tiers = root / "tiers";
  const auto tier = [&] { return tiers / pick(kClassKeys, rng) / pick(kTierKeys, rng); };
  const auto some = [&](std::initializer_list<Json> values) {
    return std::vector<Json>(values)[rng.uniform_below(values.size())];
  };
  switch (rng.uniform_below(17)) {
    case 0:  // a share above 1
      return set_if_present(document, tier() / "share",
                            some({1.000001, 1.5, 2, 1e308, -0.0, -1e-9}));
    case 1: {  // every tier of a class at share 1: each in range, their sum 3
      const std::string cls = pick(kClassKeys, rng);
      std::string log;
      for (const std::string& t : kTierKeys) {
        log += set_if_present(document, tiers / cls / t / "share", 1.0) + "; ";
      }
      return log;
    }
    case 2:
      return set_if_present(document, root / "transactions" / "completed", 0);
    case 3:
      return set_if_present(document, root / "latency" / "count", 0);
    case 4: {  // no calls in any tier, the rest left as it was
      std::string log;
      for (const std::string& cls : kClassKeys) {
        for (const std::string& t : kTierKeys) {
          log += set_if_present(document, tiers / cls / t / "count", 0) + "; ";
        }
      }
      return log + set_if_present(document, root / "latency" / "count", 0);
    }
    case 5: {  // counts at the edges of what the tables and charts divide by: one tier of a class
               // at 2^64 - 1 and the others without calls, or the others near it too
      if (rng.bernoulli(0.5)) {
        return set_if_present(
            document, root / "transactions" / "completed",
            some({std::numeric_limits<std::uint64_t>::max(), 1, std::uint64_t{1} << 53}));
      }
      const std::string cls = pick(kClassKeys, rng);
      const std::string busy = pick(kTierKeys, rng);
      std::string log;
      for (const std::string& t : kTierKeys) {
        const std::uint64_t others = rng.bernoulli(0.5) ? 0 : std::uint64_t{1} << 63;
        log += set_if_present(document, tiers / cls / t / "count",
                              t == busy ? std::numeric_limits<std::uint64_t>::max() : others) +
               "; ";
      }
      return log;
    }
    case 6: {  // quantiles out of order
      const Pointer latency = root / "latency";
      switch (rng.uniform_below(3)) {
        case 0:
          return set_if_present(document, latency / "min_ns", std::uint64_t{1} << 40) + "; " +
                 set_if_present(document, latency / "max_ns", 0);
        case 1:
          return set_if_present(document, tier() / "p50_ns", std::uint64_t{1} << 40);
        default:
          return set_if_present(document, latency / "p99_ns", (std::uint64_t{1} << 40) + 1);
      }
    }
    case 7:  // a breakdown part at the edges of int64
      return set_if_present(
          document, tier() / "breakdown" / pick(kBreakdownKeys, rng),
          some({std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min(),
                -1, Json(std::uint64_t{1} << 63)}));
    case 8:  // throughput at the edges of a double
      return set_if_present(
          document, root / "transactions" / "per_second",
          some({1e308, std::numeric_limits<double>::max(), 0.0, 5e-324, 1e-300, 0.001}));
    case 9:  // selector parameters of any shape
      return set_if_present(
          document, root / "selector_params",
          some({Json::parse(R"({"check_caller_idle": false})"), Json::object(),
                Json::parse(R"({"k": "line\nbreak\u001b[2J"})"), Json::parse(R"({"\u0001": 1})"),
                Json{{"deep", nested(200)}}, Json{{"long", std::string(5'000, 'p')}}}));
    case 10:  // overrides of any shape
      return set_if_present(
          document, root / "provenance" / "overrides",
          some({Json::array(), Json::parse(R"([["clients.0.iterations", 1], ["a.b", {"c": [1]}]])"),
                Json::parse(R"([["line\nbreak", "\u001b[31m"]])"), Json::parse(R"([[""]])"),
                Json::parse(R"([[1, 2]])"), Json::parse(R"([["a", 1, 2]])"),
                Json::parse(R"([["a", 1e308], ["b", -1e308], ["c", null]])"),
                Json::array({Json::array({"k", nested(200)})}),
                Json::array({Json::array({std::string(3'000, 'o'), "v"})})}));
    case 11:  // hashes almost right
      return set_if_present(
          document,
          root / "provenance" /
              pick<std::string>({"scenario_hash", "topology_hash", "fingerprint"}, rng),
          some({"0123456789ABCDEF", "0123456789abcde", "0123456789abcdef0", "", "g123456789abcdef",
                1234567890123456}));
    case 12:  // a name of another shape
      return set_if_present(
          document,
          root / pick<std::string>({"scenario", "topology", "selector", "placement"}, rng),
          some({"", "line\nbreak", "\u001b[31mred", "<b>&amp;</b>", "fifo", "ctabs", "gki",
                std::string(300, 'n'), "d\u00e9j\u00e0 \u2603"}));
    case 13:
      return set_if_present(document, root / "schema",
                            some({"bindersim.compare/1", "bindersim.result/2", "BINDERSIM.RESULT/1",
                                  "", "bindersim.result/1 "}));
    case 14: {  // scheduler statistics of another size
      const Pointer scheduler = root / "scheduler";
      switch (rng.uniform_below(3)) {
        case 0:
          return set_if_present(document, scheduler / "cpu_busy_share",
                                some({Json::array(), Json(std::vector<double>(300, 1.0)),
                                      Json::array({1.0000001}), Json::array({-0.0, 0.0})}));
        case 1:
          return set_if_present(
              document, scheduler / "clusters",
              some({Json::array(), Json::parse(R"([{"name": "a", "mean_freq_khz": 1},
                                    {"name": "a", "mean_freq_khz": 18446744073709551615}])"),
                    Json::parse(R"([{"name": "", "mean_freq_khz": 0}])")}));
        default:
          return set_if_present(document, scheduler / "governor",
                                some({"ondemand", "", "performance"}));
      }
    }
    case 15:
      return set_if_present(document, root / "seed",
                            some({std::numeric_limits<std::uint64_t>::max(), 0, 2, -1, 1.0}));
    default: {  // counters and selection counts all zero or all at 2^64 - 1
      const Json value = some({0, std::numeric_limits<std::uint64_t>::max()});
      std::string log;
      for (const char* key :
           {"cpu_cycles", "cache_refs", "cache_misses", "migrations", "context_switches"}) {
        log += set_if_present(document, root / "counters" / key, value) + "; ";
      }
      for (const char* key : {"same_cpu", "same_cluster", "other", "none_idle"}) {
        log += set_if_present(document, root / "selection" / "decisions" / key, value) + "; ";
      }
      return log;
    }
  }
}

// One edit of a compare document's own keys (its columns, runs, seeds and summary), or of the
// result of one of its runs.
std::string mutate_compare_fields(Json& document, engine::Rng& rng) {
  const auto index_in = [&](const char* key) -> std::optional<std::size_t> {
    if (!document.is_object() || !document.contains(key) || !document[key].is_array() ||
        document[key].empty()) {
      return std::nullopt;
    }
    return rng.uniform_below(document[key].size());
  };
  const auto some = [&](std::initializer_list<Json> values) {
    return std::vector<Json>(values)[rng.uniform_below(values.size())];
  };
  switch (rng.uniform_below(8)) {
    case 0:
    case 1:
    case 2:
      if (const auto run = index_in("runs")) {
        const Pointer root = Pointer("/runs") / *run / "result";
        if (document.contains(root)) return mutate_result_fields(document, root, rng);
      }
      return "no run to edit";
    case 3:
      if (const auto column = index_in("columns")) {
        const Pointer at =
            Pointer("/columns") / *column / pick<std::string>({"label", "selector"}, rng);
        return set_if_present(
            document, at,
            some({"", "fifo", "ctabs", "\u001b[31m", "x", "<b>&</b>", std::string(30, 'c'),
                  std::string(5'000, 'c'), "fi\nfo", "d\u00e9j\u00e0"}));
      }
      return "no column to edit";
    case 4:
      if (const auto run = index_in("runs")) {
        const Pointer at = Pointer("/runs") / *run / pick<std::string>({"column", "seed"}, rng);
        return set_if_present(document, at,
                              some({0, 1, 2, 3, std::numeric_limits<std::uint64_t>::max(), -1}));
      }
      return "no run to edit";
    case 5:
      return set_if_present(document, Pointer("/seeds"),
                            some({Json::array(), Json::parse("[1, 1]"), Json::parse("[2, 1]"),
                                  Json::parse("[1, 2, 3]"), Json::parse("[1]")}));
    case 6:
      if (const auto column = index_in("columns")) {
        return set_if_present(document, Pointer("/columns") / *column / "overrides",
                              some({Json::object(), Json::parse(R"({"name": "other"})"),
                                    Json::parse(R"({"name": "schd-dbg"})"),
                                    Json::parse(R"({"clients.0.iterations": [1, {"a": null}]})"),
                                    Json::parse(R"({"line\nbreak": "\u001b[31m"})")}));
      }
      return "no column to edit";
    default: {  // one summary cell of another value
      if (!document.is_object() || !document.contains("summary") ||
          !document["summary"].is_object() || document["summary"].empty()) {
        return "no summary to edit";
      }
      Json& summary = document["summary"];
      auto metric = summary.begin();
      std::advance(metric, static_cast<std::ptrdiff_t>(rng.uniform_below(summary.size())));
      const Pointer cells = Pointer("/summary") / metric.key() / "columns";
      if (!document.contains(cells) || !document[cells].is_array() || document[cells].empty()) {
        return show(cells) + ": no cells to edit";
      }
      const Pointer cell = cells / rng.uniform_below(document[cells].size());
      return set_if_present(
          document, cell / pick<std::string>({"mean", "ci95", "delta_pct", "significant"}, rng),
          some({nullptr, 0, -0.0, -1, 1e300, -1e300, 1e308, std::numeric_limits<double>::max(),
                5e-324, true, "1", 1e16}));
    }
  }
}

// One edit of a sweep summary's own fields, or of one of its pooled runs.
std::string mutate_sweep_fields(Json& document, engine::Rng& rng) {
  const auto index_in = [&](const Pointer& at) -> std::optional<std::size_t> {
    if (!document.contains(at) || !document[at].is_array() || document[at].empty()) {
      return std::nullopt;
    }
    return rng.uniform_below(document[at].size());
  };
  const auto some = [&](std::initializer_list<Json> values) {
    return std::vector<Json>(values)[rng.uniform_below(values.size())];
  };
  // A column of a point: /points/<p>/columns/<c>.
  const auto column = [&]() -> std::optional<Pointer> {
    const auto point = index_in(Pointer("/points"));
    if (!point) return std::nullopt;
    const Pointer columns = Pointer("/points") / *point / "columns";
    const auto c = index_in(columns);
    if (!c) return std::nullopt;
    return columns / *c;
  };
  switch (rng.uniform_below(10)) {
    case 0:
    case 1:
    case 2:
      if (const auto at = column()) {
        if (document.contains(*at / "pooled") && document[*at / "pooled"].is_object()) {
          return mutate_result_fields(document, *at / "pooled", rng);
        }
      }
      return "no pooled run to edit";
    case 3:
      if (const auto at = column()) {
        return set_if_present(
            document, *at / pick<std::string>({"label", "selector", "placement"}, rng),
            some({"", "fifo", "ctabs", "gki", "mainline", "\u001b[31m", "<b>&</b>",
                  std::string(5'000, 'c'), "fi\nfo", "d\u00e9j\u00e0"}));
      }
      return "no column to edit";
    case 4:
      if (const auto at = column()) {
        return set_if_present(
            document, *at / pick<std::string>({"seeds", "run_ids", "missing_seeds"}, rng),
            some({Json::array(), Json::parse("[1, 1]"), Json::parse("[2, 1]"),
                  Json::parse("[1, 2, 3]"), Json::parse("[1]"), Json::parse(R"(["a", "b"])"),
                  Json::parse("[18446744073709551615]")}));
      }
      return "no column to edit";
    case 5:
      if (const auto point = index_in(Pointer("/points"))) {
        return set_if_present(
            document, Pointer("/points") / *point / "axes",
            some({Json::object(), Json::parse(R"({"payload_bytes": 16})"),
                  Json::parse(R"({"payload_bytes": "<b>x</b>"})"),
                  Json::parse(R"({"payload_bytes": [1, {"a": null}]})"),
                  Json::parse(R"({"payload_bytes": 1e308})"), Json::parse(R"({"other": 1})")}));
      }
      return "no point to edit";
    case 6:
      return set_if_present(
          document, Pointer("/runs") / pick<std::string>({"listed", "merged", "ignored"}, rng),
          some({nullptr, 0, -1, std::numeric_limits<std::uint64_t>::max(), "1", 1.5}));
    case 7:
      if (const auto metric = index_in(Pointer("/metrics"))) {
        return set_if_present(document,
                              Pointer("/metrics") / *metric /
                                  pick<std::string>({"key", "label", "unit", "better"}, rng),
                              some({"", "throughput", "latency.p99", "x", "lower", "neutral",
                                    "<b>&</b>", "\u001b[31m", std::string(5'000, 'm')}));
      }
      return "no metric to edit";
    case 9: {  // a headline metric at the largest double in one column, its negative in another
      const auto first = column();
      const auto second = column();
      if (!first || !second) return "no column to edit";
      const std::string key =
          pick<std::string>({"throughput", "latency.mean", "latency.p50", "latency.p99"}, rng);
      const double huge = std::numeric_limits<double>::max();
      return set_if_present(document, *first / "metrics" / key / "value", huge) + "; " +
             set_if_present(document, *second / "metrics" / key / "value", -huge) + "; " +
             set_if_present(document, *first / "metrics" / key / "ci95", huge);
    }
    default: {  // one metric cell of a column
      const auto at = column();
      if (!at || !document.contains(*at / "metrics") || !document[*at / "metrics"].is_object() ||
          document[*at / "metrics"].empty()) {
        return "no metric cell to edit";
      }
      Json& cells = document[*at / "metrics"];
      auto cell = cells.begin();
      std::advance(cell, static_cast<std::ptrdiff_t>(rng.uniform_below(cells.size())));
      return set_if_present(
          document,
          *at / "metrics" / cell.key() /
              pick<std::string>({"value", "ci95", "delta_pct", "significant"}, rng),
          some({nullptr, 0, -0.0, -1, 1e300, -1e300, 1e308, std::numeric_limits<double>::max(),
                5e-324, true, "1", 1e16}));
    }
  }
}

// ---- the properties checked ------------------------------------------------------------------

// A ConfigError is acceptable when it is one short line that starts with `file` and a JSON
// pointer, or with `file` and the line and column of text that is not JSON.
bool acceptable_error(const std::string& message, const std::string& file) {
  // Long enough for a list of valid names, short enough that a huge value was not quoted whole.
  constexpr std::size_t kMaxMessageChars = 1000;
  if (message.find('\n') != std::string::npos || message.size() > kMaxMessageChars) return false;
  return message.starts_with(file + ": /") || message.starts_with(file + ": line ");
}

// Offset of the first byte of `text` that is not well-formed UTF-8 (RFC 3629), or npos.
std::size_t invalid_utf8_at(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = [&](std::size_t k) -> unsigned char {
      return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0;
    };
    const unsigned char lead = byte(0);
    std::size_t length = 0;
    unsigned char low = 0x80;
    unsigned char high = 0xBF;
    if (lead < 0x80) {
      length = 1;
    } else if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0) low = 0xA0;
      if (lead == 0xED) high = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0) low = 0x90;
      if (lead == 0xF4) high = 0x8F;
    } else {
      return i;
    }
    if (length > 1 && (byte(1) < low || byte(1) > high)) return i;
    for (std::size_t k = 2; k < length; ++k) {
      if ((byte(k) & 0xC0) != 0x80) return i;
    }
    i += length;
  }
  return std::string_view::npos;
}

// Text for a terminal or a page: valid UTF-8, and no control characters but the `allowed` ones
// (C0, DEL and C1, which could move the cursor or recolour the terminal).
void require_clean_text(const std::string& text, std::string_view allowed, const char* what) {
  if (const std::size_t at = invalid_utf8_at(text); at != std::string::npos) {
    throw FuzzProblem(std::string(what) + " is not UTF-8 at byte " + std::to_string(at) + ": ..." +
                      escaped_text(text.substr(at > 40 ? at - 40 : 0, 80)) + "...");
  }
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const bool c1 = c == 0xC2 && i + 1 < text.size() &&
                    static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(text[i + 1]) <= 0x9F;
    if (((c < 0x20 || c == 0x7F) && allowed.find(static_cast<char>(c)) == std::string::npos) ||
        c1) {
      throw FuzzProblem(std::string(what) + " holds a control character at byte " +
                        std::to_string(i) + ": ..." +
                        escaped_text(text.substr(i > 40 ? i - 40 : 0, 80)) + "...");
    }
  }
}

// Whether `text` holds "nan" or "inf" (any case) as a word of its own: "+inf%", "-nan", but not
// "info".
bool has_non_finite_word(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view word : {"nan", "inf"}) {
    for (std::size_t at = lower.find(word); at != std::string::npos;
         at = lower.find(word, at + 1)) {
      const bool starts = at == 0 || !std::isalpha(static_cast<unsigned char>(lower[at - 1]));
      const std::size_t end = at + word.size();
      const bool ends =
          end == lower.size() || !std::isalpha(static_cast<unsigned char>(lower[end]));
      if (starts && ends) return true;
    }
  }
  return false;
}

// The rows of a check report, as the header documents them: numbers finite, Δ not NaN, and an
// infinite Δ only for a result that is not 0 over a baseline of 0.
void require_sound_rows(const io::CheckReport& report) {
  for (const io::CheckRow& row : report.rows) {
    if (row.kind != io::MetricKind::kRelative && row.kind != io::MetricKind::kPoints) continue;
    const std::string where = "check row " + row.metric + " (baseline " + row.baseline_text +
                              ", result " + row.result_text + ")";
    if (!std::isfinite(row.baseline) || !std::isfinite(row.result)) {
      throw FuzzProblem(where + ": a value that is not finite");
    }
    if (std::isnan(row.delta)) throw FuzzProblem(where + ": Δ is NaN");
    if (std::isinf(row.delta) &&
        !(row.kind == io::MetricKind::kRelative && row.baseline == 0.0 && row.result != 0.0)) {
      throw FuzzProblem(where + ": Δ is infinite for a baseline that is not 0");
    }
  }
}

// The printed check report: clean text, and no "nan" or "inf" on the line of a numeric metric
// (or the note under the table that holds one of its values). A Δ from a baseline of 0 prints as
// "from 0"; names from the input may be "NaN" on their own rows.
void require_sound_check_text(const io::CheckReport& report, const std::string& text) {
  require_clean_text(text, "\n", "the check report");
  std::set<std::string> numeric;
  for (const io::CheckRow& row : report.rows) {
    if (row.kind == io::MetricKind::kRelative || row.kind == io::MetricKind::kPoints) {
      numeric.insert(row.metric);
    }
  }
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::string_view rest = line;
    if (rest.starts_with("[")) rest.remove_prefix(std::min(rest.find(' ') + 1, rest.size()));
    const std::string metric(rest.substr(0, std::min(rest.find_first_of(" ,"), rest.size())));
    if (numeric.contains(metric) && has_non_finite_word(line)) {
      throw FuzzProblem("the check report prints a number that is not finite: " + short_text(line));
    }
  }
}

// The HTML page: clean text (tab and newline allowed), and no "nan" or "inf" in a coordinate
// or length of the charts or in a numeric cell of a table.
void require_sound_html(const std::string& html) {
  require_clean_text(html, "\t\n", "the HTML report");
  for (std::string_view attribute :
       {" x=\"", " y=\"", " x1=\"", " x2=\"", " y1=\"", " y2=\"", " cx=\"", " cy=\"", " r=\"",
        " width=\"", " height=\"", " points=\"", " viewBox=\"", " transform=\""}) {
    for (std::size_t at = html.find(attribute); at != std::string::npos;
         at = html.find(attribute, at + 1)) {
      const std::size_t start = at + attribute.size();
      const std::string_view value =
          std::string_view(html).substr(start, html.find('"', start) - start);
      if (has_non_finite_word(value)) {
        throw FuzzProblem("the HTML report has a coordinate that is not finite:" +
                          std::string(attribute) + short_text(value) + "\"");
      }
    }
  }
  constexpr std::string_view kNumberCell = "<td class=\"num";
  for (std::size_t at = html.find(kNumberCell); at != std::string::npos;
       at = html.find(kNumberCell, at + 1)) {
    const std::size_t start = html.find('>', at) + 1;
    const std::string_view cell =
        std::string_view(html).substr(start, html.find('<', start) - start);
    if (has_non_finite_word(cell)) {
      throw FuzzProblem("the HTML report has a number cell that is not finite: " +
                        short_text(cell));
    }
  }
}

// The step a mutant's child process is in, written to memory it shares with the parent, so that
// a crash or a hang names the step it happened in.
class Stage {
 public:
  static constexpr std::size_t kMaxChars = 63;
  explicit Stage(char* shared) : shared_(shared) { *this = "start"; }
  Stage& operator=(std::string_view name) {
    const std::size_t size = std::min(name.size(), kMaxChars);
    std::copy_n(name.data(), size, shared_);
    shared_[size] = '\0';
    return *this;
  }
  std::string name() const { return shared_; }

 private:
  char* shared_;  // kMaxChars + 1 bytes
};

// `result` checked against `baseline` as `bindersim check` and `bindersim check --exact` do, the
// reports printed.
void check_and_print(const io::ResultDocument& result, const io::ResultDocument& baseline,
                     Stage& stage) {
  stage = "check_result";
  const io::CheckReport report = io::check_result(result, baseline, io::default_tolerances());
  require_sound_rows(report);
  stage = "print_check_report";
  std::ostringstream check_text;
  io::print_check_report(report, check_text);
  require_sound_check_text(report, check_text.str());
  stage = "exact_differences";
  const std::vector<io::ExactDifference> differences = io::exact_differences(result, baseline);
  stage = "print_exact_report";
  std::ostringstream exact_text;
  io::print_exact_report(result, baseline, differences, exact_text);
  require_clean_text(exact_text.str(), "\n", "the exact report");
}

void render(const io::ReportData& data, Stage& stage) {
  stage = "write_report_html";
  std::ostringstream html;
  io::write_report_html(data, io::ReportOptions{}, html);
  require_sound_html(html.str());
}

// A result mutant in `file`, its golden in `golden_file`: read as check and report read it,
// then checked, printed and rendered. A ConfigError that escapes means both refused it.
void exercise_result(const fs::path& golden_file, const fs::path& file, Stage& stage) {
  const io::ResultDocument golden = io::read_result_file(golden_file);
  stage = "read_result_file";
  std::optional<io::ResultDocument> mutant;
  std::string read_error;
  try {
    mutant = io::read_result_file(file);
  } catch (const ConfigError& error) {
    read_error = error.what();
  }
  stage = "read_report_files";
  std::optional<io::ReportData> data;
  std::string report_error;
  try {
    data = io::read_report_files({golden_file, file});
  } catch (const ConfigError& error) {
    report_error = error.what();
  }
  if (mutant.has_value() != data.has_value()) {
    throw FuzzProblem(
        mutant ? "read_result_file reads it but read_report_files refuses it: " + report_error
               : "read_report_files reads it but read_result_file refuses it: " + read_error);
  }
  if (!mutant) {
    if (!acceptable_error(report_error, file.string())) {
      throw FuzzProblem("unclear ConfigError from read_report_files: " + report_error);
    }
    throw ConfigError(read_error);
  }
  check_and_print(*mutant, golden, stage);
  check_and_print(golden, *mutant, stage);
  render(*data, stage);
}

// A compare mutant in `file`: read as report reads it with the original, each run's result of
// the mutant checked against the original's first run in both directions, and rendered.
void exercise_compare(const fs::path& original_file, const fs::path& file, Stage& stage) {
  stage = "read_report_files";
  const io::ReportData data = io::read_report_files({original_file, file});
  const io::ResultDocument& original_run = data.policies.front().runs.front();
  for (const io::ReportPolicy& policy : data.policies) {
    if (policy.source != file.string()) continue;
    for (const io::ResultDocument& run : policy.runs) {
      check_and_print(run, original_run, stage);
      check_and_print(original_run, run, stage);
    }
  }
  render(data, stage);
}

// A sweep summary mutant in `file`: read as report reads it with the original, and rendered.
void exercise_sweep(const fs::path& original_file, const fs::path& file, Stage& stage) {
  stage = "read_report_files";
  const io::ReportData data = io::read_report_files({original_file, file});
  render(data, stage);
}

// ---- isolation ------------------------------------------------------------------------------

// run_isolated() with the step `body` is in kept in memory shared with the child process, so that
// the outcome's stage names the step it ended in (a crash or a hang included).
Outcome run_isolated_in_stages(const std::function<void(Stage&)>& body) {
  void* shared = mmap(nullptr, Stage::kMaxChars + 1, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) return {Outcome::Kind::kCrashed, "", "mmap() failed"};
  Stage stage(static_cast<char*>(shared));
  Outcome outcome = run_isolated([&] { body(stage); });
  outcome.stage = stage.name();
  munmap(shared, Stage::kMaxChars + 1);
  return outcome;
}

// ---- the test ---------------------------------------------------------------------------------

// One fuzzed document: `subject` is "tests/golden/x.json" or the compare fixture's path.
class ResultFuzzTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    work_dir_ = fs::temp_directory_path() / ("bindersim-result-fuzz-" + std::to_string(getpid()) +
                                             "-" + fs::path(GetParam()).stem().string());
    fs::create_directories(work_dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(work_dir_, ignored);
  }

  // Checks one mutant in `file` with `body`; failures are recorded with `description`, and the
  // mutant is kept under kFailedMutantsDir for a closer look.
  void check(const fs::path& file, const std::function<void(Stage&)>& body,
             const std::string& description) {
    const Outcome outcome = run_isolated_in_stages(body);
    std::string problem;
    switch (outcome.kind) {
      case Outcome::Kind::kReturned:
        ++read_;
        return;
      case Outcome::Kind::kConfigError:
        ++rejected_;
        if (acceptable_error(outcome.message, file.string())) return;
        problem = "unclear ConfigError (" + outcome.stage + "): " + outcome.message;
        break;
      case Outcome::Kind::kProblem:
        problem = outcome.stage + ": " + outcome.message;
        break;
      case Outcome::Kind::kOtherException:
        problem = "exception other than ConfigError in " + outcome.stage + ": " + outcome.message;
        break;
      case Outcome::Kind::kCrashed:
        problem = "crashed in " + outcome.stage + " (" + outcome.message +
                  "; see stderr for a failed check)";
        break;
      case Outcome::Kind::kHung:
        problem = "hung in " + outcome.stage + " (" + outcome.message + ")";
        break;
    }
    if (++failures_ <= kMaxReportedFailures) {
      constexpr std::size_t kMaxProblemChars = 600;
      std::string shown = escaped_text(problem);
      if (shown.size() > kMaxProblemChars) shown = shown.substr(0, kMaxProblemChars) + "...";
      const fs::path kept = kFailedMutantsDir / (fs::path(GetParam()).stem().string() + "-" +
                                                 std::to_string(failures_) + ".json");
      std::error_code error;
      fs::create_directories(kFailedMutantsDir, error);
      fs::copy_file(file, kept, fs::copy_options::overwrite_existing, error);
      ADD_FAILURE() << GetParam() << " " << description << "\n  " << shown << "\n  mutant kept as "
                    << kept.string();
    }
  }

  void report() const {
    std::printf("%s: %d mutants read, %d refused with a ConfigError, %d failed\n",
                GetParam().c_str(), read_, rejected_, failures_);
    EXPECT_EQ(failures_, 0) << (failures_ > kMaxReportedFailures
                                    ? "only the first failures are shown above"
                                    : "each failure is shown above");
  }

  fs::path work_dir_;
  int read_ = 0;
  int rejected_ = 0;
  int failures_ = 0;
};

TEST_P(ResultFuzzTest, MutantsAreReadCheckedAndReportedOrFailWithOneClearLine) {
  const fs::path subject = kSourceDir / GetParam();
  const Json original = Json::parse(read_text(subject));
  const bool is_compare = original.at("schema") == "bindersim.compare/1";
  const bool is_sweep = original.at("schema") == "bindersim.sweep-summary/1";
  const int mutants = is_compare ? kMutantsPerCompare
                      : is_sweep ? kMutantsPerSweep
                                 : kMutantsPerResult;
  const std::uint64_t seed = fuzz_seed(kFuzzSeed);
  const fs::path file = work_dir_ / ("mutant-" + subject.filename().string());

  for (int index = 0; index < mutants; ++index) {
    engine::Rng rng(seed, stream_of(GetParam()) + static_cast<std::uint64_t>(index));
    Json mutant = original;
    std::string description =
        "seed " + std::to_string(seed) + " mutant " + std::to_string(index) + ":";
    const int mutations = rng.bernoulli(0.7) ? 1 : 2 + static_cast<int>(rng.uniform_below(2));
    for (int m = 0; m < mutations; ++m) {
      std::string log;
      if (rng.bernoulli(0.5)) {
        log = mutate_anywhere(mutant, rng);
      } else if (is_compare) {
        log = mutate_compare_fields(mutant, rng);
      } else if (is_sweep) {
        log = mutate_sweep_fields(mutant, rng);
      } else {
        log = mutate_result_fields(mutant, Pointer(), rng);
      }
      description += " [" + log + "]";
    }
    write_text(file, text_of(mutant));
    if (is_compare) {
      check(
          file, [&](Stage& stage) { return exercise_compare(subject, file, stage); }, description);
    } else if (is_sweep) {
      check(
          file, [&](Stage& stage) { return exercise_sweep(subject, file, stage); }, description);
    } else {
      check(
          file, [&](Stage& stage) { return exercise_result(subject, file, stage); }, description);
    }
  }
  report();
}

std::vector<std::string> subjects() {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(kGoldenDir)) {
    if (entry.path().extension() == ".json") {
      out.push_back("tests/golden/" + entry.path().filename().string());
    }
  }
  std::sort(out.begin(), out.end());
  out.push_back(fs::relative(kCompareFile, kSourceDir).string());
  out.push_back(fs::relative(kSweepSummaryFile, kSourceDir).string());
  return out;
}

INSTANTIATE_TEST_SUITE_P(Written, ResultFuzzTest, ::testing::ValuesIn(subjects()), test_name);

// ---- known bugs -------------------------------------------------------------------------------
// Each test below reproduces a bug the fuzzing found, with the smallest edit of a golden result
// or of the compare fixture. They fail today: enable each with its fix, and give the fuzzing back
// the values it leaves out for it.

Json golden_json() { return Json::parse(read_text(kGoldenDir / "schd-dbg-ctabs.json")); }
Json compare_json() { return Json::parse(read_text(kCompareFile)); }

JsonDocument document_of(const Json& value, const std::string& name) {
  return JsonDocument::parse_text(value.dump(1), name);
}

// The ConfigError read_report_documents() gives for `value` named "compare.json", or "".
std::string report_error_of(const Json& value) {
  try {
    io::read_report_documents({document_of(value, "compare.json")});
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "";
}

// What require_sound_html() finds in the report of `value`, or "".
std::string html_problem_of(const Json& value) {
  std::ostringstream html;
  io::write_report_html(io::read_report_documents({document_of(value, "compare.json")}),
                        io::ReportOptions{}, html);
  try {
    require_sound_html(html.str());
  } catch (const FuzzProblem& problem) {
    return problem.what();
  }
  return "";
}

// "read", "ConfigError", or the text of another exception `body` throws.
std::string outcome_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const ConfigError&) {
    return "ConfigError";
  } catch (const std::exception& error) {
    return error.what();
  }
  return "read";
}

// check.hpp: Δ is +inf only "when the baseline is 0 and the result is not". A per_second of
// 5e-324 is not 0, but 3279.762 / 5e-324 overflows: the row says "from 0" (bindersim check
// RESULT --baseline B, with B's transactions.per_second set to 5e-324).
TEST(ResultFuzzFoundBugs, DeltaFromATinyBaselineIsFinite) {
  Json baseline = golden_json();
  baseline["transactions"]["per_second"] = 5e-324;
  const io::CheckReport report = io::check_result(
      io::read_result(document_of(golden_json(), "result.json")),
      io::read_result(document_of(baseline, "baseline.json")), io::default_tolerances());
  const io::CheckRow* row = report.find("transactions.per_second");
  ASSERT_NE(row, nullptr);
  EXPECT_TRUE(std::isfinite(row->delta)) << "Δ " << row->delta << " from " << row->baseline;
}

// report.hpp: errors are one line "<file>: <pointer>: expected X, got Y". A run's selector is
// held to its column's, whose selector the message quotes as it is, a line break included; a
// summary cell's label is held to its column's, whose label the message quotes whole, however
// long (bindersim report prints the line break escaped, and the label in full).
TEST(ResultFuzzFoundBugs, CompareErrorsQuoteColumnsOnOneShortLine) {
  Json line_break = compare_json();
  line_break["columns"][1]["selector"] = "fi\nfo";
  const std::string selector_error = report_error_of(line_break);
  EXPECT_TRUE(acceptable_error(selector_error, "compare.json")) << escaped_text(selector_error);
  Json long_label = compare_json();
  long_label["columns"][1]["label"] = std::string(5'000, 'c');
  const std::string label_error = report_error_of(long_label);
  EXPECT_TRUE(acceptable_error(label_error, "compare.json"))
      << label_error.size() << " characters: " << short_text(label_error);
}

// report.hpp: pooled_share() is the tier's share of the class's calls. The counts are summed in
// 64 bits: 2^64 - 1 calls in one tier and 361 in the other two sum to 360, and the tier-share
// chart shows 5124095576030431232.0%.
TEST(ResultFuzzFoundBugs, PooledShareOfCountsNear2To64IsAFraction) {
  Json result = golden_json();
  result["tiers"]["sched_other"]["same_core"]["count"] = std::numeric_limits<std::uint64_t>::max();
  const io::ReportData data = io::read_report_documents({document_of(result, "result.json")});
  for (const stats::Tier tier :
       {stats::Tier::kSameCore, stats::Tier::kSameCluster, stats::Tier::kCrossCluster}) {
    const std::optional<double> share =
        io::pooled_share(data.policies.front(), stats::SchedClass::kOther, tier);
    if (share) {
      EXPECT_LE(*share, 1.0) << stats::tier_name(tier);
    }
  }
}

// The compare table rounds delta_pct * 10, and the policy table sums per_second over the seeds:
// both overflow for values near the largest double, which the reader accepts as finite, and the
// page prints "+inf%" and "inf" calls/s.
TEST(ResultFuzzFoundBugs, ReportNumbersNearTheLargestDoubleAreFinite) {
  Json delta = compare_json();
  delta["summary"]["throughput"]["columns"][1]["delta_pct"] = 1e308;
  EXPECT_EQ(html_problem_of(delta), "");
  Json throughput = compare_json();
  for (Json& run : throughput["runs"]) {
    if (run["column"] == 0) {
      run["result"]["transactions"]["per_second"] = std::numeric_limits<double>::max();
    }
  }
  EXPECT_EQ(html_problem_of(throughput), "");
}

// json_reader.hpp: JsonDocument::from_value() wraps a value built in memory, whose strings need
// not be UTF-8 (files cannot hold them: the parser refuses them). read_result() dumps
// selector_params, and exact_differences() the values that differ, without an error handler:
// both throw nlohmann::json::type_error 316 instead of reading or failing with a ConfigError.
TEST(ResultFuzzFoundBugs, DocumentsBuiltInMemoryWithBytesThatAreNotUtf8) {
  Json params = golden_json();
  params["selector_params"] = {{"k", "v\xff"}};
  const std::string read =
      outcome_of([&] { io::read_result(JsonDocument::from_value(params, "params.json")); });
  EXPECT_TRUE(read == "read" || read == "ConfigError") << read;
  Json name = golden_json();
  name["scenario"] = "schd-dbg\xff";
  const std::string exact = outcome_of([&] {
    io::exact_differences(io::read_result(JsonDocument::from_value(name, "name.json")),
                          io::read_result(JsonDocument::from_value(golden_json(), "golden.json")));
  });
  EXPECT_TRUE(exact == "read" || exact == "ConfigError") << exact;
}

}  // namespace
}  // namespace bindersim
