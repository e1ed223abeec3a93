#include "bindersim/common/json_reader.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "bindersim/common/error.hpp"

namespace bindersim {
namespace {

std::string join(std::span<const std::string_view> words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i) out += ", ";
    out += words[i];
  }
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + cost});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// Line and column (1-based) of a byte offset in `text`.
std::pair<std::size_t, std::size_t> line_and_column(std::string_view text, std::size_t offset) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

// `text` with every byte outside printable ASCII written as \xNN: a message quoting input
// stays one line of valid text whatever the input's bytes.
std::string printable(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f) {
      out += c;
    } else {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    }
  }
  return out;
}

}  // namespace

std::string describe_json(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::object:
      return "an object";
    case nlohmann::json::value_t::array:
      return "an array";
    case nlohmann::json::value_t::boolean:
      return value.get<bool>() ? "true" : "false";
    case nlohmann::json::value_t::string:
      return quote_text(value.get_ref<const std::string&>());
    default:
      return value.dump();
  }
}

std::string escaped_text(std::string_view text) {
  // Bytes that are not UTF-8 (possible in --set values) become U+FFFD instead of throwing.
  const std::string quoted = nlohmann::json(std::string(text))
                                 .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return quoted.substr(1, quoted.size() - 2);
}

std::string short_text(std::string_view text) {
  constexpr std::size_t kMaxChars = 40;
  std::string out = escaped_text(text.substr(0, 2 * kMaxChars));
  if (out.size() <= kMaxChars && text.size() <= 2 * kMaxChars) return out;
  out.resize(kMaxChars - 2);
  // Cut before a partial UTF-8 sequence or escape, so the line stays valid text.
  while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xc0) == 0x80) out.pop_back();
  if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xc0) out.pop_back();
  const std::size_t backslash = out.rfind('\\');
  if (backslash != std::string::npos && out.size() - backslash < 6) out.resize(backslash);
  return out + "...";
}

std::string quote_text(std::string_view text) {
  // Appended rather than "\"" + ... + "\"", on which GCC 12 warns falsely (-Wrestrict).
  std::string quoted = "\"";
  quoted += short_text(text);
  quoted += '"';
  return quoted;
}

std::string name_list(std::span<const std::string> names, std::size_t limit) {
  std::string out;
  const std::size_t shown = std::min(names.size(), limit);
  for (std::size_t i = 0; i < shown; ++i) out += (i ? ", " : "") + short_text(names[i]);
  if (shown < names.size()) out += " and " + std::to_string(names.size() - shown) + " more";
  return out;
}

std::optional<std::string> closest_name(std::string_view word,
                                        std::span<const std::string> candidates) {
  std::optional<std::string> best;
  // The distance takes time in the product of the lengths: no suggestion for a long word.
  if (word.size() > 256) return best;
  // Suggest only close names: one edit for short words, two for medium ones, a third beyond.
  const std::size_t allowed = word.size() <= 3 ? 1 : word.size() <= 6 ? 2 : word.size() / 3;
  std::size_t best_distance = allowed + 1;
  for (const std::string& candidate : candidates) {
    // The distance is at least the difference in length.
    const std::size_t longer = std::max(word.size(), candidate.size());
    if (longer - std::min(word.size(), candidate.size()) > allowed) continue;
    const std::size_t distance = edit_distance(word, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view word, std::span<const std::string> candidates) {
  const auto closest = closest_name(word, candidates);
  return closest ? " (did you mean " + quote_text(*closest) + "?)" : "";
}

std::string escape_pointer_token(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

JsonNode::JsonNode(const nlohmann::json& value, std::shared_ptr<const std::string> file,
                   std::string pointer)
    : value_(&value), file_(std::move(file)), pointer_(std::move(pointer)) {}

void JsonNode::fail(const std::string& message) const {
  // A key may hold a newline or be megabytes long: the pointer is escaped and shortened.
  constexpr std::size_t kMaxPointerChars = 200;
  std::string pointer = pointer_.empty() ? "/" : escaped_text(pointer_);
  if (pointer.size() > kMaxPointerChars) pointer = pointer.substr(0, kMaxPointerChars) + "...";
  throw ConfigError(*file_ + ": " + pointer + ": " + message);
}

void JsonNode::fail_expected(const std::string& expected) const {
  fail("expected " + expected + ", got " + describe_json(*value_));
}

double JsonNode::as_number() const {
  if (!value_->is_number()) fail_expected("a number");
  return value_->get<double>();
}

double JsonNode::as_number(double min, double max) const {
  const double value = as_number();
  if (!(value >= min && value <= max)) {
    std::ostringstream expected;
    expected << "a number in [" << min << ", " << max << "]";
    fail_expected(expected.str());
  }
  return value;
}

std::int64_t JsonNode::as_int() const {
  // nlohmann stores non-negative integers as unsigned: one above INT64_MAX must not wrap.
  if (value_->is_number_unsigned()) {
    const auto value = value_->get<std::uint64_t>();
    if (value <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return static_cast<std::int64_t>(value);
    }
    fail_expected("an integer in [" + std::to_string(std::numeric_limits<std::int64_t>::min()) +
                  ", " + std::to_string(std::numeric_limits<std::int64_t>::max()) + "]");
  }
  if (value_->is_number_integer()) return value_->get<std::int64_t>();
  if (value_->is_number_float()) {
    const double value = value_->get<double>();
    if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 9.0e15) {
      return static_cast<std::int64_t>(value);
    }
  }
  fail_expected("an integer");
}

std::int64_t JsonNode::as_int(std::int64_t min, std::int64_t max) const {
  const auto range = [&] {
    return "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  };
  // An integer beyond int64 is out of any range: say which range, not just "an integer".
  if (value_->is_number_unsigned() &&
      value_->get<std::uint64_t>() >
          static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    fail_expected(range());
  }
  const std::int64_t value = as_int();
  if (value < min || value > max) fail_expected(range());
  return value;
}

std::string JsonNode::as_string() const {
  if (!value_->is_string()) fail_expected("a string");
  return value_->get<std::string>();
}

bool JsonNode::as_bool() const {
  if (!value_->is_boolean()) fail_expected("true or false");
  return value_->get<bool>();
}

std::string JsonNode::as_enum(std::span<const std::string_view> valid) const {
  if (!value_->is_string()) fail_expected("one of " + join(valid));
  const std::string value = value_->get<std::string>();
  if (std::find(valid.begin(), valid.end(), value) == valid.end()) {
    fail_expected("one of " + join(valid));
  }
  return value;
}

std::vector<JsonNode> JsonNode::items() const {
  if (!value_->is_array()) fail_expected("an array");
  std::vector<JsonNode> out;
  out.reserve(value_->size());
  for (std::size_t i = 0; i < value_->size(); ++i) out.push_back(child(i));
  return out;
}

JsonNode JsonNode::child(std::string_view key) const {
  return JsonNode(value_->at(std::string(key)), file_, pointer_ + "/" + escape_pointer_token(key));
}

JsonNode JsonNode::child(std::size_t index) const {
  return JsonNode(value_->at(index), file_, pointer_ + "/" + std::to_string(index));
}

JsonDocument::JsonDocument(std::shared_ptr<nlohmann::json> value, std::string name)
    : value_(std::move(value)), name_(std::make_shared<const std::string>(std::move(name))) {}

JsonDocument JsonDocument::parse_file(const std::filesystem::path& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    throw ConfigError(path.string() + ": expected a JSON file, got a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path.string() + ": cannot open file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_text(text.str(), path.string());
}

JsonDocument JsonDocument::parse_text(std::string_view text, std::string name) {
  // Copying or printing a value recurses once per level: deeper documents are refused.
  const auto limit_depth = [&name](int depth, nlohmann::json::parse_event_t event,
                                   const nlohmann::json&) {
    const bool opens = event == nlohmann::json::parse_event_t::object_start ||
                       event == nlohmann::json::parse_event_t::array_start;
    if (opens && depth >= kMaxJsonDepth) {
      throw ConfigError(name + ": expected JSON nested at most " + std::to_string(kMaxJsonDepth) +
                        " levels deep");
    }
    return true;
  };
  try {
    auto value = std::make_shared<nlohmann::json>(nlohmann::json::parse(text, limit_depth));
    return JsonDocument(std::move(value), std::move(name));
  } catch (const nlohmann::json::parse_error& error) {
    const auto [line, column] =
        line_and_column(text, error.byte > 0 ? static_cast<std::size_t>(error.byte - 1) : 0);
    const std::string what = error.what();
    // nlohmann's message reads "[json.exception.parse_error.101] parse error at line 1, column
    // 2: why", where the reason may quote the input ("last read: '...'"): the reason is what
    // follows the first ": " after the position.
    const auto position = what.find(" column ");
    const auto colon = what.find(": ", position == std::string::npos ? 0 : position);
    const std::string reason =
        printable(colon == std::string::npos ? what : what.substr(colon + 2));
    throw ConfigError(name + ": line " + std::to_string(line) + ", column " +
                      std::to_string(column) + ": invalid JSON: " + reason);
  }
}

JsonDocument JsonDocument::from_value(nlohmann::json value, std::string name) {
  return JsonDocument(std::make_shared<nlohmann::json>(std::move(value)), std::move(name));
}

ObjectReader::ObjectReader(const JsonNode& node) : node_(node) {
  if (!node_.is_object()) node_.fail_expected("an object");
}

bool ObjectReader::has(std::string_view key) const { return node_.raw().contains(key); }

JsonNode ObjectReader::required(std::string_view key) {
  taken_.emplace_back(key);
  if (!node_.raw().contains(key)) {
    node_.fail("missing required key \"" + std::string(key) + "\"");
  }
  return node_.child(key);
}

std::optional<JsonNode> ObjectReader::optional(std::string_view key) {
  taken_.emplace_back(key);
  if (!node_.raw().contains(key)) return std::nullopt;
  return node_.child(key);
}

double ObjectReader::number_or(std::string_view key, double fallback) {
  const auto node = optional(key);
  return node ? node->as_number() : fallback;
}

std::int64_t ObjectReader::int_or(std::string_view key, std::int64_t fallback) {
  const auto node = optional(key);
  return node ? node->as_int() : fallback;
}

bool ObjectReader::bool_or(std::string_view key, bool fallback) {
  const auto node = optional(key);
  return node ? node->as_bool() : fallback;
}

std::string ObjectReader::string_or(std::string_view key, std::string fallback) {
  const auto node = optional(key);
  return node ? node->as_string() : fallback;
}

void ObjectReader::finish() const {
  for (const auto& [key, value] : node_.raw().items()) {
    if (std::find(taken_.begin(), taken_.end(), key) != taken_.end()) continue;
    std::vector<std::string> valid = taken_;
    std::sort(valid.begin(), valid.end());
    valid.erase(std::unique(valid.begin(), valid.end()), valid.end());
    std::string message = "unknown key" + did_you_mean(key, valid) + "; valid keys: ";
    if (valid.empty()) message += "(none)";
    for (std::size_t i = 0; i < valid.size(); ++i) message += (i ? ", " : "") + valid[i];
    JsonNode(value, std::make_shared<const std::string>(node_.file()),
             node_.pointer() + "/" + escape_pointer_token(key))
        .fail(message);
  }
}

}  // namespace bindersim
