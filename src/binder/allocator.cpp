#include "bindersim/binder/allocator.hpp"

#include <algorithm>
#include <bit>
#include <functional>
#include <iterator>

#include "bindersim/common/error.hpp"

namespace bindersim::binder {

namespace {

// Inputs above this are no binder transaction; the bound keeps the size sums exact.
constexpr std::int64_t kMaxRequestBytes = std::int64_t{1} << 40;

std::int64_t align_up(std::int64_t bytes) {
  return (bytes + kBufferAlignBytes - 1) / kBufferAlignBytes * kBufferAlignBytes;
}

}  // namespace

BufferAllocator::BufferAllocator(AllocatorConfig config)
    : space_bytes_(config.space_bytes),
      page_bytes_(config.page_bytes),
      free_bytes_(config.space_bytes),
      // binder_alloc_mmap_handler: free_async_space = buffer_size / 2.
      free_async_bytes_(config.space_bytes / 2) {
  if (page_bytes_ < kBufferAlignBytes || (page_bytes_ & (page_bytes_ - 1)) != 0) {
    throw ConfigError("allocator: page_bytes: expected a power of two of at least " +
                      std::to_string(kBufferAlignBytes) + ", got " + std::to_string(page_bytes_));
  }
  if (space_bytes_ <= 0 || space_bytes_ % page_bytes_ != 0 ||
      space_bytes_ > kMaxAllocatorSpaceBytes) {
    throw ConfigError("allocator: space_bytes: expected a positive multiple of page_bytes (" +
                      std::to_string(page_bytes_) + ") of at most " +
                      std::to_string(kMaxAllocatorSpaceBytes) + ", got " +
                      std::to_string(space_bytes_));
  }
  page_shift_ = std::countr_zero(static_cast<std::uint64_t>(page_bytes_));
  segments_.push_back(Segment{0, space_bytes_, -1, -1, -1, false, false});
  free_by_size_.push_back(FreeKey{space_bytes_, 0, 0});
  pages_.resize(static_cast<std::size_t>(space_bytes_ / page_bytes_));
}

Allocation BufferAllocator::allocate(std::int64_t data_bytes, std::int64_t offsets_bytes,
                                     bool async) {
  BSIM_CHECK(data_bytes >= 0 && data_bytes < kMaxRequestBytes);
  BSIM_CHECK(offsets_bytes >= 0 && offsets_bytes < kMaxRequestBytes);
  Allocation out;
  out.size = std::max(align_up(data_bytes) + align_up(offsets_bytes), kBufferAlignBytes);

  // Async accounting as in Linux 6.1.y / android14-6.1 once the stable backport of
  // c6d05e0762ab ("binder: fix unused alloc->free_async_space", 6.7) landed: the budget is
  // checked against the padded size before the best-fit search, that size is charged, and free
  // returns the buffer's size (equal to it: an allocated buffer is always split to its size).
  // Before that fix 6.1 also charged sizeof(struct binder_buffer), 104 bytes on arm64, per
  // buffer, and checked the unpadded size.
  if (async && free_async_bytes_ < out.size) {
    out.failure = AllocFailure::kNoAsyncSpace;
    return out;
  }

  // The smallest free buffer of at least out.size; the lowest address among equal sizes. (The
  // kernel's rbtree keyed by size alone returns whichever equal-sized node its search meets.)
  const auto fit =
      std::lower_bound(free_by_size_.begin(), free_by_size_.end(), FreeKey{out.size, 0, -1});
  if (fit == free_by_size_.end()) {
    out.failure = AllocFailure::kNoSpace;
    return out;
  }
  const int node = fit->node;
  const std::int64_t offset = fit->offset;
  BSIM_CHECK(seg(node).id < 0 && seg(node).offset == offset);
  if (fit->size > out.size) {
    // Split: the remainder stays free at the higher address, in a node after this one.
    const std::int64_t rest_offset = offset + out.size;
    const int rest = new_segment(
        Segment{rest_offset, fit->size - out.size, node, seg(node).next, -1, false, false});
    if (seg(rest).next >= 0) seg(seg(rest).next).prev = rest;
    seg(node).next = rest;
    move_free_entry(fit, FreeKey{seg(rest).size, rest_offset, rest});
  } else {
    free_by_size_.erase(fit);
  }

  int id;
  if (free_ids_.empty()) {
    id = static_cast<int>(segment_of_id_.size());
    segment_of_id_.push_back(node);
  } else {
    id = free_ids_.back();
    free_ids_.pop_back();
    segment_of_id_[static_cast<std::size_t>(id)] = node;
  }
  free_bytes_ -= out.size;
  if (async) free_async_bytes_ -= out.size;
  ++allocated_count_;

  // Pages: a page newly spanned by an allocated buffer leaves the LRU if resident; any page of
  // the buffer not resident needs installing.
  out.buffer = id;
  out.offset = offset;
  out.first_page = page_of(offset);
  out.end_page = end_page_of(offset + out.size);
  for (int p = out.first_page; p < out.end_page; ++p) {
    Page& state = page_at(p);
    if (!state.resident) {
      ++out.pages_to_install;
    } else if (state.refs == 0) {
      lru_remove(p);
      ++out.pages_from_lru;
    }
    ++state.refs;
  }
  Segment& s = seg(node);
  s.size = out.size;
  s.id = id;
  s.async = async;
  s.installed = out.pages_to_install == 0;
  return out;
}

int BufferAllocator::install_pages(int buffer) {
  Segment& s = seg(allocated_segment(buffer));
  const int first = page_of(s.offset);
  const int end = end_page_of(s.offset + s.size);
  int installed = 0;
  for (int p = first; p < end; ++p) {
    if (!page_at(p).resident) {
      page_at(p).resident = true;
      ++resident_count_;
      ++installed;
    }
  }
  s.installed = true;
  return installed;
}

int BufferAllocator::free(int buffer, std::uint64_t lru_stamp) {
  BSIM_CHECK_MSG(lru_stamp >= last_stamp_, "LRU stamps passed to free() must not decrease");
  last_stamp_ = lru_stamp;
  int node = allocated_segment(buffer);
  const std::int64_t offset = seg(node).offset;
  const std::int64_t size = seg(node).size;
  if (seg(node).async) free_async_bytes_ += size;

  // Release the buffer's pages; those no allocated buffer spans any more and that are resident
  // go to the LRU tail. Order of list_lru_add in 6.1: the whole pages inside the buffer from
  // the highest down (binder_update_page_range's free loop), then a partial last page, then a
  // partial first page (binder_delete_free_buffer on merging with the next, then the previous
  // free buffer). A partial page is released only when its other owners are free.
  const int first = page_of(offset);
  const int end = end_page_of(offset + size);
  for (int p = first; p < end; ++p) {
    BSIM_CHECK(page_at(p).refs > 0);
    --page_at(p).refs;
  }
  int to_lru = 0;
  const auto release = [&](int p) {
    if (page_at(p).refs == 0 && page_at(p).resident) {
      lru_add(p, lru_stamp);
      ++to_lru;
    }
  };
  const bool first_partial = !page_aligned(offset);
  const bool last_partial = !page_aligned(offset + size);
  const int whole_begin = first_partial ? first + 1 : first;
  const int whole_end = last_partial ? end - 1 : end;
  for (int p = whole_end - 1; p >= whole_begin; --p) release(p);
  if (last_partial && !(first_partial && end - 1 == first)) release(end - 1);
  if (first_partial) release(first);

  segment_of_id_[static_cast<std::size_t>(buffer)] = -1;
  free_ids_.insert(std::lower_bound(free_ids_.begin(), free_ids_.end(), buffer, std::greater<>()),
                   buffer);
  --allocated_count_;
  free_bytes_ += size;
  {
    Segment& s = seg(node);
    s.id = -1;
    s.async = false;
    s.installed = false;
  }

  // Merge with a free next buffer, then with a free previous one. The merged buffer keeps the
  // lowest node; an index entry of a neighbour is reused for it.
  const int next = seg(node).next;
  const bool next_free = next >= 0 && seg(next).id < 0;
  const int prev = seg(node).prev;
  const bool prev_free = prev >= 0 && seg(prev).id < 0;
  auto entry = free_by_size_.end();
  if (next_free) {
    entry = find_free(next);
    seg(node).size += seg(next).size;
    seg(node).next = seg(next).next;
    if (seg(node).next >= 0) seg(seg(node).next).prev = node;
    spare_segments_.push_back(next);
  }
  if (prev_free) {
    if (entry != free_by_size_.end()) free_by_size_.erase(entry);
    entry = find_free(prev);
    seg(prev).size += seg(node).size;
    seg(prev).next = seg(node).next;
    if (seg(prev).next >= 0) seg(seg(prev).next).prev = prev;
    spare_segments_.push_back(node);
    node = prev;
  }
  const FreeKey key{seg(node).size, seg(node).offset, node};
  if (entry != free_by_size_.end()) {
    move_free_entry(entry, key);
  } else {
    free_by_size_.insert(std::upper_bound(free_by_size_.begin(), free_by_size_.end(), key), key);
  }
  return to_lru;
}

std::optional<LruPage> BufferAllocator::oldest_lru_page() const {
  if (lru_head_ < 0) return std::nullopt;
  return LruPage{lru_head_, pages_[static_cast<std::size_t>(lru_head_)].lru_stamp};
}

std::optional<LruPage> BufferAllocator::next_lru_page(int p) const {
  BSIM_CHECK(p >= 0 && p < page_count());
  const Page& state = pages_[static_cast<std::size_t>(p)];
  BSIM_CHECK_MSG(state.resident && state.refs == 0, "next_lru_page: page is not on the LRU");
  if (state.lru_next < 0) return std::nullopt;
  return LruPage{state.lru_next, pages_[static_cast<std::size_t>(state.lru_next)].lru_stamp};
}

std::optional<LruPage> BufferAllocator::oldest_lru_page_after(std::uint64_t stamp) const {
  for (int p = lru_head_; p >= 0; p = pages_[static_cast<std::size_t>(p)].lru_next) {
    const std::uint64_t at = pages_[static_cast<std::size_t>(p)].lru_stamp;
    if (at > stamp) return LruPage{p, at};
  }
  return std::nullopt;
}

void BufferAllocator::reclaim_page(int p) {
  BSIM_CHECK(p >= 0 && p < page_count());
  Page& state = page_at(p);
  BSIM_CHECK_MSG(state.resident && state.refs == 0, "reclaim_page: page is not on the LRU");
  lru_remove(p);
  state.resident = false;
  --resident_count_;
}

std::int64_t BufferAllocator::largest_free_buffer() const {
  return free_by_size_.empty() ? 0 : free_by_size_.back().size;
}

bool BufferAllocator::is_allocated(int buffer) const {
  return buffer >= 0 && buffer < static_cast<int>(segment_of_id_.size()) &&
         segment_of_id_[static_cast<std::size_t>(buffer)] >= 0;
}

std::int64_t BufferAllocator::buffer_size(int buffer) const {
  return seg(allocated_segment(buffer)).size;
}

PageState BufferAllocator::page_state(int p) const {
  BSIM_CHECK(p >= 0 && p < page_count());
  const Page& state = pages_[static_cast<std::size_t>(p)];
  if (state.refs > 0) return state.resident ? PageState::kInUse : PageState::kPendingInstall;
  return state.resident ? PageState::kLru : PageState::kUnmapped;
}

int BufferAllocator::allocated_segment(int buffer) const {
  BSIM_CHECK_MSG(is_allocated(buffer), "buffer id is not allocated");
  const int node = segment_of_id_[static_cast<std::size_t>(buffer)];
  BSIM_CHECK(seg(node).id == buffer);
  return node;
}

int BufferAllocator::new_segment(const Segment& value) {
  if (spare_segments_.empty()) {
    segments_.push_back(value);
    return static_cast<int>(segments_.size()) - 1;
  }
  const int node = spare_segments_.back();
  spare_segments_.pop_back();
  seg(node) = value;
  return node;
}

std::vector<BufferAllocator::FreeKey>::iterator BufferAllocator::find_free(int node) {
  const FreeKey key{seg(node).size, seg(node).offset, node};
  const auto it = std::lower_bound(free_by_size_.begin(), free_by_size_.end(), key);
  BSIM_CHECK(it != free_by_size_.end() && it->node == node);
  return it;
}

void BufferAllocator::move_free_entry(std::vector<FreeKey>::iterator at, FreeKey to) {
  if (to < *at) {
    const auto place = std::upper_bound(free_by_size_.begin(), at, to);
    std::move_backward(place, at, std::next(at));
    *place = to;
  } else {
    const auto place = std::lower_bound(std::next(at), free_by_size_.end(), to);
    std::move(std::next(at), place, at);
    *std::prev(place) = to;
  }
}

void BufferAllocator::lru_add(int p, std::uint64_t stamp) {
  Page& state = page_at(p);
  state.lru_stamp = stamp;
  state.lru_prev = lru_tail_;
  state.lru_next = -1;
  if (lru_tail_ >= 0) {
    page_at(lru_tail_).lru_next = p;
  } else {
    lru_head_ = p;
  }
  lru_tail_ = p;
  ++lru_count_;
}

void BufferAllocator::lru_remove(int p) {
  Page& state = page_at(p);
  if (state.lru_prev >= 0) {
    page_at(state.lru_prev).lru_next = state.lru_next;
  } else {
    lru_head_ = state.lru_next;
  }
  if (state.lru_next >= 0) {
    page_at(state.lru_next).lru_prev = state.lru_prev;
  } else {
    lru_tail_ = state.lru_prev;
  }
  state.lru_prev = -1;
  state.lru_next = -1;
  --lru_count_;
}

std::string BufferAllocator::check_invariants() const {
  const auto at = [](std::int64_t offset) { return " at offset " + std::to_string(offset); };
  if (segments_.empty() || seg(0).offset != 0 || seg(0).prev != -1) {
    return "buffers do not start at 0";
  }

  std::int64_t expected_offset = 0;
  std::int64_t free_sum = 0;
  std::int64_t async_sum = 0;
  int free_count = 0;
  int allocated = 0;
  bool previous_free = false;
  std::vector<int> refs(pages_.size(), 0);
  std::size_t listed_nodes = 0;
  for (int node = 0, prev = -1; node >= 0; prev = node, node = seg(node).next) {
    const Segment& segment = seg(node);
    const std::int64_t offset = segment.offset;
    if (++listed_nodes > segments_.size()) return "the buffer list has a cycle";
    if (segment.prev != prev) return "buffer list links out of step" + at(offset);
    if (offset != expected_offset) {
      return "gap or overlap" + at(expected_offset) + " (next buffer" + at(offset) + ")";
    }
    if (segment.size <= 0 || segment.size % kBufferAlignBytes != 0) {
      return "buffer size " + std::to_string(segment.size) + " not a positive multiple of 8" +
             at(offset);
    }
    expected_offset = offset + segment.size;
    const bool is_free = segment.id < 0;
    if (is_free) {
      if (previous_free) return "two adjacent free buffers" + at(offset);
      if (segment.async || segment.installed)
        return "free buffer with allocation flags" + at(offset);
      const FreeKey key{segment.size, offset, node};
      const auto entry = std::lower_bound(free_by_size_.begin(), free_by_size_.end(), key);
      if (entry == free_by_size_.end() || entry->node != node || entry->size != segment.size ||
          entry->offset != offset) {
        return "free buffer missing from the size index" + at(offset);
      }
      free_sum += segment.size;
      ++free_count;
    } else {
      if (segment.id >= static_cast<int>(segment_of_id_.size()) ||
          segment_of_id_[static_cast<std::size_t>(segment.id)] != node) {
        return "buffer id " + std::to_string(segment.id) + " does not map back" + at(offset);
      }
      ++allocated;
      if (segment.async) async_sum += segment.size;
      const int end = end_page_of(offset + segment.size);
      for (int p = page_of(offset); p < end; ++p) {
        ++refs[static_cast<std::size_t>(p)];
        if (segment.installed && !pages_[static_cast<std::size_t>(p)].resident) {
          return "installed buffer" + at(offset) + " spans non-resident page " + std::to_string(p);
        }
      }
    }
    previous_free = is_free;
  }
  if (expected_offset != space_bytes_) {
    return "buffers end at " + std::to_string(expected_offset) + ", not at the space end " +
           std::to_string(space_bytes_);
  }
  if (listed_nodes + spare_segments_.size() != segments_.size()) {
    return "buffer nodes neither listed nor spare";
  }
  for (std::size_t i = 1; i < free_by_size_.size(); ++i) {
    if (!(free_by_size_[i - 1] < free_by_size_[i])) return "size index out of order";
  }
  if (free_count != static_cast<int>(free_by_size_.size())) {
    return "size index holds " + std::to_string(free_by_size_.size()) + " entries for " +
           std::to_string(free_count) + " free buffers";
  }
  if (free_sum != free_bytes_) {
    return "free bytes " + std::to_string(free_bytes_) + " but free buffers sum to " +
           std::to_string(free_sum);
  }
  if (allocated != allocated_count_) return "allocated count out of step";
  std::vector<int> free_listed(segment_of_id_.size(), 0);
  for (std::size_t i = 0; i < free_ids_.size(); ++i) {
    const int id = free_ids_[i];
    if (id < 0 || id >= static_cast<int>(free_listed.size())) {
      return "free buffer id " + std::to_string(id) + " out of range";
    }
    if (i > 0 && free_ids_[i - 1] <= id) return "free buffer ids out of order";
    ++free_listed[static_cast<std::size_t>(id)];
  }
  int ids_in_use = 0;
  for (std::size_t id = 0; id < segment_of_id_.size(); ++id) {
    const bool in_use = segment_of_id_[id] >= 0;
    ids_in_use += in_use ? 1 : 0;
    if (free_listed[id] > 1) return "buffer id " + std::to_string(id) + " listed free twice";
    if (in_use == (free_listed[id] != 0)) {
      return "buffer id " + std::to_string(id) + " both or neither in use and free";
    }
  }
  if (ids_in_use != allocated || free_ids_.size() + ids_in_use != segment_of_id_.size()) {
    return "buffer ids out of step with allocated buffers";
  }
  if (free_async_bytes_ != space_bytes_ / 2 - async_sum || free_async_bytes_ < 0) {
    return "async budget " + std::to_string(free_async_bytes_) + " but async buffers hold " +
           std::to_string(async_sum) + " of " + std::to_string(space_bytes_ / 2);
  }

  // The LRU, head to tail: consistent links, stamps not decreasing.
  std::vector<bool> listed(pages_.size(), false);
  int on_lru = 0;
  for (int p = lru_head_, prev = -1; p >= 0;
       prev = p, p = pages_[static_cast<std::size_t>(p)].lru_next) {
    if (p >= page_count() || listed[static_cast<std::size_t>(p)]) return "the LRU has a cycle";
    const Page& page = pages_[static_cast<std::size_t>(p)];
    if (page.lru_prev != prev) return "LRU links out of step at page " + std::to_string(p);
    if (prev >= 0 && pages_[static_cast<std::size_t>(prev)].lru_stamp > page.lru_stamp) {
      return "LRU stamps decrease at page " + std::to_string(p);
    }
    listed[static_cast<std::size_t>(p)] = true;
    ++on_lru;
    if (page.lru_next < 0 && p != lru_tail_) return "LRU tail out of step";
  }
  int resident = 0;
  for (std::size_t p = 0; p < pages_.size(); ++p) {
    const Page& page = pages_[p];
    const std::string name = "page " + std::to_string(p);
    if (page.refs != refs[p]) {
      return name + " has " + std::to_string(page.refs) + " references, buffers give " +
             std::to_string(refs[p]);
    }
    resident += page.resident ? 1 : 0;
    const bool should_be_listed = page.resident && page.refs == 0;
    if (listed[p] != should_be_listed) {
      return name + (should_be_listed ? " is resident-free but not on the LRU"
                                      : " is on the LRU but in use or unmapped");
    }
  }
  if (resident != resident_count_) return "resident page count out of step";
  if (on_lru != lru_count_) return "LRU count out of step";
  return "";
}

}  // namespace bindersim::binder
