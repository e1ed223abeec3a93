// Command-line plumbing shared by the subcommands: option parsing, one-line usage errors and
// the repeatable --set option.
#pragma once

#include <boost/program_options.hpp>
#include <iosfwd>
#include <string>
#include <vector>

#include "bindersim/workload/overrides.hpp"

namespace bindersim::cli {

// Writes "bindersim COMMAND: MESSAGE (see bindersim COMMAND --help)" as one line on `err` and
// returns 2, the exit code of bad input.
int usage_error(std::ostream& err, const std::string& command, const std::string& message);

// Parses `args` into `vm` against `options`, the first positional argument stored as
// `positional_name`. A malformed command line is reported through usage_error() and gives
// false.
bool parse_options(const std::string& command, const std::vector<std::string>& args,
                   const boost::program_options::options_description& options,
                   const std::string& positional_name, boost::program_options::variables_map& vm,
                   std::ostream& err);

// The overrides of the repeatable --set KEY=VALUE option, in the order given (none when the
// option is absent). A malformed one is a ConfigError.
std::vector<workload::Override> set_overrides(const boost::program_options::variables_map& vm);

}  // namespace bindersim::cli
