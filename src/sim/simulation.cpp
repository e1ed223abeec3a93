#include "bindersim/sim/simulation.hpp"

#include <cmath>
#include <optional>

#include "bindersim/binder/driver.hpp"
#include "bindersim/common/error.hpp"
#include "bindersim/common/hash.hpp"
#include "bindersim/cost/cost_model.hpp"
#include "bindersim/engine/context.hpp"
#include "bindersim/sched/placement.hpp"
#include "bindersim/sched/scheduler.hpp"
#include "bindersim/selectors/registry.hpp"
#include "bindersim/topology/topology.hpp"
#include "bindersim/trace/tracer.hpp"
#include "bindersim/workload/runner.hpp"

namespace bindersim::sim {
namespace {

std::string governor_name(sched::Governor governor) {
  static_assert(stats::kGovernorNames[static_cast<std::size_t>(sched::Governor::kSchedutil)] ==
                "schedutil");
  return std::string(stats::kGovernorNames[static_cast<std::size_t>(governor)]);
}

stats::SchedulerStats scheduler_stats(const sched::Scheduler& scheduler) {
  const auto& topology = scheduler.topology();
  stats::SchedulerStats out;
  out.governor = governor_name(scheduler.tunables().governor);
  for (int cluster = 0; cluster < topology.num_clusters(); ++cluster) {
    const int first_cpu = topology.cluster_cpus(cluster).front();
    out.clusters.push_back(
        {topology.cpu(first_cpu).cluster_name, std::llround(scheduler.mean_freq_khz(cluster))});
  }
  for (int cpu = 0; cpu < topology.num_cpus(); ++cpu)
    out.cpu_busy_ns.push_back(scheduler.busy_ns(cpu));
  out.frequency_changes = scheduler.frequency_changes();
  out.newidle_pulls = scheduler.newidle_pulls();
  out.rt_pulls = scheduler.rt_pulls();
  out.rt_pushes = scheduler.rt_pushes();
  out.balance_pulls = scheduler.balance_pulls();
  out.misfit_migrations = scheduler.misfit_migrations();
  return out;
}

// Calls one run of `steps` completes, handlers' nested calls included; negative when the
// handlers nest deeper than `depth` allows.
double calls_of(const workload::Scenario& scenario, const workload::Steps& steps, int depth) {
  if (depth < 0) return -1;
  double calls = 0;
  for (const workload::Step& step : steps) {
    if (step.op == workload::Step::Op::kThread && step.steps) {
      const double inner = calls_of(scenario, *step.steps, depth);
      if (inner < 0) return -1;
      calls += inner;
    } else if (step.op == workload::Step::Op::kCall && !step.target.processes.empty()) {
      double handled = 0;
      for (const int proc : step.target.processes) {
        const auto& nodes = scenario.processes[static_cast<std::size_t>(proc)].nodes;
        if (static_cast<std::size_t>(step.target.node) >= nodes.size()) continue;
        const double inner = calls_of(
            scenario, nodes[static_cast<std::size_t>(step.target.node)].handler, depth - 1);
        if (inner < 0) return -1;
        handled += inner;
      }
      calls +=
          (step.oneway ? 0.0 : 1.0) + handled / static_cast<double>(step.target.processes.size());
    }
  }
  return calls;
}

// Hands the engine's progress reports to a ProgressSink, with the calls completed so far.
class ProgressAdapter final : public engine::ProgressHook {
 public:
  ProgressAdapter(ProgressSink& sink, const stats::RunResult& result, std::uint64_t expected)
      : sink_(sink), result_(result), expected_(expected) {}
  void on_progress(engine::SimTime now, std::uint64_t events) override {
    sink_.on_progress(Progress{now, events, result_.completed, expected_});
  }

 private:
  ProgressSink& sink_;
  const stats::RunResult& result_;
  std::uint64_t expected_;
};

}  // namespace

std::uint64_t expected_calls(const workload::Scenario& scenario) {
  constexpr int kMaxDepth = 16;
  double total = 0;
  for (const workload::ClientSpec& client : scenario.clients) {
    const double per_iteration = calls_of(scenario, client.iteration, kMaxDepth);
    if (per_iteration < 0) return 0;
    total += per_iteration * static_cast<double>(client.iterations);
  }
  return static_cast<std::uint64_t>(std::llround(total));
}

stats::RunResult run(const workload::Scenario& scenario, const topology::Topology& topology,
                     const selectors::SelectorRegistry& registry, const RunOptions& options) {
  stats::RunResult result;
  result.scenario = scenario.name;
  result.topology = topology.name();
  result.selector = options.selector.value_or(scenario.kernel.selector);
  result.placement = options.placement.value_or(scenario.kernel.placement);
  result.seed = options.seed.value_or(scenario.seed);
  result.version = BINDERSIM_VERSION;
  result.scenario_hash = hex64(scenario.document_hash);
  result.topology_hash = hex64(topology.document_hash());
  result.overrides = workload::overrides_text(scenario.overrides);

  auto selector = workload::create_selector(registry, result.selector, scenario.kernel);
  result.selector_params = selector->non_default_params();
  auto placement = sched::make_placement(result.placement);

  engine::SimContext context(topology, result.seed);
  context.tracer = options.tracer;
  context.set_log_level(spdlog::level::from_str(options.log_level));
  selector->set_logger(context.binder_log);
  cost::CostModel cost(topology);
  sched::Scheduler scheduler(context, cost, *placement, scenario.kernel.sched);
  // The trace opens with the CPUs' starting state, before the driver starts any thread (the
  // shrinker's kswapd0 under memory pressure).
  if (options.tracer != nullptr) options.tracer->begin(scheduler);
  binder::KernelOptions kernel;
  kernel.inheritance = scenario.kernel.inheritance;
  kernel.alloc_lock = scenario.kernel.alloc_lock;
  kernel.install_pages_locked = scenario.kernel.install_pages_locked;
  kernel.memory_pressure = scenario.kernel.memory_pressure;
  binder::Driver driver(context, scheduler, cost, *selector, kernel);
  workload::WorkloadRunner runner(context, driver, scenario, result);

  std::optional<ProgressAdapter> progress;
  if (options.progress != nullptr) {
    progress.emplace(*options.progress, result, expected_calls(scenario));
    context.engine.set_progress(&*progress, kProgressEvents);
  }
  if (options.compact_every_events > 0) {
    context.engine.set_compaction(options.compact_every_events, options.compact_at_pending);
  }

  runner.start();
  try {
    context.engine.run(scenario.time_limit_ns);
  } catch (const engine::ClockStalled& stalled) {
    throw ConfigError(scenario.source() + ": the simulated clock stopped at " +
                      std::to_string(stalled.at()) + " ns: " + std::to_string(stalled.events()) +
                      " events in a row took no simulated time, so the run would never end; give "
                      "the steps that repeat (handlers, calls, loops) work that takes time, and "
                      "the topology's binder path costs values above 0");
  }
  if (options.tracer != nullptr) options.tracer->end(scheduler);
  // Tasks still running count up to the end, in the counters as in the busy times.
  scheduler.account_running_tasks();

  result.simulated_ns = context.engine.now();
  result.clients_finished = runner.finished();
  result.events = context.engine.events_dispatched();
  result.fingerprint = context.engine.fingerprint();
  result.counters = cost.counters();
  result.counters.migrations = scheduler.migrations();
  result.counters.context_switches = scheduler.context_switches();
  result.process_counters = cost.process_counters();
  result.process_counters.migrations = scheduler.process_migrations();
  result.process_counters.context_switches = scheduler.process_context_switches();
  result.scheduler = scheduler_stats(scheduler);
  result.selection = selector->counts();
  result.selection.nudges_applied = driver.counters().nudges_applied;
  result.allocator = driver.take_allocator_stats();
  return result;
}

}  // namespace bindersim::sim
