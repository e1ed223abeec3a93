// The binder buffer allocator of one process (binder_alloc.c): best-fit
// buffers carved from the mapped space, splitting and merging, the async budget, and the state of
// each page of the space (unmapped, in use, resident-free on the LRU). A pure data structure: no
// time and no lock; the driver times page installation and models the lock around it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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
// reused first. Allocation and free cost O(log f + pages the buffer spans) comparisons plus
// moving up to f entries of a flat index, for f free buffers (at most one more than the
// allocated ones; a handful in the shipped scenarios).
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

  // The shrinker's view: the head of this allocator's part of the LRU, the page after `page`
  // (which must be on the LRU) in it, and the oldest page freed with a stamp above `stamp`.
  std::optional<LruPage> oldest_lru_page() const;
  std::optional<LruPage> next_lru_page(int page) const;
  std::optional<LruPage> oldest_lru_page_after(std::uint64_t stamp) const;
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
  int lru_pages() const { return lru_count_; }
  bool is_allocated(int buffer) const;
  std::int64_t buffer_size(int buffer) const;  // `buffer` must be allocated
  PageState page_state(int page) const;

  // Walks every structure; returns a description of the first broken invariant, or "".
  std::string check_invariants() const;

 private:
  // One buffer of the tiling: a node of a list in address order. Node 0 is always the buffer at
  // offset 0 (a merge keeps the lower node), so the list starts there.
  struct Segment {
    std::int64_t offset = 0;
    std::int64_t size = 0;
    int prev = -1;  // node of the buffer just below, -1: none
    int next = -1;  // node of the buffer just above, -1: none
    int id = -1;    // -1: free
    bool async = false;
    bool installed = false;  // install_pages() ran, or nothing needed installing
  };
  // A free buffer in the best-fit index, ordered by size, then address.
  struct FreeKey {
    std::int64_t size = 0;
    std::int64_t offset = 0;
    int node = -1;  // its segment (determined by the offset: not part of the order)
    bool operator<(const FreeKey& other) const {
      return size != other.size ? size < other.size : offset < other.offset;
    }
  };
  struct Page {
    int refs = 0;  // allocated buffers spanning part of the page
    bool resident = false;
    // While on the LRU: the stamp it was freed with and its neighbours (older, newer; -1: none).
    std::uint64_t lru_stamp = 0;
    int lru_prev = -1;
    int lru_next = -1;
  };

  // Offsets are never negative and pages are a power of two: shifts and masks, not divisions.
  int page_of(std::int64_t offset) const { return static_cast<int>(offset >> page_shift_); }
  int end_page_of(std::int64_t end) const {
    return static_cast<int>((end + page_bytes_ - 1) >> page_shift_);
  }
  bool page_aligned(std::int64_t offset) const { return (offset & (page_bytes_ - 1)) == 0; }
  Segment& seg(int node) { return segments_[static_cast<std::size_t>(node)]; }
  const Segment& seg(int node) const { return segments_[static_cast<std::size_t>(node)]; }
  Page& page_at(int p) { return pages_[static_cast<std::size_t>(p)]; }
  int allocated_segment(int buffer) const;  // node of allocated `buffer`
  int new_segment(const Segment& value);
  // The best-fit index entry of free segment `node`.
  std::vector<FreeKey>::iterator find_free(int node);
  // Replaces the index entry `at` by `to`, moving only the entries between their places.
  void move_free_entry(std::vector<FreeKey>::iterator at, FreeKey to);
  void lru_add(int p, std::uint64_t stamp);
  void lru_remove(int p);

  std::int64_t space_bytes_;
  std::int64_t page_bytes_;
  int page_shift_ = 0;  // log2(page_bytes_)
  // Flat structures instead of trees: the shipped scenarios keep a few buffers per process, so
  // vectors and index links cost a fraction of map and set nodes.
  std::vector<Segment> segments_;  // list nodes; unused ones are on spare_segments_
  std::vector<int> spare_segments_;
  std::vector<FreeKey> free_by_size_;  // the free buffers, ascending
  std::vector<int> segment_of_id_;     // node of each allocated id, -1: id not in use
  std::vector<int> free_ids_;          // ids below segment_of_id_.size() not in use, descending
  std::vector<Page> pages_;
  // The LRU of resident pages no allocated buffer spans, oldest at the head. Stamps passed to
  // free() never decrease, so appending at the tail keeps it in (stamp, arrival) order.
  int lru_head_ = -1;
  int lru_tail_ = -1;
  int lru_count_ = 0;
  std::uint64_t last_stamp_ = 0;
  std::int64_t free_bytes_;
  std::int64_t free_async_bytes_;
  int allocated_count_ = 0;
  int resident_count_ = 0;
};

}  // namespace bindersim::binder
