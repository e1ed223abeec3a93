#include "bindersim/binder/allocator.hpp"

#include <algorithm>
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
  segments_.emplace(0, Segment{space_bytes_, -1, false, false});
  free_by_size_.emplace(space_bytes_, 0);
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
  const auto fit = free_by_size_.lower_bound({out.size, 0});
  if (fit == free_by_size_.end()) {
    out.failure = AllocFailure::kNoSpace;
    return out;
  }
  const auto [hole_size, offset] = *fit;
  free_by_size_.erase(fit);
  const auto segment = segments_.find(offset);
  BSIM_CHECK(segment != segments_.end() && segment->second.id < 0);
  if (hole_size > out.size) {
    // Split: the remainder stays free at the higher address.
    const std::int64_t rest_offset = offset + out.size;
    const std::int64_t rest_size = hole_size - out.size;
    segments_.emplace_hint(std::next(segment), rest_offset, Segment{rest_size, -1, false, false});
    free_by_size_.emplace(rest_size, rest_offset);
  }

  int id;
  if (free_ids_.empty()) {
    id = static_cast<int>(offset_of_id_.size());
    offset_of_id_.push_back(offset);
  } else {
    id = free_ids_.top();
    free_ids_.pop();
    offset_of_id_[id] = offset;
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
    Page& page = pages_[p];
    if (!page.resident) {
      ++out.pages_to_install;
    } else if (page.refs == 0) {
      lru_.erase(page.lru_key);
      ++out.pages_from_lru;
    }
    ++page.refs;
  }
  segment->second = Segment{out.size, id, async, out.pages_to_install == 0};
  return out;
}

int BufferAllocator::install_pages(int buffer) {
  const auto segment = allocated_segment(buffer);
  const int first = page_of(segment->first);
  const int end = end_page_of(segment->first + segment->second.size);
  int installed = 0;
  for (int p = first; p < end; ++p) {
    if (!pages_[p].resident) {
      pages_[p].resident = true;
      ++resident_count_;
      ++installed;
    }
  }
  segment->second.installed = true;
  return installed;
}

int BufferAllocator::free(int buffer, std::uint64_t lru_stamp) {
  BSIM_CHECK_MSG(lru_stamp >= last_stamp_, "LRU stamps passed to free() must not decrease");
  last_stamp_ = lru_stamp;
  auto segment = allocated_segment(buffer);
  const std::int64_t offset = segment->first;
  const std::int64_t size = segment->second.size;
  if (segment->second.async) free_async_bytes_ += size;

  // Release the buffer's pages; those no allocated buffer spans any more and that are resident
  // go to the LRU tail. Order of list_lru_add in 6.1: the whole pages inside the buffer from
  // the highest down (binder_update_page_range's free loop), then a partial last page, then a
  // partial first page (binder_delete_free_buffer on merging with the next, then the previous
  // free buffer). A partial page is released only when its other owners are free.
  const int first = page_of(offset);
  const int end = end_page_of(offset + size);
  for (int p = first; p < end; ++p) {
    BSIM_CHECK(pages_[p].refs > 0);
    --pages_[p].refs;
  }
  int to_lru = 0;
  const auto release = [&](int p) {
    if (pages_[p].refs == 0 && pages_[p].resident) {
      lru_add(p, lru_stamp);
      ++to_lru;
    }
  };
  const bool first_partial = offset % page_bytes_ != 0;
  const bool last_partial = (offset + size) % page_bytes_ != 0;
  const int whole_begin = first_partial ? first + 1 : first;
  const int whole_end = last_partial ? end - 1 : end;
  for (int p = whole_end - 1; p >= whole_begin; --p) release(p);
  if (last_partial && !(first_partial && end - 1 == first)) release(end - 1);
  if (first_partial) release(first);

  offset_of_id_[buffer] = -1;
  free_ids_.push(buffer);
  --allocated_count_;
  free_bytes_ += size;
  segment->second = Segment{size, -1, false, false};

  // Merge with a free next buffer, then with a free previous one.
  const auto next = std::next(segment);
  if (next != segments_.end() && next->second.id < 0) {
    free_by_size_.erase({next->second.size, next->first});
    segment->second.size += next->second.size;
    segments_.erase(next);
  }
  if (segment != segments_.begin()) {
    const auto prev = std::prev(segment);
    if (prev->second.id < 0) {
      free_by_size_.erase({prev->second.size, prev->first});
      prev->second.size += segment->second.size;
      segments_.erase(segment);
      segment = prev;
    }
  }
  free_by_size_.emplace(segment->second.size, segment->first);
  return to_lru;
}

std::optional<LruPage> BufferAllocator::oldest_lru_page() const {
  if (lru_.empty()) return std::nullopt;
  const auto& [key, page] = *lru_.begin();
  return LruPage{page, key.first};
}

void BufferAllocator::reclaim_page(int page) {
  BSIM_CHECK(page >= 0 && page < page_count());
  Page& state = pages_[page];
  BSIM_CHECK_MSG(state.resident && state.refs == 0, "reclaim_page: page is not on the LRU");
  lru_.erase(state.lru_key);
  state.resident = false;
  --resident_count_;
}

std::int64_t BufferAllocator::largest_free_buffer() const {
  return free_by_size_.empty() ? 0 : free_by_size_.rbegin()->first;
}

bool BufferAllocator::is_allocated(int buffer) const {
  return buffer >= 0 && buffer < static_cast<int>(offset_of_id_.size()) &&
         offset_of_id_[buffer] >= 0;
}

std::int64_t BufferAllocator::buffer_size(int buffer) const {
  BSIM_CHECK(is_allocated(buffer));
  return segments_.at(offset_of_id_[buffer]).size;
}

std::int64_t BufferAllocator::buffer_offset(int buffer) const {
  BSIM_CHECK(is_allocated(buffer));
  return offset_of_id_[buffer];
}

PageState BufferAllocator::page_state(int page) const {
  BSIM_CHECK(page >= 0 && page < page_count());
  const Page& state = pages_[page];
  if (state.refs > 0) return state.resident ? PageState::kInUse : PageState::kPendingInstall;
  return state.resident ? PageState::kLru : PageState::kUnmapped;
}

std::map<std::int64_t, BufferAllocator::Segment>::iterator BufferAllocator::allocated_segment(
    int buffer) {
  BSIM_CHECK_MSG(is_allocated(buffer), "buffer id is not allocated");
  const auto segment = segments_.find(offset_of_id_[buffer]);
  BSIM_CHECK(segment != segments_.end() && segment->second.id == buffer);
  return segment;
}

void BufferAllocator::lru_add(int page, std::uint64_t stamp) {
  const std::pair<std::uint64_t, std::uint64_t> key{stamp, lru_sequence_++};
  lru_.emplace(key, page);
  pages_[page].lru_key = key;
}

std::string BufferAllocator::check_invariants() const {
  const auto at = [](std::int64_t offset) { return " at offset " + std::to_string(offset); };
  if (segments_.empty() || segments_.begin()->first != 0) return "buffers do not start at 0";

  std::int64_t expected_offset = 0;
  std::int64_t free_sum = 0;
  std::int64_t async_sum = 0;
  int free_count = 0;
  int allocated = 0;
  bool previous_free = false;
  std::vector<int> refs(pages_.size(), 0);
  for (const auto& [offset, segment] : segments_) {
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
      if (free_by_size_.count({segment.size, offset}) == 0) {
        return "free buffer missing from the size index" + at(offset);
      }
      free_sum += segment.size;
      ++free_count;
    } else {
      if (segment.id >= static_cast<int>(offset_of_id_.size()) ||
          offset_of_id_[segment.id] != offset) {
        return "buffer id " + std::to_string(segment.id) + " does not map back" + at(offset);
      }
      ++allocated;
      if (segment.async) async_sum += segment.size;
      const int end = end_page_of(offset + segment.size);
      for (int p = page_of(offset); p < end; ++p) {
        ++refs[p];
        if (segment.installed && !pages_[p].resident) {
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
  if (free_count != static_cast<int>(free_by_size_.size())) {
    return "size index holds " + std::to_string(free_by_size_.size()) + " entries for " +
           std::to_string(free_count) + " free buffers";
  }
  if (free_sum != free_bytes_) {
    return "free bytes " + std::to_string(free_bytes_) + " but free buffers sum to " +
           std::to_string(free_sum);
  }
  if (allocated != allocated_count_) return "allocated count out of step";
  std::vector<int> free_listed(offset_of_id_.size(), 0);
  auto free_ids = free_ids_;
  for (; !free_ids.empty(); free_ids.pop()) {
    const int id = free_ids.top();
    if (id < 0 || id >= static_cast<int>(free_listed.size())) {
      return "free buffer id " + std::to_string(id) + " out of range";
    }
    ++free_listed[static_cast<std::size_t>(id)];
  }
  int ids_in_use = 0;
  for (std::size_t id = 0; id < offset_of_id_.size(); ++id) {
    const bool in_use = offset_of_id_[id] >= 0;
    ids_in_use += in_use ? 1 : 0;
    if (free_listed[id] > 1) return "buffer id " + std::to_string(id) + " listed free twice";
    if (in_use == (free_listed[id] != 0)) {
      return "buffer id " + std::to_string(id) + " both or neither in use and free";
    }
  }
  if (ids_in_use != allocated || free_ids_.size() + ids_in_use != offset_of_id_.size()) {
    return "buffer ids out of step with allocated buffers";
  }
  if (free_async_bytes_ != space_bytes_ / 2 - async_sum || free_async_bytes_ < 0) {
    return "async budget " + std::to_string(free_async_bytes_) + " but async buffers hold " +
           std::to_string(async_sum) + " of " + std::to_string(space_bytes_ / 2);
  }

  int resident = 0;
  int on_lru = 0;
  for (std::size_t p = 0; p < pages_.size(); ++p) {
    const Page& page = pages_[p];
    const std::string name = "page " + std::to_string(p);
    if (page.refs != refs[p]) {
      return name + " has " + std::to_string(page.refs) + " references, buffers give " +
             std::to_string(refs[p]);
    }
    resident += page.resident ? 1 : 0;
    const auto lru_entry = lru_.find(page.lru_key);
    const bool listed = lru_entry != lru_.end() && lru_entry->second == static_cast<int>(p);
    const bool should_be_listed = page.resident && page.refs == 0;
    if (listed != should_be_listed) {
      return name + (should_be_listed ? " is resident-free but not on the LRU"
                                      : " is on the LRU but in use or unmapped");
    }
    on_lru += listed ? 1 : 0;
  }
  if (resident != resident_count_) return "resident page count out of step";
  if (on_lru != static_cast<int>(lru_.size())) return "LRU holds entries of no page";
  return "";
}

}  // namespace bindersim::binder
