#include "bindersim/cost/cost_model.hpp"

#include <algorithm>

#include "bindersim/common/error.hpp"
#include "bindersim/topology/topology.hpp"

namespace bindersim::cost {

CostModel::CostModel(const topology::Topology& topology)
    : topology_(topology),
      num_cpus_(topology.num_cpus()),
      line_bytes_(topology.costs().line_bytes),
      cache_refs_per_ref_us_(topology.costs().cache_refs_per_ref_us),
      base_miss_ratio_(topology.costs().base_miss_ratio),
      clock_(static_cast<std::size_t>(topology.num_cpus()), 0) {
  for (int cpu = 0; cpu < num_cpus_; ++cpu) {
    private_bytes_.push_back(static_cast<double>(topology.private_cache_bytes(cpu)));
    shared_fetch_.push_back(topology.shared_fetch_ns_per_line(cpu));
  }
}

void CostModel::add_task(int tid, std::int64_t working_set_bytes, bool in_process) {
  const auto index = static_cast<std::size_t>(tid);
  BSIM_CHECK(index <= working_set_.size());
  if (index == working_set_.size()) {
    working_set_.push_back(0);
    in_process_.push_back(0);
    ws_lines_.push_back(0);
    last_cpu_.push_back(-1);
    stamp_.insert(stamp_.end(), static_cast<std::size_t>(num_cpus_), -1);
  }
  // A new task, or a new task in the slot of an exited one: nothing of it is warm anywhere.
  working_set_[index] = working_set_bytes;
  in_process_[index] = in_process ? 1 : 0;
  ws_lines_[index] = lines(working_set_bytes);
  last_cpu_[index] = -1;
  std::fill_n(stamp_.begin() + static_cast<std::ptrdiff_t>(index) * num_cpus_, num_cpus_, -1);
}

std::int64_t CostModel::lines(std::int64_t bytes) const {
  return (bytes + line_bytes_ - 1) / line_bytes_;
}

// The share of what `cpu`'s private caches held of a task (min(working set, cache)) still
// there, for the task's stamp on `cpu`: 0 if it never ran there.
inline double CostModel::resident_share(std::int64_t stamp, int cpu) const {
  if (stamp < 0) return 0.0;
  const double capacity = private_bytes_[static_cast<std::size_t>(cpu)];
  const auto evicted = static_cast<double>(clock_[static_cast<std::size_t>(cpu)] - stamp);
  return std::clamp(1.0 - evicted / capacity, 0.0, 1.0);
}

// A working set larger than the cache keeps at most the part that fits.
double CostModel::warmth(int tid, int cpu) const {
  const auto task = static_cast<std::size_t>(tid);
  const std::int64_t stamp =
      stamp_[task * static_cast<std::size_t>(num_cpus_) + static_cast<std::size_t>(cpu)];
  if (stamp < 0) return 0.0;
  const auto ws = static_cast<double>(working_set_[task]);
  if (ws <= 0) return 1.0;
  const double capacity = private_bytes_[static_cast<std::size_t>(cpu)];
  return std::min(1.0, capacity / ws) * resident_share(stamp, cpu);
}

SimTime CostModel::on_switch_in(int tid, int cpu) {
  const auto task = static_cast<std::size_t>(tid);
  const std::int64_t ws = working_set_[task];
  const int last = last_cpu_[task];
  last_cpu_[task] = cpu;
  std::int64_t* const stamps = &stamp_[task * static_cast<std::size_t>(num_cpus_)];
  double stall_ns = 0;
  std::int64_t cold_lines = 0;
  if (ws > 0) {
    // What is refilled is what the private caches can hold of the working set, min(ws,
    // cache): a larger set never keeps more warm, and the lines beyond are no switch-in cost.
    const auto bytes = static_cast<double>(ws);
    const double capacity = private_bytes_[static_cast<std::size_t>(cpu)];
    const std::int64_t refill_lines =
        bytes <= capacity ? ws_lines_[task] : lines(static_cast<std::int64_t>(capacity));
    cold_lines = round_half_away(static_cast<double>(refill_lines) *
                                 (1.0 - resident_share(stamps[cpu], cpu)));
    double per_line = shared_fetch_[static_cast<std::size_t>(cpu)];
    if (last >= 0 && last != cpu) {
      // The share of the refill the last CPU still holds: its resident part of the working
      // set against what is refilled here (the same share when both caches hold it whole).
      const double there_capacity = private_bytes_[static_cast<std::size_t>(last)];
      const double share = resident_share(stamps[last], last);
      const double warm_there =
          bytes <= capacity && bytes <= there_capacity
              ? share
              : std::min(1.0, std::min(bytes, there_capacity) * share / std::min(bytes, capacity));
      per_line =
          warm_there * topology_.transfer_ns_per_line(last, cpu) + (1.0 - warm_there) * per_line;
    }
    stall_ns = static_cast<double>(cold_lines) * per_line;
    counters_.cache_refs += static_cast<std::uint64_t>(cold_lines);
    counters_.cache_misses += static_cast<std::uint64_t>(cold_lines);
    if (in_process_[task] != 0) {
      process_.cache_refs += static_cast<std::uint64_t>(cold_lines);
      process_.cache_misses += static_cast<std::uint64_t>(cold_lines);
    }
  }
  std::int64_t& clock = clock_[static_cast<std::size_t>(cpu)];
  clock += cold_lines * line_bytes_;
  stamps[cpu] = clock;
  return static_cast<SimTime>(round_half_away(stall_ns));
}

stats::Counters CostModel::process_counters() const {
  stats::Counters out = process_;
  // The references of the steady work summed, then their misses, as on_execute() counts them
  // (truncated: its carried fractions keep the system-wide sums within one of the same).
  const double refs = static_cast<double>(process_work_ref_ns_) / 1000.0 * cache_refs_per_ref_us_;
  const auto whole_refs = static_cast<std::uint64_t>(refs);
  out.cache_refs += whole_refs;
  out.cache_misses +=
      static_cast<std::uint64_t>(static_cast<double>(whole_refs) * base_miss_ratio_);
  return out;
}

SimTime CostModel::transfer(int tid, int from_cpu, int to_cpu, std::int64_t bytes) {
  const std::int64_t n = lines(bytes);
  const auto misses = static_cast<std::uint64_t>(from_cpu != to_cpu ? n : 0);
  counters_.cache_refs += static_cast<std::uint64_t>(n);
  counters_.cache_misses += misses;
  if (in_process_[static_cast<std::size_t>(tid)] != 0) {
    process_.cache_refs += static_cast<std::uint64_t>(n);
    process_.cache_misses += misses;
  }
  return static_cast<SimTime>(
      round_half_away(static_cast<double>(n) * topology_.transfer_ns_per_line(from_cpu, to_cpu)));
}

}  // namespace bindersim::cost
