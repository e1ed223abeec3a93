// Test harness for the binder driver: the SA8155P stack built small (mainline placement behind
// a pinning and recording decorator, a registry selector behind a probing decorator) and a
// scripted userspace that records every callback and reacts as each test asks.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../sched/sched_fixture.hpp"
#include "bindersim/binder/driver.hpp"
#include "bindersim/cost/cost_model.hpp"
#include "bindersim/engine/context.hpp"
#include "bindersim/sched/placement.hpp"
#include "bindersim/sched/scheduler.hpp"
#include "bindersim/selectors/registry.hpp"
#include "bindersim/selectors/selector.hpp"
#include "bindersim/topology/topology.hpp"

namespace bindersim::binder::testing {

using engine::kMicrosecond;
using engine::kMillisecond;
using engine::SimTime;

// One wakeup placement: what the scheduler asked and what it got.
struct PlacementRecord {
  SimTime time = 0;
  int tid = -1;
  int prev_cpu = -1;  // the task's wake_cpu handed to placement
  bool sync = false;
  bool fork = false;
  sched::Policy policy = sched::Policy::kNormal;  // the wakee's attributes at placement time
  int nice = 0;
  int rt_priority = 0;
  int cpu = -1;        // the CPU chosen
  int waker_nice = 0;  // the waker's nice at placement time (0 without a waker)
};

// Mainline placement, except that pinned tasks always go to their CPU (a test's taskset), and
// a log of every placement. Mainline runs for pinned tasks too, so that its wakeup bookkeeping
// (wakee flips, recent_used_cpu) stays as it would be; only its answer is overridden.
class PinningPlacement final : public sched::PlacementPolicy {
 public:
  std::string_view name() const override { return mainline_.name(); }

  int select_cpu(sched::Scheduler& sched, int tid, int prev_cpu,
                 const sched::WakeContext& ctx) override {
    int cpu = mainline_.select_cpu(sched, tid, prev_cpu, ctx);
    const sched::Task& task = sched.task(tid);
    if (auto it = pinned_.find(tid); it != pinned_.end()) {
      cpu = it->second;
    } else if (auto by_name = pinned_names_.find(task.params.name);
               by_name != pinned_names_.end()) {
      cpu = by_name->second;
    }
    const int waker_nice = ctx.waker_tid >= 0 ? sched.task(ctx.waker_tid).nice : 0;
    log_.push_back(PlacementRecord{sched.now(), tid, prev_cpu, ctx.sync, ctx.fork, task.policy,
                                   task.nice, task.rt_priority, cpu, waker_nice});
    return cpu;
  }

  // Every later wakeup of `tid` lands on `cpu`.
  void pin(int tid, int cpu) { pinned_[tid] = cpu; }
  // Every wakeup of a task named `name` (e.g. a looper not created yet) lands on `cpu`.
  void pin_name(const std::string& name, int cpu) { pinned_names_[name] = cpu; }

  const std::vector<PlacementRecord>& log() const { return log_; }
  std::vector<PlacementRecord> wakeups_of(int tid) const {
    std::vector<PlacementRecord> out;
    for (const auto& record : log_) {
      if (record.tid == tid) out.push_back(record);
    }
    return out;
  }

 private:
  sched::MainlinePlacement mainline_;
  std::map<int, int> pinned_;
  std::map<std::string, int> pinned_names_;
  std::vector<PlacementRecord> log_;
};

// One selection, as the driver asked for it and as the policy answered.
struct SelectionRecord {
  SimTime time = 0;
  std::vector<selectors::IdleThread> waiting;
  int caller_cpu = -1;
  bool sync = false;
  int chosen_tid = -1;  // -1: none idle
  int preferred_cpu = -1;
  bool nudge_declined = false;
};

// Runs a registry selector and records every selection. With claim_idle set, the policy sees a
// machine whose every CPU is available_idle_cpu(): the only way to make a nudge possible on a
// sync call, where the caller runs on its CPU while it selects.
class ProbeSelector final : public selectors::Selector {
 public:
  ProbeSelector(std::unique_ptr<selectors::Selector> inner, const engine::Engine& engine)
      : Selector(inner->name()), inner_(std::move(inner)), engine_(engine) {}

  // The policy under test; its counts() are the ones a run reports.
  const selectors::Selector& inner() const { return *inner_; }
  void set_claim_idle(bool claim_idle) { claim_idle_ = claim_idle; }
  const std::vector<SelectionRecord>& log() const { return log_; }

 protected:
  selectors::Selection do_select(const selectors::SelectionRequest& request,
                                 const selectors::MachineView& machine) override {
    const IdleView lying(machine);
    const selectors::Selection selection =
        inner_->select(request, claim_idle_ ? static_cast<const MachineView&>(lying) : machine);
    SelectionRecord record;
    record.time = engine_.now();
    record.waiting.assign(request.waiting.begin(), request.waiting.end());
    record.caller_cpu = request.caller_cpu;
    record.sync = request.sync;
    record.chosen_tid = selection.index ? request.waiting[*selection.index].tid : -1;
    record.preferred_cpu = selection.preferred_cpu;
    record.nudge_declined = selection.nudge_declined;
    log_.push_back(std::move(record));
    return selection;
  }

 private:
  using MachineView = selectors::MachineView;
  class IdleView final : public MachineView {
   public:
    explicit IdleView(const MachineView& real) : real_(real) {}
    bool available_idle_cpu(int /*cpu*/) const override { return true; }
    const topology::Topology& topology() const override { return real_.topology(); }

   private:
    const MachineView& real_;
  };

  std::unique_ptr<selectors::Selector> inner_;
  const engine::Engine& engine_;
  bool claim_idle_ = false;
  std::vector<SelectionRecord> log_;
};

// A transaction as its receiver saw it when on_transaction() ran.
struct Received {
  SimTime time = 0;
  int tid = -1;
  int txn = -1;
  int cpu = -1;  // CPU the receiver runs on
  sched::Policy policy = sched::Policy::kNormal;
  int nice = 0;
  int rt_priority = 0;
  int last_cpu = -1;  // Driver::last_cpu(tid)
  int from_tid = -1;
  bool oneway = false;
  std::uint64_t cookie = 0;
};

struct Replied {
  SimTime time = 0;
  int tid = -1;
  CallRecord record;
};

// A transaction its handler ended with finish() (reply or oneway buffer freed).
struct Finished {
  SimTime time = 0;
  int tid = -1;
  int txn = -1;
};

// A oneway send that returned to its sender's userspace.
struct Sent {
  SimTime time = 0;
  int tid = -1;
};

// The userspace above the driver. Each thread has a queue of steps; whenever the driver gives a
// thread control (user work done, reply received, oneway sent) it runs its next step, or parks
// in wait_user() when it has none. A received transaction runs the handler of its node (by
// default: compute `cookie` reference nanoseconds, then reply or free the oneway) in a frame of
// its own: steps added while handling it run before the steps of what the thread was doing
// (a nested call's handler runs inside the wait for the outer reply), and finish() ends it.
class ScriptedUserSpace final : public UserSpace, public engine::EventHandler {
 public:
  using Step = std::function<void(int tid)>;
  using Handler = std::function<void(int tid, int txn)>;

  ScriptedUserSpace(engine::SimContext& context, sched::Scheduler& sched, Driver& driver)
      : context_(context), sched_(sched), driver_(driver) {
    target_ = context_.engine.add_handler(*this);
    driver_.set_userspace(*this);
  }

  // `tid` runs `step` the next time it gets control in its current frame; steps run in the
  // order added.
  void then(int tid, Step step) { top(tid).steps.push_back(std::move(step)); }
  // Starts the created thread `tid` at `time`; its first step runs once it is on a CPU.
  void start_at(int tid, SimTime time) {
    context_.engine.schedule(time, target_, 0, static_cast<std::uint32_t>(tid));
  }
  void set_handler(int proc, int node, Handler handler) {
    handlers_[{proc, node}] = std::move(handler);
  }
  // Ends the transaction `tid` is handling: BC_REPLY for a two-way call, BC_FREE_BUFFER for a
  // oneway. Recorded in finished().
  void finish(int tid) {
    auto& frames = frames_[tid];
    ASSERT_TRUE(frames.size() > 1 && frames.back().txn >= 0)
        << "thread " << tid << " handles nothing";
    const int txn = frames.back().txn;
    EXPECT_TRUE(frames.back().steps.empty()) << "steps left when thread " << tid << " finished";
    frames.pop_back();
    finished_.push_back(Finished{sched_.now(), tid, txn});
    if (driver_.transaction(txn).oneway) {
      driver_.finish_oneway(tid);
    } else {
      driver_.reply(tid, reply_bytes);
    }
  }
  // The payload of every reply finish() sends.
  std::int64_t reply_bytes = 0;
  // The default handler: `cookie` reference nanoseconds of work, then finish().
  void compute_then_finish(int tid, int txn) {
    then(tid, [this](int t) { finish(t); });
    driver_.compute(tid, static_cast<std::int64_t>(driver_.transaction(txn).cookie));
  }

  const std::vector<Received>& received() const { return received_; }
  const std::vector<Finished>& finished() const { return finished_; }
  const std::vector<Replied>& replies() const { return replies_; }
  const std::vector<Sent>& oneway_sent() const { return oneway_sent_; }
  int failed_oneway() const { return failed_oneway_; }  // oneway sends refused (no space)
  std::vector<Received> received_by(int tid) const {
    std::vector<Received> out;
    for (const auto& r : received_) {
      if (r.tid == tid) out.push_back(r);
    }
    return out;
  }
  std::vector<Replied> replies_to(int tid) const {
    std::vector<Replied> out;
    for (const auto& r : replies_) {
      if (r.tid == tid) out.push_back(r);
    }
    return out;
  }

  // UserSpace
  void on_user_work_done(int tid) override { next(tid); }
  void on_transaction(int tid, int txn) override {
    const Transaction& x = driver_.transaction(txn);
    const sched::Task& task = sched_.task(tid);
    received_.push_back(Received{sched_.now(), tid, txn, task.cpu, task.policy, task.nice,
                                 task.rt_priority, driver_.last_cpu(tid), x.from_tid, x.oneway,
                                 x.cookie});
    top(tid);  // the base frame exists below
    frames_[tid].push_back(Frame{txn, {}});
    auto it = handlers_.find({x.to_proc, x.node});
    if (it != handlers_.end()) {
      it->second(tid, txn);
    } else {
      compute_then_finish(tid, txn);
    }
  }
  void on_reply(int tid, const CallRecord& record) override {
    replies_.push_back(Replied{sched_.now(), tid, record});
    next(tid);
  }
  void on_oneway_sent(int tid, bool failed) override {
    if (failed) ++failed_oneway_;
    oneway_sent_.push_back(Sent{sched_.now(), tid});
    next(tid);
  }

  // engine::EventHandler: start_at().
  void on_event(const engine::Event& event) override {
    driver_.start_thread(static_cast<int>(event.id), 0);
  }

 private:
  struct Frame {
    int txn = -1;  // transaction handled in this frame; -1 for the thread's own script
    std::deque<Step> steps;
  };

  Frame& top(int tid) {
    auto& frames = frames_[tid];
    if (frames.empty()) frames.emplace_back();
    return frames.back();
  }

  void next(int tid) {
    auto& queue = top(tid).steps;
    if (queue.empty()) {
      driver_.wait_user(tid);
      return;
    }
    Step step = std::move(queue.front());
    queue.pop_front();
    step(tid);
  }

  engine::SimContext& context_;
  sched::Scheduler& sched_;
  Driver& driver_;
  std::uint16_t target_ = 0;
  std::map<int, std::vector<Frame>> frames_;  // per thread, innermost last
  std::map<std::pair<int, int>, Handler> handlers_;
  std::vector<Received> received_;
  std::vector<Finished> finished_;
  std::vector<Replied> replies_;
  std::vector<Sent> oneway_sent_;
  int failed_oneway_ = 0;
};

inline std::unique_ptr<selectors::Selector> make_registry_selector(const std::string& name) {
  selectors::SelectorRegistry registry;
  selectors::register_builtin_selectors(registry);
  return registry.create(name);
}

// The whole stack below the workload, on the SA8155P topology (CPUs 0-3 silver, 4-6 gold,
// 7 prime) with WFI as the only idle state (sched_fixture.hpp's load_sa8155p).
class DriverHarness {
 public:
  // `edit` (if any) changes the topology's document first: other costs for one test.
  explicit DriverHarness(const std::string& selector_name = "fifo", KernelOptions options = {},
                         const std::function<void(nlohmann::json&)>& edit = nullptr)
      : topology(sched::fixture::load_sa8155p(sched::fixture::IdleStates::kWfiOnly, edit)),
        context(topology, 1),
        cost(topology),
        sched(context, cost, placement),
        selector(make_registry_selector(selector_name), context.engine),
        driver(context, sched, cost, selector, options),
        user(context, sched, driver) {}

  DriverHarness(const DriverHarness&) = delete;
  DriverHarness& operator=(const DriverHarness&) = delete;

  // A server process with a thread pool (its main looper starts now).
  int add_server(const std::string& name, int max_threads, std::vector<NodeConfig> nodes = {},
                 bool free_before_reply = false) {
    ProcessConfig config;
    config.name = name;
    config.max_threads = max_threads;
    config.nodes = std::move(nodes);
    config.free_before_reply = free_before_reply;
    return driver.create_process(config);
  }
  // A process without a thread pool, for client threads, with `buffer_space` bytes of buffer
  // space (0: libbinder's default).
  int add_client_process(const std::string& name = "clients", std::int64_t buffer_space = 0) {
    ProcessConfig config;
    config.name = name;
    config.start_thread_pool = false;
    if (buffer_space > 0) config.buffer_space.space_bytes = buffer_space;
    return driver.create_process(config);
  }
  // A thread of `proc` pinned to `cpu` (-1: not pinned). It starts when start_at() says.
  int add_thread(int proc, const std::string& name, int cpu,
                 sched::Policy policy = sched::Policy::kNormal, int nice = 0, int rt_priority = 0) {
    sched::TaskParams params;
    params.name = name;
    params.policy = policy;
    params.nice = nice;
    params.rt_priority = rt_priority;
    if (cpu >= 0) params.affinity = std::uint64_t{1} << cpu;
    const int tid = driver.create_thread(proc, params);
    if (cpu >= 0) placement.pin(tid, cpu);
    return tid;
  }
  // Script: `tid` starts at `time` and makes a two-way call to node `node` of `proc` asking
  // for `service_ns` of handler work (carried in the cookie).
  void call_at(int tid, SimTime time, int proc, std::int64_t service_ns, int node = 0) {
    user.start_at(tid, time);
    call_next(tid, proc, service_ns, node);
  }
  // Script: the next step of `tid` is a two-way call.
  void call_next(int tid, int proc, std::int64_t service_ns, int node = 0) {
    user.then(tid, [this, proc, service_ns, node](int t) {
      driver.call(t, proc, node, 0, false, static_cast<std::uint64_t>(service_ns));
    });
  }
  // Script: the next step of `tid` is a oneway send.
  void oneway_next(int tid, int proc, std::int64_t service_ns, int node = 0) {
    user.then(tid, [this, proc, service_ns, node](int t) {
      driver.call(t, proc, node, 0, true, static_cast<std::uint64_t>(service_ns));
    });
  }

  void run_until(SimTime time) { context.engine.run(time); }
  const stats::SelectionCounts& counts() const { return selector.inner().counts(); }
  std::uint64_t decisions() const {
    const auto& c = counts();
    return c.same_cpu + c.same_cluster + c.other + c.none_idle;
  }

  // Pins the loopers of process `process`, in creation order (created or not yet), to `cpus`.
  void pin_loopers(const std::string& process, const std::vector<int>& cpus) {
    for (std::size_t i = 0; i < cpus.size(); ++i) {
      // The driver names loopers "<process>:binder_<n>", n from 1.
      placement.pin_name(process + ":binder_" + std::to_string(i + 1), cpus[i]);
    }
  }

  topology::Topology topology;
  engine::SimContext context;
  cost::CostModel cost;
  PinningPlacement placement;
  sched::Scheduler sched;
  ProbeSelector selector;
  Driver driver;
  ScriptedUserSpace user;
};

}  // namespace bindersim::binder::testing
