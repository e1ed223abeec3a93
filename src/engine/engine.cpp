#include "bindersim/engine/engine.hpp"

#include <algorithm>

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
  check_at_ = std::min(stall_check_at_, progress_at_);
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
  check_at_ = std::min(stall_check_at_, progress_at_);
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
