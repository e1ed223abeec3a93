// Tests of the ftrace writer: the --trace-window syntax, comm names, the lines a scheduler's
// transitions produce, and whole traced runs (the trace does not change the run, is
// deterministic, agrees with the result, and a window is a slice of the whole trace). The
// trace's consistency over whole runs is checked by check_trace.py (trace_end_to_end).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "../sched/sched_fixture.hpp"
#include "../sim/sim_fixture.hpp"
#include "bindersim/binder/driver.hpp"
#include "bindersim/common/error.hpp"
#include "bindersim/io/result_json.hpp"
#include "bindersim/trace/ftrace_writer.hpp"

namespace bindersim::trace {
namespace {

using engine::kMillisecond;
using engine::kSecond;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') lines.push_back(line);
  }
  return lines;
}

// The index of the first line at or after `from` that contains every one of `parts`; -1 if none.
int find_line(const std::vector<std::string>& lines, std::initializer_list<std::string> parts,
              int from = 0) {
  for (int i = std::max(from, 0); i < static_cast<int>(lines.size()); ++i) {
    bool all = true;
    for (const std::string& part : parts) all = all && lines[i].find(part) != std::string::npos;
    if (all) return i;
  }
  return -1;
}

// The timestamp of a line, in microseconds.
long long micros_of(const std::string& line) {
  static const std::regex stamp(R"( (\d+)\.(\d{6}): )");
  std::smatch match;
  if (!std::regex_search(line, match, stamp)) return -1;
  return std::stoll(match[1]) * 1'000'000 + std::stoll(match[2]);
}

int count_lines(const std::vector<std::string>& lines, const std::string& part) {
  int count = 0;
  for (const std::string& line : lines) count += line.find(part) != std::string::npos ? 1 : 0;
  return count;
}

// The "key=value" fields of `line` after its event name `event`; empty if the line is not one.
std::map<std::string, std::string> fields_of(const std::string& line, const std::string& event) {
  std::map<std::string, std::string> fields;
  const std::size_t at = line.find(" " + event + ": ");
  if (at == std::string::npos) return fields;
  std::istringstream in(line.substr(at + event.size() + 3));
  for (std::string token; in >> token;) {
    const std::size_t equals = token.find('=');
    if (equals != std::string::npos) fields[token.substr(0, equals)] = token.substr(equals + 1);
  }
  return fields;
}

// --- window and names ----------------------------------------------------------------------

TEST(TraceWindow, ParsesSecondsOnEitherSide) {
  // Seconds with up to nine decimals become exact nanoseconds; a missing side is open.
  const TraceWindow both = parse_trace_window("1.5:2.000000001");
  EXPECT_EQ(both.start, 1'500'000'000);
  EXPECT_EQ(both.end, 2'000'000'001);
  const TraceWindow from = parse_trace_window("3:");
  EXPECT_EQ(from.start, 3 * kSecond);
  EXPECT_EQ(from.end, engine::kNever);
  const TraceWindow until = parse_trace_window(":0.25");
  EXPECT_EQ(until.start, 0);
  EXPECT_EQ(until.end, 250 * kMillisecond);
  // The window is half-open: its end is excluded.
  EXPECT_TRUE(both.contains(1'500'000'000));
  EXPECT_FALSE(both.contains(2'000'000'001));
}

TEST(TraceWindow, RejectsMalformedWindowsWithTheExpectedForm) {
  // Each bad window is a ConfigError that quotes it and shows the expected form.
  for (const char* bad : {"2", "2:1", "1:1", "a:2", "1:b", "-1:2", "1.:2", "1:2:3",
                          "0.1234567891:", "1e300:", "1:1000000000"}) {
    try {
      parse_trace_window(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const ConfigError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find(std::string("--trace-window ") + bad), std::string::npos) << message;
      EXPECT_NE(message.find("START:END"), std::string::npos) << message;
    }
  }
  // A side out of the accepted form says what the form is, not only that it is not a number.
  try {
    parse_trace_window("1:1e300");
    ADD_FAILURE() << "accepted 1:1e300";
  } catch (const ConfigError& error) {
    EXPECT_NE(
        std::string(error.what())
            .find("END \"1e300\" is not seconds as S[.F] (decimal digits, S up to 9 and F up to 9"),
        std::string::npos)
        << error.what();
  }
}

TEST(FtraceComm, TruncatesToFifteenBytesAndKeepsFieldsOneToken) {
  // The kernel keeps 15 characters of a name; spaces and '=' would split "comm=..." fields.
  EXPECT_EQ(ftrace_comm("server:binder_12"), "server:binder_1");
  EXPECT_EQ(ftrace_comm("short"), "short");
  EXPECT_EQ(ftrace_comm("noise with=sign"), "noise_with_sign");
}

// --- the lines of scheduler transitions ------------------------------------------------------

// A scheduler with a writer attached, as a traced simulation has.
class SchedTraceTest : public ::testing::Test, public sched::fixture::SchedHarness {
 protected:
  SchedTraceTest() : writer_(out_, topology_) {
    context_.tracer = &writer_;
    writer_.begin(sched_);
  }
  std::vector<std::string> lines() {
    writer_.flush();
    return lines_of(out_.str());
  }

  std::ostringstream out_;
  FtraceWriter writer_;
};

TEST_F(SchedTraceTest, BeginShowsEveryCpusFrequencyAndIdleState) {
  // At the start every CPU is idle in state 0 and runs at its cluster's current frequency.
  const auto all = lines();
  for (int cpu = 0; cpu < sched_.num_cpus(); ++cpu) {
    const std::string id = " cpu_id=" + std::to_string(cpu);
    const auto khz = std::to_string(sched_.current_freq_khz(topology_.cluster_of(cpu)));
    EXPECT_GE(find_line(all, {"<idle>-0", "cpu_frequency: state=" + khz + id}), 0) << cpu;
    EXPECT_GE(find_line(all, {"cpu_idle: state=0" + id}), 0) << cpu;
  }
}

TEST_F(SchedTraceTest, ATaskLifeReadsAsTheKernelPrintsIt) {
  // A new task pinned to CPU 2 is woken, leaves idle, runs, sleeps, is woken by a timer and
  // exits; its name is cut to 15 characters and its pid is the first one.
  auto params = sched::fixture::fair_params("a-task-with-a-long-name", 0, sched::fixture::only(2));
  const int tid = spawn(params, 50 * engine::kMicrosecond, 2);
  run_for(kMillisecond);
  owner_.on_done(tid, [this](int id) { sched_.exit(id); });
  wake(tid, sched::WakeContext{});
  run_for(kMillisecond);
  const auto all = lines();

  const int created = find_line(all, {"sched_wakeup_new: comm=a-task-with-a-l pid=1000 prio=120 "
                                      "target_cpu=002"});
  ASSERT_GE(created, 0);
  const int exit_idle = find_line(all, {"[002]", "cpu_idle: state=4294967295 cpu_id=2"}, created);
  const int in = find_line(all,
                           {"<idle>-0       (-------) [002]",
                            "sched_switch: prev_comm=swapper/2 prev_pid=0 prev_prio=120 "
                            "prev_state=R ==> next_comm=a-task-with-a-l next_pid=1000 "
                            "next_prio=120"},
                           created);
  ASSERT_GE(exit_idle, 0);
  EXPECT_EQ(in, exit_idle + 1);
  const int out = find_line(all,
                            {" a-task-with-a-l-1000    (   1000) [002]",
                             "sched_switch: prev_comm=a-task-with-a-l prev_pid=1000 "
                             "prev_prio=120 prev_state=S ==> next_comm=swapper/2 next_pid=0 "
                             "next_prio=120"},
                            in);
  ASSERT_GT(out, in);
  EXPECT_GE(find_line(all, {"<idle>-0", "[002]", "cpu_idle: state="}, out), out + 1);
  const int waking = find_line(all,
                               {"sched_waking: comm=a-task-with-a-l pid=1000 prio=120 "
                                "target_cpu=002"},
                               out);
  const int wakeup = find_line(all, {"sched_wakeup: comm=a-task-with-a-l pid=1000"}, waking);
  ASSERT_GE(waking, 0);
  EXPECT_EQ(wakeup, waking + 1);
  EXPECT_GT(
      find_line(all, {"prev_pid=1000 prev_prio=120 prev_state=X ==> next_comm=swapper/2"}, wakeup),
      wakeup);
}

TEST_F(SchedTraceTest, AReusedTidIsANewPid) {
  // An exited task's tid is given again, but the new task is a new pid (the kernel does not
  // reuse pids at once).
  const int first = spawn(sched::fixture::fair_params("first"), 10 * engine::kMicrosecond, 1);
  owner_.on_done(first, [this](int id) { sched_.exit(id); });
  run_for(kMillisecond);
  const int second = spawn(sched::fixture::fair_params("second"), 10 * engine::kMicrosecond, 1);
  run_for(kMillisecond);
  ASSERT_EQ(second, first);
  const auto all = lines();
  EXPECT_GE(find_line(all, {"sched_wakeup_new: comm=first pid=1000 "}), 0);
  EXPECT_GE(find_line(all, {"sched_wakeup_new: comm=second pid=1001 "}), 0);
  EXPECT_EQ(find_line(all, {"comm=second pid=1000 "}), -1);
}

TEST_F(SchedTraceTest, APreemptedTaskIsRunnablePlus) {
  // An RT task woken on the CPU of a running fair task preempts it: prev_state=R+, and the RT
  // task's prio is 99 - its RT priority.
  const int fair = occupy(3, sched::fixture::fair_params("busy"));
  run_for(kMillisecond);
  spawn(sched::fixture::rt_params("urgent", 10, sched::fixture::only(3)), 10 * engine::kMicrosecond,
        3);
  run_for(kMillisecond);
  ASSERT_EQ(sched_.task(fair).cpu, 3);
  const auto all = lines();
  EXPECT_GE(find_line(all, {"[003]",
                            "prev_comm=busy prev_pid=1000 prev_prio=120 prev_state=R+ "
                            "==> next_comm=urgent next_pid=1001 next_prio=89"}),
            0);
}

TEST_F(SchedTraceTest, AMigrationNamesTheCpuItLeavesAndTheCpuItGoesTo) {
  // sched_migrate_task (sched.h): "comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d". A task
  // asleep on one CPU and allowed only another is woken there: it leaves the first for the
  // second.
  const int orig_cpu = 1;
  const int dest_cpu = 6;
  const int mover =
      sleeper(orig_cpu, sched::fixture::fair_params("mover"), sched::fixture::only(dest_cpu));
  wake(mover, sched::fixture::from_cpu(dest_cpu));
  run_for(kMillisecond);
  ASSERT_EQ(sched_.task(mover).cpu, dest_cpu);
  const auto all = lines();
  const int migrate = find_line(all, {"sched_migrate_task: comm=mover "});
  ASSERT_GE(migrate, 0);
  const auto fields = fields_of(all[static_cast<std::size_t>(migrate)], "sched_migrate_task");
  EXPECT_EQ(fields.at("pid"), std::to_string(FtraceWriter::kFirstPid));
  EXPECT_EQ(fields.at("orig_cpu"), std::to_string(orig_cpu));
  EXPECT_EQ(fields.at("dest_cpu"), std::to_string(dest_cpu));
}

TEST_F(SchedTraceTest, TimestampsAreMicrosecondsRoundedToTheNearest) {
  // ftrace prints ns2usecs(), rounded: 1.2345674995 s reads 1.234567, 1.2345685 s 1.234569.
  const int a = sleeper(1);
  const int b = sleeper(2);
  at(1'234'567'499, [&] { wake(a, sched::WakeContext{}); });
  at(1'234'568'500, [&] { wake(b, sched::WakeContext{}); });
  run_until(1'240'000'000);
  const auto all = lines();
  EXPECT_GE(find_line(all, {"     1.234567: sched_waking: comm=sleeper pid=1000 "}), 0);
  EXPECT_GE(find_line(all, {"     1.234569: sched_waking: comm=sleeper pid=1001 "}), 0);
}

TEST_F(SchedTraceTest, ANudgeIsAZeroLengthSliceOnTheWakersThread) {
  // The nudge annotation is a trace_marker begin/end pair written by the waker.
  const int waker = occupy(4, sched::fixture::fair_params("waker"));
  const int wakee = sleeper(5);
  run_for(kMillisecond);
  writer_.binder_nudge(sched_, waker, wakee, 5, 4);
  const auto all = lines();
  const int begin = find_line(all, {"waker-1000    (   1000) [004]",
                                    "tracing_mark_write: B|1000|binder nudge: thread=1001 "
                                    "wake_cpu=5 -> 4"});
  ASSERT_GE(begin, 0);
  EXPECT_EQ(find_line(all, {"waker-1000", "tracing_mark_write: E|1000"}, begin), begin + 1);
}

TEST_F(SchedTraceTest, APriorityChangeNamesTheThreadInTheActorsContext) {
  // binder_set_priority (binder_trace.h): written by the thread whose binder call changes the
  // priority, naming the changed thread by its tgid and pid.
  const int waker = occupy(4, sched::fixture::fair_params("waker"));
  const int wakee = sleeper(5);
  run_for(kMillisecond);
  writer_.binder_set_priority(sched_, waker, wakee, 120, 1);
  const auto all = lines();
  EXPECT_GE(find_line(all, {"waker-1000    (   1000) [004]",
                            "binder_set_priority: proc=1001 thread=1001 old=120 => new=1 "
                            "desired=1"}),
            0);
}

TEST_F(SchedTraceTest, ABinderTransactionNamesTheNodeProcessAndThreadItIsSentTo) {
  // binder_transaction (binder_trace.h): "transaction=%d dest_node=%d dest_proc=%d
  // dest_thread=%d reply=%d flags=0x%x code=0x%x". Transactions and nodes take debug ids from
  // one counter, as binder_last_id: the call takes the first and the node, first seen, the next.
  // Pids go in creation order: the client, the server process's first thread (its tgid), and
  // the binder thread called.
  const int client = occupy(4, sched::fixture::fair_params("client"));
  auto server_params = sched::fixture::fair_params("server");
  server_params.process = 0;
  sleeper(5, server_params);
  const int server_binder = sleeper(6, server_params);
  run_for(kMillisecond);
  binder::Transaction call;
  call.from_tid = client;
  call.to_proc = 0;
  call.node = 3;
  writer_.binder_transaction(sched_, 0, call, server_binder);
  const auto all = lines();
  const int first_pid = FtraceWriter::kFirstPid;
  const int sent = find_line(all, {"client-" + std::to_string(first_pid), "binder_transaction: "});
  ASSERT_GE(sent, 0);
  const auto fields = fields_of(all[static_cast<std::size_t>(sent)], "binder_transaction");
  const int call_id = 1;
  EXPECT_EQ(fields.at("transaction"), std::to_string(call_id));
  EXPECT_EQ(fields.at("dest_node"), std::to_string(call_id + 1));
  EXPECT_EQ(fields.at("dest_proc"), std::to_string(first_pid + 1));
  EXPECT_EQ(fields.at("dest_thread"), std::to_string(first_pid + 2));
  EXPECT_EQ(fields.at("reply"), "0");
}

// --- whole traced runs ---------------------------------------------------------------------

// Runs `scenario` under `selector`, traced into `trace` (when given) with `window`, reporting
// progress to `progress` (when given); returns the result JSON.
std::string run_json(const workload::Scenario& scenario, const std::string& selector,
                     std::string* trace = nullptr, TraceWindow window = {},
                     sim::ProgressSink* progress = nullptr, std::uint64_t* fingerprint = nullptr) {
  const auto topology = testing::topology_of(scenario);
  std::ostringstream out;
  FtraceWriter writer(out, topology, window, "test");
  sim::RunOptions options;
  options.selector = selector;
  if (trace != nullptr) options.tracer = &writer;
  options.progress = progress;
  const stats::RunResult result =
      sim::run(scenario, topology, testing::builtin_registry(), options);
  if (trace != nullptr) *trace = out.str();
  if (fingerprint != nullptr) *fingerprint = result.fingerprint;
  std::ostringstream json;
  io::write_result_json(result, json);
  return json.str();
}

class RecordingProgress final : public sim::ProgressSink {
 public:
  void on_progress(const sim::Progress& progress) override { reports.push_back(progress); }
  std::vector<sim::Progress> reports;
};

TEST(TracedRun, AndroidInheritanceShowsEachPriorityChange) {
  // schd-dbg's SCHED_FIFO caller lends its priority to the server before each wakeup, and the
  // server takes its own back after the reply: two changes per SCHED_FIFO call.
  auto scenario = testing::scaled_scenario("schd-dbg", 50);
  std::string trace;
  run_json(scenario, "fifo", &trace);
  const auto all = lines_of(trace);
  int raised = 0;
  int restored = 0;
  for (const auto& line : all) {
    if (line.find("binder_set_priority: ") == std::string::npos) continue;
    if (line.find("old=120 => new=0 desired=0") != std::string::npos) ++raised;
    if (line.find("old=0 => new=120 desired=120") != std::string::npos) ++restored;
  }
  EXPECT_EQ(raised, 50);
  EXPECT_EQ(restored, 50);
  scenario.kernel.inheritance = binder::PriorityInheritance::kUpstream;
  run_json(scenario, "fifo", &trace);
  EXPECT_EQ(trace.find("binder_set_priority"), std::string::npos) << "no such event upstream";
}

TEST(TracedRun, TracingAndProgressDoNotChangeTheRun) {
  // The result (fingerprint included) is byte-identical with and without a tracer and a
  // progress sink.
  const auto scenario = testing::scaled_scenario("schd-dbg", 1500);
  std::uint64_t plain_fingerprint = 0;
  std::uint64_t traced_fingerprint = 0;
  const std::string plain = run_json(scenario, "ctabs", nullptr, {}, nullptr, &plain_fingerprint);
  std::string trace;
  RecordingProgress progress;
  const std::string traced =
      run_json(scenario, "ctabs", &trace, {}, &progress, &traced_fingerprint);
  EXPECT_EQ(traced, plain);
  EXPECT_EQ(traced_fingerprint, plain_fingerprint);
  EXPECT_FALSE(trace.empty());
  EXPECT_FALSE(progress.reports.empty());
}

TEST(TracedRun, TheSameRunGivesTheSameTrace) {
  // Deterministic: two traced runs of the same inputs are byte-identical.
  const auto scenario = testing::scaled_scenario("schd-dbg", 200);
  std::string first;
  std::string second;
  run_json(scenario, "ctabs-nudge", &first);
  run_json(scenario, "ctabs-nudge", &second);
  EXPECT_EQ(first, second);
  EXPECT_GT(lines_of(first).size(), 1000U);
}

TEST(TracedRun, TheTraceAgreesWithTheResult) {
  // Every completed two-way call is one binder_transaction with reply=0 and one with reply=1,
  // and the selector annotations count the same decisions as the result.
  const auto scenario = testing::scaled_scenario("schd-dbg", 400);
  std::string trace;
  const auto result = nlohmann::json::parse(run_json(scenario, "ctabs", &trace));
  const auto all = lines_of(trace);
  const int completed = result["transactions"]["completed"].get<int>();
  EXPECT_EQ(count_lines(all, " reply=0 flags=0x10 "), completed);
  EXPECT_EQ(count_lines(all, " reply=1 flags=0x0 "), completed);
  const auto& decisions = result["selection"]["decisions"];
  EXPECT_EQ(count_lines(all, "binder select ctabs: same_cpu "), decisions["same_cpu"].get<int>());
  EXPECT_EQ(count_lines(all, "binder select ctabs: same_cluster "),
            decisions["same_cluster"].get<int>());
  EXPECT_EQ(count_lines(all, "binder select ctabs: other "), decisions["other"].get<int>());
  EXPECT_EQ(count_lines(all, "binder select ctabs: none_idle "), decisions["none_idle"].get<int>());
  // binder_transaction as binder_trace.h prints it.
  const std::regex transaction(
      R"(binder_transaction: transaction=\d+ dest_node=\d+ dest_proc=\d+ dest_thread=\d+ )"
      R"(reply=[01] flags=0x[0-9a-f]+ code=0x[0-9a-f]+$)");
  const int first = find_line(all, {"binder_transaction: "});
  ASSERT_GE(first, 0);
  EXPECT_TRUE(std::regex_search(all[static_cast<std::size_t>(first)], transaction))
      << all[static_cast<std::size_t>(first)];
}

TEST(TracedRun, AThreadRunsOnlyWhereItsCreatorMay) {
  // clone() copies the creator's CPU mask. schd-dbg's client, pinned to CPU 0, creates a thread
  // every iteration; under WALT placement such threads used to start on a gold CPU.
  auto scenario = testing::scaled_scenario("schd-dbg", 20);
  scenario.clients[0].affinity.cpus = {0};
  scenario.kernel.placement = "walt";
  std::string trace;
  run_json(scenario, "fifo", &trace);
  int switched_in = 0;
  for (const std::string& line : lines_of(trace)) {
    if (line.find("==> next_comm=client:thread ") == std::string::npos) continue;
    ++switched_in;
    EXPECT_NE(line.find("[000]"), std::string::npos) << line;
  }
  EXPECT_GE(switched_in, 20);
}

TEST(TracedRun, AThreadOfATaskOutsideEveryProcessStartsInItsStepsClass) {
  // A background task without a process creates a thread at nice 5: it is created directly in
  // that class (sched_wakeup_new at prio 125), whatever a process's bionic setting. A client of
  // a process that creates threads as bionic does starts its thread in its own class (prio 120)
  // and sets the step's afterwards.
  workload::Step work;
  work.op = workload::Step::Op::kCompute;
  work.amount = {workload::Quantity::Kind::kConstant, 20'000, 0};
  workload::Step thread;
  thread.op = workload::Step::Op::kThread;
  thread.nice = 5;
  thread.create_ref_ns = 1'000;
  thread.start_ref_ns = 1'000;
  thread.exit_ref_ns = 1'000;
  thread.steps = std::make_shared<workload::Steps>(workload::Steps{work});
  thread.pointer = "/background/0/iteration/0";
  workload::Step nap;
  nap.op = workload::Step::Op::kSleep;
  nap.amount = {workload::Quantity::Kind::kConstant, 100'000, 0};
  auto scenario = testing::scaled_scenario("sync-wakeup", 5);
  workload::ClientSpec spawner;
  spawner.name = "spawner";
  spawner.process = -1;
  spawner.iteration = {thread, nap};
  scenario.background.push_back(spawner);
  for (auto& process : scenario.processes) process.bionic_thread_creation = true;
  ASSERT_EQ(scenario.clients.size(), 1U);
  scenario.clients[0].iteration.insert(scenario.clients[0].iteration.begin(), thread);
  std::string trace;
  run_json(scenario, "fifo", &trace);
  int direct = 0;
  int bionic = 0;
  for (const std::string& line : lines_of(trace)) {
    if (line.find("sched_wakeup_new: comm=spawner:thread ") != std::string::npos) {
      ++direct;
      EXPECT_NE(line.find(" prio=125 "), std::string::npos) << line;
    }
    if (line.find("sched_wakeup_new: comm=client:thread ") != std::string::npos) {
      ++bionic;
      EXPECT_NE(line.find(" prio=120 "), std::string::npos) << line;
    }
  }
  EXPECT_GE(direct, 1);
  EXPECT_EQ(bionic, 5);
}

TEST(TracedRun, AWindowIsASliceOfTheWholeTrace) {
  // The lines of a windowed trace are the whole trace's lines in that window, after the
  // snapshot of the CPUs' state at the window's start.
  const auto scenario = testing::scaled_scenario("schd-dbg", 300);
  std::string whole;
  std::string part;
  run_json(scenario, "fifo", &whole);
  run_json(scenario, "fifo", &part, TraceWindow{20 * kMillisecond, 30 * kMillisecond});
  const auto all = lines_of(whole);
  const auto window = lines_of(part);
  std::size_t first = 0;
  while (first < window.size() && window[first].find("     0.020000: cpu_") != std::string::npos) {
    ++first;
  }
  ASSERT_GE(first, 8U);  // every CPU's frequency at least
  ASSERT_LT(first, window.size());
  const int at = find_line(all, {window[first]});
  ASSERT_GE(at, 0);
  for (std::size_t i = first; i < window.size(); ++i) {
    ASSERT_EQ(window[i], all[static_cast<std::size_t>(at) + i - first]) << i;
  }
  // The window ends where the whole trace goes on at 30 ms (printed rounded to the microsecond).
  EXPECT_LE(micros_of(window.back()), 30'000);
  EXPECT_GE(micros_of(all[static_cast<std::size_t>(at) + window.size() - first]), 30'000);
  EXPECT_GE(micros_of(window[first]), 20'000);
}

TEST(TracedRun, ProgressAdvancesTowardsTheExpectedCalls) {
  // Reports come in order of simulated time and calls done, never past the calls expected
  // (two per schd-dbg iteration).
  const auto scenario = testing::scaled_scenario("schd-dbg", 3000);
  RecordingProgress progress;
  run_json(scenario, "fifo", nullptr, {}, &progress);
  ASSERT_GE(progress.reports.size(), 2U);
  for (std::size_t i = 1; i < progress.reports.size(); ++i) {
    EXPECT_GE(progress.reports[i].simulated_ns, progress.reports[i - 1].simulated_ns);
    EXPECT_GE(progress.reports[i].calls_done, progress.reports[i - 1].calls_done);
    EXPECT_EQ(progress.reports[i].events - progress.reports[i - 1].events, sim::kProgressEvents);
  }
  EXPECT_EQ(progress.reports.back().calls_expected, 6000U);
  EXPECT_LE(progress.reports.back().calls_done, 6000U);
  EXPECT_GT(progress.reports.back().calls_done, 0U);
}

TEST(ExpectedCalls, CountsNestedCallsButNotOnewayOnes) {
  // In tests/trace/nested.json each of 500 client calls makes one nested two-way call and one
  // oneway call: 1000 two-way calls.
  const auto scenario =
      workload::load_scenario(testing::kSourceDir + "/tests/trace/nested.json",
                              testing::kSourceDir + "/scenarios", testing::builtin_registry());
  EXPECT_EQ(sim::expected_calls(scenario), 1000U);
  EXPECT_EQ(sim::expected_calls(testing::scaled_scenario("schd-dbg", 7)), 14U);
}

}  // namespace
}  // namespace bindersim::trace
