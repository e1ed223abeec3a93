#include "bindersim/engine/event_queue.hpp"

#include <algorithm>
#include <bit>

namespace bindersim::engine {

void EventQueue::grow(std::size_t count) {
  const std::size_t size = std::max(kLead + count + kArity, 2 * keys_.size());
  keys_.resize(size, kPadKey);
}

std::uint32_t EventQueue::new_slot() {
  BSIM_CHECK(payloads_.size() < kMaxSlots);
  const auto slot = static_cast<std::uint32_t>(payloads_.size());
  payloads_.emplace_back();
  ladder_keys_.emplace_back();
  next_.emplace_back(kNone);
  return slot;
}

void EventQueue::heap_insert(Uint128 key) {
  ensure_capacity(size_ + 1);
  sift_up(size_++, key);
  if (size_ >= spill_at_) [[unlikely]]
    spill();
}

void EventQueue::settle() {
  vacant_root_ = false;
  free_slot(vacant_slot_);
  // Entries are [1, size_ + 1): the last one leaves its position (padding from now on), the
  // gap moves down along the least children to the bottom, and the last entry rises from
  // there. It usually belongs near the bottom, so this saves a comparison per level.
  const std::size_t last = size_;
  const Uint128 moving_key = heap()[last];
  heap()[last] = kPadKey;
  if (last == 0) return;
  std::size_t hole = 0;
  while (true) {
    const std::size_t first = hole * kArity + 1;
    if (first >= last) break;
    const std::size_t best = least_child(first);
    heap()[hole] = heap()[best];
    hole = best;
  }
  sift_up(hole, moving_key);
}

Event EventQueue::top() {
  BSIM_CHECK(!empty());
  if (size_ == 0) refill();
  if (vacant_root_) settle();
  return event_at(0);
}

void EventQueue::add_rung(const List& list, std::uint64_t start, std::uint64_t end) {
  BSIM_CHECK(rung_count_ < kMaxRungs && start < end && list.count > 0);
  Rung& rung = rungs_[rung_count_++];
  // About kBucketsPerEvent buckets per event: the width is the power of two above
  // span / (events * kBucketsPerEvent).
  const std::uint64_t last = end - 1;
  const std::uint64_t buckets_wanted = std::uint64_t{list.count} * kBucketsPerEvent;
  rung.shift = std::min(63, static_cast<int>(std::bit_width((last - start) / buckets_wanted)));
  rung.start = start;
  rung.end = end;
  rung.current = 0;
  rung.current_start = start;
  const auto buckets = static_cast<std::size_t>(((last - start) >> rung.shift) + 1);
  rung.buckets.assign(buckets, List{});
  rung.occupied.assign((buckets + 63) / 64, 0);
  for (std::uint32_t slot = list.head; slot != kNone;) {
    const std::uint32_t after = next_[slot];
    add_to_bucket(rung, (key_order(ladder_keys_[slot]) - start) >> rung.shift, slot);
    slot = after;
  }
  heap_end_ = start;
}

void EventQueue::move_into_heap(const List& list) {
  if (size_ == 0 && list.count == 1) {  // the usual case: a bucket into the empty heap
    heap()[0] = ladder_keys_[list.head];
    size_ = 1;
    return;
  }
  ensure_capacity(size_ + list.count);
  for (std::uint32_t slot = list.head; slot != kNone; slot = next_[slot]) {
    sift_up(size_++, ladder_keys_[slot]);
  }
}

void EventQueue::refill() {
  // The heap is empty but perhaps for the gap of a pop(): close it.
  if (vacant_root_) {
    vacant_root_ = false;
    free_slot(vacant_slot_);
    heap()[0] = kPadKey;
  }
  spill_at_ = kSpillAt;
  while (true) {
    if (rung_count_ == 0) {
      const List list = top_;
      BSIM_CHECK(list.count > 0);
      const std::uint64_t lo = top_min_;
      const std::uint64_t hi = top_max_;
      top_ = List{};
      top_min_ = kMaxOrder;
      top_max_ = 0;
      if (list.count <= kTopIntoHeap) {
        // A small queue lives in the heap alone until it grows to spill_at_.
        top_start_ = kMaxOrder;
        heap_end_ = kMaxOrder;
        move_into_heap(list);
        return;
      }
      top_start_ = hi + 1;  // hi < kMaxOrder: times are before kNever
      add_rung(list, lo, top_start_);
    }
    Rung& rung = rungs_[rung_count_ - 1];
    // The next occupied bucket, found by its bit.
    std::size_t word = rung.current / 64;
    std::uint64_t bits = 0;
    if (word < rung.occupied.size()) {
      bits = rung.occupied[word] & (~std::uint64_t{0} << (rung.current % 64));
      while (bits == 0 && ++word < rung.occupied.size()) bits = rung.occupied[word];
    }
    if (bits == 0) {
      // Done with the rung: the coarser one (or top_) now starts where it ended.
      --rung_count_;
      heap_end_ = rung_count_ == 0 ? top_start_ : rungs_[rung_count_ - 1].current_start;
      continue;
    }
    rung.current = word * 64 + static_cast<std::size_t>(std::countr_zero(bits));
    rung.occupied[word] &= bits - 1;  // clears the lowest bit, the bucket's
    const List list = rung.buckets[rung.current];
    rung.buckets[rung.current] = List{};
    const std::uint64_t width = std::uint64_t{1} << rung.shift;
    const std::uint64_t start =
        rung.start + (static_cast<std::uint64_t>(rung.current) << rung.shift);
    ++rung.current;
    // The bucket's end, but not beyond the rung's (its last bucket may reach past it).
    rung.current_start = std::min(rung.end - start, width) + start;
    heap_end_ = rung.current_start;
    if (list.count > kSplitAbove && rung.shift > 0 && rung_count_ < kMaxRungs) {
      add_rung(list, start, rung.current_start);
      continue;
    }
    move_into_heap(list);
    return;
  }
}

void EventQueue::spill() {
  if (vacant_root_) settle();
  // The median time splits the heap; all events at that time go to the ladder.
  spill_keys_.assign(heap(), heap() + size_);
  const auto middle = spill_keys_.begin() + static_cast<std::ptrdiff_t>(size_ / 2);
  std::nth_element(spill_keys_.begin(), middle, spill_keys_.end());
  const std::uint64_t split = key_order(*middle);
  const bool all_at_split = key_order(*std::min_element(spill_keys_.begin(), middle + 1)) == split;
  if (all_at_split || rung_count_ == kMaxRungs) {
    spill_at_ = 2 * size_;  // nothing to split off: try again when the heap has doubled
    return;
  }
  List later;
  std::size_t kept = 0;
  for (const Uint128 key : spill_keys_) {
    if (key_order(key) >= split) {
      ladder_keys_[slot_of(key)] = key;
      add_to(later, slot_of(key));
    } else {
      spill_keys_[kept++] = key;
    }
  }
  std::fill(heap(), heap() + size_, kPadKey);
  size_ = 0;
  for (std::size_t i = 0; i < kept; ++i) sift_up(size_++, spill_keys_[i]);
  if (rung_count_ == 0) {
    // top_ holds events from top_start_ >= heap_end_ > split on: the later half joins it.
    for (std::uint32_t slot = later.head; slot != kNone;) {
      const std::uint32_t after = next_[slot];
      add_to(top_, slot);
      top_min_ = std::min(top_min_, key_order(ladder_keys_[slot]));
      top_max_ = std::max(top_max_, key_order(ladder_keys_[slot]));
      slot = after;
    }
    top_start_ = split;
    heap_end_ = split;
  } else {
    add_rung(later, split, heap_end_);
  }
  spill_at_ = std::max(kSpillAt, 2 * size_);
}

}  // namespace bindersim::engine
