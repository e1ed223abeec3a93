#include "bindersim/engine/rng.hpp"

#include <cmath>

#include "bindersim/common/error.hpp"

namespace bindersim::engine {
namespace {

constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Rng::Rng(std::uint64_t seed, std::uint64_t stream_id) {
  // Mix seed and stream id so that (seed, id) pairs map to unrelated states.
  std::uint64_t mix = seed;
  const std::uint64_t seed_hash = splitmix64(mix);
  std::uint64_t state = seed_hash ^ (stream_id * 0xd1b54a32d192ed03ULL + 0x8bb84b93962eacc9ULL);
  for (auto& word : state_) word = splitmix64(state);
}

std::uint64_t Rng::next_u64() {
  const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
  const std::uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return result;
}

std::uint64_t Rng::uniform_below(std::uint64_t bound) {
  BSIM_CHECK(bound > 0);
  Uint128 product = static_cast<Uint128>(next_u64()) * bound;
  auto low = static_cast<std::uint64_t>(product);
  if (low < bound) {
    const std::uint64_t threshold = (0 - bound) % bound;
    while (low < threshold) {
      product = static_cast<Uint128>(next_u64()) * bound;
      low = static_cast<std::uint64_t>(product);
    }
  }
  return static_cast<std::uint64_t>(product >> 64);
}

std::int64_t Rng::uniform_int(std::int64_t lo, std::int64_t hi) {
  BSIM_CHECK(lo <= hi);
  // Unsigned arithmetic: the span of [INT64_MIN, INT64_MAX] does not fit a signed integer.
  const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) + 1;
  const std::uint64_t draw = span == 0 ? next_u64() : uniform_below(span);  // 0: all 2^64 values
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + draw);
}

double Rng::uniform01() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

bool Rng::bernoulli(double p) { return uniform01() < p; }

double Rng::exponential(double mean) {
  // 1 - u is in (0, 1], so the logarithm is finite.
  return -mean * portable_log(1.0 - uniform01());
}

double portable_log(double x) {
  BSIM_CHECK(x > 0);
  int exponent = 0;
  double mantissa = std::frexp(x, &exponent);  // x = mantissa * 2^exponent, mantissa in [0.5, 1)
  if (mantissa < 0.70710678118654752440) {
    mantissa *= 2.0;
    exponent -= 1;
  }
  // ln(m) = 2 atanh(s) with s = (m - 1) / (m + 1), |s| <= 0.1716: the series converges fast.
  const double s = (mantissa - 1.0) / (mantissa + 1.0);
  const double s2 = s * s;
  double term = s;
  double sum = 0.0;
  for (int k = 1; k <= 25; k += 2) {
    sum += term / k;
    term *= s2;
  }
  constexpr double kLn2 = 0.69314718055994530942;
  return 2.0 * sum + exponent * kLn2;
}

}  // namespace bindersim::engine
