// The outcome of one simulation run: what the result JSON and the console tables report.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bindersim/common/error.hpp"
#include "bindersim/stats/histogram.hpp"

namespace bindersim::stats {

// Scheduling class of the caller of a two-way call.
enum class SchedClass : std::uint8_t { kFifo = 0, kOther = 1 };
inline constexpr std::size_t kNumSchedClasses = 2;
// Relation between the CPU the client called from and the CPU where the server thread
// started handling the call.
enum class Tier : std::uint8_t { kSameCore = 0, kSameCluster = 1, kCrossCluster = 2 };
inline constexpr std::size_t kNumTiers = 3;
// Every class and every tier, in enum order: the order tables and documents list them in.
inline constexpr std::array<SchedClass, kNumSchedClasses> kAllSchedClasses = {SchedClass::kFifo,
                                                                              SchedClass::kOther};
inline constexpr std::array<Tier, kNumTiers> kAllTiers = {Tier::kSameCore, Tier::kSameCluster,
                                                          Tier::kCrossCluster};

std::string_view sched_class_name(SchedClass c);  // "sched_fifo", "sched_other"
std::string_view tier_name(Tier t);               // "same_core", "same_cluster", "cross_cluster"
// Labels as the published schd-dbg table writes them: "SCHED_FIFO", "same core", ...
std::string_view sched_class_label(SchedClass c);
std::string_view tier_label(Tier t);

// Hardware-style counters over the whole run, as simpleperf stat counts them.
struct Counters {
  std::uint64_t cpu_cycles = 0;
  std::uint64_t cache_refs = 0;
  std::uint64_t cache_misses = 0;
  std::uint64_t migrations = 0;
  std::uint64_t context_switches = 0;
};

// How selections went, by the relation between the chosen thread's last CPU and the
// caller's CPU, and what happened to wake_cpu nudges.
struct SelectionCounts {
  std::uint64_t same_cpu = 0;
  std::uint64_t same_cluster = 0;
  std::uint64_t other = 0;            // another cluster, or a thread that never ran
  std::uint64_t none_idle = 0;        // no idle thread: the work went to proc->todo
  std::uint64_t nudges_applied = 0;   // preferred CPU written to wake_cpu on a sync wakeup
  std::uint64_t nudges_declined = 0;  // cluster-match win while the caller's CPU was busy
};

// Where the round trip of a two-way call went (nanoseconds); BreakdownSums adds them up over the
// calls of a tier. Per call: kernel = binder send/receive/reply paths and context switches on both
// sides; wakeup_ipi = waiting for a reschedule IPI; idle_exit = waiting for a CPU to leave its idle
// state; runqueue_wait = woken but waiting for the CPU behind other tasks; lock_wait = waiting
// for binder's locks (the allocator's), spinning or asleep; cache_refill =
// working-set refill and payload transfer stalls; service = the server's handler work;
// other = the rest of the round trip (latency minus the parts above).
template <typename T>
struct BasicBreakdown {
  T kernel_ns = 0;
  T wakeup_ipi_ns = 0;
  T idle_exit_ns = 0;
  T runqueue_wait_ns = 0;
  T lock_wait_ns = 0;
  T cache_refill_ns = 0;
  T service_ns = 0;
  T other_ns = 0;

  // Every part but other: what the sides were charged for.
  T measured() const {
    return kernel_ns + wakeup_ipi_ns + idle_exit_ns + runqueue_wait_ns + lock_wait_ns +
           cache_refill_ns + service_ns;
  }

  template <typename U>
  BasicBreakdown& operator+=(const BasicBreakdown<U>& b) {
    kernel_ns += b.kernel_ns;
    wakeup_ipi_ns += b.wakeup_ipi_ns;
    idle_exit_ns += b.idle_exit_ns;
    runqueue_wait_ns += b.runqueue_wait_ns;
    lock_wait_ns += b.lock_wait_ns;
    cache_refill_ns += b.cache_refill_ns;
    service_ns += b.service_ns;
    other_ns += b.other_ns;
    return *this;
  }
  bool operator==(const BasicBreakdown&) const = default;
};
using Breakdown = BasicBreakdown<std::int64_t>;
// Sums of breakdowns (a tier's calls, runs pooled): 128 bits, as a tier of thousands of calls
// of up to 10^6 s each, or many runs pooled, can pass 2^63 ns.
using BreakdownSums = BasicBreakdown<Int128>;

// The names SchedulerStats::governor takes (the scenario's kernel.cpufreq_governor values), in
// the order of sched::Governor.
inline constexpr std::array<std::string_view, 3> kGovernorNames{"performance", "powersave",
                                                                "schedutil"};

// What the scheduler did over the run: the governor and each cluster's mean frequency, each
// CPU's busy time, frequency changes and load-balance pulls.
struct SchedulerStats {
  struct Cluster {
    std::string name;
    std::int64_t mean_freq_khz = 0;  // time-weighted over the run
  };
  std::string governor = "performance";  // one of kGovernorNames
  std::vector<Cluster> clusters;
  std::vector<std::int64_t> cpu_busy_ns;  // per CPU: time running tasks (switches included)
  std::uint64_t frequency_changes = 0;
  std::uint64_t newidle_pulls = 0;      // fair tasks pulled by CPUs going idle
  std::uint64_t rt_pulls = 0;           // RT tasks pulled by CPUs lowering their priority
  std::uint64_t rt_pushes = 0;          // RT tasks pushed by CPUs with RT tasks waiting
  std::uint64_t balance_pulls = 0;      // periodic balance and NOHZ idle-balance kicks
  std::uint64_t misfit_migrations = 0;  // running tasks moved by active balance (misfit)
};

// A class of kernel locks (every process's allocator lock, say) over a run.
struct LockStats {
  std::uint64_t acquisitions = 0;
  std::uint64_t contended = 0;         // acquisitions that had to wait
  std::uint64_t trylock_failures = 0;  // trylocks that found the lock taken
  std::uint64_t sleeps = 0;            // waits that went to sleep (mutex)
  std::uint64_t handoffs = 0;          // unlocks that handed the lock to a starved waiter
  Histogram wait_ns;                   // per contended acquisition: from the attempt to the grant
  Histogram hold_ns;                   // per acquisition: from the grant to the unlock
  std::int64_t spin_ns = 0;            // CPU time waiters spent spinning
  // Priority inversion: a waiter of higher priority (lower prio value) than the owner waits
  // while the owner is runnable but not running. Episodes and their total duration.
  std::uint64_t inversions = 0;
  std::int64_t inversion_ns = 0;
  // Lock-holder preemption: any waiter waits while the owner is runnable but not running.
  std::uint64_t owner_preempted = 0;
  std::int64_t owner_preempted_ns = 0;
  double contended_share() const;  // contended / acquisitions; 0 without acquisitions
};

// The binder allocators of every process, over a run.
struct AllocatorStats {
  std::string lock = "mutex";          // "mutex" or "spinlock"
  bool pages_installed_locked = true;  // page installation inside the allocator lock
  std::uint64_t allocations = 0;
  std::uint64_t failed_no_space = 0;     // -ENOSPC: no free buffer large enough
  std::uint64_t failed_async_space = 0;  // -ENOSPC: the async budget is spent
  std::uint64_t pages_installed = 0;
  std::uint64_t pages_reclaimed = 0;  // by the shrinker
  std::uint64_t shrinker_skips = 0;   // shrinker trylocks that failed
  LockStats alloc_lock;               // alloc->mutex or alloc->lock
  LockStats page_lock;                // the page-installation mutex (spinlock variant)
};

struct RunResult {
  std::string scenario;
  std::string topology;
  std::string selector;
  // The parameters in which the selector differed from its defaults
  // (Selector::non_default_params()): compact JSON text, keys sorted; "" with its defaults.
  std::string selector_params;
  std::string placement;
  std::uint64_t seed = 0;

  std::uint64_t completed = 0;  // completed two-way calls
  std::int64_t simulated_ns = 0;
  double per_second() const;  // completed calls per simulated second

  Histogram latency;  // round trip of every two-way call, nanoseconds
  std::array<std::array<Histogram, kNumTiers>, kNumSchedClasses> tiers;

  Counters counters;          // every CPU and task (simpleperf stat -a)
  Counters process_counters;  // the threads of the scenario's processes (simpleperf stat CMD)
  SelectionCounts selection;
  SchedulerStats scheduler;
  AllocatorStats allocator;
  std::uint64_t failed_calls = 0;  // two-way and oneway sends that failed (BR_FAILED_REPLY)

  std::string version;
  // What the run was made from: document_hash() of the scenario as read (before overrides) and
  // of the topology, as 16 lowercase hex digits, and the overrides applied to the scenario as
  // compact JSON, an array of [path, value] pairs in the order applied ("[]" for none). Empty
  // when not known (read from a result written before results recorded them); the result
  // document then has no such key.
  std::string scenario_hash;
  std::string topology_hash;
  std::string overrides;
  std::uint64_t fingerprint = 0;
  std::uint64_t events = 0;  // events dispatched (reported on the console, not in the JSON)
  // Every client did all its iterations (false: the time limit, or work that can never run,
  // stopped the run first). Reported on the console.
  bool clients_finished = false;

  // Summed breakdown of the calls of each tier (divide by the tier's count for the mean).
  std::array<std::array<BreakdownSums, kNumTiers>, kNumSchedClasses> breakdown{};

  const BreakdownSums& tier_breakdown(SchedClass c, Tier t) const {
    return breakdown[static_cast<std::size_t>(c)][static_cast<std::size_t>(t)];
  }
  BreakdownSums& tier_breakdown(SchedClass c, Tier t) {
    return breakdown[static_cast<std::size_t>(c)][static_cast<std::size_t>(t)];
  }

  const Histogram& tier(SchedClass c, Tier t) const {
    return tiers[static_cast<std::size_t>(c)][static_cast<std::size_t>(t)];
  }
  Histogram& tier(SchedClass c, Tier t) {
    return tiers[static_cast<std::size_t>(c)][static_cast<std::size_t>(t)];
  }
};

}  // namespace bindersim::stats
