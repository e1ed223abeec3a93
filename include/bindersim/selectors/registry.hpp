// Name -> selector factory, filled explicitly by register_builtin_selectors().
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bindersim/selectors/selector.hpp"

namespace bindersim {
class JsonNode;
}

namespace bindersim::selectors {

class SelectorRegistry {
 public:
  // Builds a selector from its JSON parameters: nullptr when none are given; JSON null, too,
  // means the defaults. The node lives only for the call (keep values, not the node); a bad
  // parameter is a ConfigError at its file and pointer.
  using Factory = std::function<std::unique_ptr<Selector>(const JsonNode* params)>;

  struct Entry {
    std::string name;
    std::string description;  // one line, for --list-selectors and error messages
    Factory factory;
  };

  // Adds a policy; a duplicate name is an internal error.
  void add(std::string name, std::string description, Factory factory);
  bool contains(const std::string& name) const;
  // Creates `name`; an unknown name is a ConfigError listing the valid names.
  std::unique_ptr<Selector> create(const std::string& name, const JsonNode* params = nullptr) const;
  // Entries in registration order.
  const std::vector<Entry>& entries() const { return entries_; }
  std::vector<std::string> names() const;

 private:
  std::vector<Entry> entries_;
};

// For factories of policies without parameters: accepts nullptr, JSON null and an empty
// object; anything else is a ConfigError naming the file and pointer (ObjectReader::finish).
void expect_no_params(const JsonNode* params);

// Registers fifo, ctabs and ctabs-nudge. Adding a policy: its files, and one line here
// (docs/selectors.md, "Register it").
void register_builtin_selectors(SelectorRegistry& registry);

}  // namespace bindersim::selectors
