// One simulation run: wires topology, engine, scheduler, cost model, binder driver, selector
// and workload together for a scenario, runs it and returns its result.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "bindersim/stats/result.hpp"
#include "bindersim/workload/scenario.hpp"

namespace bindersim::topology {
class Topology;
}
namespace bindersim::selectors {
class SelectorRegistry;
}
namespace bindersim::trace {
class Tracer;
}

namespace bindersim::sim {

// How far a run has come, as reported to a ProgressSink.
struct Progress {
  std::int64_t simulated_ns = 0;     // simulated time reached
  std::uint64_t events = 0;          // events dispatched so far
  std::uint64_t calls_done = 0;      // two-way calls completed so far
  std::uint64_t calls_expected = 0;  // expected_calls() of the scenario (0: unknown)
};

// Receives a run's progress now and then (every kProgressEvents events) from the thread that
// runs it. It only observes: a run reports the same result with or without one.
class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  virtual void on_progress(const Progress& progress) = 0;
};

// Events between two progress reports: cheap enough to check, frequent enough (a few hundred
// reports per second of wall time) for a display refreshed four times a second.
inline constexpr std::uint64_t kProgressEvents = 1 << 15;

// Command-line overrides of the scenario's own settings, and the run's observers.
struct RunOptions {
  std::optional<std::string> selector;
  std::optional<std::string> placement;
  std::optional<std::uint64_t> seed;
  std::string log_level = "warn";    // spdlog level name for every layer's logger (stderr)
  trace::Tracer* tracer = nullptr;   // receives the run's trace events; not owned
  ProgressSink* progress = nullptr;  // told the run's progress; not owned
  // For tests: drop stale events every this many events once more than `compact_at_pending`
  // are queued (Engine::set_compaction); 0 keeps the engine's defaults.
  std::uint64_t compact_every_events = 0;
  std::size_t compact_at_pending = 0;
};

// The two-way calls a run of `scenario` is expected to complete: each client's iterations times
// the calls of one iteration, counting the calls its targets' handlers make in turn (averaged
// over random targets). 0 when it cannot be told (handlers that call each other too deep).
std::uint64_t expected_calls(const workload::Scenario& scenario);

// Runs `scenario` on `topology`. Deterministic: equal inputs give an equal result (and an
// equal fingerprint). Throws ConfigError for an unknown selector or placement.
stats::RunResult run(const workload::Scenario& scenario, const topology::Topology& topology,
                     const selectors::SelectorRegistry& registry, const RunOptions& options);

}  // namespace bindersim::sim
