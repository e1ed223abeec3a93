#include "bindersim/workload/streams.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>

namespace bindersim::workload {
namespace {

// Clients, background tasks and nodes beyond the compact ranges used to share streams (process
// 16's first node drew what background task 0 drew): every entity now has an id of its own.
TEST(StreamIdTest, NoTwoEntitiesShareAStream) {
  std::set<std::uint64_t> ids;
  std::size_t entities = 0;
  for (std::uint64_t i = 0; i < 5000; ++i) {
    ids.insert(stream_id(StreamKind::kClient, i));
    ids.insert(stream_id(StreamKind::kBackground, i));
    entities += 2;
  }
  for (std::uint64_t process = 0; process < 40; ++process) {
    for (std::uint64_t node = 0; node < 300; ++node) {
      ids.insert(handler_stream_id(process, node));
      ++entities;
    }
  }
  ids.insert(handler_stream_id(0, (std::uint64_t{1} << 31) - 1));
  ids.insert(handler_stream_id((std::uint64_t{1} << 31) - 1, 0));
  entities += 2;
  EXPECT_EQ(ids.size(), entities);
}

// Within the compact ranges the ids are the first version's, so those results do not move.
TEST(StreamIdTest, CompactIdsAreUnchanged) {
  EXPECT_EQ(stream_id(StreamKind::kClient, 0), 0x1000u);
  EXPECT_EQ(stream_id(StreamKind::kClient, 4095), 0x1fffu);
  EXPECT_EQ(stream_id(StreamKind::kBackground, 7), 0x3007u);
  EXPECT_EQ(handler_stream_id(0, 0), 0x2000u);
  EXPECT_EQ(handler_stream_id(15, 255), 0x2000u + 15 * 256 + 255);
  EXPECT_GE(stream_id(StreamKind::kClient, 4096), std::uint64_t{1} << 62);
  EXPECT_GE(handler_stream_id(16, 0), std::uint64_t{1} << 62);
}

}  // namespace
}  // namespace bindersim::workload
