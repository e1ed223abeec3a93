#include "bindersim/workload/runner.hpp"
#include "bindersim/common/error.hpp"
#include "bindersim/common/json_reader.hpp"
#include "bindersim/topology/topology.hpp"
#include "bindersim/workload/streams.hpp"

namespace bindersim::workload {
namespace {

// Iterations of one loop in a row that may take no simulated time before the loop is reported
// as endless (a loop of zero-time steps would never let the clock advance).
constexpr int kMaxZeroTimeIterations = 1000;

stats::Tier tier_of(const topology::Topology& topology, int caller_cpu, int server_cpu) {
  if (caller_cpu == server_cpu) return stats::Tier::kSameCore;
  return topology.cluster_of(caller_cpu) == topology.cluster_of(server_cpu)
             ? stats::Tier::kSameCluster
             : stats::Tier::kCrossCluster;
}

}  // namespace

WorkloadRunner::WorkloadRunner(engine::SimContext& context, binder::Driver& driver,
                               const Scenario& scenario, stats::RunResult& result)
    : context_(context), driver_(driver), scenario_(scenario), result_(result) {
  target_ = context_.engine.add_handler(*this);
  driver_.set_userspace(*this);
  for (std::size_t c = 0; c < scenario_.clients.size(); ++c) {
    loops_.push_back(&scenario_.clients[c]);
    rngs_.push_back(context_.rng(stream_id(StreamKind::kClient, c)));
  }
  for (std::size_t b = 0; b < scenario_.background.size(); ++b) {
    loops_.push_back(&scenario_.background[b]);
    rngs_.push_back(context_.rng(stream_id(StreamKind::kBackground, b)));
  }
  for (std::size_t p = 0; p < scenario_.processes.size(); ++p) {
    node_rng_base_.push_back(static_cast<int>(rngs_.size()));
    for (std::size_t n = 0; n < scenario_.processes[p].nodes.size(); ++n) {
      rngs_.push_back(context_.rng(handler_stream_id(p, n)));
    }
  }
}

std::uint64_t WorkloadRunner::cpu_mask(const CpuList& list) const {
  const int num_cpus = context_.topology.num_cpus();
  std::uint64_t mask = 0;
  for (int cpu : list.cpus) {
    if (cpu >= num_cpus) {
      throw ConfigError(scenario_.source() + ": " + list.pointer + ": CPU " + std::to_string(cpu) +
                        " is not in topology " + context_.topology.name() + " (CPUs 0-" +
                        std::to_string(num_cpus - 1) + ")");
    }
    mask |= std::uint64_t{1} << cpu;
  }
  return mask;
}

void WorkloadRunner::start() {
  for (const auto& spec : scenario_.processes) {
    binder::ProcessConfig config;
    config.name = spec.name;
    config.max_threads = spec.max_threads;
    config.start_thread_pool = spec.start_thread_pool;
    config.looper_working_set_bytes = spec.looper_working_set_bytes;
    config.buffer_space.space_bytes = spec.buffer_space_bytes;
    config.cpuset = cpu_mask(spec.cpuset);
    config.free_before_reply = spec.free_before_reply;
    for (const auto& node : spec.nodes) config.nodes.push_back(node.config);
    driver_.create_process(config);
  }
  for (std::size_t c = 0; c < loops_.size(); ++c) {
    const ClientSpec& spec = *loops_[c];
    sched::TaskParams params;
    params.name = spec.name;
    params.policy = spec.policy;
    params.nice = spec.nice;
    params.rt_priority = spec.rt_priority;
    params.working_set_bytes = spec.working_set_bytes;
    params.affinity = cpu_mask(spec.affinity);
    if (spec.process >= 0 && params.affinity != 0) {
      const auto& cpuset = scenario_.processes[static_cast<std::size_t>(spec.process)].cpuset;
      if (binder::restrict_to_cpuset(params.affinity, cpu_mask(cpuset)) == 0) {
        throw ConfigError(scenario_.source() + ": " + spec.affinity.pointer +
                          ": expected at least one CPU of the process's cpuset (" + cpuset.pointer +
                          "), got none");
      }
    }
    const int tid = driver_.create_thread(spec.process, params);
    loop_tids_.push_back(tid);
    ThreadState& s = state(tid);
    s.client = static_cast<int>(c);
    s.main = true;
    context_.engine.schedule(spec.start_ns, target_, 0, static_cast<std::uint32_t>(c));
  }
}

void WorkloadRunner::on_event(const engine::Event& event) {
  // A client starts: its first step runs once it is on a CPU.
  const int tid = loop_tids_[event.id];
  const int rng = static_cast<int>(event.id);
  state(tid).frames.push_back(Frame{&loops_[event.id]->iteration, 0, -1, -1, -1, rng});
  state(tid).mode = Mode::kStarting;
  state(tid).iteration_started = context_.engine.now();
  driver_.start_thread(tid, 0);
}

std::int64_t WorkloadRunner::draw(const Quantity& q, int rng) {
  engine::Rng& r = rngs_[static_cast<std::size_t>(rng)];
  switch (q.kind) {
    case Quantity::Kind::kConstant:
      return q.a;
    case Quantity::Kind::kUniform:
      return r.uniform_int(q.a, q.b);
    case Quantity::Kind::kExponential:
      return static_cast<std::int64_t>(r.exponential(static_cast<double>(q.a)));
  }
  return q.a;
}

void WorkloadRunner::advance(int tid) {
  // Local calls, the ends of their frames and a loop's next iteration take no simulated time:
  // they run here in turn, not by recursion, whose depth would grow with them.
  while (run_step(tid)) {
  }
}

bool WorkloadRunner::run_step(int tid) {
  ThreadState& s = state(tid);
  BSIM_CHECK(!s.frames.empty());
  Frame& frame = s.frames.back();
  if (frame.pc >= frame.steps->size()) return end_frame(tid);
  const Step& step = (*frame.steps)[frame.pc];
  s.mode = Mode::kStep;
  switch (step.op) {
    case Step::Op::kCompute:
      driver_.compute(tid, draw(step.amount, frame.rng));
      return false;
    case Step::Op::kSleep:
      driver_.sleep(tid, draw(step.amount, frame.rng), 0);
      return false;
    case Step::Op::kCall: {
      const auto& choices = step.target.processes;
      const int proc =
          choices.size() == 1
              ? choices.front()
              : choices[rngs_[static_cast<std::size_t>(frame.rng)].uniform_below(choices.size())];
      if (proc == driver_.process_of(tid)) {
        // Local call: the handler runs on this thread, as BBinder::transact does, oneway or
        // not (the kernel rejects self transactions). Handlers that call their own process
        // without end would nest frames forever.
        if (s.creators_depth + s.frames.size() >= binder::kMaxCallDepth) {
          endless_calls(
              step, "a chain of calls within process " +
                        quote_text(scenario_.processes[static_cast<std::size_t>(proc)].name) +
                        " reached " + std::to_string(binder::kMaxCallDepth) + " nested calls" +
                        (s.creators_depth > 0 ? ", counting the threads waiting for helpers" : ""));
        }
        const int rng = node_rng_base_[static_cast<std::size_t>(proc)] + step.target.node;
        const auto& node = scenario_.processes[static_cast<std::size_t>(proc)]
                               .nodes[static_cast<std::size_t>(step.target.node)];
        Frame local{&node.handler, 0, -1, proc, step.target.node, rng};
        local.local = true;
        local.local_oneway = step.oneway;
        local.local_started = context_.engine.now();
        local.local_cpu = driver_.scheduler().task(tid).cpu;
        s.frames.push_back(local);
        return true;
      }
      // Handlers of different processes that call each other without end: the driver would
      // stop the chain too, but only the step can name where it is in the scenario.
      if (!step.oneway && driver_.transaction_depth(tid) >= binder::kMaxCallDepth) {
        endless_calls(step, "a call chain reached " + std::to_string(binder::kMaxCallDepth) +
                                " nested transactions");
      }
      driver_.call(tid, proc, step.target.node, step.payload_bytes, step.oneway, 0);
      return false;
    }
    case Step::Op::kThread:
      s.mode = Mode::kCreating;
      s.thread_step = &step;
      driver_.compute(tid, step.create_ref_ns);
      return false;
  }
  return false;
}

bool WorkloadRunner::end_frame(int tid) {
  ThreadState& s = state(tid);
  const Frame frame = s.frames.back();
  if (frame.local) {
    s.frames.pop_back();
    if (!frame.local_oneway) {  // a oneway call has no round trip to record
      binder::CallRecord record;
      record.started = frame.local_started;
      record.finished = context_.engine.now();
      record.caller_cpu = frame.local_cpu;
      record.server_cpu = frame.local_cpu;
      record.caller_policy = driver_.scheduler().task(tid).policy;
      record.breakdown.service_ns = record.finished - record.started;
      record_call(record);
    }
    ++s.frames.back().pc;
    return true;
  }
  if (frame.txn >= 0) {
    // A handler finished: reply (two-way) or free the oneway buffer; back to the read.
    s.frames.pop_back();
    const auto& node = scenario_.processes[static_cast<std::size_t>(frame.node_proc)]
                           .nodes[static_cast<std::size_t>(frame.node)];
    if (driver_.transaction(frame.txn).oneway) {
      driver_.finish_oneway(tid);
    } else {
      driver_.reply(tid, node.reply_bytes);
    }
    return false;
  }
  if (s.main) {
    const bool background = static_cast<std::size_t>(s.client) >= scenario_.clients.size();
    const ClientSpec& spec = *loops_[static_cast<std::size_t>(s.client)];
    check_iteration_time(tid);
    if (++s.iterations_done < spec.iterations || background) {
      s.frames.back().pc = 0;
      return true;
    }
    exit_thread(tid);
    if (++clients_done_ == scenario_.clients.size()) context_.engine.stop();
    return false;
  }
  // A helper thread's steps are done: its exit work, then it wakes its creator and exits.
  s.frames.clear();
  s.mode = Mode::kExiting;
  driver_.compute(tid, s.thread_step->exit_ref_ns);
  return false;
}

void WorkloadRunner::exit_thread(int tid) {
  driver_.exit_thread(tid);
  state(tid) = ThreadState{};  // the id may be given to a new thread, a looper as well
}

void WorkloadRunner::endless_calls(const Step& step, const std::string& chain) const {
  throw ConfigError(scenario_.source() + ": " + step.pointer +
                    ": the scenario's handlers call each other without end: " + chain);
}

void WorkloadRunner::check_iteration_time(int tid) {
  ThreadState& s = state(tid);
  const engine::SimTime now = context_.engine.now();
  if (now != s.iteration_started) {
    s.zero_time_iterations = 0;
    s.iteration_started = now;
    return;
  }
  if (++s.zero_time_iterations < kMaxZeroTimeIterations) return;
  const auto loop = static_cast<std::size_t>(s.client);
  const std::string pointer =
      loop < scenario_.clients.size()
          ? "/clients/" + std::to_string(loop)
          : "/background/" + std::to_string(loop - scenario_.clients.size());
  throw ConfigError(scenario_.source() + ": " + pointer +
                    "/iteration: " + std::to_string(kMaxZeroTimeIterations) +
                    " iterations in a row took no simulated time, so the loop would never let "
                    "time advance; give it a step that takes time (a sleep or a compute above 0 "
                    "ns)");
}

void WorkloadRunner::spawn_helper(int tid) {
  const Step& step = *state(tid).thread_step;
  const int client = state(tid).client;
  const int proc = driver_.process_of(tid);
  // A background task outside every process creates its threads directly: no process's
  // bionic setting applies to it.
  const bool bionic =
      proc >= 0 && scenario_.processes[static_cast<std::size_t>(proc)].bionic_thread_creation;
  sched::TaskParams params;
  params.policy = step.policy;
  params.nice = step.nice;
  params.rt_priority = step.rt_priority;
  if (bionic) {
    // clone() gives the thread its creator's class; the step's follows below.
    const sched::Task& creator = driver_.scheduler().task(tid);
    params.policy = creator.policy;
    params.nice = creator.nice;
    params.rt_priority = creator.rt_priority;
  }
  // clone() copies the creator's CPU mask: the new thread may run where its creator may.
  params.affinity = driver_.scheduler().task(tid).params.affinity;
  if (client >= 0) {
    const ClientSpec& spec = *loops_[static_cast<std::size_t>(client)];
    params.name = spec.name + ":thread";
    params.working_set_bytes = spec.working_set_bytes;
  } else {
    // Created by a looper running a node's handler: named after, and sized like, its process's
    // loopers.
    const ProcessSpec& spec = scenario_.processes[static_cast<std::size_t>(proc)];
    params.name = spec.name + ":thread";
    params.working_set_bytes = spec.looper_working_set_bytes;
  }
  const int child = driver_.create_thread(proc, params);
  ThreadState& c = state(child);
  ThreadState& parent = state(tid);  // taken after state(child), which may grow the vector
  c.client = client;
  c.parent = tid;
  c.creators_depth = parent.creators_depth + parent.frames.size();
  c.thread_step = &step;
  c.frames.push_back(Frame{step.steps.get(), 0, -1, -1, -1, parent.frames.back().rng});
  c.mode = Mode::kStarting;
  parent.mode = Mode::kJoining;
  driver_.start_thread(child, step.start_ref_ns, tid);
  if (bionic) driver_.set_scheduler(child, step.policy, step.nice, step.rt_priority);
  driver_.wait_user(tid);
}

void WorkloadRunner::on_user_work_done(int tid) {
  ThreadState& s = state(tid);
  switch (s.mode) {
    case Mode::kStarting:
      advance(tid);
      return;
    case Mode::kStep:
    case Mode::kJoining:
      ++s.frames.back().pc;
      advance(tid);
      return;
    case Mode::kCreating:
      spawn_helper(tid);
      return;
    case Mode::kExiting:
      driver_.wake_user(s.parent, tid, 0);
      exit_thread(tid);
      return;
  }
}

void WorkloadRunner::on_transaction(int tid, int txn) {
  const binder::Transaction& x = driver_.transaction(txn);
  const int proc = x.to_proc;
  const auto& node =
      scenario_.processes[static_cast<std::size_t>(proc)].nodes[static_cast<std::size_t>(x.node)];
  const int rng = node_rng_base_[static_cast<std::size_t>(proc)] + x.node;
  state(tid).frames.push_back(Frame{&node.handler, 0, txn, proc, x.node, rng});
  advance(tid);
}

void WorkloadRunner::on_reply(int tid, const binder::CallRecord& record) {
  record_call(record);
  ++state(tid).frames.back().pc;
  advance(tid);
}

void WorkloadRunner::record_call(const binder::CallRecord& record) {
  if (record.failed) {
    ++result_.failed_calls;  // BR_FAILED_REPLY: no latency, not completed
    return;
  }
  const std::int64_t latency = record.finished - record.started;
  const auto cls = record.caller_policy == sched::Policy::kFifo ? stats::SchedClass::kFifo
                                                                : stats::SchedClass::kOther;
  result_.latency.record(latency);
  const stats::Tier tier = tier_of(context_.topology, record.caller_cpu, record.server_cpu);
  result_.tier(cls, tier).record(latency);
  result_.tier_breakdown(cls, tier) += record.breakdown;
  ++result_.completed;
}

void WorkloadRunner::on_oneway_sent(int tid, bool failed) {
  if (failed) ++result_.failed_calls;
  ++state(tid).frames.back().pc;
  advance(tid);
}

}  // namespace bindersim::workload
