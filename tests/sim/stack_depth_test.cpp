// A workload whose steps take no simulated time runs them in turn, in a bounded stack. This
// executable compiles the workload runner without sibling-call optimisation (tests/CMakeLists.txt),
// as sanitizer and debug builds have it: steps that ran by recursion, which an optimised build's
// tail calls flatten, deepen the stack here with every step.
#include <gtest/gtest.h>
#include <pthread.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "bindersim/common/json_reader.hpp"
#include "sim_fixture.hpp"

namespace bindersim {
namespace {

// Runs `body` on a thread with a stack of `stack_bytes`; false if the thread could not start.
bool run_with_stack(std::size_t stack_bytes, const std::function<void()>& body) {
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return false;
  const bool sized = pthread_attr_setstacksize(&attr, stack_bytes) == 0;
  auto call = [](void* arg) -> void* {
    (*static_cast<const std::function<void()>*>(arg))();
    return nullptr;
  };
  pthread_t thread;
  const bool started =
      sized && pthread_create(&thread, &attr, call, const_cast<std::function<void()>*>(&body)) == 0;
  pthread_attr_destroy(&attr);
  if (started) pthread_join(thread, nullptr);
  return started;
}

TEST(StackDepthTest, LocalCallsThatTakeNoTimeRunWithoutDeepeningTheStack) {
  // 500 iterations of 200 local calls to a handler with nothing to run: 100,000 calls and
  // their returns at one instant. They once ran by recursion, a few frames per call, which
  // overflows 256 KiB here.
  using nlohmann::json;
  const json call_self = {{"op", "call"}, {"target", "P"}};
  const json doc = {
      {"schema", "bindersim.scenario/1"},
      {"name", "local-calls"},
      {"topology", "sa8155p"},
      {"processes", json::array({{{"name", "P"}, {"nodes", json::array({{{"name", "n"}}})}}})},
      {"clients", json::array({{{"name", "c"},
                                {"process", "P"},
                                {"iterations", 500},
                                {"iteration", std::vector<json>(200, call_self)}}})}};
  const auto scenario = workload::parse_scenario(
      JsonNode(doc, std::make_shared<const std::string>("local-calls.json"), ""),
      testing::builtin_registry());
  stats::RunResult result;
  ASSERT_TRUE(
      run_with_stack(256 * 1024, [&] { result = testing::run_scenario(scenario, "fifo"); }));
  EXPECT_TRUE(result.clients_finished);
  EXPECT_EQ(result.completed, 100'000U);
}

}  // namespace
}  // namespace bindersim
