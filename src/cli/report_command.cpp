// `bindersim report`: result and compare documents as one self-contained HTML page.
#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "bindersim/common/error.hpp"
#include "bindersim/io/report.hpp"
#include "command_line.hpp"
#include "commands.hpp"
#include "output_file.hpp"

namespace bindersim::cli {
namespace po = boost::program_options;

namespace {

constexpr const char* kReportUsage =
    "usage: bindersim report INPUT... --out FILE [--title TEXT]\n"
    "\n"
    "Writes one self-contained HTML page (inline CSS and SVG; no script, no network) from\n"
    "result documents (`bindersim run --out`), compare documents (`bindersim compare --out`)\n"
    "and sweep summaries (`bindersim sweep merge --out`), in any mix. Each result is one\n"
    "policy; each compare column is one policy over its seeds. Charts: tier shares per policy\n"
    "and scheduling class, latency CDFs per class and tier (drawn through the quantiles the\n"
    "documents carry), the latency breakdown, per-CPU utilization (when the results carry\n"
    "it), the selector's decisions; then the compare tables. Each sweep gets a section of\n"
    "its own: throughput, latency and same-core shares of every column across the points\n"
    "(pooled value and 95% interval), a table with a row per point, and every metric's table\n"
    "per point. Light and dark colour schemes follow the browser's. The same inputs give a\n"
    "byte-identical page.\n"
    "\n"
    "Bad input prints one line (file, JSON pointer, expected and found), exits 2 and writes\n"
    "nothing. --out - writes the page to standard output.\n"
    "\n"
    "examples:\n"
    "  bindersim compare schd-dbg --selectors fifo,ctabs,ctabs-nudge --seeds 3 --out cmp.json\n"
    "  bindersim report cmp.json -o report.html\n"
    "  bindersim report fifo.json ctabs.json cmp.json -o report.html --title \"CTABS on "
    "SA8155P\"\n"
    "  bindersim sweep merge results --runs runs.jsonl --out summary.json\n"
    "  bindersim report summary.json -o sweep.html\n";

}  // namespace

int report_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description options("options");
  options.add_options()("help,h", "show this help")(
      "out,o", po::value<std::string>(), "write the HTML page to FILE (\"-\": standard output)")(
      "title", po::value<std::string>(), "page title (default: \"bindersim report: SCENARIO\")")(
      "input", po::value<std::vector<std::string>>(),
      "result, compare or sweep summary JSON documents");
  po::positional_options_description positional;
  positional.add("input", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& error) {
    return usage_error(err, "report", error.what());
  }
  if (vm.count("help")) {
    out << kReportUsage << "\n" << options;
    return 0;
  }
  if (!vm.count("input")) return usage_error(err, "report", "missing INPUT");
  if (!vm.count("out")) return usage_error(err, "report", "missing --out FILE");
  try {
    // Every input is read and the whole page built before anything is written.
    std::vector<std::filesystem::path> paths;
    std::vector<NamedInput> inputs;
    for (const std::string& input : vm["input"].as<std::vector<std::string>>()) {
      paths.emplace_back(input);
      inputs.emplace_back("a document to report", input);
    }
    if (vm["out"].as<std::string>() != "-") {
      check_not_an_input("--out", vm["out"].as<std::string>(), inputs);
    }
    const io::ReportData data = io::read_report_files(paths);
    io::ReportOptions report_options;
    if (vm.count("title")) report_options.title = vm["title"].as<std::string>();
    std::ostringstream html;
    io::write_report_html(data, report_options, html);
    const std::string& path = vm["out"].as<std::string>();
    if (path == "-") {
      out << html.str();
    } else {
      write_file_atomically(path, html.str());
    }
    return 0;
  } catch (const ConfigError& error) {
    error_line(err, "bindersim report", error.what());
    return 2;
  }
}

}  // namespace bindersim::cli
