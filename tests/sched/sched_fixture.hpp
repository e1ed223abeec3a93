// Test harness for the scheduler layer: the SA8155P topology, a SimContext, a CostModel, a
// recording mainline placement, a Scheduler and a fake TaskOwner, with helpers to act at exact
// simulated times.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "bindersim/common/json_reader.hpp"
#include "bindersim/cost/cost_model.hpp"
#include "bindersim/engine/context.hpp"
#include "bindersim/engine/engine.hpp"
#include "bindersim/sched/placement.hpp"
#include "bindersim/sched/scheduler.hpp"
#include "bindersim/sched/task.hpp"
#include "bindersim/topology/topology.hpp"

namespace bindersim::sched::fixture {

using engine::kMicrosecond;
using engine::kMillisecond;

// SA8155P CPU numbering: silver 0-3, gold 4-6, prime 7.
inline constexpr int kSilver0 = 0;
inline constexpr int kGold0 = 4;
inline constexpr int kPrime = 7;

inline std::uint64_t only(int cpu) { return std::uint64_t{1} << cpu; }

// Which idle states the fixtures' CPUs have. The menu idle governor expects a CPU with no timer
// armed to sleep long and puts it in its deepest state (core power-down, about 1 ms to exit);
// the fixtures have no kernel housekeeping and no timers, so with every state each wakeup of an
// idle CPU would pay that exit. Tests of something else keep WFI only; tests of idle behaviour
// ask for all the states.
enum class IdleStates { kWfiOnly, kAll };

// The SA8155P topology, with only its first idle state (WFI) on every CPU unless told otherwise,
// and `edit` (if any) applied to its document, for a test that needs other numbers.
inline topology::Topology load_sa8155p(IdleStates idle_states = IdleStates::kWfiOnly,
                                       const std::function<void(nlohmann::json&)>& edit = nullptr) {
  const std::string dir = std::string(BINDERSIM_SOURCE_DIR) + "/topologies";
  const std::string path = dir + "/sa8155p.json";
  if (idle_states == IdleStates::kAll && !edit) return topology::Topology::load(path, dir);
  std::ifstream in(path);
  nlohmann::json doc = nlohmann::json::parse(in);
  if (idle_states == IdleStates::kWfiOnly) {
    for (nlohmann::json& cluster : doc.at("clusters")) {
      nlohmann::json& states = cluster.at("idle_states");
      states.erase(states.begin() + 1, states.end());
    }
  }
  if (edit) edit(doc);
  return topology::Topology::from_json(
      JsonNode(doc, std::make_shared<const std::string>(path + " (edited)"), ""));
}

// Index of the lowest operating point at or above `khz` (the top one when none is): the
// frequency the cpufreq driver resolves a request to (CPUFREQ_RELATION_L).
inline int opp_at_or_above(const topology::FrequencyDomain& domain, double khz) {
  for (std::size_t i = 0; i < domain.opps.size(); ++i) {
    if (static_cast<double>(domain.opps[i].freq_khz) >= khz) return static_cast<int>(i);
  }
  return static_cast<int>(domain.opps.size()) - 1;
}

inline TaskParams fair_params(const std::string& name, int nice = 0, std::uint64_t affinity = 0) {
  TaskParams params;
  params.name = name;
  params.policy = Policy::kNormal;
  params.nice = nice;
  params.affinity = affinity;
  return params;
}

inline TaskParams rt_params(const std::string& name, int rt_priority, std::uint64_t affinity = 0) {
  TaskParams params;
  params.name = name;
  params.policy = Policy::kFifo;
  params.rt_priority = rt_priority;
  params.affinity = affinity;
  return params;
}

// The context of a wakeup from `waker_cpu` by task `waker_tid` (-1: an interrupt or timer).
inline WakeContext from_cpu(int waker_cpu, int waker_tid = -1, bool sync = false) {
  WakeContext ctx;
  ctx.waker_tid = waker_tid;
  ctx.waker_cpu = waker_cpu;
  ctx.sync = sync;
  return ctx;
}

// A placement policy (mainline unless told otherwise) that records every call (the prev_cpu
// it was handed, and its answer).
class RecordingPlacement final : public PlacementPolicy {
 public:
  explicit RecordingPlacement(const std::string& inner = "mainline")
      : inner_(make_placement(inner)) {}
  std::string_view name() const override { return inner_->name(); }
  bool energy_aware() const override { return inner_->energy_aware(); }
  bool tracks_walt_demand() const override { return inner_->tracks_walt_demand(); }
  bool may_pull(const Scheduler& sched, int src_cpu, int dst_cpu, BalanceKind kind) const override {
    return inner_->may_pull(sched, src_cpu, dst_cpu, kind);
  }
  bool pulls_after_short_idle() const override { return inner_->pulls_after_short_idle(); }
  bool migrates_misfit() const override { return inner_->migrates_misfit(); }
  bool honors_rt_sync() const override { return inner_->honors_rt_sync(); }
  int lowest_rq(const Scheduler& sched, int tid, int this_cpu) const override {
    return inner_->lowest_rq(sched, tid, this_cpu);
  }

  struct Call {
    int tid = -1;
    int prev_cpu = -1;
    WakeContext ctx;
    int result = -1;
  };

  int select_cpu(Scheduler& sched, int tid, int prev_cpu, const WakeContext& ctx) override {
    const int result = inner_->select_cpu(sched, tid, prev_cpu, ctx);
    calls_.push_back(Call{tid, prev_cpu, ctx, result});
    return result;
  }
  const std::vector<Call>& calls() const { return calls_; }

 private:
  std::unique_ptr<PlacementPolicy> inner_;
  std::vector<Call> calls_;
};

// Records on_resume / on_work_done. When a segment is done it runs the task's handler if one
// is set, else blocks the task.
class FakeOwner final : public TaskOwner {
 public:
  struct Record {
    int tid = -1;
    int cpu = -1;
    engine::SimTime time = 0;
  };

  explicit FakeOwner(Scheduler& sched) : sched_(sched) {}

  void on_work_done(int tid) override {
    done_.push_back(Record{tid, sched_.task(tid).cpu, sched_.now()});
    const auto it = handlers_.find(tid);
    if (it != handlers_.end()) {
      it->second(tid);
    } else {
      sched_.block(tid);
    }
  }
  engine::SimTime on_resume(int tid, int cpu) override {
    resumes_.push_back(Record{tid, cpu, sched_.now()});
    return 0;
  }

  // `handler` must run, block or exit the task.
  void on_done(int tid, std::function<void(int)> handler) { handlers_[tid] = std::move(handler); }
  // The task gets `segments` more segments of `work_ref_ns` each, then blocks.
  void repeat(int tid, int segments, std::int64_t work_ref_ns) {
    auto left = std::make_shared<int>(segments);
    on_done(tid, [this, left, work_ref_ns](int id) {
      if ((*left)-- > 0) {
        sched_.run(id, work_ref_ns);
      } else {
        sched_.block(id);
      }
    });
  }

  const std::vector<Record>& resumes() const { return resumes_; }
  const std::vector<Record>& dones() const { return done_; }
  std::vector<Record> resumes_of(int tid) const { return filter(resumes_, tid); }
  std::vector<Record> dones_of(int tid) const { return filter(done_, tid); }
  // Tids in the order they were resumed.
  std::vector<int> resume_order() const {
    std::vector<int> out;
    for (const Record& r : resumes_) out.push_back(r.tid);
    return out;
  }

 private:
  static std::vector<Record> filter(const std::vector<Record>& records, int tid) {
    std::vector<Record> out;
    for (const Record& r : records) {
      if (r.tid == tid) out.push_back(r);
    }
    return out;
  }

  Scheduler& sched_;
  std::map<int, std::function<void(int)>> handlers_;
  std::vector<Record> resumes_;
  std::vector<Record> done_;
};

// Runs callbacks at chosen simulated times (an engine handler of its own).
class Timer final : public engine::EventHandler {
 public:
  explicit Timer(engine::Engine& engine) : engine_(engine), target_(engine.add_handler(*this)) {}

  void at(engine::SimTime time, std::function<void()> action) {
    actions_.push_back(std::move(action));
    engine_.schedule(time, target_, 0, static_cast<std::uint32_t>(actions_.size() - 1));
  }
  void on_event(const engine::Event& event) override { actions_.at(event.id)(); }

 private:
  engine::Engine& engine_;
  std::uint16_t target_;
  std::vector<std::function<void()>> actions_;
};

// One complete scheduler under test. Not movable: the members refer to each other.
class SchedHarness {
 public:
  // Mainline placement, kernel-default tunables and WFI as the only idle state unless told
  // otherwise; `topology_edit` (if any) changes the SA8155P document first.
  explicit SchedHarness(SchedTunables tunables = {}, const std::string& placement = "mainline",
                        IdleStates idle_states = IdleStates::kWfiOnly,
                        const std::function<void(nlohmann::json&)>& topology_edit = nullptr)
      : topology_(load_sa8155p(idle_states, topology_edit)),
        context_(topology_, 1),
        cost_(topology_),
        placement_(placement),
        sched_(context_, cost_, placement_, tunables),
        owner_(sched_),
        timer_(context_.engine) {
    sched_.set_owner(owner_);
  }
  SchedHarness(const SchedHarness&) = delete;
  SchedHarness& operator=(const SchedHarness&) = delete;

  Scheduler& sched() { return sched_; }
  FakeOwner& owner() { return owner_; }
  engine::SimTime now() const { return context_.engine.now(); }
  // Runs every event up to and including `time`; afterwards now() == time.
  void run_until(engine::SimTime time) {
    timer_.at(time, [] {});
    context_.engine.run(time);
  }
  void run_for(engine::SimTime duration) { run_until(now() + duration); }
  void at(engine::SimTime time, std::function<void()> action) {
    timer_.at(time, std::move(action));
  }

  // Creates a task with `work_ref_ns` of work and wakes it as a new task forked on
  // `parent_cpu` (-1: at boot). Returns its tid.
  int spawn(const TaskParams& params, std::int64_t work_ref_ns, int parent_cpu = -1) {
    const int tid = sched_.create_task(params);
    sched_.run(tid, work_ref_ns);
    sched_.wake_new(tid, parent_cpu);
    return tid;
  }
  // A task pinned to `cpu` that runs `work_ref_ns` there from now on (it starts once the CPU
  // has left idle).
  int occupy(int cpu, TaskParams params, std::int64_t work_ref_ns = 10'000 * kMillisecond) {
    params.affinity = only(cpu);
    return spawn(params, work_ref_ns, cpu);
  }
  // Occupies each CPU with a pinned task that runs for a long time; returns their tids once
  // they run.
  std::vector<int> busy(std::initializer_list<int> cpus,
                        const TaskParams& params = fair_params("busy")) {
    std::vector<int> tids;
    for (int cpu : cpus) tids.push_back(occupy(cpu, params));
    run_for(10 * kMicrosecond);
    for (std::size_t i = 0; i < tids.size(); ++i) {
      EXPECT_EQ(sched_.rq(*(cpus.begin() + i)).curr, tids[i]);
    }
    return tids;
  }
  // A task that ran briefly on `cpu` and is now asleep there; afterwards it may run anywhere
  // `affinity` allows. Advances time by 100 us.
  int sleeper(int cpu, TaskParams params = fair_params("sleeper"), std::uint64_t affinity = 0) {
    params.affinity = only(cpu);
    const int tid = spawn(params, 10 * kMicrosecond, cpu);
    run_for(100 * kMicrosecond);
    EXPECT_EQ(sched_.task(tid).state, TaskState::kSleeping);
    EXPECT_EQ(sched_.task(tid).cpu, cpu);
    sched_.task_for_update(tid).params.affinity = affinity;
    return tid;
  }
  // Which task runs on `cpu` (-1: none) at from, from + step, ... up to `to`; the vector fills
  // as simulated time passes.
  struct Sample {
    engine::SimTime time = 0;
    int curr = -1;
  };
  std::shared_ptr<std::vector<Sample>> sample_curr(int cpu, engine::SimTime from,
                                                   engine::SimTime to, engine::SimTime step) {
    auto samples = std::make_shared<std::vector<Sample>>();
    for (engine::SimTime time = from; time <= to; time += step) {
      at(time, [this, samples, cpu] { samples->push_back(Sample{now(), sched_.rq(cpu).curr}); });
    }
    return samples;
  }
  // Gives a sleeping task `work_ref_ns` and wakes it.
  void wake(int tid, const WakeContext& ctx, std::int64_t work_ref_ns = 10 * kMicrosecond) {
    sched_.run(tid, work_ref_ns);
    sched_.wake(tid, ctx);
  }

 protected:
  topology::Topology topology_;
  engine::SimContext context_;
  cost::CostModel cost_;
  RecordingPlacement placement_;
  Scheduler sched_;
  FakeOwner owner_;
  Timer timer_;
};

class SchedTest : public ::testing::Test, public SchedHarness {};

// The same with every idle state of the SA8155P (WFI and core power-down).
class SchedIdleTest : public ::testing::Test, public SchedHarness {
 protected:
  SchedIdleTest() : SchedHarness({}, "mainline", IdleStates::kAll) {}
};

}  // namespace bindersim::sched::fixture
