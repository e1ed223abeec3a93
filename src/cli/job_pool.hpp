// Runs a command's independent jobs (compare's columns x seeds, sweep runs) on worker threads.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <vector>

namespace bindersim::cli {

// Runs job(i) for every i in [0, failures.size()) on up to `jobs` threads, but no more than the
// machine's hardware threads, which take the jobs in index order. `job` must not throw: it stores
// its failure in failures[i] (nullptr when it succeeds), and writes only its own slot of any
// output. The system may refuse threads (a process or memory limit): the jobs are then shared by
// the threads that started, or run on the calling thread if none did. `watch`, if set, runs on the
// calling thread while worker threads run (a progress display that returns once every job is done).
// A job that failed with std::bad_alloc while other threads ran is run again alone afterwards: each
// thread takes address space (its stack, its allocator arena) that one thread alone does not need.
// So the results do not depend on the number of threads. Not handled: memory that runs out while
// a JSON document is torn down (nlohmann_json's destructor allocates) ends the process; the cap
// at the hardware threads keeps the memory in use, and so that risk, to what the machine runs.
// Returns the number of threads that ran jobs (1 as well when the calling thread ran them all).
std::size_t run_jobs(std::size_t jobs, const std::function<void(std::size_t)>& job,
                     std::vector<std::exception_ptr>& failures,
                     const std::function<void()>& watch = {});

}  // namespace bindersim::cli
