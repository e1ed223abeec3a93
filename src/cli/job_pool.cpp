#include "job_pool.hpp"

#include <algorithm>
#include <atomic>
#include <new>
#include <system_error>
#include <thread>

namespace bindersim::cli {
namespace {

bool failed_for_memory(const std::exception_ptr& failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const std::bad_alloc&) {
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace

std::size_t run_jobs(std::size_t jobs, const std::function<void(std::size_t)>& job,
                     std::vector<std::exception_ptr>& failures,
                     const std::function<void()>& watch) {
  const std::size_t count = failures.size();
  std::atomic<std::size_t> next{0};
  const auto worker = [&] {
    for (std::size_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) job(i);
  };
  std::size_t num_threads = 1;
  {
    std::vector<std::thread> threads;
    // More threads than the machine runs at once only add memory (a stack, an allocator
    // arena and a simulation each), and with it the risk of running out.
    const std::size_t hardware = std::max(1u, std::thread::hardware_concurrency());
    std::size_t wanted = std::min({jobs, std::max<std::size_t>(count, 1), hardware});
    try {
      threads.reserve(wanted);
    } catch (const std::bad_alloc&) {
      wanted = 0;  // no room even for the list: the calling thread runs the jobs
    }
    for (std::size_t t = 0; t < wanted; ++t) {
      // The system refuses a thread with EAGAIN (std::system_error), or std::thread cannot
      // allocate its state (std::bad_alloc, under a memory limit): the threads that started
      // share the jobs.
      try {
        threads.emplace_back(worker);
      } catch (const std::system_error&) {
        break;
      } catch (const std::bad_alloc&) {
        break;
      }
    }
    if (threads.empty()) {
      worker();
    } else {
      num_threads = threads.size();
      // Whatever the display throws waits for the running threads: a joinable std::thread
      // destroyed by the unwinding would end the process.
      std::exception_ptr watch_failure;
      if (watch) {
        try {
          watch();
        } catch (...) {
          watch_failure = std::current_exception();
        }
      }
      for (std::thread& thread : threads) thread.join();
      if (watch_failure) std::rethrow_exception(watch_failure);
    }
  }
  if (num_threads > 1) {
    for (std::size_t i = 0; i < count; ++i) {
      if (failures[i] && failed_for_memory(failures[i])) job(i);
    }
  }
  return num_threads;
}

}  // namespace bindersim::cli
