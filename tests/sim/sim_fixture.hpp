// Shared set-up for whole-simulation tests: the shipped topology and scenarios, scaled down.
#pragma once

#include <string>

#include "bindersim/selectors/registry.hpp"
#include "bindersim/sim/simulation.hpp"
#include "bindersim/topology/topology.hpp"
#include "bindersim/workload/scenario.hpp"

namespace bindersim::testing {

inline const std::string kSourceDir = BINDERSIM_SOURCE_DIR;

inline selectors::SelectorRegistry builtin_registry() {
  selectors::SelectorRegistry registry;
  selectors::register_builtin_selectors(registry);
  return registry;
}

// A shipped scenario with every client's iterations set to `iterations` (CI stays fast).
inline workload::Scenario scaled_scenario(const std::string& name, std::int64_t iterations) {
  // As `bindersim run --set`, so that the result records the override as the CLI's does.
  return workload::load_scenario(
      kSourceDir + "/scenarios/" + name + ".json", kSourceDir + "/scenarios", builtin_registry(),
      {workload::parse_override("clients.*.iterations=" + std::to_string(iterations))});
}

inline topology::Topology topology_of(const workload::Scenario& scenario) {
  return workload::load_topology(scenario, kSourceDir + "/topologies");
}

// Runs under `selector` of `registry`, with the scenario's placement unless `placement` names
// another.
inline stats::RunResult run_scenario(
    const workload::Scenario& scenario, const std::string& selector, std::uint64_t seed = 1,
    const std::string& placement = "",
    const selectors::SelectorRegistry& registry = builtin_registry()) {
  const auto topology = topology_of(scenario);
  sim::RunOptions options;
  options.selector = selector;
  options.seed = seed;
  if (!placement.empty()) options.placement = placement;
  return sim::run(scenario, topology, registry, options);
}

}  // namespace bindersim::testing
