// Micro-benchmarks of the hot paths: the event queue (hold model), the selectors, histogram
// recording, and whole two-way calls through the model. Run: build/tests/bindersim_bench.
#include <benchmark/benchmark.h>

#include <vector>

#include "bindersim/engine/engine.hpp"
#include "bindersim/engine/event_queue.hpp"
#include "bindersim/engine/rng.hpp"
#include "bindersim/selectors/registry.hpp"
#include "bindersim/sim/simulation.hpp"
#include "bindersim/stats/histogram.hpp"
#include "bindersim/topology/topology.hpp"
#include "bindersim/workload/scenario.hpp"

namespace bindersim {
namespace {

const std::string kSourceDir = BINDERSIM_SOURCE_DIR;

// Hold model: the queue keeps `pending` events; each step pops the earliest and pushes one
// at a random later time, the classic priority-queue benchmark of discrete-event simulators.
// Sizes: 16, 128 (about what the simulator keeps pending: on average 132 in schd-dbg and 142
// in binder-throughput, at most 381 and 362) and 1,024.
void BM_EventQueueHold(benchmark::State& state) {
  const auto pending = static_cast<std::size_t>(state.range(0));
  engine::EventQueue queue;
  engine::Rng rng(1, 0);
  for (std::size_t i = 0; i < pending; ++i) {
    queue.push(static_cast<engine::SimTime>(rng.uniform_below(1'000'000)), 0, 0, 0, 0);
  }
  for (auto _ : state) {
    const engine::Event event = queue.pop();
    queue.push(event.time + static_cast<engine::SimTime>(rng.uniform_below(1'000'000)), 0, 0, 0, 0);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EventQueueHold)->Arg(16)->Arg(128)->Arg(1024);

// The engine's dispatch loop on the hold model: events/s of the whole loop with a handler that
// schedules its successor (what the simulator's throughput is bounded by).
class HoldHandler final : public engine::EventHandler {
 public:
  explicit HoldHandler(engine::Engine& engine) : engine_(engine), rng_(1, 1) {}
  void on_event(const engine::Event& event) override {
    engine_.schedule(event.time + 1 + static_cast<engine::SimTime>(rng_.uniform_below(1'000'000)),
                     target, 0, event.id);
  }
  std::uint16_t target = 0;

 private:
  engine::Engine& engine_;
  engine::Rng rng_;
};

void BM_EngineHold(benchmark::State& state) {
  const auto pending = static_cast<std::uint32_t>(state.range(0));
  for (auto _ : state) {
    state.PauseTiming();
    engine::Engine engine;
    HoldHandler handler(engine);
    handler.target = engine.add_handler(handler);
    for (std::uint32_t i = 0; i < pending; ++i) engine.schedule(i, handler.target, 0, i);
    state.ResumeTiming();
    engine.run(100'000'000);  // about 100 events per pending event
    state.SetItemsProcessed(state.items_processed() +
                            static_cast<std::int64_t>(engine.events_dispatched()));
  }
}
BENCHMARK(BM_EngineHold)->Arg(16)->Arg(128)->Arg(1024)->Unit(benchmark::kMillisecond);

// One selection over `n` idle threads whose last CPUs are spread over the SoC.
class FixedMachine final : public selectors::MachineView {
 public:
  explicit FixedMachine(const topology::Topology& topology) : topology_(topology) {}
  bool available_idle_cpu(int cpu) const override { return cpu % 2 == 0; }
  const topology::Topology& topology() const override { return topology_; }

 private:
  const topology::Topology& topology_;
};

void BM_Selector(benchmark::State& state, const char* name) {
  const auto topology = topology::Topology::load("sa8155p", kSourceDir + "/topologies");
  selectors::SelectorRegistry registry;
  selectors::register_builtin_selectors(registry);
  auto selector = registry.create(name);
  FixedMachine machine(topology);
  std::vector<selectors::IdleThread> waiting;
  for (int i = 0; i < state.range(0); ++i) waiting.push_back({i, (i * 3 + 1) % 7});
  selectors::SelectionRequest request;
  request.waiting = waiting;
  request.caller_cpu = 5;
  for (auto _ : state) benchmark::DoNotOptimize(selector->select(request, machine));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_Selector, fifo, "fifo")->Arg(1)->Arg(4)->Arg(16);
BENCHMARK_CAPTURE(BM_Selector, ctabs, "ctabs")->Arg(1)->Arg(4)->Arg(16);
BENCHMARK_CAPTURE(BM_Selector, ctabs_nudge, "ctabs-nudge")->Arg(1)->Arg(4)->Arg(16);

void BM_HistogramRecord(benchmark::State& state) {
  stats::Histogram histogram;
  engine::Rng rng(1, 2);
  std::vector<std::int64_t> values(4096);
  for (auto& v : values) v = static_cast<std::int64_t>(rng.uniform_below(10'000'000));
  std::size_t i = 0;
  for (auto _ : state) {
    histogram.record(values[i++ & 4095]);
  }
  benchmark::DoNotOptimize(histogram.count());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HistogramRecord);

// Whole two-way calls through every layer: schd-dbg scaled to 1,000 iterations (2,000 calls);
// items are calls.
void BM_SchdDbgCalls(benchmark::State& state) {
  selectors::SelectorRegistry registry;
  selectors::register_builtin_selectors(registry);
  auto scenario = workload::load_scenario(kSourceDir + "/scenarios/schd-dbg.json",
                                          kSourceDir + "/scenarios", registry);
  scenario.clients[0].iterations = 1000;
  const auto topology = topology::Topology::load(scenario.topology, kSourceDir + "/topologies");
  std::uint64_t calls = 0;
  std::uint64_t events = 0;
  for (auto _ : state) {
    const auto result = sim::run(scenario, topology, registry, {});
    calls += result.completed;
    events += result.events;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(calls));
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SchdDbgCalls)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace bindersim

BENCHMARK_MAIN();
