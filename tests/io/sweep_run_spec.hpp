// A run of a test sweep "demo" of schd-dbg with one axis, payload, set through the second step
// of the client's iteration: what the sweep merge and report tests build their records from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "bindersim/sweep/sweep.hpp"

namespace bindersim::testing {

inline sweep::RunSpec sweep_run_spec(std::size_t index, const std::string& selector,
                                     std::uint64_t seed, int payload) {
  sweep::RunSpec run;
  run.index = index;
  run.sweep = "demo";
  run.scenario = "schd-dbg";
  run.scenario_hash = "00000000000000aa";
  run.axes = {{"payload", payload}};
  run.overrides = {{"clients.0.iteration.2.payload_bytes", payload}};
  run.selector = selector;
  run.placement = "mainline";
  run.seed = seed;
  run.run_id = sweep::run_id_of(run);
  return run;
}

}  // namespace bindersim::testing
