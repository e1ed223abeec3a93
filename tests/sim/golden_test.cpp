// Golden results: each shipped scenario, scaled down, under each selector, compared with the
// result stored in tests/golden/<scenario>-<selector>.json. The model is deterministic, so
// every field must match exactly except provenance.version; an intended model change regenerates
// the files with tools/regen-golden.sh (through `bindersim run --out`, with the same cases and
// iterations as below; tests/golden/check_golden.sh checks the same files through the CLI).
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bindersim/common/data_file.hpp"
#include "bindersim/io/result_json.hpp"
#include "sim_fixture.hpp"

namespace bindersim {
namespace {

// Iterations per client of every golden run (tools/regen-golden.sh writes them with the same).
constexpr std::int64_t kGoldenIterations = 1000;

struct GoldenCase {
  std::string scenario;
  std::string selector;
};

// Printed by GoogleTest for a failing case.
void PrintTo(const GoldenCase& c, std::ostream* out) {
  *out << c.scenario << " under " << c.selector << ", " << kGoldenIterations << " iterations";
}

std::string golden_path(const GoldenCase& c) {
  return testing::kSourceDir + "/tests/golden/" + c.scenario + "-" + c.selector + ".json";
}

// Lists the JSON pointers where `expected` and `actual` differ.
void diff(const nlohmann::json& expected, const nlohmann::json& actual, const std::string& at,
          std::vector<std::string>& out) {
  if (expected.is_object() && actual.is_object()) {
    for (const auto& [key, value] : expected.items()) {
      if (!actual.contains(key)) {
        out.push_back(at + "/" + key + ": missing");
        continue;
      }
      diff(value, actual.at(key), at + "/" + key, out);
    }
    for (const auto& [key, value] : actual.items()) {
      if (!expected.contains(key)) out.push_back(at + "/" + key + ": unexpected");
    }
    return;
  }
  if (expected != actual) {
    out.push_back(at + ": expected " + expected.dump() + ", got " + actual.dump());
  }
}

class GoldenTest : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenTest, MatchesStoredResult) {
  const GoldenCase& c = GetParam();
  const auto scenario = testing::scaled_scenario(c.scenario, kGoldenIterations);
  nlohmann::json actual = io::result_to_json(testing::run_scenario(scenario, c.selector));
  actual["provenance"].erase("version");

  std::ifstream in(golden_path(c));
  ASSERT_TRUE(in) << "no golden file " << golden_path(c) << "; run tools/regen-golden.sh";
  nlohmann::json expected = nlohmann::json::parse(in);
  expected["provenance"].erase("version");
  std::vector<std::string> differences;
  diff(expected, actual, "", differences);
  std::string report;
  for (const auto& line : differences) report += "\n  " + line;
  EXPECT_TRUE(differences.empty())
      << golden_path(c) << " differs (after an intended model change run "
      << "tools/regen-golden.sh):" << report;
}

// Every shipped scenario under every registered selector: a scenario or a selector added
// without its golden files fails here ("no golden file").
std::vector<GoldenCase> shipped_cases() {
  const selectors::SelectorRegistry registry = testing::builtin_registry();
  std::vector<GoldenCase> cases;
  for (const std::string& scenario : data_file_names(testing::kSourceDir + "/scenarios")) {
    for (const auto& entry : registry.entries()) {
      cases.push_back(GoldenCase{scenario, entry.name});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Shipped, GoldenTest, ::testing::ValuesIn(shipped_cases()),
                         [](const ::testing::TestParamInfo<GoldenCase>& param_info) {
                           std::string name =
                               param_info.param.scenario + "_" + param_info.param.selector;
                           for (char& ch : name) {
                             if (ch == '-') ch = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace bindersim
