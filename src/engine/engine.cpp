#include "bindersim/engine/engine.hpp"

#include <algorithm>
#include <vector>

#include "bindersim/common/error.hpp"

namespace bindersim::engine {
namespace {

// Folds one 64-bit word into the running hash (a multiply-xorshift mix).
inline std::uint64_t mix(std::uint64_t hash, std::uint64_t word) {
  hash ^= word + 0x9e3779b97f4a7c15ULL + (hash << 6) + (hash >> 2);
  hash *= 0xff51afd7ed558ccdULL;
  return hash ^ (hash >> 33);
}

}  // namespace

std::uint16_t Engine::add_handler(EventHandler& handler) {
  BSIM_CHECK(handler_count_ < kMaxHandlers);
  handlers_[handler_count_] = &handler;
  return handler_count_++;
}

void Engine::set_progress(ProgressHook* hook, std::uint64_t every_events) {
  BSIM_CHECK(hook == nullptr || every_events > 0);
  progress_ = hook;
  progress_every_ = every_events;
  progress_at_ = hook != nullptr ? dispatched_ + every_events : UINT64_MAX;
  update_check_at();
}

void Engine::set_compaction(std::uint64_t check_every_events, std::size_t at_pending) {
  BSIM_CHECK(check_every_events > 0);
  compact_every_ = check_every_events;
  compact_check_at_ = dispatched_ + check_every_events;
  compact_min_ = at_pending;
  compact_at_ = at_pending;
  update_check_at();
}

void Engine::on_check() {
  if (dispatched_ == stall_check_at_) {
    // Times only grow: the same time at two checks means every event between was at it.
    if (now_ == time_at_stall_check_) throw ClockStalled(now_, kStallEvents);
    time_at_stall_check_ = now_;
    stall_check_at_ += kStallEvents;
  }
  if (dispatched_ == progress_at_) {
    progress_at_ += progress_every_;
    progress_->on_progress(now_, dispatched_);
  }
  if (dispatched_ == compact_check_at_) {
    compact_check_at_ += compact_every_;
    if (queue_.size() > compact_at_ || queue_.sequences_left() < kSequencesReserve) compact();
  }
  update_check_at();
}

void Engine::compact() {
  std::vector<Event> live;
  live.reserve(queue_.size());
  Event event;
  while (queue_.pop_until(kNever, event)) {
    if (handlers_[event.target]->is_stale(event)) {
      ++dropped_;
    } else {
      live.push_back(event);
    }
  }
  // Queued again in (time, sequence) order, numbered from 0: their new sequence numbers keep
  // that order, and events scheduled from now on still come after them at equal times.
  queue_.restart_sequence();
  for (const Event& e : live) queue_.push(e.time, e.target, e.kind, e.id, e.arg);
  compact_at_ = std::max(compact_min_, 2 * live.size());
}

void Engine::run(SimTime until) {
  stopped_ = false;
  Event event;
  while (!stopped_ && queue_.pop_until(until, event)) {
    now_ = event.time;
    ++dispatched_;
    fingerprint_ = mix(fingerprint_, static_cast<std::uint64_t>(event.time));
    fingerprint_ = mix(fingerprint_, (std::uint64_t{event.target} << 48) |
                                         (std::uint64_t{event.kind} << 32) | event.id);
    fingerprint_ = mix(fingerprint_, event.arg);
    handlers_[event.target]->on_event(event);
    if (dispatched_ == check_at_) [[unlikely]]
      on_check();
  }
}

}  // namespace bindersim::engine
