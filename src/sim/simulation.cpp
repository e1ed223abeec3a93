#include "bindersim/sim/simulation.hpp"

#include <cmath>

#include "bindersim/binder/driver.hpp"
#include "bindersim/cost/cost_model.hpp"
#include "bindersim/engine/context.hpp"
#include "bindersim/sched/placement.hpp"
#include "bindersim/sched/scheduler.hpp"
#include "bindersim/selectors/registry.hpp"
#include "bindersim/topology/topology.hpp"
#include "bindersim/workload/runner.hpp"

namespace bindersim::sim {
namespace {

std::string governor_name(sched::Governor governor) {
  switch (governor) {
    case sched::Governor::kPerformance:
      return "performance";
    case sched::Governor::kPowersave:
      return "powersave";
    case sched::Governor::kSchedutil:
      return "schedutil";
  }
  return "performance";
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
  out.balance_pulls = scheduler.balance_pulls();
  return out;
}

}  // namespace

stats::RunResult run(const workload::Scenario& scenario, const topology::Topology& topology,
                     const selectors::SelectorRegistry& registry, const RunOptions& options) {
  stats::RunResult result;
  result.scenario = scenario.name;
  result.topology = topology.name();
  result.selector = options.selector.value_or(scenario.kernel.selector);
  result.placement = options.placement.value_or(scenario.kernel.placement);
  result.seed = options.seed.value_or(scenario.seed);
  result.version = BINDERSIM_VERSION;

  auto selector = registry.create(result.selector);
  auto placement = sched::make_placement(result.placement);

  engine::SimContext context(topology, result.seed);
  context.set_log_level(spdlog::level::from_str(options.log_level));
  selector->set_logger(context.binder_log);
  cost::CostModel cost(topology);
  sched::Scheduler scheduler(context, cost, *placement, scenario.kernel.sched);
  binder::KernelOptions kernel;
  kernel.inheritance = scenario.kernel.inheritance;
  binder::Driver driver(context, scheduler, cost, *selector, kernel);
  workload::WorkloadRunner runner(context, driver, scenario, result);

  runner.start();
  context.engine.run(scenario.time_limit_ns);

  result.simulated_ns = context.engine.now();
  result.clients_finished = runner.finished();
  result.events = context.engine.events_dispatched();
  result.fingerprint = context.engine.fingerprint();
  result.counters = cost.counters();
  result.counters.migrations = scheduler.migrations();
  result.counters.context_switches = scheduler.context_switches();
  result.scheduler = scheduler_stats(scheduler);
  result.selection = selector->counts();
  result.selection.nudges_applied = driver.counters().nudges_applied;
  return result;
}

}  // namespace bindersim::sim
