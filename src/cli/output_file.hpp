// Writing output files whole or not at all.
#pragma once

#include <string>

namespace bindersim::cli {

// A name for a temporary file beside `path`, unique to this process and call:
// "<path>.<pid>-<n>.tmp", the file name cut short to keep within 255 bytes. Two writers of one
// path (threads, processes, or a run whose other output is named "<path>.tmp") never share a
// temporary.
std::string temporary_path(const std::string& path);

// Writes `content` to a temporary file beside `path` (temporary_path()), then renames it over
// `path`, so that a reader never sees a partial file. Failure is a ConfigError naming the path.
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace bindersim::cli
