// Limits of sweep input: the number of runs a sweep expands into, counted before anything is
// built, and runs files read only as regular files.
#include <gtest/gtest.h>

#include <string>

#include "bindersim/common/error.hpp"
#include "bindersim/common/json_reader.hpp"
#include "bindersim/sweep/sweep.hpp"

namespace bindersim::sweep {
namespace {

using nlohmann::json;

// The message of the ConfigError that parsing the sweep document `value` throws ("" if none).
std::string parse_error_of(json value) {
  value["schema"] = "bindersim.sweep/1";
  value["name"] = "limits";
  value["scenario"] = "schd-dbg";
  try {
    const JsonDocument document = JsonDocument::from_value(value, "sweeps/test.json");
    parse_sweep(document.root(), "sweeps/test.json");
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "";
}

// An axis of `count` distinct values (1, 2, ..., count) on clients.<index>.iterations.
json axis(int index, int count) {
  json values = json::array();
  for (int v = 1; v <= count; ++v) values.push_back(v);
  return {{"key", "clients." + std::to_string(index) + ".iterations"}, {"values", values}};
}

TEST(SweepLimitTest, TooManyRunsAreRefusedAtTheAxesWithTheCount) {
  // 6 axes of 20 values: 64 million points, which took gigabytes to expand.
  json axes = json::array();
  for (int a = 0; a < 6; ++a) axes.push_back(axis(a, 20));
  EXPECT_EQ(parse_error_of({{"axes", axes}, {"selectors", {"fifo", "ctabs"}}, {"seeds", 3}}),
            "sweeps/test.json: /axes: expected at most 100000 runs (points x selectors x seeds), "
            "got 384000000 (64000000 point(s) x 2 selector(s) x 3 seed(s)); use fewer values, "
            "selectors or seeds, or split the sweep");
}

TEST(SweepLimitTest, ACountBeyond64BitsIsRefusedWithoutOverflowing) {
  json axes = json::array();
  for (int a = 0; a < 70; ++a) axes.push_back(axis(a, 2));
  const std::string message = parse_error_of({{"axes", axes}, {"seeds", 1}});
  EXPECT_EQ(message.rfind("sweeps/test.json: /axes: expected at most 100000 runs (points x "
                          "selectors x seeds), got at least 18446744073709551615 (",
                          0),
            0u)
      << message;
}

TEST(SweepLimitTest, ManySeedsAreRefusedAtTheSeeds) {
  EXPECT_EQ(parse_error_of({{"axes", json::array({axis(0, 2)})}, {"seeds", 60000}}),
            "sweeps/test.json: /seeds: expected at most 100000 runs (points x selectors x seeds), "
            "got 120000 (2 point(s) x 1 selector(s) x 60000 seed(s)); use fewer values, "
            "selectors or seeds, or split the sweep");
}

TEST(SweepLimitTest, ACountOfSeedsWrittenAsAFloatCountsToo) {
  // 1e6 and 100001.0 used to pass the count and expand into a million runs.
  EXPECT_EQ(parse_error_of({{"seeds", 1e6}}),
            "sweeps/test.json: /seeds: expected at most 100000 runs (points x selectors x seeds), "
            "got 1000000 (1 point(s) x 1 selector(s) x 1000000 seed(s)); use fewer values, "
            "selectors or seeds, or split the sweep");
  EXPECT_NE(parse_error_of({{"seeds", 100001.0}}).find("got 100001 (1 point(s)"),
            std::string::npos);
  EXPECT_EQ(parse_error_of({{"seeds", 3.0}}), "");
}

TEST(SweepLimitTest, TheLimitItselfIsAccepted) {
  // 100 x 10 x 100 = 100000 runs: parsed (values and seeds checked for repeats quickly).
  json seeds = json::array();
  for (int s = 0; s < 100; ++s) seeds.push_back(s);
  EXPECT_EQ(parse_error_of({{"axes", json::array({axis(0, 100), axis(1, 10)})}, {"seeds", seeds}}),
            "");
}

TEST(SweepLimitTest, RepeatedValuesAreStillFoundAcrossNumberTypes) {
  EXPECT_EQ(parse_error_of({{"axes", json::array({{{"key", "clients.0.iterations"},
                                                   {"values", json::array({1, 2, 1.0})}}})},
                            {"seeds", 1}}),
            "sweeps/test.json: /axes/0/values/2: value 1.0 given twice");
}

TEST(SweepLimitTest, ARunsFileMustBeARegularFile) {
  try {
    read_runs_file("/dev/zero");
    FAIL() << "no ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_STREQ(error.what(),
                 "/dev/zero: expected a runs file (JSON Lines), got a character device");
  }
}

}  // namespace
}  // namespace bindersim::sweep
