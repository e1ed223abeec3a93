// `bindersim compare`: several selectors (and option values) side by side over several
// seeds, with means, 95% confidence intervals, Δ% and significance against the first column.
#include <algorithm>
#include <atomic>
#include <boost/program_options.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "bindersim/common/error.hpp"
#include "bindersim/common/json_reader.hpp"
#include "bindersim/io/compare_report.hpp"
#include "bindersim/io/result_json.hpp"
#include "bindersim/sched/placement.hpp"
#include "bindersim/selectors/registry.hpp"
#include "bindersim/selectors/selector.hpp"
#include "bindersim/sim/simulation.hpp"
#include "bindersim/stats/summary.hpp"
#include "bindersim/topology/topology.hpp"
#include "bindersim/workload/overrides.hpp"
#include "bindersim/workload/scenario.hpp"
#include "command_line.hpp"
#include "commands.hpp"
#include "job_pool.hpp"
#include "output_file.hpp"

namespace bindersim::cli {
namespace po = boost::program_options;

namespace {

// Every run's result is kept until the comparison is printed (tens of KB each, mostly its
// latency histograms): more seeds than this per column are a job for `bindersim sweep`.
constexpr int kMaxSeeds = 100;
// Runs (columns x seeds) of one comparison; each result is held until the table is written
// (about 80 KB apiece). Larger grids are sweeps, run and pooled from files.
constexpr std::size_t kMaxRuns = 10'000;

constexpr const char* kCompareUsage =
    "usage: bindersim compare SCENARIO [--selectors A,B,...] [--seeds N]\n"
    "                         [--vary KEY=V1,V2,...] [--placement NAME] [--set KEY=VALUE]...\n"
    "                         [--jobs J] [--out FILE]\n"
    "\n"
    "Simulates SCENARIO (a file, or a name in scenarios/) once per column and seed and prints\n"
    "one row per metric: the mean over the seeds +- its 95% confidence half-width, and each\n"
    "column's difference (delta %) from the first column, marked \"~\" when Welch's t-test does\n"
    "not find it significant at 5%.\n"
    "\n"
    "Columns: one per selector, in the order given (default: the scenario's own selector);\n"
    "with --vary, one per (selector, value), the value applied as one more --set KEY=VALUE;\n"
    "values are split at commas outside brackets, braces and quotes ([0,1],[2,3] is two).\n"
    "Seeds: the scenario's seed S and the next ones, S, S+1, ..., S+N-1, the same for every\n"
    "column, so the columns are compared on the same random draws. Every (column, seed) is an\n"
    "independent run; --jobs only changes how many run at once, never the output. On a\n"
    "terminal, a comparison that lasts more than a second shows its progress on stderr.\n"
    "\n"
    "examples:\n"
    "  bindersim compare scenarios/schd-dbg.json --selectors fifo,ctabs,ctabs-nudge --seeds 5\n"
    "  bindersim compare schd-dbg --selectors fifo,ctabs --seeds 3 --out compare.json\n"
    "  bindersim compare schd-dbg --selectors fifo,ctabs-nudge --seeds 3 \\\n"
    "      --vary kernel.priority_inheritance=android,upstream\n"
    "  bindersim compare schd-dbg --vary kernel.selector=fifo,ctabs --seeds 5 --jobs 4\n";

// The first comma of `text` from `start` on that is outside brackets, braces and double-quoted
// strings, so that a JSON value such as [0,1] or {"a":1,"b":2} is one item; npos if none. A
// quote, bracket or brace left open at the end is a ConfigError naming `what` (it would take
// the rest of the list into one item).
std::size_t top_level_comma(const std::string& text, std::size_t start, const std::string& what) {
  int depth = 0;
  bool quoted = false;
  for (std::size_t i = start; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '\\') {
        ++i;  // the escaped character
      } else if (c == '"') {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 0) {
      return i;
    }
  }
  if (quoted || depth > 0) {
    throw ConfigError(what + text + ": a " + (quoted ? "quote" : "bracket or brace") +
                      " is left open; expected comma-separated values, each a whole JSON value "
                      "or a plain word");
  }
  return std::string::npos;
}

// Splits "a,b,c" at its top-level commas (see top_level_comma()); an empty or repeated item is
// a ConfigError that quotes `what` followed by `text` ("--selectors " or "--vary key=").
std::vector<std::string> split_list(const std::string& text, const std::string& what) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = top_level_comma(text, start, what);
    std::string item = text.substr(start, comma - start);
    if (item.empty()) {
      throw ConfigError(what + text + ": empty item in the comma-separated list");
    }
    for (const std::string& seen : items) {
      if (seen == item) throw ConfigError(what + text + ": \"" + item + "\" given twice");
    }
    items.push_back(std::move(item));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

// --vary KEY=V1,V2,...: the key and one override per value.
struct Vary {
  std::string key;
  std::vector<std::string> values;
  std::vector<workload::Override> overrides;
};

Vary parse_vary(const std::string& text) {
  const std::size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == text.size()) {
    throw ConfigError("--vary " + text +
                      ": expected KEY=V1,V2,... (e.g. kernel.priority_inheritance=android,"
                      "upstream)");
  }
  Vary vary;
  vary.key = text.substr(0, equals);
  if (vary.key == "seed") {
    throw ConfigError("--vary " + text + ": seeds are chosen by --seeds (or --set seed=S)");
  }
  vary.values = split_list(text.substr(equals + 1), "--vary " + vary.key + "=");
  for (const std::string& value : vary.values) {
    workload::Override parsed = workload::parse_override(vary.key + "=" + value, "--vary");
    // Spelt differently, the same value ("gki" and gki, 10 and 1e1) would run the same column
    // twice under two labels.
    for (std::size_t i = 0; i < vary.overrides.size(); ++i) {
      if (vary.overrides[i].value == parsed.value) {
        throw ConfigError("--vary " + text + ": " + vary.values[i] + " and " + value +
                          " are the same value");
      }
    }
    vary.overrides.push_back(std::move(parsed));
  }
  return vary;
}

// Everything one column needs to run, validated before any run starts.
struct ColumnPlan {
  io::CompareColumn column;
  workload::Scenario scenario;
  std::string topology_file;
  std::unique_ptr<const topology::Topology> topology;  // read by every run of the column
  sim::RunOptions options;
};

// How far each job has come, in thousandths, for the progress line: written by the job's
// thread, read by the thread that draws.
class JobProgress final : public sim::ProgressSink {
 public:
  explicit JobProgress(std::atomic<std::uint32_t>& permille) : permille_(permille) {}
  void on_progress(const sim::Progress& p) override {
    if (p.calls_expected == 0) return;
    const std::uint64_t done = p.calls_done * 1000 / p.calls_expected;
    permille_.store(static_cast<std::uint32_t>(std::min<std::uint64_t>(done, 999)),
                    std::memory_order_relaxed);
  }

 private:
  std::atomic<std::uint32_t>& permille_;
};

// What a job keeps of its run: the result JSON and the metrics (a RunResult holds megabytes
// of histogram buckets; this keeps memory independent of the number of runs).
struct JobOutput {
  nlohmann::ordered_json result;
  std::vector<std::optional<double>> metrics;
  bool clients_finished = true;
};

}  // namespace

int compare_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  selectors::SelectorRegistry registry;
  selectors::register_builtin_selectors(registry);

  po::options_description options("options");
  options.add_options()("help,h", "show this help")(
      "selectors", po::value<std::string>(),
      "comma-separated selectors, one column each; the first is the baseline (default: the "
      "scenario's)")("seeds", po::value<int>()->default_value(1),
                     "seeds per column, at most 100: S..S+N-1, S the scenario's seed")(
      "vary", po::value<std::string>(),
      "KEY=V1,V2,...: one column per (selector, value), the value applied as --set KEY=Vi")(
      "placement", po::value<std::string>(),
      "wakeup placement policy for every column: mainline, gki or walt (default: the scenario's)")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a scenario option by its dotted path for every column, e.g. --set "
      "clients.0.iterations=1000, or a value of its topology, e.g. --set "
      "topology.costs.wakeup_ref_ns=900 (repeatable)")(
      "jobs,j", po::value<int>(),
      "runs at once (default and most: the number of hardware threads)")(
      "out,o", po::value<std::string>(), "write the comparison JSON to FILE")(
      "scenario", po::value<std::string>(), "scenario file or name");
  po::variables_map vm;
  if (!parse_options("compare", args, options, "scenario", vm, err)) return 2;
  if (vm.count("help")) {
    out << kCompareUsage << "\n" << options;
    return 0;
  }
  if (!vm.count("scenario")) return usage_error(err, "compare", "missing SCENARIO");
  const int seeds_option = vm["seeds"].as<int>();
  if (seeds_option < 1 || seeds_option > kMaxSeeds) {
    error_line(err, "bindersim compare",
               fmt::format("--seeds: expected a number of seeds in [1, {}], got {}", kMaxSeeds,
                           seeds_option));
    return 2;
  }
  const auto num_seeds = static_cast<std::size_t>(seeds_option);
  std::size_t jobs = std::max(1u, std::thread::hardware_concurrency());
  if (vm.count("jobs")) {
    const int jobs_option = vm["jobs"].as<int>();
    if (jobs_option < 1) {
      error_line(err, "bindersim compare",
                 fmt::format("--jobs: expected a positive number of threads, got {}", jobs_option));
      return 2;
    }
    jobs = static_cast<std::size_t>(jobs_option);
  }

  try {
    // Parse every option, then load and check every column, before anything runs.
    const std::string scenario_name = vm["scenario"].as<std::string>();
    const std::vector<workload::Override> base_overrides = set_overrides(vm);
    std::optional<Vary> vary;
    if (vm.count("vary")) vary = parse_vary(vm["vary"].as<std::string>());
    // A --set of the varied key, or of a value inside it or around it, would be overridden by
    // each column's value without a word.
    for (const workload::Override& o : base_overrides) {
      if (vary && workload::paths_overlap(o.path, vary->key)) {
        throw ConfigError("--vary " + vary->key + ": " + vary->key +
                          (o.path == vary->key ? " is also set by " : " overlaps ") + o.text +
                          "; drop one of them");
      }
    }
    std::optional<std::string> placement;
    if (vm.count("placement")) {
      placement = vm["placement"].as<std::string>();
      check_option("--placement", [&] { sched::make_placement(*placement); });
    }
    // --selectors and --placement choose for every column: a --set or --vary of the same
    // option would be overridden without a word.
    const auto reject_chosen = [&](const char* path, const char* option) {
      reject_set_of_chosen(base_overrides, path, option);
      if (vary) reject_key_of_chosen("--vary", vary->key, path, option);
    };
    if (vm.count("selectors")) reject_chosen("kernel.selector", "--selectors");
    if (placement) reject_chosen("kernel.placement", "--placement");
    // nullopt: each column runs its own scenario's selector.
    std::vector<std::optional<std::string>> selector_names = {std::nullopt};
    if (vm.count("selectors")) {
      selector_names.clear();
      for (auto& name : split_list(vm["selectors"].as<std::string>(), "--selectors ")) {
        check_option("--selectors", [&] { registry.create(name); });
        selector_names.emplace_back(std::move(name));
      }
    }

    const auto base =
        workload::load_scenario(scenario_name, data_dir() / "scenarios", registry, base_overrides);
    io::CompareReport report;
    report.scenario = base.name;
    // Seeds S..S+N-1 must not wrap past the largest seed to 0.
    if (base.seed > std::numeric_limits<std::uint64_t>::max() - (num_seeds - 1)) {
      throw ConfigError(
          "--seeds " + std::to_string(num_seeds) + ": the seeds from " + std::to_string(base.seed) +
          " on would pass the largest seed, " +
          std::to_string(std::numeric_limits<std::uint64_t>::max()) +
          "; expected a scenario seed of at most " +
          std::to_string(std::numeric_limits<std::uint64_t>::max() - (num_seeds - 1)));
    }
    for (std::size_t s = 0; s < num_seeds; ++s) report.seeds.push_back(base.seed + s);

    std::vector<ColumnPlan> plans;
    const std::size_t num_values = vary ? vary->values.size() : 1;
    if (const std::size_t columns = selector_names.size() * num_values;
        columns * num_seeds > kMaxRuns) {
      throw ConfigError(fmt::format(
          "--selectors, --vary and --seeds: {} column(s) x {} seed(s) make {} runs; expected at "
          "most {} (a sweep runs larger grids: bindersim sweep expand)",
          columns, num_seeds, columns * num_seeds, kMaxRuns));
    }
    // Of each selector the columns run, the parameters in which its columns differ from its
    // defaults.
    workload::ParamsBySelector params_by_selector;
    for (const auto& selector_name : selector_names) {
      for (std::size_t v = 0; v < num_values; ++v) {
        ColumnPlan plan;
        std::vector<workload::Override> overrides = base_overrides;
        if (vary) overrides.push_back(vary->overrides[v]);
        plan.scenario =
            workload::load_scenario(scenario_name, data_dir() / "scenarios", registry, overrides);
        plan.topology_file =
            workload::topology_file(plan.scenario, data_dir() / "topologies").string();
        // Constructed in place from load()'s result: a Topology "move" copies its graph.
        plan.topology.reset(new topology::Topology(
            workload::load_topology(plan.scenario, data_dir() / "topologies")));
        plan.options.selector = selector_name;
        plan.options.placement = placement;
        const std::string selector = selector_name.value_or(plan.scenario.kernel.selector);
        params_by_selector[selector].insert(
            workload::create_selector(registry, selector, plan.scenario.kernel)
                ->non_default_params());
        sched::make_placement(placement.value_or(plan.scenario.kernel.placement));

        io::CompareColumn& column = plan.column;
        column.selector = selector;
        column.placement = placement.value_or(plan.scenario.kernel.placement);
        column.topology = plan.topology->name();
        // Labels are unique: selectors and values are (split_list rejects repeats).
        if (!vary) {
          column.label = selector;
        } else {
          column.label = selector_name ? selector + " " + vary->values[v] : vary->values[v];
        }
        for (const workload::Override& o : overrides) {
          column.overrides.emplace_back(o.path, nlohmann::ordered_json::parse(o.value.dump()));
        }
        plans.push_back(std::move(plan));
      }
    }
    // A --vary within the selectors' parameters that changes no column's policy (the parameters
    // of a selector no column runs, or a default spelled out) would give columns that are alike.
    if (vary && workload::within_selector_params(vary->key)) {
      if (const auto selectors = workload::unchanged_selectors(params_by_selector)) {
        throw ConfigError("--vary " + vary->key + ": it changes the parameters of no column's " +
                          "selector (" + *selectors +
                          "), so the columns would be alike; choose the selector it sets with "
                          "--selectors");
      }
    }
    if (vm.count("out")) {
      std::vector<NamedInput> inputs = {{"the scenario", base.file}};
      for (const ColumnPlan& plan : plans) {
        inputs.emplace_back("a topology of the comparison", plan.topology_file);
      }
      check_not_an_input("--out", vm["out"].as<std::string>(), inputs);
    }
    // Job i is column i / seeds, seed index i % seeds; each writes only its own slot.
    const std::vector<stats::Metric> metrics = stats::comparison_metrics();
    const std::size_t num_jobs = plans.size() * num_seeds;
    std::vector<JobOutput> outputs(num_jobs);
    std::vector<std::exception_ptr> failures(num_jobs);
    // Progress (drawn only on a terminal): each job's share done, and the jobs finished.
    ProgressLine progress_line(err);
    std::vector<std::atomic<std::uint32_t>> job_permille(num_jobs);
    std::mutex jobs_mutex;
    std::condition_variable job_finished;
    std::size_t jobs_done = 0;
    // Runs job i into its slot, or records its failure there.
    const auto run_job = [&](std::size_t i) {
      try {
        const ColumnPlan& plan = plans[i / num_seeds];
        sim::RunOptions run_options = plan.options;
        run_options.seed = report.seeds[i % num_seeds];
        JobProgress progress(job_permille[i]);
        if (progress_line.enabled()) run_options.progress = &progress;
        const stats::RunResult result =
            sim::run(plan.scenario, *plan.topology, registry, run_options);
        outputs[i].result = io::result_to_json(result);
        outputs[i].metrics = stats::measure(metrics, result);
        outputs[i].clients_finished = result.clients_finished;
        failures[i] = nullptr;
      } catch (...) {
        failures[i] = std::current_exception();
      }
    };
    // Runs job i, then counts it done for the progress line.
    const auto job = [&](std::size_t i) {
      run_job(i);
      job_permille[i].store(1000, std::memory_order_relaxed);
      const std::lock_guard<std::mutex> lock(jobs_mutex);
      ++jobs_done;
      job_finished.notify_one();
    };
    // Redraws the progress line until every job is done.
    const auto watch = [&] {
      std::unique_lock<std::mutex> lock(jobs_mutex);
      while (jobs_done < num_jobs) {
        job_finished.wait_for(lock, std::chrono::milliseconds(250));
        if (jobs_done == num_jobs || !progress_line.due()) continue;
        std::uint64_t permille = 0;
        for (const auto& share : job_permille) permille += share.load(std::memory_order_relaxed);
        const double done =
            static_cast<double>(permille) / (1000.0 * static_cast<double>(num_jobs));
        const double elapsed = progress_line.elapsed_s();
        std::string text =
            fmt::format("compare: {} of {} runs done | {:.0f}%", jobs_done, num_jobs, 100 * done);
        if (done > 0) {
          text += fmt::format(" | {:.1f} runs/s | ETA {}",
                              done * static_cast<double>(num_jobs) / elapsed,
                              format_eta(elapsed * (1 - done) / done));
        }
        progress_line.show(text);
      }
    };
    const auto wall_start = std::chrono::steady_clock::now();
    const std::size_t num_threads = run_jobs(
        jobs, job, failures, progress_line.enabled() ? std::function<void()>(watch) : nullptr);
    progress_line.clear();
    const double wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    // The first failure by job index, whatever the order the jobs finished in.
    for (const std::exception_ptr& failure : failures) {
      if (failure) std::rethrow_exception(failure);
    }

    // Runs cut short are compared all the same, but not silently: their columns and seeds (the
    // first few).
    constexpr std::size_t kUnfinishedListed = 8;
    std::string unfinished;
    std::size_t num_unfinished = 0;
    for (std::size_t i = 0; i < num_jobs; ++i) {
      if (outputs[i].clients_finished) continue;
      if (++num_unfinished <= kUnfinishedListed) {
        unfinished += fmt::format("{}{} seed {}", unfinished.empty() ? "" : ", ",
                                  plans[i / num_seeds].column.label, report.seeds[i % num_seeds]);
      }
    }
    if (num_unfinished > kUnfinishedListed) unfinished += ", ...";

    std::vector<std::vector<std::optional<double>>> values;
    values.reserve(num_jobs);
    for (std::size_t i = 0; i < num_jobs; ++i) {
      report.runs.push_back(
          io::CompareRun{i / num_seeds, report.seeds[i % num_seeds], std::move(outputs[i].result)});
      values.push_back(std::move(outputs[i].metrics));
    }
    for (ColumnPlan& plan : plans) report.columns.push_back(std::move(plan.column));
    report.summary = stats::summarize(metrics, values, report.columns.size());

    if (vm.count("out")) {
      std::ostringstream json;
      io::write_compare_json(report, json);
      write_file_atomically(vm["out"].as<std::string>(), json.str());
    }
    io::print_compare_table(report, out);
    if (!output_reached(out)) return 0;  // finish_output() reports the failed write
    err << fmt::format(
        "{} runs ({} column(s) x {} seed(s)) on {} thread(s) in {:.3f} s wall ({:.1f} runs/s)\n",
        num_jobs, report.columns.size(), num_seeds, num_threads, wall_s,
        wall_s > 0 ? static_cast<double>(num_jobs) / wall_s : 0.0);
    if (num_unfinished > 0) {
      err << fmt::format(
          "bindersim compare: warning: in {} of {} runs the clients did not finish their "
          "iterations ({}): {}\n",
          num_unfinished, num_jobs, kUnfinishedClientsReason, unfinished);
    }
    return 0;
  } catch (const ConfigError& error) {
    error_line(err, "bindersim compare", error.what());
    return 2;
  }
}

}  // namespace bindersim::cli
