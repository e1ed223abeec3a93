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

namespace bindersim::sim {

// Command-line overrides of the scenario's own settings.
struct RunOptions {
  std::optional<std::string> selector;
  std::optional<std::string> placement;
  std::optional<std::uint64_t> seed;
  std::string log_level = "warn";  // spdlog level name for every layer's logger (stderr)
};

// Runs `scenario` on `topology`. Deterministic: equal inputs give an equal result (and an
// equal fingerprint). Throws ConfigError for an unknown selector or placement.
stats::RunResult run(const workload::Scenario& scenario, const topology::Topology& topology,
                     const selectors::SelectorRegistry& registry, const RunOptions& options);

}  // namespace bindersim::sim
