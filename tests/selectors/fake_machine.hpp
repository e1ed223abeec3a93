// Selector test support: the shipped SA8155P topology, and a machine whose CPUs are idle or
// busy as a test sets them.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <filesystem>
#include <utility>
#include <vector>

#include "bindersim/selectors/selector.hpp"
#include "bindersim/topology/topology.hpp"

namespace bindersim::testing {

// The shipped SA8155P (silver 0-3 = cluster 0, gold 4-6 = cluster 1, prime 7 = cluster 2).
inline topology::Topology load_sa8155p() {
  return topology::Topology::load("sa8155p",
                                  std::filesystem::path(BINDERSIM_SOURCE_DIR) / "topologies");
}

// The topology given, and each CPU idle or busy as the test sets it (all busy at first).
class FakeMachine final : public selectors::MachineView {
 public:
  explicit FakeMachine(const topology::Topology& topology)
      : topology_(topology), idle_(static_cast<std::size_t>(topology.num_cpus()), false) {}

  void set_idle(int cpu, bool idle) { idle_.at(static_cast<std::size_t>(cpu)) = idle; }
  // One flag per CPU, in CPU order.
  void set_idle(std::vector<bool> idle) {
    ASSERT_EQ(idle.size(), idle_.size());
    idle_ = std::move(idle);
  }
  // The caller's CPU gets `caller_idle`, every other CPU the opposite, so that a policy asking
  // about the wrong CPU gets the wrong answer.
  void set_caller_idle(int caller_cpu, bool caller_idle) {
    for (std::size_t cpu = 0; cpu < idle_.size(); ++cpu) idle_[cpu] = !caller_idle;
    set_idle(caller_cpu, caller_idle);
  }

  bool available_idle_cpu(int cpu) const override {
    EXPECT_TRUE(cpu >= 0 && cpu < topology_.num_cpus()) << "asked about CPU " << cpu;
    return idle_.at(static_cast<std::size_t>(cpu));
  }
  const topology::Topology& topology() const override { return topology_; }

 private:
  const topology::Topology& topology_;
  std::vector<bool> idle_;
};

}  // namespace bindersim::testing
