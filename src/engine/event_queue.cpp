#include "bindersim/engine/event_queue.hpp"

#include <algorithm>

namespace bindersim::engine {

void EventQueue::reserve(std::size_t n) {
  ensure_capacity(n + 1);
  payloads_.reserve(n);
  free_slots_.reserve(n);
}

void EventQueue::ensure_capacity(std::size_t count) {
  if (kLead + count + kArity <= keys_.size()) return;
  const std::size_t size = std::max(kLead + count + kArity, 2 * keys_.size());
  keys_.resize(size, kPadKey);
}

void EventQueue::push(SimTime time, std::uint16_t target, std::uint16_t kind, std::uint32_t id,
                      std::uint64_t arg) {
  BSIM_CHECK(next_sequence_ < kMaxSequence);
  const std::uint64_t sequence = next_sequence_++;
  if (vacant_root_) {
    // The popped event's payload slot is free: the new event takes it and the root.
    vacant_root_ = false;
    payloads_[vacant_slot_] = Payload{arg, id, target, kind};
    sift_down_from_root(++size_, key_of(time, sequence, vacant_slot_));
    return;
  }
  std::uint32_t slot = 0;
  if (free_slots_.empty()) {
    BSIM_CHECK(payloads_.size() < kMaxSlots);
    slot = static_cast<std::uint32_t>(payloads_.size());
    payloads_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  payloads_[slot] = Payload{arg, id, target, kind};
  ensure_capacity(size_ + 1);
  sift_up(size_++, key_of(time, sequence, slot));
}

std::size_t EventQueue::least_child(std::size_t first) const {
  // Chosen with arithmetic, not branches: the comparisons are unpredictable. Padding keys never
  // win against a real entry.
  const Uint128* keys = heap();
  const std::size_t a = first + static_cast<std::size_t>(keys[first + 1] < keys[first]);
  const std::size_t b = first + 2 + static_cast<std::size_t>(keys[first + 3] < keys[first + 2]);
  return a ^ ((a ^ b) & (std::size_t{0} - static_cast<std::size_t>(keys[b] < keys[a])));
}

// Places `key` at `index` or above: parents later than the key move down.
void EventQueue::sift_up(std::size_t index, Uint128 key) {
  while (index > 0) {
    const std::size_t parent = (index - 1) / kArity;
    if (!(key < heap()[parent])) break;
    heap()[index] = heap()[parent];
    index = parent;
  }
  heap()[index] = key;
}

void EventQueue::sift_down_from_root(std::size_t count, Uint128 key) {
  std::size_t hole = 0;
  while (true) {
    const std::size_t first = hole * kArity + 1;
    if (first >= count) break;
    const std::size_t best = least_child(first);
    if (!(heap()[best] < key)) break;
    heap()[hole] = heap()[best];
    hole = best;
  }
  heap()[hole] = key;
}

void EventQueue::settle() {
  vacant_root_ = false;
  free_slots_.push_back(vacant_slot_);
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

Event EventQueue::event_at(std::size_t index) const {
  const Payload& payload = payloads_[slot_of(heap()[index])];
  return Event{time_of(heap()[index]),
               sequence_of(heap()[index]),
               payload.target,
               payload.kind,
               payload.id,
               payload.arg};
}

Event EventQueue::top() {
  BSIM_CHECK(!empty());
  if (vacant_root_) settle();
  return event_at(0);
}

Event EventQueue::pop() {
  BSIM_CHECK(!empty());
  if (vacant_root_) settle();
  const Event result = event_at(0);
  vacant_slot_ = slot_of(heap()[0]);
  vacant_root_ = true;
  --size_;
  return result;
}

}  // namespace bindersim::engine
