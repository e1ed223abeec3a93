#include "output_file.hpp"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>

#include "bindersim/common/error.hpp"
#include "bindersim/common/json_reader.hpp"

namespace bindersim::cli {
namespace {

// The temporaries to remove on an interrupt. Never destroyed: the interrupt thread may use it
// while the process exits.
struct Temporaries {
  std::mutex mutex;
  std::multiset<std::string> paths;
};
Temporaries& temporaries() {
  static auto* const instance = new Temporaries;
  return *instance;
}

}  // namespace

void remove_temporaries_on_interrupt() {
  sigset_t taken;
  sigemptyset(&taken);
  int count = 0;
  for (const int signal : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction current {};
    if (sigaction(signal, nullptr, &current) == 0 && current.sa_handler != SIG_IGN) {
      sigaddset(&taken, signal);
      ++count;
    }
  }
  if (count == 0) return;
  if (pthread_sigmask(SIG_BLOCK, &taken, nullptr) != 0) return;
  const auto take = [taken] {
    int signal = 0;
    if (sigwait(&taken, &signal) != 0) return;
    // Held until the process ends: no temporary can be named, and so none created, after
    // this removal.
    temporaries().mutex.lock();
    for (const std::string& path : temporaries().paths) ::unlink(path.c_str());
    std::signal(signal, SIG_DFL);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, signal);
    pthread_sigmask(SIG_UNBLOCK, &only, nullptr);
    std::raise(signal);
    std::_Exit(128 + signal);  // not reached: the default action ends the process
  };
  try {
    std::thread(take).detach();
  } catch (const std::system_error&) {
    pthread_sigmask(SIG_UNBLOCK, &taken, nullptr);  // no thread: the signals act as before
  }
}

RemovedIfInterrupted::RemovedIfInterrupted(std::string path) : path_(std::move(path)) {
  const std::lock_guard<std::mutex> lock(temporaries().mutex);
  temporaries().paths.insert(path_);
}

RemovedIfInterrupted::~RemovedIfInterrupted() {
  const std::lock_guard<std::mutex> lock(temporaries().mutex);
  temporaries().paths.erase(temporaries().paths.find(path_));
}

std::string temporary_path(const std::string& path) {
  static std::atomic<std::uint64_t> next{0};
  std::string suffix = ".";
  suffix += std::to_string(::getpid());
  suffix += '-';
  suffix += std::to_string(next++);
  suffix += ".tmp";
  // A file name near the system's limit (255 bytes) keeps room for the suffix by giving up
  // the end of its own name: the temporary stays beside the file.
  constexpr std::size_t kMaxName = 255;
  const std::size_t slash = path.rfind('/');
  const std::size_t name_start = slash == std::string::npos ? 0 : slash + 1;
  std::string name = path;
  if (name.size() - name_start + suffix.size() > kMaxName) {
    name.resize(name_start + kMaxName - suffix.size());
  }
  name += suffix;
  return name;
}

void write_file_atomically(const std::string& path, const std::string& content) {
  // A path that exists and is not a regular file (/dev/null, a FIFO, a terminal) is written in
  // place: renaming over it would replace the device or pipe with a file.
  std::error_code status_error;
  const auto status = std::filesystem::status(path, status_error);
  if (!status_error && std::filesystem::exists(status) &&
      !std::filesystem::is_regular_file(status)) {
    std::ofstream file(path, std::ios::binary);
    if (!file) throw ConfigError(path + ": cannot write file");
    file << content;
    file.flush();
    if (!file) throw ConfigError(path + ": write failed");
    return;
  }
  const std::string temporary = temporary_path(path);
  const RemovedIfInterrupted removed_if_interrupted(temporary);
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (!file) throw ConfigError(path + ": cannot write file");
    file << content;
    file.flush();
    if (!file) {
      std::remove(temporary.c_str());
      throw ConfigError(path + ": write failed");
    }
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::remove(temporary.c_str());
    throw ConfigError(path + ": cannot write file: " + error.message());
  }
}

bool same_file(const std::string& a, const std::string& b) {
  // Two existing names of one file (hard links too) are the same file by device and inode.
  std::error_code link_error;
  if (std::filesystem::equivalent(a, b, link_error) && !link_error) return true;
  const auto resolved = [](const std::string& path) {
    std::error_code error;
    auto absolute = std::filesystem::absolute(path, error);
    if (error) return std::filesystem::path(path).lexically_normal();
    auto canonical = std::filesystem::weakly_canonical(absolute, error);
    return error ? absolute.lexically_normal() : canonical;
  };
  return resolved(a) == resolved(b);
}

void check_not_an_input(const std::string& option, const std::string& output,
                        const std::vector<NamedInput>& inputs) {
  for (const auto& [what, path] : inputs) {
    if (same_file(output, path)) {
      throw ConfigError(option + ": \"" + escaped_text(output) + "\" is an input (" + what +
                        "); expected another file");
    }
  }
}

}  // namespace bindersim::cli
