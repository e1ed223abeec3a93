#include <algorithm>
#include <boost/range/iterator_range.hpp>
#include <charconv>
#include <cstdio>
#include <initializer_list>
#include <ostream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "bindersim/topology/topology.hpp"

namespace bindersim::topology {
namespace {

// A decimal with at most three fraction digits and no trailing zeros: 28, 2.2, 21.3. Fixed
// formatting keeps the text identical on every machine.
std::string format_decimal(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.3f", value);
  std::string text = buffer;
  if (text.find('.') != std::string::npos) {
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  if (text == "-0") text = "0";
  return text;
}

// A number as a file would give it: the shortest decimal text (no exponent) that reads back as
// the same double.
std::string format_shortest(double value) {
  char buffer[400];  // the longest fixed form of a double (about 330 characters) fits
  const auto [end, error] =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed);
  return error == std::errc() ? std::string(buffer, end) : format_decimal(value);
}

std::string format_size(std::int64_t bytes) {
  constexpr std::int64_t kKib = 1024;
  constexpr std::int64_t kMib = 1024 * kKib;
  if (bytes >= kMib && bytes % kMib == 0) return std::to_string(bytes / kMib) + " MiB";
  if (bytes >= kKib && bytes % kKib == 0) return std::to_string(bytes / kKib) + " KiB";
  return std::to_string(bytes) + " B";
}

std::string format_us(SimTime nanoseconds) {
  return format_decimal(static_cast<double>(nanoseconds) / 1000.0);
}

// Ascending CPU ids as ranges: "0-3", "0-2,5,7".
std::string cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(cpus[i]);
    if (j > i) {
      out += '-';
      out += std::to_string(cpus[j]);
    }
    i = j + 1;
  }
  return out;
}

// Concatenation by appending: GCC 12 gives a false -Wrestrict on "literal" + std::string.
std::string cat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (const std::string_view part : parts) out += part;
  return out;
}

std::string cpu_name(int cpu) { return cat({"cpu", std::to_string(cpu)}); }

// The vertices from `vertex` outward to memory (every vertex but memory has one out-edge).
std::vector<std::size_t> path_from(const CacheGraph& graph, std::size_t vertex) {
  std::vector<std::size_t> path{vertex};
  while (boost::out_degree(path.back(), graph) > 0) {
    path.push_back(boost::target(*boost::out_edges(path.back(), graph).first, graph));
  }
  return path;
}

// A text table with columns padded to their widest cell; numeric columns align right.
class Table {
 public:
  Table(std::vector<std::string> headers, std::string_view right_aligned)
      : headers_(std::move(headers)), right_(headers_.size(), false) {
    for (std::size_t i = 0; i < right_.size() && i < right_aligned.size(); ++i) {
      right_[i] = right_aligned[i] == 'r';
    }
  }

  void add(std::vector<std::string> row) {
    row.resize(headers_.size());
    rows_.push_back(std::move(row));
  }

  void print(std::ostream& out) const {
    std::vector<std::size_t> widths(headers_.size());
    for (std::size_t c = 0; c < headers_.size(); ++c) widths[c] = headers_[c].size();
    for (const auto& row : rows_) {
      for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
    }
    print_row(out, headers_, widths);
    for (const auto& row : rows_) print_row(out, row, widths);
  }

 private:
  void print_row(std::ostream& out, const std::vector<std::string>& row,
                 const std::vector<std::size_t>& widths) const {
    std::string line = " ";
    for (std::size_t c = 0; c < row.size(); ++c) {
      const std::string padding(widths[c] - row[c].size(), ' ');
      line += " ";
      line += right_[c] ? padding + row[c] : row[c] + padding;
      if (c + 1 < row.size()) line += " ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  }

  std::vector<std::string> headers_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

// A string literal for Graphviz: quotes and backslashes escaped.
std::string dot_quote(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string dot_vertex(const GraphNode& node, const Topology& topology) {
  std::string label = node.name;
  std::string shape = "ellipse";
  switch (node.kind) {
    case NodeKind::kCpu:
      shape = "box";
      label += "\\ncapacity " + std::to_string(topology.capacity(node.cpu));
      break;
    case NodeKind::kCache:
      label +=
          "\\n" + format_size(node.size_bytes) + "\\n" + format_decimal(node.latency_ns) + " ns";
      break;
    case NodeKind::kMemory:
      shape = "cylinder";
      label += "\\n" + format_decimal(node.latency_ns) + " ns";
      break;
  }
  // The label carries "\n" line breaks for Graphviz, so only quotes are escaped in it.
  std::string quoted_label = "\"";
  for (const char c : label) {
    if (c == '"') quoted_label += '\\';
    quoted_label += c;
  }
  quoted_label += "\"";
  return dot_quote(node.name) + " [shape=" + shape + ", label=" + quoted_label + "]";
}

}  // namespace

void print_topology(const Topology& topology, std::ostream& out) {
  const CacheGraph& graph = topology.graph();
  out << "Topology " << topology.name() << '\n';
  if (!topology.description().empty()) out << "  " << topology.description() << '\n';

  out << "\nClusters\n";
  Table clusters({"id", "name", "uarch", "CPUs", "max MHz", "dmips/MHz", "capacity"}, "rlllrrr");
  for (int id = 0; id < topology.num_clusters(); ++id) {
    const std::vector<int>& cpus = topology.cluster_cpus(id);
    const Cpu& cpu = topology.cpu(cpus.front());
    clusters.add({std::to_string(id), cpu.cluster_name, cpu.uarch, cpu_list(cpus),
                  format_decimal(static_cast<double>(cpu.max_freq_khz) / 1000.0),
                  std::to_string(cpu.capacity_dmips_mhz), std::to_string(cpu.capacity)});
  }
  clusters.print(out);

  out << "\nIdle states (shallowest first; latencies in us)\n";
  Table idle({"cluster", "state", "entry", "exit", "min residency"}, "llrrr");
  for (int id = 0; id < topology.num_clusters(); ++id) {
    const Cpu& cpu = topology.cpu(topology.cluster_cpus(id).front());
    for (const IdleState& state : cpu.idle_states) {
      idle.add({cpu.cluster_name, state.name, format_us(state.entry_latency_ns),
                format_us(state.exit_latency_ns), format_us(state.min_residency_ns)});
    }
  }
  idle.print(out);

  out << "\nOperating points (power: the energy model's relative cost at that point)\n";
  Table opps({"cluster", "MHz", "power", "transition us"}, "lrrr");
  bool any_opp = false;
  for (int id = 0; id < topology.num_clusters(); ++id) {
    const FrequencyDomain& domain = topology.frequency_domain(id);
    const std::string& cluster = topology.cpu(topology.cluster_cpus(id).front()).cluster_name;
    for (const Opp& opp : domain.opps) {
      // The transition latency, the cluster's, on its first row.
      const bool first = &opp == &domain.opps.front();
      opps.add({first ? cluster : "", format_decimal(static_cast<double>(opp.freq_khz) / 1000.0),
                format_shortest(opp.power), first ? format_us(domain.transition_latency_ns) : ""});
      any_opp = true;
    }
  }
  if (any_opp) {
    opps.print(out);
  } else {
    out << "  none: every cluster runs at its maximum frequency\n";
  }

  out << "\nCaches (latency: load-to-use of a hit)\n";
  Table caches({"cache", "level", "size", "latency ns", "CPUs"}, "lrrrl");
  // Private caches: the same for every CPU of a cluster, shown once per cluster.
  for (int id = 0; id < topology.num_clusters(); ++id) {
    const std::vector<int>& cpus = topology.cluster_cpus(id);
    for (const std::size_t vertex : path_from(graph, topology.cpu_vertex(cpus.front()))) {
      const GraphNode& node = graph[vertex];
      if (node.kind != NodeKind::kCache || node.cpu < 0) continue;
      caches.add({cat({"l", std::to_string(node.level), " (private)"}), std::to_string(node.level),
                  format_size(node.size_bytes), format_decimal(node.latency_ns),
                  cpu_list(cpus) + " (one each)"});
    }
  }
  for (std::size_t vertex = 0; vertex < boost::num_vertices(graph); ++vertex) {
    const GraphNode& node = graph[vertex];
    if (node.kind == NodeKind::kCache && node.cpu < 0) {
      caches.add({node.name, std::to_string(node.level), format_size(node.size_bytes),
                  format_decimal(node.latency_ns), cpu_list(node.cpus)});
    } else if (node.kind == NodeKind::kMemory) {
      caches.add({node.name + " (memory)", "-", "-", format_decimal(node.latency_ns),
                  cpu_list(node.cpus)});
    }
  }
  caches.print(out);

  out << "\nCPUs\n";
  Table cpus(
      {"cpu", "cluster", "capacity", "private cache", "first shared level", "shared fetch ns/line"},
      "rlrrlr");
  for (const Cpu& cpu : topology.cpus()) {
    const std::size_t first_shared = topology.first_shared_vertex(cpu.id);
    cpus.add({std::to_string(cpu.id), cpu.cluster_name, std::to_string(cpu.capacity),
              format_size(topology.private_cache_bytes(cpu.id)), graph[first_shared].name,
              format_decimal(topology.shared_fetch_ns_per_line(cpu.id))});
  }
  cpus.print(out);

  const PlatformCosts& costs = topology.costs();
  out << "\nPlatform costs (\"ref\": on a capacity-1024 CPU at its maximum frequency)\n";
  Table platform({"cost", "value"}, "lr");
  platform.add({"context_switch_ref_ns", std::to_string(costs.context_switch_ref_ns)});
  platform.add({"wakeup_ref_ns", std::to_string(costs.wakeup_ref_ns)});
  platform.add({"ipi_latency_ns", std::to_string(costs.ipi_latency_ns)});
  platform.add({"binder_send_ref_ns", std::to_string(costs.binder_send_ref_ns)});
  platform.add({"binder_receive_ref_ns", std::to_string(costs.binder_receive_ref_ns)});
  platform.add({"binder_free_ref_ns", std::to_string(costs.binder_free_ref_ns)});
  platform.add({"thread_spawn_ns", std::to_string(costs.thread_spawn_ns)});
  platform.add({"binder_alloc_locked_ref_ns", std::to_string(costs.binder_alloc_locked_ref_ns)});
  platform.add(
      {"binder_free_lookup_locked_ref_ns", std::to_string(costs.binder_free_lookup_locked_ref_ns)});
  platform.add({"binder_free_locked_ref_ns", std::to_string(costs.binder_free_locked_ref_ns)});
  platform.add({"page_install_ref_ns", std::to_string(costs.page_install_ref_ns)});
  platform.add({"page_reclaim_ref_ns", std::to_string(costs.page_reclaim_ref_ns)});
  platform.add({"line_bytes", std::to_string(costs.line_bytes)});
  platform.add({"cache_refs_per_ref_us", format_shortest(costs.cache_refs_per_ref_us)});
  platform.add({"base_miss_ratio", format_shortest(costs.base_miss_ratio)});
  platform.print(out);

  out << "\nTransfer cost, ns per line (row: CPU that wrote the line, column: CPU that reads "
         "it)\n";
  std::vector<std::string> header{"from\\to"};
  for (int cpu = 0; cpu < topology.num_cpus(); ++cpu) header.push_back(cpu_name(cpu));
  Table matrix(header, "l" + std::string(static_cast<std::size_t>(topology.num_cpus()), 'r'));
  for (int from = 0; from < topology.num_cpus(); ++from) {
    std::vector<std::string> row{cpu_name(from)};
    for (int to = 0; to < topology.num_cpus(); ++to) {
      row.push_back(format_decimal(topology.transfer_ns_per_line(from, to)));
    }
    matrix.add(std::move(row));
  }
  matrix.print(out);
}

void write_dot(const Topology& topology, std::ostream& out) {
  const CacheGraph& graph = topology.graph();
  out << "digraph " << dot_quote(topology.name()) << " {\n";
  out << "  graph [rankdir=TB, label=" << dot_quote(topology.name()) << ", labelloc=t];\n";
  out << "  node [fontname=\"Helvetica\", fontsize=10];\n";
  out << "  edge [fontname=\"Helvetica\", fontsize=9];\n";
  // A scheduler cluster holds its CPUs and their private caches.
  for (int id = 0; id < topology.num_clusters(); ++id) {
    const std::vector<int>& cpus = topology.cluster_cpus(id);
    const Cpu& first = topology.cpu(cpus.front());
    out << "  subgraph " << dot_quote("cluster_" + std::to_string(id)) << " {\n";
    out << "    label="
        << dot_quote("cluster " + std::to_string(id) + ": " + first.cluster_name + " (" +
                     first.uarch + ")")
        << ";\n";
    for (const int cpu : cpus) {
      for (const std::size_t vertex : path_from(graph, topology.cpu_vertex(cpu))) {
        const GraphNode& node = graph[vertex];
        if (node.cpu == cpu) out << "    " << dot_vertex(node, topology) << ";\n";
      }
    }
    out << "  }\n";
  }
  for (std::size_t vertex = 0; vertex < boost::num_vertices(graph); ++vertex) {
    const GraphNode& node = graph[vertex];
    if (node.cpu < 0) out << "  " << dot_vertex(node, topology) << ";\n";
  }
  for (std::size_t vertex = 0; vertex < boost::num_vertices(graph); ++vertex) {
    for (const auto edge : boost::make_iterator_range(boost::out_edges(vertex, graph))) {
      out << "  " << dot_quote(graph[vertex].name) << " -> "
          << dot_quote(graph[boost::target(edge, graph)].name)
          << " [label=" << dot_quote(cat({"+", format_decimal(graph[edge].weight_ns), " ns"}))
          << "];\n";
    }
  }
  out << "}\n";
}

}  // namespace bindersim::topology
