// The CLI's subcommands. Each takes its arguments (without the subcommand name), writes to the
// given streams and returns the process exit code: 0 success, 1 failure of the checked
// property, 2 bad input (one line on `err`, no output file written).
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

namespace bindersim::cli {

// Where topologies/ and scenarios/ are looked up by name.
std::filesystem::path data_dir();

int run_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int compare_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int check_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int topology_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int report_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int sweep_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace bindersim::cli
