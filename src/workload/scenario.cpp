#include "bindersim/workload/scenario.hpp"

#include <algorithm>
#include <array>

#include "bindersim/common/data_file.hpp"
#include "bindersim/common/error.hpp"
#include "bindersim/common/hash.hpp"
#include "bindersim/common/json_reader.hpp"
#include "bindersim/sched/placement.hpp"
#include "bindersim/selectors/registry.hpp"
#include "bindersim/stats/result.hpp"
#include "bindersim/topology/topology.hpp"

namespace bindersim::workload {
namespace {

constexpr std::int64_t kMaxNs = std::int64_t{1} << 50;  // about 13 days: a sane upper bound
// Reference work of one step: at most 1000 s. The scheduler turns reference work into time on a
// CPU in int64 nanoseconds times 1024000, which this bound keeps from overflowing.
constexpr std::int64_t kMaxWorkRefNs = 1'000'000'000'000;
// An exponential draw reaches about 37 times its mean (-ln 2^-53): means are bounded 64 times
// below the amount's maximum.
constexpr std::int64_t kExponentialHeadroom = 64;

// Thread steps inside thread steps: the parser and the run recurse once per level, so the
// depth is bounded far below the stack's limit (real workloads nest one or two).
constexpr int kMaxThreadNesting = 64;

// A scenario's objects may say where their numbers come from; when they do, as a topology's
// must (check_source()).
void read_optional_source(ObjectReader& reader) {
  if (const auto source = reader.optional("source")) check_source(*source);
}

// An amount of time (sleeps, up to kMaxNs) or reference work (up to kMaxWorkRefNs): every value
// it can take is at most `max`.
Quantity parse_quantity(const JsonNode& node, std::int64_t max) {
  Quantity q;
  if (!node.is_object()) {
    q.a = node.as_int(0, max);
    return q;
  }
  ObjectReader reader(node);
  if (auto uniform = reader.optional("uniform")) {
    const auto bounds = uniform->items();
    if (bounds.size() != 2) uniform->fail_expected("an array [low, high]");
    q.kind = Quantity::Kind::kUniform;
    q.a = bounds[0].as_int(0, max);
    q.b = bounds[1].as_int(q.a, max);
  } else if (auto mean = reader.optional("exponential_mean")) {
    q.kind = Quantity::Kind::kExponential;
    q.a = mean->as_int(0, max / kExponentialHeadroom);
  } else {
    node.fail("expected a number or an object with \"uniform\" or \"exponential_mean\"");
  }
  reader.finish();
  return q;
}

sched::Policy parse_policy(const JsonNode& node) {
  return node.as_enum({"normal", "fifo"}) == "fifo" ? sched::Policy::kFifo : sched::Policy::kNormal;
}

class ScenarioParser {
 public:
  explicit ScenarioParser(Scenario& scenario) : scenario_(scenario) {}

  int process_index(const JsonNode& node) const {
    const std::string name = node.as_string();
    for (std::size_t i = 0; i < scenario_.processes.size(); ++i) {
      if (scenario_.processes[i].name == name) return static_cast<int>(i);
    }
    std::vector<std::string> names;
    for (const auto& p : scenario_.processes) names.push_back(p.name);
    node.fail("unknown process " + quote_text(name) + did_you_mean(name, names) +
              "; valid processes: " + name_list(names));
  }

  TargetChoice parse_target(const JsonNode& target, const std::optional<JsonNode>& node) const {
    TargetChoice choice;
    if (target.is_array()) {
      for (const auto& item : target.items()) choice.processes.push_back(process_index(item));
      if (choice.processes.empty()) target.fail_expected("a non-empty list of processes");
    } else {
      choice.processes.push_back(process_index(target));
    }
    if (!node) {
      // Without "node" the call goes to the first node: every target must have one.
      for (int proc : choice.processes) {
        const auto& spec = scenario_.processes[static_cast<std::size_t>(proc)];
        if (spec.nodes.empty())
          target.fail("process " + quote_text(spec.name) + " has no nodes to call");
      }
    }
    if (node) {
      choice.node_name = node->as_string();
      for (int proc : choice.processes) {
        const auto& nodes = scenario_.processes[static_cast<std::size_t>(proc)].nodes;
        auto it = std::find_if(nodes.begin(), nodes.end(), [&](const NodeSpec& n) {
          return n.config.name == choice.node_name;
        });
        if (it == nodes.end()) {
          std::vector<std::string> names;
          for (const auto& n : nodes) names.push_back(n.config.name);
          node->fail("process " +
                     quote_text(scenario_.processes[static_cast<std::size_t>(proc)].name) +
                     " has no node " + quote_text(choice.node_name) +
                     did_you_mean(choice.node_name, names) + "; valid nodes: " + name_list(names));
        }
        const int index = static_cast<int>(it - nodes.begin());
        if (proc != choice.processes.front() && index != choice.node) {
          node->fail("node " + quote_text(choice.node_name) +
                     " must have the same position in every target");
        }
        choice.node = index;
      }
    }
    return choice;
  }

  // `depth`: thread steps around these steps (0 for an iteration or a handler).
  Steps parse_steps(const JsonNode& node, int depth = 0) const {
    if (depth > kMaxThreadNesting) {
      node.fail("thread steps nest more than " + std::to_string(kMaxThreadNesting) +
                " deep (a thread that creates a thread that ...)");
    }
    Steps steps;
    for (const auto& item : node.items()) steps.push_back(parse_step(item, depth));
    return steps;
  }

  Step parse_step(const JsonNode& node, int depth) const {
    ObjectReader reader(node);
    Step step;
    step.pointer = node.pointer();
    const std::string op = reader.required("op").as_enum({"compute", "sleep", "call", "thread"});
    if (op == "compute") {
      step.op = Step::Op::kCompute;
      step.amount = parse_quantity(reader.required("ref_ns"), kMaxWorkRefNs);
    } else if (op == "sleep") {
      step.op = Step::Op::kSleep;
      step.amount = parse_quantity(reader.required("ns"), kMaxNs);
    } else if (op == "call") {
      step.op = Step::Op::kCall;
      const auto target = reader.required("target");
      step.target = parse_target(target, reader.optional("node"));
      step.payload_bytes = reader.int_or("payload_bytes", 0);
      if (step.payload_bytes < 0 || step.payload_bytes > (1 << 20)) {
        reader.required("payload_bytes").fail_expected("an integer in [0, 1048576]");
      }
      step.oneway = reader.bool_or("oneway", false);
    } else {
      step.op = Step::Op::kThread;
      step.policy =
          reader.has("policy") ? parse_policy(reader.required("policy")) : sched::Policy::kNormal;
      if (auto nice = reader.optional("nice")) step.nice = static_cast<int>(nice->as_int(-20, 19));
      if (auto prio = reader.optional("priority")) {
        step.rt_priority = static_cast<int>(prio->as_int(1, 99));
      }
      if (step.policy == sched::Policy::kFifo && step.rt_priority == 0) {
        node.fail("a \"fifo\" thread needs \"priority\" (1..99)");
      }
      step.create_ref_ns = reader.required("create_ref_ns").as_int(0, kMaxWorkRefNs);
      step.start_ref_ns = reader.required("start_ref_ns").as_int(0, kMaxWorkRefNs);
      step.exit_ref_ns = reader.required("exit_ref_ns").as_int(0, kMaxWorkRefNs);
      step.steps = std::make_shared<Steps>(parse_steps(reader.required("steps"), depth + 1));
    }
    reader.finish();
    return step;
  }

  static CpuList parse_cpus(const JsonNode& node) {
    CpuList list;
    list.pointer = node.pointer();
    for (const auto& cpu : node.items()) {
      const int id = static_cast<int>(cpu.as_int(0, 63));
      if (std::find(list.cpus.begin(), list.cpus.end(), id) != list.cpus.end()) {
        cpu.fail("CPU " + std::to_string(id) + " given twice");
      }
      list.cpus.push_back(id);
    }
    if (list.cpus.empty()) node.fail_expected("a non-empty list of CPUs");
    return list;
  }

  ProcessSpec parse_process_header(const JsonNode& node) const {
    ObjectReader reader(node);
    ProcessSpec spec;
    spec.name = reader.required("name").as_name();
    // Range-checked as int64 before narrowing, so that 2^32 + 5 is not read as 5.
    if (auto max_threads = reader.optional("max_threads")) {
      spec.max_threads = static_cast<int>(max_threads->as_int(0, 1000));
    }
    spec.start_thread_pool = reader.bool_or("start_thread_pool", true);
    spec.free_before_reply = reader.bool_or("free_before_reply", false);
    if (auto creation = reader.optional("thread_creation")) {
      spec.bionic_thread_creation = creation->as_enum({"direct", "bionic"}) == "bionic";
    }
    if (auto ws = reader.optional("looper_working_set_bytes")) {
      spec.looper_working_set_bytes = ws->as_int(0, std::int64_t{1} << 32);
    }
    if (auto space = reader.optional("buffer_space_bytes")) {
      // The driver caps the mapping at 4 MiB; the space is whole pages.
      spec.buffer_space_bytes =
          space->as_int(binder::AllocatorConfig{}.page_bytes, binder::kMaxAllocatorSpaceBytes);
      if (spec.buffer_space_bytes % binder::AllocatorConfig{}.page_bytes != 0) {
        space->fail_expected("a multiple of the page size (4096)");
      }
    }
    if (auto cpuset = reader.optional("cpuset")) spec.cpuset = parse_cpus(*cpuset);
    if (auto nodes = reader.optional("nodes")) {
      for (const auto& item : nodes->items()) {
        ObjectReader node_reader(item);
        NodeSpec n;
        const JsonNode name = node_reader.required("name");
        n.config.name = name.as_name();
        for (const NodeSpec& other : spec.nodes) {
          if (other.config.name == n.config.name) {
            name.fail("duplicate node name " + quote_text(n.config.name) + " in process " +
                      quote_text(spec.name));
          }
        }
        n.config.inherit_rt = node_reader.bool_or("inherit_rt", true);
        if (auto min_nice = node_reader.optional("min_nice")) {
          n.config.min_nice = static_cast<int>(min_nice->as_int(-20, 19));
        }
        if (auto reply = node_reader.optional("reply_bytes")) {
          n.reply_bytes = reply->as_int(0, 1 << 20);
        }
        node_reader.optional("handler");  // parsed once every process is known
        node_reader.finish();
        spec.nodes.push_back(std::move(n));
      }
    } else {
      spec.nodes.push_back(NodeSpec{binder::NodeConfig{"service", true, 19}, {}, 0});
    }
    read_optional_source(reader);
    reader.finish();
    return spec;
  }

  void parse_handlers(const JsonNode& node, ProcessSpec& spec) const {
    if (!node.raw().contains("nodes")) return;
    const auto items = node.child("nodes").items();
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (items[i].raw().contains("handler")) {
        spec.nodes[i].handler = parse_steps(items[i].child("handler"));
      }
    }
  }

  static bool contains_call(const Steps& steps) {
    for (const auto& step : steps) {
      if (step.op == Step::Op::kCall) return true;
      if (step.steps && contains_call(*step.steps)) return true;
    }
    return false;
  }

  ClientSpec parse_client(const JsonNode& node, bool background) const {
    ObjectReader reader(node);
    ClientSpec c;
    c.name = reader.required("name").as_name();
    if (background) {
      const auto process = reader.optional("process");
      c.process = process ? process_index(*process) : -1;
    } else {
      c.process = process_index(reader.required("process"));
    }
    if (auto policy = reader.optional("policy")) c.policy = parse_policy(*policy);
    if (auto nice = reader.optional("nice")) c.nice = static_cast<int>(nice->as_int(-20, 19));
    if (auto prio = reader.optional("priority"))
      c.rt_priority = static_cast<int>(prio->as_int(1, 99));
    if (c.policy == sched::Policy::kFifo && c.rt_priority == 0) {
      node.fail("a \"fifo\" client needs \"priority\" (1..99)");
    }
    if (auto ws = reader.optional("working_set_bytes")) {
      c.working_set_bytes = ws->as_int(0, std::int64_t{1} << 32);
    }
    if (auto start = reader.optional("start_ns")) c.start_ns = start->as_int(0, kMaxNs);
    if (auto affinity = reader.optional("affinity")) c.affinity = parse_cpus(*affinity);
    if (!background) c.iterations = reader.required("iterations").as_int(1, std::int64_t{1} << 40);
    const auto iteration = reader.required("iteration");
    c.iteration = parse_steps(iteration);
    if (c.iteration.empty()) iteration.fail_expected("at least one step");
    if (c.process < 0 && contains_call(c.iteration)) {
      iteration.fail("a background task without \"process\" cannot make calls");
    }
    read_optional_source(reader);
    reader.finish();
    return c;
  }

 private:
  Scenario& scenario_;
};

// "selector_params": an object of parameter objects by selector name. Each is checked now by
// building the selector from it, so that a bad parameter is reported when the scenario is read,
// for every selector named, the one the run uses or not.
std::map<std::string, SelectorParams> read_selector_params(
    const JsonNode& node, const selectors::SelectorRegistry& selectors) {
  ObjectReader reader(node);  // its keys are the registered selectors' names
  std::map<std::string, SelectorParams> out;
  for (const std::string& name : selectors.names()) {
    if (const auto params = reader.optional(name)) {
      selectors.create(name, &*params);
      out.emplace(name, SelectorParams{params->raw(), params->file(), params->pointer()});
    }
  }
  reader.finish();
  return out;
}

}  // namespace

bool within_selector_params(std::string_view path) {
  constexpr std::string_view kParams = "kernel.selector_params";
  return path.starts_with(kParams) &&
         (path.size() == kParams.size() || path[kParams.size()] == '.');
}

std::optional<std::string> unchanged_selectors(const ParamsBySelector& params) {
  const auto changed = [](const auto& entry) { return entry.second.size() > 1; };
  if (params.empty() || std::any_of(params.begin(), params.end(), changed)) return std::nullopt;
  std::vector<std::string> names;
  for (const auto& entry : params) names.push_back(entry.first);
  return name_list(names);
}

std::unique_ptr<selectors::Selector> create_selector(const selectors::SelectorRegistry& registry,
                                                     const std::string& name,
                                                     const KernelSpec& kernel) {
  const auto it = kernel.selector_params.find(name);
  if (it == kernel.selector_params.end()) return registry.create(name);
  const SelectorParams& params = it->second;
  const JsonNode node(params.value, std::make_shared<const std::string>(params.file),
                      params.pointer);
  return registry.create(name, &node);
}

Scenario parse_scenario(const JsonNode& root, const selectors::SelectorRegistry& selectors) {
  Scenario scenario;
  scenario.file = root.file();
  scenario.document_hash = bindersim::document_hash(root.raw());
  ObjectReader reader(root);
  const auto schema = reader.required("schema");
  if (schema.as_string() != "bindersim.scenario/1") {
    schema.fail_expected("\"bindersim.scenario/1\"");
  }
  scenario.name = reader.required("name").as_name();
  scenario.description = reader.string_or("description", "");
  read_optional_source(reader);
  const auto topology = reader.required("topology");
  scenario.topology = topology.as_string();
  if (scenario.topology.empty()) {
    topology.fail_expected("a topology name or the path of a topology file");
  }
  if (auto seed = reader.optional("seed")) {
    scenario.seed = seed->as_uint64();
  }
  // Bounded before the conversion to nanoseconds, which must not overflow int64.
  if (auto report = reader.optional("report"))
    scenario.report = report->as_enum({"binder-throughput"});
  const auto time_limit = reader.optional("time_limit_s");
  const double time_limit_s = time_limit ? time_limit->as_number(1e-9, 1e6) : 3600.0;
  scenario.time_limit_ns = std::max<std::int64_t>(1, static_cast<std::int64_t>(time_limit_s * 1e9));

  if (auto kernel = reader.optional("kernel")) {
    ObjectReader k(*kernel);
    if (auto placement = k.optional("placement")) {
      const auto names = sched::placement_names();
      std::vector<std::string_view> valid(names.begin(), names.end());
      scenario.kernel.placement = placement->as_enum(valid);
    }
    if (auto inheritance = k.optional("priority_inheritance")) {
      scenario.kernel.inheritance = inheritance->as_enum({"android", "upstream"}) == "upstream"
                                        ? binder::PriorityInheritance::kUpstream
                                        : binder::PriorityInheritance::kAndroid;
    }
    if (auto selector = k.optional("selector")) {
      const auto names = selectors.names();
      std::vector<std::string_view> valid(names.begin(), names.end());
      scenario.kernel.selector = selector->as_enum(valid);
    }
    if (auto params = k.optional("selector_params")) {
      scenario.kernel.selector_params = read_selector_params(*params, selectors);
    }
    sched::SchedTunables& tunables = scenario.kernel.sched;
    if (auto governor = k.optional("cpufreq_governor")) {
      const std::string name = governor->as_enum(stats::kGovernorNames);
      const auto index =
          std::find(stats::kGovernorNames.begin(), stats::kGovernorNames.end(), name) -
          stats::kGovernorNames.begin();
      tunables.governor = static_cast<sched::Governor>(index);  // the same order
    }
    if (auto rate_limit = k.optional("schedutil_rate_limit_us")) {
      tunables.schedutil_rate_limit_ns = rate_limit->as_int(0, 1'000'000) * engine::kMicrosecond;
    }
    if (auto clamp = k.optional("sched_util_clamp_min_rt_default")) {
      tunables.rt_uclamp_min = static_cast<int>(clamp->as_int(0, 1024));
    }
    if (auto lock = k.optional("alloc_lock")) {
      scenario.kernel.alloc_lock = lock->as_enum({"mutex", "spinlock"}) == "spinlock"
                                       ? binder::LockKind::kSpinlock
                                       : binder::LockKind::kMutex;
    }
    if (auto install = k.optional("alloc_page_install")) {
      scenario.kernel.install_pages_locked = install->as_enum({"locked", "unlocked"}) == "locked";
    }
    if (auto pressure = k.optional("memory_pressure")) {
      ObjectReader m(*pressure);
      binder::MemoryPressure& mp = scenario.kernel.memory_pressure;
      mp.scan_interval_ns =
          m.required("scan_interval_us").as_int(1, 60'000'000) * engine::kMicrosecond;
      if (auto pages = m.optional("pages_per_scan")) {
        mp.pages_per_scan = static_cast<int>(pages->as_int(1, 1 << 20));
      }
      read_optional_source(m);
      m.finish();
    }
    tunables.newidle_balance = k.bool_or("newidle_balance", tunables.newidle_balance);
    tunables.periodic_balance = k.bool_or("periodic_balance", tunables.periodic_balance);
    tunables.misfit_migration = k.bool_or("misfit_migration", tunables.misfit_migration);
    tunables.util_est = k.bool_or("util_est", tunables.util_est);
    if (auto carry = k.optional("vruntime_across_rt")) {
      tunables.normalise_vruntime_across_rt =
          carry->as_enum({"clamped", "normalised"}) == "normalised";
    }
    if (auto clock = k.optional("pelt_clock")) {
      tunables.scaled_pelt_clock = clock->as_enum({"wall", "scaled"}) == "scaled";
    }
    if (auto wakeup = k.optional("idle_wakeup")) {
      tunables.idle_wakeup_after_entry = wakeup->as_enum({"exit", "after_entry"}) == "after_entry";
    }
    read_optional_source(k);
    k.finish();
  }

  ScenarioParser parser(scenario);
  const auto processes = reader.required("processes");
  const auto process_items = processes.items();
  if (process_items.empty()) processes.fail_expected("at least one process");
  for (const auto& item : process_items) {
    ProcessSpec spec = parser.parse_process_header(item);
    for (const auto& other : scenario.processes) {
      if (other.name == spec.name)
        item.child("name").fail("duplicate process name " + quote_text(spec.name));
    }
    scenario.processes.push_back(std::move(spec));
  }
  for (std::size_t i = 0; i < process_items.size(); ++i) {
    parser.parse_handlers(process_items[i], scenario.processes[i]);
  }
  // Clients and background tasks name their threads in results and traces: one name each.
  const auto check_unique = [&](const JsonNode& item, const ClientSpec& spec) {
    for (const auto* list : {&scenario.clients, &scenario.background}) {
      for (const ClientSpec& other : *list) {
        if (&other != &spec && other.name == spec.name) {
          item.child("name").fail("duplicate client or background task name " +
                                  quote_text(spec.name));
        }
      }
    }
  };
  const auto clients = reader.required("clients");
  for (const auto& item : clients.items()) {
    scenario.clients.push_back(parser.parse_client(item, /*background=*/false));
    check_unique(item, scenario.clients.back());
  }
  if (scenario.clients.empty()) clients.fail_expected("at least one client");
  if (auto background = reader.optional("background")) {
    for (const auto& item : background->items()) {
      scenario.background.push_back(parser.parse_client(item, /*background=*/true));
      check_unique(item, scenario.background.back());
    }
  }
  reader.finish();
  return scenario;
}

std::string Scenario::source() const {
  const bool changed = std::any_of(overrides.begin(), overrides.end(),
                                   [](const Override& o) { return !is_topology_path(o.path); });
  return changed ? file + " (with --set)" : file;
}

std::string topology_reference(const Scenario& scenario) {
  const std::filesystem::path path(scenario.topology);
  const bool is_path =
      scenario.topology.find('/') != std::string::npos || path.extension() == ".json";
  if (!is_path || path.is_absolute()) return scenario.topology;
  return (std::filesystem::path(scenario.file).parent_path() / path).lexically_normal().string();
}

std::filesystem::path topology_file(const Scenario& scenario,
                                    const std::filesystem::path& topologies_dir) {
  const std::string reference = topology_reference(scenario);
  // A name or path that leads to no file is the scenario's error, at its "topology".
  const auto fail = [&](const std::string& message) {
    throw ConfigError(scenario.source() + ": /topology: " + message);
  };
  std::filesystem::path file;
  try {
    file = resolve_data_file(reference, topologies_dir, "topology", "topologies");
  } catch (const ConfigError& error) {
    fail(error.what());
  }
  std::error_code error;
  if (!std::filesystem::is_regular_file(file, error)) {
    fail("expected a topology name or the path of a topology file, got " + quote_text(reference) +
         ", which is not a file");
  }
  return file;
}

topology::Topology load_topology(const std::string& name_or_path,
                                 const std::filesystem::path& topologies_dir,
                                 const std::vector<Override>& overrides) {
  if (std::none_of(overrides.begin(), overrides.end(),
                   [](const Override& o) { return is_topology_path(o.path); })) {
    return topology::Topology::load(name_or_path, topologies_dir);
  }
  return topology::Topology::load(name_or_path, topologies_dir, [&](nlohmann::json& document) {
    apply_topology_overrides(document, overrides);
  });
}

topology::Topology load_topology(const Scenario& scenario,
                                 const std::filesystem::path& topologies_dir) {
  return load_topology(topology_file(scenario, topologies_dir).string(), topologies_dir,
                       scenario.overrides);
}

Scenario load_scenario(const std::string& name_or_path, const std::filesystem::path& scenarios_dir,
                       const selectors::SelectorRegistry& selectors,
                       const std::vector<Override>& overrides) {
  const auto file = resolve_data_file(name_or_path, scenarios_dir, "scenario", "scenarios");
  const auto document = JsonDocument::parse_file(file);
  if (overrides.empty()) return parse_scenario(document.root(), selectors);
  // Overrides of topology values alone leave the scenario document as the file has it.
  if (std::all_of(overrides.begin(), overrides.end(),
                  [](const Override& o) { return is_topology_path(o.path); })) {
    Scenario scenario = parse_scenario(document.root(), selectors);
    scenario.overrides = overrides;
    return scenario;
  }
  nlohmann::json value = document.value();
  apply_overrides(value, overrides);
  const auto overridden =
      JsonDocument::from_value(std::move(value), file.string() + " (with --set)");
  Scenario scenario = parse_scenario(overridden.root(), selectors);
  scenario.file = file.string();  // relative paths inside still resolve from the file
  scenario.document_hash = bindersim::document_hash(document.value());
  scenario.overrides = overrides;
  return scenario;
}

}  // namespace bindersim::workload
