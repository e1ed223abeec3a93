#include "bindersim/selectors/registry.hpp"

#include <algorithm>

#include "bindersim/common/error.hpp"
#include "bindersim/common/json_reader.hpp"
#include "bindersim/selectors/ctabs.hpp"
#include "bindersim/selectors/fifo.hpp"

namespace bindersim::selectors {

void SelectorRegistry::add(std::string name, std::string description, Factory factory) {
  BSIM_CHECK(!name.empty());
  BSIM_CHECK(factory != nullptr);
  BSIM_CHECK_MSG(!contains(name), "selector registered twice");
  entries_.push_back(Entry{std::move(name), std::move(description), std::move(factory)});
}

bool SelectorRegistry::contains(const std::string& name) const {
  return std::any_of(entries_.begin(), entries_.end(),
                     [&](const Entry& entry) { return entry.name == name; });
}

std::unique_ptr<Selector> SelectorRegistry::create(const std::string& name,
                                                   const JsonNode* params) const {
  for (const Entry& entry : entries_) {
    if (entry.name != name) continue;
    std::unique_ptr<Selector> selector = entry.factory(params);
    BSIM_CHECK(selector != nullptr);
    BSIM_CHECK_MSG(selector->name() == entry.name, "a selector must carry its registry name");
    return selector;
  }

  const std::vector<std::string> valid = names();
  std::string message =
      "unknown selector \"" + name + "\"" + did_you_mean(name, valid) + "; valid selectors: ";
  for (std::size_t i = 0; i < valid.size(); ++i) message += (i ? ", " : "") + valid[i];
  throw ConfigError(message);
}

std::vector<std::string> SelectorRegistry::names() const {
  std::vector<std::string> out;
  out.reserve(entries_.size());
  for (const Entry& entry : entries_) out.push_back(entry.name);
  return out;
}

void expect_no_params(const JsonNode* params) {
  if (params == nullptr || params->is_null()) return;
  ObjectReader(*params).finish();
}

void register_builtin_selectors(SelectorRegistry& registry) {
  registry.add(std::string(kFifoName),
               "kernel default: the head of waiting_threads (the thread idle most recently)",
               make_fifo_selector);
  registry.add(std::string(kCtabsName),
               "CTABS: prefer an idle thread that last ran on the caller's CPU, then its cluster",
               make_ctabs_selector);
  registry.add(std::string(kCtabsNudgeName),
               "CTABS plus the wake_cpu nudge to the caller's CPU when it is idle "
               "(parameter check_caller_idle)",
               make_ctabs_nudge_selector);
}

}  // namespace bindersim::selectors
