#include "bindersim/topology/topology.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "bindersim/common/error.hpp"
#include "bindersim/common/hash.hpp"
#include "bindersim/common/json_reader.hpp"

namespace bindersim::topology {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::filesystem::path kTopologiesDir =
    std::filesystem::path(BINDERSIM_SOURCE_DIR) / "topologies";
const std::filesystem::path kTestTopologiesDir =
    std::filesystem::path(BINDERSIM_TEST_DATA_DIR) / "topologies";

nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// The vertex called `name`; fails the test when there is none.
std::size_t vertex_named(const Topology& topology, const std::string& name) {
  const CacheGraph& graph = topology.graph();
  for (std::size_t vertex = 0; vertex < boost::num_vertices(graph); ++vertex) {
    if (graph[vertex].name == name) return vertex;
  }
  ADD_FAILURE() << "no vertex named " << name;
  return 0;
}

double latency_of(const Topology& topology, const std::string& vertex_name) {
  return topology.graph()[vertex_named(topology, vertex_name)].latency_ns;
}

// The ConfigError message of building a topology from `value` ("" when it loads).
std::string load_error(const nlohmann::json& value, const std::string& file) {
  try {
    const JsonDocument document = JsonDocument::from_value(value, file);
    static_cast<void>(Topology::from_json(document.root()));
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "";
}

class Sa8155pTest : public ::testing::Test {
 protected:
  Sa8155pTest()
      : raw_(read_json(kTopologiesDir / "sa8155p.json")),
        topology_(Topology::load("sa8155p", kTopologiesDir)) {}

  // The error of loading the shipped file after `edit`, reported as file "topologies/x.json".
  std::string error_after(const std::function<void(nlohmann::json&)>& edit) const {
    nlohmann::json value = raw_;
    edit(value);
    return load_error(value, "topologies/x.json");
  }

  nlohmann::json raw_;
  Topology topology_;
};

TEST(Sm8850CostsTest, FollowTheCalibratedSa8155pByTheSingleThreadRatio) {
  // The SM8850's costs are the SA8155P's scaled by its single-thread ratio of 4.3, rounded to
  // 10 ns, as its "source" says: a refit of the SA8155P that is not carried over fails here.
  const nlohmann::json sa = read_json(kTopologiesDir / "sa8155p.json").at("costs");
  const nlohmann::json sm = read_json(kTopologiesDir / "sm8850.json").at("costs");
  constexpr double kRatio = 4.3;
  const auto to_10ns = [](double ns) { return std::round(ns / 10.0) * 10.0; };
  for (const char* key :
       {"context_switch_ref_ns", "wakeup_ref_ns", "binder_send_ref_ns", "binder_receive_ref_ns",
        "binder_free_ref_ns", "thread_spawn_ns", "binder_alloc_locked_ref_ns",
        "binder_free_lookup_locked_ref_ns", "binder_free_locked_ref_ns"}) {
    EXPECT_EQ(sm.at(key).get<double>(), to_10ns(sa.at(key).get<double>() / kRatio)) << key;
  }
  // The same references in less reference time; the miss ratio as it is.
  EXPECT_NEAR(sm.at("cache_refs_per_ref_us").get<double>(),
              sa.at("cache_refs_per_ref_us").get<double>() * kRatio, 0.05);
  EXPECT_EQ(sm.at("base_miss_ratio").get<double>(), sa.at("base_miss_ratio").get<double>());
  // Page work is bound by memory and TLB maintenance: a third.
  for (const char* key : {"page_install_ref_ns", "page_reclaim_ref_ns"}) {
    EXPECT_EQ(sm.at(key).get<double>(), to_10ns(sa.at(key).get<double>() / 3.0)) << key;
  }
}

TEST_F(Sa8155pTest, LoadsClustersAndCpus) {
  // 1 + 3 + 4 cores: CPUs 0-3 silver, 4-6 gold, 7 prime.
  EXPECT_EQ(topology_.name(), "sa8155p");
  ASSERT_EQ(topology_.num_cpus(), 8);
  ASSERT_EQ(topology_.num_clusters(), 3);
  for (int cpu = 0; cpu < 8; ++cpu) {
    const int expected = cpu <= 3 ? 0 : (cpu <= 6 ? 1 : 2);
    EXPECT_EQ(topology_.cluster_of(cpu), expected) << "cpu" << cpu;
    EXPECT_EQ(topology_.cpu(cpu).id, cpu);
  }
  EXPECT_EQ(topology_.cluster_cpus(0), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(topology_.cluster_cpus(1), (std::vector<int>{4, 5, 6}));
  EXPECT_EQ(topology_.cluster_cpus(2), (std::vector<int>{7}));
  EXPECT_EQ(topology_.cpu(0).cluster_name, "silver");
  EXPECT_EQ(topology_.cpu(5).uarch, "cortex-a76");
  EXPECT_EQ(topology_.cpu(7).max_freq_khz, 2841600);
}

TEST_F(Sa8155pTest, CapacityIsDmipsTimesFmaxWithTheLargestAt1024) {
  // 488 x 1785.6 MHz and 1024 x 2419.2 MHz against 1024 x 2841.6 MHz, rounded to nearest.
  for (int cpu = 0; cpu <= 3; ++cpu) EXPECT_EQ(topology_.capacity(cpu), 307);
  for (int cpu = 4; cpu <= 6; ++cpu) EXPECT_EQ(topology_.capacity(cpu), 872);
  EXPECT_EQ(topology_.capacity(7), 1024);
}

TEST_F(Sa8155pTest, IdleStatesAreInNanosecondsWithWfiFirst) {
  // The file gives microseconds; the model keeps nanoseconds.
  for (int cluster = 0; cluster < 3; ++cluster) {
    const nlohmann::json& states = raw_["clusters"][cluster]["idle_states"];
    for (const int cpu : topology_.cluster_cpus(cluster)) {
      const std::vector<IdleState>& idle = topology_.cpu(cpu).idle_states;
      ASSERT_EQ(idle.size(), states.size());
      EXPECT_EQ(idle[0].name, "wfi");
      for (std::size_t i = 0; i < idle.size(); ++i) {
        EXPECT_EQ(idle[i].entry_latency_ns, states[i]["entry_latency_us"].get<SimTime>() * 1000);
        EXPECT_EQ(idle[i].exit_latency_ns, states[i]["exit_latency_us"].get<SimTime>() * 1000);
        EXPECT_EQ(idle[i].min_residency_ns, states[i]["min_residency_us"].get<SimTime>() * 1000);
      }
    }
  }
}

TEST_F(Sa8155pTest, CostsComeFromTheFile) {
  const nlohmann::json& costs = raw_["costs"];
  const PlatformCosts& loaded = topology_.costs();
  EXPECT_EQ(loaded.context_switch_ref_ns, costs["context_switch_ref_ns"].get<SimTime>());
  EXPECT_EQ(loaded.wakeup_ref_ns, costs["wakeup_ref_ns"].get<SimTime>());
  EXPECT_EQ(loaded.ipi_latency_ns, costs["ipi_latency_ns"].get<SimTime>());
  EXPECT_EQ(loaded.binder_send_ref_ns, costs["binder_send_ref_ns"].get<SimTime>());
  EXPECT_EQ(loaded.binder_receive_ref_ns, costs["binder_receive_ref_ns"].get<SimTime>());
  EXPECT_EQ(loaded.binder_free_ref_ns, costs["binder_free_ref_ns"].get<SimTime>());
  EXPECT_EQ(loaded.thread_spawn_ns, costs["thread_spawn_ns"].get<SimTime>());
  EXPECT_EQ(loaded.line_bytes, costs["line_bytes"].get<int>());
  EXPECT_EQ(loaded.cache_refs_per_ref_us, costs["cache_refs_per_ref_us"].get<double>());
  EXPECT_EQ(loaded.base_miss_ratio, costs["base_miss_ratio"].get<double>());
}

TEST_F(Sa8155pTest, PathLengthFromEachCpuIsTheLatencyOfEveryLevel) {
  // Following the single out-edge from a CPU to memory, the summed weights equal each
  // vertex's load-to-use latency: L1, L2, L3, LLCC, DRAM.
  const CacheGraph& graph = topology_.graph();
  for (int cpu = 0; cpu < topology_.num_cpus(); ++cpu) {
    std::size_t vertex = topology_.cpu_vertex(cpu);
    EXPECT_EQ(graph[vertex].kind, NodeKind::kCpu);
    std::vector<std::string> names;
    double length = 0;
    while (boost::out_degree(vertex, graph) == 1) {
      const auto edge = *boost::out_edges(vertex, graph).first;
      length += graph[edge].weight_ns;
      vertex = boost::target(edge, graph);
      names.push_back(graph[vertex].name);
      EXPECT_NEAR(length, graph[vertex].latency_ns, 1e-9) << graph[vertex].name;
    }
    const std::string suffix = ".cpu" + std::to_string(cpu);
    EXPECT_EQ(names,
              (std::vector<std::string>{"l1" + suffix, "l2" + suffix, "l3", "llcc", "dram"}));
    EXPECT_EQ(vertex, topology_.memory_vertex());
    EXPECT_EQ(boost::out_degree(vertex, graph), 0u);
  }
  // One vertex per CPU, two private caches per CPU, L3, LLCC and DRAM, joined as a tree.
  EXPECT_EQ(boost::num_vertices(graph), 8u * 3 + 3);
  EXPECT_EQ(boost::num_edges(graph), boost::num_vertices(graph) - 1);
}

TEST_F(Sa8155pTest, TransferCostIsTheNearestSharedLevel) {
  // Same CPU: its own L1. Any two different CPUs: the one DynamIQ L3 all eight share.
  const double l3 = latency_of(topology_, "l3");
  EXPECT_EQ(l3, raw_["shared_caches"][0]["latency_ns"].get<double>());
  for (int from = 0; from < topology_.num_cpus(); ++from) {
    for (int to = 0; to < topology_.num_cpus(); ++to) {
      if (from == to) {
        EXPECT_EQ(topology_.transfer_ns_per_line(from, to),
                  latency_of(topology_, "l1.cpu" + std::to_string(to)));
      } else {
        EXPECT_EQ(topology_.transfer_ns_per_line(from, to), l3) << from << "->" << to;
      }
      EXPECT_EQ(topology_.transfer_ns_per_line(from, to), topology_.transfer_ns_per_line(to, from));
      EXPECT_TRUE(topology_.shares_cache(from, to)) << from << "," << to;
    }
  }
  // The L1s differ between the clusters, so the diagonal is not one number.
  EXPECT_NE(topology_.transfer_ns_per_line(0, 0), topology_.transfer_ns_per_line(7, 7));
}

TEST_F(Sa8155pTest, SharedFetchIsTheL3AndPrivateBytesTheL2) {
  for (int cpu = 0; cpu < topology_.num_cpus(); ++cpu) {
    EXPECT_EQ(topology_.shared_fetch_ns_per_line(cpu), latency_of(topology_, "l3"));
    EXPECT_EQ(topology_.first_shared_vertex(cpu), vertex_named(topology_, "l3"));
    const std::size_t l2 = vertex_named(topology_, "l2.cpu" + std::to_string(cpu));
    EXPECT_EQ(topology_.private_cache_bytes(cpu), topology_.graph()[l2].size_bytes);
  }
  // The prime core's private L2 is 512 KiB, a silver core's 128 KiB.
  EXPECT_EQ(topology_.private_cache_bytes(7), 512 * 1024);
  EXPECT_EQ(topology_.private_cache_bytes(0), 128 * 1024);
}

// The shipped SM8850 (Snapdragon 8 Elite Gen 5): 6 performance + 2 prime Oryon cores, each
// cluster with its own shared L2, both behind one system cache.
class Sm8850Test : public ::testing::Test {
 protected:
  Sm8850Test()
      : raw_(read_json(kTopologiesDir / "sm8850.json")),
        topology_(Topology::load("sm8850", kTopologiesDir)) {}

  nlohmann::json raw_;
  Topology topology_;
};

TEST_F(Sm8850Test, LoadsTwoClustersOfSixAndTwoCpus) {
  // The device tree's cpu-map: cluster0 = CPUs 0-5, cluster1 = CPUs 6-7.
  EXPECT_EQ(topology_.name(), "sm8850");
  ASSERT_EQ(topology_.num_cpus(), 8);
  ASSERT_EQ(topology_.num_clusters(), 2);
  EXPECT_EQ(topology_.cluster_cpus(0), (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(topology_.cluster_cpus(1), (std::vector<int>{6, 7}));
  for (int cpu = 0; cpu < 8; ++cpu) {
    EXPECT_EQ(topology_.cluster_of(cpu), cpu <= 5 ? 0 : 1) << "cpu" << cpu;
  }
  EXPECT_EQ(topology_.cpu(0).cluster_name, "performance");
  EXPECT_EQ(topology_.cpu(7).cluster_name, "prime");
}

TEST_F(Sm8850Test, PrimeClusterHasTheHighestCapacity) {
  // 1792 x 3628.8 MHz against 1894 x 4608 MHz: 763 for the performance cores, 1024 for prime.
  for (int cpu = 0; cpu <= 5; ++cpu) EXPECT_EQ(topology_.capacity(cpu), 763) << "cpu" << cpu;
  for (int cpu = 6; cpu <= 7; ++cpu) EXPECT_EQ(topology_.capacity(cpu), 1024) << "cpu" << cpu;
  EXPECT_LT(topology_.cpu(0).max_freq_khz, topology_.cpu(6).max_freq_khz);
  EXPECT_LT(topology_.cpu(0).capacity_dmips_mhz, topology_.cpu(6).capacity_dmips_mhz);
}

TEST_F(Sm8850Test, EveryClusterHasIdleStatesAndAscendingOperatingPoints) {
  ASSERT_TRUE(topology_.has_energy_model());
  for (int cluster = 0; cluster < topology_.num_clusters(); ++cluster) {
    // WFI and at least one deeper state, getting deeper.
    const std::vector<IdleState>& idle =
        topology_.cpu(topology_.cluster_cpus(cluster)[0]).idle_states;
    ASSERT_GE(idle.size(), 2u) << "cluster " << cluster;
    EXPECT_EQ(idle.front().name, "wfi");
    for (std::size_t i = 1; i < idle.size(); ++i) {
      EXPECT_GT(idle[i].exit_latency_ns, idle[i - 1].exit_latency_ns);
      EXPECT_GT(idle[i].min_residency_ns, idle[i - 1].min_residency_ns);
    }
    // Operating points rise in frequency and power and end at the cluster's maximum.
    const std::vector<Opp>& opps = topology_.frequency_domain(cluster).opps;
    ASSERT_GE(opps.size(), 2u) << "cluster " << cluster;
    for (std::size_t i = 1; i < opps.size(); ++i) {
      EXPECT_GT(opps[i].freq_khz, opps[i - 1].freq_khz);
      EXPECT_GT(opps[i].power, opps[i - 1].power);
    }
    EXPECT_EQ(opps.back().freq_khz, topology_.cpu(topology_.cluster_cpus(cluster)[0]).max_freq_khz);
    EXPECT_GT(topology_.frequency_domain(cluster).transition_latency_ns, 0);
  }
  // A prime core at full speed draws more than a performance core at full speed.
  EXPECT_GT(topology_.frequency_domain(1).opps.back().power,
            topology_.frequency_domain(0).opps.back().power);
}

TEST_F(Sm8850Test, ClustersMeetInTheirL2AndAcrossClustersInTheSystemCache) {
  // Within a cluster the nearest common level is the cluster's L2; across clusters the SLC.
  EXPECT_EQ(topology_.nearest_common_vertex(0, 5), vertex_named(topology_, "l2-performance"));
  EXPECT_EQ(topology_.nearest_common_vertex(7, 6), vertex_named(topology_, "l2-prime"));
  EXPECT_EQ(topology_.nearest_common_vertex(2, 6), vertex_named(topology_, "slc"));
  EXPECT_GT(topology_.transfer_ns_per_line(2, 6), topology_.transfer_ns_per_line(2, 3));
  EXPECT_TRUE(topology_.shares_cache(0, 7));
  // The only private level is the L1, so a working set keeps 96 KiB warm per CPU.
  for (int cpu = 0; cpu < topology_.num_cpus(); ++cpu) {
    EXPECT_EQ(topology_.private_cache_bytes(cpu), 96 * 1024) << "cpu" << cpu;
  }
}

// Collects the JSON pointers of objects that hold a number but no non-empty "source". Operating
// points (the "opps" of a cpufreq object) are covered by their cpufreq's source, which the format
// gives them instead of one each.
void find_unsourced(const nlohmann::json& node, const std::string& pointer, bool covered,
                    std::vector<std::string>& out) {
  if (node.is_array()) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      find_unsourced(node[i], pointer + "/" + std::to_string(i), false, out);
    }
    return;
  }
  if (!node.is_object()) return;
  const auto source = node.find("source");
  const bool own =
      source != node.end() && source->is_string() && !source->get<std::string>().empty();
  bool has_number = false;
  for (const auto& [key, value] : node.items()) has_number = has_number || value.is_number();
  if (has_number && !own && !covered) out.push_back(pointer);
  for (const auto& [key, value] : node.items()) {
    const std::string child = pointer + "/" + key;
    if (key == "opps" && value.is_array() && own) {
      for (std::size_t i = 0; i < value.size(); ++i) {
        find_unsourced(value[i], child + "/" + std::to_string(i), true, out);
      }
    } else {
      find_unsourced(value, child, false, out);
    }
  }
}

TEST_F(Sm8850Test, EveryObjectWithNumbersCarriesASource) {
  std::vector<std::string> unsourced;
  find_unsourced(raw_, "", false, unsourced);
  EXPECT_EQ(unsourced, std::vector<std::string>{});
  // The check itself finds objects whose source was removed or emptied, operating points
  // included once their cpufreq has none.
  nlohmann::json edited = raw_;
  edited["shared_caches"][2].erase("source");
  edited["clusters"][1]["cpufreq"]["source"] = "";
  unsourced.clear();
  find_unsourced(edited, "", false, unsourced);
  EXPECT_THAT(unsourced, ::testing::Contains("/shared_caches/2"));
  EXPECT_THAT(unsourced, ::testing::Contains("/clusters/1/cpufreq"));
  EXPECT_THAT(unsourced, ::testing::Contains("/clusters/1/cpufreq/opps/0"));
  EXPECT_EQ(unsourced.size(), 2 + raw_["clusters"][1]["cpufreq"]["opps"].size());
}

// Two clusters of two CPUs, each cluster with its own L3; all four share the LLCC.
constexpr const char* kSplitL3 = R"({
  "schema": "bindersim.topology/1",
  "name": "split-l3",
  "description": "two L3s joined by a system cache",
  "clusters": [
    {"id": 0, "name": "little", "uarch": "a", "cpus": [0, 1], "max_freq_khz": 1000000,
     "capacity_dmips_mhz": 512, "source": "test",
     "private_caches": [{"level": 1, "size_kib": 32, "latency_ns": 2, "source": "test"},
                        {"level": 2, "size_kib": 256, "latency_ns": 8, "source": "test"}],
     "idle_states": [{"name": "wfi", "entry_latency_us": 1, "exit_latency_us": 1,
                      "min_residency_us": 1, "source": "test"}]},
    {"id": 1, "name": "big", "uarch": "b", "cpus": [2, 3], "max_freq_khz": 2000000,
     "capacity_dmips_mhz": 1024, "source": "test",
     "private_caches": [{"level": 1, "size_kib": 64, "latency_ns": 1, "source": "test"},
                        {"level": 2, "size_kib": 1024, "latency_ns": 5, "source": "test"}],
     "idle_states": [{"name": "wfi", "entry_latency_us": 1, "exit_latency_us": 1,
                      "min_residency_us": 1, "source": "test"},
                     {"name": "off", "entry_latency_us": 100, "exit_latency_us": 200,
                      "min_residency_us": 1000, "source": "test"}]}
  ],
  "shared_caches": [
    {"name": "l3a", "level": 3, "cpus": [0, 1], "size_kib": 1024, "latency_ns": 20, "source": "t"},
    {"name": "l3b", "level": 3, "cpus": [2, 3], "size_kib": 2048, "latency_ns": 25, "source": "t"},
    {"name": "llcc", "level": 4, "cpus": [0, 1, 2, 3], "size_kib": 4096, "latency_ns": 70,
     "source": "t"}
  ],
  "memory": {"latency_ns": 150, "source": "t"},
  "costs": {"context_switch_ref_ns": 1, "wakeup_ref_ns": 1, "ipi_latency_ns": 1,
            "binder_send_ref_ns": 1, "binder_receive_ref_ns": 1, "binder_free_ref_ns": 1,
            "thread_spawn_ns": 1, "line_bytes": 64, "cache_refs_per_ref_us": 1,
            "base_miss_ratio": 0, "source": "t"}
})";

Topology load_text(const std::string& text) {
  const JsonDocument document = JsonDocument::parse_text(text, "split-l3.json");
  return Topology::from_json(document.root());
}

TEST(SplitL3Test, TransferCostPicksTheNearestCommonLevel) {
  const Topology topology = load_text(kSplitL3);
  // Within a cluster the CPUs meet in their L3; across clusters only in the LLCC.
  EXPECT_EQ(topology.transfer_ns_per_line(0, 1), latency_of(topology, "l3a"));
  EXPECT_EQ(topology.transfer_ns_per_line(3, 2), latency_of(topology, "l3b"));
  EXPECT_EQ(topology.transfer_ns_per_line(0, 2), latency_of(topology, "llcc"));
  EXPECT_EQ(topology.transfer_ns_per_line(3, 1), latency_of(topology, "llcc"));
  EXPECT_EQ(topology.nearest_common_vertex(1, 3), vertex_named(topology, "llcc"));
  // Same CPU: its own L1.
  EXPECT_EQ(topology.transfer_ns_per_line(2, 2), latency_of(topology, "l1.cpu2"));
  // The first level a CPU shares is its cluster's L3, not the LLCC.
  EXPECT_EQ(topology.shared_fetch_ns_per_line(0), latency_of(topology, "l3a"));
  EXPECT_EQ(topology.shared_fetch_ns_per_line(3), latency_of(topology, "l3b"));
  EXPECT_TRUE(topology.shares_cache(0, 3));  // the LLCC is a cache
  EXPECT_EQ(topology.private_cache_bytes(2), 1024 * 1024);
  // Capacity: 512 x 1 GHz against 1024 x 2 GHz.
  EXPECT_EQ(topology.capacity(0), 256);
  EXPECT_EQ(topology.capacity(3), 1024);
  EXPECT_EQ(topology.cpu(2).idle_states.back().exit_latency_ns, 200'000);
}

TEST(SplitL3Test, TheDocumentHashIgnoresLayoutButNotValues) {
  const std::uint64_t hash = load_text(kSplitL3).document_hash();
  EXPECT_EQ(hash, document_hash(nlohmann::json::parse(kSplitL3)));
  // The same document laid out otherwise (one line, keys in another order) hashes alike.
  nlohmann::json value = nlohmann::json::parse(kSplitL3);
  EXPECT_EQ(load_text(value.dump()).document_hash(), hash);
  value["memory"]["latency_ns"] = 151;
  EXPECT_NE(load_text(value.dump()).document_hash(), hash);
}

TEST(SplitL3Test, WithoutASystemCacheTheClustersShareOnlyMemory) {
  nlohmann::json value = nlohmann::json::parse(kSplitL3);
  value["shared_caches"].erase(2);
  const JsonDocument document = JsonDocument::from_value(value, "split-l3.json");
  const Topology topology = Topology::from_json(document.root());
  // Across clusters the nearest common level is memory, which is not a shared cache.
  EXPECT_EQ(topology.transfer_ns_per_line(1, 2), latency_of(topology, "dram"));
  EXPECT_EQ(topology.nearest_common_vertex(1, 2), topology.memory_vertex());
  EXPECT_FALSE(topology.shares_cache(1, 2));
  EXPECT_TRUE(topology.shares_cache(0, 1));
  EXPECT_TRUE(topology.shares_cache(2, 2));
  EXPECT_EQ(topology.transfer_ns_per_line(2, 3), latency_of(topology, "l3b"));
}

TEST(MinimalTopologyTest, OneCpuWithoutSharedCachesFetchesFromMemory) {
  const std::string path = (kTestTopologiesDir / "minimal.json").string();
  const Topology topology = Topology::load(path, kTopologiesDir);
  ASSERT_EQ(topology.num_cpus(), 1);
  EXPECT_EQ(topology.capacity(0), 1024);
  EXPECT_EQ(topology.transfer_ns_per_line(0, 0), latency_of(topology, "l1.cpu0"));
  EXPECT_EQ(topology.shared_fetch_ns_per_line(0), latency_of(topology, "dram"));
  EXPECT_TRUE(topology.shares_cache(0, 0));
  EXPECT_EQ(topology.private_cache_bytes(0), 16 * 1024);
}

// Loader errors name the file and the JSON pointer of the offending value.

TEST_F(Sa8155pTest, WrongTypeNamesFileAndPointer) {
  const std::string error =
      error_after([](nlohmann::json& value) { value["clusters"][1]["max_freq_khz"] = "big"; });
  EXPECT_EQ(error, "topologies/x.json: /clusters/1/max_freq_khz: expected an integer, got \"big\"");
}

TEST_F(Sa8155pTest, NonPositiveLatencyIsRejected) {
  const std::string error = error_after(
      [](nlohmann::json& value) { value["clusters"][0]["private_caches"][0]["latency_ns"] = 0; });
  EXPECT_EQ(error,
            "topologies/x.json: /clusters/0/private_caches/0/latency_ns: expected a positive "
            "number, got 0");
}

TEST_F(Sa8155pTest, LatencyAboveAMillisecondPerLineIsRejected) {
  // A refill of the largest working set through every level must stay far from overflowing
  // the simulated clock.
  const std::string error =
      error_after([](nlohmann::json& value) { value["memory"]["latency_ns"] = 2e6; });
  EXPECT_EQ(error,
            "topologies/x.json: /memory/latency_ns: expected a number no larger than 1e+06, got "
            "2000000.0");
}

TEST_F(Sa8155pTest, CacheReferencesBeyondAnyCoreAreRejected) {
  // The counters of the longest run on the most CPUs must stay within 64 bits.
  const std::string error =
      error_after([](nlohmann::json& value) { value["costs"]["cache_refs_per_ref_us"] = 1e9; });
  EXPECT_EQ(error,
            "topologies/x.json: /costs/cache_refs_per_ref_us: expected a number no larger than "
            "100000, got 1000000000.0");
}

TEST_F(Sa8155pTest, MissingKeyNamesTheObject) {
  const std::string error =
      error_after([](nlohmann::json& value) { value["clusters"][2].erase("uarch"); });
  EXPECT_EQ(error, "topologies/x.json: /clusters/2: missing required key \"uarch\"");
}

TEST_F(Sa8155pTest, MissingSourceIsAnError) {
  const std::string error =
      error_after([](nlohmann::json& value) { value["memory"].erase("source"); });
  EXPECT_EQ(error, "topologies/x.json: /memory: missing required key \"source\"");
}

TEST_F(Sa8155pTest, MissingCostIsAnError) {
  const std::string error =
      error_after([](nlohmann::json& value) { value["costs"].erase("ipi_latency_ns"); });
  EXPECT_EQ(error, "topologies/x.json: /costs: missing required key \"ipi_latency_ns\"");
}

TEST_F(Sa8155pTest, UnknownKeySuggestsTheValidName) {
  // A misspelled required key is reported as unknown, with its correct spelling.
  const std::string error = error_after([](nlohmann::json& value) {
    nlohmann::json& cluster = value["clusters"][1];
    cluster["max_freq_mhz"] = cluster["max_freq_khz"];
    cluster.erase("max_freq_khz");
  });
  EXPECT_THAT(error, StartsWith("topologies/x.json: /clusters/1/max_freq_mhz: unknown key (did "
                                "you mean \"max_freq_khz\"?); valid keys: "));
}

TEST_F(Sa8155pTest, CpuInTwoClustersIsAnError) {
  const std::string error = error_after([](nlohmann::json& value) {
    value["clusters"][1]["cpus"] = nlohmann::json::array({3, 4, 5, 6});
  });
  EXPECT_EQ(error,
            "topologies/x.json: /clusters/1/cpus/0: CPU 3 is already in cluster 0 (\"silver\"); "
            "every CPU belongs to exactly one cluster");
}

TEST_F(Sa8155pTest, MissingCpuIsAnError) {
  const std::string error = error_after([](nlohmann::json& value) {
    value["clusters"][1]["cpus"] = nlohmann::json::array({4, 6});
  });
  EXPECT_EQ(error,
            "topologies/x.json: /clusters: CPU 5 is in no cluster (the 7 CPUs listed must have "
            "the ids 0..6, without gaps)");
}

TEST_F(Sa8155pTest, ACpuIdBeyondTheCountNamesTheGapAndTheIdsExpected) {
  // Eight CPUs, the prime one numbered 8: CPU 7 is missing, and the ids must be 0..7.
  const std::string error = error_after(
      [](nlohmann::json& value) { value["clusters"][2]["cpus"] = nlohmann::json::array({8}); });
  EXPECT_EQ(error,
            "topologies/x.json: /clusters: CPU 7 is in no cluster (the 8 CPUs listed must have "
            "the ids 0..7, without gaps)");
}

TEST_F(Sa8155pTest, ClusterIdsMustBeInOrder) {
  const std::string error =
      error_after([](nlohmann::json& value) { value["clusters"][1]["id"] = 2; });
  EXPECT_EQ(error,
            "topologies/x.json: /clusters/1/id: expected 1 (cluster ids are 0, 1, ... in order), "
            "got 2");
}

TEST_F(Sa8155pTest, BadSchemaIsAnError) {
  const std::string error =
      error_after([](nlohmann::json& value) { value["schema"] = "bindersim.topology/2"; });
  EXPECT_EQ(error,
            "topologies/x.json: /schema: expected \"bindersim.topology/1\", got "
            "\"bindersim.topology/2\"");
}

TEST_F(Sa8155pTest, WfiMustBeTheFirstIdleState) {
  const std::string error = error_after([](nlohmann::json& value) {
    nlohmann::json& states = value["clusters"][2]["idle_states"];
    std::swap(states[0], states[1]);
  });
  EXPECT_THAT(error, StartsWith("topologies/x.json: /clusters/2/idle_states/0/name: expected "
                                "\"wfi\""));
}

TEST_F(Sa8155pTest, IdleStatesMustGetDeeper) {
  const std::string error = error_after([](nlohmann::json& value) {
    value["clusters"][0]["idle_states"][1]["min_residency_us"] = 0.5;
  });
  EXPECT_THAT(error, StartsWith("topologies/x.json: /clusters/0/idle_states/1/min_residency_us: "
                                "expected at least 1 "));
}

TEST_F(Sa8155pTest, PositiveIdleTimesMustNotRoundToZeroNanoseconds) {
  // 0.0001 us is positive but 0 ns in the model: refused; 0.0005 us rounds to 1 ns.
  EXPECT_EQ(error_after([](nlohmann::json& value) {
              value["clusters"][0]["idle_states"][0]["exit_latency_us"] = 0.0001;
            }),
            "topologies/x.json: /clusters/0/idle_states/0/exit_latency_us: expected a positive "
            "number of at least 0.0005 (0.5 ns rounds to 1 ns), got 0.0001");
  EXPECT_EQ(error_after([](nlohmann::json& value) {
              value["clusters"][0]["idle_states"][0]["exit_latency_us"] = 0.0005;
              value["clusters"][0]["idle_states"][0]["min_residency_us"] = 0.0005;
            }),
            "");
}

TEST_F(Sa8155pTest, LowestOperatingPointIsBoundedBelowTheMaximum) {
  // A silver operating point at 1 kHz (of 1785600) made the CPU's speed zero there: the powersave
  // governor then divided by it. The lowest point is at least 1/100 of the maximum.
  const std::string error = error_after(
      [](nlohmann::json& value) { value["clusters"][0]["cpufreq"]["opps"][0]["freq_khz"] = 1; });
  EXPECT_EQ(error,
            "topologies/x.json: /clusters/0/cpufreq/opps/0/freq_khz: expected a frequency of at "
            "least 1/100 of max_freq_khz (1785600 kHz), got 1");
  EXPECT_EQ(error_after([](nlohmann::json& value) {
              value["clusters"][0]["cpufreq"]["opps"][0]["freq_khz"] = 17856;
            }),
            "");
}

TEST_F(Sa8155pTest, AnOperatingPointJustBelowAHundredthOfTheMaximumIsRejected) {
  // The bound is exact: 1/100 of 1785600 kHz is 17856 kHz, so one kHz less is too low.
  const std::string error = error_after([](nlohmann::json& value) {
    value["clusters"][0]["cpufreq"]["opps"][0]["freq_khz"] = 17855;
  });
  EXPECT_THAT(error,
              StartsWith("topologies/x.json: /clusters/0/cpufreq/opps/0/freq_khz: expected a "
                         "frequency of at least 1/100 of max_freq_khz"));
}

TEST_F(Sa8155pTest, PowerMayStayLevelButNeverFallsWithFrequency) {
  // An operating point may draw as much power as the one below it, but not any less: even one
  // unit below the lower point's power is refused at the higher point's power.
  const auto with_second_power = [this](double delta) {
    return error_after([delta](nlohmann::json& value) {
      auto& opps = value["clusters"][0]["cpufreq"]["opps"];
      opps[1]["power"] = opps[0]["power"].get<double>() + delta;
    });
  };
  EXPECT_EQ(with_second_power(0.0), "");
  EXPECT_THAT(
      with_second_power(-1.0),
      StartsWith("topologies/x.json: /clusters/0/cpufreq/opps/1/power: expected at least "));
  EXPECT_THAT(with_second_power(-1.0), HasSubstr("(power does not decrease with frequency)"));
}

TEST_F(Sa8155pTest, CpuIdsFitTheSchedulersCpuMasks) {
  // CPU sets are 64-bit masks: a CPU 64 was accepted, and a task pinned to CPU 0 could run on it
  // (a shift by 64 is undefined).
  const std::string error =
      error_after([](nlohmann::json& value) { value["clusters"][0]["cpus"][3] = 64; });
  EXPECT_EQ(error, "topologies/x.json: /clusters/0/cpus/3: expected an integer in [0, 63], got 64");
}

TEST_F(Sa8155pTest, PrivateCacheLevelsIncreaseOutward) {
  const std::string error = error_after(
      [](nlohmann::json& value) { value["clusters"][1]["private_caches"][1]["level"] = 1; });
  EXPECT_THAT(error, StartsWith("topologies/x.json: /clusters/1/private_caches/1/level: expected a "
                                "level above 1"));
}

TEST_F(Sa8155pTest, LatenciesIncreaseOutwardFromEveryCpu) {
  // An L3 faster than the silver L2 (6.7 ns) is rejected at the L3's latency.
  const std::string error =
      error_after([](nlohmann::json& value) { value["shared_caches"][0]["latency_ns"] = 5.0; });
  EXPECT_THAT(error, StartsWith("topologies/x.json: /shared_caches/0/latency_ns: expected a "
                                "latency above "));
  EXPECT_THAT(error, HasSubstr("\"l2.cpu0\""));
  // So is memory faster than the LLCC.
  const std::string memory_error =
      error_after([](nlohmann::json& value) { value["memory"]["latency_ns"] = 50.0; });
  EXPECT_THAT(memory_error, StartsWith("topologies/x.json: /memory/latency_ns: expected a "
                                       "latency above 60 ns"));
}

TEST_F(Sa8155pTest, SharedCacheCpusMustBeValid) {
  const std::string error = error_after([](nlohmann::json& value) {
    value["shared_caches"][1]["cpus"] = nlohmann::json::array({0, 1, 2, 3, 4, 5, 6, 8});
  });
  EXPECT_EQ(error,
            "topologies/x.json: /shared_caches/1/cpus/7: expected an integer in [0, 7], got 8");
}

TEST_F(Sa8155pTest, OuterCachesHoldEveryCpuOfTheInnerOnes) {
  // The LLCC leaving out CPU 7 would make the L3 lead to two different places.
  const std::string error = error_after([](nlohmann::json& value) {
    value["shared_caches"][1]["cpus"] = nlohmann::json::array({0, 1, 2, 3, 4, 5, 6});
  });
  EXPECT_EQ(error,
            "topologies/x.json: /shared_caches/1/cpus: missing CPU 7: it shares \"l3\" with CPU "
            "0, so it must reach the same outer caches");
}

TEST_F(Sa8155pTest, SharedCachesAreListedFromTheCpusOutward) {
  // A shared cache listed after the L3 (level 3) has a level of at least 3: the LLCC at level 2,
  // one below it, is refused at its level.
  const std::string error =
      error_after([](nlohmann::json& value) { value["shared_caches"][1]["level"] = 2; });
  EXPECT_EQ(error,
            "topologies/x.json: /shared_caches/1/level: expected a level of at least 3 (shared "
            "caches are listed from the CPUs outward), got 2");
}

TEST_F(Sa8155pTest, AnAllocatorPartIsAtMostTheCostItIsPartOf) {
  // The allocator's share of the send path may be the whole path but not one ns more; the
  // same holds for the share of the free path.
  const auto with_part = [this](const char* part, const char* whole, std::int64_t extra) {
    return error_after([=](nlohmann::json& value) {
      auto& costs = value["costs"];
      costs[part] = costs[whole].get<std::int64_t>() + extra;
    });
  };
  EXPECT_EQ(with_part("binder_alloc_locked_ref_ns", "binder_send_ref_ns", 0), "");
  EXPECT_THAT(with_part("binder_alloc_locked_ref_ns", "binder_send_ref_ns", 1),
              StartsWith("topologies/x.json: /costs/binder_alloc_locked_ref_ns: expected at most "
                         "binder_send_ref_ns ("));
  EXPECT_THAT(with_part("binder_free_locked_ref_ns", "binder_free_ref_ns", 1),
              StartsWith("topologies/x.json: /costs/binder_free_locked_ref_ns: expected at most "
                         "binder_free_ref_ns ("));
}

TEST(TopologyLoadTest, ErrorsInAFileNameThePathAsGiven) {
  const std::string path = (kTestTopologiesDir / "cpu-in-two-clusters.json").string();
  try {
    static_cast<void>(Topology::load(path, kTopologiesDir));
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_EQ(std::string(error.what()),
              path +
                  ": /clusters/1/cpus/0: CPU 1 is already in cluster 0 (\"only\"); every CPU "
                  "belongs to exactly one cluster");
  }
}

TEST(TopologyLoadTest, ByNameLooksInTheTopologiesDirectory) {
  // A name resolves to <dir>/<name>.json, so its errors name that file.
  const std::string file = (kTestTopologiesDir / "bad-schema.json").string();
  try {
    static_cast<void>(Topology::load("bad-schema", kTestTopologiesDir));
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_EQ(std::string(error.what()),
              file + ": /schema: expected \"bindersim.topology/1\", got \"bindersim.topology/2\"");
  }
  EXPECT_EQ(Topology::load("minimal", kTestTopologiesDir).name(), "minimal");
}

TEST(TopologyLoadTest, UnknownNameListsTheAvailableOnes) {
  try {
    static_cast<void>(Topology::load("minimol", kTestTopologiesDir));
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_EQ(std::string(error.what()),
              "unknown topology \"minimol\" (did you mean \"minimal\"?); available topologies: "
              "bad-schema, cpu-in-two-clusters, minimal");
  }
  EXPECT_EQ(Topology::available(kTestTopologiesDir),
            (std::vector<std::string>{"bad-schema", "cpu-in-two-clusters", "minimal"}));
}

TEST(TopologyLoadTest, MissingFileIsAConfigError) {
  EXPECT_THROW(static_cast<void>(Topology::load("no/such/file.json", kTopologiesDir)), ConfigError);
}

// Printing.

std::vector<std::string> split_words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

TEST_F(Sa8155pTest, PrintShowsClustersCachesCostsAndTheTransferMatrix) {
  std::ostringstream out;
  print_topology(topology_, out);
  const std::string text = out.str();
  EXPECT_THAT(text, StartsWith("Topology sa8155p\n"));
  EXPECT_THAT(text, HasSubstr(topology_.description()));
  for (const char* piece :
       {"silver", "gold", "prime", "cortex-a55", "0-3", "4-6", "1785.6", "core-pc", "909", "3934",
        "l3", "llcc", "dram", "2 MiB", "context_switch_ref_ns", "thread_spawn_ns",
        "binder_alloc_locked_ref_ns", "page_reclaim_ref_ns", "Operating points"}) {
    EXPECT_THAT(text, HasSubstr(piece));
  }
  // Numbers as the file gives them: the miss ratio to its last digit.
  EXPECT_THAT(text, HasSubstr(" " + raw_["costs"]["base_miss_ratio"].dump() + "\n"));
  // Each cluster's lowest operating point opens its rows, with the transition latency.
  {
    const nlohmann::json& silver = raw_["clusters"][0]["cpufreq"];
    std::istringstream lines(text.substr(text.find("Operating points")));
    std::string line;
    while (std::getline(lines, line) && !line.starts_with("  silver")) {
    }
    const std::vector<std::string> words = split_words(line);
    ASSERT_EQ(words.size(), 4u) << line;
    EXPECT_DOUBLE_EQ(std::stod(words[1]), silver["opps"][0]["freq_khz"].get<double>() / 1000.0);
    EXPECT_DOUBLE_EQ(std::stod(words[2]), silver["opps"][0]["power"].get<double>());
    EXPECT_DOUBLE_EQ(std::stod(words[3]), silver["transition_latency_us"].get<double>());
  }

  // The matrix: a header of cpu0..cpu7, then one row per writer whose numbers are the costs.
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line) && !line.starts_with("  from\\to")) {
  }
  std::vector<std::string> expected_header{"from\\to"};
  for (int cpu = 0; cpu < 8; ++cpu) expected_header.push_back("cpu" + std::to_string(cpu));
  ASSERT_EQ(split_words(line), expected_header);
  for (int from = 0; from < 8; ++from) {
    ASSERT_TRUE(std::getline(lines, line));
    const std::vector<std::string> words = split_words(line);
    ASSERT_EQ(words.size(), 9u) << line;
    EXPECT_EQ(words[0], "cpu" + std::to_string(from));
    for (int to = 0; to < 8; ++to) {
      EXPECT_NEAR(std::stod(words[static_cast<std::size_t>(to) + 1]),
                  topology_.transfer_ns_per_line(from, to), 1e-3);
    }
  }
}

TEST_F(Sa8155pTest, DotHasEveryVertexEdgeAndClusterAndIsDeterministic) {
  std::ostringstream out;
  write_dot(topology_, out);
  const std::string dot = out.str();
  EXPECT_THAT(dot, StartsWith("digraph \"sa8155p\" {\n"));
  EXPECT_TRUE(dot.ends_with("}\n"));
  const CacheGraph& graph = topology_.graph();
  for (std::size_t vertex = 0; vertex < boost::num_vertices(graph); ++vertex) {
    EXPECT_THAT(dot, HasSubstr("\"" + graph[vertex].name + "\" [shape="));
  }
  for (int cluster = 0; cluster < 3; ++cluster) {
    EXPECT_THAT(dot, HasSubstr("subgraph \"cluster_" + std::to_string(cluster) + "\""));
  }
  EXPECT_THAT(dot, HasSubstr("\"cpu7\" -> \"l1.cpu7\""));
  EXPECT_THAT(dot, HasSubstr("\"l2.cpu0\" -> \"l3\""));
  EXPECT_THAT(dot, HasSubstr("\"llcc\" -> \"dram\" [label=\"+"));
  std::size_t arrows = 0;
  for (auto at = dot.find("->"); at != std::string::npos; at = dot.find("->", at + 2)) ++arrows;
  EXPECT_EQ(arrows, boost::num_edges(graph));
  std::ostringstream again;
  write_dot(Topology::load("sa8155p", kTopologiesDir), again);
  EXPECT_EQ(again.str(), dot);
}

}  // namespace
}  // namespace bindersim::topology
