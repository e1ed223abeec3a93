// The ids of the workload's random streams (engine::Rng's stream_id).
#pragma once

#include <cstdint>

namespace bindersim::workload {

// Random stream ids: one stream per client, background task and service node, no two alike.
// The compact ids (0x1000 + client, 0x3000 + background task, 0x2000 + 256 x process + node)
// are kept where they cannot meet, so that results of scenarios within those counts stay the
// same; every other entity takes a wide id, its kind in the top two bits, which no compact id
// reaches. A scenario file of at most 64 MiB lists fewer than 2^26 entities of any kind.
enum class StreamKind : std::uint64_t { kClient = 1, kHandler = 2, kBackground = 3 };
constexpr std::uint64_t kCompactEntities = 0x1000;  // per kind
constexpr std::uint64_t kCompactProcesses = 16;
constexpr std::uint64_t kCompactNodes = 256;  // per process

inline std::uint64_t wide_stream(StreamKind kind, std::uint64_t index) {
  return (static_cast<std::uint64_t>(kind) << 62) | index;
}

inline std::uint64_t stream_id(StreamKind kind, std::uint64_t index) {
  const std::uint64_t compact_base = static_cast<std::uint64_t>(kind) * kCompactEntities;
  return index < kCompactEntities ? compact_base + index : wide_stream(kind, index);
}

// A node's stream: `process` and `node` index into the scenario's lists (each below 2^31).
inline std::uint64_t handler_stream_id(std::uint64_t process, std::uint64_t node) {
  if (process < kCompactProcesses && node < kCompactNodes) {
    return stream_id(StreamKind::kHandler, process * kCompactNodes + node);
  }
  return wide_stream(StreamKind::kHandler, process << 31 | node);
}

}  // namespace bindersim::workload
