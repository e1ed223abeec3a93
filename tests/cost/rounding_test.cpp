// round_half_away(): the cost model's replacement for std::llround on its counters.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "bindersim/cost/cost_model.hpp"

namespace bindersim::cost {
namespace {

// Every value rounds exactly as llround does: halves away from zero, the largest double below
// one half down, and integers beyond 2^52 (which have no fraction) unchanged.
TEST(RoundHalfAwayTest, MatchesLlroundOnEdgeValues) {
  const double below_half = std::nextafter(0.5, 0.0);
  const std::vector<double> values = {0.0,
                                      -0.0,
                                      0.5,
                                      -0.5,
                                      1.5,
                                      2.5,
                                      -2.5,
                                      below_half,
                                      -below_half,
                                      1.0 + below_half,
                                      4503599627370495.5,  // 2^52 - 0.5
                                      4503599627370497.0,  // 2^52 + 1
                                      9007199254740993.0,  // 2^53 + 1 (not representable)
                                      std::ldexp(1.0, 62),
                                      -std::ldexp(1.0, 62),
                                      123456.49999999999,
                                      123456.5};
  for (double value : values) {
    EXPECT_EQ(round_half_away(value), std::llround(value)) << value;
  }
}

// A sweep of fractions around every half between -100 and 100, in steps of 1/64 and one ulp
// either side of each half.
TEST(RoundHalfAwayTest, MatchesLlroundAcrossASweep) {
  for (int i = -6400; i <= 6400; ++i) {
    const double value = i / 64.0;
    EXPECT_EQ(round_half_away(value), std::llround(value)) << value;
    const double up = std::nextafter(value, std::numeric_limits<double>::infinity());
    const double down = std::nextafter(value, -std::numeric_limits<double>::infinity());
    EXPECT_EQ(round_half_away(up), std::llround(up)) << up;
    EXPECT_EQ(round_half_away(down), std::llround(down)) << down;
  }
}

}  // namespace
}  // namespace bindersim::cost
