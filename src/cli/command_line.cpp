#include "command_line.hpp"

#include <ostream>

namespace bindersim::cli {
namespace po = boost::program_options;

int usage_error(std::ostream& err, const std::string& command, const std::string& message) {
  err << "bindersim " << command << ": " << message << " (see bindersim " << command
      << " --help)\n";
  return 2;
}

bool parse_options(const std::string& command, const std::vector<std::string>& args,
                   const po::options_description& options, const std::string& positional_name,
                   po::variables_map& vm, std::ostream& err) {
  po::positional_options_description positional;
  positional.add(positional_name.c_str(), 1);
  try {
    po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& error) {
    usage_error(err, command, error.what());
    return false;
  }
  return true;
}

std::vector<workload::Override> set_overrides(const po::variables_map& vm) {
  std::vector<workload::Override> overrides;
  if (vm.count("set")) {
    for (const auto& text : vm["set"].as<std::vector<std::string>>()) {
      overrides.push_back(workload::parse_override(text));
    }
  }
  return overrides;
}

}  // namespace bindersim::cli
