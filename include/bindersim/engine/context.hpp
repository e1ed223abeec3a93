// SimContext: what every component of one simulation shares (topology, engine, seed, loggers).
// Two simulations in one process have two contexts and share nothing mutable.
#pragma once

#include <spdlog/spdlog.h>
#include <cstdint>
#include <memory>

#include "bindersim/engine/engine.hpp"
#include "bindersim/engine/rng.hpp"

namespace bindersim::topology {
class Topology;
}
namespace bindersim::trace {
class Tracer;
}

namespace bindersim::engine {

struct SimContext {
  SimContext(const topology::Topology& topology_in, std::uint64_t seed_in);

  const topology::Topology& topology;
  std::uint64_t seed;
  Engine engine;
  // One logger per layer, not registered globally; by default they log warnings to stderr.
  std::shared_ptr<spdlog::logger> sched_log;
  std::shared_ptr<spdlog::logger> binder_log;
  std::shared_ptr<spdlog::logger> workload_log;
  // Receives the scheduler's and the binder driver's trace events; nullptr (the default) when
  // the run is not traced. Not owned.
  trace::Tracer* tracer = nullptr;

  // Sets the level of every layer's logger ("warn" by default; "debug" traces decisions).
  void set_log_level(spdlog::level::level_enum level) const;

  // The random stream of entity `stream_id` of this run (independent per entity).
  Rng rng(std::uint64_t stream_id) const { return Rng(seed, stream_id); }
};

// Writes a debug record to `logger`: `format` with `args` (fmt::make_format_args of lvalues),
// whatever the logger's level (the caller asks should_log() first). Formatted out of line, so
// that a hot path that may log carries no formatting code: in a large translation unit that
// code would take the compiler's inlining budget from the hot calls.
void log_debug(spdlog::logger& logger, fmt::string_view format, fmt::format_args args);

}  // namespace bindersim::engine
