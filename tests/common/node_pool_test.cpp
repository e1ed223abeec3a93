#include "bindersim/common/node_pool.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory_resource>
#include <set>

namespace bindersim {
namespace {

TEST(NodePool, FreedBlockIsReusedForTheSameSizeClass) {
  NodePool pool;
  void* first = pool.allocate(40, 8);
  void* second = pool.allocate(40, 8);
  // Two live blocks are distinct.
  EXPECT_NE(first, second);
  pool.deallocate(first, 40, 8);
  // The next request of that size class (33..48 bytes) takes the freed block back.
  EXPECT_EQ(pool.allocate(48, 8), first);
  // A request of another class does not.
  void* other = pool.allocate(64, 8);
  EXPECT_NE(other, first);
  EXPECT_NE(other, second);
}

TEST(NodePool, BlocksAreAlignedAndDoNotOverlap) {
  NodePool pool;
  std::set<std::uintptr_t> starts;
  // Enough blocks to span several chunks.
  for (int i = 0; i < 2000; ++i) {
    const auto start = reinterpret_cast<std::uintptr_t>(pool.allocate(24, 8));
    // Every block is aligned to the pool's granule.
    EXPECT_EQ(start % NodePool::kGranule, 0U);
    starts.insert(start);
  }
  // 24-byte requests take 32-byte blocks: consecutive starts are at least that far apart.
  ASSERT_EQ(starts.size(), 2000U);
  std::uintptr_t previous = 0;
  for (const std::uintptr_t start : starts) {
    if (previous != 0) {
      EXPECT_GE(start - previous, 32U);
    }
    previous = start;
  }
}

TEST(NodePool, LargeBlocksAreServedToo) {
  NodePool pool;
  // Above kMaxBlockBytes the request goes upstream; the block is usable and can be returned.
  auto* large = static_cast<unsigned char*>(pool.allocate(NodePool::kMaxBlockBytes + 1, 8));
  large[0] = 1;
  large[NodePool::kMaxBlockBytes] = 2;
  EXPECT_EQ(large[0] + large[NodePool::kMaxBlockBytes], 3);
  pool.deallocate(large, NodePool::kMaxBlockBytes + 1, 8);
}

TEST(NodePool, ContainersInSteadyStateStopGrowingThePool) {
  NodePool pool;
  std::pmr::map<int, int> map(&pool);
  // Insert and erase the same number of keys many times: the nodes of the first round are
  // reused by every later one, so the addresses seen stay those of the first round.
  std::set<const void*> nodes;
  for (int round = 0; round < 100; ++round) {
    for (int key = 0; key < 10; ++key) {
      const auto [it, inserted] = map.emplace(key + round, key);
      ASSERT_TRUE(inserted);
      nodes.insert(&*it);
    }
    EXPECT_EQ(map.at(round + 3), 3);
    map.clear();
  }
  EXPECT_EQ(nodes.size(), 10U);
}

}  // namespace
}  // namespace bindersim
