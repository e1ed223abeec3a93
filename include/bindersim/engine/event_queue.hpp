// The event queue: plain events ordered by (time, sequence number).
#pragma once

#include <algorithm>
#include <array>
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
// Structure: a small heap for the near future in front of a ladder of time buckets for the
// later events (after the ladder queue of Tang, Goh and Thng, ACM TOMACS 15(3), 2005). The time
// axis is cut at heap_end_: every heap event is earlier and every ladder event is not, so the
// heap's least key is the queue's, and events at equal times are always on the same side (the
// heap keeps them in sequence order).
// - Heap: a 4-ary heap of compact 16-byte keys: time, sequence and the slot of the event's
//   payload in one 128-bit integer, so a comparison is one wide compare and a move one store
//   (the slot sits below the sequence, which is unique: it never decides the order). Payloads
//   stay put in their slot from push to pop. Every position after the last entry holds a
//   maximal key, so each level picks the least of four children without branching on the
//   heap's size or on the comparisons. pop() leaves the root vacant: the next push() into the
//   heap fills it and sifts down once (a simulator usually schedules an event from the one it
//   just took), and only a query or another pop() before that closes the gap the classic way.
// - Ladder: lists of payload slots in no particular order (the heap sorts what it receives).
//   top_ holds the events from top_start_ on. Below it, up to kMaxRungs rungs, coarsest first:
//   a rung spans [start, end) in buckets of one power-of-two width, and each finer rung spans
//   the bucket of the coarser one it was made from. A rung's buckets before `current` are
//   empty and only [current_start, end) takes new events; heap_end_ is the finest rung's
//   current_start (top_start_ without rungs).
// - When the heap is empty, the finest rung's next occupied bucket (found in a bitmap) moves
//   into it, or first becomes a finer rung when it holds more than kSplitAbove events; a rung
//   with no occupied bucket left is dropped. With no rung left, top_ becomes the first rung,
//   with about kBucketsPerEvent buckets per event over its time span, or, when it holds at most
//   kTopIntoHeap events, moves into the heap whole and heap_end_ goes to the end of time: a
//   small queue is a plain heap. A heap that grows to spill_at_ events gives its later half,
//   by time, back to the ladder.
// An event is thus filed and moved a few times at O(1) cost and meets a heap of the nearest few
// events, whatever the queue's size. Any times may be pushed; the ladder pays off when they are
// not earlier than the last popped time, as with a simulator's clock.
// Limits, checked: times before kNever (the simulator's "no time"), 2^40 events pushed between
// restarts of their numbering (restart_sequence()), 2^24 pending at once.
class EventQueue {
 public:
  // Adds an event; its sequence number is assigned here.
  void push(SimTime time, std::uint16_t target, std::uint16_t kind, std::uint32_t id,
            std::uint64_t arg) {
    BSIM_CHECK(time < kNever);
    BSIM_CHECK(next_sequence_ < kMaxSequence);
    const std::uint64_t sequence = next_sequence_++;
    const std::uint64_t order = order_of(time);
    ++count_;
    if (order < heap_end_ && vacant_root_) {
      // The popped event's payload slot is free: the new event takes it and the root.
      vacant_root_ = false;
      payloads_[vacant_slot_] = Payload{arg, id, target, kind};
      sift_down_from_root(++size_, key_of(order, sequence, vacant_slot_));
      if (size_ >= spill_at_) [[unlikely]]
        spill();
      return;
    }
    const std::uint32_t slot = take_slot();
    payloads_[slot] = Payload{arg, id, target, kind};
    if (order < heap_end_) {
      heap_insert(key_of(order, sequence, slot));
    } else {
      ladder_insert(slot, key_of(order, sequence, slot));
    }
  }
  // Removes and returns the earliest event. The queue must not be empty.
  Event pop() {
    BSIM_CHECK(!empty());
    Event event;
    pop_until(kNever, event);  // every queued time is before kNever
    return event;
  }
  // Removes the earliest event into `event` if there is one at `until` or earlier: an empty()
  // and top_time() test, then pop(), with their shared steps made once (the engine's loop).
  bool pop_until(SimTime until, Event& event) {
    if (empty()) return false;
    if (size_ == 0) refill();
    if (vacant_root_) settle();
    if (time_of(heap()[0]) > until) return false;
    event = event_at(0);
    vacant_slot_ = slot_of(heap()[0]);
    vacant_root_ = true;
    --size_;
    --count_;
    return true;
  }
  // The earliest event (a copy) and its time. The queue must not be empty. Not const: they
  // may first fill the heap from the ladder or close the gap a pop() left.
  Event top();
  SimTime top_time() {
    BSIM_CHECK(!empty());
    if (size_ == 0) refill();
    if (vacant_root_) settle();
    return time_of(heap()[0]);
  }
  bool empty() const { return count_ == 0; }
  std::size_t size() const { return count_; }
  // Sequence numbers are finite (2^40 between restarts, checked at push): how many are left,
  // and, for an empty queue, numbering from 0 again (events pushed afterwards keep their
  // order among themselves, and there are no others).
  std::uint64_t sequences_left() const { return kMaxSequence - next_sequence_; }
  void restart_sequence() {
    BSIM_CHECK(empty());
    next_sequence_ = 0;
  }

 private:
  // What an event carries besides its key.
  struct Payload {
    std::uint64_t arg = 0;
    std::uint32_t id = 0;
    std::uint16_t target = 0;
    std::uint16_t kind = 0;
  };
  // A list of ladder events, linked through next_ by payload slot, in no particular order.
  struct List {
    std::uint32_t head = kNone;
    std::uint32_t count = 0;
  };
  // The events of [start, end) in buckets of width 2^shift: bucket i holds those of
  // [start + i * 2^shift, start + (i + 1) * 2^shift) (the last one may reach past `end`).
  struct Rung {
    std::uint64_t start = 0;
    std::uint64_t end = 0;
    int shift = 0;
    std::size_t current = 0;
    std::uint64_t current_start = 0;  // where bucket `current` starts, at most `end`
    std::vector<List> buckets;
    std::vector<std::uint64_t> occupied;  // bit i: bucket i is not empty
  };

  static constexpr std::size_t kArity = 4;
  static constexpr std::uint64_t kSignBit = std::uint64_t{1} << 63;
  static constexpr std::uint64_t kMaxOrder = ~std::uint64_t{0};  // the order of kNever
  static constexpr int kSlotBits = 24;
  static constexpr std::uint64_t kMaxSlots = std::uint64_t{1} << kSlotBits;
  static constexpr std::uint64_t kMaxSequence = std::uint64_t{1} << (64 - kSlotBits);
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  // Tuning, measured with the shipped scenarios and the hold model (docs/performance.md): the
  // simulator's queue holds about 140 events, a few of them near the clock.
  static constexpr int kMaxRungs = 8;
  static constexpr std::uint32_t kSplitAbove = 32;
  // Mostly empty buckets: a bucket rarely holds more than one event, so moving one into the
  // heap and taking it out again branch the same way every time. Two per event and 32 events
  // into the heap cost binder-throughput 1.2% fewer instructions than four and 64 (fewer
  // empty buckets to skip, a smaller heap), and the hold model with 128 or more pending
  // events 5-8% of its speed.
  static constexpr std::uint32_t kBucketsPerEvent = 2;
  static constexpr std::uint32_t kTopIntoHeap = 32;
  static constexpr std::size_t kSpillAt = 2 * kTopIntoHeap;

  // A time as an unsigned number of the same order: the sign bit flipped.
  static std::uint64_t order_of(SimTime time) {
    return static_cast<std::uint64_t>(time) ^ kSignBit;
  }
  // The key orders like (time, sequence): the time's order is the high word; the low word is
  // sequence << kSlotBits | slot.
  static Uint128 key_of(std::uint64_t order, std::uint64_t sequence, std::uint32_t slot) {
    return (Uint128{order} << 64) | (sequence << kSlotBits) | slot;
  }
  static std::uint64_t key_order(Uint128 key) { return static_cast<std::uint64_t>(key >> 64); }
  static SimTime time_of(Uint128 key) { return static_cast<SimTime>(key_order(key) ^ kSignBit); }
  static std::uint64_t sequence_of(Uint128 key) {
    return static_cast<std::uint64_t>(key) >> kSlotBits;
  }
  static std::uint32_t slot_of(Uint128 key) {
    return static_cast<std::uint32_t>(static_cast<std::uint64_t>(key) & (kMaxSlots - 1));
  }
  // Greater than every real key: fills the positions after the last entry.
  static constexpr Uint128 kPadKey = ~Uint128{0};

  std::uint32_t take_slot() {
    if (free_slot_ == kNone) return new_slot();
    const std::uint32_t slot = free_slot_;
    free_slot_ = next_[slot];
    return slot;
  }
  std::uint32_t new_slot();
  void free_slot(std::uint32_t slot) {
    next_[slot] = free_slot_;
    free_slot_ = slot;
  }
  void add_to(List& list, std::uint32_t slot) {
    next_[slot] = list.head;
    list.head = slot;
    ++list.count;
  }
  void add_to_bucket(Rung& rung, std::size_t bucket, std::uint32_t slot) {
    add_to(rung.buckets[bucket], slot);
    rung.occupied[bucket / 64] |= std::uint64_t{1} << (bucket % 64);
  }

  // Heap.
  // Makes room for entry `count - 1` and the padding after it.
  void ensure_capacity(std::size_t count) {
    if (kLead + count + kArity > keys_.size()) [[unlikely]]
      grow(count);
  }
  void grow(std::size_t count);
  // The index of the least of the four children starting at `first`.
  std::size_t least_child(std::size_t first) const {
    // Chosen with arithmetic, not branches: the comparisons are unpredictable. Padding keys
    // never win against a real entry.
    const Uint128* keys = heap();
    const std::size_t a = first + static_cast<std::size_t>(keys[first + 1] < keys[first]);
    const std::size_t b = first + 2 + static_cast<std::size_t>(keys[first + 3] < keys[first + 2]);
    return a ^ ((a ^ b) & (std::size_t{0} - static_cast<std::size_t>(keys[b] < keys[a])));
  }
  // Places `key` at `index` or above: parents later than the key move down.
  void sift_up(std::size_t index, Uint128 key) {
    while (index > 0) {
      const std::size_t parent = (index - 1) / kArity;
      if (!(key < heap()[parent])) break;
      heap()[index] = heap()[parent];
      index = parent;
    }
    heap()[index] = key;
  }
  // Places `key` at the vacant root or below, among `count` entries counting the root.
  void sift_down_from_root(std::size_t count, Uint128 key) {
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
  // Adds an entry whose payload slot is already taken.
  void heap_insert(Uint128 key);
  // Fills the vacant root with the last entry.
  void settle();
  Event event_at(std::size_t index) const {
    const Uint128 key = heap()[index];
    const Payload& payload = payloads_[slot_of(key)];
    Event event;
    event.time = time_of(key);
    event.sequence = sequence_of(key);
    event.target = payload.target;
    event.kind = payload.kind;
    event.id = payload.id;
    event.arg = payload.arg;
    return event;
  }

  // Ladder.
  // Files an event from heap_end_ on into top_ or a rung's bucket.
  void ladder_insert(std::uint32_t slot, Uint128 key) {
    ladder_keys_[slot] = key;
    const std::uint64_t order = key_order(key);
    if (order >= top_start_) {
      add_to(top_, slot);
      top_min_ = std::min(top_min_, order);
      top_max_ = std::max(top_max_, order);
      return;
    }
    // The coarsest rung whose open part reaches the event takes it; the finest one's reaches
    // down to heap_end_, so one does.
    for (int i = 0;; ++i) {
      Rung& rung = rungs_[i];
      if (order >= rung.current_start) {
        add_to_bucket(rung, (order - rung.start) >> rung.shift, slot);
        return;
      }
    }
  }
  // Makes a new finest rung over [start, end) from `list` (not empty).
  void add_rung(const List& list, std::uint64_t start, std::uint64_t end);
  // Moves the next events of the ladder into the (empty) heap. The ladder must not be empty.
  void refill();
  void move_into_heap(const List& list);
  // Moves the later half, by time, of the heap back into the ladder.
  void spill();

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
    // The unsized form: compilers declare the sized one only with sized deallocation enabled.
    void deallocate(T* p, std::size_t /*n*/) { ::operator delete(p, kAlign); }
    bool operator==(const LineAligned&) const = default;
  };
  std::vector<Uint128, LineAligned<Uint128>> keys_ =
      std::vector<Uint128, LineAligned<Uint128>>(kLead + kArity, kPadKey);
  Uint128* heap() { return keys_.data() + kLead; }
  const Uint128* heap() const { return keys_.data() + kLead; }
  std::size_t size_ = 0;           // events in the heap
  bool vacant_root_ = false;       // the root's event was popped; the gap is open
  std::uint32_t vacant_slot_ = 0;  // while it is open: the popped event's payload slot

  // Per payload slot: the payload, the key while the event is in the ladder, and the next slot
  // of its ladder list (or of the free list).
  std::vector<Payload> payloads_;
  std::vector<Uint128> ladder_keys_;
  std::vector<std::uint32_t> next_;
  std::uint32_t free_slot_ = kNone;  // slots not in use (but vacant_slot_), linked by next_

  std::uint64_t heap_end_ = 0;  // events before it go to the heap: finest rung's current_start,
                                // or top_start_ without rungs
  List top_;
  std::uint64_t top_start_ = 0;        // events from it on go to top_; kMaxOrder: none do
  std::uint64_t top_min_ = kMaxOrder;  // the least and the greatest order in top_
  std::uint64_t top_max_ = 0;
  std::array<Rung, kMaxRungs> rungs_;  // [0, rung_count_), coarsest first
  int rung_count_ = 0;
  std::size_t spill_at_ = kSpillAt;  // heap size that moves its later half to the ladder
  std::vector<Uint128> spill_keys_;  // scratch for spill()

  std::size_t count_ = 0;  // events queued, heap and ladder
  std::uint64_t next_sequence_ = 0;
};

}  // namespace bindersim::engine
