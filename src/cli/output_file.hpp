// Writing output files whole or not at all.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace bindersim::cli {

// A name for a temporary file beside `path`, unique to this process and call:
// "<path>.<pid>-<n>.tmp", the file name cut short to keep within 255 bytes. Two writers of one
// path (threads, processes, or a run whose other output is named "<path>.tmp") never share a
// temporary.
std::string temporary_path(const std::string& path);

// Sets up the removal of temporary files when the process is interrupted: SIGINT, SIGTERM and
// SIGHUP (each unless ignored at start, as by nohup or for a shell's background job) are taken
// by a thread of their own, which removes every file a RemovedIfInterrupted names and then ends
// the process by the same signal, as its default action would have. Call it first thing in
// main(), before any other thread starts: threads started later inherit the blocked signals.
void remove_temporaries_on_interrupt();

// While it lives, `path` (a temporary: unique to this process, see temporary_path()) is removed
// if the process is interrupted. Create it before the file: a file created afterwards cannot
// escape the removal. Removing a name that is gone already (renamed into place) does nothing.
class RemovedIfInterrupted {
 public:
  explicit RemovedIfInterrupted(std::string path);
  ~RemovedIfInterrupted();
  RemovedIfInterrupted(const RemovedIfInterrupted&) = delete;
  RemovedIfInterrupted& operator=(const RemovedIfInterrupted&) = delete;

 private:
  std::string path_;
};

// Writes `content` to a temporary file beside `path` (temporary_path()), then renames it over
// `path`, so that a reader never sees a partial file. Failure is a ConfigError naming the path.
void write_file_atomically(const std::string& path, const std::string& content);

// True when `a` and `b` name the same file, whether or not it exists yet: the same existing file
// (through symbolic or hard links), or the same path once resolved.
bool same_file(const std::string& a, const std::string& b);

// An input of a command: what it is ("the scenario") and its path.
using NamedInput = std::pair<std::string, std::string>;

// Refuses an output that names one of the command's inputs, which writing it would replace:
// a ConfigError '<option>: "<path>" is an input (<what>); expected another file'. Checked before
// anything is written.
void check_not_an_input(const std::string& option, const std::string& output,
                        const std::vector<NamedInput>& inputs);

}  // namespace bindersim::cli
