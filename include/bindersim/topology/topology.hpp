// The SoC model: CPUs with their scheduler cluster, capacity and idle states, the cache
// hierarchy as a Boost Graph, the CPU x CPU data-transfer cost derived from it, and the
// platform's kernel-path costs. Loaded strictly from topologies/<name>.json.
#pragma once

#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bindersim/common/error.hpp"
#include "bindersim/engine/time.hpp"

namespace bindersim {
class JsonNode;
}

namespace bindersim::topology {

using engine::SimTime;

// One idle state of a CPU (device tree idle-states). WFI is state 0.
struct IdleState {
  std::string name;
  SimTime entry_latency_ns = 0;
  SimTime exit_latency_ns = 0;
  SimTime min_residency_ns = 0;  // entered only when the expected idle time is at least this
};

// One operating performance point of a cluster: frequency and the power one busy CPU draws
// there (energy-model units: only ratios matter to placement decisions).
struct Opp {
  std::int64_t freq_khz = 0;
  double power = 0;
};

// A cluster's frequency domain: its operating points (ascending, the last at the cluster's
// maximum frequency) and how long a frequency change takes to take effect.
struct FrequencyDomain {
  std::vector<Opp> opps;
  SimTime transition_latency_ns = 0;
};

struct Cpu {
  int id = 0;
  int cluster = 0;           // scheduler-visible cluster id (device tree cpu-map)
  std::string cluster_name;  // "silver", "gold", "prime"
  std::string uarch;         // "cortex-a55", ...
  std::int64_t max_freq_khz = 0;
  int capacity_dmips_mhz = 0;          // device tree capacity-dmips-mhz
  int capacity = 0;                    // dmips x fmax normalised so that the largest CPU is 1024
  std::vector<IdleState> idle_states;  // shallowest first; [0] is WFI
};

// Kind of vertex in the cache graph.
enum class NodeKind { kCpu, kCache, kMemory };

struct GraphNode {
  NodeKind kind = NodeKind::kCache;
  std::string name;             // "cpu3", "l2.cpu3", "l3", "llcc", "dram"
  int level = 0;                // 0 for CPUs, 1.. for caches, highest cache level + 1 for memory
  int cpu = -1;                 // the CPU of a kCpu vertex or the owner of a private cache; -1
                                // for shared caches and memory
  std::int64_t size_bytes = 0;  // cache size (0 for CPUs and memory)
  double latency_ns = 0;        // load-to-use latency of a hit here, as seen from its CPUs
  std::vector<int> cpus;        // CPUs whose path to memory passes through here, ascending
};

// Directed edge from a CPU towards memory; weight = extra nanoseconds per line to reach `to`
// (its latency minus that of the edge's source; a CPU vertex has latency 0), so the shortest
// path from a CPU to a vertex is that vertex's latency. Every vertex but memory has exactly one
// out-edge: the next level outward.
struct GraphEdge {
  double weight_ns = 0;
};

using CacheGraph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, GraphNode, GraphEdge>;

// Platform kernel-path costs. "ref" costs are CPU work in nanoseconds on a capacity-1024 CPU
// at its maximum frequency (they scale with the CPU that runs them); the others are fixed
// wall-clock latencies.
struct PlatformCosts {
  SimTime context_switch_ref_ns = 0;  // switching from one task to another (both halves)
  SimTime wakeup_ref_ns = 0;          // try_to_wake_up work done by the waker
  SimTime ipi_latency_ns = 0;         // from sending a reschedule IPI to the target's handler
  SimTime binder_send_ref_ns = 0;     // BC_TRANSACTION / BC_REPLY path up to the wakeup
  SimTime binder_receive_ref_ns = 0;  // return from the read with work (BR_TRANSACTION/REPLY)
  SimTime binder_free_ref_ns = 0;     // BC_FREE_BUFFER
  SimTime thread_spawn_ns = 0;        // userspace creation of a looper after BR_SPAWN_LOOPER
  // The binder allocator (optional in the file, 0 when left out: the paths still take and
  // release the allocator lock, with no work inside it). The locked parts are the share of
  // binder_send_ref_ns / binder_free_ref_ns spent holding the allocator lock.
  SimTime binder_alloc_locked_ref_ns = 0;        // best-fit search, split, rbtree insert
  SimTime binder_free_lookup_locked_ref_ns = 0;  // the buffer's lookup before the free
  SimTime binder_free_locked_ref_ns = 0;         // merge with neighbours, pages to the LRU
  SimTime page_install_ref_ns = 0;               // per page: zeroed page allocation and PTE insert
  SimTime page_reclaim_ref_ns = 0;               // per page: the shrinker's unmap and free
  int line_bytes = 64;                           // cache line size (required in a topology file)
  double cache_refs_per_ref_us = 0;  // cache references per microsecond of reference work
  double base_miss_ratio = 0;        // misses per reference for warm, steady-state work
};

class Topology {
 public:
  // Loads `name_or_path`: a path when it names an existing file, ends in ".json" or contains a
  // '/' (errors then name the path as given); otherwise a name looked up as
  // <topologies_dir>/<name>.json, and an unknown name lists the available ones. Throws
  // ConfigError on any bad input.
  // `edit`, when given, changes the parsed document before it is read (a scenario's overrides of
  // topology values): errors then name the file "(with --set)", and document_hash() stays the
  // file's.
  static Topology load(const std::string& name_or_path, const std::filesystem::path& topologies_dir,
                       const std::function<void(nlohmann::json&)>& edit = nullptr);
  // Builds from an already parsed document root (for tests and embedded topologies).
  // `document_hash`, when given, is recorded in place of the root's own: that of the file a
  // document edited after reading came from.
  static Topology from_json(const JsonNode& root,
                            std::optional<std::uint64_t> document_hash = std::nullopt);
  // Names of the topologies in `topologies_dir` (its *.json files without the extension),
  // sorted; empty when the directory does not exist.
  static std::vector<std::string> available(const std::filesystem::path& topologies_dir);

  const std::string& name() const { return name_; }
  const std::string& description() const { return description_; }
  // bindersim::document_hash() of the document it was built from.
  std::uint64_t document_hash() const { return document_hash_; }
  // The accessors below check their index against these counts, kept as plain ints: the
  // scheduler asks them on every event, and a vector's size() divides by the element size.
  int num_cpus() const { return num_cpus_; }
  int num_clusters() const { return num_clusters_; }
  const Cpu& cpu(int id) const {
    BSIM_CHECK(id >= 0 && id < num_cpus_);
    return cpus_[static_cast<std::size_t>(id)];
  }
  const std::vector<Cpu>& cpus() const { return cpus_; }
  int cluster_of(int cpu_id) const { return cpu(cpu_id).cluster; }
  int capacity(int cpu_id) const { return cpu(cpu_id).capacity; }
  int max_capacity() const { return 1024; }
  // CPUs of a cluster, ascending.
  const std::vector<int>& cluster_cpus(int cluster) const {
    BSIM_CHECK(cluster >= 0 && cluster < num_clusters_);
    return cluster_cpus_[static_cast<std::size_t>(cluster)];
  }

  // Nanoseconds per cache line for CPU `to` to read a line last written on CPU `from`: the
  // latency of the nearest level both reach (L1 when from == to). Computed once at load.
  double transfer_ns_per_line(int from, int to) const {
    return transfer_ns_[static_cast<std::size_t>(from * num_cpus() + to)];
  }
  // Nanoseconds per line for `cpu` to read a line that is in no private cache: the first
  // shared level (the last-level cache).
  double shared_fetch_ns_per_line(int cpu) const;
  // The vertex shared_fetch_ns_per_line(cpu) reports: the first one on the CPU's path that
  // another CPU also reaches (memory when no cache is shared).
  std::size_t first_shared_vertex(int cpu) const {
    return static_cast<std::size_t>(llc_of_cpu_.at(static_cast<std::size_t>(cpu)));
  }
  // Like the kernel's cpus_share_cache(): both CPUs reach one shared cache (the LLC).
  bool shares_cache(int a, int b) const {
    BSIM_CHECK(a >= 0 && a < num_cpus() && b >= 0 && b < num_cpus());
    return shares_cache_[static_cast<std::size_t>(a * num_cpus() + b)] != 0;
  }
  // Private cache bytes of `cpu` (largest private level, e.g. its L2): what a working set
  // can keep warm there.
  std::int64_t private_cache_bytes(int cpu) const;

  // The cache graph. Vertices 0..num_cpus()-1 are the CPUs in id order, then each CPU's
  // private caches (innermost first), then the shared caches in file order, then memory.
  const CacheGraph& graph() const { return graph_; }
  std::size_t cpu_vertex(int cpu_id) const { return static_cast<std::size_t>(cpu(cpu_id).id); }
  std::size_t memory_vertex() const { return boost::num_vertices(graph_) - 1; }
  // The vertex whose latency transfer_ns_per_line(from, to) reports: the first vertex on the
  // path of `to` that `from` also reaches.
  std::size_t nearest_common_vertex(int from, int to) const {
    return common_vertex_[static_cast<std::size_t>(from * num_cpus() + to)];
  }
  const PlatformCosts& costs() const { return costs_; }
  // Frequency domain of a cluster; its opps are empty when the topology has no energy model.
  const FrequencyDomain& frequency_domain(int cluster) const {
    BSIM_CHECK(cluster >= 0 && cluster < num_clusters_);
    return domains_[static_cast<std::size_t>(cluster)];
  }
  // True when every cluster lists operating points (the kernel's energy model exists).
  bool has_energy_model() const { return has_energy_model_; }

 private:
  void compute_transfer_costs();

  std::string name_;
  std::string description_;
  std::uint64_t document_hash_ = 0;
  std::vector<Cpu> cpus_;
  int num_cpus_ = 0;  // cpus_.size()
  int num_clusters_ = 0;
  std::vector<std::vector<int>> cluster_cpus_;
  CacheGraph graph_;
  std::vector<double> transfer_ns_;         // num_cpus x num_cpus, row = from
  std::vector<std::size_t> common_vertex_;  // num_cpus x num_cpus, row = from
  std::vector<std::uint8_t> shares_cache_;  // num_cpus x num_cpus: common vertex is a cache
  std::vector<double> shared_fetch_ns_;     // per CPU
  std::vector<int> llc_of_cpu_;             // graph vertex of the first shared cache per CPU
  std::vector<std::int64_t> private_bytes_;
  PlatformCosts costs_;
  std::vector<FrequencyDomain> domains_;  // per cluster
  bool has_energy_model_ = false;
};

// Human-readable summary: clusters, CPUs, capacities, idle states, caches and the CPU x CPU
// transfer-cost matrix.
void print_topology(const Topology& topology, std::ostream& out);
// Graphviz export of the cache graph.
void write_dot(const Topology& topology, std::ostream& out);

}  // namespace bindersim::topology
