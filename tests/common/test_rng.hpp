// Test helper: a small seeded generator (splitmix64) for randomised test inputs.
#pragma once

#include <cstdint>

namespace bindersim::testing {

// Independent of the engine's Rng, so that a change there does not change the inputs of the
// tests that use this one; the same values on every machine.
class TestRng {
 public:
  explicit TestRng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform enough in [0, bound) for test inputs; bound > 0.
  std::uint64_t below(std::uint64_t bound) { return next() % bound; }
  // Uniform enough in [lo, hi] for test inputs; lo <= hi.
  int between(int lo, int hi) {
    return lo + static_cast<int>(below(static_cast<std::uint64_t>(hi - lo + 1)));
  }

 private:
  std::uint64_t state_;
};

}  // namespace bindersim::testing
