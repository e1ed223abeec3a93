#include "bindersim/io/report.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "bindersim/common/error.hpp"
#include "bindersim/io/compare_report.hpp"
#include "bindersim/io/result_json.hpp"
#include "bindersim/sweep/merge.hpp"
#include "bindersim/sweep/run_record.hpp"
#include "sweep_run_spec.hpp"

namespace bindersim::io {
namespace {

using stats::SchedClass;
using stats::Tier;

// ---- inputs ---------------------------------------------------------------------------------

// Calls per tier of one class: same core, same cluster, cross cluster.
struct TierCalls {
  std::uint64_t same_core = 0;
  std::uint64_t same_cluster = 0;
  std::uint64_t cross_cluster = 0;
};

// A run whose tiers hold `calls` samples at `base_ns` (same core), 2x (same cluster) and 3x
// (cross cluster), with a tail of one sample at 5x in each tier with calls; each tier's
// breakdown puts `kernel_per_call_ns` per call in the kernel, the rest in service, and a
// negative `other` of -100 ns per call.
stats::RunResult make_run(const std::string& selector, std::uint64_t seed, std::int64_t base_ns,
                          TierCalls fifo, TierCalls other, std::int64_t kernel_per_call_ns) {
  stats::RunResult r;
  r.scenario = "schd-dbg";
  r.topology = "sa8155p";
  r.selector = selector;
  r.placement = "mainline";
  r.seed = seed;
  r.version = "0.1.0";
  r.fingerprint = 0x0123456789abcdefULL + seed;
  r.simulated_ns = 1'000'000;
  for (const auto& [cls, calls] :
       {std::pair{SchedClass::kFifo, fifo}, std::pair{SchedClass::kOther, other}}) {
    const std::array<std::uint64_t, 3> counts = {calls.same_core, calls.same_cluster,
                                                 calls.cross_cluster};
    for (std::size_t t = 0; t < 3; ++t) {
      if (counts[t] == 0) continue;
      const auto tier = static_cast<Tier>(t);
      const std::int64_t value = base_ns * static_cast<std::int64_t>(t + 1);
      r.tier(cls, tier).record_n(value, counts[t] - 1);
      r.tier(cls, tier).record(value * 5);
      r.latency.merge(r.tier(cls, tier));
      r.completed += counts[t];
      const auto n = static_cast<std::int64_t>(counts[t]);
      const std::int64_t total = static_cast<std::int64_t>(r.tier(cls, tier).sum());
      stats::BreakdownSums& b = r.tier_breakdown(cls, tier);
      b.kernel_ns = kernel_per_call_ns * n;
      b.other_ns = -100 * n;
      b.service_ns = total - b.kernel_ns - b.other_ns;
    }
  }
  r.selection.same_cpu = r.completed / 2;
  r.selection.same_cluster = r.completed / 4;
  r.selection.other = r.completed - r.completed / 2 - r.completed / 4;
  r.counters.migrations = r.completed;
  r.counters.context_switches = 3 * r.completed;
  return r;
}

stats::RunResult default_run(const std::string& selector, std::uint64_t seed = 1) {
  return make_run(selector, seed, 50'000, {6, 3, 1}, {2, 2, 4}, 20'000);
}

JsonDocument document_of(const nlohmann::ordered_json& json, const std::string& name) {
  return JsonDocument::parse_text(json.dump(2), name);
}

JsonDocument result_document(const stats::RunResult& run, const std::string& name) {
  return document_of(result_to_json(run), name);
}

stats::ColumnStats cell(double mean, std::optional<double> delta, std::optional<bool> significant) {
  stats::ColumnStats s;
  s.n = 2;
  s.mean = mean;
  s.ci95 = mean / 10.0;
  s.delta_pct = delta;
  s.significant = significant;
  return s;
}

// Three columns (fifo, ctabs, ctabs-nudge) over seeds 1 and 2; ctabs is faster at the second
// seed. The summary has throughput and latency p99, ctabs' p99 significantly better.
CompareReport three_column_report() {
  CompareReport report;
  report.scenario = "schd-dbg";
  report.seeds = {1, 2};
  for (const char* selector : {"fifo", "ctabs", "ctabs-nudge"}) {
    CompareColumn column;
    column.label = selector;
    column.selector = selector;
    column.placement = "mainline";
    column.topology = "sa8155p";
    column.overrides = {{"clients.0.iterations", 200}};
    report.columns.push_back(column);
  }
  for (std::size_t c = 0; c < report.columns.size(); ++c) {
    for (std::uint64_t seed : report.seeds) {
      const std::int64_t base = c == 1 && seed == 2 ? 30'000 : 50'000;
      report.runs.push_back(
          CompareRun{c, seed,
                     result_to_json(make_run(report.columns[c].selector, seed, base, {6, 3, 1},
                                             {2, 2, 4}, 20'000))});
    }
  }
  const auto metric = [](std::string key, std::string unit, stats::Better better) {
    return stats::Metric{std::move(key), "", std::move(unit), better, nullptr};
  };
  report.summary.push_back(
      {metric("throughput", "calls/s", stats::Better::kHigher),
       {cell(5000, std::nullopt, std::nullopt), cell(5100, 2.0, false), cell(4000, -20.0, true)}});
  report.summary.push_back(
      {metric("latency.p99", "us", stats::Better::kLower),
       {cell(100, std::nullopt, std::nullopt), cell(80, -20.0, true), cell(101, 1.0, false)}});
  return report;
}

JsonDocument compare_document(const CompareReport& report, const std::string& name) {
  return document_of(compare_to_json(report), name);
}

std::string html_of(const ReportData& data, const ReportOptions& options = {}) {
  std::ostringstream out;
  write_report_html(data, options, out);
  return out.str();
}

// The <svg> element with the given id.
std::string svg_of(const std::string& html, const std::string& id) {
  const std::size_t start = html.find("<svg id=\"" + id + "\"");
  if (start == std::string::npos) return "";
  return html.substr(start, html.find("</svg>", start) + 6 - start);
}

// The value of attribute `name` in every element of `svg` whose class attribute contains
// `cls`, in document order.
std::vector<std::map<std::string, std::string>> elements(const std::string& svg,
                                                         const std::string& tag,
                                                         const std::string& cls) {
  std::vector<std::map<std::string, std::string>> out;
  const std::regex element("<" + tag + R"(( [^>]*?)/?>)");
  const std::regex attribute(R"re(([a-z-]+)="([^"]*)")re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), element);
       it != std::sregex_iterator(); ++it) {
    std::map<std::string, std::string> attrs;
    const std::string text = (*it)[1];
    for (auto a = std::sregex_iterator(text.begin(), text.end(), attribute);
         a != std::sregex_iterator(); ++a) {
      attrs[(*a)[1]] = (*a)[2];
    }
    if (attrs["class"].find(cls) != std::string::npos) out.push_back(std::move(attrs));
  }
  return out;
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

// The message of the ConfigError that reading `documents` throws ("" when none is thrown).
std::string read_error(const std::vector<JsonDocument>& documents) {
  try {
    read_report_documents(documents);
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "";
}

// ---- reading --------------------------------------------------------------------------------

TEST(ReportRead, ResultsAndCompareFilesInAnyMix) {
  // A result adds one policy; a compare file one per column, each with its runs (seeds), and
  // its summary table. Order follows the inputs.
  const ReportData data =
      read_report_documents({result_document(default_run("ctabs-nudge"), "nudge.json"),
                             compare_document(three_column_report(), "cmp.json")});
  ASSERT_EQ(data.policies.size(), 4u);
  EXPECT_EQ(data.policies[0].source, "nudge.json");
  EXPECT_EQ(data.policies[0].runs.size(), 1u);
  EXPECT_EQ(data.policies[1].label, "fifo");
  EXPECT_EQ(data.policies[2].label, "ctabs");
  for (std::size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(data.policies[i].source, "cmp.json");
    ASSERT_EQ(data.policies[i].runs.size(), 2u);
    EXPECT_EQ(data.policies[i].runs[0].seed, 1u);
    EXPECT_EQ(data.policies[i].runs[1].seed, 2u);
    EXPECT_EQ(data.policies[i].placement, "mainline");
    EXPECT_EQ(data.policies[i].overrides, "clients.0.iterations=200");
  }
  ASSERT_EQ(data.compares.size(), 1u);
  EXPECT_EQ(data.compares[0].columns, (std::vector<std::string>{"fifo", "ctabs", "ctabs-nudge"}));
  EXPECT_EQ(data.compares[0].seeds, (std::vector<std::uint64_t>{1, 2}));
}

// A result whose selector had parameters is labelled with them, apart from its defaults' run.
TEST(ReportRead, ParametersArePartOfAResultsLabel) {
  stats::RunResult unchecked = default_run("ctabs-nudge");
  unchecked.selector_params = R"({"check_caller_idle":false})";
  const ReportData data =
      read_report_documents({result_document(default_run("ctabs-nudge"), "patched.json"),
                             result_document(unchecked, "unchecked.json")});
  ASSERT_EQ(data.policies.size(), 2u);
  EXPECT_EQ(data.policies[0].label, "ctabs-nudge");
  EXPECT_EQ(data.policies[1].label, R"(ctabs-nudge {"check_caller_idle":false})");
  EXPECT_EQ(data.policies[1].selector, "ctabs-nudge");
}

// A result's overrides are shown beside its file, as a compare column's are.
TEST(ReportRead, AResultsOverridesAreShownWithIt) {
  stats::RunResult spinlock = default_run("fifo");
  spinlock.overrides = R"([["clients.*.iterations",1000],["kernel.alloc_lock","spinlock"]])";
  const ReportData data = read_report_documents(
      {result_document(default_run("fifo"), "plain.json"), result_document(spinlock, "spin.json")});
  ASSERT_EQ(data.policies.size(), 2u);
  EXPECT_EQ(data.policies[0].overrides, "");
  EXPECT_EQ(data.policies[1].overrides, "clients.*.iterations=1000, kernel.alloc_lock=spinlock");
  EXPECT_NE(html_of(data).find("clients.*.iterations=1000, kernel.alloc_lock=spinlock"),
            std::string::npos);
}

// A compare table names the override path its columns vary, as the console table does; none
// when every column shares its overrides.
TEST(ReportRead, CompareTablesNameTheVariedPath) {
  const ReportData plain =
      read_report_documents({compare_document(three_column_report(), "cmp.json")});
  ASSERT_EQ(plain.compares.size(), 1u);
  EXPECT_EQ(plain.compares[0].varies, "");
  EXPECT_EQ(html_of(plain).find(" · varies "), std::string::npos);

  CompareReport varied = three_column_report();
  varied.columns[2].overrides.emplace_back("kernel.alloc_lock", "spinlock");
  const ReportData data = read_report_documents({compare_document(varied, "cmp.json")});
  EXPECT_EQ(data.compares.at(0).varies, "kernel.alloc_lock");
  EXPECT_NE(html_of(data).find("3 column(s) · varies kernel.alloc_lock</p>"), std::string::npos);
}

TEST(ReportRead, RepeatedLabelsAreMadeUnique) {
  // ctabs-nudge comes from a result file and from the compare file: both get their file name.
  // Two inputs of the same name are numbered.
  const ReportData data =
      read_report_documents({result_document(default_run("ctabs-nudge"), "runs/nudge.json"),
                             compare_document(three_column_report(), "cmp.json"),
                             result_document(default_run("fifo", 7), "a/x.json"),
                             result_document(default_run("fifo", 8), "b/x.json")});
  std::vector<std::string> labels;
  for (const ReportPolicy& p : data.policies) labels.push_back(p.label);
  EXPECT_EQ(labels, (std::vector<std::string>{"ctabs-nudge (nudge.json)", "fifo (cmp.json)",
                                              "ctabs", "ctabs-nudge (cmp.json)", "fifo (x.json)",
                                              "fifo (x.json) #2"}));
}

TEST(ReportRead, SummaryRowsKeepTheCompareOrderAndConsoleLabels) {
  // The parsed summary is ordered by key ("latency.p99" < "throughput"); the report restores
  // the compare report's order and takes the console's row labels.
  const ReportData data =
      read_report_documents({compare_document(three_column_report(), "cmp.json")});
  const auto& rows = data.compares.at(0).rows;
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].key, "throughput");
  EXPECT_EQ(rows[1].key, "latency.p99");
  EXPECT_EQ(rows[1].label, "latency p99");
  EXPECT_EQ(rows[1].better, stats::Better::kLower);
  ASSERT_EQ(rows[1].cells.size(), 3u);
  EXPECT_FALSE(rows[1].cells[0].delta_pct.has_value());
  EXPECT_EQ(rows[1].cells[1].significant, std::optional<bool>(true));
}

TEST(ReportRead, UnknownSchemaNamesTheKnownOnes) {
  nlohmann::ordered_json j = result_to_json(default_run("fifo"));
  j["schema"] = "bindersim.result/2";
  const std::string error = read_error({document_of(j, "r.json")});
  EXPECT_EQ(error,
            "r.json: /schema: expected \"bindersim.result/1\", \"bindersim.compare/1\" or "
            "\"bindersim.sweep-summary/1\", got \"bindersim.result/2\"");
}

TEST(ReportRead, ResultErrorsNameFilePointerExpectedAndFound) {
  nlohmann::ordered_json j = result_to_json(default_run("fifo"));
  j["tiers"]["sched_other"]["cross_cluster"]["p90_ns"] = "fast";
  const std::string error = read_error({document_of(j, "r.json")});
  EXPECT_EQ(error.rfind("r.json: /tiers/sched_other/cross_cluster/p90_ns: expected ", 0), 0u)
      << error;
  EXPECT_NE(error.find("got \"fast\""), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

TEST(ReportRead, ErrorsInsideACompareRunNameTheFullPointer) {
  // A bad field of the third run's result is reported at /runs/2/result/..., in the compare
  // file; a result missing its schema at /runs/0/result.
  nlohmann::ordered_json j = compare_to_json(three_column_report());
  j["runs"][2]["result"]["latency"]["count"] = -4;
  std::string error = read_error({document_of(j, "cmp.json")});
  EXPECT_EQ(error.rfind("cmp.json: /runs/2/result/latency/count: expected a non-negative "
                        "integer, got ",
                        0),
            0u)
      << error;

  j = compare_to_json(three_column_report());
  j["runs"][0]["result"].erase("schema");
  error = read_error({document_of(j, "cmp.json")});
  EXPECT_EQ(error, "cmp.json: /runs/0/result: missing required key \"schema\"");

  j = compare_to_json(three_column_report());
  j["runs"][1]["result"]["tiers"]["sched_fifo"]["nosuch"] = 1;
  error = read_error({document_of(j, "cmp.json")});
  EXPECT_EQ(error.rfind("cmp.json: /runs/1/result/tiers/sched_fifo/nosuch: unknown key", 0), 0u)
      << error;
}

TEST(ReportRead, CompareStructureIsChecked) {
  // Each broken compare document fails at the pointer of what is wrong.
  const auto error_at = [](const std::function<void(nlohmann::ordered_json&)>& change) {
    nlohmann::ordered_json j = compare_to_json(three_column_report());
    change(j);
    return read_error({document_of(j, "cmp.json")});
  };
  EXPECT_EQ(error_at([](auto& j) { j["runs"][1]["column"] = 3; }),
            "cmp.json: /runs/1/column: expected a column index below 3, got 3");
  EXPECT_EQ(error_at([](auto& j) {
              auto& runs = j["runs"];
              runs.erase(runs.begin() + 4, runs.end());
            }),
            "cmp.json: /columns/2: expected at least one run of this column in /runs, got none");
  EXPECT_EQ(error_at([](auto& j) {
              j["runs"][0]["seed"] = 9;
            }).rfind("cmp.json: /runs/0/seed: expected one of the document's seeds", 0),
            0u);
  EXPECT_EQ(error_at([](auto& j) {
              j["runs"][0]["result"]["seed"] = 2;
            }).rfind("cmp.json: /runs/0/result/seed: expected the run's seed 1", 0),
            0u);
  EXPECT_EQ(error_at([](auto& j) { j["summary"]["throughput"]["columns"].erase(0); }),
            "cmp.json: /summary/throughput/columns: expected 3 cells (one per column), got 2");
  EXPECT_EQ(error_at([](auto& j) {
              j["summary"]["latency.p99"]["better"] = "up";
            }).rfind("cmp.json: /summary/latency.p99/better: expected one of ", 0),
            0u);
  EXPECT_EQ(error_at([](auto& j) { j["summary"]["throughput"]["columns"][1]["mean"] = "x"; }),
            "cmp.json: /summary/throughput/columns/1/mean: expected a number or null, got "
            "\"x\"");
  EXPECT_EQ(error_at([](auto& j) { j["extra"] = true; }).rfind("cmp.json: /extra: unknown key", 0),
            0u);
  EXPECT_EQ(error_at([](auto& j) { j["columns"] = nlohmann::ordered_json::array(); }),
            "cmp.json: /columns: expected at least one column, got none");
}

TEST(ReportRead, CompareContractIsChecked) {
  // What compare-format.md promises: every (column, seed) run once, unique non-empty labels,
  // distinct seeds, the runs of the document's scenario, non-negative half-widths and only the
  // metrics of compare's table.
  const auto error_at = [](const std::function<void(nlohmann::ordered_json&)>& change) {
    nlohmann::ordered_json j = compare_to_json(three_column_report());
    change(j);
    return read_error({document_of(j, "cmp.json")});
  };
  EXPECT_EQ(error_at([](auto& j) { j["runs"][1] = j["runs"][0]; }),
            "cmp.json: /runs/1: expected each (column, seed) once, got column 0 seed 1 again "
            "(first at /runs/0)");
  EXPECT_EQ(error_at([](auto& j) { j["runs"].erase(3); }),
            "cmp.json: /columns/1: expected a run of this column for each seed in /seeds, got "
            "none for seed 2");
  EXPECT_EQ(error_at([](auto& j) { j["columns"][2]["label"] = "fifo"; }),
            "cmp.json: /columns/2/label: expected a label unique among the columns (/columns/0 "
            "has it too), got \"fifo\"");
  EXPECT_EQ(error_at([](auto& j) { j["columns"][1]["label"] = ""; }),
            "cmp.json: /columns/1/label: expected a non-empty name, got \"\"");
  EXPECT_EQ(error_at([](auto& j) { j["columns"][1]["label"] = "a\nb"; }),
            "cmp.json: /columns/1/label: expected a name without control characters, got "
            "\"a\\nb\"");
  EXPECT_EQ(error_at([](auto& j) { j["seeds"][1] = 1; }),
            "cmp.json: /seeds/1: expected each seed once, got 1");
  EXPECT_EQ(error_at([](auto& j) { j["runs"][4]["result"]["scenario"] = "other"; }),
            "cmp.json: /runs/4/result/scenario: expected \"schd-dbg\" (the document's "
            "/scenario), got \"other\"");
  EXPECT_EQ(error_at([](auto& j) { j["summary"]["latency.p99"]["columns"][2]["ci95"] = -0.5; }),
            "cmp.json: /summary/latency.p99/columns/2/ci95: expected a non-negative number or "
            "null, got -0.5");
  const std::string unknown =
      error_at([](auto& j) { j["summary"]["latency.p98"] = j["summary"]["latency.p99"]; });
  EXPECT_EQ(unknown.rfind("cmp.json: /summary/latency.p98: unknown metric (did you mean "
                          "\"latency.p99\"?); valid metrics: throughput, latency.mean, ",
                          0),
            0u)
      << unknown;
}

TEST(ReportRead, ColumnsThatVaryTheScenarioNameCarryIt) {
  // compare --vary name=a,b: each column's runs carry the name its overrides set.
  CompareReport report = three_column_report();
  for (std::size_t c = 0; c < report.columns.size(); ++c) {
    const std::string name = "variant-" + std::to_string(c);
    report.columns[c].overrides.emplace_back("name", name);
    for (CompareRun& run : report.runs) {
      if (run.column == c) run.result["scenario"] = name;
    }
  }
  const ReportData data = read_report_documents({compare_document(report, "cmp.json")});
  ASSERT_EQ(data.policies.size(), 3u);
  EXPECT_EQ(data.policies[2].scenario, "variant-2");

  report.runs[0].result["scenario"] = "schd-dbg";
  EXPECT_EQ(read_error({compare_document(report, "cmp.json")}),
            "cmp.json: /runs/0/result/scenario: expected \"variant-0\" (the \"name\" of column "
            "0's overrides), got \"schd-dbg\"");
}

TEST(ReportRead, NotAnObjectOrNoSchema) {
  EXPECT_EQ(read_error({JsonDocument::parse_text("[1, 2]", "a.json")}),
            "a.json: /: expected an object (a result, compare or sweep summary document), got an "
            "array");
  EXPECT_EQ(read_error({JsonDocument::parse_text("{}", "b.json")}),
            "b.json: /: missing required key \"schema\"");
}

TEST(ReportRead, MissingFileIsAConfigError) {
  try {
    read_report_files({"/nonexistent/dir/result.json"});
    FAIL() << "no error";
  } catch (const ConfigError& error) {
    EXPECT_NE(std::string(error.what()).find("/nonexistent/dir/result.json"), std::string::npos);
  }
}

TEST(ReportRead, RealGoldenResults) {
  // The golden results of the three selectors read as three policies named by selector.
  std::vector<std::filesystem::path> paths;
  for (const char* selector : {"fifo", "ctabs", "ctabs-nudge"}) {
    paths.push_back(std::filesystem::path(BINDERSIM_SOURCE_DIR) / "tests/golden" /
                    ("schd-dbg-" + std::string(selector) + ".json"));
  }
  const ReportData data = read_report_files(paths);
  ASSERT_EQ(data.policies.size(), 3u);
  EXPECT_EQ(data.policies[0].label, "fifo");
  EXPECT_EQ(data.policies[2].label, "ctabs-nudge");
  const std::string html = html_of(data);
  for (const char* selector : {"fifo", "ctabs", "ctabs-nudge"}) {
    EXPECT_NE(svg_of(html, "chart-tier-shares").find(std::string(">") + selector + "</text>"),
              std::string::npos)
        << selector;
  }
}

// ---- figures --------------------------------------------------------------------------------

TEST(ReportFigures, TierCdfIsMonotonicThroughTheCarriedQuantiles) {
  // The curve goes through p50, p90, p99 and max at fractions 0.5, 0.9, 0.99, 1, each the
  // mean of the runs' values; both coordinates never decrease.
  const ReportData data =
      read_report_documents({compare_document(three_column_report(), "cmp.json")});
  const ReportPolicy& ctabs = data.policies[1];  // seeds at 50 us and 30 us
  for (SchedClass c : {SchedClass::kFifo, SchedClass::kOther}) {
    for (Tier t : {Tier::kSameCore, Tier::kSameCluster, Tier::kCrossCluster}) {
      const std::vector<CdfPoint> cdf = tier_cdf(ctabs, c, t);
      ASSERT_EQ(cdf.size(), 4u);
      EXPECT_DOUBLE_EQ(cdf[0].fraction, 0.5);
      EXPECT_DOUBLE_EQ(cdf[3].fraction, 1.0);
      const TierFields& a = ctabs.runs[0].tier(c, t);
      const TierFields& b = ctabs.runs[1].tier(c, t);
      EXPECT_DOUBLE_EQ(cdf[0].latency_ns,
                       (static_cast<double>(a.p50_ns) + static_cast<double>(b.p50_ns)) / 2.0);
      EXPECT_DOUBLE_EQ(cdf[3].latency_ns,
                       (static_cast<double>(a.max_ns) + static_cast<double>(b.max_ns)) / 2.0);
      for (std::size_t i = 1; i < cdf.size(); ++i) {
        EXPECT_GT(cdf[i].fraction, cdf[i - 1].fraction);
        EXPECT_GE(cdf[i].latency_ns, cdf[i - 1].latency_ns);
      }
    }
  }
}

TEST(ReportFigures, LatencyCdfStartsAtTheMinimum) {
  const ReportData data = read_report_documents({result_document(default_run("fifo"), "r.json")});
  const std::vector<CdfPoint> cdf = latency_cdf(data.policies[0]);
  ASSERT_EQ(cdf.size(), 5u);
  EXPECT_DOUBLE_EQ(cdf[0].fraction, 0.0);
  EXPECT_DOUBLE_EQ(cdf[0].latency_ns, 50'000.0);
  EXPECT_DOUBLE_EQ(cdf[4].latency_ns, static_cast<double>(data.policies[0].runs[0].latency.max_ns));
  for (std::size_t i = 1; i < cdf.size(); ++i) EXPECT_GE(cdf[i].latency_ns, cdf[i - 1].latency_ns);
}

TEST(ReportFigures, TiersWithoutCallsHaveNoCurveNoShareNoBreakdown) {
  const ReportData data = read_report_documents(
      {result_document(make_run("fifo", 1, 50'000, {0, 4, 0}, {0, 0, 0}, 1000), "r.json")});
  const ReportPolicy& p = data.policies[0];
  EXPECT_TRUE(tier_cdf(p, SchedClass::kFifo, Tier::kSameCore).empty());
  EXPECT_EQ(tier_cdf(p, SchedClass::kFifo, Tier::kSameCluster).size(), 4u);
  EXPECT_FALSE(pooled_share(p, SchedClass::kOther, Tier::kSameCore).has_value());
  EXPECT_DOUBLE_EQ(pooled_share(p, SchedClass::kFifo, Tier::kSameCluster).value(), 1.0);
  EXPECT_FALSE(tier_breakdown(p, SchedClass::kFifo, Tier::kCrossCluster).has_value());
}

TEST(ReportFigures, SharesPoolTheCallsOfEverySeed) {
  // Seed 1: 6 of 10 FIFO calls on the same core; seed 2: 1 of 5. Pooled: 7 of 15, not the
  // mean of 60% and 20%. The three shares add up to one.
  CompareReport report = three_column_report();
  report.runs[0].result = result_to_json(make_run("fifo", 1, 50'000, {6, 3, 1}, {1, 0, 0}, 0));
  report.runs[1].result = result_to_json(make_run("fifo", 2, 50'000, {1, 2, 2}, {1, 0, 0}, 0));
  const ReportData data = read_report_documents({compare_document(report, "cmp.json")});
  const ReportPolicy& fifo = data.policies[0];
  EXPECT_DOUBLE_EQ(pooled_share(fifo, SchedClass::kFifo, Tier::kSameCore).value(), 7.0 / 15.0);
  EXPECT_EQ(tier_count(fifo, SchedClass::kFifo, Tier::kCrossCluster), 3u);
  double sum = 0.0;
  for (Tier t : {Tier::kSameCore, Tier::kSameCluster, Tier::kCrossCluster}) {
    sum += pooled_share(fifo, SchedClass::kFifo, t).value();
  }
  EXPECT_NEAR(sum, 1.0, 1e-12);
}

TEST(ReportFigures, BreakdownIsWeightedByEachSeedsCalls) {
  // Seed 1: 10 same-core calls with 1 us of kernel each; seed 2: 5 with 4 us. The mean per
  // call over both is (10 * 1 + 5 * 4) / 15 = 2 us; other stays -100 ns.
  CompareReport report = three_column_report();
  report.runs[0].result = result_to_json(make_run("fifo", 1, 50'000, {10, 0, 0}, {}, 1'000));
  report.runs[1].result = result_to_json(make_run("fifo", 2, 50'000, {5, 0, 0}, {}, 4'000));
  const ReportData data = read_report_documents({compare_document(report, "cmp.json")});
  const auto parts = tier_breakdown(data.policies[0], SchedClass::kFifo, Tier::kSameCore);
  ASSERT_TRUE(parts.has_value());
  EXPECT_DOUBLE_EQ((*parts)[0], 2'000.0);   // kernel_ns
  EXPECT_DOUBLE_EQ(parts->back(), -100.0);  // other_ns
}

TEST(ReportFigures, SelectionSharesAddUpToOne) {
  const ReportData data = read_report_documents({result_document(default_run("fifo"), "r.json")});
  const auto shares = selection_shares(data.policies[0]);
  ASSERT_TRUE(shares.has_value());
  EXPECT_NEAR((*shares)[0] + (*shares)[1] + (*shares)[2] + (*shares)[3], 1.0, 1e-12);
  EXPECT_DOUBLE_EQ((*shares)[0], 9.0 / 18.0);  // 18 calls, same_cpu = 18 / 2
}

// The result `j` with a scheduler object: governor schedutil, clusters "silver" and "gold" at
// the given mean frequencies, and the given per-CPU busy shares.
nlohmann::ordered_json with_scheduler(nlohmann::ordered_json j, std::vector<double> busy,
                                      std::uint64_t silver_khz = 1'000'000,
                                      std::uint64_t gold_khz = 2'000'000) {
  nlohmann::ordered_json scheduler = nlohmann::ordered_json::object();
  scheduler["governor"] = "schedutil";
  scheduler["clusters"] =
      nlohmann::ordered_json::array({{{"name", "silver"}, {"mean_freq_khz", silver_khz}},
                                     {{"name", "gold"}, {"mean_freq_khz", gold_khz}}});
  scheduler["cpu_busy_share"] = busy;
  scheduler["frequency_changes"] = 0;
  scheduler["newidle_pulls"] = 0;
  scheduler["balance_pulls"] = 0;
  scheduler["misfit_migrations"] = 0;
  // Before provenance, where the writer puts it.
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "scheduler") continue;
    if (it.key() == "provenance") out["scheduler"] = scheduler;
    out[it.key()] = it.value();
  }
  return out;
}

nlohmann::ordered_json without_scheduler(nlohmann::ordered_json j) {
  j.erase("scheduler");
  return j;
}

TEST(ReportCpus, BusySharesAndFrequenciesAreAveragedOverSeeds) {
  // fifo's two seeds: CPU 0 busy 20% then 40%, CPU 1 40% then 0%: means 30% and 20%; silver
  // at 1.0 and 1.5 GHz: 1.25 GHz.
  CompareReport report = three_column_report();
  report.runs[0].result = with_scheduler(report.runs[0].result, {0.2, 0.4}, 1'000'000);
  report.runs[1].result = with_scheduler(report.runs[1].result, {0.4, 0.0}, 1'500'000);
  const ReportData data = read_report_documents({compare_document(report, "cmp.json")});
  const auto shares = cpu_busy_shares(data.policies[0]);
  ASSERT_TRUE(shares.has_value());
  ASSERT_EQ(shares->size(), 2u);
  EXPECT_NEAR((*shares)[0], 0.3, 1e-12);
  EXPECT_NEAR((*shares)[1], 0.2, 1e-12);
  const auto frequencies = cluster_frequencies(data.policies[0]);
  ASSERT_EQ(frequencies.size(), 2u);
  EXPECT_EQ(frequencies[0].first, "silver");
  EXPECT_DOUBLE_EQ(frequencies[0].second, 1'250'000.0);
  EXPECT_DOUBLE_EQ(frequencies[1].second, 2'000'000.0);
}

TEST(ReportCpus, WithoutSchedulerDataThePageSaysItIsMissing) {
  // No input carries per-CPU data: no CPU chart, and a note naming the missing field.
  const ReportData data = read_report_documents(
      {document_of(without_scheduler(result_to_json(default_run("fifo"))), "r.json")});
  EXPECT_FALSE(cpu_busy_shares(data.policies[0]).has_value());
  EXPECT_TRUE(cluster_frequencies(data.policies[0]).empty());
  const std::string html = html_of(data);
  EXPECT_TRUE(svg_of(html, "chart-cpu-utilization").empty());
  EXPECT_NE(html.find("<p class=\"missing\">Per-CPU utilization is not shown"), std::string::npos);
  EXPECT_NE(html.find("scheduler.cpu_busy_share"), std::string::npos);
  EXPECT_EQ(html.find("id=\"table-clusters\""), std::string::npos);
}

TEST(ReportCpus, ChartBarsAreProportionalToBusyShares) {
  // One policy with CPU 0 at 50% and CPU 1 at 25% busy: the first bar is twice as tall, both
  // stand on the same base line; a second policy without data is marked in the legend.
  const ReportData data = read_report_documents(
      {document_of(with_scheduler(result_to_json(default_run("fifo")), {0.5, 0.25}), "a.json"),
       document_of(without_scheduler(result_to_json(default_run("ctabs"))), "b.json")});
  const std::string html = html_of(data);
  const std::string svg = svg_of(html, "chart-cpu-utilization");
  ASSERT_FALSE(svg.empty());
  const auto bars = elements(svg, "rect", "bar ");
  ASSERT_EQ(bars.size(), 2u);
  const double h0 = std::stod(bars[0].at("height"));
  const double h1 = std::stod(bars[1].at("height"));
  EXPECT_NEAR(h0, 2.0 * h1, 0.02);
  EXPECT_NEAR(std::stod(bars[0].at("y")) + h0, std::stod(bars[1].at("y")) + h1, 0.02);
  EXPECT_NE(svg.find(">ctabs (no per-CPU data)</text>"), std::string::npos);
  EXPECT_NE(svg.find(">cpu1</text>"), std::string::npos);
  EXPECT_NE(svg.find("busy share of simulated time (%)</text>"), std::string::npos);
  EXPECT_NE(html.find("No per-CPU data in: ctabs"), std::string::npos);
  // The cluster table: silver 1,000 MHz and gold 2,000 MHz for fifo, "-" for ctabs.
  const std::size_t table = html.find("id=\"table-clusters\"");
  ASSERT_NE(table, std::string::npos);
  const std::string clusters = html.substr(table, html.find("</table>", table) - table);
  EXPECT_NE(clusters.find("<th class=\"num\">silver (MHz)</th>"), std::string::npos);
  EXPECT_NE(clusters.find("<td>schedutil</td><td class=\"num\">1,000</td><td class=\"num\">2,000"),
            std::string::npos)
      << clusters;
}

TEST(ReportCpus, BadSchedulerFieldsNameTheirPointer) {
  nlohmann::ordered_json j = with_scheduler(result_to_json(default_run("fifo")), {0.5, 1.5});
  EXPECT_EQ(
      read_error({document_of(j, "r.json")})
          .rfind("r.json: /scheduler/cpu_busy_share/1: expected a number in [0, 1], got 1.5", 0),
      0u);
  CompareReport report = three_column_report();
  report.runs[2].result = with_scheduler(report.runs[2].result, {0.1});
  report.runs[2].result["scheduler"]["clusters"][1].erase("name");
  EXPECT_EQ(read_error({compare_document(report, "cmp.json")}),
            "cmp.json: /runs/2/result/scheduler/clusters/1: missing required key \"name\"");
}

// ---- the page -------------------------------------------------------------------------------

ReportData mixed_data() {
  return read_report_documents({compare_document(three_column_report(), "cmp.json"),
                                result_document(default_run("ctabs"), "ctabs.json")});
}

TEST(ReportHtml, OneChartPerKindWithTitlesAndAxisLabels) {
  const std::string html = html_of(mixed_data());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>\n", 0), 0u);
  EXPECT_EQ(occurrences(html, "<svg "), 4u);
  for (const char* id :
       {"chart-tier-shares", "chart-latency-cdf", "chart-breakdown", "chart-selection"}) {
    const std::string svg = svg_of(html, id);
    ASSERT_FALSE(svg.empty()) << id;
    EXPECT_EQ(occurrences(html, std::string("id=\"") + id + "\""), 1u) << id;
    EXPECT_NE(svg.find("<title id=\"" + std::string(id) + "-title\">"), std::string::npos);
    EXPECT_FALSE(elements(svg, "text", "axis-label").empty()) << id;
    EXPECT_FALSE(elements(svg, "text", "chart-title").empty()) << id;
  }
  // Axis titles carry their units.
  EXPECT_NE(svg_of(html, "chart-tier-shares").find("(%)</text>"), std::string::npos);
  EXPECT_NE(svg_of(html, "chart-latency-cdf").find("round-trip latency (µs)</text>"),
            std::string::npos);
  EXPECT_NE(svg_of(html, "chart-breakdown").find("mean time per call (µs)</text>"),
            std::string::npos);
  // Seven CDF panels (all calls, then 2 classes x 3 tiers), each with both axes titled.
  const std::string cdf = svg_of(html, "chart-latency-cdf");
  EXPECT_EQ(elements(cdf, "g", "cdf-panel").size(), 7u);
  EXPECT_EQ(elements(cdf, "text", "axis-label").size(), 14u);
}

TEST(ReportHtml, EveryPolicyAppearsInEveryChartAndTable) {
  const ReportData data = mixed_data();
  const std::string html = html_of(data);
  const std::string policies =
      html.substr(html.find("<table id=\"table-policies\""),
                  html.find("</table>", html.find("<table id=\"table-policies\"")) -
                      html.find("<table id=\"table-policies\""));
  ASSERT_EQ(data.policies.size(), 4u);
  for (const ReportPolicy& p : data.policies) {
    const std::string text = ">" + p.label + "</text>";
    EXPECT_NE(svg_of(html, "chart-tier-shares").find(text), std::string::npos) << p.label;
    EXPECT_NE(svg_of(html, "chart-latency-cdf").find(text), std::string::npos) << p.label;
    EXPECT_NE(svg_of(html, "chart-breakdown").find(text), std::string::npos) << p.label;
    EXPECT_NE(svg_of(html, "chart-selection").find(text), std::string::npos) << p.label;
    EXPECT_NE(policies.find(p.label + "</td>"), std::string::npos) << p.label;
  }
  // One CDF curve per policy in each panel that has calls: 7 panels, 4 policies, all tiers
  // with calls here.
  EXPECT_EQ(elements(svg_of(html, "chart-latency-cdf"), "polyline", "cdf").size(), 7u * 4u);
}

TEST(ReportHtml, PolicyTableCellsFollowTheirHeadings) {
  // A policy's row gives calls, calls/s, mean, p50 and p99 latency (us), then migrations and
  // context switches per call, in the order of the headings: the p50 and p99 of the run, and
  // its migrations and switches each divided by its calls.
  const ReportData data = read_report_documents({result_document(default_run("fifo"), "r.json")});
  const ResultDocument& run = data.policies.at(0).runs.at(0);
  ASSERT_LT(run.latency.p50_ns, run.latency.p99_ns);
  ASSERT_NE(run.counters.migrations, run.counters.context_switches);
  const std::string html = html_of(data);
  const std::size_t table = html.find("<table id=\"table-policies\"");
  ASSERT_NE(table, std::string::npos);
  const std::string policies = html.substr(table, html.find("</table>", table) - table);
  std::vector<std::string> cells;
  const std::regex number_cell(R"re(<td class="num">([^<]*)</td>)re");
  for (auto it = std::sregex_iterator(policies.begin(), policies.end(), number_cell);
       it != std::sregex_iterator(); ++it) {
    cells.push_back((*it)[1]);
  }
  ASSERT_EQ(cells.size(), 7u) << policies;
  // Latencies are printed to a few decimals of a microsecond.
  EXPECT_NEAR(std::stod(cells[3]), static_cast<double>(run.latency.p50_ns) / 1000.0, 0.05);
  EXPECT_NEAR(std::stod(cells[4]), static_cast<double>(run.latency.p99_ns) / 1000.0, 0.05);
  const auto per_call = [&run](std::uint64_t n) {
    return static_cast<double>(n) / static_cast<double>(run.completed);
  };
  EXPECT_NEAR(std::stod(cells[5]), per_call(run.counters.migrations), 5e-4);
  EXPECT_NEAR(std::stod(cells[6]), per_call(run.counters.context_switches), 5e-4);
}

TEST(ReportHtml, CdfCurvesRiseFromLeftToRight) {
  // Pixel y falls (the curve rises) as pixel x grows along every curve.
  const std::string cdf = svg_of(html_of(mixed_data()), "chart-latency-cdf");
  const auto curves = elements(cdf, "polyline", "cdf");
  ASSERT_FALSE(curves.empty());
  for (const auto& curve : curves) {
    std::istringstream points(curve.at("points"));
    double last_x = -1e9;
    double last_y = 1e9;
    for (std::string point; points >> point;) {
      const double x = std::stod(point.substr(0, point.find(',')));
      const double y = std::stod(point.substr(point.find(',') + 1));
      EXPECT_GE(x, last_x) << curve.at("points");
      EXPECT_LT(y, last_y) << curve.at("points");
      last_x = x;
      last_y = y;
    }
  }
}

TEST(ReportHtml, ShareBarsAreProportionalToTheShares) {
  // In the tier-share chart every bar with calls spans the full 0..100% width, and each
  // segment's width over that span is its tier's share.
  const ReportData data = read_report_documents({result_document(default_run("fifo"), "r.json")});
  const std::string svg = svg_of(html_of(data), "chart-tier-shares");
  std::map<double, std::vector<double>> widths_by_row;  // keyed by y
  for (const auto& rect : elements(svg, "rect", "bar ")) {
    widths_by_row[std::stod(rect.at("y"))].push_back(std::stod(rect.at("width")));
  }
  ASSERT_EQ(widths_by_row.size(), 2u);  // one bar per class
  std::vector<double> totals;
  for (const auto& [y, widths] : widths_by_row) {
    double total = 0.0;
    for (double w : widths) total += w;
    totals.push_back(total);
  }
  EXPECT_NEAR(totals[0], totals[1], 0.02);
  // SCHED_FIFO (the upper bar): 6, 3 and 1 of 10 calls.
  const auto& fifo = widths_by_row.begin()->second;
  ASSERT_EQ(fifo.size(), 3u);
  EXPECT_NEAR(fifo[0] / totals[0], 0.6, 0.001);
  EXPECT_NEAR(fifo[1] / totals[0], 0.3, 0.001);
  EXPECT_NEAR(fifo[2] / totals[0], 0.1, 0.001);
}

TEST(ReportHtml, NegativeBreakdownPartsStackLeftOfZero) {
  // `other` is -100 ns per call: its segment ends where the positive parts start.
  const std::string svg =
      svg_of(html_of(read_report_documents({result_document(default_run("fifo"), "r.json")})),
             "chart-breakdown");
  const auto others = elements(svg, "rect", "bar fill-7");
  const auto kernels = elements(svg, "rect", "bar fill-0");
  ASSERT_FALSE(others.empty());
  ASSERT_EQ(others.size(), kernels.size());
  for (std::size_t i = 0; i < others.size(); ++i) {
    const double other_end = std::stod(others[i].at("x")) + std::stod(others[i].at("width"));
    EXPECT_NEAR(other_end, std::stod(kernels[i].at("x")), 0.011);
  }
}

TEST(ReportHtml, InputStringsAreEscaped) {
  // A selector name with markup, a title with markup: neither reaches the page as markup.
  stats::RunResult run = default_run("<script>alert('x')</script>&\"");
  run.scenario = "<img src=x onerror=alert(1)>";
  const ReportData data = read_report_documents({result_document(run, "r<1>.json")});
  ReportOptions options;
  options.title = "A <b>bold</b> title";
  const std::string html = html_of(data, options);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  EXPECT_EQ(html.find("r<1>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;"),
            std::string::npos);
  EXPECT_NE(html.find("<title>A &lt;b&gt;bold&lt;/b&gt; title</title>"), std::string::npos);
}

TEST(ReportHtml, SelfContainedWithLightAndDarkSchemes) {
  const std::string html = html_of(mixed_data());
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  EXPECT_NE(html.find("@media (prefers-color-scheme:dark)"), std::string::npos);
  EXPECT_NE(html.find("<meta name=\"color-scheme\" content=\"light dark\">"), std::string::npos);
}

TEST(ReportHtml, CompareTableShowsColumnsDeltasAndSignificance) {
  const std::string html = html_of(mixed_data());
  const std::size_t start = html.find("<table id=\"table-compare-0\"");
  ASSERT_NE(start, std::string::npos);
  const std::string table = html.substr(start, html.find("</table>", start) - start);
  for (const char* label : {">fifo</th>", ">ctabs</th>", ">ctabs-nudge</th>", ">Δ%</th>"}) {
    EXPECT_NE(table.find(label), std::string::npos) << label;
  }
  EXPECT_NE(table.find("<td>latency p99</td><td>us</td>"), std::string::npos);
  // ctabs' p99 -20% is significant and lower is better; ctabs' +2% throughput is not
  // significant; ctabs-nudge's -20% throughput is significantly worse.
  EXPECT_NE(table.find("<td class=\"num better\">-20.0%</td>"), std::string::npos) << table;
  EXPECT_NE(table.find("<td class=\"num same\">+2.0%~</td>"), std::string::npos) << table;
  EXPECT_NE(table.find("<td class=\"num worse\">-20.0%</td>"), std::string::npos) << table;
  EXPECT_NE(table.find("5,000.0 ± 500.0"), std::string::npos) << table;
}

TEST(ReportHtml, ByteIdenticalForEqualInputs) {
  const std::string first = html_of(mixed_data());
  const std::string second = html_of(mixed_data());
  EXPECT_EQ(first, second);
  EXPECT_NE(first,
            html_of(read_report_documents({result_document(default_run("ctabs"), "ctabs.json")})));
}

// ---- sweep summaries -------------------------------------------------------------------------

// The summary of a sweep "demo" of schd-dbg made by the sweep's own records and merger: axis
// payload 16 and 4096, fifo and ctabs, seeds 1 and 2 (8 runs listed). Each run is default_run()'s
// shape at a base latency of 50 us (fifo), 40 us (ctabs at payload 16) or 60 us (ctabs at 4096),
// plus 1 us per seed. With `ctabs_4096_seed_2_missing`, that run has no result.
nlohmann::ordered_json sweep_summary_json(bool ctabs_4096_seed_2_missing = false) {
  std::vector<sweep::RunSpec> listed;
  std::vector<sweep::RunRecord> records;
  for (const int payload : {16, 4096}) {
    for (const std::string selector : {"fifo", "ctabs"}) {
      for (const std::uint64_t seed : {1u, 2u}) {
        const sweep::RunSpec run = testing::sweep_run_spec(listed.size(), selector, seed, payload);
        listed.push_back(run);
        if (ctabs_4096_seed_2_missing && payload == 4096 && selector == "ctabs" && seed == 2) {
          continue;
        }
        const std::int64_t base = selector == "fifo" ? 50'000 : payload == 16 ? 40'000 : 60'000;
        stats::RunResult result = make_run(selector, seed, base + 1'000 * static_cast<int>(seed),
                                           {6, 3, 1}, {2, 2, 4}, 20'000);
        result.scenario_hash = run.scenario_hash;
        result.overrides =
            "[[\"clients.0.iteration.2.payload_bytes\"," + std::to_string(payload) + "]]";
        std::ostringstream text;
        sweep::write_run_record(run, result, text);
        records.push_back(
            sweep::read_run_record(JsonDocument::parse_text(text.str(), "record.json").root()));
      }
    }
  }
  sweep::SweepMerger merger(listed);
  for (const sweep::RunRecord& record : records) merger.add(record, "record.json");
  return sweep::summary_to_json(std::move(merger).finish());
}

// The sweep chart's panels and the overview's metrics: throughput, latency mean, p50 and p99,
// SCHED_FIFO and SCHED_OTHER same-core shares.
constexpr std::size_t kSweepPanels = 6;

ReportData sweep_data(const nlohmann::ordered_json& summary) {
  return read_report_documents({document_of(summary, "s.json")});
}

// The text of each cell (<td>) of the table with the given id, row by row.
std::vector<std::vector<std::string>> table_cells(const std::string& html, const std::string& id) {
  const std::size_t start = html.find("<table id=\"" + id + "\"");
  if (start == std::string::npos) return {};
  const std::string table = html.substr(start, html.find("</table>", start) - start);
  const std::size_t body = table.find("<tbody>");
  std::vector<std::vector<std::string>> rows;
  const std::regex row("<tr>(.*?)</tr>");
  const std::regex cell("<td[^>]*>(.*?)</td>");
  const std::string rows_text = table.substr(body);
  for (auto r = std::sregex_iterator(rows_text.begin(), rows_text.end(), row);
       r != std::sregex_iterator(); ++r) {
    const std::string text = (*r)[1];
    std::vector<std::string>& cells = rows.emplace_back();
    for (auto c = std::sregex_iterator(text.begin(), text.end(), cell); c != std::sregex_iterator();
         ++c) {
      cells.push_back((*c)[1]);
    }
  }
  return rows;
}

// A Δ% cell's text as the report writes it.
std::string delta_text(const nlohmann::ordered_json& cell) {
  std::string text = fmt::format("{:+.1f}%", cell["delta_pct"].get<double>());
  if (cell["significant"].is_boolean() && !cell["significant"].get<bool>()) text += "~";
  return text;
}

TEST(ReportSweep, ReadsPointsColumnsSeedsAndTheSummarysValues) {
  const nlohmann::ordered_json summary = sweep_summary_json(true);
  const ReportData data = sweep_data(summary);
  EXPECT_TRUE(data.policies.empty());
  ASSERT_EQ(data.sweeps.size(), 1u);
  const ReportSweep& sweep = data.sweeps[0];
  EXPECT_EQ(sweep.name, "demo");
  EXPECT_EQ(sweep.scenario, "schd-dbg");
  EXPECT_EQ(sweep.topology, "sa8155p");
  EXPECT_EQ(sweep.axes, (std::vector<std::string>{"payload"}));
  EXPECT_EQ(sweep.column_labels, (std::vector<std::string>{"fifo", "ctabs"}));
  EXPECT_EQ(sweep.listed, 8u);
  EXPECT_EQ(sweep.merged, 7u);
  EXPECT_EQ(sweep.missing, 1u);
  ASSERT_EQ(sweep.points.size(), 2u);
  EXPECT_EQ(sweep.points[0].axis_values, (std::vector<std::string>{"16"}));
  EXPECT_EQ(sweep.points[1].axis_values, (std::vector<std::string>{"4096"}));
  const ReportSweepPoint& wide = sweep.points[1];
  EXPECT_EQ(wide.column_seeds[1], (std::vector<std::uint64_t>{1}));
  EXPECT_EQ(wide.missing_seeds[1], (std::vector<std::uint64_t>{2}));
  EXPECT_EQ(wide.table.seeds, (std::vector<std::uint64_t>{1, 2}));
  // Every cell is the summary's, row by row in the summary's metric order.
  for (std::size_t p = 0; p < 2; ++p) {
    const ReportCompareTable& table = sweep.points[p].table;
    ASSERT_EQ(table.rows.size(), summary["metrics"].size());
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
      EXPECT_EQ(table.rows[r].key, summary["metrics"][r]["key"]);
      for (std::size_t c = 0; c < 2; ++c) {
        const auto& cell = summary["points"][p]["columns"][c]["metrics"][table.rows[r].key];
        const ReportCompareCell& read = table.rows[r].cells[c];
        EXPECT_EQ(read.mean.has_value(), !cell["value"].is_null()) << table.rows[r].key;
        if (read.mean) {
          EXPECT_EQ(*read.mean, cell["value"].get<double>()) << table.rows[r].key;
        }
      }
    }
  }
  ASSERT_EQ(data.inputs.size(), 1u);
  EXPECT_EQ(data.inputs[0].what, "sweep summary: 2 point(s), 7 run(s) merged, 1 missing");
}

TEST(ReportSweep, StructureAndContractAreChecked) {
  using Json = nlohmann::ordered_json;
  const Json good = sweep_summary_json(true);
  ASSERT_EQ(read_error({document_of(good, "s.json")}), "");
  const auto error_with = [&](const std::function<void(Json&)>& edit) {
    Json bad = good;
    edit(bad);
    return read_error({document_of(bad, "s.json")});
  };
  const std::vector<std::pair<std::function<void(Json&)>, std::string>> cases = {
      {[](Json& j) { j["metrics"][0]["key"] = "throughputs"; },
       "s.json: /metrics/0/key: unknown metric (did you mean \"throughput\"?); valid metrics: "},
      {[](Json& j) { j["metrics"][1]["key"] = "throughput"; },
       "s.json: /metrics/1/key: expected each metric once, got \"throughput\""},
      {[](Json& j) { j["metrics"] = Json::array(); },
       "s.json: /metrics: expected at least one metric, got none"},
      {[](Json& j) { j["axes"].push_back("payload"); },
       "s.json: /axes/1: expected each axis name once, got \"payload\""},
      {[](Json& j) { j["runs"]["merged"] = "7"; },
       "s.json: /runs/merged: expected a non-negative integer, got \"7\""},
      {[](Json& j) { j["runs"]["missing"][0].erase("seed"); },
       "s.json: /runs/missing/0: missing required key \"seed\""},
      {[](Json& j) { j["points"] = Json::array(); },
       "s.json: /points: expected at least one point, got none"},
      {[](Json& j) { j["points"][0]["axes"] = Json::object(); },
       "s.json: /points/0/axes: missing required key \"payload\""},
      {[](Json& j) { j["points"][1]["axes"] = j["points"][0]["axes"]; },
       "s.json: /points/1/axes: expected axis values of one point only (/points/0 has them too)"},
      {[](Json& j) { j["points"][0]["columns"] = Json::array(); },
       "s.json: /points/0/columns: expected at least one column, got none"},
      {[](Json& j) { j["points"][0]["columns"][1]["label"] = "fifo"; },
       "s.json: /points/0/columns/1/label: expected a label unique among the point's columns "
       "(column 0 has it too), got \"fifo\""},
      {[](Json& j) { j["points"][0]["columns"][0]["run_ids"].erase(0); },
       "s.json: /points/0/columns/0/run_ids: expected 2 run ids (one per seed), got 1"},
      {[](Json& j) { j["points"][1]["columns"][1]["missing_seeds"][0] = 1; },
       "s.json: /points/1/columns/1/missing_seeds/0: expected each seed once, got 1"},
      {[](Json& j) {
         Json& column = j["points"][1]["columns"][1];
         column["seeds"] = Json::array();
         column["run_ids"] = Json::array();
         column["missing_seeds"] = Json::array();
       },
       "s.json: /points/1/columns/1/seeds: expected at least one seed, merged or missing, got "
       "none"},
      {[](Json& j) {
         Json& column = j["points"][1]["columns"][1];
         column["seeds"] = Json::array();
         column["run_ids"] = Json::array();
         column["missing_seeds"] = Json::array({1, 2});
       },
       "s.json: /points/1/columns/1/pooled: expected null (the column merged no run), got "},
      {[](Json& j) { j["points"][0]["columns"][0]["metrics"].erase("latency.p99"); },
       "s.json: /points/0/columns/0/metrics: missing required key \"latency.p99\""},
      {[](Json& j) { j["points"][0]["columns"][0]["metrics"]["latency.p99"]["ci95"] = -1; },
       "s.json: /points/0/columns/0/metrics/latency.p99/ci95: expected a non-negative number or "
       "null, got -1"},
      {[](Json& j) { j["points"][0]["columns"][0]["pooled"]["seed"] = 1; },
       "s.json: /points/0/columns/0/pooled/seed: unknown key"},
      {[](Json& j) { j["points"][0]["columns"][1]["pooled"]["selector"] = "fifo"; },
       "s.json: /points/0/columns/1/pooled/selector: expected \"ctabs\" (the column's "
       "selector), got \"fifo\""},
      {[](Json& j) { j["points"][0]["columns"][0]["pooled"]["latency"]["p50_ns"] = "slow"; },
       "s.json: /points/0/columns/0/pooled/latency/p50_ns: expected "},
  };
  for (const auto& [edit, expected] : cases) {
    const std::string error = error_with(edit);
    EXPECT_EQ(error.rfind(expected, 0), 0u) << "expected: " << expected << "\ngot: " << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
}

TEST(ReportSweepHtml, ASweepAloneGetsItsSectionAndNoPolicyCharts) {
  const std::string html = html_of(sweep_data(sweep_summary_json(true)));
  EXPECT_NE(html.find("<p class=\"meta\">1 sweep(s) · scenario schd-dbg · topology sa8155p</p>"),
            std::string::npos);
  EXPECT_NE(html.find("<title>bindersim report: schd-dbg</title>"), std::string::npos);
  for (const char* id : {"id=\"sweeps\"", "id=\"chart-sweep-0\"", "id=\"table-sweep-0\"",
                         "id=\"table-sweep-0-point-0\"", "id=\"table-sweep-0-point-1\""}) {
    EXPECT_NE(html.find(id), std::string::npos) << id;
  }
  for (const char* id : {"table-policies", "chart-tier-shares", "chart-latency-cdf",
                         "chart-breakdown", "chart-selection", "id=\"compare\""}) {
    EXPECT_EQ(html.find(id), std::string::npos) << id;
  }
  // The missing run is said, and under its point's table.
  EXPECT_NE(html.find("1 run(s) of the sweep have no result"), std::string::npos);
  EXPECT_NE(html.find("ctabs seeds 1 (missing 2)"), std::string::npos);
}

TEST(ReportSweepHtml, OverviewCellsAreTheSummarysValuesAndDeltas) {
  const nlohmann::ordered_json summary = sweep_summary_json();
  const std::string html = html_of(sweep_data(summary));
  const auto overview = table_cells(html, "table-sweep-0");
  ASSERT_EQ(overview.size(), 2u);
  for (std::size_t p = 0; p < 2; ++p) {
    const auto& point = summary["points"][p];
    // payload, then (fifo value, ctabs Δ%) for each headline metric.
    ASSERT_EQ(overview[p].size(), 1u + kSweepPanels * 2u);
    EXPECT_EQ(overview[p][0], point["axes"]["payload"].dump());
    const auto point_table = table_cells(html, "table-sweep-0-point-" + std::to_string(p));
    const char* keys[] = {"throughput",
                          "latency.mean",
                          "latency.p50",
                          "latency.p99",
                          "tiers.sched_fifo.same_core.share",
                          "tiers.sched_other.same_core.share"};
    for (std::size_t k = 0; k < kSweepPanels; ++k) {
      const auto& ctabs = point["columns"][1]["metrics"][keys[k]];
      EXPECT_EQ(overview[p][2 + 2 * k], delta_text(ctabs)) << keys[k];
      // fifo's value is its cell in the point's full table (rows in the summary's metric
      // order), without the ± half-width.
      std::size_t row = 0;
      while (summary["metrics"][row]["key"] != keys[k]) ++row;
      const std::string full = point_table.at(row).at(2);
      EXPECT_EQ(overview[p][1 + 2 * k], full.substr(0, full.find(" ± "))) << keys[k];
    }
  }
  // ctabs is 40 us + seed against fifo's 50 us + seed at payload 16, and 60 us + seed at 4096:
  // lower latency at the first point, higher at the second.
  EXPECT_EQ(overview[0][4].front(), '-');
  EXPECT_EQ(overview[1][4].front(), '+');
}

TEST(ReportSweepHtml, APointWithoutTheBaselineColumnShowsNoDelta) {
  nlohmann::ordered_json summary = sweep_summary_json();
  summary["points"][1]["columns"].erase(0);  // no fifo at payload 4096
  const std::string html = html_of(sweep_data(summary));
  const auto overview = table_cells(html, "table-sweep-0");
  ASSERT_EQ(overview.size(), 2u);
  EXPECT_NE(overview[0][2], "-");
  for (std::size_t k = 1; k < overview[1].size(); ++k) EXPECT_EQ(overview[1][k], "-") << k;
  // ctabs keeps the colour of the sweep's second column at both points.
  const auto dots = elements(svg_of(html, "chart-sweep-0"), "circle", "marker");
  ASSERT_EQ(dots.size(), kSweepPanels * 3u);
  EXPECT_NE(dots[1].at("class").find("fill-1"), std::string::npos);
  EXPECT_NE(dots[2].at("class").find("fill-1"), std::string::npos);
}

TEST(ReportSweepHtml, AFirstPointWithoutTheBaselineDoesNotMakeAnotherColumnTheBaseline) {
  // As `sweep merge --across`: the sweep's columns are in the order of the points' own, so
  // fifo stays the baseline when the first point lacks it.
  nlohmann::ordered_json summary = sweep_summary_json();
  summary["points"][0]["columns"].erase(0);  // no fifo at payload 16
  const ReportData data = sweep_data(summary);
  EXPECT_EQ(data.sweeps.at(0).column_labels, (std::vector<std::string>{"fifo", "ctabs"}));
  const auto overview = table_cells(html_of(data), "table-sweep-0");
  ASSERT_EQ(overview.size(), 2u);
  for (std::size_t k = 1; k < overview[0].size(); ++k) EXPECT_EQ(overview[0][k], "-") << k;
  EXPECT_EQ(overview[1][2],
            delta_text(summary["points"][1]["columns"][1]["metrics"]["throughput"]));
}

TEST(ReportSweepHtml, ColumnsAreSelectorAndPlacementAcrossThePoints) {
  // The second point runs both selectors under another placement: four columns, labelled with
  // their placement, and no Δ% at that point against the first point's fifo.
  nlohmann::ordered_json summary = sweep_summary_json();
  for (auto& column : summary["points"][1]["columns"]) {
    column["placement"] = "walt";
    column["pooled"]["placement"] = "walt";
  }
  const ReportData data = sweep_data(summary);
  EXPECT_EQ(
      data.sweeps.at(0).column_labels,
      (std::vector<std::string>{"fifo mainline", "ctabs mainline", "fifo walt", "ctabs walt"}));
  EXPECT_EQ(data.sweeps.at(0).points.at(1).sweep_columns, (std::vector<std::size_t>{2, 3}));
  const auto overview = table_cells(html_of(data), "table-sweep-0");
  ASSERT_EQ(overview.size(), 2u);
  ASSERT_EQ(overview[0].size(), 1u + kSweepPanels * 4u);
  EXPECT_NE(overview[0][2], "-");
  EXPECT_EQ(overview[0][3], "-");  // fifo walt at the first point
  for (std::size_t k = 1; k < overview[1].size(); ++k) EXPECT_EQ(overview[1][k], "-") << k;
  // A second column of one selector and placement in one point is refused.
  summary["points"][1]["columns"][1]["selector"] = "fifo";
  summary["points"][1]["columns"][1]["pooled"]["selector"] = "fifo";
  EXPECT_EQ(read_error({document_of(summary, "s.json")}),
            "s.json: /points/1/columns/1: expected one column per selector and placement, got a "
            "second \"fifo walt\" (column 0)");
}

TEST(ReportSweepHtml, AnAxisOverThePlacementLeavesItOutOfTheColumns) {
  // As `sweep merge --across`: where an axis sets the placement, the columns are the selectors
  // alone and every point has its values under them.
  nlohmann::ordered_json summary = sweep_summary_json();
  summary["axes"] = {"pl"};  // the axis's name is free
  for (std::size_t p = 0; p < 2; ++p) {
    const std::string placement = p == 0 ? "mainline" : "walt";
    summary["points"][p]["axes"] = {{"pl", placement}};
    for (auto& column : summary["points"][p]["columns"]) {
      column["placement"] = placement;
      column["pooled"]["placement"] = placement;
    }
  }
  const ReportData data = sweep_data(summary);
  EXPECT_EQ(data.sweeps.at(0).column_labels, (std::vector<std::string>{"fifo", "ctabs"}));
  EXPECT_EQ(data.sweeps.at(0).points.at(1).sweep_columns, (std::vector<std::size_t>{0, 1}));
  const auto overview = table_cells(html_of(data), "table-sweep-0");
  ASSERT_EQ(overview.size(), 2u);
  EXPECT_EQ(overview[1][0], "walt");
  for (std::size_t k = 1; k < overview[1].size(); ++k) EXPECT_NE(overview[1][k], "-") << k;
  EXPECT_EQ(overview[1][2],
            delta_text(summary["points"][1]["columns"][1]["metrics"]["throughput"]));
}

TEST(ReportSweepHtml, UntestedDeltasAreMarkedAndLackingSeedsNamed) {
  // ctabs has one seed at payload 4096: its Δ% there was not tested ("?"), where fifo's two
  // seeds could have been. Without the runs file the lacking seed is not listed as missing:
  // the point's heading names it all the same.
  nlohmann::ordered_json summary = sweep_summary_json(true);
  summary["points"][1]["columns"][1]["missing_seeds"] = nlohmann::ordered_json::array();
  const std::string html = html_of(sweep_data(summary));
  const auto overview = table_cells(html, "table-sweep-0");
  ASSERT_EQ(overview.size(), 2u);
  EXPECT_EQ(overview[1][2].back(), '?') << overview[1][2];
  EXPECT_NE(overview[0][2].back(), '?') << overview[0][2];
  const auto point = table_cells(html, "table-sweep-0-point-1");
  EXPECT_EQ(point.at(0).at(4).back(), '?') << point.at(0).at(4);  // metric, unit, fifo, ctabs, Δ%
  EXPECT_NE(html.find("ctabs seeds 1 (no result for 2)"), std::string::npos);
  // So are a compare document's over several seeds; over one seed, which tests nothing, none.
  CompareReport report = three_column_report();
  report.summary[1].columns[2].significant = std::nullopt;  // ctabs-nudge's p99 +1%
  const auto marked = table_cells(
      html_of(read_report_documents({compare_document(report, "c.json")})), "table-compare-0");
  EXPECT_EQ(marked.at(1).at(6), "+1.0%?");  // metric, unit, fifo, ctabs, Δ%, nudge, Δ%
  report.seeds = {1};
  std::erase_if(report.runs, [](const CompareRun& run) { return run.seed != 1; });
  const auto one_seed = table_cells(
      html_of(read_report_documents({compare_document(report, "c.json")})), "table-compare-0");
  EXPECT_EQ(one_seed.at(1).at(6), "+1.0%");
}

TEST(ReportSweepHtml, LongAxisValuesAreCutInTheChartAndWholeInTheTable) {
  nlohmann::ordered_json summary = sweep_summary_json();
  const std::string long_value(120, 'w');
  summary["points"][0]["axes"]["payload"] = long_value;
  const std::string html = html_of(sweep_data(summary));
  const std::string svg = svg_of(html, "chart-sweep-0");
  EXPECT_EQ(svg.find(">" + long_value + "</text>"), std::string::npos);
  EXPECT_NE(svg.find("ww…</text>"), std::string::npos);
  EXPECT_NE(svg.find("fifo at " + long_value), std::string::npos);  // a dot's tooltip
  EXPECT_EQ(table_cells(html, "table-sweep-0").at(0).at(0), long_value);
}

TEST(ReportSweepHtml, ASweepWithoutResultsIsTitledByItsName) {
  nlohmann::ordered_json summary = sweep_summary_json();
  for (auto& point : summary["points"]) {
    for (auto& column : point["columns"]) {
      column["seeds"] = nlohmann::ordered_json::array();
      column["run_ids"] = nlohmann::ordered_json::array();
      column["missing_seeds"] = {1, 2};
      column["pooled"] = nullptr;
    }
  }
  const std::string html = html_of(sweep_data(summary));
  EXPECT_NE(html.find("<title>bindersim report: sweep demo</title>"), std::string::npos);
}

TEST(ReportSweepHtml, TheNinthColumnOnHasHollowDotsAndDashedWhiskers) {
  nlohmann::ordered_json summary = sweep_summary_json();
  summary["points"].erase(1);
  const nlohmann::ordered_json fifo = summary["points"][0]["columns"][0];
  auto& columns = summary["points"][0]["columns"];
  columns = nlohmann::ordered_json::array();
  for (int k = 0; k < 9; ++k) {
    nlohmann::ordered_json column = fifo;
    column["label"] = fmt::format("fifo p{}", k);
    column["placement"] = fmt::format("p{}", k);
    column["pooled"]["placement"] = column["placement"];
    columns.push_back(column);
  }
  const std::string svg = svg_of(html_of(sweep_data(summary)), "chart-sweep-0");
  const auto dots = elements(svg, "circle", "marker");
  ASSERT_EQ(dots.size(), kSweepPanels * 9u);
  EXPECT_EQ(dots[0].at("class"), "marker fill-0");
  EXPECT_EQ(dots[8].at("class"), "marker hollow stroke-0");
  const auto whiskers = elements(svg, "line", "whisker");
  ASSERT_GE(whiskers.size(), 9u);  // the throughput panel's, first (a zero half-width has none)
  EXPECT_EQ(whiskers[0].at("class"), "whisker stroke-0 dash-0");
  EXPECT_EQ(whiskers[8].at("class"), "whisker stroke-0 dash-1");
}

TEST(ReportSweepHtml, DotsSitAtThePooledValuesInOneLanePerColumn) {
  const std::string svg = svg_of(html_of(sweep_data(sweep_summary_json())), "chart-sweep-0");
  const auto dots = elements(svg, "circle", "marker");
  // Panels throughput, latency mean, p50, p99, then the same-core shares; in each, points 16
  // and 4096; fifo then ctabs.
  ASSERT_EQ(dots.size(), kSweepPanels * 2u * 2u);
  const auto at = [&](std::size_t panel, std::size_t point, std::size_t column,
                      const char* attribute) {
    return std::stod(dots[panel * 4 + point * 2 + column].at(attribute));
  };
  for (std::size_t panel = 1; panel < 4; ++panel) {                    // the latency panels
    EXPECT_LT(at(panel, 0, 1, "cx"), at(panel, 0, 0, "cx")) << panel;  // ctabs faster at 16
    EXPECT_GT(at(panel, 1, 1, "cx"), at(panel, 1, 0, "cx")) << panel;  // and slower at 4096
  }
  for (std::size_t point = 0; point < 2; ++point) {
    EXPECT_LT(at(0, point, 0, "cy"), at(0, point, 1, "cy"));  // fifo's lane above ctabs'
  }
  EXPECT_LT(at(0, 0, 0, "cy"), at(0, 1, 0, "cy"));  // points top to bottom
}

TEST(ReportSweepHtml, ExtremeValuesKeepEveryCoordinateFinite) {
  // Values and half-widths near the largest double, of both signs in one panel, once made the
  // chart's axis span infinite (an internal check failed).
  nlohmann::ordered_json summary = sweep_summary_json();
  auto& fifo = summary["points"][0]["columns"][0]["metrics"];
  auto& ctabs = summary["points"][1]["columns"][1]["metrics"];
  for (const char* key : {"throughput", "latency.mean"}) {
    fifo[key]["value"] = 1.7e308;
    fifo[key]["ci95"] = 1.7e308;
    ctabs[key]["value"] = -1.7e308;
    ctabs[key]["delta_pct"] = 1.7e308;
  }
  const std::string html = html_of(sweep_data(summary));
  const std::string svg = svg_of(html, "chart-sweep-0");
  ASSERT_FALSE(svg.empty());
  // Cells and tick labels print such values in scientific notation, not 309 digits.
  EXPECT_FALSE(std::regex_search(html, std::regex("[0-9][0-9,.]{24}")));
  EXPECT_NE(html.find(">1.7e+308 ± 1.7e+308<"), std::string::npos);
  for (const char* attribute : {"cx", "cy", "x1", "x2", "x", "y"}) {
    for (const auto& element : elements(svg, "circle", "")) {
      if (!element.contains(attribute)) continue;
      EXPECT_TRUE(std::isfinite(std::stod(element.at(attribute)))) << element.at(attribute);
    }
    for (const auto& element : elements(svg, "line", "")) {
      if (!element.contains(attribute)) continue;
      EXPECT_TRUE(std::isfinite(std::stod(element.at(attribute)))) << element.at(attribute);
    }
  }
  EXPECT_EQ(svg.find("inf"), std::string::npos);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
}

TEST(ReportSweepHtml, WithResultsBothAppearAndThePageIsByteIdentical) {
  const auto documents = [] {
    return std::vector<JsonDocument>{result_document(default_run("fifo"), "fifo.json"),
                                     document_of(sweep_summary_json(true), "s.json")};
  };
  const ReportData data = read_report_documents(documents());
  ASSERT_EQ(data.policies.size(), 1u);
  ASSERT_EQ(data.sweeps.size(), 1u);
  const std::string html = html_of(data);
  EXPECT_NE(html.find("1 policy · 1 sweep(s)"), std::string::npos);
  EXPECT_NE(html.find("id=\"table-policies\""), std::string::npos);
  EXPECT_NE(html.find("id=\"chart-sweep-0\""), std::string::npos);
  EXPECT_LT(html.find("<code>fifo.json</code>: result document"),
            html.find("<code>s.json</code>: sweep summary"));
  EXPECT_EQ(html, html_of(read_report_documents(documents())));
}

}  // namespace
}  // namespace bindersim::io
