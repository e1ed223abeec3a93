#include "bindersim/io/compare_report.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "bindersim/io/result_json.hpp"

namespace bindersim::io {
namespace {

using nlohmann::ordered_json;

std::vector<std::string> keys_of(const ordered_json& j) {
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  return keys;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Columns of terminal text: UTF-8 code points ("±", "Δ" are one each).
std::size_t code_points(const std::string& text) {
  std::size_t n = 0;
  for (unsigned char ch : text) n += (ch & 0xC0) != 0x80;
  return n;
}

stats::Metric metric(std::string key, std::string label, std::string unit, stats::Better better) {
  return stats::Metric{std::move(key), std::move(label), std::move(unit), better, nullptr};
}

stats::ColumnStats cell(double mean, std::optional<double> ci, std::optional<double> delta,
                        std::optional<bool> significant) {
  stats::ColumnStats s;
  s.n = ci ? 3 : 1;
  s.mean = mean;
  s.ci95 = ci;
  s.delta_pct = delta;
  s.significant = significant;
  return s;
}

stats::RunResult tiny_run(const std::string& selector, std::uint64_t seed) {
  stats::RunResult r;
  r.scenario = "schd-dbg";
  r.topology = "sa8155p";
  r.selector = selector;
  r.placement = "mainline";
  r.seed = seed;
  r.completed = 2;
  r.simulated_ns = 1'000'000;
  r.latency.record_n(50'000, 2);
  r.version = "0.1.0";
  return r;
}

// Three columns over three seeds: ctabs is significantly faster than fifo, ctabs-nudge's
// difference is within the noise.
CompareReport three_seed_report() {
  CompareReport report;
  report.scenario = "schd-dbg";
  report.seeds = {1, 2, 3};
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
      report.runs.push_back(
          CompareRun{c, seed, result_to_json(tiny_run(report.columns[c].selector, seed))});
    }
  }
  report.summary.push_back({metric("throughput", "throughput", "calls/s", stats::Better::kHigher),
                            {cell(4930.94, 12.345, std::nullopt, std::nullopt),
                             cell(5537.4, 10.0, 12.3, true), cell(4705.3, 400.0, -4.56, false)}});
  report.summary.push_back({metric("latency.p99", "latency p99", "us", stats::Better::kLower),
                            {cell(1.23456789, 0.5, std::nullopt, std::nullopt),
                             cell(0.25, 0.01, -79.75, true), cell(1.3, 0.2, 5.3, false)}});
  return report;
}

CompareReport one_seed_report() {
  CompareReport report = three_seed_report();
  report.seeds = {7};
  report.runs.clear();
  for (std::size_t c = 0; c < report.columns.size(); ++c) {
    report.runs.push_back(CompareRun{c, 7, result_to_json(tiny_run("fifo", 7))});
  }
  for (auto& row : report.summary) {
    for (auto& s : row.columns) {
      s.n = 1;
      s.ci95.reset();
      s.significant.reset();
    }
  }
  return report;
}

std::string table_of(const CompareReport& report) {
  std::ostringstream out;
  print_compare_table(report, out);
  return out.str();
}

TEST(CompareTable, HeaderColumnsAndRows) {
  // A header line naming scenario, topology, placement and seeds; a heading with every column
  // label; one row per metric with its unit.
  const std::string table = table_of(three_seed_report());
  const auto lines = lines_of(table);
  ASSERT_GE(lines.size(), 5u);
  EXPECT_EQ(lines[0], "scenario schd-dbg | topology sa8155p | placement mainline | seeds 1..3");
  for (const char* label : {"fifo", "ctabs", "ctabs-nudge", "Δ%"}) {
    EXPECT_NE(lines[1].find(label), std::string::npos) << label;
  }
  EXPECT_EQ(lines[1].rfind("metric", 0), 0u);
  EXPECT_EQ(lines[3].rfind("throughput", 0), 0u);
  EXPECT_NE(lines[3].find("calls/s"), std::string::npos);
  EXPECT_EQ(lines[4].rfind("latency p99", 0), 0u);
}

// The header names the override paths whose values differ between the columns, the paths of
// the values in the labels: not one that every column sets alike, and a path that only some
// columns set counts as varied.
TEST(CompareTable, HeaderNamesTheVariedPaths) {
  CompareReport report = three_seed_report();
  const std::string path = "kernel.selector_params.ctabs-nudge.check_caller_idle";
  report.columns[0].overrides.emplace_back(path, true);
  report.columns[1].overrides.emplace_back(path, false);
  report.columns[2].overrides.emplace_back(path, true);
  EXPECT_EQ(
      lines_of(table_of(report))[0],
      "scenario schd-dbg | topology sa8155p | placement mainline | seeds 1..3 | varies " + path);
  report.columns[2].overrides.emplace_back("kernel.alloc_lock", "spinlock");
  EXPECT_EQ(lines_of(table_of(report))[0],
            "scenario schd-dbg | topology sa8155p | placement mainline | seeds 1..3 | varies " +
                path + ", kernel.alloc_lock");
  report.columns[1].overrides.back().second = true;
  EXPECT_EQ(lines_of(table_of(report))[0],
            "scenario schd-dbg | topology sa8155p | placement mainline | seeds 1..3 | varies "
            "kernel.alloc_lock");
}

TEST(CompareTable, ControlCharactersInNamesAreEscaped) {
  // Names read from files (sweep merge's records) cannot split the table's lines or colour
  // the terminal.
  CompareReport report = three_seed_report();
  report.scenario = "a\nb";
  report.columns[1].label = "ct\x1b[31mabs";
  const std::string table = table_of(report);
  const auto lines = lines_of(table);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[0].rfind("scenario a\\nb | topology sa8155p", 0), 0u) << lines[0];
  EXPECT_NE(lines[1].find("ct\\x1b[31mabs"), std::string::npos) << lines[1];
  EXPECT_EQ(table.find('\x1b'), std::string::npos);
}

TEST(CompareTable, MeansWithConfidenceAndFourSignificantDigits) {
  // 4930.94 ± 12.345 keeps one decimal with grouped thousands; 1.2346 ± 0.5 three decimals.
  const std::string table = table_of(three_seed_report());
  EXPECT_NE(table.find("4,930.9 ± 12.3"), std::string::npos) << table;
  EXPECT_NE(table.find("1.235 ± 0.500"), std::string::npos) << table;
  EXPECT_NE(table.find("0.2500 ± 0.0100"), std::string::npos) << table;
}

TEST(CompareTable, TheIntervalHasAsManyDecimalsAsItsMean) {
  // The ± half-width is printed to the decimals of the mean beside it, no more.
  EXPECT_EQ(mean_cell(cell(4930.94, 12.345, std::nullopt, std::nullopt), true), "4,930.9 ± 12.3");
  EXPECT_EQ(mean_cell(cell(1.23456789, 0.5, std::nullopt, std::nullopt), true), "1.235 ± 0.500");
  EXPECT_EQ(mean_cell(cell(1.23456789, 0.5, std::nullopt, std::nullopt), false), "1.235");
}

TEST(CompareTable, ADeltaThatRoundsToZeroHasNoMinusSign) {
  // -0.04% rounds to zero at one decimal: it prints as +0.0%, never as -0.0%.
  EXPECT_EQ(delta_cell(cell(1.0, 0.1, -0.04, true), true), "+0.0%");
  EXPECT_EQ(delta_cell(cell(1.0, 0.1, 0.04, true), true), "+0.0%");
  EXPECT_EQ(delta_cell(cell(1.0, 0.1, -0.05, true), true), "-0.1%");
}

TEST(CompareTable, DeltaMarkedOnlyWhenNotSignificant) {
  // ctabs' significant +12.3% has no mark; ctabs-nudge's -4.56% is "-4.6%~"; a legend line
  // explains the mark.
  const std::string table = table_of(three_seed_report());
  EXPECT_NE(table.find("+12.3%"), std::string::npos);
  EXPECT_EQ(table.find("+12.3%~"), std::string::npos);
  EXPECT_NE(table.find("-79.8%"), std::string::npos);
  EXPECT_EQ(table.find("-79.8%~"), std::string::npos);
  EXPECT_NE(table.find("-4.6%~"), std::string::npos);
  EXPECT_NE(table.find("+5.3%~"), std::string::npos);
  const auto lines = lines_of(table);
  const std::string& legend = lines.back();
  EXPECT_NE(legend.find("~"), std::string::npos) << legend;
  EXPECT_NE(legend.find("not significant"), std::string::npos) << legend;
  EXPECT_NE(legend.find("Welch"), std::string::npos) << legend;
  EXPECT_NE(legend.find("against fifo"), std::string::npos) << legend;
  // Every difference was tested: no "?" and no line for it.
  EXPECT_EQ(table.find("%?"), std::string::npos) << table;
  EXPECT_EQ(table.find("not tested"), std::string::npos) << table;
}

TEST(CompareTable, DeltaMarkedUntestedWhenAColumnHasOneValue) {
  // ctabs-nudge's p99 has a value in one seed only (a tier the other seeds never reach): its
  // difference is neither significant nor not, so it is marked "?", explained on the line
  // before the legend.
  CompareReport report = three_seed_report();
  report.summary[1].columns[2] = cell(1.3, std::nullopt, 5.3, std::nullopt);
  const std::string table = table_of(report);
  EXPECT_NE(table.find("+5.3%?"), std::string::npos) << table;
  EXPECT_NE(table.find("-4.6%~"), std::string::npos) << table;
  const auto lines = lines_of(table);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[lines.size() - 2].rfind("? = not tested", 0), 0u) << table;
  EXPECT_NE(lines.back().find("~ = not significant"), std::string::npos) << table;
}

TEST(CompareTable, ColumnsAreAligned) {
  // Heading, rule and every metric row end at the same terminal column.
  const auto lines = lines_of(table_of(three_seed_report()));
  const std::size_t width = code_points(lines[1]);
  for (std::size_t i = 2; i + 1 < lines.size(); ++i) {
    EXPECT_EQ(code_points(lines[i]), width) << lines[i];
  }
}

TEST(CompareTable, OneSeedShowsValuesWithoutIntervalsOrMarks) {
  const std::string table = table_of(one_seed_report());
  EXPECT_NE(table.find("seed 7"), std::string::npos);
  EXPECT_NE(table.find("4,930.9"), std::string::npos);
  EXPECT_EQ(table.find("±"), std::string::npos) << table;
  EXPECT_NE(table.find("-4.6%"), std::string::npos);
  EXPECT_EQ(table.find("%~"), std::string::npos) << table;
  EXPECT_EQ(table.find("%?"), std::string::npos) << table;  // one seed tests nothing
  EXPECT_NE(lines_of(table).back().find("one seed"), std::string::npos);
}

TEST(CompareTable, UndefinedMeansPrintADash) {
  CompareReport report = three_seed_report();
  report.summary[0].columns[1].mean.reset();
  report.summary[0].columns[1].ci95.reset();
  report.summary[0].columns[1].delta_pct.reset();
  const auto lines = lines_of(table_of(report));
  EXPECT_NE(lines[3].find("  -  "), std::string::npos) << lines[3];
}

TEST(CompareJson, TopLevelLayoutInOrder) {
  const CompareReport report = three_seed_report();
  const ordered_json j = compare_to_json(report);
  EXPECT_EQ(keys_of(j), (std::vector<std::string>{"schema", "scenario", "topology", "seeds",
                                                  "columns", "runs", "summary"}));
  EXPECT_EQ(j["schema"], "bindersim.compare/1");
  EXPECT_EQ(j["scenario"], "schd-dbg");
  EXPECT_EQ(j["topology"], "sa8155p");
  EXPECT_EQ(j["seeds"], ordered_json({1, 2, 3}));
}

TEST(CompareJson, ColumnsAndRuns) {
  // Columns carry label, selector and overrides; runs carry column index, seed and the run's
  // result document unchanged, column by column.
  const CompareReport report = three_seed_report();
  const ordered_json j = compare_to_json(report);
  ASSERT_EQ(j["columns"].size(), 3u);
  EXPECT_EQ(keys_of(j["columns"][1]), (std::vector<std::string>{"label", "selector", "overrides"}));
  EXPECT_EQ(j["columns"][1]["label"], "ctabs");
  EXPECT_EQ(j["columns"][1]["overrides"], ordered_json({{"clients.0.iterations", 200}}));
  ASSERT_EQ(j["runs"].size(), 9u);
  EXPECT_EQ(keys_of(j["runs"][4]), (std::vector<std::string>{"column", "seed", "result"}));
  EXPECT_EQ(j["runs"][4]["column"], 1);
  EXPECT_EQ(j["runs"][4]["seed"], 2);
  EXPECT_EQ(j["runs"][4]["result"], result_to_json(tiny_run("ctabs", 2)));
}

TEST(CompareJson, SummaryCellsRoundedWithNulls) {
  // Keys in order; the first column has no delta or significance; doubles kept to 1e-6.
  const ordered_json j = compare_to_json(three_seed_report());
  const ordered_json& summary = j["summary"];
  EXPECT_EQ(keys_of(summary), (std::vector<std::string>{"throughput", "latency.p99"}));
  const ordered_json& p99 = summary["latency.p99"];
  EXPECT_EQ(keys_of(p99), (std::vector<std::string>{"unit", "better", "columns"}));
  EXPECT_EQ(p99["unit"], "us");
  EXPECT_EQ(p99["better"], "lower");
  EXPECT_EQ(summary["throughput"]["better"], "higher");
  const ordered_json& first = p99["columns"][0];
  EXPECT_EQ(keys_of(first),
            (std::vector<std::string>{"label", "mean", "ci95", "delta_pct", "significant"}));
  EXPECT_EQ(first["label"], "fifo");
  EXPECT_DOUBLE_EQ(first["mean"].get<double>(), 1.234568);
  EXPECT_TRUE(first["delta_pct"].is_null());
  EXPECT_TRUE(first["significant"].is_null());
  EXPECT_EQ(p99["columns"][1]["significant"], true);
  EXPECT_EQ(p99["columns"][2]["significant"], false);
  EXPECT_DOUBLE_EQ(p99["columns"][2]["delta_pct"].get<double>(), 5.3);

  std::ostringstream text;
  write_compare_json(three_seed_report(), text);
  EXPECT_NE(text.str().find("\"mean\": 1.234568,"), std::string::npos);
}

TEST(CompareJson, OneSeedHasNoIntervalOrSignificance) {
  const ordered_json j = compare_to_json(one_seed_report());
  for (const auto& c : j["summary"]["throughput"]["columns"]) {
    EXPECT_TRUE(c["ci95"].is_null());
    EXPECT_TRUE(c["significant"].is_null());
  }
}

TEST(CompareJson, TextIsStable) {
  // Equal reports give equal bytes, ending in one newline.
  std::ostringstream a;
  std::ostringstream b;
  write_compare_json(three_seed_report(), a);
  write_compare_json(three_seed_report(), b);
  EXPECT_EQ(a.str(), b.str());
  ASSERT_FALSE(a.str().empty());
  EXPECT_EQ(a.str().back(), '\n');
  EXPECT_EQ(ordered_json::parse(a.str()), compare_to_json(three_seed_report()));
}

TEST(CompareReport, DistinctTopologiesAndPlacementsAreJoined) {
  CompareReport report = three_seed_report();
  report.columns[2].topology = "other-soc";
  EXPECT_EQ(report_topology(report), "sa8155p,other-soc");
  EXPECT_EQ(report_placement(report), "mainline");
}

}  // namespace
}  // namespace bindersim::io
