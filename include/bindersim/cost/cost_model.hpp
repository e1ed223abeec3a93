// Cache and execution cost: per-thread working-set warmth per CPU, the cost of moving data
// between CPUs at the topology's transfer cost, and simpleperf-style counters.
#pragma once

#include <cstdint>
#include <vector>

#include "bindersim/common/error.hpp"
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
  // `in_process`: the task is a thread of one of the scenario's processes; its events are also
  // counted in process_counters().
  void add_task(int tid, std::int64_t working_set_bytes, bool in_process);

  // `tid` starts running on `cpu`: returns the refill stall in nanoseconds and counts the
  // references and misses it makes.
  SimTime on_switch_in(int tid, int cpu);
  // Fraction (0..1) of the working set of `tid` still warm on `cpu`.
  double warmth(int tid, int cpu) const;

  // `bytes` written on `from_cpu` are read by `tid` on `to_cpu`: returns the stall in
  // nanoseconds.
  SimTime transfer(int tid, int from_cpu, int to_cpu, std::int64_t bytes);

  // A CPU running at `freq_khz` executed for `ns` nanoseconds, of which `work_ref_ns` were
  // reference work (the rest stalls and overheads): counts cycles and the references/misses
  // of steady-state work, also in process_counters() when the running task is `in_process`.
  // Called for every accounted segment: defined inline below so that the scheduler's call
  // compiles to straight-line code.
  void on_execute(SimTime ns, std::int64_t work_ref_ns, std::int64_t freq_khz, bool in_process);

  // Cycles, references and misses of every CPU (simpleperf stat -a), and of the threads of the
  // scenario's processes only (simpleperf stat of a command: it and its children).
  const stats::Counters& counters() const { return counters_; }
  stats::Counters process_counters() const;

 private:
  std::int64_t lines(std::int64_t bytes) const;
  double resident_share(std::int64_t stamp, int cpu) const;

  const topology::Topology& topology_;
  int num_cpus_;
  // Copies of topology figures read on every switch-in, kept here for speed (plain loads
  // instead of out-of-line, bounds-checked accessors).
  std::int64_t line_bytes_;
  double cache_refs_per_ref_us_;
  double base_miss_ratio_;
  std::vector<double> private_bytes_;      // per cpu, Topology::private_cache_bytes as a double
  std::vector<double> shared_fetch_;       // per cpu, Topology::shared_fetch_ns_per_line
  std::vector<std::int64_t> working_set_;  // bytes per task
  std::vector<std::int64_t> ws_lines_;     // per task: lines(working set)
  std::vector<int> last_cpu_;              // per task, -1 before it ran
  std::vector<std::int64_t> stamp_;        // per task x cpu: clock after its last run; -1 never
  std::vector<std::int64_t> clock_;        // per cpu: bytes brought in so far
  std::vector<char> in_process_;           // per task
  stats::Counters counters_;
  double refs_fraction_ = 0;  // fractional references carried between calls
  double misses_fraction_ = 0;
  // The process threads' cycles and refill and transfer references and misses; their steady
  // work is summed and turned into references and misses when asked (process_counters()).
  stats::Counters process_;
  std::int64_t process_work_ref_ns_ = 0;
};

// llround(x) for finite |x| < 2^63 without the library call: x - trunc(x) is exact in
// binary floating point, so comparing it with 0.5 rounds halves away from zero as llround does.
inline std::int64_t round_half_away(double x) {
  const double magnitude = x < 0 ? -x : x;
  const auto whole = static_cast<std::int64_t>(magnitude);
  const std::int64_t rounded = whole + (magnitude - static_cast<double>(whole) >= 0.5 ? 1 : 0);
  return x < 0 ? -rounded : rounded;
}

inline void CostModel::on_execute(SimTime ns, std::int64_t work_ref_ns, std::int64_t freq_khz,
                                  bool in_process) {
  if (ns <= 0) return;
  // cycles = ns x kHz / 10^6, exact: in 64 bits when the product fits (always, for spans
  // below about an hour), else in 128 bits. A 64-bit division by a constant is a multiply; a
  // 128-bit one is a library call.
  std::uint64_t cycles = 0;
  std::uint64_t product = 0;
  if (!__builtin_mul_overflow(static_cast<std::uint64_t>(ns), static_cast<std::uint64_t>(freq_khz),
                              &product)) {
    cycles = product / 1'000'000U;
  } else {
    cycles = static_cast<std::uint64_t>(static_cast<Uint128>(ns) * static_cast<Uint128>(freq_khz) /
                                        1'000'000U);
  }
  counters_.cpu_cycles += cycles;
  // floor(x) for 0 <= x < 2^63 is the truncation, without the library call that baseline
  // x86-64 makes for std::floor. The whole parts are counted from their integer form (the
  // same value: a double of 2^53 or more is an integer already).
  refs_fraction_ += static_cast<double>(work_ref_ns) / 1000.0 * cache_refs_per_ref_us_;
  const auto refs = static_cast<std::int64_t>(refs_fraction_);
  const auto whole_refs = static_cast<double>(refs);
  refs_fraction_ -= whole_refs;
  counters_.cache_refs += static_cast<std::uint64_t>(refs);
  misses_fraction_ += whole_refs * base_miss_ratio_;
  const auto misses = static_cast<std::int64_t>(misses_fraction_);
  misses_fraction_ -= static_cast<double>(misses);
  counters_.cache_misses += static_cast<std::uint64_t>(misses);
  if (in_process) {
    process_.cpu_cycles += cycles;
    process_work_ref_ns_ += work_ref_ns;
  }
}

}  // namespace bindersim::cost
