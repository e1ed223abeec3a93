#include "bindersim/engine/event_queue.hpp"

#include <algorithm>

namespace bindersim::engine {

void EventQueue::reserve(std::size_t n) {
  ensure_capacity(n + 1);
  payloads_.reserve(n);
  free_slots_.reserve(n);
}

void EventQueue::ensure_capacity(std::size_t count) {
  if (count + kArity <= keys_.size()) return;
  const std::size_t size = std::max(count + kArity, 2 * keys_.size());
  keys_.resize(size, kPadKey);
  slots_.resize(size, 0);
}

void EventQueue::push(SimTime time, std::uint16_t target, std::uint16_t kind, std::uint32_t id,
                      std::uint64_t arg) {
  const Uint128 key = key_of(time, next_sequence_++);
  if (vacant_root_) {
    // The popped event's payload slot is free: the new event takes it and the root.
    vacant_root_ = false;
    payloads_[vacant_slot_] = Payload{arg, id, target, kind};
    sift_down_from_root(++size_, key, vacant_slot_);
    return;
  }
  std::uint32_t slot = 0;
  if (free_slots_.empty()) {
    BSIM_CHECK(payloads_.size() < UINT32_MAX);
    slot = static_cast<std::uint32_t>(payloads_.size());
    payloads_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  payloads_[slot] = Payload{arg, id, target, kind};
  ensure_capacity(size_ + 1);
  sift_up(size_++, key, slot);
}

std::size_t EventQueue::least_child(std::size_t first) const {
  // Chosen with arithmetic, not branches: the comparisons are unpredictable. Padding keys never
  // win against a real entry.
  const Uint128* keys = keys_.data();
  const std::size_t a = first + static_cast<std::size_t>(keys[first + 1] < keys[first]);
  const std::size_t b = first + 2 + static_cast<std::size_t>(keys[first + 3] < keys[first + 2]);
  return a ^ ((a ^ b) & (std::size_t{0} - static_cast<std::size_t>(keys[b] < keys[a])));
}

// Places (key, slot) at `index` or above: parents later than the key move down.
void EventQueue::sift_up(std::size_t index, Uint128 key, std::uint32_t slot) {
  while (index > 0) {
    const std::size_t parent = (index - 1) / kArity;
    if (!(key < keys_[parent])) break;
    keys_[index] = keys_[parent];
    slots_[index] = slots_[parent];
    index = parent;
  }
  keys_[index] = key;
  slots_[index] = slot;
}

void EventQueue::sift_down_from_root(std::size_t count, Uint128 key, std::uint32_t slot) {
  std::size_t hole = 0;
  while (true) {
    const std::size_t first = hole * kArity + 1;
    if (first >= count) break;
    const std::size_t best = least_child(first);
    if (!(keys_[best] < key)) break;
    keys_[hole] = keys_[best];
    slots_[hole] = slots_[best];
    hole = best;
  }
  keys_[hole] = key;
  slots_[hole] = slot;
}

void EventQueue::settle() {
  vacant_root_ = false;
  free_slots_.push_back(vacant_slot_);
  // Entries are [1, size_ + 1): the last one leaves its position (padding from now on), the
  // gap moves down along the least children to the bottom, and the last entry rises from
  // there. It usually belongs near the bottom, so this saves a comparison per level.
  const std::size_t last = size_;
  const Uint128 moving_key = keys_[last];
  const std::uint32_t moving_slot = slots_[last];
  keys_[last] = kPadKey;
  if (last == 0) return;
  std::size_t hole = 0;
  while (true) {
    const std::size_t first = hole * kArity + 1;
    if (first >= last) break;
    const std::size_t best = least_child(first);
    keys_[hole] = keys_[best];
    slots_[hole] = slots_[best];
    hole = best;
  }
  sift_up(hole, moving_key, moving_slot);
}

Event EventQueue::event_at(std::size_t index) const {
  const Payload& payload = payloads_[slots_[index]];
  return Event{time_of(keys_[index]),
               sequence_of(keys_[index]),
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
  vacant_slot_ = slots_[0];
  vacant_root_ = true;
  --size_;
  return result;
}

}  // namespace bindersim::engine
