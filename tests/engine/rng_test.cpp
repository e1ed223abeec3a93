#include "bindersim/engine/rng.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <vector>

namespace bindersim::engine {
namespace {

// ---------------------------------------------------------------------------------------------
// An independent reference, written from the published algorithms (Blackman and Vigna,
// "Scrambled linear pseudorandom number generators", and Steele, Lea and Flood's SplitMix64),
// not from the code under test. It is itself checked against published test vectors below.

struct ReferenceSplitMix64 {
  std::uint64_t x;
  std::uint64_t next() {
    std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
};

struct ReferenceXoshiro256StarStar {
  std::array<std::uint64_t, 4> s;
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t next() {
    const std::uint64_t result = rotl(s[1] * 5, 7) * 9;
    const std::uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
  }
};

// The project's seeding, as documented: the seed goes through one splitmix64 step; the stream
// id, multiplied and offset by two odd constants, is xored in; four splitmix64 outputs of that
// value fill the xoshiro256** state.
ReferenceXoshiro256StarStar reference_for(std::uint64_t seed, std::uint64_t stream) {
  ReferenceSplitMix64 seed_mixer{seed};
  const std::uint64_t seed_hash = seed_mixer.next();
  ReferenceSplitMix64 filler{seed_hash ^ (stream * 0xD1B54A32D192ED03ULL + 0x8BB84B93962EACC9ULL)};
  ReferenceXoshiro256StarStar gen{};
  for (auto& word : gen.s) word = filler.next();
  return gen;
}

TEST(RngReferenceTest, SplitMix64MatchesThePublishedVector) {
  // SplitMix64 from state 0 (the vector used by Java's SplittableRandom and Vigna's code).
  ReferenceSplitMix64 reference{0};
  EXPECT_EQ(reference.next(), 0xE220A8397B1DCDAFULL);
  EXPECT_EQ(reference.next(), 0x6E789E6AA1B965F4ULL);
  EXPECT_EQ(reference.next(), 0x06C45D188009454FULL);
  // The project's splitmix64 gives the same outputs and advances its state the same way.
  std::uint64_t state = 0;
  EXPECT_EQ(splitmix64(state), 0xE220A8397B1DCDAFULL);
  EXPECT_EQ(splitmix64(state), 0x6E789E6AA1B965F4ULL);
  EXPECT_EQ(splitmix64(state), 0x06C45D188009454FULL);
  EXPECT_EQ(state, 3 * 0x9E3779B97F4A7C15ULL);
}

TEST(RngReferenceTest, Xoshiro256StarStarMatchesHandComputedOutputs) {
  // State {1, 2, 3, 4}: the first output is rotl(2 * 5, 7) * 9 = 1280 * 9 = 11520; after one
  // step s[1] is 0 (so the second output is 0); after two steps s[1] is 262149, giving
  // rotl(262149 * 5, 7) * 9 = 1509978240.
  ReferenceXoshiro256StarStar reference{{1, 2, 3, 4}};
  EXPECT_EQ(reference.next(), 11520u);
  EXPECT_EQ(reference.next(), 0u);
  EXPECT_EQ(reference.next(), 1509978240u);
  EXPECT_EQ(reference.next(), 1215971899390074240ULL);
}

TEST(RngTest, MatchesTheIndependentReference) {
  // For several (seed, stream) pairs, the first 1000 outputs equal the reference's.
  for (std::uint64_t seed : {0ULL, 1ULL, 42ULL, 0xFFFFFFFFFFFFFFFFULL}) {
    for (std::uint64_t stream : {0ULL, 1ULL, 7ULL, 1ULL << 40}) {
      Rng rng(seed, stream);
      auto reference = reference_for(seed, stream);
      for (int i = 0; i < 1000; ++i) {
        ASSERT_EQ(rng.next_u64(), reference.next())
            << "seed " << seed << " stream " << stream << " draw " << i;
      }
    }
  }
}

TEST(RngTest, PinnedFirstOutputsOfSeedOneStreamZero) {
  // Pinned once, and equal to the independent reference above: a change here changes every
  // simulation result and every golden file.
  const std::array<std::uint64_t, 4> expected = {0xC43BDA27588928C8ULL, 0xBAAC2D3B41310D94ULL,
                                                 0x82708F920CE7D6C5ULL, 0x74EAE290D92B9A91ULL};
  Rng rng(1, 0);
  auto reference = reference_for(1, 0);
  for (std::uint64_t value : expected) {
    EXPECT_EQ(reference.next(), value);
    EXPECT_EQ(rng.next_u64(), value);
  }
}

// ---------------------------------------------------------------------------------------------
// Streams

TEST(RngTest, SameSeedAndStreamGiveTheSameSequence) {
  Rng a(12345, 3);
  Rng b(12345, 3);
  for (int i = 0; i < 10'000; ++i) ASSERT_EQ(a.next_u64(), b.next_u64()) << "draw " << i;
}

// How many of the first `n` outputs of two generators are equal position by position.
int equal_positions(Rng a, Rng b, int n) {
  int equal = 0;
  for (int i = 0; i < n; ++i) equal += a.next_u64() == b.next_u64() ? 1 : 0;
  return equal;
}

TEST(RngTest, DifferentStreamsOrSeedsGiveDifferentSequences) {
  EXPECT_EQ(equal_positions(Rng(1, 0), Rng(1, 1), 1000), 0);
  EXPECT_EQ(equal_positions(Rng(1, 0), Rng(2, 0), 1000), 0);
  // Swapping seed and stream is not the same stream either.
  EXPECT_EQ(equal_positions(Rng(1, 2), Rng(2, 1), 1000), 0);
}

TEST(RngTest, AGridOfSeedsAndStreamsStartsWithDistinctValues) {
  // 64 x 64 (seed, stream) pairs: no two share a first output (a collision among 4096 random
  // 64-bit values has probability below 1e-12).
  std::set<std::uint64_t> first;
  for (std::uint64_t seed = 0; seed < 64; ++seed) {
    for (std::uint64_t stream = 0; stream < 64; ++stream) {
      first.insert(Rng(seed, stream).next_u64());
    }
  }
  EXPECT_EQ(first.size(), 64u * 64u);
}

TEST(RngTest, OutputBitsAreBalanced) {
  // Over 10,000 outputs each of the 64 bits is set about half the time (binomial sd = 50).
  Rng rng(3, 0);
  std::array<int, 64> ones{};
  constexpr int kDraws = 10'000;
  for (int i = 0; i < kDraws; ++i) {
    const std::uint64_t v = rng.next_u64();
    for (int bit = 0; bit < 64; ++bit) ones[bit] += static_cast<int>((v >> bit) & 1);
  }
  for (int bit = 0; bit < 64; ++bit) {
    EXPECT_GT(ones[bit], kDraws / 2 - 300) << "bit " << bit;
    EXPECT_LT(ones[bit], kDraws / 2 + 300) << "bit " << bit;
  }
}

// ---------------------------------------------------------------------------------------------
// Distributions

TEST(RngTest, UniformBelowStaysInRange) {
  Rng rng(5, 0);
  const std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  for (std::uint64_t bound :
       std::vector<std::uint64_t>{1, 2, 3, 7, 10, 1000, (1ULL << 63) + 1, kMax}) {
    for (int i = 0; i < 2000; ++i) ASSERT_LT(rng.uniform_below(bound), bound) << bound;
  }
  for (int i = 0; i < 100; ++i) EXPECT_EQ(rng.uniform_below(1), 0u);
}

TEST(RngTest, UniformBelowIsRoughlyUniform) {
  // Chi-square over 10 cells with 100,000 seeded draws: 9 degrees of freedom, mean 9, and
  // P(chi2 > 27.9) = 0.001. The bound 40 is generous; a generator that favours one cell by
  // even 5% exceeds it many times over.
  constexpr int kCells = 10;
  constexpr int kDraws = 100'000;
  for (std::uint64_t seed : {1ULL, 2ULL, 3ULL}) {
    Rng rng(seed, 9);
    std::array<int, kCells> counts{};
    for (int i = 0; i < kDraws; ++i) ++counts[rng.uniform_below(kCells)];
    const double expected = static_cast<double>(kDraws) / kCells;
    double chi2 = 0;
    for (int c : counts) chi2 += (c - expected) * (c - expected) / expected;
    EXPECT_LT(chi2, 40.0) << "seed " << seed;
  }
}

TEST(RngTest, UniformBelowHasNoModuloBiasForLargeBounds) {
  // With bound = 3 * 2^62, taking next_u64() % bound would put values below 2^62 twice as
  // often as the others (1/2 instead of 1/3 of the draws). Unbiased: 1/3 (sd 0.003 here).
  Rng rng(11, 0);
  const std::uint64_t bound = 3ULL << 62;
  constexpr int kDraws = 30'000;
  int low = 0;
  for (int i = 0; i < kDraws; ++i) low += rng.uniform_below(bound) < (1ULL << 62) ? 1 : 0;
  EXPECT_NEAR(static_cast<double>(low) / kDraws, 1.0 / 3.0, 0.02);
}

TEST(RngTest, UniformIntHitsBothInclusiveBoundsAndNothingOutside) {
  Rng rng(17, 2);
  std::set<std::int64_t> seen;
  for (int i = 0; i < 10'000; ++i) {
    const std::int64_t v = rng.uniform_int(-3, 3);
    ASSERT_GE(v, -3);
    ASSERT_LE(v, 3);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 7u);  // every value of [-3, 3], including both ends

  for (int i = 0; i < 100; ++i) EXPECT_EQ(rng.uniform_int(5, 5), 5);

  const std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  const std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  std::set<std::int64_t> top;
  for (int i = 0; i < 200; ++i) top.insert(rng.uniform_int(kMax - 1, kMax));
  EXPECT_EQ(top, (std::set<std::int64_t>{kMax - 1, kMax}));
  std::set<std::int64_t> bottom;
  for (int i = 0; i < 200; ++i) bottom.insert(rng.uniform_int(kMin, kMin + 1));
  EXPECT_EQ(bottom, (std::set<std::int64_t>{kMin, kMin + 1}));
}

TEST(RngTest, UniformIntHandlesRangesWiderThanInt64Max) {
  // hi - lo does not fit in int64 for these ranges; the draws must still be uniform over
  // [lo, hi]: the full range is negative half the time, [-1, max] is above 2^62 half the time.
  const std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  const std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  Rng rng(19, 2);
  int negative = 0;
  for (int i = 0; i < 1000; ++i) negative += rng.uniform_int(kMin, kMax) < 0 ? 1 : 0;
  EXPECT_GT(negative, 400);
  EXPECT_LT(negative, 600);

  int high = 0;
  for (int i = 0; i < 1000; ++i) {
    const std::int64_t v = rng.uniform_int(-1, kMax);
    ASSERT_GE(v, -1);
    high += v >= (std::int64_t{1} << 62) ? 1 : 0;
  }
  EXPECT_GT(high, 400);
  EXPECT_LT(high, 600);

  int low = 0;
  for (int i = 0; i < 1000; ++i) {
    const std::int64_t v = rng.uniform_int(kMin, kMax - 1);
    ASSERT_LT(v, kMax);
    low += v < 0 ? 1 : 0;
  }
  EXPECT_GT(low, 400);
  EXPECT_LT(low, 600);
}

TEST(RngTest, Uniform01IsInTheHalfOpenUnitInterval) {
  Rng rng(23, 0);
  double sum = 0;
  constexpr int kDraws = 100'000;
  for (int i = 0; i < kDraws; ++i) {
    const double u = rng.uniform01();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  // Mean 1/2, sd of the mean about 0.0009.
  EXPECT_NEAR(sum / kDraws, 0.5, 0.005);
}

TEST(RngTest, BernoulliFollowsItsProbability) {
  Rng rng(29, 0);
  int hits = 0;
  constexpr int kDraws = 100'000;
  for (int i = 0; i < kDraws; ++i) hits += rng.bernoulli(0.25) ? 1 : 0;
  EXPECT_NEAR(static_cast<double>(hits) / kDraws, 0.25, 0.01);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_FALSE(rng.bernoulli(0.0));
    EXPECT_TRUE(rng.bernoulli(1.0));
  }
}

TEST(RngTest, BernoulliIsFalseForADrawEqualToItsProbability) {
  // bernoulli(p) is true for a draw u < p: of the draws in [0, 1) that is a share p exactly, and
  // bernoulli(0) is never true. A copy of the stream knows the next draw u: bernoulli(u) must be
  // false and bernoulli of the next double above u true.
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    Rng rng(seed, 0);
    Rng peek = rng;
    const double u = peek.uniform01();
    Rng same = rng;
    EXPECT_FALSE(rng.bernoulli(u));
    EXPECT_TRUE(same.bernoulli(std::nextafter(u, 1.0)));
  }
}

TEST(RngTest, AnExponentialDrawIsTheInverseCdfOfOneMinusTheUniformDraw) {
  // exponential(m) = -m x log(1 - u) for the next uniform draw u in [0, 1): a draw of 0 gives 0,
  // never log(0), and a larger u a longer interval. A copy of the stream knows u.
  constexpr double kMean = 1500.0;
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    Rng rng(seed, 2);
    Rng peek = rng;
    const double u = peek.uniform01();
    EXPECT_EQ(rng.exponential(kMean), -kMean * portable_log(1.0 - u)) << "seed " << seed;
  }
}

TEST(RngTest, ExponentialMeanWithinTwoPercent) {
  // 200,000 draws: the sample mean's relative sd is 1/sqrt(200000) = 0.22%, so 2% is far out.
  // The variance of an exponential is mean^2, which checks the shape as well as the scale.
  constexpr int kDraws = 200'000;
  constexpr double kMean = 1500.0;
  Rng rng(31, 4);
  double sum = 0;
  double sum_sq = 0;
  for (int i = 0; i < kDraws; ++i) {
    const double x = rng.exponential(kMean);
    ASSERT_GE(x, 0.0);
    ASSERT_TRUE(std::isfinite(x));
    sum += x;
    sum_sq += x * x;
  }
  const double mean = sum / kDraws;
  const double variance = sum_sq / kDraws - mean * mean;
  EXPECT_NEAR(mean, kMean, 0.02 * kMean);
  EXPECT_NEAR(variance, kMean * kMean, 0.05 * kMean * kMean);
  EXPECT_EQ(rng.exponential(0.0), 0.0);
}

// ---------------------------------------------------------------------------------------------
// portable_log

TEST(PortableLogTest, MatchesStdLogOverAWideRange) {
  // Relative error within 1e-15 (about 4.5 ulp) from 1e-300 to 1e300, log-spaced.
  for (double exponent = -300.0; exponent <= 300.0; exponent += 0.37) {
    const double x = std::pow(10.0, exponent);
    const double expected = std::log(x);
    EXPECT_NEAR(portable_log(x), expected, 1e-15 * std::fabs(expected)) << "x = " << x;
  }
}

TEST(PortableLogTest, MatchesStdLogNearOne) {
  // Close to 1 the result is tiny, so the relative error is the demanding measure.
  EXPECT_EQ(portable_log(1.0), 0.0);
  for (int k = 1; k <= 15; ++k) {
    for (double x : {1.0 + std::pow(10.0, -k), 1.0 - std::pow(10.0, -k)}) {
      const double expected = std::log(x);
      EXPECT_NEAR(portable_log(x), expected, 1e-15 * std::fabs(expected)) << "x = 1 +- 1e-" << k;
    }
  }
  // Each side of the sqrt(1/2) switch point of the mantissa reduction, and powers of two.
  for (double x : {0.70710678118654746, 0.70710678118654757, 1.4142135623730949, 1.4142135623730951,
                   0.5, 2.0, 1024.0, 0x1p-1000, 0x1p1000}) {
    const double expected = std::log(x);
    EXPECT_NEAR(portable_log(x), expected, 1e-15 * std::fabs(expected)) << "x = " << x;
  }
}

TEST(PortableLogTest, MatchesStdLogAtTheEndsOfTheDoubleRange) {
  const double values[] = {std::numeric_limits<double>::min(),         // smallest normal
                           std::numeric_limits<double>::denorm_min(),  // smallest subnormal
                           1e-310, std::numeric_limits<double>::max()};
  for (double x : values) {
    const double expected = std::log(x);
    EXPECT_NEAR(portable_log(x), expected, 1e-15 * std::fabs(expected)) << "x = " << x;
  }
}

TEST(PortableLogTest, UnitIntervalDrawsMatchStdLog) {
  // The exponential distribution takes log(1 - u) for u in [0, 1): check many such values.
  Rng rng(37, 0);
  for (int i = 0; i < 100'000; ++i) {
    const double x = 1.0 - rng.uniform01();
    const double expected = std::log(x);
    if (expected == 0.0) {
      ASSERT_EQ(portable_log(x), 0.0);
    } else {
      ASSERT_NEAR(portable_log(x), expected, 1e-15 * std::fabs(expected)) << "x = " << x;
    }
  }
}

}  // namespace
}  // namespace bindersim::engine
