// The event queue: plain events ordered by (time, sequence number).
#pragma once

#include <cstdint>
#include <vector>

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

// Min-heap of events by (time, sequence): events at the same time leave in insertion order.
// Nothing compares pointers, so the order is the same on every run and platform.
class EventQueue {
 public:
  // Adds an event; its sequence number is assigned here.
  void push(SimTime time, std::uint16_t target, std::uint16_t kind, std::uint32_t id,
            std::uint64_t arg);
  // Removes and returns the earliest event. The queue must not be empty.
  Event pop();
  const Event& top() const { return heap_.front(); }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  void reserve(std::size_t n) { heap_.reserve(n); }

 private:
  static bool before(const Event& a, const Event& b) {
    return a.time < b.time || (a.time == b.time && a.sequence < b.sequence);
  }
  void sift_up(std::size_t index);
  void sift_down(std::size_t index);

  std::vector<Event> heap_;  // 4-ary heap: fewer levels and better locality than binary
  std::uint64_t next_sequence_ = 0;
};

}  // namespace bindersim::engine
