#include "bindersim/engine/event_queue.hpp"

#include <utility>

#include "bindersim/common/error.hpp"

namespace bindersim::engine {
namespace {
constexpr std::size_t kArity = 4;
}

void EventQueue::push(SimTime time, std::uint16_t target, std::uint16_t kind, std::uint32_t id,
                      std::uint64_t arg) {
  heap_.push_back(Event{time, next_sequence_++, target, kind, id, arg});
  sift_up(heap_.size() - 1);
}

Event EventQueue::pop() {
  BSIM_CHECK(!heap_.empty());
  Event result = heap_.front();
  heap_.front() = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down(0);
  return result;
}

void EventQueue::sift_up(std::size_t index) {
  Event moving = heap_[index];
  while (index > 0) {
    const std::size_t parent = (index - 1) / kArity;
    if (!before(moving, heap_[parent])) break;
    heap_[index] = heap_[parent];
    index = parent;
  }
  heap_[index] = moving;
}

void EventQueue::sift_down(std::size_t index) {
  Event moving = heap_[index];
  const std::size_t size = heap_.size();
  while (true) {
    const std::size_t first = index * kArity + 1;
    if (first >= size) break;
    std::size_t best = first;
    const std::size_t last = first + kArity < size ? first + kArity : size;
    for (std::size_t child = first + 1; child < last; ++child) {
      if (before(heap_[child], heap_[best])) best = child;
    }
    if (!before(heap_[best], moving)) break;
    heap_[index] = heap_[best];
    index = best;
  }
  heap_[index] = moving;
}

}  // namespace bindersim::engine
