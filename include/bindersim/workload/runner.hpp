// Runs a scenario's userspace on the binder driver: client loops, helper threads and service
// handlers, recording every completed two-way call into the run's statistics.
#pragma once

#include <cstdint>
#include <vector>

#include "bindersim/binder/driver.hpp"
#include "bindersim/engine/context.hpp"
#include "bindersim/stats/result.hpp"
#include "bindersim/workload/scenario.hpp"

namespace bindersim::workload {

class WorkloadRunner final : public binder::UserSpace, public engine::EventHandler {
 public:
  WorkloadRunner(engine::SimContext& context, binder::Driver& driver, const Scenario& scenario,
                 stats::RunResult& result);

  // Creates the processes (their main loopers start at time 0) and schedules the clients.
  void start();
  bool finished() const { return clients_done_ == scenario_.clients.size(); }
  // Calls completed by the clients, and whether every client finished its iterations.
  std::size_t clients_done() const { return clients_done_; }

  // binder::UserSpace
  void on_user_work_done(int tid) override;
  void on_transaction(int tid, int txn) override;
  void on_reply(int tid, const binder::CallRecord& record) override;
  void on_oneway_sent(int tid, bool failed) override;
  // engine::EventHandler: client start times.
  void on_event(const engine::Event& event) override;

 private:
  // Position in a list of steps; a thread has a stack of frames (a handler frame is pushed
  // when a nested transaction arrives while the thread waits for its own reply).
  struct Frame {
    const Steps* steps = nullptr;
    std::size_t pc = 0;
    int txn = -1;  // the transaction a handler frame serves
    int node_proc = -1;
    int node = -1;
    int rng = 0;  // index into rngs_: the client's stream, or the node's
    // A local call: a call to the caller's own process runs the node's handler on the calling
    // thread (BBinder::transact, no driver; a oneway one too, as BBinder::transact ignores
    // FLAG_ONEWAY), started at this time on this CPU. Only a two-way one counts as a call.
    bool local = false;
    bool local_oneway = false;
    engine::SimTime local_started = 0;
    int local_cpu = -1;
  };
  // What the thread's current user-code segment is.
  enum class Mode : std::uint8_t {
    kStarting,  // start-up work of a new thread; then its first step
    kStep,      // a compute or sleep step; then the next step
    kCreating,  // pthread_create of a thread step; then the creator waits for the thread
    kJoining,   // waiting for that thread; woken when it exits, then the next step
    kExiting,   // exit work of a helper thread; then it wakes its creator and exits
  };
  struct ThreadState {
    int client = -1;                    // index into loops_, for loop and helper threads
    bool main = false;                  // the client's own thread (it loops over iterations)
    int parent = -1;                    // creator of a helper thread
    const Step* thread_step = nullptr;  // the step that created this helper, or is creating
    Mode mode = Mode::kStarting;
    std::int64_t iterations_done = 0;
    engine::SimTime iteration_started = 0;  // of a loop thread's current iteration
    int zero_time_iterations = 0;           // in a row, ending with the last one
    std::vector<Frame> frames;
    // Frames of the helper's creators, each waiting for the next: a helper inherits its
    // creator's depth plus the creator's frames, so that handlers which start threads that
    // call back into their own process cannot nest without end.
    std::size_t creators_depth = 0;
  };

  // The state of thread `tid`, added on first use.
  ThreadState& state(int tid) {
    const auto index = static_cast<std::size_t>(tid);
    if (index >= threads_.size()) [[unlikely]]
      threads_.resize(index + 1);
    return threads_[index];
  }
  std::int64_t draw(const Quantity& q, int rng);
  // The list as a CPU mask (0 when empty); throws ConfigError for a CPU not in the topology.
  std::uint64_t cpu_mask(const CpuList& list) const;
  // Runs the thread's steps from the top frame's pc until one that takes simulated time.
  void advance(int tid);
  // Runs the step at the top frame's pc, or ends the frame; true when the thread's next step is
  // to run at once (the step took no simulated time).
  bool run_step(int tid);
  // Ends the top frame (a local call's handler, a transaction's, a loop's iteration, a
  // helper's steps); true when the thread's next step is to run at once.
  bool end_frame(int tid);
  // The thread exits; its state is cleared for whichever thread is given its id next.
  void exit_thread(int tid);
  // Counts the iteration of loop thread `tid` that ends now; throws ConfigError when too many in
  // a row took no simulated time (the loop would run without end at one instant).
  void check_iteration_time(int tid);
  // Stops the run: the scenario's handlers, calling from `step`, nest without end (`chain`
  // says how deep).
  [[noreturn]] void endless_calls(const Step& step, const std::string& chain) const;
  void spawn_helper(int tid);
  void record_call(const binder::CallRecord& record);

  engine::SimContext& context_;
  binder::Driver& driver_;
  const Scenario& scenario_;
  stats::RunResult& result_;
  std::uint16_t target_ = 0;
  std::vector<ThreadState> threads_;      // indexed by tid
  std::vector<engine::Rng> rngs_;         // one per client, then one per (process, node)
  std::vector<int> node_rng_base_;        // first rng of each process's nodes
  std::vector<const ClientSpec*> loops_;  // the clients, then the background tasks
  std::vector<int> loop_tids_;
  std::size_t clients_done_ = 0;
};

}  // namespace bindersim::workload
