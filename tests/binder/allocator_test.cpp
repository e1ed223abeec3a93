// Unit tests of the binder buffer allocator (binder_alloc.c): sizes, best fit,
// splitting and merging, the async budget, page states and the LRU, and a randomized sequence
// checked against a brute-force model of the same rules.
#include "bindersim/binder/allocator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "bindersim/common/error.hpp"
#include "bindersim/engine/rng.hpp"

namespace bindersim::binder {
namespace {

constexpr std::int64_t kPage = 4096;
// 16 pages: small enough to fill by hand.
const AllocatorConfig kSmall{16 * kPage, kPage};

// An allocator with helpers that assert success and the invariants after every operation.
class AllocatorTest : public ::testing::Test {
 protected:
  AllocatorTest() : a_(kSmall) {}

  // Allocates `data` bytes (no offsets); fails the test unless it succeeds.
  Allocation alloc(std::int64_t data, bool async = false) {
    const Allocation got = a_.allocate(data, 0, async);
    EXPECT_TRUE(got.ok()) << "allocating " << data << " bytes";
    EXPECT_EQ(a_.check_invariants(), "");
    return got;
  }
  // Allocates and installs the pages at once.
  Allocation alloc_installed(std::int64_t data) {
    const Allocation got = alloc(data);
    if (got.ok()) a_.install_pages(got.buffer);
    EXPECT_EQ(a_.check_invariants(), "");
    return got;
  }
  int release(int buffer) {
    const int to_lru = a_.free(buffer, ++stamp_);
    EXPECT_EQ(a_.check_invariants(), "");
    return to_lru;
  }

  BufferAllocator a_;
  std::uint64_t stamp_ = 0;
};

// --- configuration -----------------------------------------------------------------------------

TEST(AllocatorConfigTest, DefaultIsLibbindersMapping) {
  // libbinder maps 1 MiB - 2 pages; the async budget is half the space; one free buffer.
  const BufferAllocator a{AllocatorConfig{}};
  EXPECT_EQ(a.space_bytes(), 1040384);
  EXPECT_EQ(a.page_count(), 254);
  EXPECT_EQ(a.free_bytes(), 1040384);
  EXPECT_EQ(a.free_async_bytes(), 520192);
  EXPECT_EQ(a.free_buffers(), 1);
  EXPECT_EQ(a.largest_free_buffer(), 1040384);
  EXPECT_EQ(a.allocated_buffers(), 0);
  EXPECT_EQ(a.resident_pages(), 0);
  EXPECT_EQ(a.check_invariants(), "");
}

TEST(AllocatorConfigTest, RejectsSpacesTheDriverWouldNotMap) {
  // The space is a positive whole number of pages, capped at 4 MiB; pages are powers of two.
  EXPECT_THROW(BufferAllocator(AllocatorConfig{1000, kPage}), ConfigError);
  EXPECT_THROW(BufferAllocator(AllocatorConfig{0, kPage}), ConfigError);
  EXPECT_THROW(BufferAllocator(AllocatorConfig{-kPage, kPage}), ConfigError);
  EXPECT_THROW(BufferAllocator(AllocatorConfig{4 * 1024 * 1024 + kPage, kPage}), ConfigError);
  EXPECT_THROW(BufferAllocator(AllocatorConfig{3 * 3000, 3000}), ConfigError);
  EXPECT_NO_THROW(BufferAllocator(AllocatorConfig{4 * 1024 * 1024, kPage}));
}

TEST(AllocatorConfigTest, ErrorNamesTheFieldAndValue) {
  try {
    BufferAllocator(AllocatorConfig{1000, kPage});
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "allocator: space_bytes: expected a positive multiple of page_bytes (4096) of at "
              "most 4194304, got 1000");
  }
}

TEST(AllocatorConfigTest, EightBytePagesAreTheSmallestAndEveryBufferEndsOnAPage) {
  // Pages are powers of two of at least the 8-byte buffer alignment: 8 is accepted, 4 is not.
  // With 8-byte pages a 20-byte request (24 bytes) at 0 spans exactly pages 0, 1 and 2 of the
  // 16 pages in a 128-byte space.
  EXPECT_THROW(BufferAllocator(AllocatorConfig{16 * 4, 4}), ConfigError);
  BufferAllocator a{AllocatorConfig{16 * 8, 8}};
  EXPECT_EQ(a.page_count(), 16);
  const Allocation got = a.allocate(20, 0, false);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got.first_page, 0);
  EXPECT_EQ(got.end_page, 3);
  EXPECT_EQ(got.pages_to_install, 3);
  EXPECT_EQ(a.check_invariants(), "");
}

TEST(AllocatorConfigTest, AsyncBudgetIsHalfTheSpaceInBytesNotInWholePages) {
  // binder_alloc_mmap_handler: free_async_space = buffer_size / 2. A 3-page space (12288
  // bytes) gives a budget of 6144 bytes, a page and a half, not 1 page: one 6144-byte oneway
  // buffer fits, and then not even 8 more bytes.
  BufferAllocator a{AllocatorConfig{3 * kPage, kPage}};
  EXPECT_EQ(a.free_async_bytes(), 6144);
  EXPECT_EQ(a.check_invariants(), "");
  const Allocation got = a.allocate(6144, 0, true);
  EXPECT_TRUE(got.ok());
  EXPECT_EQ(a.free_async_bytes(), 0);
  EXPECT_EQ(a.allocate(0, 0, true).failure, AllocFailure::kNoAsyncSpace);
  EXPECT_EQ(a.check_invariants(), "");
}

// --- sizes -------------------------------------------------------------------------------------

TEST_F(AllocatorTest, DataAndOffsetsAreEachAlignedTo8) {
  // ALIGN(data, 8) + ALIGN(offsets, 8): 1 -> 8; 9 + 3 -> 16 + 8 = 24 (not ALIGN(12) = 16);
  // 8 + 8 -> 16; 100 + 16 -> 104 + 16 = 120. Buffers are laid out from address 0 upwards.
  const Allocation first = a_.allocate(1, 0, false);
  const Allocation second = a_.allocate(9, 3, false);
  const Allocation third = a_.allocate(8, 8, false);
  const Allocation fourth = a_.allocate(100, 16, false);
  EXPECT_EQ(first.size, 8);
  EXPECT_EQ(second.size, 24);
  EXPECT_EQ(third.size, 16);
  EXPECT_EQ(fourth.size, 120);
  EXPECT_EQ(first.offset, 0);
  EXPECT_EQ(second.offset, 8);
  EXPECT_EQ(third.offset, 32);
  EXPECT_EQ(fourth.offset, 48);
  EXPECT_EQ(a_.buffer_size(second.buffer), 24);
  EXPECT_EQ(a_.free_bytes(), 16 * kPage - 168);
  EXPECT_EQ(a_.check_invariants(), "");
}

TEST_F(AllocatorTest, EmptyBuffersArePaddedToUniqueAddresses) {
  // A 0-byte transaction still takes 8 bytes, so two of them get different addresses.
  const Allocation first = alloc(0);
  const Allocation second = alloc(0);
  EXPECT_EQ(first.size, 8);
  EXPECT_EQ(second.size, 8);
  EXPECT_EQ(first.offset, 0);
  EXPECT_EQ(second.offset, 8);
  EXPECT_EQ(a_.free_bytes(), 16 * kPage - 16);
}

TEST_F(AllocatorTest, IdsAreSmallAndReusedSmallestFirst) {
  // Ids 0, 1, 2; freeing 1 then 0 makes 0 the next id, then 1.
  const int a = alloc(8).buffer;
  const int b = alloc(8).buffer;
  const int c = alloc(8).buffer;
  EXPECT_EQ(a, 0);
  EXPECT_EQ(b, 1);
  EXPECT_EQ(c, 2);
  release(b);
  release(a);
  EXPECT_FALSE(a_.is_allocated(a));
  EXPECT_EQ(alloc(8).buffer, 0);
  EXPECT_EQ(alloc(8).buffer, 1);
}

// --- best fit and splitting --------------------------------------------------------------------

TEST_F(AllocatorTest, BestFitPicksTheSmallestFittingHoleOverABiggerEarlierOne) {
  // Holes of 1000 bytes at 0 and 200 bytes at 1008, then the tail from 1216.
  const int big = alloc(1000).buffer;
  alloc(8);
  const int small = alloc(200).buffer;
  alloc(8);
  release(big);
  release(small);
  ASSERT_EQ(a_.free_buffers(), 3);

  // 152 bytes fit in all three; the 200-byte hole is the smallest: it is split, the 48 bytes
  // left stay free after the buffer.
  const Allocation in_small = alloc(152);
  EXPECT_EQ(in_small.offset, 1008);
  EXPECT_EQ(a_.free_buffers(), 3);
  // 500 bytes: the 48-byte hole is too small, 1000 is smaller than the tail.
  EXPECT_EQ(alloc(500).offset, 0);
  // 48 bytes fit the remainder of the first split exactly: no new free buffer.
  EXPECT_EQ(alloc(48).offset, 1160);
  EXPECT_EQ(a_.free_buffers(), 2);
  // 1000 bytes fit only the tail.
  EXPECT_EQ(alloc(1000).offset, 1216);
}

TEST_F(AllocatorTest, EqualHolesGoToTheLowestAddress) {
  // Two 64-byte holes, the higher one freed first: the lower address still wins the tie.
  const int low = alloc(64).buffer;
  alloc(8);
  const int high = alloc(64).buffer;
  alloc(8);
  release(high);
  release(low);
  EXPECT_EQ(alloc(64).offset, 0);
  EXPECT_EQ(alloc(64).offset, 72);
  EXPECT_EQ(a_.free_buffers(), 1);
}

TEST_F(AllocatorTest, SplitLeavesTheRemainderFreeAtTheHigherAddress) {
  // 120 bytes from the one free buffer: the buffer takes [0, 120), [120, end) stays free.
  alloc(120);
  EXPECT_EQ(a_.free_buffers(), 1);
  EXPECT_EQ(a_.largest_free_buffer(), 16 * kPage - 120);
  EXPECT_EQ(a_.free_bytes(), 16 * kPage - 120);
  EXPECT_EQ(alloc(8).offset, 120);
}

// --- merging -----------------------------------------------------------------------------------

// Buffers a, b, c of 1000 bytes at 0, 1000, 2000 and an 8-byte guard at 3000 before the tail.
class MergeTest : public AllocatorTest {
 protected:
  void SetUp() override {
    a = alloc(1000).buffer;
    b = alloc(1000).buffer;
    c = alloc(1000).buffer;
    guard = alloc(8).buffer;
    ASSERT_EQ(a_.free_buffers(), 1);
  }
  int a = -1, b = -1, c = -1, guard = -1;
};

TEST_F(MergeTest, FreedBufferMergesWithAFreePreviousOne) {
  // a then b: b joins a into one 2000-byte hole at 0 (two free buffers with the tail, not
  // three), which a 2000-byte request then fills exactly.
  release(a);
  release(b);
  EXPECT_EQ(a_.free_buffers(), 2);
  EXPECT_EQ(alloc(2000).offset, 0);
  EXPECT_EQ(a_.free_buffers(), 1);
}

TEST_F(MergeTest, FreedBufferMergesWithAFreeNextOne) {
  release(b);
  release(a);
  EXPECT_EQ(a_.free_buffers(), 2);
  EXPECT_EQ(alloc(2000).offset, 0);
  EXPECT_EQ(a_.free_buffers(), 1);
}

TEST_F(MergeTest, FreedBufferMergesWithBothNeighbours) {
  // a and c free are two holes; freeing b joins all three into one 3000-byte hole.
  release(a);
  release(c);
  EXPECT_EQ(a_.free_buffers(), 3);
  release(b);
  EXPECT_EQ(a_.free_buffers(), 2);
  EXPECT_EQ(a_.largest_free_buffer(), 16 * kPage - 3008);
  EXPECT_EQ(alloc(3000).offset, 0);
  EXPECT_EQ(a_.free_buffers(), 1);
}

TEST_F(MergeTest, FreeingEverythingLeavesOneBufferOfTheWholeSpace) {
  release(c);
  release(a);
  release(guard);
  release(b);
  EXPECT_EQ(a_.free_buffers(), 1);
  EXPECT_EQ(a_.largest_free_buffer(), 16 * kPage);
  EXPECT_EQ(a_.free_bytes(), 16 * kPage);
  EXPECT_EQ(a_.allocated_buffers(), 0);
}

// --- failures ----------------------------------------------------------------------------------

TEST_F(AllocatorTest, NoSpaceWhenFragmentedAlthoughTotalFreeSpaceSuffices) {
  // Eight 8 KiB buffers fill the 64 KiB space; freeing every other one leaves 32 KiB free in
  // four separate 8 KiB holes, so 16 KiB cannot be placed.
  std::vector<int> ids;
  for (int i = 0; i < 8; ++i) ids.push_back(alloc(2 * kPage).buffer);
  EXPECT_EQ(a_.free_buffers(), 0);
  EXPECT_EQ(a_.largest_free_buffer(), 0);
  for (int i = 0; i < 8; i += 2) release(ids[i]);
  ASSERT_EQ(a_.free_bytes(), 8 * kPage);

  const Allocation refused = a_.allocate(4 * kPage, 0, false);
  EXPECT_FALSE(refused.ok());
  EXPECT_EQ(refused.failure, AllocFailure::kNoSpace);
  EXPECT_EQ(refused.buffer, -1);
  EXPECT_EQ(refused.size, 4 * kPage);
  // Nothing changed.
  EXPECT_EQ(a_.free_bytes(), 8 * kPage);
  EXPECT_EQ(a_.free_buffers(), 4);
  EXPECT_EQ(a_.allocated_buffers(), 4);
  EXPECT_EQ(a_.check_invariants(), "");
  // One hole's worth still fits, in the lowest hole.
  EXPECT_EQ(alloc(2 * kPage).offset, 0);
}

TEST_F(AllocatorTest, AsyncBudgetRefusesOnewayBuffersButNotSyncOnes) {
  // Budget: half of 64 KiB. Four 8 KiB oneway buffers use it all although 32 KiB stay free.
  EXPECT_EQ(a_.free_async_bytes(), 8 * kPage);
  std::vector<int> oneway;
  for (int i = 0; i < 4; ++i) {
    oneway.push_back(alloc(2 * kPage, true).buffer);
    EXPECT_EQ(a_.free_async_bytes(), (6 - 2 * i) * kPage);
  }
  const Allocation refused = a_.allocate(0, 0, true);
  EXPECT_EQ(refused.failure, AllocFailure::kNoAsyncSpace);
  EXPECT_EQ(a_.allocated_buffers(), 4);
  EXPECT_EQ(a_.free_bytes(), 8 * kPage);

  // A two-way buffer does not touch the budget.
  const int sync = alloc(2 * kPage).buffer;
  EXPECT_EQ(a_.free_async_bytes(), 0);
  // Freeing a oneway buffer gives its size back; freeing a sync one gives nothing.
  release(oneway[1]);
  EXPECT_EQ(a_.free_async_bytes(), 2 * kPage);
  release(sync);
  EXPECT_EQ(a_.free_async_bytes(), 2 * kPage);
  EXPECT_TRUE(alloc(2 * kPage, true).ok());
  EXPECT_EQ(a_.free_async_bytes(), 0);
}

TEST_F(AllocatorTest, AsyncChargeIsThePaddedAlignedSize) {
  // 0 bytes are charged as the 8 they take; 1 + 1 as 8 + 8.
  alloc(0, true);
  EXPECT_EQ(a_.free_async_bytes(), 8 * kPage - 8);
  EXPECT_TRUE(a_.allocate(1, 1, true).ok());
  EXPECT_EQ(a_.free_async_bytes(), 8 * kPage - 24);
}

TEST_F(AllocatorTest, AsyncBudgetIsCheckedBeforeTheSpace) {
  // With the space full, a oneway request within the budget fails for space, one beyond the
  // budget fails for the budget (checked first).
  alloc(16 * kPage);
  EXPECT_EQ(a_.allocate(8, 0, true).failure, AllocFailure::kNoSpace);
  EXPECT_EQ(a_.allocate(8 * kPage + 8, 0, true).failure, AllocFailure::kNoAsyncSpace);
  EXPECT_EQ(a_.free_async_bytes(), 8 * kPage);
}

// --- pages and the LRU -------------------------------------------------------------------------

TEST_F(AllocatorTest, FirstAllocationNeedsInstallation) {
  // 10000 bytes at 0 span pages 0, 1, 2; none was ever installed.
  const Allocation got = alloc(10000);
  EXPECT_EQ(got.first_page, 0);
  EXPECT_EQ(got.end_page, 3);
  EXPECT_EQ(got.pages_to_install, 3);
  EXPECT_EQ(got.pages_from_lru, 0);
  EXPECT_EQ(a_.resident_pages(), 0);
  EXPECT_EQ(a_.page_state(2), PageState::kPendingInstall);
  EXPECT_EQ(a_.page_state(3), PageState::kUnmapped);

  EXPECT_EQ(a_.install_pages(got.buffer), 3);
  EXPECT_EQ(a_.resident_pages(), 3);
  EXPECT_EQ(a_.page_state(0), PageState::kInUse);
  EXPECT_EQ(a_.check_invariants(), "");
}

TEST_F(AllocatorTest, ReuseAfterFreeTakesPagesOffTheLruWithoutInstalling) {
  const Allocation first = alloc_installed(10000);
  // Freed: the three pages stay resident, on the LRU.
  EXPECT_EQ(release(first.buffer), 3);
  EXPECT_EQ(a_.lru_pages(), 3);
  EXPECT_EQ(a_.resident_pages(), 3);
  EXPECT_EQ(a_.page_state(1), PageState::kLru);

  // 5000 bytes at 0 span pages 0 and 1: both come back from the LRU, page 2 stays there.
  const Allocation again = alloc(5000);
  EXPECT_EQ(again.offset, 0);
  EXPECT_EQ(again.pages_to_install, 0);
  EXPECT_EQ(again.pages_from_lru, 2);
  EXPECT_EQ(a_.lru_pages(), 1);
  EXPECT_EQ(a_.page_state(2), PageState::kLru);
}

TEST_F(AllocatorTest, ReclaimMakesTheNextAllocationInstallAgain) {
  // Freeing [0, 10000) puts its whole pages on the LRU from the highest down (1, 0), then the
  // partial last page 2 (6.1's order). The shrinker takes the oldest: 1, then 0.
  release(alloc_installed(10000).buffer);
  ASSERT_EQ(a_.oldest_lru_page()->page, 1);
  a_.reclaim_page(1);
  EXPECT_EQ(a_.page_state(1), PageState::kUnmapped);
  ASSERT_EQ(a_.oldest_lru_page()->page, 0);
  a_.reclaim_page(0);
  EXPECT_EQ(a_.check_invariants(), "");
  EXPECT_EQ(a_.resident_pages(), 1);
  EXPECT_EQ(a_.lru_pages(), 1);

  // The same buffer again: pages 0 and 1 are installed anew, page 2 comes off the LRU.
  const Allocation again = alloc(10000);
  EXPECT_EQ(again.pages_to_install, 2);
  EXPECT_EQ(again.pages_from_lru, 1);
  EXPECT_EQ(a_.lru_pages(), 0);
}

TEST_F(AllocatorTest, OldestLruPageFollowsTheStamps) {
  // Pages 0, 1, 2 in use by three buffers; page 1 freed at stamp 10, page 0 at stamp 20.
  const int p0 = alloc_installed(kPage).buffer;
  const int p1 = alloc_installed(kPage).buffer;
  alloc_installed(kPage);
  EXPECT_FALSE(a_.oldest_lru_page().has_value());
  a_.free(p1, 10);
  a_.free(p0, 20);
  EXPECT_EQ(a_.check_invariants(), "");
  ASSERT_TRUE(a_.oldest_lru_page().has_value());
  EXPECT_EQ(a_.oldest_lru_page()->page, 1);
  EXPECT_EQ(a_.oldest_lru_page()->stamp, 10u);
  a_.reclaim_page(1);
  EXPECT_EQ(a_.oldest_lru_page()->page, 0);
  EXPECT_EQ(a_.oldest_lru_page()->stamp, 20u);

  // Reusing page 0 takes it off the LRU, which is then empty (page 1 is unmapped).
  const Allocation again = a_.allocate(2 * kPage, 0, false);
  EXPECT_EQ(again.offset, 0);
  EXPECT_EQ(again.pages_from_lru, 1);
  EXPECT_EQ(again.pages_to_install, 1);
  EXPECT_FALSE(a_.oldest_lru_page().has_value());
  EXPECT_EQ(a_.check_invariants(), "");
}

TEST_F(AllocatorTest, PagesFreedWithTheSameStampQueueInTheOrderTheyWereFreed) {
  // Stamps passed to free() must not decrease; an equal stamp is allowed. Pages 0, 1, 2 in use by
  // three one-page buffers; page 1 freed at stamp 7, then page 0 also at stamp 7: the LRU holds 1
  // then 0, both stamped 7, so the oldest page after stamp 6 is page 1 and none is after stamp 7.
  const int p0 = alloc_installed(kPage).buffer;
  const int p1 = alloc_installed(kPage).buffer;
  alloc_installed(kPage);
  EXPECT_EQ(a_.free(p1, 7), 1);
  EXPECT_EQ(a_.free(p0, 7), 1);
  EXPECT_EQ(a_.check_invariants(), "");
  ASSERT_TRUE(a_.oldest_lru_page().has_value());
  EXPECT_EQ(a_.oldest_lru_page()->page, 1);
  EXPECT_EQ(a_.oldest_lru_page()->stamp, 7u);
  ASSERT_TRUE(a_.next_lru_page(1).has_value());
  EXPECT_EQ(a_.next_lru_page(1)->page, 0);
  EXPECT_EQ(a_.next_lru_page(1)->stamp, 7u);
  EXPECT_EQ(a_.oldest_lru_page_after(6)->page, 1);
  EXPECT_FALSE(a_.oldest_lru_page_after(7).has_value());
}

TEST_F(AllocatorTest, TheShrinkerWalksTheLruPageByPage) {
  // Freeing [0, 10000) puts pages 1, 0, 2 on the LRU with one stamp; a one-page buffer then
  // takes page 0 back, and freeing it at stamp 9 puts page 0 at the tail. The walk goes from
  // one page to the next in that order; the first page after a stamp is the oldest freed later.
  release(alloc_installed(10000).buffer);
  const Allocation one = alloc(kPage);
  ASSERT_EQ(one.offset, 0);
  a_.free(one.buffer, 9);
  const LruPage head = *a_.oldest_lru_page();
  std::vector<int> walked = {head.page};
  for (auto page = a_.next_lru_page(head.page); page; page = a_.next_lru_page(page->page)) {
    walked.push_back(page->page);
  }
  EXPECT_EQ(walked, (std::vector<int>{1, 2, 0}));
  EXPECT_FALSE(a_.next_lru_page(0).has_value());
  ASSERT_TRUE(a_.oldest_lru_page_after(head.stamp).has_value());
  EXPECT_EQ(a_.oldest_lru_page_after(head.stamp)->page, 0);
  EXPECT_EQ(a_.oldest_lru_page_after(head.stamp)->stamp, 9u);
  EXPECT_FALSE(a_.oldest_lru_page_after(9).has_value());
  EXPECT_EQ(a_.oldest_lru_page_after(0)->page, 1);
}

TEST_F(AllocatorTest, APageSharedByTwoBuffersStaysInUseUntilBothAreFreed) {
  // Two 2 KiB buffers share page 0; the second finds it resident and in use.
  const Allocation first = alloc_installed(kPage / 2);
  const Allocation second = alloc(kPage / 2);
  EXPECT_EQ(second.offset, kPage / 2);
  EXPECT_EQ(second.pages_to_install, 0);
  EXPECT_EQ(second.pages_from_lru, 0);

  EXPECT_EQ(release(first.buffer), 0);
  EXPECT_EQ(a_.page_state(0), PageState::kInUse);
  EXPECT_EQ(a_.lru_pages(), 0);
  EXPECT_EQ(release(second.buffer), 1);
  EXPECT_EQ(a_.page_state(0), PageState::kLru);
}

TEST_F(AllocatorTest, BuffersStraddlingPagesReleaseOnlyUnsharedPages) {
  // [0, 6000) spans pages 0-1, [6000, 12000) pages 1-2: page 1 is shared.
  const Allocation first = alloc_installed(6000);
  const Allocation second = alloc(6000);
  EXPECT_EQ(second.first_page, 1);
  EXPECT_EQ(second.end_page, 3);
  EXPECT_EQ(second.pages_to_install, 1);  // page 2; page 1 is already resident
  a_.install_pages(second.buffer);

  EXPECT_EQ(release(first.buffer), 1);  // page 0 only
  EXPECT_EQ(a_.page_state(1), PageState::kInUse);
  EXPECT_EQ(release(second.buffer), 2);  // pages 1 and 2
  // LRU order: page 0 (first free), then the second free's partial last page 2 before its
  // partial first page 1.
  std::vector<int> reclaimed;
  while (const auto oldest = a_.oldest_lru_page()) {
    reclaimed.push_back(oldest->page);
    a_.reclaim_page(oldest->page);
  }
  EXPECT_EQ(reclaimed, (std::vector<int>{0, 2, 1}));
  EXPECT_EQ(a_.resident_pages(), 0);
  EXPECT_EQ(a_.check_invariants(), "");
}

TEST_F(AllocatorTest, PagesPendingInstallationAreCountedForEveryBufferOnThem) {
  // Page 0 is not resident until someone installs it: both buffers on it count it.
  const Allocation first = alloc(kPage / 2);
  const Allocation second = alloc(kPage / 2);
  EXPECT_EQ(first.pages_to_install, 1);
  EXPECT_EQ(second.pages_to_install, 1);
  EXPECT_EQ(a_.install_pages(first.buffer), 1);
  EXPECT_EQ(a_.install_pages(second.buffer), 0);
  EXPECT_EQ(a_.resident_pages(), 1);
}

TEST_F(AllocatorTest, FreeingBeforeInstallationLeavesThePagesUnmapped) {
  const Allocation got = alloc(10000);
  EXPECT_EQ(release(got.buffer), 0);
  EXPECT_EQ(a_.lru_pages(), 0);
  EXPECT_EQ(a_.page_state(0), PageState::kUnmapped);
  EXPECT_EQ(alloc(10000).pages_to_install, 3);
}

TEST_F(AllocatorTest, TheLargestRequestTheSumsKeepExactIsRefusedForSpaceNotAborted) {
  // Just under 2^40 bytes of data and of offsets: sizes, their sum and the async charge stay
  // exact, so the request is an ordinary one that does not fit.
  constexpr std::int64_t kLargest = (std::int64_t{1} << 40) - 1;
  const Allocation got = a_.allocate(kLargest, kLargest, false);
  EXPECT_EQ(got.failure, AllocFailure::kNoSpace);
  EXPECT_EQ(got.size, 2 * (std::int64_t{1} << 40));
  EXPECT_EQ(a_.allocate(kLargest, 0, true).failure, AllocFailure::kNoAsyncSpace);
  EXPECT_EQ(a_.check_invariants(), "");
}

TEST(AllocatorDeathTest, ARequestOf2To40BytesOrANegativeOneIsAnInternalError) {
  // No binder transaction is that large or negative; the scenario reader bounds both, so
  // reaching the allocator with one is a broken invariant.
  constexpr std::int64_t kTooLarge = std::int64_t{1} << 40;
  BufferAllocator a(kSmall);
  EXPECT_DEATH(a.allocate(kTooLarge, 0, false), "data_bytes < kMaxRequestBytes");
  EXPECT_DEATH(a.allocate(0, kTooLarge, false), "offsets_bytes < kMaxRequestBytes");
  EXPECT_DEATH(a.allocate(-1, 0, false), "data_bytes >= 0");
}

// --- randomized sequence against a brute-force model -------------------------------------------

// The same rules written the slow way: a sorted list of buffers, linear best-fit search, page
// references recounted from the buffers.
struct Model {
  struct Buffer {
    std::int64_t offset;
    std::int64_t size;
    int id;  // -1: free
    bool async;
  };
  std::int64_t space;
  std::int64_t page;
  std::vector<Buffer> buffers;
  std::int64_t async_free;
  std::vector<bool> resident;
  std::vector<std::optional<std::uint64_t>> lru_stamp;  // set while on the LRU

  Model(std::int64_t space_bytes, std::int64_t page_bytes)
      : space(space_bytes),
        page(page_bytes),
        buffers{{0, space_bytes, -1, false}},
        async_free(space_bytes / 2),
        resident(static_cast<std::size_t>(space_bytes / page_bytes), false),
        lru_stamp(resident.size()) {}

  std::vector<int> refs() const {
    std::vector<int> r(resident.size(), 0);
    for (const Buffer& b : buffers) {
      if (b.id < 0) continue;
      for (std::int64_t p = b.offset / page; p * page < b.offset + b.size; ++p) ++r[p];
    }
    return r;
  }
  // Offset of the best fit for `size`, or -1.
  std::int64_t best_fit(std::int64_t size) const {
    const Buffer* best = nullptr;
    for (const Buffer& b : buffers) {
      if (b.id >= 0 || b.size < size) continue;
      if (best == nullptr || b.size < best->size) best = &b;  // ties: first, the lowest address
    }
    return best ? best->offset : -1;
  }
  Buffer* find(int id) {
    for (Buffer& b : buffers) {
      if (b.id == id) return &b;
    }
    return nullptr;
  }
  void merge() {
    std::vector<Buffer> merged;
    for (const Buffer& b : buffers) {
      if (!merged.empty() && merged.back().id < 0 && b.id < 0) {
        merged.back().size += b.size;
      } else {
        merged.push_back(b);
      }
    }
    buffers = merged;
  }
};

TEST(AllocatorRandomTest, RandomSequenceMatchesTheModelAndMergesBackToOneBuffer) {
  constexpr std::int64_t kSpace = 64 * kPage;
  BufferAllocator a{AllocatorConfig{kSpace, kPage}};
  Model m(kSpace, kPage);
  engine::Rng rng(20240601, 1);
  std::uint64_t stamp = 0;
  std::vector<int> live;         // allocated ids
  std::vector<int> uninstalled;  // allocated ids whose pages were not installed yet
  int no_space = 0;
  int no_async = 0;
  int reclaimed = 0;
  int from_lru = 0;

  const auto compare = [&](int step) {
    ASSERT_EQ(a.check_invariants(), "") << "step " << step;
    std::int64_t free_sum = 0;
    std::int64_t largest = 0;
    int free_count = 0;
    for (const Model::Buffer& b : m.buffers) {
      if (b.id >= 0) continue;
      free_sum += b.size;
      largest = std::max(largest, b.size);
      ++free_count;
    }
    ASSERT_EQ(a.free_bytes(), free_sum) << "step " << step;
    ASSERT_EQ(a.largest_free_buffer(), largest) << "step " << step;
    ASSERT_EQ(a.free_buffers(), free_count) << "step " << step;
    ASSERT_EQ(a.free_async_bytes(), m.async_free) << "step " << step;
    ASSERT_EQ(a.allocated_buffers(), static_cast<int>(live.size())) << "step " << step;
    const std::vector<int> refs = m.refs();
    int lru = 0;
    std::optional<std::uint64_t> oldest;
    for (std::size_t p = 0; p < refs.size(); ++p) {
      PageState expected = PageState::kUnmapped;
      if (refs[p] > 0) {
        expected = m.resident[p] ? PageState::kInUse : PageState::kPendingInstall;
      } else if (m.resident[p]) {
        expected = PageState::kLru;
        ++lru;
        if (!oldest || *m.lru_stamp[p] < *oldest) oldest = m.lru_stamp[p];
      }
      ASSERT_EQ(a.page_state(static_cast<int>(p)), expected) << "step " << step << " page " << p;
    }
    ASSERT_EQ(a.lru_pages(), lru) << "step " << step;
    ASSERT_EQ(a.oldest_lru_page().has_value(), oldest.has_value()) << "step " << step;
    if (oldest) {
      ASSERT_EQ(a.oldest_lru_page()->stamp, *oldest) << "step " << step;
    }
  };

  for (int step = 0; step < 20000; ++step) {
    const std::uint64_t op = rng.uniform_below(100);
    if (op < 45) {
      // Mostly small transactions, some page-sized and a few large ones.
      const std::uint64_t kind = rng.uniform_below(20);
      const std::int64_t limit = kind < 14 ? 512 : kind < 19 ? 3 * kPage : 12 * kPage;
      const std::int64_t data = rng.uniform_int(0, limit);
      const std::int64_t offsets = rng.uniform_int(0, 64);
      const bool async = rng.bernoulli(0.4);
      const std::int64_t size =
          std::max<std::int64_t>((data + 7) / 8 * 8 + (offsets + 7) / 8 * 8, 8);
      const Allocation got = a.allocate(data, offsets, async);
      ASSERT_EQ(got.size, size);
      if (async && m.async_free < size) {
        ASSERT_EQ(got.failure, AllocFailure::kNoAsyncSpace) << "step " << step;
        ++no_async;
      } else if (const std::int64_t offset = m.best_fit(size); offset < 0) {
        ASSERT_EQ(got.failure, AllocFailure::kNoSpace) << "step " << step;
        ++no_space;
      } else {
        ASSERT_TRUE(got.ok()) << "step " << step;
        ASSERT_EQ(got.offset, offset) << "step " << step;
        const std::vector<int> refs = m.refs();
        int to_install = 0;
        int off_lru = 0;
        for (int p = got.first_page; p < got.end_page; ++p) {
          if (!m.resident[p]) {
            ++to_install;
          } else if (refs[p] == 0) {
            ++off_lru;
            m.lru_stamp[p].reset();
          }
        }
        ASSERT_EQ(got.first_page, offset / kPage);
        ASSERT_EQ(got.end_page, (offset + size + kPage - 1) / kPage);
        ASSERT_EQ(got.pages_to_install, to_install) << "step " << step;
        ASSERT_EQ(got.pages_from_lru, off_lru) << "step " << step;
        from_lru += off_lru;
        for (std::size_t i = 0; i < m.buffers.size(); ++i) {
          if (m.buffers[i].offset != offset) continue;
          const std::int64_t rest = m.buffers[i].size - size;
          m.buffers[i] = {offset, size, got.buffer, async};
          if (rest > 0) {
            m.buffers.insert(m.buffers.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                             {offset + size, rest, -1, false});
          }
          break;
        }
        if (async) m.async_free -= size;
        live.push_back(got.buffer);
        if (to_install > 0) uninstalled.push_back(got.buffer);
      }
    } else if (op < 80 && !live.empty()) {
      const std::size_t pick = rng.uniform_below(live.size());
      const int id = live[pick];
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(pick));
      uninstalled.erase(std::remove(uninstalled.begin(), uninstalled.end(), id), uninstalled.end());
      const std::vector<int> before = m.refs();
      Model::Buffer* b = m.find(id);
      ASSERT_NE(b, nullptr);
      if (b->async) m.async_free += b->size;
      b->id = -1;
      b->async = false;
      m.merge();
      const std::vector<int> after = m.refs();
      ++stamp;
      int to_lru = 0;
      for (std::size_t p = 0; p < after.size(); ++p) {
        if (before[p] > 0 && after[p] == 0 && m.resident[p]) {
          m.lru_stamp[p] = stamp;
          ++to_lru;
        }
      }
      ASSERT_EQ(a.free(id, stamp), to_lru) << "step " << step;
    } else if (op < 90 && !uninstalled.empty()) {
      const std::size_t pick = rng.uniform_below(uninstalled.size());
      const int id = uninstalled[pick];
      uninstalled.erase(uninstalled.begin() + static_cast<std::ptrdiff_t>(pick));
      const Model::Buffer* b = m.find(id);
      int newly = 0;
      for (std::int64_t p = b->offset / kPage; p * kPage < b->offset + b->size; ++p) {
        if (!m.resident[p]) ++newly;
        m.resident[p] = true;
      }
      ASSERT_EQ(a.install_pages(id), newly) << "step " << step;
    } else if (const auto oldest = a.oldest_lru_page()) {
      ASSERT_TRUE(m.lru_stamp[oldest->page].has_value());
      ASSERT_EQ(*m.lru_stamp[oldest->page], oldest->stamp);
      a.reclaim_page(oldest->page);
      m.resident[oldest->page] = false;
      m.lru_stamp[oldest->page].reset();
      ++reclaimed;
    }
    compare(step);
    if (::testing::Test::HasFatalFailure()) return;
  }

  // The sequence went through every path.
  EXPECT_GT(no_space, 0);
  EXPECT_GT(no_async, 0);
  EXPECT_GT(reclaimed, 0);
  EXPECT_GT(from_lru, 0);

  // Free what is left: everything merges back into one free buffer of the whole space.
  while (!live.empty()) {
    const int id = live.back();
    live.pop_back();
    a.free(id, ++stamp);
    ASSERT_EQ(a.check_invariants(), "");
  }
  EXPECT_EQ(a.free_buffers(), 1);
  EXPECT_EQ(a.largest_free_buffer(), kSpace);
  EXPECT_EQ(a.free_bytes(), kSpace);
  EXPECT_EQ(a.free_async_bytes(), kSpace / 2);
  EXPECT_EQ(a.allocated_buffers(), 0);
  EXPECT_EQ(a.lru_pages(), a.resident_pages());
}

}  // namespace
}  // namespace bindersim::binder
