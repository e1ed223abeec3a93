#include "bindersim/workload/overrides.hpp"

#include <charconv>
#include <string_view>
#include <utility>

#include "bindersim/common/error.hpp"
#include "bindersim/common/json_reader.hpp"

namespace bindersim::workload {
namespace {

// Overrides whose path begins with this reach into the topology's document.
constexpr std::string_view kTopologyPrefix = "topology.";

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    parts.push_back(path.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts;
}

// True when `text` is valid UTF-8 without control characters.
bool is_one_line_of_utf8(const std::string& text) {
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) return false;
  }
  try {
    static_cast<void>(nlohmann::json(text).dump());
  } catch (const nlohmann::json::type_error&) {  // not UTF-8
    return false;
  }
  return true;
}

}  // namespace

std::string overrides_text(const std::vector<Override>& overrides) {
  nlohmann::json pairs = nlohmann::json::array();
  for (const Override& o : overrides) pairs.push_back(nlohmann::json::array({o.path, o.value}));
  return compact_json(pairs);
}

bool is_topology_path(std::string_view path) { return path.starts_with(kTopologyPrefix); }

bool paths_overlap(std::string_view a, std::string_view b) {
  if (a.size() > b.size()) std::swap(a, b);
  if (is_topology_path(a) != is_topology_path(b)) return false;
  return b.substr(0, a.size()) == a && (b.size() == a.size() || b[a.size()] == '.');
}

bool path_sets(std::string_view outer, std::string_view inner) {
  return outer.size() <= inner.size() && paths_overlap(outer, inner);
}

Override parse_override(const std::string& text, std::string_view option) {
  // Messages quote the text as given, after its option: it must be one line of UTF-8.
  const std::string given = option.empty() ? std::string() : std::string(option) + " ";
  if (!is_one_line_of_utf8(text)) {
    throw ConfigError(given + quote_text(text) +
                      ": expected KEY=VALUE as UTF-8 text without control characters");
  }
  const std::size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0) {
    throw ConfigError(given + text + ": expected KEY=VALUE (e.g. kernel.placement=mainline)");
  }
  Override result;
  result.text = given + text;
  result.path = text.substr(0, equals);
  for (const auto& part : split_path(result.path)) {
    if (part.empty()) throw ConfigError(result.text + ": empty key in \"" + result.path + "\"");
  }
  const std::string value = text.substr(equals + 1);
  bool too_deep = false;
  const auto limit_depth = [&too_deep](int depth, nlohmann::json::parse_event_t event,
                                       const nlohmann::json&) {
    too_deep = too_deep || ((event == nlohmann::json::parse_event_t::object_start ||
                             event == nlohmann::json::parse_event_t::array_start) &&
                            depth >= kMaxJsonDepth);
    return !too_deep;
  };
  result.value = nlohmann::json::parse(value, limit_depth, /*allow_exceptions=*/false);
  if (too_deep) {
    throw ConfigError(given + quote_text(text) + ": expected a value nested at most " +
                      std::to_string(kMaxJsonDepth) + " levels deep");
  }
  if (result.value.is_discarded()) {
    result.value = value;  // a plain string
  } else {
    check_unique_keys(value, result.text);  // as strictly as a scenario file
  }
  return result;
}

namespace {

// True when `part` addresses array elements: "*" or an index.
bool is_array_position(const std::string& part) {
  return part == "*" ||
         (!part.empty() && part.find_first_not_of("0123456789") == std::string::npos);
}

// Sets the value at parts[i..] below `at`; "*" in an array position means every element.
// `where` is the dotted path of `at` with the elements' indices in place of "*", for messages.
void apply_at(nlohmann::json* at, const std::vector<std::string>& parts, std::size_t i,
              std::string where, const Override& o) {
  std::string created;  // the first key this call created, as a dotted path
  for (; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    const bool last = i + 1 == parts.size();
    if (at->is_null()) *at = nlohmann::json::object();  // a key created by this --set
    if (at->is_array() && part == "*") {
      if (at->empty()) {
        throw ConfigError(o.text + ": \"" + where + "\" is an empty array, so \"*\" addresses " +
                          "no element");
      }
      for (std::size_t index = 0; index < at->size(); ++index) {
        nlohmann::json& element = (*at)[index];
        if (last) {
          element = o.value;
        } else {
          apply_at(&element, parts, i + 1, where + "." + std::to_string(index), o);
        }
      }
      return;
    }
    if (at->is_array()) {
      // Plain decimal indices only: "00" would be a second path to element 0, past the checks
      // that a path is set once.
      std::size_t index = 0;
      const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), index);
      const bool leading_zero = part.size() > 1 && part[0] == '0';
      if (error != std::errc() || end != part.data() + part.size() || leading_zero ||
          index >= at->size()) {
        std::string array_path;
        for (std::size_t j = 0; j < i; ++j) array_path += (j ? "." : "") + parts[j];
        throw ConfigError(o.text + ": \"" + part + "\" is not an index of the " +
                          std::to_string(at->size()) + "-element array \"" + array_path +
                          "\" (or * for every element)");
      }
      at = &(*at)[index];
    } else if (at->is_object()) {
      // A missing key is created, but not as the array that a "*" or an index after it needs.
      // The message names the first key missing: below a created one, every key is.
      const std::string here = where.empty() ? part : where + "." + part;
      if (!last && !at->contains(part) && is_array_position(parts[i + 1])) {
        const std::string& missing = created.empty() ? here : created;
        const std::size_t dot = missing.rfind('.');
        throw ConfigError(
            o.text + ": " + (dot == std::string::npos ? "the scenario" : missing.substr(0, dot)) +
            " has no \"" + missing.substr(dot == std::string::npos ? 0 : dot + 1) + "\", so \"" +
            parts[i + 1] + "\" after \"" + part + "\" addresses no element");
      }
      if (created.empty() && !at->contains(part)) created = here;
      at = &(*at)[part];  // created when missing; the strict parser judges it
    } else {
      throw ConfigError(o.text + ": \"" + part + "\" is below a value that is " +
                        "neither an object nor an array");
    }
    where += (where.empty() ? "" : ".") + part;
    if (last) *at = o.value;
  }
}

}  // namespace

void apply_overrides(nlohmann::json& document, const std::vector<Override>& overrides) {
  for (const Override& o : overrides) {
    if (!is_topology_path(o.path)) apply_at(&document, split_path(o.path), 0, "", o);
  }
}

void apply_topology_overrides(nlohmann::json& topology_document,
                              const std::vector<Override>& overrides) {
  // The path's first part, "topology", names the document; messages keep it in their paths.
  for (const Override& o : overrides) {
    if (is_topology_path(o.path))
      apply_at(&topology_document, split_path(o.path), 1, "topology", o);
  }
}

}  // namespace bindersim::workload
