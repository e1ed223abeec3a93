// The event queue: plain events ordered by (time, sequence number).
#pragma once

#include <cstdint>
#include <vector>

#include "bindersim/common/error.hpp"
#include "bindersim/engine/time.hpp"

namespace bindersim::engine {

// A scheduled event. Plain data: the receiving component interprets `kind`, `id` and `arg`.
struct Event {
  SimTime time = 0;
  std::uint64_t sequence = 0;  // insertion order; breaks ties between equal times
  std::uint16_t target = 0;    // index of the handler that receives the event
  std::uint16_t kind = 0;      // handler-defined event kind
  std::uint32_t id = 0;        // handler-defined entity (CPU, thread, ...)
  std::uint64_t arg = 0;       // handler-defined payload (often a generation token)
};

// Min-queue of events by (time, sequence): events at the same time leave in insertion order.
// Nothing compares pointers, so the order is the same on every run and platform; as the keys
// are unique, the order does not depend on how the queue is built either.
//
// Layout: a 4-ary heap of compact 16-byte keys (time and sequence in one 128-bit integer, so a
// comparison is one wide compare) beside the slot of each event's payload; payloads stay put
// in their slot from push to pop. Every position after the last entry holds a maximal key, so
// each level picks the least of four children without branching on the heap's size or on the
// comparisons. pop() leaves the root vacant: the next push() fills it and sifts down once
// (a simulator usually schedules an event from the one it just took), and only a query or
// another pop() before any push() closes the gap the classic way.
class EventQueue {
 public:
  // Adds an event; its sequence number is assigned here.
  void push(SimTime time, std::uint16_t target, std::uint16_t kind, std::uint32_t id,
            std::uint64_t arg);
  // Removes and returns the earliest event. The queue must not be empty.
  Event pop();
  // The earliest event (a copy) and its time. The queue must not be empty. Not const: they
  // may first close the gap a pop() left.
  Event top();
  SimTime top_time() {
    if (vacant_root_) settle();
    return time_of(keys_[0]);
  }
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  void reserve(std::size_t n);

 private:
  // What an event carries besides its key.
  struct Payload {
    std::uint64_t arg = 0;
    std::uint32_t id = 0;
    std::uint16_t target = 0;
    std::uint16_t kind = 0;
  };
  static constexpr std::size_t kArity = 4;
  static constexpr std::uint64_t kSignBit = std::uint64_t{1} << 63;
  // The key orders like (time, sequence): the time's sign bit is flipped so that signed times
  // compare correctly as unsigned high words.
  static Uint128 key_of(SimTime time, std::uint64_t sequence) {
    return (Uint128{static_cast<std::uint64_t>(time) ^ kSignBit} << 64) | sequence;
  }
  static SimTime time_of(Uint128 key) {
    return static_cast<SimTime>(static_cast<std::uint64_t>(key >> 64) ^ kSignBit);
  }
  static std::uint64_t sequence_of(Uint128 key) { return static_cast<std::uint64_t>(key); }
  // Greater than every real key: fills the positions after the last entry.
  static constexpr Uint128 kPadKey = ~Uint128{0};

  // Makes room for entry `count - 1` and the padding after it.
  void ensure_capacity(std::size_t count);
  // The index of the least of the four children starting at `first`.
  std::size_t least_child(std::size_t first) const;
  void sift_up(std::size_t index, Uint128 key, std::uint32_t slot);
  // Places (key, slot) at the vacant root or below, among `count` entries counting the root.
  void sift_down_from_root(std::size_t count, Uint128 key, std::uint32_t slot);
  // Fills the vacant root with the last entry.
  void settle();
  Event event_at(std::size_t index) const;

  // Heap entries: [0, size_), or [1, size_ + 1) below a vacant root; then padding keys (at
  // least kArity of them, so the children of any entry are readable).
  std::vector<Uint128> keys_ = std::vector<Uint128>(kArity, kPadKey);
  std::vector<std::uint32_t> slots_ = std::vector<std::uint32_t>(kArity, 0);  // beside keys_
  std::vector<Payload> payloads_;
  std::vector<std::uint32_t> free_slots_;  // payload slots not in use (but vacant_slot_)
  std::size_t size_ = 0;                   // events queued
  bool vacant_root_ = false;               // the root's event was popped; the gap is open
  std::uint32_t vacant_slot_ = 0;          // while it is open: the popped event's payload slot
  std::uint64_t next_sequence_ = 0;
};

}  // namespace bindersim::engine
