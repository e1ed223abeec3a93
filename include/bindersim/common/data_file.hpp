// Input files named either by path or by name in a data directory (topologies/, scenarios/).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace bindersim {

// The file for `name_or_path`: the argument itself when it is an existing file, ends in
// ".json" or contains a '/'; otherwise <dir>/<name>.json. An unknown name is a ConfigError
// "unknown <kind> \"x\" (did you mean \"y\"?); available <kinds>: a, b".
std::filesystem::path resolve_data_file(const std::string& name_or_path,
                                        const std::filesystem::path& dir, std::string_view kind,
                                        std::string_view kinds);

// Names (file stems) of the *.json files in `dir`, sorted; empty if it cannot be read.
std::vector<std::string> data_file_names(const std::filesystem::path& dir);

}  // namespace bindersim
