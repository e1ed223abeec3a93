// The discrete-event engine: a clock, an event queue, handlers by index and a trajectory hash.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>

#include "bindersim/engine/event_queue.hpp"
#include "bindersim/engine/time.hpp"

namespace bindersim::engine {

// A component that receives events. One virtual call per event; no allocation per event.
class EventHandler {
 public:
  virtual ~EventHandler() = default;
  virtual void on_event(const Event& event) = 0;
  // True for an event that on_event() would ignore, and would still ignore whenever it fired:
  // a superseded completion, say. The engine may drop such events unseen (Engine::run()).
  virtual bool is_stale(const Event& /*event*/) const { return false; }
};

// Told every so many dispatched events while the engine runs, to show progress. It only reads:
// it must not schedule events or change the model, so that a run with and without it follows
// the same trajectory.
class ProgressHook {
 public:
  virtual ~ProgressHook() = default;
  virtual void on_progress(SimTime now, std::uint64_t events_dispatched) = 0;
};

// Thrown by Engine::run() when the clock has not moved for kStallEvents events in a row: the
// model loops at one instant (steps that all take no time) and would never finish.
class ClockStalled : public std::runtime_error {
 public:
  ClockStalled(SimTime at, std::uint64_t events)
      : std::runtime_error("the simulated clock stopped"), at_(at), events_(events) {}
  SimTime at() const { return at_; }
  std::uint64_t events() const { return events_; }

 private:
  SimTime at_;
  std::uint64_t events_;
};

// Runs events in (time, sequence) order and hashes every dispatched event into a fingerprint:
// two runs with equal fingerprints followed the same trajectory.
class Engine {
 public:
  static constexpr std::size_t kMaxHandlers = 16;

  // Registers a handler and returns its target index for schedule().
  std::uint16_t add_handler(EventHandler& handler);

  SimTime now() const { return now_; }
  // Schedules an event at absolute time `time` (>= now). Inline: the model schedules about
  // one event per event it handles.
  void schedule(SimTime time, std::uint16_t target, std::uint16_t kind, std::uint32_t id,
                std::uint64_t arg = 0) {
    BSIM_CHECK(time >= now_);
    BSIM_CHECK(target < handler_count_);
    queue_.push(time, target, kind, id, arg);
  }

  // Runs until the queue is empty, stop() is called, or the next event is later than `until`.
  // Throws ClockStalled when the clock stays at one instant over a whole interval of
  // kStallEvents events (checked every kStallEvents events: after at most twice that many).
  // Every kCompactCheckEvents events, a queue of more than kCompactAt pending events (and twice
  // as many as after the last compaction) drops its stale events (EventHandler::is_stale()), so
  // that superseded events cannot pile up without bound; the others keep their order and are
  // numbered again from 0. So does a queue with fewer than kSequencesReserve sequence numbers
  // left (after 2^39 events, days of run time), which could otherwise run out of them. Dropped
  // events are neither dispatched nor hashed into the fingerprint. The simulator keeps about a
  // hundred events pending, so its runs never get there unless events are superseded without
  // end (a segment of a long task preempted again and again, its completion re-timed each time).
  void run(SimTime until = kNever);
  static constexpr std::uint64_t kStallEvents = std::uint64_t{1} << 24;
  static constexpr std::uint64_t kCompactCheckEvents = std::uint64_t{1} << 16;
  static constexpr std::size_t kCompactAt = std::size_t{1} << 16;
  static constexpr std::uint64_t kSequencesReserve = std::uint64_t{1} << 39;
  // Makes run() return after the current event.
  void stop() { stopped_ = true; }

  // Calls `hook` after every `every_events` dispatched events (nullptr: never). The check is one
  // comparison per event; the fingerprint does not see it.
  void set_progress(ProgressHook* hook, std::uint64_t every_events);

  std::uint64_t events_dispatched() const { return dispatched_; }
  std::uint64_t fingerprint() const { return fingerprint_; }
  std::size_t pending() const { return queue_.size(); }
  // Checks for stale events every `check_every_events` events, dropping them from a queue of more
  // than `at_pending` events (by default kCompactCheckEvents and kCompactAt; tests lower them).
  void set_compaction(std::uint64_t check_every_events, std::size_t at_pending);
  // Stale events dropped from the queue so far (see run()).
  std::uint64_t events_dropped() const { return dropped_; }

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
  // The clock's check: its time at the last one, and when the next one is due.
  SimTime time_at_stall_check_ = -1;
  std::uint64_t stall_check_at_ = kStallEvents;
  // The queue's check for stale events: when it is due, and the size that triggers it.
  std::uint64_t compact_every_ = kCompactCheckEvents;
  std::uint64_t compact_check_at_ = kCompactCheckEvents;
  std::size_t compact_min_ = kCompactAt;
  std::size_t compact_at_ = kCompactAt;
  std::uint64_t dropped_ = 0;
  // The earliest of the three: run() compares one count per event.
  std::uint64_t check_at_ = kCompactCheckEvents;
  void on_check();
  void update_check_at() {
    check_at_ = std::min({stall_check_at_, progress_at_, compact_check_at_});
  }
  // Drops the stale events; the others are queued again in their order.
  void compact();
};

}  // namespace bindersim::engine
