#include "bindersim/topology/topology.hpp"

#include <algorithm>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/property_map/property_map.hpp>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <optional>
#include <sstream>
#include <string_view>
#include <system_error>

#include "bindersim/common/data_file.hpp"
#include "bindersim/common/error.hpp"
#include "bindersim/common/hash.hpp"
#include "bindersim/common/json_reader.hpp"

namespace bindersim::topology {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kSchema = "bindersim.topology/1";
constexpr std::string_view kWfi = "wfi";
constexpr std::string_view kMemoryName = "dram";
// Bounds that keep every derived quantity far from overflow; real SoCs are orders of magnitude
// below them.
// The scheduler keeps CPU sets (affinities, cpusets) as 64-bit masks: CPU ids are 0..63.
constexpr std::int64_t kMaxCpus = 64;
constexpr std::int64_t kMaxCacheLevel = 16;
constexpr std::int64_t kMaxFreqKhz = 100'000'000;  // 100 GHz
// The lowest operating point of a cluster is at least this fraction of its highest (real SoCs
// span about 1:10); it keeps a CPU's speed at the lowest point above zero.
constexpr std::int64_t kMaxFrequencyRange = 100;
constexpr std::int64_t kMaxDmipsMhz = 1 << 20;  // device tree values are around 1024
constexpr std::int64_t kMaxCacheKib = 1 << 30;  // 1 TiB
// 1 ms per line: a refill of the largest working set (2^32 lines) through every level then
// stays within days of simulated time, far from overflowing the clock.
constexpr double kMaxLatencyNs = 1e6;
constexpr double kMaxIdleUs = 1e9;                      // 1000 s
constexpr std::int64_t kMaxCostNs = 1'000'000'000'000;  // 1000 s
constexpr int kCapacityScale = 1024;
constexpr double kMaxPower = 1e9;

// A private cache level of a cluster, instantiated once per CPU of the cluster.
struct PrivateCacheSpec {
  int level = 0;
  std::int64_t size_bytes = 0;
  double latency_ns = 0;
  JsonNode latency_node;
};

struct ClusterSpec {
  std::string name;
  std::string uarch;
  std::vector<int> cpus;  // as listed
  std::int64_t max_freq_khz = 0;
  int capacity_dmips_mhz = 0;
  std::vector<PrivateCacheSpec> private_caches;  // level 1 first
  std::vector<IdleState> idle_states;
  FrequencyDomain domain;  // opps empty when the cluster gives none
};

struct SharedCacheSpec {
  std::string name;
  int level = 0;
  std::vector<int> cpus;  // as listed
  std::vector<JsonNode> cpu_nodes;
  JsonNode level_node;
  JsonNode cpus_node;
  std::int64_t size_bytes = 0;
  double latency_ns = 0;
  JsonNode latency_node;
};

std::string format_number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

std::string quote(std::string_view text) { return quote_text(text); }

// Opens `node` as an object whose keys are exactly `keys`. An unknown key is reported (with the
// closest valid name) before any missing or malformed one, so a misspelled required key is
// named as such rather than as missing.
ObjectReader open_object(const JsonNode& node, std::initializer_list<std::string_view> keys) {
  ObjectReader reader(node);
  for (const std::string_view key : keys) static_cast<void>(reader.optional(key));
  reader.finish();
  return reader;
}

std::string read_name(const JsonNode& node) { return node.as_name(); }

// Every object that carries numbers says where they come from.
void read_source(ObjectReader& reader) { check_source(reader.required("source")); }

double positive_number(const JsonNode& node, double max) {
  const double value = node.as_number();
  if (!(value > 0)) node.fail_expected("a positive number");
  if (!(value <= max)) node.fail_expected("a number no larger than " + format_number(max));
  return value;
}

double non_negative_number(const JsonNode& node, double max) {
  const double value = node.as_number();
  if (!(value >= 0)) node.fail_expected("a number >= 0");
  if (!(value <= max)) node.fail_expected("a number no larger than " + format_number(max));
  return value;
}

std::vector<JsonNode> non_empty_items(const JsonNode& node) {
  std::vector<JsonNode> items = node.items();
  if (items.empty()) node.fail("expected a non-empty array, got an empty one");
  return items;
}

SimTime us_to_ns(double microseconds) {
  return static_cast<SimTime>(std::llround(microseconds * 1000.0));
}

// A positive duration in microseconds, in nanoseconds: one that rounds to 0 ns is refused, as
// it would be 0 in the model.
SimTime positive_us_to_ns(const JsonNode& node, double max) {
  const SimTime ns = us_to_ns(positive_number(node, max));
  if (ns == 0) node.fail_expected("a positive number of at least 0.0005 (0.5 ns rounds to 1 ns)");
  return ns;
}

IdleState read_idle_state(const JsonNode& node) {
  ObjectReader reader = open_object(
      node, {"name", "entry_latency_us", "exit_latency_us", "min_residency_us", "source"});
  IdleState state;
  state.name = read_name(reader.required("name"));
  state.entry_latency_ns =
      us_to_ns(non_negative_number(reader.required("entry_latency_us"), kMaxIdleUs));
  state.exit_latency_ns = positive_us_to_ns(reader.required("exit_latency_us"), kMaxIdleUs);
  state.min_residency_ns = positive_us_to_ns(reader.required("min_residency_us"), kMaxIdleUs);
  read_source(reader);
  return state;
}

// Idle states go from shallow to deep: WFI first, then exit latency and minimum residency
// never decrease.
std::vector<IdleState> read_idle_states(const JsonNode& node) {
  std::vector<IdleState> states;
  for (const JsonNode& item : non_empty_items(node)) {
    IdleState state = read_idle_state(item);
    if (states.empty() && state.name != kWfi) {
      item.child("name").fail_expected(quote(kWfi) +
                                       " (WFI is the shallowest idle state and comes first)");
    }
    for (const IdleState& earlier : states) {
      if (earlier.name == state.name) {
        item.child("name").fail("duplicate idle state name " + quote(state.name));
      }
    }
    if (!states.empty()) {
      const IdleState& previous = states.back();
      if (state.exit_latency_ns < previous.exit_latency_ns) {
        item.child("exit_latency_us")
            .fail_expected("at least " +
                           format_number(static_cast<double>(previous.exit_latency_ns) / 1000.0) +
                           " (the exit latency of " + quote(previous.name) +
                           "; idle states go from shallow to deep)");
      }
      if (state.min_residency_ns < previous.min_residency_ns) {
        item.child("min_residency_us")
            .fail_expected("at least " +
                           format_number(static_cast<double>(previous.min_residency_ns) / 1000.0) +
                           " (the minimum residency of " + quote(previous.name) +
                           "; idle states go from shallow to deep)");
      }
    }
    states.push_back(std::move(state));
  }
  return states;
}

// A cluster's "cpufreq": operating points in ascending frequency with non-decreasing power, the
// last one at the cluster's maximum frequency, and the transition latency.
FrequencyDomain read_frequency_domain(const JsonNode& node, std::int64_t max_freq_khz,
                                      const JsonNode& max_freq_node) {
  ObjectReader reader = open_object(node, {"transition_latency_us", "opps", "source"});
  FrequencyDomain domain;
  domain.transition_latency_ns =
      us_to_ns(non_negative_number(reader.required("transition_latency_us"), kMaxIdleUs));
  const JsonNode opps_node = reader.required("opps");
  for (const JsonNode& item : non_empty_items(opps_node)) {
    ObjectReader opp_reader = open_object(item, {"freq_khz", "power"});
    const JsonNode freq_node = opp_reader.required("freq_khz");
    const JsonNode power_node = opp_reader.required("power");
    Opp opp{freq_node.as_int(1, kMaxFreqKhz), positive_number(power_node, kMaxPower)};
    if (opp.freq_khz * kMaxFrequencyRange < max_freq_khz) {
      freq_node.fail_expected("a frequency of at least 1/" + std::to_string(kMaxFrequencyRange) +
                              " of max_freq_khz (" + std::to_string(max_freq_khz) + " kHz)");
    }
    if (!domain.opps.empty()) {
      const Opp& previous = domain.opps.back();
      if (opp.freq_khz <= previous.freq_khz) {
        freq_node.fail_expected("a frequency above " + std::to_string(previous.freq_khz) +
                                " kHz (operating points are listed in ascending frequency)");
      }
      if (opp.power < previous.power) {
        power_node.fail_expected("at least " + format_number(previous.power) +
                                 " (power does not decrease with frequency)");
      }
    }
    domain.opps.push_back(opp);
  }
  if (domain.opps.back().freq_khz != max_freq_khz) {
    max_freq_node.fail_expected(std::to_string(domain.opps.back().freq_khz) +
                                " (the highest operating point in cpufreq.opps)");
  }
  read_source(reader);
  return domain;
}

// Private caches go outward from the L1: levels 1, then increasing, latencies increasing.
std::vector<PrivateCacheSpec> read_private_caches(const JsonNode& node) {
  std::vector<PrivateCacheSpec> caches;
  for (const JsonNode& item : non_empty_items(node)) {
    ObjectReader reader = open_object(item, {"level", "size_kib", "latency_ns", "source"});
    const JsonNode level_node = reader.required("level");
    const int level = static_cast<int>(level_node.as_int(1, kMaxCacheLevel));
    if (caches.empty() && level != 1) {
      level_node.fail_expected("1 (the first private cache is the L1)");
    }
    if (!caches.empty() && level <= caches.back().level) {
      level_node.fail_expected("a level above " + std::to_string(caches.back().level) +
                               " (caches are listed from the CPU outward)");
    }
    const std::int64_t size_kib = reader.required("size_kib").as_int(1, kMaxCacheKib);
    const JsonNode latency_node = reader.required("latency_ns");
    const double latency = positive_number(latency_node, kMaxLatencyNs);
    if (!caches.empty() && latency <= caches.back().latency_ns) {
      latency_node.fail_expected("a latency above " + format_number(caches.back().latency_ns) +
                                 " ns (that of the level-" + std::to_string(caches.back().level) +
                                 " cache, which is closer to the CPU)");
    }
    read_source(reader);
    caches.push_back(PrivateCacheSpec{level, size_kib * 1024, latency, latency_node});
  }
  return caches;
}

// Reads the clusters; `owner[cpu]` becomes the index of the cluster that lists `cpu`.
std::vector<ClusterSpec> read_clusters(const JsonNode& node, std::vector<int>& owner) {
  std::vector<ClusterSpec> clusters;
  owner.assign(kMaxCpus, -1);
  for (const JsonNode& item : non_empty_items(node)) {
    const int index = static_cast<int>(clusters.size());
    ObjectReader reader =
        open_object(item, {"id", "name", "uarch", "cpus", "max_freq_khz", "capacity_dmips_mhz",
                           "source", "private_caches", "idle_states", "cpufreq"});
    const JsonNode id_node = reader.required("id");
    if (id_node.as_int() != index) {
      id_node.fail_expected(std::to_string(index) + " (cluster ids are 0, 1, ... in order)");
    }
    ClusterSpec cluster;
    const JsonNode name_node = reader.required("name");
    cluster.name = read_name(name_node);
    for (std::size_t other = 0; other < clusters.size(); ++other) {
      if (clusters[other].name == cluster.name) {
        name_node.fail("duplicate cluster name " + quote(cluster.name) + " (also cluster " +
                       std::to_string(other) + ")");
      }
    }
    cluster.uarch = read_name(reader.required("uarch"));
    for (const JsonNode& cpu_node : non_empty_items(reader.required("cpus"))) {
      const int cpu = static_cast<int>(cpu_node.as_int(0, kMaxCpus - 1));
      const int previous_owner = owner[static_cast<std::size_t>(cpu)];
      if (previous_owner == index) {
        cpu_node.fail("CPU " + std::to_string(cpu) + " is listed twice in this cluster");
      }
      if (previous_owner >= 0) {
        cpu_node.fail("CPU " + std::to_string(cpu) + " is already in cluster " +
                      std::to_string(previous_owner) + " (" +
                      quote(clusters[static_cast<std::size_t>(previous_owner)].name) +
                      "); every CPU belongs to exactly one cluster");
      }
      owner[static_cast<std::size_t>(cpu)] = index;
      cluster.cpus.push_back(cpu);
    }
    const JsonNode max_freq_node = reader.required("max_freq_khz");
    cluster.max_freq_khz = max_freq_node.as_int(1, kMaxFreqKhz);
    cluster.capacity_dmips_mhz =
        static_cast<int>(reader.required("capacity_dmips_mhz").as_int(1, kMaxDmipsMhz));
    read_source(reader);
    cluster.private_caches = read_private_caches(reader.required("private_caches"));
    cluster.idle_states = read_idle_states(reader.required("idle_states"));
    if (const auto cpufreq = reader.optional("cpufreq")) {
      cluster.domain = read_frequency_domain(*cpufreq, cluster.max_freq_khz, max_freq_node);
    }
    clusters.push_back(std::move(cluster));
  }
  return clusters;
}

std::vector<SharedCacheSpec> read_shared_caches(const JsonNode& node, int num_cpus) {
  std::vector<SharedCacheSpec> caches;
  for (const JsonNode& item : node.items()) {
    ObjectReader reader =
        open_object(item, {"name", "level", "cpus", "size_kib", "latency_ns", "source"});
    const JsonNode name_node = reader.required("name");
    SharedCacheSpec cache{.name = read_name(name_node),
                          .level = 0,
                          .cpus = {},
                          .cpu_nodes = {},
                          .level_node = reader.required("level"),
                          .cpus_node = reader.required("cpus"),
                          .size_bytes = 0,
                          .latency_ns = 0,
                          .latency_node = reader.required("latency_ns")};
    for (const SharedCacheSpec& other : caches) {
      if (other.name == cache.name) name_node.fail("duplicate cache name " + quote(cache.name));
    }
    if (cache.name == kMemoryName || cache.name.find('.') != std::string::npos ||
        cache.name.starts_with("cpu")) {
      name_node.fail_expected("a name other than " + quote(kMemoryName) +
                              ", without \".\" and not starting with \"cpu\" (those name the "
                              "CPUs, private caches and memory)");
    }
    cache.level = static_cast<int>(cache.level_node.as_int(1, kMaxCacheLevel));
    if (!caches.empty() && cache.level < caches.back().level) {
      cache.level_node.fail_expected("a level of at least " + std::to_string(caches.back().level) +
                                     " (shared caches are listed from the CPUs outward)");
    }
    for (const JsonNode& cpu_node : non_empty_items(cache.cpus_node)) {
      const int cpu = static_cast<int>(cpu_node.as_int(0, num_cpus - 1));
      if (std::find(cache.cpus.begin(), cache.cpus.end(), cpu) != cache.cpus.end()) {
        cpu_node.fail("CPU " + std::to_string(cpu) + " is listed twice in this cache");
      }
      cache.cpus.push_back(cpu);
      cache.cpu_nodes.push_back(cpu_node);
    }
    cache.size_bytes = reader.required("size_kib").as_int(1, kMaxCacheKib) * 1024;
    cache.latency_ns = positive_number(cache.latency_node, kMaxLatencyNs);
    read_source(reader);
    caches.push_back(std::move(cache));
  }
  return caches;
}

PlatformCosts read_costs(const JsonNode& node) {
  ObjectReader reader = open_object(
      node, {"context_switch_ref_ns", "wakeup_ref_ns", "ipi_latency_ns", "binder_send_ref_ns",
             "binder_receive_ref_ns", "binder_free_ref_ns", "thread_spawn_ns", "line_bytes",
             "cache_refs_per_ref_us", "base_miss_ratio", "binder_alloc_locked_ref_ns",
             "binder_free_lookup_locked_ref_ns", "binder_free_locked_ref_ns", "page_install_ref_ns",
             "page_reclaim_ref_ns", "source"});
  const auto duration = [&reader](std::string_view key) {
    return reader.required(key).as_int(0, kMaxCostNs);
  };
  PlatformCosts costs;
  costs.context_switch_ref_ns = duration("context_switch_ref_ns");
  costs.wakeup_ref_ns = duration("wakeup_ref_ns");
  costs.ipi_latency_ns = duration("ipi_latency_ns");
  costs.binder_send_ref_ns = duration("binder_send_ref_ns");
  costs.binder_receive_ref_ns = duration("binder_receive_ref_ns");
  costs.binder_free_ref_ns = duration("binder_free_ref_ns");
  costs.thread_spawn_ns = duration("thread_spawn_ns");
  const auto part_of = [&reader](std::string_view key, SimTime whole, std::string_view of) {
    const auto part = reader.optional(key);
    if (!part) return SimTime{0};
    const SimTime value = part->as_int(0, kMaxCostNs);
    if (value > whole) {
      part->fail_expected("at most " + std::string(of) + " (" + std::to_string(whole) + ")");
    }
    return value;
  };
  costs.binder_alloc_locked_ref_ns =
      part_of("binder_alloc_locked_ref_ns", costs.binder_send_ref_ns, "binder_send_ref_ns");
  costs.binder_free_locked_ref_ns =
      part_of("binder_free_locked_ref_ns", costs.binder_free_ref_ns, "binder_free_ref_ns");
  costs.binder_free_lookup_locked_ref_ns =
      part_of("binder_free_lookup_locked_ref_ns",
              costs.binder_free_ref_ns - costs.binder_free_locked_ref_ns,
              "binder_free_ref_ns less binder_free_locked_ref_ns");
  costs.page_install_ref_ns = part_of("page_install_ref_ns", kMaxCostNs, "the cost limit");
  costs.page_reclaim_ref_ns = part_of("page_reclaim_ref_ns", kMaxCostNs, "the cost limit");
  const JsonNode line_node = reader.required("line_bytes");
  const std::int64_t line_bytes = line_node.as_int(1, 4096);
  if ((line_bytes & (line_bytes - 1)) != 0) line_node.fail_expected("a power of two");
  costs.line_bytes = static_cast<int>(line_bytes);
  // At most 1e5 per us (20 times a core that makes four L1D accesses a cycle at 5 GHz): the
  // counters of 64 CPUs busy for the longest run (10^6 s) then stay within 64 bits.
  costs.cache_refs_per_ref_us = non_negative_number(reader.required("cache_refs_per_ref_us"), 1e5);
  costs.base_miss_ratio = reader.required("base_miss_ratio").as_number(0.0, 1.0);
  read_source(reader);
  return costs;
}

// dmips x fmax scaled so that `max_product` maps to 1024, rounded to nearest (halves up); at
// least 1.
int scaled_capacity(std::int64_t product, std::int64_t max_product) {
  const Uint128 numerator =
      static_cast<Uint128>(product) * (2 * kCapacityScale) + static_cast<Uint128>(max_product);
  const Uint128 capacity = numerator / (2 * static_cast<Uint128>(max_product));
  return std::max(1, static_cast<int>(capacity));
}

}  // namespace

Topology Topology::from_json(const JsonNode& root, std::optional<std::uint64_t> document_hash) {
  {
    // The schema is checked before anything else: a file of another version fails on it, not
    // on the keys that version added.
    ObjectReader probe(root);
    const JsonNode schema = probe.required("schema");
    if (!schema.is_string() || schema.as_string() != kSchema) {
      schema.fail_expected(quote(kSchema));
    }
  }
  ObjectReader reader = open_object(
      root, {"schema", "name", "description", "clusters", "shared_caches", "memory", "costs"});
  Topology topology;
  topology.name_ = read_name(reader.required("name"));
  topology.description_ = reader.required("description").as_string();
  topology.document_hash_ = document_hash ? *document_hash : bindersim::document_hash(root.raw());

  // Clusters and CPUs: ids 0..n-1 with each CPU in exactly one cluster.
  const JsonNode clusters_node = reader.required("clusters");
  std::vector<int> owner;
  const std::vector<ClusterSpec> clusters = read_clusters(clusters_node, owner);
  int num_cpus = 0;
  std::size_t listed = 0;  // each CPU is listed once (read_clusters() checks)
  for (const ClusterSpec& cluster : clusters) {
    for (const int cpu : cluster.cpus) num_cpus = std::max(num_cpus, cpu + 1);
    listed += cluster.cpus.size();
  }
  for (int cpu = 0; cpu < num_cpus; ++cpu) {
    if (owner[static_cast<std::size_t>(cpu)] < 0) {
      clusters_node.fail("CPU " + std::to_string(cpu) + " is in no cluster (the " +
                         std::to_string(listed) + " CPUs listed must have the ids 0.." +
                         std::to_string(listed - 1) + ", without gaps)");
    }
  }

  std::int64_t max_product = 0;
  for (const ClusterSpec& cluster : clusters) {
    max_product = std::max(max_product, cluster.capacity_dmips_mhz * cluster.max_freq_khz);
  }
  topology.num_clusters_ = static_cast<int>(clusters.size());
  // The energy model covers every cluster or none (the kernel builds it for all domains).
  std::size_t with_opps = 0;
  for (const ClusterSpec& cluster : clusters) {
    with_opps += cluster.domain.opps.empty() ? 0 : 1;
    topology.domains_.push_back(cluster.domain);
  }
  if (with_opps != 0 && with_opps != clusters.size()) {
    for (std::size_t i = 0; i < clusters.size(); ++i) {
      if (clusters[i].domain.opps.empty()) {
        clusters_node.child(i).fail(
            "has no \"cpufreq\" while other clusters have one; give every cluster its "
            "operating points or none");
      }
    }
  }
  topology.has_energy_model_ = with_opps != 0;
  topology.cluster_cpus_.resize(clusters.size());
  topology.cpus_.resize(static_cast<std::size_t>(num_cpus));
  topology.num_cpus_ = num_cpus;
  for (int cpu = 0; cpu < num_cpus; ++cpu) {
    const int cluster_id = owner[static_cast<std::size_t>(cpu)];
    const ClusterSpec& cluster = clusters[static_cast<std::size_t>(cluster_id)];
    Cpu& out = topology.cpus_[static_cast<std::size_t>(cpu)];
    out.id = cpu;
    out.cluster = cluster_id;
    out.cluster_name = cluster.name;
    out.uarch = cluster.uarch;
    out.max_freq_khz = cluster.max_freq_khz;
    out.capacity_dmips_mhz = cluster.capacity_dmips_mhz;
    out.capacity = scaled_capacity(cluster.capacity_dmips_mhz * cluster.max_freq_khz, max_product);
    out.idle_states = cluster.idle_states;
    topology.cluster_cpus_[static_cast<std::size_t>(cluster_id)].push_back(cpu);
  }

  const std::vector<SharedCacheSpec> shared =
      read_shared_caches(reader.required("shared_caches"), num_cpus);
  ObjectReader memory_reader = open_object(reader.required("memory"), {"latency_ns", "source"});
  const JsonNode memory_latency_node = memory_reader.required("latency_ns");
  const double memory_latency = positive_number(memory_latency_node, kMaxLatencyNs);
  read_source(memory_reader);
  topology.costs_ = read_costs(reader.required("costs"));

  // Vertices: CPUs, then private caches per CPU, then shared caches, then memory.
  CacheGraph& graph = topology.graph_;
  int max_level = 0;
  for (int cpu = 0; cpu < num_cpus; ++cpu) {
    GraphNode node;
    node.kind = NodeKind::kCpu;
    node.name = "cpu" + std::to_string(cpu);
    node.cpu = cpu;
    boost::add_vertex(node, graph);
  }
  // paths[cpu]: the vertices from the CPU outward to memory.
  std::vector<std::vector<std::size_t>> paths(static_cast<std::size_t>(num_cpus));
  for (int cpu = 0; cpu < num_cpus; ++cpu) {
    const Cpu& info = topology.cpus_[static_cast<std::size_t>(cpu)];
    paths[static_cast<std::size_t>(cpu)].push_back(static_cast<std::size_t>(cpu));
    for (const PrivateCacheSpec& spec :
         clusters[static_cast<std::size_t>(info.cluster)].private_caches) {
      GraphNode node;
      node.kind = NodeKind::kCache;
      node.name = std::string("l")
                      .append(std::to_string(spec.level))
                      .append(".cpu")
                      .append(std::to_string(
                          cpu));  // append(): GCC 12 warns falsely on "literal" + string here
      node.level = spec.level;
      node.cpu = cpu;
      node.size_bytes = spec.size_bytes;
      node.latency_ns = spec.latency_ns;
      paths[static_cast<std::size_t>(cpu)].push_back(boost::add_vertex(node, graph));
      max_level = std::max(max_level, spec.level);
    }
  }
  const std::size_t first_shared = boost::num_vertices(graph);
  for (const SharedCacheSpec& spec : shared) {
    GraphNode node;
    node.kind = NodeKind::kCache;
    node.name = spec.name;
    node.level = spec.level;
    node.size_bytes = spec.size_bytes;
    node.latency_ns = spec.latency_ns;
    boost::add_vertex(node, graph);
    max_level = std::max(max_level, spec.level);
  }
  GraphNode memory;
  memory.kind = NodeKind::kMemory;
  memory.name = std::string(kMemoryName);
  memory.level = max_level + 1;
  memory.latency_ns = memory_latency;
  const std::size_t memory_vertex = boost::add_vertex(memory, graph);

  // Each CPU's path continues through the shared caches that list it, innermost first (the file
  // lists them by level): one cache per level, levels and latencies increasing outward.
  const auto describe_vertex = [&graph](std::size_t vertex) { return quote(graph[vertex].name); };
  for (std::size_t index = 0; index < shared.size(); ++index) {
    const SharedCacheSpec& spec = shared[index];
    const std::size_t vertex = first_shared + index;
    for (std::size_t k = 0; k < spec.cpus.size(); ++k) {
      const int cpu = spec.cpus[k];
      std::vector<std::size_t>& path = paths[static_cast<std::size_t>(cpu)];
      const GraphNode& inner = graph[path.back()];
      if (inner.kind == NodeKind::kCache && inner.cpu < 0 && inner.level == spec.level) {
        spec.cpu_nodes[k].fail("CPU " + std::to_string(cpu) + " is already in level-" +
                               std::to_string(spec.level) + " cache " + quote(inner.name) +
                               "; a CPU reaches one cache per level");
      }
      if (spec.level <= inner.level) {
        spec.level_node.fail_expected("a level above " + std::to_string(inner.level) +
                                      " (that of " + describe_vertex(path.back()) + ", which CPU " +
                                      std::to_string(cpu) + " reaches first)");
      }
      if (spec.latency_ns <= inner.latency_ns) {
        spec.latency_node.fail_expected("a latency above " + format_number(inner.latency_ns) +
                                        " ns (that of " + describe_vertex(path.back()) +
                                        ", which CPU " + std::to_string(cpu) + " reaches first)");
      }
      path.push_back(vertex);
    }
  }
  for (int cpu = 0; cpu < num_cpus; ++cpu) {
    std::vector<std::size_t>& path = paths[static_cast<std::size_t>(cpu)];
    if (memory_latency <= graph[path.back()].latency_ns) {
      memory_latency_node.fail_expected(
          "a latency above " + format_number(graph[path.back()].latency_ns) + " ns (that of " +
          describe_vertex(path.back()) + ", which CPU " + std::to_string(cpu) + " reaches first)");
    }
    path.push_back(memory_vertex);
  }

  // The CPUs of a shared cache all continue to the same next level; otherwise that vertex would
  // lead to caches some of its CPUs do not reach.
  std::vector<std::optional<std::size_t>> next(boost::num_vertices(graph));
  std::vector<int> next_cpu(boost::num_vertices(graph), -1);  // a CPU whose path set `next`
  for (int cpu = 0; cpu < num_cpus; ++cpu) {
    const std::vector<std::size_t>& path = paths[static_cast<std::size_t>(cpu)];
    for (std::size_t i = 0; i + 1 < path.size(); ++i) {
      const std::size_t from = path[i];
      const std::size_t to = path[i + 1];
      if (!next[from]) {
        next[from] = to;
        next_cpu[from] = cpu;
        continue;
      }
      if (*next[from] == to) continue;
      // Two CPUs share `from` and then part. The inner of the two next levels is a shared cache
      // that lists one of them and misses the other.
      std::size_t missing = *next[from];
      int member = next_cpu[from];
      int absent = cpu;
      if (graph[to].level < graph[missing].level) {
        missing = to;
        std::swap(member, absent);
      }
      BSIM_CHECK(missing >= first_shared && missing < memory_vertex);
      shared[missing - first_shared].cpus_node.fail(
          "missing CPU " + std::to_string(absent) + ": it shares " + describe_vertex(from) +
          " with CPU " + std::to_string(member) + ", so it must reach the same outer caches");
    }
  }
  for (std::size_t from = 0; from < next.size(); ++from) {
    if (!next[from]) continue;
    const std::size_t to = *next[from];
    boost::add_edge(from, to, GraphEdge{graph[to].latency_ns - graph[from].latency_ns}, graph);
  }
  for (int cpu = 0; cpu < num_cpus; ++cpu) {
    for (const std::size_t vertex : paths[static_cast<std::size_t>(cpu)]) {
      graph[vertex].cpus.push_back(cpu);
    }
  }
  topology.compute_transfer_costs();
  return topology;
}

void Topology::compute_transfer_costs() {
  const std::size_t n = static_cast<std::size_t>(num_cpus());
  const std::size_t vertices = boost::num_vertices(graph_);
  constexpr double kUnreached = std::numeric_limits<double>::max();
  // distance[cpu][vertex]: shortest path length from the CPU, kUnreached if it has none.
  std::vector<std::vector<double>> distance(n, std::vector<double>(vertices, kUnreached));
  for (std::size_t cpu = 0; cpu < n; ++cpu) {
    boost::dijkstra_shortest_paths(
        graph_, cpu_vertex(static_cast<int>(cpu)),
        boost::weight_map(boost::get(&GraphEdge::weight_ns, graph_))
            .distance_map(boost::make_iterator_property_map(
                distance[cpu].begin(), boost::get(boost::vertex_index, graph_))));
  }
  const auto reaches = [&distance](std::size_t cpu, std::size_t vertex) {
    return distance[cpu][vertex] < kUnreached;
  };
  // The reported cost is the latency of the chosen vertex, which its path length equals up to
  // rounding (the weights telescope); the check guards that invariant of the graph.
  const auto latency_of = [&](std::size_t cpu, std::size_t vertex) {
    const double latency = graph_[vertex].latency_ns;
    BSIM_CHECK(std::fabs(distance[cpu][vertex] - latency) <= 1e-9 * latency);
    return latency;
  };

  transfer_ns_.assign(n * n, 0.0);
  common_vertex_.assign(n * n, 0);
  shares_cache_.assign(n * n, 0);
  for (std::size_t from = 0; from < n; ++from) {
    for (std::size_t to = 0; to < n; ++to) {
      std::optional<std::size_t> best;
      for (std::size_t vertex = 0; vertex < vertices; ++vertex) {
        if (graph_[vertex].kind == NodeKind::kCpu) continue;
        if (!reaches(from, vertex) || !reaches(to, vertex)) continue;
        if (!best || distance[to][vertex] < distance[to][*best]) best = vertex;
      }
      BSIM_CHECK(best.has_value());  // memory is reached by every CPU
      transfer_ns_[from * n + to] = latency_of(to, *best);
      common_vertex_[from * n + to] = *best;
      shares_cache_[from * n + to] = graph_[*best].kind == NodeKind::kCache;
    }
  }

  shared_fetch_ns_.assign(n, 0.0);
  llc_of_cpu_.assign(n, 0);
  private_bytes_.assign(n, 0);
  for (std::size_t cpu = 0; cpu < n; ++cpu) {
    std::optional<std::size_t> first_shared;
    for (std::size_t vertex = 0; vertex < vertices; ++vertex) {
      const GraphNode& node = graph_[vertex];
      if (!reaches(cpu, vertex) || node.kind == NodeKind::kCpu) continue;
      if (node.kind == NodeKind::kCache && node.cpu == static_cast<int>(cpu)) {
        private_bytes_[cpu] = std::max(private_bytes_[cpu], node.size_bytes);
      }
      const bool shared = node.kind == NodeKind::kMemory || node.cpus.size() > 1;
      if (shared && (!first_shared || distance[cpu][vertex] < distance[cpu][*first_shared])) {
        first_shared = vertex;
      }
    }
    BSIM_CHECK(first_shared.has_value());
    llc_of_cpu_[cpu] = static_cast<int>(*first_shared);
    shared_fetch_ns_[cpu] = latency_of(cpu, *first_shared);
  }
}

double Topology::shared_fetch_ns_per_line(int cpu_id) const {
  return shared_fetch_ns_.at(static_cast<std::size_t>(cpu_id));
}

std::int64_t Topology::private_cache_bytes(int cpu_id) const {
  return private_bytes_.at(static_cast<std::size_t>(cpu_id));
}

std::vector<std::string> Topology::available(const std::filesystem::path& topologies_dir) {
  return data_file_names(topologies_dir);
}

Topology Topology::load(const std::string& name_or_path,
                        const std::filesystem::path& topologies_dir,
                        const std::function<void(nlohmann::json&)>& edit) {
  const std::filesystem::path file =
      resolve_data_file(name_or_path, topologies_dir, "topology", "topologies");
  const JsonDocument document = JsonDocument::parse_file(file);
  if (!edit) return from_json(document.root());
  nlohmann::json value = document.value();
  edit(value);
  const JsonDocument edited =
      JsonDocument::from_value(std::move(value), file.string() + " (with --set)");
  return from_json(edited.root(), bindersim::document_hash(document.value()));
}

}  // namespace bindersim::topology
