#include "bindersim/cost/cost_model.hpp"

#include <algorithm>
#include <cmath>

#include "bindersim/common/error.hpp"
#include "bindersim/topology/topology.hpp"

namespace bindersim::cost {

CostModel::CostModel(const topology::Topology& topology)
    : topology_(topology),
      num_cpus_(topology.num_cpus()),
      clock_(static_cast<std::size_t>(topology.num_cpus()), 0) {}

void CostModel::add_task(int tid, std::int64_t working_set_bytes) {
  const auto index = static_cast<std::size_t>(tid);
  BSIM_CHECK(index <= working_set_.size());
  if (index == working_set_.size()) {
    working_set_.push_back(0);
    last_cpu_.push_back(-1);
    stamp_.insert(stamp_.end(), static_cast<std::size_t>(num_cpus_), -1);
  }
  // A new task, or a new task in the slot of an exited one: nothing of it is warm anywhere.
  working_set_[index] = working_set_bytes;
  last_cpu_[index] = -1;
  std::fill_n(stamp_.begin() + static_cast<std::ptrdiff_t>(index) * num_cpus_, num_cpus_, -1);
}

std::int64_t CostModel::lines(std::int64_t bytes) const {
  const std::int64_t line = topology_.costs().line_bytes;
  return (bytes + line - 1) / line;
}

double CostModel::warmth(int tid, int cpu) const {
  const std::int64_t stamp = stamp_[static_cast<std::size_t>(tid * num_cpus_ + cpu)];
  if (stamp < 0) return 0.0;
  const auto capacity = static_cast<double>(topology_.private_cache_bytes(cpu));
  const auto ws = static_cast<double>(working_set_[static_cast<std::size_t>(tid)]);
  if (ws <= 0) return 1.0;
  // A working set larger than the cache keeps at most the part that fits.
  const double fits = std::min(1.0, capacity / ws);
  const auto evicted = static_cast<double>(clock_[static_cast<std::size_t>(cpu)] - stamp);
  return std::clamp(fits * (1.0 - evicted / capacity), 0.0, 1.0);
}

SimTime CostModel::on_switch_in(int tid, int cpu) {
  const std::int64_t ws = working_set_[static_cast<std::size_t>(tid)];
  const int last = last_cpu_[static_cast<std::size_t>(tid)];
  last_cpu_[static_cast<std::size_t>(tid)] = cpu;
  double stall_ns = 0;
  std::int64_t cold_lines = 0;
  if (ws > 0) {
    const double warm_here = warmth(tid, cpu);
    cold_lines =
        static_cast<std::int64_t>(std::llround(static_cast<double>(lines(ws)) * (1.0 - warm_here)));
    double per_line = topology_.shared_fetch_ns_per_line(cpu);
    if (last >= 0 && last != cpu) {
      const double warm_there = warmth(tid, last);
      per_line =
          warm_there * topology_.transfer_ns_per_line(last, cpu) + (1.0 - warm_there) * per_line;
    }
    stall_ns = static_cast<double>(cold_lines) * per_line;
    counters_.cache_refs += static_cast<std::uint64_t>(cold_lines);
    counters_.cache_misses += static_cast<std::uint64_t>(cold_lines);
  }
  std::int64_t& clock = clock_[static_cast<std::size_t>(cpu)];
  clock += cold_lines * topology_.costs().line_bytes;
  stamp_[static_cast<std::size_t>(tid * num_cpus_ + cpu)] = clock;
  return static_cast<SimTime>(std::llround(stall_ns));
}

SimTime CostModel::transfer(int from_cpu, int to_cpu, std::int64_t bytes) {
  const std::int64_t n = lines(bytes);
  counters_.cache_refs += static_cast<std::uint64_t>(n);
  if (from_cpu != to_cpu) counters_.cache_misses += static_cast<std::uint64_t>(n);
  return static_cast<SimTime>(
      std::llround(static_cast<double>(n) * topology_.transfer_ns_per_line(from_cpu, to_cpu)));
}

namespace {

// std::floor for 0 <= x < 2^63, without the library call that baseline x86-64 makes for it.
double floor_nonnegative(double x) { return static_cast<double>(static_cast<std::int64_t>(x)); }

}  // namespace

void CostModel::on_execute(SimTime ns, std::int64_t work_ref_ns, std::int64_t freq_khz) {
  if (ns <= 0) return;
  // cycles = ns x kHz / 10^6, exact: in 64 bits when the product fits (always, for spans
  // below about an hour), else in 128 bits. A 64-bit division by a constant is a multiply; a
  // 128-bit one is a library call.
  std::uint64_t product = 0;
  if (!__builtin_mul_overflow(static_cast<std::uint64_t>(ns), static_cast<std::uint64_t>(freq_khz),
                              &product)) {
    counters_.cpu_cycles += product / 1'000'000U;
  } else {
    const Uint128 cycles = static_cast<Uint128>(ns) * static_cast<Uint128>(freq_khz) / 1'000'000U;
    counters_.cpu_cycles += static_cast<std::uint64_t>(cycles);
  }
  const auto& costs = topology_.costs();
  refs_fraction_ += static_cast<double>(work_ref_ns) / 1000.0 * costs.cache_refs_per_ref_us;
  const double whole_refs = floor_nonnegative(refs_fraction_);
  refs_fraction_ -= whole_refs;
  counters_.cache_refs += static_cast<std::uint64_t>(whole_refs);
  misses_fraction_ += whole_refs * costs.base_miss_ratio;
  const double whole_misses = floor_nonnegative(misses_fraction_);
  misses_fraction_ -= whole_misses;
  counters_.cache_misses += static_cast<std::uint64_t>(whole_misses);
}

}  // namespace bindersim::cost
