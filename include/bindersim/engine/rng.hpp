// The project's own random numbers: xoshiro256** seeded through splitmix64, one stream per
// entity, and distributions written here so that results do not depend on the standard library.
#pragma once

#include <array>
#include <cstdint>

namespace bindersim::engine {

// splitmix64 step: advances `state` and returns the next output.
std::uint64_t splitmix64(std::uint64_t& state);

// xoshiro256** generator. Same seed and stream id give the same sequence on any platform.
class Rng {
 public:
  // A stream for entity `stream_id` of a run with seed `seed`: independent streams per entity
  // keep one entity's draws from shifting when another entity draws more or less.
  Rng(std::uint64_t seed, std::uint64_t stream_id);

  std::uint64_t next_u64();
  // Uniform integer in [0, bound); bound > 0. Unbiased (Lemire's multiply and reject).
  std::uint64_t uniform_below(std::uint64_t bound);
  // Uniform integer in [lo, hi] (inclusive).
  std::int64_t uniform_int(std::int64_t lo, std::int64_t hi);
  // Uniform double in [0, 1) with 53 random bits.
  double uniform01();
  // True with probability p.
  bool bernoulli(double p);
  // Exponentially distributed with the given mean (>= 0).
  double exponential(double mean);

 private:
  std::array<std::uint64_t, 4> state_;
};

// Natural logarithm for x > 0 from IEEE basic operations only, so that it is bit-identical on
// every platform (the C library's log may differ in the last bit between libraries).
double portable_log(double x);

}  // namespace bindersim::engine
