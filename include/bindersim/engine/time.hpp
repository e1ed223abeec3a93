// Simulated time: integer nanoseconds.
#pragma once

#include <cstdint>
#include <limits>

namespace bindersim::engine {

// Simulated time and durations, in nanoseconds.
using SimTime = std::int64_t;

inline constexpr SimTime kNever = std::numeric_limits<SimTime>::max();
inline constexpr SimTime kMicrosecond = 1'000;
inline constexpr SimTime kMillisecond = 1'000'000;
inline constexpr SimTime kSecond = 1'000'000'000;

}  // namespace bindersim::engine
