#include "bindersim/engine/event_queue.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "../common/test_rng.hpp"
#include "bindersim/engine/engine.hpp"

namespace bindersim::engine {
namespace {

using testing::TestRng;

// ---------------------------------------------------------------------------------------------
// EventQueue

TEST(EventQueueTest, EqualTimesLeaveInInsertionOrder) {
  // 1000 events at one time come out in the order they were pushed, with increasing sequence.
  EventQueue queue;
  for (std::uint32_t i = 0; i < 1000; ++i) queue.push(42, 0, 0, i, 0);
  for (std::uint32_t i = 0; i < 1000; ++i) {
    ASSERT_FALSE(queue.empty());
    const Event event = queue.pop();
    EXPECT_EQ(event.time, 42);
    EXPECT_EQ(event.id, i);
    EXPECT_EQ(event.sequence, i);
  }
  EXPECT_TRUE(queue.empty());
}

TEST(EventQueueTest, EarlierTimeLeavesFirstWhateverTheInsertionOrder) {
  EventQueue queue;
  queue.push(30, 0, 0, 3, 0);
  queue.push(10, 0, 0, 1, 0);
  queue.push(20, 0, 0, 2, 0);
  queue.push(10, 0, 0, 4, 0);
  // Time first; between the two events at 10, the one pushed first.
  EXPECT_EQ(queue.top().id, 1u);
  const std::vector<std::uint32_t> expected = {1, 4, 2, 3};
  std::vector<std::uint32_t> order;
  while (!queue.empty()) order.push_back(queue.pop().id);
  EXPECT_EQ(order, expected);
}

TEST(EventQueueTest, EventFieldsSurviveTheQueue) {
  EventQueue queue;
  queue.push(7, 3, 11, 0xdeadbeef, 0x0123456789abcdefULL);
  ASSERT_EQ(queue.size(), 1u);
  const Event event = queue.pop();
  EXPECT_EQ(event.time, 7);
  EXPECT_EQ(event.target, 3);
  EXPECT_EQ(event.kind, 11);
  EXPECT_EQ(event.id, 0xdeadbeefu);
  EXPECT_EQ(event.arg, 0x0123456789abcdefULL);
}

TEST(EventQueueTest, ManyTiesWithInterleavedPushesAndPops) {
  // Reference: a std::multimap keyed by time inserts equal keys after the existing ones, so its
  // first element is the earliest event, first-in among equals. Times come from a small range
  // so that most events tie; pushes and pops interleave, and an event pushed at the time of
  // pending ones must leave after them.
  EventQueue queue;
  std::multimap<SimTime, std::uint32_t> reference;
  TestRng rng(2024);
  std::uint32_t next_id = 0;
  SimTime floor = 0;  // like an engine clock: nothing is pushed before the last popped time
  for (int step = 0; step < 50'000; ++step) {
    const bool push = reference.empty() || rng.below(100) < 55;
    if (push) {
      const SimTime time = floor + static_cast<SimTime>(rng.below(4));
      queue.push(time, 0, 0, next_id, 0);
      reference.emplace(time, next_id);
      ++next_id;
    } else {
      const Event event = queue.pop();
      const auto expected = reference.begin();
      ASSERT_EQ(event.time, expected->first) << "at step " << step;
      ASSERT_EQ(event.id, expected->second) << "at step " << step;
      reference.erase(expected);
      floor = event.time;
    }
    ASSERT_EQ(queue.size(), reference.size());
  }
  while (!reference.empty()) {
    const Event event = queue.pop();
    ASSERT_EQ(event.id, reference.begin()->second);
    reference.erase(reference.begin());
  }
  EXPECT_TRUE(queue.empty());
}

TEST(EventQueueTest, RandomWorkloadMatchesStableSortByTime) {
  // Pushing everything then popping everything gives exactly the pushed sequence stable-sorted
  // by time: (time, insertion order).
  TestRng rng(7);
  std::vector<std::pair<SimTime, std::uint32_t>> pushed;
  EventQueue queue;
  for (std::uint32_t i = 0; i < 20'000; ++i) {
    // A mix of widely spread times and heavy ties.
    const SimTime time = rng.below(2) == 0 ? static_cast<SimTime>(rng.below(1'000'000'000))
                                           : static_cast<SimTime>(rng.below(16));
    pushed.emplace_back(time, i);
    queue.push(time, 0, 0, i, 0);
  }
  std::vector<std::pair<SimTime, std::uint32_t>> expected = pushed;
  std::stable_sort(expected.begin(), expected.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [time, id] : expected) {
    const Event event = queue.pop();
    ASSERT_EQ(event.time, time);
    ASSERT_EQ(event.id, id);
    ASSERT_EQ(event.sequence, id);  // the sequence number is the insertion index
  }
  EXPECT_TRUE(queue.empty());
}

TEST(EventQueueTest, TopPushAndPopInAnyOrderFollowTimeThenInsertion) {
  // Against a reference ordered set of (time, insertion index): after any mix of pushes, pops
  // and peeks (a peek right after a pop, a push right after a pop, several pops in a row),
  // top() and pop() give the least pending pair, and size() the number pending. Times spread
  // widely and also tie, and the queue grows to thousands of entries and drains to empty more
  // than once.
  EventQueue queue;
  std::set<std::pair<SimTime, std::uint32_t>> reference;
  TestRng rng(99);
  std::uint32_t next_id = 0;
  SimTime floor = 0;
  for (int step = 0; step < 200'000; ++step) {
    const std::uint64_t phase = (static_cast<std::uint64_t>(step) / 20'000) % 2;  // grow, drain
    const std::uint64_t roll = rng.below(100);
    if (reference.empty() || roll < (phase == 0 ? 60u : 20u)) {
      const SimTime time =
          floor + static_cast<SimTime>(rng.below(3) == 0 ? rng.below(3) : rng.below(1'000'000));
      queue.push(time, 1, 2, next_id, next_id * 3ULL);
      reference.emplace(time, next_id++);
    } else if (roll < 80) {
      const Event event = queue.pop();
      ASSERT_EQ(std::make_pair(event.time, event.id), *reference.begin()) << "at step " << step;
      EXPECT_EQ(event.sequence, event.id);
      EXPECT_EQ(event.arg, event.id * 3ULL);
      reference.erase(reference.begin());
      floor = event.time;
    } else {
      const Event event = queue.top();
      ASSERT_EQ(std::make_pair(event.time, event.id), *reference.begin()) << "at step " << step;
      ASSERT_EQ(queue.top_time(), event.time);
    }
    ASSERT_EQ(queue.size(), reference.size());
    ASSERT_EQ(queue.empty(), reference.empty());
  }
}

// Drives a queue and a reference side by side: a std::multimap keyed by time inserts equal
// keys after the existing ones, so its first element is the earliest event, first-in among
// equals. Every event's id is its push index, which is also the sequence number the queue must
// give it, and its other fields are derived from the id, so that a payload mixed up between
// events shows.
class ReferenceCheck {
 public:
  void push(SimTime time) {
    queue_.push(time, static_cast<std::uint16_t>(next_id_ % 7),
                static_cast<std::uint16_t>(next_id_ % 5), next_id_,
                std::uint64_t{next_id_} * 3 + 1);
    reference_.emplace(time, next_id_++);
    ASSERT_EQ(queue_.size(), reference_.size());
    ASSERT_FALSE(queue_.empty());
  }
  // Pops one event and checks it against the reference; returns its time.
  SimTime pop() {
    const auto expected = reference_.begin();
    const Event event = queue_.pop();
    EXPECT_EQ(event.time, expected->first);
    EXPECT_EQ(event.id, expected->second);
    EXPECT_EQ(event.sequence, event.id);
    EXPECT_EQ(event.target, event.id % 7);
    EXPECT_EQ(event.kind, event.id % 5);
    EXPECT_EQ(event.arg, std::uint64_t{event.id} * 3 + 1);
    reference_.erase(expected);
    EXPECT_EQ(queue_.size(), reference_.size());
    EXPECT_EQ(queue_.empty(), reference_.empty());
    return event.time;
  }
  // top() and top_time() name the reference's first event and change nothing.
  void peek() {
    const Event event = queue_.top();
    EXPECT_EQ(event.time, reference_.begin()->first);
    EXPECT_EQ(event.id, reference_.begin()->second);
    EXPECT_EQ(queue_.top_time(), event.time);
    EXPECT_EQ(queue_.size(), reference_.size());
  }
  void drain() {
    while (!reference_.empty()) {
      pop();
      if (::testing::Test::HasFailure()) return;
    }
    EXPECT_TRUE(queue_.empty());
    EXPECT_EQ(queue_.size(), 0u);
  }
  std::size_t size() const { return reference_.size(); }

 private:
  EventQueue queue_;
  std::multimap<SimTime, std::uint32_t> reference_;
  std::uint32_t next_id_ = 0;
};

TEST(EventQueueTest, HoldModelsOfEverySizeFollowTheReference) {
  // The classic hold model (pop the earliest, push one a random delay later) at sizes from a
  // plain heap to a ladder of many buckets, with delays that often tie (32 and 33: either
  // side of the size at which a ladder's top moves into the heap whole; 64 and 65: of the
  // heap's spill).
  for (const std::size_t pending : {1u, 16u, 32u, 33u, 64u, 65u, 128u, 1024u, 5000u}) {
    SCOPED_TRACE(pending);
    ReferenceCheck check;
    TestRng rng(pending);
    for (std::size_t i = 0; i < pending; ++i) check.push(static_cast<SimTime>(rng.below(1000)));
    for (int step = 0; step < 30'000 && !::testing::Test::HasFailure(); ++step) {
      const SimTime now = check.pop();
      check.push(now + static_cast<SimTime>(rng.below(4) == 0 ? 0 : rng.below(1'000'000)));
      if (step % 7 == 0) check.peek();
    }
    check.drain();
  }
}

TEST(EventQueueTest, NearAndFarEventsThatGrowAndShrinkFollowTheReference) {
  // Like the simulator: most events microseconds ahead, some exactly now, a few milliseconds
  // to a second ahead; the queue grows to thousands and shrinks to empty twice, with peeks and
  // runs of pops in between.
  ReferenceCheck check;
  TestRng rng(31);
  SimTime now = 0;
  for (int step = 0; step < 400'000 && !::testing::Test::HasFailure(); ++step) {
    const bool growing = (step / 100'000) % 2 == 0;
    const std::uint64_t roll = rng.below(100);
    if (check.size() == 0 || roll < (growing ? 55u : 40u)) {
      const std::uint64_t kind = rng.below(100);
      SimTime delay = static_cast<SimTime>(rng.below(20'000));  // microseconds ahead
      if (kind < 8) delay = 0;                                  // now: ties
      if (kind >= 92) delay = static_cast<SimTime>(1'000'000 + rng.below(1'000'000'000));
      check.push(now + delay);
    } else if (roll < 95) {
      now = check.pop();
    } else {
      check.peek();
    }
  }
  check.drain();
}

TEST(EventQueueTest, ManyEventsAtFewTimesLeaveInPushOrder) {
  // Thousands of events at a handful of times, some far apart: buckets that cannot be split
  // further and a heap full of ties must still give each time's events in push order.
  ReferenceCheck check;
  TestRng rng(5);
  SimTime now = 0;
  for (int round = 0; round < 20 && !::testing::Test::HasFailure(); ++round) {
    for (int i = 0; i < 2'000; ++i) {
      const std::uint64_t which = rng.below(4);
      check.push(now + (which == 3 ? 1'000'000'000 : static_cast<SimTime>(which)));
    }
    for (int i = 0; i < 1'500; ++i) now = check.pop();
  }
  check.drain();
}

TEST(EventQueueTest, ClustersWithinClustersFollowTheReference) {
  // Bursts of events packed ever closer (a microsecond, then nanoseconds, apart) around far
  // times: buckets keep needing finer rungs, up to the deepest the ladder makes.
  ReferenceCheck check;
  TestRng rng(8);
  SimTime now = 0;
  for (int round = 0; round < 30 && !::testing::Test::HasFailure(); ++round) {
    const SimTime centre = now + static_cast<SimTime>(rng.below(1'000'000'000));
    for (int i = 0; i < 3'000; ++i) {
      const SimTime spread = SimTime{1} << rng.below(40);
      check.push(centre + static_cast<SimTime>(rng.below(static_cast<std::uint64_t>(spread))));
    }
    for (int i = 0; i < 2'500; ++i) now = check.pop();
  }
  check.drain();
}

TEST(EventQueueTest, ASmallQueueThatGrowsLargeFollowsTheReference) {
  // A queue that starts with a few events (kept in the heap alone) and then grows to thousands
  // with each pop, then shrinks back, more than once.
  ReferenceCheck check;
  TestRng rng(12);
  SimTime now = 0;
  for (int cycle = 0; cycle < 4 && !::testing::Test::HasFailure(); ++cycle) {
    for (int i = 0; i < 5; ++i) check.push(now + static_cast<SimTime>(rng.below(1'000)));
    for (int i = 0; i < 3'000; ++i) {
      now = check.pop();
      for (int k = 0; k < 2; ++k) check.push(now + static_cast<SimTime>(rng.below(5'000'000)));
    }
    while (check.size() > 3) now = check.pop();
  }
  check.drain();
}

TEST(EventQueueTest, EventsEarlierThanTheLastPoppedStillLeaveInOrder) {
  // Nothing requires times after the last popped one (the engine does that): events pushed
  // earlier, even before everything queued, still come out first.
  ReferenceCheck check;
  TestRng rng(77);
  for (int i = 0; i < 3'000; ++i) check.push(static_cast<SimTime>(rng.below(10'000'000)));
  for (int step = 0; step < 20'000 && !::testing::Test::HasFailure(); ++step) {
    if (check.size() == 0 || rng.below(2) == 0) {
      check.push(static_cast<SimTime>(rng.below(10'000'000)));
    } else {
      check.pop();
    }
  }
  check.drain();
}

TEST(EventQueueTest, AnEmptyQueueNumbersItsEventsFromZeroAgain) {
  // Sequence numbers are finite; an empty queue may restart them, and ties still leave in the
  // order they were pushed.
  EventQueue q;
  for (std::uint32_t id = 0; id < 3; ++id) q.push(10, 0, 0, id, 0);
  const std::uint64_t left = q.sequences_left();
  while (!q.empty()) q.pop();
  q.restart_sequence();
  EXPECT_EQ(q.sequences_left(), left + 3);
  for (std::uint32_t id = 10; id < 13; ++id) q.push(20, 0, 0, id, 0);
  for (std::uint32_t id = 10; id < 13; ++id) {
    const Event e = q.pop();
    EXPECT_EQ(e.id, id);
    EXPECT_EQ(e.sequence, id - 10);
  }
}

TEST(EventQueueTest, EventsOnBucketBoundariesLeaveInPushOrder) {
  // Times on a coarse power-of-two grid, many events at each, and new events pushed at exactly
  // the times already queued: the edges between heap, rungs and top are exact, and an event
  // pushed at a time that is queued must leave after the ones already there.
  ReferenceCheck check;
  TestRng rng(64);
  SimTime now = 0;
  for (int round = 0; round < 40 && !::testing::Test::HasFailure(); ++round) {
    for (int i = 0; i < 1'000; ++i) {
      check.push(now + static_cast<SimTime>(rng.below(32) << 16));
    }
    for (int i = 0; i < 900; ++i) {
      now = check.pop();
      if (rng.below(3) == 0) check.push(now + static_cast<SimTime>(rng.below(4) << 16));
    }
  }
  check.drain();
}

TEST(EventQueueTest, ExtremeTimesKeepTheirOrder) {
  // The whole range of SimTime below kNever, negative times included, in one queue large
  // enough to use the ladder.
  const std::vector<SimTime> extremes = {kNever - 1, std::numeric_limits<SimTime>::min(),     -1, 0,
                                         kNever - 2, std::numeric_limits<SimTime>::min() + 1, 1};
  ReferenceCheck check;
  TestRng rng(3);
  for (int i = 0; i < 500; ++i) {
    check.push(extremes[static_cast<std::size_t>(i) % extremes.size()]);
    check.push(static_cast<SimTime>(rng.next()) / 2);
  }
  for (int i = 0; i < 400; ++i) check.pop();
  for (const SimTime time : extremes) check.push(time == kNever - 2 ? time : kNever - 1);
  check.drain();
}

// ---------------------------------------------------------------------------------------------
// Engine

// Records every event it receives.
class Recorder : public EventHandler {
 public:
  explicit Recorder(Engine& engine) : engine_(engine) {}
  void on_event(const Event& event) override {
    EXPECT_EQ(engine_.now(), event.time);  // the clock has advanced to the event
    seen.push_back(event);
  }
  std::vector<Event> seen;

 private:
  Engine& engine_;
};

std::vector<std::uint32_t> ids_of(const std::vector<Event>& events) {
  std::vector<std::uint32_t> ids;
  for (const Event& e : events) ids.push_back(e.id);
  return ids;
}

TEST(EngineTest, RunDispatchesInTimeOrderToTheTarget) {
  Engine engine;
  Recorder a(engine);
  Recorder b(engine);
  const std::uint16_t ta = engine.add_handler(a);
  const std::uint16_t tb = engine.add_handler(b);
  EXPECT_NE(ta, tb);
  engine.schedule(20, tb, 1, 2);
  engine.schedule(10, ta, 1, 1);
  engine.schedule(30, ta, 1, 3);
  engine.run();
  EXPECT_EQ(ids_of(a.seen), (std::vector<std::uint32_t>{1, 3}));
  EXPECT_EQ(ids_of(b.seen), (std::vector<std::uint32_t>{2}));
  EXPECT_EQ(engine.now(), 30);
  EXPECT_EQ(engine.events_dispatched(), 3u);
  EXPECT_EQ(engine.pending(), 0u);
}

TEST(EngineTest, RunUntilStopsBeforeLaterEvents) {
  // run(until) dispatches events at times <= until and leaves later ones queued; a second run
  // continues from there.
  Engine engine;
  Recorder r(engine);
  const std::uint16_t t = engine.add_handler(r);
  engine.schedule(10, t, 0, 1);
  engine.schedule(20, t, 0, 2);
  engine.schedule(21, t, 0, 3);
  engine.schedule(40, t, 0, 4);
  engine.run(20);
  EXPECT_EQ(ids_of(r.seen), (std::vector<std::uint32_t>{1, 2}));
  EXPECT_EQ(engine.now(), 20);
  EXPECT_EQ(engine.pending(), 2u);
  engine.run(39);
  EXPECT_EQ(ids_of(r.seen), (std::vector<std::uint32_t>{1, 2, 3}));
  engine.run();
  EXPECT_EQ(ids_of(r.seen), (std::vector<std::uint32_t>{1, 2, 3, 4}));
  EXPECT_EQ(engine.pending(), 0u);
}

// Schedules follow-up events while running: each event with arg > 0 schedules two more, one
// at the same time (a tie, which must run after events already queued for that time) and one
// later.
class Spawner : public EventHandler {
 public:
  explicit Spawner(Engine& engine) : engine_(engine) {}
  void on_event(const Event& event) override {
    seen.push_back(event);
    if (event.arg == 0) return;
    engine_.schedule(engine_.now(), target, 0, event.id * 10 + 1, event.arg - 1);
    engine_.schedule(engine_.now() + 5, target, 0, event.id * 10 + 2, event.arg - 1);
  }
  std::vector<Event> seen;
  std::uint16_t target = 0;

 private:
  Engine& engine_;
};

TEST(EngineTest, HandlersCanScheduleWhileRunning) {
  Engine engine;
  Spawner s(engine);
  s.target = engine.add_handler(s);
  engine.schedule(0, s.target, 0, 1, 1);
  engine.schedule(0, s.target, 0, 2, 0);
  engine.schedule(5, s.target, 0, 3, 0);
  engine.run();
  // At 0: 1, then 2 (queued before 1 ran), then 11 (scheduled by 1 for time 0).
  // At 5: 3 (queued first), then 12 (scheduled by 1 for time 5).
  EXPECT_EQ(ids_of(s.seen), (std::vector<std::uint32_t>{1, 2, 11, 3, 12}));
  EXPECT_EQ(engine.now(), 5);
}

TEST(EngineTest, AChainOfSelfScheduledEventsRunsToTheEnd) {
  // One seed event fans out into a full binary tree of depth 10: 2^11 - 1 events in total.
  Engine engine;
  Spawner s(engine);
  s.target = engine.add_handler(s);
  engine.schedule(0, s.target, 0, 1, 10);
  engine.run();
  EXPECT_EQ(s.seen.size(), 2047u);
  EXPECT_EQ(engine.events_dispatched(), 2047u);
  EXPECT_EQ(engine.now(), 50);
  // Times never go backwards.
  for (std::size_t i = 1; i < s.seen.size(); ++i) {
    EXPECT_LE(s.seen[i - 1].time, s.seen[i].time);
  }
}

// Schedules its next event `step` ns after each one, for ever.
class Repeater : public EventHandler {
 public:
  Repeater(Engine& engine, SimTime step) : engine_(engine), step_(step) {}
  void on_event(const Event& /*event*/) override {
    engine_.schedule(engine_.now() + step_, target, 0, 0);
  }
  std::uint16_t target = 0;

 private:
  Engine& engine_;
  SimTime step_;
};

// A completion re-timed at every tick, as the scheduler re-times the segment of a task that is
// preempted again and again: each re-time leaves the old completion, 1 s ahead, stale.
class Retimer : public EventHandler {
 public:
  enum Kind : std::uint16_t { kTick, kDone, kMarker };
  Retimer(Engine& engine, SimTime last_tick) : engine_(engine), last_tick_(last_tick) {}
  void on_event(const Event& event) override {
    max_pending = std::max(max_pending, engine_.pending());
    switch (event.kind) {
      case kTick:
        engine_.schedule(engine_.now() + 1'000'000'000, target, kDone, 0, ++generation);
        if (engine_.now() < last_tick_) engine_.schedule(engine_.now() + 1, target, kTick, 0);
        return;
      case kDone:
        if (event.arg == generation) {
          ++completions;
        } else {
          ++stale_seen;
        }
        return;
      default:
        markers.push_back(event.id);
    }
  }
  bool is_stale(const Event& event) const override {
    return event.kind == kDone && event.arg != generation;
  }
  std::uint16_t target = 0;
  std::uint64_t generation = 0;
  std::uint64_t completions = 0;
  std::uint64_t stale_seen = 0;
  std::size_t max_pending = 0;
  std::vector<std::uint32_t> markers;

 private:
  Engine& engine_;
  SimTime last_tick_;
};

TEST(EngineTest, SupersededEventsDoNotPileUpAndTheOthersKeepTheirOrder) {
  // Four times kCompactAt ticks, each superseding the last completion: without compaction the
  // queue would hold them all. Markers queued at the start, several at each time, must still
  // leave by time and then in the order they were queued.
  constexpr auto kTicks = static_cast<SimTime>(4 * Engine::kCompactAt);
  Engine engine;
  Retimer r(engine, kTicks);
  r.target = engine.add_handler(r);
  std::vector<std::pair<SimTime, std::uint32_t>> expected;
  for (std::uint32_t i = 0; i < 100; ++i) {
    const SimTime time = 2'000'000'000 + (i * 37) % 7;
    engine.schedule(time, r.target, Retimer::kMarker, i);
    expected.emplace_back(time, i);
  }
  std::stable_sort(expected.begin(), expected.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  engine.schedule(1, r.target, Retimer::kTick, 0);
  engine.run();
  EXPECT_EQ(r.completions, 1u);
  EXPECT_GT(engine.events_dropped(), 0u);
  EXPECT_EQ(r.stale_seen + engine.events_dropped(), static_cast<std::uint64_t>(kTicks) - 1);
  EXPECT_LE(r.max_pending, Engine::kCompactAt + Engine::kCompactCheckEvents + 200);
  std::vector<std::uint32_t> expected_ids;
  for (const auto& [time, id] : expected) expected_ids.push_back(id);
  EXPECT_EQ(r.markers, expected_ids);
}

// Drops events of kind kStale unseen; at its kGrow event it schedules `grow_by` stale events
// at 100. It records the sequence number of every kLive event it receives.
class StaleMaker : public EventHandler {
 public:
  enum Kind : std::uint16_t { kTick, kGrow, kStale, kLive };
  StaleMaker(Engine& engine, int grow_by) : engine_(engine), grow_by_(grow_by) {}
  void on_event(const Event& event) override {
    if (event.kind == kGrow) {
      for (int i = 0; i < grow_by_; ++i) engine_.schedule(100, target, kStale, 0);
    }
    if (event.kind == kStale) ++stale_seen;
    if (event.kind == kLive) live_sequences.push_back(event.sequence);
  }
  bool is_stale(const Event& event) const override { return event.kind == kStale; }
  std::uint16_t target = 0;
  int stale_seen = 0;
  std::vector<std::uint64_t> live_sequences;

 private:
  Engine& engine_;
  int grow_by_;
};

// Checked after every event, from more than 2 pending: a tick at 1, a stale event at 100, the
// kGrow event at 50 and three live events at 200, 201 and 202. After the tick, 5 > 2 events are
// pending: the stale one is dropped and 4 are left, so the next compaction needs more than 8.
// The kGrow event then adds `m`'s stale events to the 3 left after it.
void run_with_growth(Engine& engine, StaleMaker& m) {
  m.target = engine.add_handler(m);
  engine.set_compaction(1, 2);
  engine.schedule(1, m.target, StaleMaker::kTick, 0);
  engine.schedule(100, m.target, StaleMaker::kStale, 0);
  engine.schedule(50, m.target, StaleMaker::kGrow, 0);
  for (SimTime t = 200; t <= 202; ++t) engine.schedule(t, m.target, StaleMaker::kLive, 0);
  engine.run();
}

// How many events run_with_growth() drops when kGrow adds `grow_by` stale events.
std::uint64_t dropped_with_growth(int grow_by) {
  Engine engine;
  StaleMaker m(engine, grow_by);
  run_with_growth(engine, m);
  EXPECT_EQ(m.stale_seen + static_cast<int>(engine.events_dropped()), grow_by + 1);
  return engine.events_dropped();
}

TEST(EngineTest, ACompactionWaitsForMoreThanTwiceTheEventsTheLastOneLeft) {
  // 3 + 5 = 8 pending: not more than twice the 4 left (the trigger is "more than", and it
  // doubles from what a compaction leaves), so the 5 stale events are dispatched.
  EXPECT_EQ(dropped_with_growth(5), 1u);
  // 3 + 6 = 9 pending: more than 8, so the 6 are dropped.
  EXPECT_EQ(dropped_with_growth(6), 7u);
}

TEST(EngineTest, ACompactionNumbersTheEventsItKeepsFromZeroInTheirOrder) {
  // Pushed as tick 0, stale 1, kGrow 2, live 3 to 5. The compaction after the tick drops the
  // stale event and queues the rest again by time: kGrow at 50 becomes 0 and the live events
  // at 200, 201 and 202 become 1, 2 and 3; the 5 stale events kGrow schedules then get 4 to 8.
  Engine engine;
  StaleMaker m(engine, 5);
  run_with_growth(engine, m);
  EXPECT_EQ(engine.events_dropped(), 1u);
  EXPECT_EQ(m.live_sequences, (std::vector<std::uint64_t>{1, 2, 3}));
}

TEST(EngineTest, AClockThatStopsIsReportedInsteadOfRunningForEver) {
  // Events at one instant without end: run() throws once the clock has stayed there over a
  // whole check interval (between one and two intervals of events).
  Engine engine;
  Repeater r(engine, 0);
  r.target = engine.add_handler(r);
  engine.schedule(7, r.target, 0, 0);
  try {
    engine.run();
    FAIL() << "a loop at one instant ran to completion";
  } catch (const ClockStalled& stalled) {
    EXPECT_EQ(stalled.at(), 7);
    EXPECT_EQ(stalled.events(), Engine::kStallEvents);
    EXPECT_GE(engine.events_dispatched(), Engine::kStallEvents);
    EXPECT_LE(engine.events_dispatched(), 2 * Engine::kStallEvents);
  }
}

TEST(EngineTest, AClockThatMovesOnlyNowAndThenIsNotStalled) {
  // A nanosecond step: the clock moves between every two checks, and the run ends at its limit.
  Engine engine;
  Repeater r(engine, 1);
  r.target = engine.add_handler(r);
  engine.schedule(0, r.target, 0, 0);
  const auto limit = static_cast<SimTime>(3 * Engine::kStallEvents);
  engine.run(limit);
  EXPECT_EQ(engine.now(), limit);
}

// Stops the engine at the first event of kind 1.
class Stopper : public EventHandler {
 public:
  explicit Stopper(Engine& engine) : engine_(engine) {}
  void on_event(const Event& event) override {
    ++count;
    if (event.kind == 1) engine_.stop();
  }
  int count = 0;

 private:
  Engine& engine_;
};

TEST(EngineTest, StopReturnsAfterTheCurrentEvent) {
  Engine engine;
  Stopper s(engine);
  const std::uint16_t t = engine.add_handler(s);
  engine.schedule(1, t, 0, 0);
  engine.schedule(2, t, 1, 0);
  engine.schedule(2, t, 0, 0);
  engine.run();
  EXPECT_EQ(s.count, 2);
  EXPECT_EQ(engine.pending(), 1u);
  // A new run() resumes.
  engine.run();
  EXPECT_EQ(s.count, 3);
}

// The fingerprint after running `events` (time, kind, id, arg) through a fresh engine.
struct Spec {
  SimTime time;
  std::uint16_t kind;
  std::uint32_t id;
  std::uint64_t arg;
};
std::uint64_t fingerprint_of(const std::vector<Spec>& events) {
  Engine engine;
  Recorder r(engine);
  const std::uint16_t t = engine.add_handler(r);
  for (const Spec& e : events) engine.schedule(e.time, t, e.kind, e.id, e.arg);
  engine.run();
  return engine.fingerprint();
}

std::vector<Spec> random_stream(std::uint64_t seed, std::size_t n) {
  TestRng rng(seed);
  std::vector<Spec> events;
  for (std::size_t i = 0; i < n; ++i) {
    events.push_back(Spec{static_cast<SimTime>(rng.below(1000)),
                          static_cast<std::uint16_t>(rng.below(8)),
                          static_cast<std::uint32_t>(rng.below(100)), rng.next()});
  }
  return events;
}

TEST(EngineTest, EqualEventStreamsHaveEqualFingerprints) {
  const auto events = random_stream(5, 500);
  EXPECT_EQ(fingerprint_of(events), fingerprint_of(events));
  // An engine that has dispatched nothing has a fingerprint too, distinct from any run.
  Engine idle;
  EXPECT_NE(idle.fingerprint(), fingerprint_of(events));
}

TEST(EngineTest, ChangingAnyOneFieldOfOneEventChangesTheFingerprint) {
  const auto events = random_stream(9, 500);
  const std::uint64_t base = fingerprint_of(events);
  for (std::size_t index : {std::size_t{0}, std::size_t{250}, std::size_t{499}}) {
    auto changed = events;
    changed[index].time += 1;
    EXPECT_NE(fingerprint_of(changed), base) << "time of event " << index;
    changed = events;
    changed[index].kind ^= 1;
    EXPECT_NE(fingerprint_of(changed), base) << "kind of event " << index;
    changed = events;
    changed[index].id ^= 1;
    EXPECT_NE(fingerprint_of(changed), base) << "id of event " << index;
    changed = events;
    changed[index].arg ^= 1ULL << 40;
    EXPECT_NE(fingerprint_of(changed), base) << "arg of event " << index;
  }
}

TEST(EngineTest, FingerprintDependsOnTheOrderOfTies) {
  // Two events at the same time dispatched in the other order are a different trajectory.
  const std::vector<Spec> ab = {{5, 0, 1, 0}, {5, 0, 2, 0}};
  const std::vector<Spec> ba = {{5, 0, 2, 0}, {5, 0, 1, 0}};
  EXPECT_NE(fingerprint_of(ab), fingerprint_of(ba));
}

TEST(EngineTest, FingerprintDependsOnTheTarget) {
  // The same event delivered to another handler is another trajectory.
  auto run_to = [](int which) {
    Engine engine;
    Recorder a(engine);
    Recorder b(engine);
    const std::uint16_t ta = engine.add_handler(a);
    const std::uint16_t tb = engine.add_handler(b);
    engine.schedule(1, which == 0 ? ta : tb, 0, 0);
    engine.run();
    return engine.fingerprint();
  };
  EXPECT_NE(run_to(0), run_to(1));
}

using EngineDeathTest = ::testing::Test;

TEST(EngineDeathTest, SchedulingInThePastAborts) {
  // Scheduling before now() is a broken invariant, not an input error.
  EXPECT_DEATH(
      {
        Engine engine;
        Recorder r(engine);
        const std::uint16_t t = engine.add_handler(r);
        engine.schedule(10, t, 0, 0);
        engine.run();
        engine.schedule(9, t, 0, 0);
      },
      "time >= now_");
}

TEST(EngineDeathTest, SchedulingAtNeverAborts) {
  // kNever means "no time": the queue rejects it rather than mis-order it.
  EXPECT_DEATH(
      {
        EventQueue queue;
        queue.push(kNever, 0, 0, 0, 0);
      },
      "time < kNever");
}

TEST(EngineDeathTest, PoppingAnEmptyQueueAborts) {
  EXPECT_DEATH(
      {
        EventQueue queue;
        queue.pop();
      },
      "empty");
}

}  // namespace
}  // namespace bindersim::engine
