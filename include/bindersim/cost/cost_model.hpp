// Cache and execution cost: per-thread working-set warmth per CPU, the cost of moving data
// between CPUs at the topology's transfer cost, and simpleperf-style counters.
#pragma once

#include <cstdint>
#include <vector>

#include "bindersim/engine/time.hpp"
#include "bindersim/stats/result.hpp"

namespace bindersim::topology {
class Topology;
}

namespace bindersim::cost {

using engine::SimTime;

// Warmth model: each CPU has an "eviction clock" counting bytes brought into its private
// caches. A thread that last ran on CPU c when the clock read S still has
// max(0, 1 - (clock - S) / private_bytes(c)) of its working set there. When it is switched in,
// the cold lines are fetched from where they are: from the CPU it last ran on (at the
// transfer cost between the two, for the part still warm there) or from the shared cache.
class CostModel {
 public:
  explicit CostModel(const topology::Topology& topology);

  // Registers task `tid`: a new slot, or the reused slot of an exited task (reset).
  void add_task(int tid, std::int64_t working_set_bytes);

  // `tid` starts running on `cpu`: returns the refill stall in nanoseconds and counts the
  // references and misses it makes.
  SimTime on_switch_in(int tid, int cpu);
  // Fraction (0..1) of the working set of `tid` still warm on `cpu`.
  double warmth(int tid, int cpu) const;

  // `bytes` written on `from_cpu` are read on `to_cpu`: returns the stall in nanoseconds.
  SimTime transfer(int from_cpu, int to_cpu, std::int64_t bytes);

  // A CPU running at `freq_khz` executed for `ns` nanoseconds, of which `work_ref_ns` were
  // reference work (the rest stalls and overheads): counts cycles and the references/misses
  // of steady-state work.
  void on_execute(SimTime ns, std::int64_t work_ref_ns, std::int64_t freq_khz);

  const stats::Counters& counters() const { return counters_; }

 private:
  std::int64_t lines(std::int64_t bytes) const;

  const topology::Topology& topology_;
  int num_cpus_;
  std::vector<std::int64_t> working_set_;  // bytes per task
  std::vector<int> last_cpu_;              // per task, -1 before it ran
  std::vector<std::int64_t> stamp_;        // per task x cpu: clock after its last run; -1 never
  std::vector<std::int64_t> clock_;        // per cpu: bytes brought in so far
  stats::Counters counters_;
  double refs_fraction_ = 0;  // fractional references carried between calls
  double misses_fraction_ = 0;
};

}  // namespace bindersim::cost
