// The cost model's working-set refills: what a switch-in costs after the CPU's caches served
// other tasks, after a migration, and for a working set larger than the private caches; and
// what a transfer of data between CPUs counts.
#include "bindersim/cost/cost_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "bindersim/common/json_reader.hpp"
#include "bindersim/topology/topology.hpp"

namespace bindersim::cost {
namespace {

topology::Topology sa8155p() {
  const std::string dir = std::string(BINDERSIM_SOURCE_DIR) + "/topologies";
  return topology::Topology::load(dir + "/sa8155p.json", dir);
}

// SM8850 with the prime cluster's private cache doubled. Each cluster shares an L2, the first
// shared level and what a CPU fetches from; a line written in the other cluster comes through
// the system cache, at another cost. (On SA8155P every CPU's first shared level is the one L3:
// a line from another CPU costs the same as a fetch.) The doubled cache makes a migration from
// a performance CPU to a prime CPU one into a larger private cache.
topology::Topology sm8850_with_larger_prime_cache() {
  const std::string path = std::string(BINDERSIM_SOURCE_DIR) + "/topologies/sm8850.json";
  std::ifstream in(path);
  nlohmann::json doc = nlohmann::json::parse(in);
  for (nlohmann::json& cluster : doc.at("clusters")) {
    if (cluster.at("name") != "prime") continue;
    for (nlohmann::json& cache : cluster.at("private_caches")) {
      cache.at("size_kib") = 2 * cache.at("size_kib").get<int>();
    }
  }
  return topology::Topology::from_json(
      JsonNode(doc, std::make_shared<const std::string>(path + " (edited)"), ""));
}

class CostModelTest : public ::testing::Test {
 protected:
  // The topology `load` returns (SA8155P unless a fixture below names another), built in place.
  explicit CostModelTest(topology::Topology (*load)() = sa8155p) : topology_(load()) {}

  // SA8155P: silver CPUs 0 and 1 share a cluster; the figures come from the topology file.
  topology::Topology topology_;
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

TEST_F(CostModelTest, ATaskWithoutAWorkingSetStaysWarmWhateverOthersEvict) {
  // Nothing of a task without a working set can be evicted: once it has run on a CPU, it is
  // wholly warm there, also after another task has filled the whole cache, and switching it
  // back in costs nothing.
  cost_.add_task(0, 0, false);
  cost_.add_task(1, cache_, false);
  EXPECT_EQ(cost_.on_switch_in(0, 0), 0);
  cost_.on_switch_in(1, 0);
  EXPECT_DOUBLE_EQ(cost_.warmth(1, 0), 1.0);
  EXPECT_DOUBLE_EQ(cost_.warmth(0, 0), 1.0);
  EXPECT_EQ(cost_.on_switch_in(0, 0), 0);
}

TEST_F(CostModelTest, AMigratedTaskFetchesFromTheCpuWhereItIsWarm) {
  cost_.add_task(0, 32 * 1024, false);
  cost_.on_switch_in(0, 0);
  EXPECT_EQ(cost_.on_switch_in(0, 1),
            stall_of(lines(32 * 1024), topology_.transfer_ns_per_line(0, 1)));
}

TEST_F(CostModelTest, ATransferMissesOnlyWhenItCrossesCpus) {
  // Data written on the reading CPU is in its own caches: references, but no misses.
  cost_.add_task(0, 32 * 1024, true);
  const std::int64_t bytes = 4 * line_;
  cost_.transfer(0, 0, 0, bytes);
  EXPECT_EQ(cost_.counters().cache_refs, 4U);
  EXPECT_EQ(cost_.counters().cache_misses, 0U);
  EXPECT_EQ(cost_.process_counters().cache_refs, 4U);
  EXPECT_EQ(cost_.process_counters().cache_misses, 0U);
  // Written on another CPU: every line is a reference and a miss.
  cost_.transfer(0, 0, 1, bytes);
  EXPECT_EQ(cost_.counters().cache_refs, 8U);
  EXPECT_EQ(cost_.counters().cache_misses, 4U);
  EXPECT_EQ(cost_.process_counters().cache_refs, 8U);
  EXPECT_EQ(cost_.process_counters().cache_misses, 4U);
}

TEST_F(CostModelTest, APartialLineCostsAWholeLine) {
  // Working sets are counted in whole lines, rounded up: one line and a byte is two lines.
  cost_.add_task(0, line_ + 1, false);
  EXPECT_EQ(cost_.on_switch_in(0, 0), stall_of(2, fetch_));
  EXPECT_EQ(cost_.counters().cache_misses, 2U);
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

TEST_F(CostModelTest, ACacheOverwrittenMoreThanOnceRefillsTheWorkingSetOnlyOnce) {
  // Task 0 (half the cache) is then followed on CPU 0 by a task bringing in the whole cache
  // and another bringing in half of it: one and a half caches' worth evicted. Nothing of task
  // 0 is left, and it refills its working set once, not one and a half times.
  ASSERT_EQ(cache_ % (2 * line_), 0);
  cost_.add_task(0, cache_ / 2, false);
  cost_.add_task(1, cache_, false);
  cost_.add_task(2, cache_ / 2, false);
  cost_.on_switch_in(0, 0);
  cost_.on_switch_in(1, 0);
  cost_.on_switch_in(2, 0);
  EXPECT_DOUBLE_EQ(cost_.warmth(0, 0), 0.0);
  const std::uint64_t misses = cost_.counters().cache_misses;
  EXPECT_EQ(cost_.on_switch_in(0, 0), stall_of(lines(cache_ / 2), fetch_));
  EXPECT_EQ(cost_.counters().cache_misses - misses, static_cast<std::uint64_t>(lines(cache_ / 2)));
}

TEST_F(CostModelTest, AFractionOfALineLeftColdIsRoundedToTheNearestLine) {
  // A 7-line working set on CPU 0, then another task brings in a quarter of the cache: a
  // quarter of the 7 lines, 1.75 lines, went cold. The refill is 2 whole lines (rounded to the
  // nearest), not 1 (truncated): 2 misses and 2 lines' fetch time.
  ASSERT_EQ(cache_ % (4 * line_), 0);
  cost_.add_task(0, 7 * line_, false);
  cost_.add_task(1, cache_ / 4, false);
  cost_.on_switch_in(0, 0);
  cost_.on_switch_in(1, 0);
  ASSERT_DOUBLE_EQ(cost_.warmth(0, 0), 0.75);
  const std::uint64_t misses = cost_.counters().cache_misses;
  EXPECT_EQ(cost_.on_switch_in(0, 0), stall_of(2, fetch_));
  EXPECT_EQ(cost_.counters().cache_misses - misses, 2U);
}

class CostModelBetweenClustersTest : public CostModelTest {
 protected:
  CostModelBetweenClustersTest() : CostModelTest(sm8850_with_larger_prime_cache) {}

  // SM8850: performance CPUs 0-5, prime CPUs 6 and 7; cache_ and fetch_ are CPU 0's.
  static constexpr int kPerformance = 0;
  static constexpr int kPrime = 6;
};

TEST_F(CostModelBetweenClustersTest,
       AMigratedTaskFetchesTheShareStillWarmWhereItRanAndTheRestFromSharedCache) {
  // The refill costs, per line, the transfer cost from the last CPU weighted by how warm the
  // task still is there, plus the shared fetch cost weighted by the rest.
  const double transfer = topology_.transfer_ns_per_line(kPerformance, kPrime);
  const double fetch_prime = topology_.shared_fetch_ns_per_line(kPrime);
  ASSERT_NE(transfer, fetch_prime);
  ASSERT_EQ(cache_ % (4 * line_), 0);
  cost_.add_task(0, cache_ / 2, false);
  cost_.add_task(1, cache_ / 4, false);
  cost_.on_switch_in(0, kPerformance);
  // Task 1 brings in a quarter of the cache: three quarters of task 0 stay warm there.
  cost_.on_switch_in(1, kPerformance);
  const double warm =
      1.0 - static_cast<double>(lines(cache_ / 4) * line_) / static_cast<double>(cache_);
  ASSERT_DOUBLE_EQ(cost_.warmth(0, kPerformance), warm);
  EXPECT_EQ(cost_.on_switch_in(0, kPrime),
            stall_of(lines(cache_ / 2), warm * transfer + (1.0 - warm) * fetch_prime));
}

TEST_F(CostModelBetweenClustersTest, AMigrationToALargerCacheFetchesFromTheSmallerOnlyWhatItHeld) {
  // A working set the size of the prime CPU's private cache runs on a performance CPU, which
  // holds only its own cache's worth of it. On the prime CPU the whole set is refilled, and
  // the share warm on the performance CPU is what it held against what the prime CPU refills:
  // min(ws, its cache) / min(ws, prime cache).
  const std::int64_t prime_cache = topology_.private_cache_bytes(kPrime);
  ASSERT_GT(prime_cache, cache_);
  ASSERT_EQ(cache_ % line_, 0);
  const double transfer = topology_.transfer_ns_per_line(kPerformance, kPrime);
  const double fetch_prime = topology_.shared_fetch_ns_per_line(kPrime);
  ASSERT_NE(transfer, fetch_prime);
  cost_.add_task(0, prime_cache, false);
  cost_.on_switch_in(0, kPerformance);
  const double warm = static_cast<double>(cache_) / static_cast<double>(prime_cache);
  const engine::SimTime expected =
      stall_of(lines(prime_cache), warm * transfer + (1.0 - warm) * fetch_prime);
  // Not the cost of fetching the whole set from the performance CPU, as if it had held all of it.
  ASSERT_NE(expected, stall_of(lines(prime_cache), transfer));
  EXPECT_EQ(cost_.on_switch_in(0, kPrime), expected);
}

TEST_F(CostModelBetweenClustersTest,
       AMigrationToASmallerCacheFetchesFromTheLargerWhatItStillHoldsOfTheRefill) {
  // A working set of one and a half performance caches (three quarters of the prime CPU's
  // cache) runs on a prime CPU, which holds all of it; another task then brings in half the
  // prime cache there, leaving half of the set warm: three quarters of a performance cache.
  // On the performance CPU one cache's worth is refilled, and the share of it warm on the
  // prime CPU is 0.75 (the prime CPU's warm bytes against the refill), not the prime CPU's
  // resident share 0.5.
  const std::int64_t prime_cache = topology_.private_cache_bytes(kPrime);
  ASSERT_EQ(prime_cache, 2 * cache_);
  ASSERT_EQ(cache_ % (4 * line_), 0);
  const double transfer = topology_.transfer_ns_per_line(kPrime, kPerformance);
  ASSERT_NE(transfer, fetch_);
  cost_.add_task(0, 3 * cache_ / 2, false);
  cost_.add_task(1, prime_cache / 2, false);
  cost_.on_switch_in(0, kPrime);
  cost_.on_switch_in(1, kPrime);
  ASSERT_DOUBLE_EQ(cost_.warmth(0, kPrime), 0.5);
  const double warm = 0.75;
  EXPECT_EQ(cost_.on_switch_in(0, kPerformance),
            stall_of(lines(cache_), warm * transfer + (1.0 - warm) * fetch_));
}

}  // namespace
}  // namespace bindersim::cost
