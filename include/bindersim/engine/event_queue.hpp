// The event queue: plain events ordered by (time, sequence number).
#pragma once

#include <cstdint>
#include <new>
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
// Layout: a 4-ary heap of compact 16-byte keys: time, sequence and the slot of the event's
// payload in one 128-bit integer, so a comparison is one wide compare and a move one store
// (the slot sits below the sequence, which is unique: it never decides the order). Payloads
// stay put in their slot from push to pop. Limits, checked: 2^40 events pushed over the
// queue's life, 2^24 pending at once. Every position after the last entry holds a maximal key, so
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
    return time_of(heap()[0]);
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
  static constexpr int kSlotBits = 24;
  static constexpr std::uint64_t kMaxSlots = std::uint64_t{1} << kSlotBits;
  static constexpr std::uint64_t kMaxSequence = std::uint64_t{1} << (64 - kSlotBits);
  // The key orders like (time, sequence): the time's sign bit is flipped so that signed times
  // compare correctly as unsigned high words; the low word is sequence << kSlotBits | slot.
  static Uint128 key_of(SimTime time, std::uint64_t sequence, std::uint32_t slot) {
    return (Uint128{static_cast<std::uint64_t>(time) ^ kSignBit} << 64) | (sequence << kSlotBits) |
           slot;
  }
  static SimTime time_of(Uint128 key) {
    return static_cast<SimTime>(static_cast<std::uint64_t>(key >> 64) ^ kSignBit);
  }
  static std::uint64_t sequence_of(Uint128 key) {
    return static_cast<std::uint64_t>(key) >> kSlotBits;
  }
  static std::uint32_t slot_of(Uint128 key) {
    return static_cast<std::uint32_t>(static_cast<std::uint64_t>(key) & (kMaxSlots - 1));
  }
  // Greater than every real key: fills the positions after the last entry.
  static constexpr Uint128 kPadKey = ~Uint128{0};

  // Makes room for entry `count - 1` and the padding after it.
  void ensure_capacity(std::size_t count);
  // The index of the least of the four children starting at `first`.
  std::size_t least_child(std::size_t first) const;
  void sift_up(std::size_t index, Uint128 key);
  // Places `key` at the vacant root or below, among `count` entries counting the root.
  void sift_down_from_root(std::size_t count, Uint128 key);
  // Fills the vacant root with the last entry.
  void settle();
  Event event_at(std::size_t index) const;

  // Heap entries: [0, size_), or [1, size_ + 1) below a vacant root; then padding keys (at
  // least kArity of them, so the children of any entry are readable).
  // keys_ is cache-line aligned and the root sits at keys_[kLead], so that the four children
  // of every entry share one 64-byte line; heap() starts at the root.
  static constexpr std::size_t kLead = kArity - 1;
  template <typename T>
  struct LineAligned {
    using value_type = T;
    static constexpr std::align_val_t kAlign{64};
    LineAligned() = default;
    template <typename U>
    LineAligned(const LineAligned<U>&) {}
    T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
    void deallocate(T* p, std::size_t n) { ::operator delete(p, n * sizeof(T), kAlign); }
    bool operator==(const LineAligned&) const = default;
  };
  std::vector<Uint128, LineAligned<Uint128>> keys_ =
      std::vector<Uint128, LineAligned<Uint128>>(kLead + kArity, kPadKey);
  Uint128* heap() { return keys_.data() + kLead; }
  const Uint128* heap() const { return keys_.data() + kLead; }
  std::vector<Payload> payloads_;
  std::vector<std::uint32_t> free_slots_;  // payload slots not in use (but vacant_slot_)
  std::size_t size_ = 0;                   // events queued
  bool vacant_root_ = false;               // the root's event was popped; the gap is open
  std::uint32_t vacant_slot_ = 0;          // while it is open: the popped event's payload slot
  std::uint64_t next_sequence_ = 0;
};

}  // namespace bindersim::engine
