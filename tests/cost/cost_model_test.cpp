// The cost model's working-set refills: what a switch-in costs after the CPU's caches served
// other tasks, after a migration, and for a working set larger than the private caches.
#include "bindersim/cost/cost_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "bindersim/topology/topology.hpp"

namespace bindersim::cost {
namespace {

topology::Topology sa8155p() {
  const std::string dir = std::string(BINDERSIM_SOURCE_DIR) + "/topologies";
  return topology::Topology::load(dir + "/sa8155p.json", dir);
}

class CostModelTest : public ::testing::Test {
 protected:
  // Silver CPUs 0 and 1 share a cluster; the figures come from the topology file.
  topology::Topology topology_ = sa8155p();
  CostModel cost_{topology_};
  std::int64_t line_ = topology_.costs().line_bytes;
  std::int64_t cache_ = topology_.private_cache_bytes(0);
  double fetch_ = topology_.shared_fetch_ns_per_line(0);

  std::int64_t lines(std::int64_t bytes) const { return (bytes + line_ - 1) / line_; }
  engine::SimTime stall_of(std::int64_t lines, double ns_per_line) const {
    return std::llround(static_cast<double>(lines) * ns_per_line);
  }
};

TEST_F(CostModelTest, FirstSwitchInFetchesTheWholeWorkingSet) {
  cost_.add_task(0, 32 * 1024, false);
  EXPECT_EQ(cost_.on_switch_in(0, 0), stall_of(lines(32 * 1024), fetch_));
  EXPECT_EQ(cost_.counters().cache_misses, static_cast<std::uint64_t>(lines(32 * 1024)));
  EXPECT_DOUBLE_EQ(cost_.warmth(0, 0), 1.0);
}

TEST_F(CostModelTest, SwitchingBackInWithNothingInBetweenCostsNothing) {
  cost_.add_task(0, 32 * 1024, false);
  cost_.on_switch_in(0, 0);
  EXPECT_EQ(cost_.on_switch_in(0, 0), 0);
}

TEST_F(CostModelTest, OtherTasksEvictInProportionToWhatTheyBringIn) {
  ASSERT_EQ(cache_ % (4 * line_), 0);
  cost_.add_task(0, cache_ / 2, false);
  cost_.add_task(1, cache_ / 4, false);
  cost_.on_switch_in(0, 0);
  cost_.on_switch_in(1, 0);  // brings in a quarter of the cache
  EXPECT_DOUBLE_EQ(cost_.warmth(0, 0), 0.75);
  EXPECT_EQ(cost_.on_switch_in(0, 0), stall_of(lines(cache_ / 2) / 4, fetch_));
}

TEST_F(CostModelTest, AMigratedTaskFetchesFromTheCpuWhereItIsWarm) {
  cost_.add_task(0, 32 * 1024, false);
  cost_.on_switch_in(0, 0);
  EXPECT_EQ(cost_.on_switch_in(0, 1),
            stall_of(lines(32 * 1024), topology_.transfer_ns_per_line(0, 1)));
}

TEST_F(CostModelTest, AWorkingSetLargerThanThePrivateCachesRefillsOnlyWhatTheyHold) {
  // Four times the cache: the first switch-in fills the cache, and a second with nothing
  // evicted costs nothing. It used to cost three quarters of the working set every time.
  cost_.add_task(0, 4 * cache_, false);
  EXPECT_EQ(cost_.on_switch_in(0, 0), stall_of(lines(cache_), fetch_));
  EXPECT_EQ(cost_.on_switch_in(0, 0), 0);
  // After another task brought in half the cache, half of what it holds is refilled.
  cost_.add_task(1, cache_ / 2, false);
  cost_.on_switch_in(1, 0);
  EXPECT_EQ(cost_.on_switch_in(0, 0), stall_of(lines(cache_) / 2, fetch_));
}

}  // namespace
}  // namespace bindersim::cost
