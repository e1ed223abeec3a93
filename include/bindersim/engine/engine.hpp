// The discrete-event engine: a clock, an event queue, handlers by index and a trajectory hash.
#pragma once

#include <array>
#include <cstdint>

#include "bindersim/engine/event_queue.hpp"
#include "bindersim/engine/time.hpp"

namespace bindersim::engine {

// A component that receives events. One virtual call per event; no allocation per event.
class EventHandler {
 public:
  virtual ~EventHandler() = default;
  virtual void on_event(const Event& event) = 0;
};

// Told every so many dispatched events while the engine runs, to show progress. It only reads:
// it must not schedule events or change the model, so that a run with and without it follows
// the same trajectory.
class ProgressHook {
 public:
  virtual ~ProgressHook() = default;
  virtual void on_progress(SimTime now, std::uint64_t events_dispatched) = 0;
};

// Runs events in (time, sequence) order and hashes every dispatched event into a fingerprint:
// two runs with equal fingerprints followed the same trajectory.
class Engine {
 public:
  static constexpr std::size_t kMaxHandlers = 16;

  // Registers a handler and returns its target index for schedule().
  std::uint16_t add_handler(EventHandler& handler);

  SimTime now() const { return now_; }
  // Schedules an event at absolute time `time` (>= now).
  void schedule(SimTime time, std::uint16_t target, std::uint16_t kind, std::uint32_t id,
                std::uint64_t arg = 0);

  // Runs until the queue is empty, stop() is called, or the next event is later than `until`.
  void run(SimTime until = kNever);
  // Makes run() return after the current event.
  void stop() { stopped_ = true; }

  // Calls `hook` after every `every_events` dispatched events (nullptr: never). The check is one
  // comparison per event; the fingerprint does not see it.
  void set_progress(ProgressHook* hook, std::uint64_t every_events);

  std::uint64_t events_dispatched() const { return dispatched_; }
  std::uint64_t fingerprint() const { return fingerprint_; }
  std::size_t pending() const { return queue_.size(); }

 private:
  EventQueue queue_;
  std::array<EventHandler*, kMaxHandlers> handlers_{};
  std::uint16_t handler_count_ = 0;
  SimTime now_ = 0;
  bool stopped_ = false;
  std::uint64_t dispatched_ = 0;
  std::uint64_t fingerprint_ = 0xcbf29ce484222325ULL;
  ProgressHook* progress_ = nullptr;
  std::uint64_t progress_every_ = 0;
  std::uint64_t progress_at_ = UINT64_MAX;  // dispatched_ count of the next call
};

}  // namespace bindersim::engine
