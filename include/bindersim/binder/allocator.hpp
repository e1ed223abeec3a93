// The binder buffer allocator of one process (binder_alloc.c, KERNEL.md section 1.7): best-fit
// buffers carved from the mapped space, splitting and merging, the async budget, and the state of
// each page of the space (unmapped, in use, resident-free on the LRU). A pure data structure: no
// time and no lock; the driver times page installation and models the lock around it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <memory_resource>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "bindersim/common/node_pool.hpp"

namespace bindersim::binder {

// Sizes of one process's buffer space. Defaults: libbinder maps 1 MiB - 2 pages
// (BINDER_VM_SIZE in ProcessState.cpp) of 4 KiB pages.
struct AllocatorConfig {
  std::int64_t space_bytes = 1024 * 1024 - 2 * 4096;  // 1040384
  std::int64_t page_bytes = 4096;
};

// The driver's cap on the mapped space (SZ_4M in binder_alloc_mmap_handler).
inline constexpr std::int64_t kMaxAllocatorSpaceBytes = 4 * 1024 * 1024;
// Buffer sizes are multiples of sizeof(void*) on a 64-bit kernel, and at least that.
inline constexpr std::int64_t kBufferAlignBytes = 8;

enum class AllocFailure : std::uint8_t {
  kNone,
  kNoSpace,       // no free buffer is large enough (-ENOSPC, "no address space")
  kNoAsyncSpace,  // a oneway buffer would overdraw the async budget (-ENOSPC, "no async space")
};

// The outcome of BufferAllocator::allocate(). On failure only `failure` and `size` are set.
struct Allocation {
  int buffer = -1;  // id of the allocated buffer, -1 on failure
  AllocFailure failure = AllocFailure::kNone;
  std::int64_t offset = 0;  // bytes from the start of the space
  std::int64_t size = 0;    // bytes, aligned and padded (also set on failure)
  int first_page = 0;       // pages [first_page, end_page) the buffer spans
  int end_page = 0;
  // Of those pages, the ones not resident (never installed, or reclaimed; also a shared page
  // whose installation for another buffer is still pending): installing them (zeroed page +
  // PTE insert) is the caller's to time; it then calls install_pages(buffer).
  int pages_to_install = 0;
  // Resident pages taken back off the LRU (a list removal, no installation).
  int pages_from_lru = 0;

  bool ok() const { return failure == AllocFailure::kNone; }
};

// The oldest resident-free page of an allocator and the stamp it was freed with.
struct LruPage {
  int page = 0;
  std::uint64_t stamp = 0;
};

// State of one page of the space.
enum class PageState : std::uint8_t {
  kUnmapped,        // no allocated buffer spans it, not resident
  kPendingInstall,  // spanned by an allocated buffer, installation not done yet
  kInUse,           // spanned by an allocated buffer, resident
  kLru,             // resident, spanned by no allocated buffer: on the LRU, reclaimable
};

// Buffers tile the space [0, space_bytes) with no gap: allocated ones and free ones, never two
// free ones adjacent. A page is in use exactly while some allocated buffer spans part of it
// (the kernel derives this from neighbours: a buffer's partial first and last pages may be
// shared with the buffers before and after it). Ids are small ints, the smallest free one
// reused first. Allocation and free cost O(log n + pages the buffer spans).
class BufferAllocator {
 public:
  // Throws ConfigError unless page_bytes is a positive power of two and space_bytes a positive
  // multiple of it of at most kMaxAllocatorSpaceBytes.
  explicit BufferAllocator(AllocatorConfig config);

  // A buffer of ALIGN(data_bytes, 8) + ALIGN(offsets_bytes, 8) bytes, at least 8 (the kernel
  // pads empty buffers so that each has a unique address). Both inputs are >= 0 and < 2^40.
  // Oneway (`async`) buffers are charged to the async budget, checked first. Best fit: the
  // smallest free buffer of at least that size, the lowest address among equal sizes; the
  // rest of it stays a free buffer at the higher address. A failure changes nothing.
  Allocation allocate(std::int64_t data_bytes, std::int64_t offsets_bytes, bool async);

  // Makes the pages of allocated `buffer` resident (its installation is done). Pages another
  // buffer already installed are skipped. Returns the number of pages made resident.
  int install_pages(int buffer);

  // Frees allocated `buffer`: returns its async charge, merges it with a free neighbour before
  // and after, and puts the resident pages it no longer shares with an allocated buffer at the
  // LRU tail with `lru_stamp` (a counter increasing across all allocators: the kernel's LRU is
  // global; stamps passed to one allocator never decrease). Returns the pages put on the LRU.
  int free(int buffer, std::uint64_t lru_stamp);

  // The shrinker's view: the head of this allocator's part of the LRU.
  std::optional<LruPage> oldest_lru_page() const;
  // Unmaps `page`, which must be on the LRU.
  void reclaim_page(int page);

  std::int64_t space_bytes() const { return space_bytes_; }
  std::int64_t page_bytes() const { return page_bytes_; }
  int page_count() const { return static_cast<int>(pages_.size()); }
  std::int64_t free_bytes() const { return free_bytes_; }
  std::int64_t free_async_bytes() const { return free_async_bytes_; }
  std::int64_t largest_free_buffer() const;  // 0 when the space is full
  int allocated_buffers() const { return allocated_count_; }
  int free_buffers() const { return static_cast<int>(free_by_size_.size()); }
  int resident_pages() const { return resident_count_; }
  int lru_pages() const { return static_cast<int>(lru_.size()); }
  bool is_allocated(int buffer) const;
  std::int64_t buffer_size(int buffer) const;    // `buffer` must be allocated
  std::int64_t buffer_offset(int buffer) const;  // `buffer` must be allocated
  PageState page_state(int page) const;

  // Walks every structure; returns a description of the first broken invariant, or "".
  std::string check_invariants() const;

 private:
  // One buffer of the tiling, keyed by its offset in segments_.
  struct Segment {
    std::int64_t size = 0;
    int id = -1;  // -1: free
    bool async = false;
    bool installed = false;  // install_pages() ran, or nothing needed installing
  };
  struct Page {
    int refs = 0;  // allocated buffers spanning part of the page
    bool resident = false;
    std::pair<std::uint64_t, std::uint64_t> lru_key{0, 0};  // (stamp, sequence) while on LRU
  };

  int page_of(std::int64_t offset) const { return static_cast<int>(offset / page_bytes_); }
  int end_page_of(std::int64_t end) const {
    return static_cast<int>((end + page_bytes_ - 1) / page_bytes_);
  }
  std::map<std::int64_t, Segment>::iterator allocated_segment(int buffer);
  void lru_add(int page, std::uint64_t stamp);

  std::int64_t space_bytes_;
  std::int64_t page_bytes_;
  // The tree nodes of the maps and sets below come from this pool: an allocation or a free
  // reuses nodes instead of calling malloc. Held by pointer so that the containers' view of it
  // survives a move of the allocator.
  std::unique_ptr<NodePool> nodes_ = std::make_unique<NodePool>();
  std::pmr::map<std::int64_t, Segment> segments_{nodes_.get()};  // offset -> buffer
  // (size, offset) of the free buffers.
  std::pmr::set<std::pair<std::int64_t, std::int64_t>> free_by_size_{nodes_.get()};
  std::vector<std::int64_t> offset_of_id_;  // -1: id not in use
  // Ids below offset_of_id_.size() not in use, smallest on top.
  std::priority_queue<int, std::vector<int>, std::greater<>> free_ids_;
  std::vector<Page> pages_;
  // (stamp, sequence) -> page
  std::pmr::map<std::pair<std::uint64_t, std::uint64_t>, int> lru_{nodes_.get()};
  std::uint64_t lru_sequence_ = 0;
  std::uint64_t last_stamp_ = 0;
  std::int64_t free_bytes_;
  std::int64_t free_async_bytes_;
  int allocated_count_ = 0;
  int resident_count_ = 0;
};

}  // namespace bindersim::binder
