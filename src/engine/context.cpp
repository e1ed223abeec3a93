#include "bindersim/engine/context.hpp"

#include <spdlog/sinks/stdout_sinks.h>

namespace bindersim::engine {
namespace {

std::shared_ptr<spdlog::logger> make_logger(const std::string& name, const spdlog::sink_ptr& sink) {
  auto logger = std::make_shared<spdlog::logger>(name, sink);
  logger->set_level(spdlog::level::warn);
  return logger;
}

}  // namespace

SimContext::SimContext(const topology::Topology& topology_in, std::uint64_t seed_in)
    : topology(topology_in), seed(seed_in) {
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_st>();
  // No wall-clock time stamp: each record carries its simulated time, so the same run gives
  // the same log.
  sink->set_pattern("[%n] [%l] %v");
  sched_log = make_logger("sched", sink);
  binder_log = make_logger("binder", sink);
  workload_log = make_logger("workload", sink);
}

void SimContext::set_log_level(spdlog::level::level_enum level) const {
  for (const auto& logger : {sched_log, binder_log, workload_log}) logger->set_level(level);
}

void log_debug(spdlog::logger& logger, fmt::string_view format, fmt::format_args args) {
  logger.log(spdlog::level::debug, fmt::vformat(format, args));
}

}  // namespace bindersim::engine
