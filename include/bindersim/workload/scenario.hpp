// Scenario format v1 (docs/scenario-format.md): processes with looper pools and services,
// clients with their call loops, kernel options and the topology. Loaded strictly.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "bindersim/binder/driver.hpp"
#include "bindersim/sched/scheduler.hpp"
#include "bindersim/sched/task.hpp"
#include "bindersim/workload/overrides.hpp"

namespace bindersim {
class JsonNode;
}
namespace bindersim::selectors {
class Selector;
class SelectorRegistry;
}  // namespace bindersim::selectors
namespace bindersim::topology {
class Topology;
}

namespace bindersim::workload {

// A duration or amount of work drawn per use: a constant, uniform in [lo, hi], or
// exponential with a mean. Nanoseconds.
struct Quantity {
  enum class Kind : std::uint8_t { kConstant, kUniform, kExponential };
  Kind kind = Kind::kConstant;
  std::int64_t a = 0;  // constant value, uniform low, or exponential mean
  std::int64_t b = 0;  // uniform high
};

// Where a call goes: one process, or a uniformly random one of several.
struct TargetChoice {
  std::vector<int> processes;  // indices into Scenario::processes
  int node = 0;                // index into the target process's nodes (same name in each)
  std::string node_name;
};

struct Step;
using Steps = std::vector<Step>;

struct Step {
  enum class Op : std::uint8_t { kCompute, kSleep, kCall, kThread };
  Op op = Op::kCompute;
  Quantity amount;  // compute: reference ns; sleep: ns
  // call
  TargetChoice target;
  std::int64_t payload_bytes = 0;
  bool oneway = false;
  // thread: a new thread runs `steps` and exits; the creator waits for it (pthread_join)
  sched::Policy policy = sched::Policy::kNormal;
  int nice = 0;
  int rt_priority = 0;
  std::int64_t create_ref_ns = 0;  // creator's pthread_create work
  std::int64_t start_ref_ns = 0;   // new thread's start-up work before its first step
  std::int64_t exit_ref_ns = 0;    // new thread's exit work
  std::shared_ptr<Steps> steps;
  std::string pointer;  // JSON pointer of the step, for errors found while running
};

struct NodeSpec {
  binder::NodeConfig config;
  Steps handler;  // run by the looper for each transaction, then the reply
  std::int64_t reply_bytes = 0;
};

// CPU ids read from the scenario, with their JSON pointer: they are checked against the topology
// when the run starts, which the reader does not know.
struct CpuList {
  std::vector<int> cpus;  // empty: every CPU
  std::string pointer;
};

struct ProcessSpec {
  std::string name;
  int max_threads = 15;
  bool start_thread_pool = true;
  std::int64_t looper_working_set_bytes = 0;
  std::int64_t buffer_space_bytes = binder::AllocatorConfig{}.space_bytes;
  CpuList cpuset;  // the process's cpuset: every thread of it, loopers included, runs only there
  bool free_before_reply = false;  // binder::ProcessConfig::free_before_reply
  // How its threads' `thread` steps create their thread. false (the calibrated model): in the
  // step's class, placed by that class's wakeup placement from the creator's CPU. true (bionic's
  // pthread_create()): clone() in the creator's class, placed by fork balancing, then given the
  // step's class by the creator (__init_thread(): sched_setscheduler()).
  bool bionic_thread_creation = false;
  std::vector<NodeSpec> nodes;
};

// A thread that loops over `iteration`: a client (its calls are measured, and the run ends when
// every client has done its iterations) or a background task (it loops until the end).
struct ClientSpec {
  std::string name;
  int process = 0;  // -1: a background task outside any binder process (no calls)
  sched::Policy policy = sched::Policy::kNormal;
  int nice = 0;
  int rt_priority = 0;
  std::int64_t working_set_bytes = 0;
  std::int64_t start_ns = 0;
  std::int64_t iterations = 1;  // clients only; background tasks loop forever
  CpuList affinity;             // sched_setaffinity(), within the process's cpuset
  Steps iteration;
};

// One selector's parameters from "selector_params", kept with where they came from so that a
// selector built from them reports a bad value at its file and pointer.
struct SelectorParams {
  nlohmann::json value;
  std::string file;
  std::string pointer;
};

struct KernelSpec {
  std::string placement = "mainline";
  sched::SchedTunables sched;  // governor, balancing and clamp options
  binder::PriorityInheritance inheritance = binder::PriorityInheritance::kAndroid;
  std::string selector = "fifo";
  // "selector_params": parameters by selector name, each checked by its factory on reading.
  // They go to the selector a run uses, whether the scenario or an option chose it.
  std::map<std::string, SelectorParams> selector_params;
  binder::LockKind alloc_lock = binder::LockKind::kMutex;
  bool install_pages_locked = true;  // "alloc_page_install": "locked" or "unlocked"
  binder::MemoryPressure memory_pressure;
};

struct Scenario {
  std::string name;
  std::string description;
  std::string file;  // where it was loaded from (for messages)
  // document_hash() of the scenario document as read, before `overrides`: the two identify
  // what a run was made from (a result's provenance).
  std::uint64_t document_hash = 0;
  // Applied in order: by load_scenario(), but those of topology values (is_topology_path()) by
  // load_topology().
  std::vector<Override> overrides;
  // `file` for messages about the document: " (with --set)" after it when overrides changed
  // the scenario document (not only topology values), as the parser's messages have it.
  std::string source() const;
  std::string topology;  // name or path
  std::uint64_t seed = 1;
  std::int64_t time_limit_ns = 0;  // stop the simulation here even if clients are not done
  // Extra report printed beside bindersim's: "" or "binder-throughput" (binderThroughputTest's
  // own terms).
  std::string report;
  KernelSpec kernel;
  std::vector<ProcessSpec> processes;
  std::vector<ClientSpec> clients;
  std::vector<ClientSpec> background;
};

// The scenario's topology as Topology::load takes it: a name as written, or a relative path
// resolved against the directory of the scenario file.
std::string topology_reference(const Scenario& scenario);
// The file of the scenario's topology (a name looked up in `topologies_dir`, or a path). A name
// or path that leads to no file is a ConfigError at the scenario's "/topology".
std::filesystem::path topology_file(const Scenario& scenario,
                                    const std::filesystem::path& topologies_dir);
// Loads the scenario's topology from topology_file(), with the scenario's overrides of topology
// values applied (is_topology_path()); an error inside the topology file names that file.
topology::Topology load_topology(const Scenario& scenario,
                                 const std::filesystem::path& topologies_dir);
// Loads the topology `name_or_path` as Topology::load() does, with the overrides of topology
// values among `overrides` applied (is_topology_path(); the others are not its).
topology::Topology load_topology(const std::string& name_or_path,
                                 const std::filesystem::path& topologies_dir,
                                 const std::vector<Override>& overrides);

// The selector `name` (a --selector, or the scenario's), built with the scenario's parameters
// for it if it has any; an unknown name is a ConfigError listing the valid ones.
std::unique_ptr<selectors::Selector> create_selector(const selectors::SelectorRegistry& registry,
                                                     const std::string& name,
                                                     const KernelSpec& kernel);

// Whether the dotted override `path` is kernel.selector_params or lies inside it.
bool within_selector_params(std::string_view path);

// Of each selector a comparison runs, the distinct non_default_params() its runs take across
// the values of one --vary or sweep axis within kernel.selector_params.
using ParamsBySelector = std::map<std::string, std::set<std::string>>;
// The names of those selectors joined by ", " when none of them runs with more than one set of
// parameters, so that the values would give runs that are alike; nullopt otherwise (or when
// there are none).
std::optional<std::string> unchanged_selectors(const ParamsBySelector& params);

// Parses a scenario document; every error is a ConfigError naming the file and JSON pointer.
// Selector names are checked against `selectors`.
Scenario parse_scenario(const JsonNode& root, const selectors::SelectorRegistry& selectors);
// Loads `name_or_path`: a file path, or a name looked up as <scenarios_dir>/<name>.json.
// `overrides` (--set) are applied to the document before it is parsed, so they are checked
// as strictly as the file.
Scenario load_scenario(const std::string& name_or_path, const std::filesystem::path& scenarios_dir,
                       const selectors::SelectorRegistry& selectors,
                       const std::vector<Override>& overrides = {});

}  // namespace bindersim::workload
