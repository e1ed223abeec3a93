// `bindersim sweep`: expand a sweep file into runs, run a share of them (one result file per
// run, resumable), and merge the results exactly (docs/sweep-format.md).
#include <algorithm>
#include <atomic>
#include <boost/program_options.hpp>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bindersim/common/data_file.hpp"
#include "bindersim/common/error.hpp"
#include "bindersim/common/json_reader.hpp"
#include "bindersim/sched/placement.hpp"
#include "bindersim/selectors/registry.hpp"
#include "bindersim/sim/simulation.hpp"
#include "bindersim/stats/summary.hpp"
#include "bindersim/sweep/merge.hpp"
#include "bindersim/sweep/run_record.hpp"
#include "bindersim/sweep/sweep.hpp"
#include "bindersim/topology/topology.hpp"
#include "bindersim/workload/scenario.hpp"
#include "command_line.hpp"
#include "commands.hpp"
#include "job_pool.hpp"
#include "output_file.hpp"

namespace bindersim::cli {
namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

constexpr const char* kSweepUsage =
    "usage: bindersim sweep expand SWEEP [--out RUNS]\n"
    "       bindersim sweep run RUNS --out-dir DIR [--shard I/N | --index K] [--jobs J]\n"
    "       bindersim sweep merge DIR [--runs RUNS] [--out SUMMARY] [--across METRICS]\n"
    "\n"
    "A sweep file (docs/sweep-format.md) names a base scenario, option axes, selectors and\n"
    "seeds. `expand` writes one fully resolved run per line (JSON Lines, each with a stable\n"
    "run_id); `run` runs a share of those lines and writes DIR/<run_id>.json per run, skipping\n"
    "runs whose file exists; `merge` pools the results per (axis values, selector) across\n"
    "seeds, histograms merged bucket by bucket, and prints one comparison table per point\n"
    "(or, with --across, one table with a row per point).\n"
    "\n"
    "examples:\n"
    "  bindersim sweep expand sweeps/ctabs-sensitivity.json > runs.jsonl\n"
    "  bindersim sweep run runs.jsonl --shard 0/4 --out-dir results\n"
    "  bindersim sweep run runs.jsonl --index \"$SLURM_ARRAY_TASK_ID\" --out-dir results\n"
    "  bindersim sweep merge results --runs runs.jsonl --out summary.json\n"
    "\n"
    "Run 'bindersim sweep <expand|run|merge> --help' for the options of each.\n";

constexpr const char* kExpandUsage =
    "usage: bindersim sweep expand SWEEP [--out RUNS]\n"
    "\n"
    "Writes the runs of SWEEP, one JSON object per line, to stdout (or RUNS, written whole):\n"
    "the cartesian product of the axes (first axis outermost), then the selectors, then the\n"
    "seeds. Every run's scenario is loaded and checked first; on an error nothing is written.\n";

constexpr const char* kRunUsage =
    "usage: bindersim sweep run RUNS --out-dir DIR [--shard I/N | --index K] [--jobs J]\n"
    "\n"
    "Runs the runs of RUNS (a file written by sweep expand): every run, the runs whose index\n"
    "is I modulo N (--shard I/N), or the run of index K (--index K). Each run's result goes to\n"
    "DIR/<run_id>.json, written whole; a run whose file exists is skipped, so a shard that was\n"
    "stopped resumes where it was. The files do not depend on --shard or --jobs.\n"
    "\n"
    "examples:\n"
    "  bindersim sweep run runs.jsonl --out-dir results --jobs 2\n"
    "  bindersim sweep run runs.jsonl --shard \"$SLURM_ARRAY_TASK_ID/8\" --out-dir results\n";

constexpr const char* kMergeUsage =
    "usage: bindersim sweep merge DIR [--runs RUNS] [--out SUMMARY] [--across METRICS]\n"
    "\n"
    "Pools the results in DIR (files <run_id>.json) per (axis values, selector) across seeds:\n"
    "histograms merged bucket by bucket, counts and times added, as if one run had made every\n"
    "call. Prints one table per combination of axis values; --out writes the summary JSON.\n"
    "With --across, prints instead one table with a row per combination: for each metric named,\n"
    "the first selector's pooled value and the others' Δ% against it.\n"
    "With --runs, only the runs of RUNS are merged and its runs without a result are reported\n"
    "(stderr and summary); the exit status is 1 when any is missing.\n"
    "\n"
    "examples:\n"
    "  bindersim sweep merge results --runs runs.jsonl --out summary.json\n"
    "  bindersim sweep merge results --across throughput,latency.mean,latency.p50,latency.p99\n";

// Missing runs named one per line on stderr; the summary lists them all.
constexpr std::size_t kMissingLines = 20;

// "I/N" with 0 <= I < N; nullopt when malformed.
std::optional<std::pair<std::size_t, std::size_t>> parse_shard(const std::string& text) {
  const std::size_t slash = text.find('/');
  if (slash == std::string::npos) return std::nullopt;
  std::size_t shard = 0;
  std::size_t count = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  const auto first = std::from_chars(begin, begin + slash, shard);
  const auto second = std::from_chars(begin + slash + 1, end, count);
  if (first.ec != std::errc() || first.ptr != begin + slash || second.ec != std::errc() ||
      second.ptr != end || slash == 0 || count == 0 || shard >= count) {
    return std::nullopt;
  }
  return std::make_pair(shard, count);
}

// "SELECTOR seed S name=value ..." of a run's progress line; the selector as the runs file
// gives it, its control characters escaped.
std::string run_text(const sweep::RunSpec& run) {
  std::string text = fmt::format("{} seed {}", console_text(run.selector), run.seed);
  for (const auto& [name, value] : run.axes) text += " " + name + "=" + sweep::value_label(value);
  return text;
}

int expand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description options("options");
  options.add_options()("help,h", "show this help")("out,o", po::value<std::string>(),
                                                    "write the runs to RUNS instead of stdout")(
      "sweep", po::value<std::string>(), "sweep file");
  po::variables_map vm;
  if (!parse_options("sweep expand", args, options, "sweep", vm, err)) return 2;
  if (vm.count("help")) {
    out << kExpandUsage << "\n" << options;
    return 0;
  }
  if (!vm.count("sweep")) return usage_error(err, "sweep expand", "missing SWEEP");
  selectors::SelectorRegistry registry;
  selectors::register_builtin_selectors(registry);
  const sweep::Sweep spec = sweep::load_sweep(vm["sweep"].as<std::string>());
  std::vector<std::string> topology_files;
  const auto runs = sweep::expand_sweep(
      spec, registry, sweep::DataDirs{data_dir() / "scenarios", data_dir() / "topologies"},
      &topology_files);
  if (vm.count("out")) {
    // expand_sweep() has loaded the scenario, so its name resolves.
    std::vector<NamedInput> inputs = {
        {"the sweep", vm["sweep"].as<std::string>()},
        {"the sweep's scenario",
         resolve_data_file(spec.scenario, data_dir() / "scenarios", "scenario", "scenarios")
             .string()}};
    for (const std::string& file : topology_files) inputs.emplace_back("a run's topology", file);
    check_not_an_input("--out", vm["out"].as<std::string>(), inputs);
  }
  std::string text;
  for (const sweep::RunSpec& run : runs) text += sweep::run_line(run);
  if (vm.count("out")) {
    write_file_atomically(vm["out"].as<std::string>(), text);
  } else {
    out << text;
  }
  std::size_t points = 1;
  for (const sweep::Axis& axis : spec.axes) points *= axis.values.size();
  if (!output_reached(out)) return 0;  // finish_output() reports the failed write
  err << fmt::format("sweep {}: {} runs ({} point(s) x {} selector(s) x {} seed(s))\n",
                     console_text(spec.name), runs.size(), points,
                     runs.size() / points / spec.seeds.size(), spec.seeds.size());
  return 0;
}

// A run ready to go: everything loaded and checked.
struct RunPlan {
  const sweep::RunSpec* run = nullptr;
  fs::path file;
  workload::Scenario scenario;
  std::unique_ptr<const topology::Topology> topology;
};

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description options("options");
  options.add_options()("help,h", "show this help")(
      "out-dir,d", po::value<std::string>(), "directory of the result files (created if missing)")(
      "shard", po::value<std::string>(), "I/N: run the runs whose index is I modulo N")(
      "index", po::value<std::int64_t>(), "run only the run of index K")(
      "jobs,j", po::value<int>()->default_value(1),
      "runs at once (at most the number of hardware threads)")("runs", po::value<std::string>(),
                                                               "runs file (from sweep expand)");
  po::variables_map vm;
  if (!parse_options("sweep run", args, options, "runs", vm, err)) return 2;
  if (vm.count("help")) {
    out << kRunUsage << "\n" << options;
    return 0;
  }
  if (!vm.count("runs")) return usage_error(err, "sweep run", "missing RUNS");
  if (!vm.count("out-dir")) return usage_error(err, "sweep run", "missing --out-dir DIR");
  if (vm.count("shard") && vm.count("index")) {
    return usage_error(err, "sweep run", "give --shard or --index, not both");
  }
  std::optional<std::pair<std::size_t, std::size_t>> shard;
  if (vm.count("shard")) {
    shard = parse_shard(vm["shard"].as<std::string>());
    if (!shard) {
      return usage_error(err, "sweep run",
                         "--shard: expected I/N with 0 <= I < N (e.g. 0/4), got \"" +
                             vm["shard"].as<std::string>() + "\"");
    }
  }
  std::optional<std::size_t> only;
  if (vm.count("index")) {
    const std::int64_t index = vm["index"].as<std::int64_t>();
    if (index < 0) {
      return usage_error(err, "sweep run", "--index: expected a run index >= 0");
    }
    only = static_cast<std::size_t>(index);
  }
  const int jobs_option = vm["jobs"].as<int>();
  if (jobs_option < 1) {
    return usage_error(
        err, "sweep run",
        "--jobs: expected a positive number of runs at once, got " + std::to_string(jobs_option));
  }
  const std::string runs_file = vm["runs"].as<std::string>();
  const std::vector<sweep::RunSpec> runs = sweep::read_runs_file(runs_file);

  std::vector<const sweep::RunSpec*> selected;
  for (const sweep::RunSpec& r : runs) {
    if (only && r.index != *only) continue;
    if (shard && r.index % shard->second != shard->first) continue;
    selected.push_back(&r);
  }
  if (only && selected.empty()) {
    throw ConfigError(runs_file + ": no run has index " + std::to_string(*only));
  }
  std::sort(selected.begin(), selected.end(),
            [](const sweep::RunSpec* a, const sweep::RunSpec* b) { return a->index < b->index; });

  const fs::path out_dir = vm["out-dir"].as<std::string>();

  // Load and check every run to do before running any, or creating the directory.
  selectors::SelectorRegistry registry;
  selectors::register_builtin_selectors(registry);
  const sweep::DataDirs dirs{data_dir() / "scenarios", data_dir() / "topologies"};
  std::map<std::string, std::string> hashes;  // by scenario reference
  std::vector<RunPlan> plans;
  std::size_t skipped = 0;
  std::string skipped_lines;  // printed once every run is checked: bad input prints nothing
  for (const sweep::RunSpec* r : selected) {
    const fs::path file = out_dir / (r->run_id + ".json");
    std::error_code status_error;
    const fs::file_status status = fs::status(file, status_error);
    // Only "no such file" means no result: any other failure (a directory that may not be
    // searched) is said before a run is spent on a result that could not be written.
    if (status_error && status.type() != fs::file_type::not_found) {
      throw ConfigError(file.string() + ": cannot read: " + status_error.message());
    }
    if (fs::exists(status)) {
      if (!fs::is_regular_file(status)) {
        throw ConfigError(fmt::format("{}: expected a run's result file (or none), got {}",
                                      file.string(), describe_file_type(status.type())));
      }
      ++skipped;
      skipped_lines +=
          fmt::format("run {} {}: {}: result exists, skipped\n", r->index, r->run_id, run_text(*r));
      continue;
    }
    const std::string where = fmt::format("{}: run {} ({})", runs_file, r->index, r->run_id);
    try {
      auto [it, added] = hashes.try_emplace(r->scenario);
      if (added) {
        it->second = sweep::scenario_file_hash(
            resolve_data_file(r->scenario, dirs.scenarios, "scenario", "scenarios"));
      }
      if (it->second != r->scenario_hash) {
        throw ConfigError("the scenario " + r->scenario + " has changed since the sweep was " +
                          "expanded (hash " + it->second + ", the run has " + r->scenario_hash +
                          "); expand the sweep again");
      }
      RunPlan plan;
      plan.run = r;
      plan.file = file;
      plan.scenario = workload::load_scenario(r->scenario, dirs.scenarios, registry,
                                              sweep::to_overrides(r->overrides));
      plan.topology.reset(
          new topology::Topology(workload::load_topology(plan.scenario, dirs.topologies)));
      registry.create(r->selector);
      sched::make_placement(r->placement);
      plans.push_back(std::move(plan));
    } catch (const ConfigError& error) {
      throw ConfigError(where + ": " + error.what());
    }
  }
  std::error_code dir_error;
  fs::create_directories(out_dir, dir_error);
  if (dir_error || !fs::is_directory(out_dir)) {
    throw ConfigError(out_dir.string() + ": cannot create the directory" +
                      (dir_error ? ": " + dir_error.message() : std::string()));
  }
  out << skipped_lines;

  std::mutex out_mutex;
  std::vector<std::exception_ptr> failures(plans.size());
  // Runs plan i into its result file, or records its failure.
  const auto run_plan = [&](std::size_t i) {
    const RunPlan& plan = plans[i];
    const sweep::RunSpec& r = *plan.run;
    try {
      sim::RunOptions run_options;
      run_options.selector = r.selector;
      run_options.placement = r.placement;
      run_options.seed = r.seed;
      const auto start = std::chrono::steady_clock::now();
      const stats::RunResult result =
          sim::run(plan.scenario, *plan.topology, registry, run_options);
      std::ostringstream text;
      sweep::write_run_record(r, result, text);
      write_file_atomically(plan.file.string(), text.str());
      const double wall_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const std::lock_guard<std::mutex> lock(out_mutex);
      out << fmt::format("run {} {}: {}: done in {:.2f} s{}\n", r.index, r.run_id, run_text(r),
                         wall_s, result.clients_finished ? "" : " (the clients did not finish)");
      out.flush();
      failures[i] = nullptr;
    } catch (...) {
      failures[i] = std::current_exception();
    }
  };
  const auto wall_start = std::chrono::steady_clock::now();
  const std::size_t num_threads =
      run_jobs(static_cast<std::size_t>(jobs_option), run_plan, failures);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  for (std::size_t i = 0; i < plans.size(); ++i) {
    if (!failures[i]) continue;
    try {
      std::rethrow_exception(failures[i]);
    } catch (const ConfigError& error) {
      throw ConfigError(fmt::format("{}: run {} ({}): {}", runs_file, plans[i].run->index,
                                    plans[i].run->run_id, error.what()));
    }
  }
  const std::string share = only    ? fmt::format("index {}", *only)
                            : shard ? fmt::format("shard {}/{}", shard->first, shard->second)
                                    : std::string("all runs");
  if (!output_reached(out)) return 0;  // finish_output() reports the failed write
  err << fmt::format(
      "{}: {} run(s): {} ran, {} skipped (result exists), in {:.3f} s wall on {} "
      "thread(s)\n",
      share, selected.size(), plans.size(), skipped, wall_s, num_threads);
  return 0;
}

bool is_result_name(const fs::path& path) {
  const std::string name = path.filename().string();
  return name.size() == 21 && path.extension() == ".json" &&
         std::all_of(name.begin(), name.begin() + 16,
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

int merge(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description options("options");
  options.add_options()("help,h", "show this help")(
      "runs", po::value<std::string>(),
      "runs file: merge only its runs and report those without a result")(
      "out,o", po::value<std::string>(), "write the summary JSON to SUMMARY")(
      "across", po::value<std::string>(),
      "one table across the points of these metrics, comma-separated keys of the summary's "
      "\"metrics\" (e.g. throughput,latency.p50)")("dir", po::value<std::string>(),
                                                   "directory of the result files");
  po::variables_map vm;
  if (!parse_options("sweep merge", args, options, "dir", vm, err)) return 2;
  if (vm.count("help")) {
    out << kMergeUsage << "\n" << options;
    return 0;
  }
  if (!vm.count("dir")) return usage_error(err, "sweep merge", "missing DIR");
  std::vector<std::size_t> across;
  if (vm.count("across")) {
    across = sweep::metric_indices(stats::comparison_metrics(), vm["across"].as<std::string>(),
                                   "--across");
  }
  const fs::path dir = vm["dir"].as<std::string>();
  std::optional<std::vector<sweep::RunSpec>> listed;
  if (vm.count("runs")) listed = sweep::read_runs_file(vm["runs"].as<std::string>());

  std::error_code error;
  if (!fs::exists(dir, error)) {
    throw ConfigError(dir.string() +
                      (error ? ": cannot read: " + error.message() : ": no such directory"));
  }
  if (!fs::is_directory(dir, error)) throw ConfigError(dir.string() + ": not a directory");
  std::vector<fs::path> files;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    if (is_result_name(it->path())) files.push_back(it->path());
  }
  if (error) throw ConfigError(dir.string() + ": cannot read the directory: " + error.message());
  std::sort(files.begin(), files.end());
  // Without --runs there is nothing to report on: an empty directory is an error.
  if (!listed && files.empty()) {
    throw ConfigError(dir.string() + ": no results to merge (no <run_id>.json files)");
  }

  if (vm.count("out")) {
    std::vector<NamedInput> inputs;
    if (vm.count("runs")) inputs.emplace_back("the runs file", vm["runs"].as<std::string>());
    for (const fs::path& file : files) inputs.emplace_back("a result to merge", file.string());
    check_not_an_input("--out", vm["out"].as<std::string>(), inputs);
  }
  sweep::SweepMerger merger(listed);
  for (const fs::path& file : files) {
    const sweep::RunRecord record = sweep::read_run_record_file(file);
    if (record.run.run_id != file.stem().string()) {
      throw ConfigError(file.string() + ": /run/run_id: expected \"" + file.stem().string() +
                        "\" (the file's name), got \"" + record.run.run_id + "\"");
    }
    merger.add(record, file.string());
  }
  const sweep::SweepSummary summary = std::move(merger).finish();
  if (vm.count("out")) {
    std::ostringstream json;
    sweep::write_summary_json(summary, json);
    write_file_atomically(vm["out"].as<std::string>(), json.str());
  }
  if (vm.count("across")) {
    sweep::print_sweep_overview(summary, across, out);
  } else {
    sweep::print_sweep_tables(summary, out);
  }

  if (!output_reached(out)) return 0;  // finish_output() reports the failed write
  err << fmt::format("sweep {}: merged {} result(s) into {} point(s)\n",
                     console_text(summary.sweep), summary.merged, summary.points.size());
  if (summary.ignored > 0) {
    err << fmt::format(
        "bindersim sweep merge: warning: {} result(s) in {} are not runs of {}; "
        "ignored\n",
        summary.ignored, console_text(dir.string()), console_text(vm["runs"].as<std::string>()));
  }
  if (summary.missing.empty()) return 0;
  err << fmt::format("bindersim sweep merge: {} of {} run(s) have no result in {}:\n",
                     summary.missing.size(), summary.listed.value_or(0),
                     console_text(dir.string()));
  const std::size_t named = std::min(summary.missing.size(), kMissingLines);
  for (std::size_t i = 0; i < named; ++i) {
    const sweep::RunSpec& r = summary.missing[i];
    err << fmt::format("  missing run {} {}: {}\n", r.index, r.run_id, run_text(r));
  }
  if (named < summary.missing.size()) {
    err << fmt::format("  and {} more{}\n", summary.missing.size() - named,
                       vm.count("out") ? " (the summary lists them all)" : "");
  }
  return 1;
}

}  // namespace

int sweep_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  constexpr const char* kValidSubcommands =
      "valid subcommands: expand, run, merge (see bindersim sweep --help)";
  if (args.empty()) {
    error_line(err, "bindersim sweep", std::string("missing subcommand; ") + kValidSubcommands);
    return 2;
  }
  if (args[0] == "--help" || args[0] == "-h") {
    out << kSweepUsage;
    return 0;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  try {
    if (args[0] == "expand") return expand(rest, out, err);
    if (args[0] == "run") return run(rest, out, err);
    if (args[0] == "merge") return merge(rest, out, err);
  } catch (const ConfigError& error) {
    error_line(err, "bindersim sweep " + console_text(args[0]), error.what());
    return 2;
  }
  error_line(err, "bindersim sweep",
             "unknown subcommand \"" + args[0] + "\"; " + kValidSubcommands);
  return 2;
}

}  // namespace bindersim::cli
