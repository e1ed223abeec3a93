// Writing output files whole or not at all.
#pragma once

#include <string>

namespace bindersim::cli {

// Writes `content` to a temporary file beside `path`, then renames it over `path`, so that a
// reader never sees a partial file. Failure is a ConfigError naming the path.
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace bindersim::cli
