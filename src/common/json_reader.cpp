#include "bindersim/common/json_reader.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <sstream>
#include <type_traits>

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

// "NAME: line L, column C: " for the byte at `offset` of `text`.
std::string position_in(const std::string& name, std::string_view text, std::size_t offset) {
  const auto [line, column] = line_and_column(text, offset);
  return name + ": line " + std::to_string(line) + ", column " + std::to_string(column) + ": ";
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

// A JSON pointer as a message shows it: "/" for the root, escaped (a key may hold a newline)
// and shortened (a key may be megabytes long).
std::string display_pointer(const std::string& pointer) {
  constexpr std::size_t kMaxPointerChars = 200;
  std::string out = pointer.empty() ? "/" : escaped_text(pointer);
  if (out.size() > kMaxPointerChars) out = out.substr(0, kMaxPointerChars) + "...";
  return out;
}

// A pointer into the text being parsed that records in `*read_to` how far the parser has read:
// nlohmann's parser callback does not say where in the text it is.
class TrackingIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  TrackingIterator(const char* at, const char** read_to) : at_(at), read_to_(read_to) {}
  reference operator*() const { return *at_; }
  TrackingIterator& operator++() {
    *read_to_ = ++at_;
    return *this;
  }
  TrackingIterator operator++(int) {
    TrackingIterator before = *this;
    ++*this;
    return before;
  }
  bool operator==(const TrackingIterator& other) const { return at_ == other.at_; }

 private:
  const char* at_;
  const char** read_to_;
};

// Offset of the opening quote of the string token whose closing quote is at `closing`: the
// nearest earlier quote not escaped by an odd number of backslashes.
std::size_t opening_quote(std::string_view text, std::size_t closing) {
  for (std::size_t i = closing; i-- > 0;) {
    if (text[i] != '"') continue;
    std::size_t backslashes = 0;
    while (backslashes < i && text[i - 1 - backslashes] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return i;
  }
  return 0;
}

// A SAX handler that finds the first key `key` of the object that starts where the parse
// starts, and stops there; `*found` is the parser's read position after that key.
class FirstKeyFinder {
 public:
  FirstKeyFinder(const std::string& key, const char* const& read_to)
      : key_(key), read_to_(read_to) {}
  std::optional<const char*> found;

  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(nlohmann::json::number_integer_t) { return true; }
  bool number_unsigned(nlohmann::json::number_unsigned_t) { return true; }
  bool number_float(nlohmann::json::number_float_t, const nlohmann::json::string_t&) {
    return true;
  }
  bool string(nlohmann::json::string_t&) { return true; }
  bool binary(nlohmann::json::binary_t&) { return true; }
  bool start_object(std::size_t) { return ++depth_, true; }
  bool start_array(std::size_t) { return ++depth_, true; }
  bool end_object() { return --depth_, true; }
  bool end_array() { return --depth_, true; }
  bool key(nlohmann::json::string_t& key) {
    if (depth_ != 1 || key != key_) return true;
    found = read_to_;
    return false;
  }
  template <typename Exception>
  bool parse_error(std::size_t, const std::string&, const Exception&) {
    return false;
  }

 private:
  const std::string& key_;
  const char* const& read_to_;
  int depth_ = 0;
};

// A SAX handler that builds the document as nlohmann's DOM parser does, and refuses nesting
// deeper than kMaxJsonDepth and an object that gives a key twice, naming the line, column and
// JSON pointer of the second key and the position of the first. `read_to` is the parser's read
// position (a TrackingIterator's).
class StrictDomBuilder {
 public:
  StrictDomBuilder(nlohmann::json& root, std::string_view text, const std::string& name,
                   const char* const& read_to, bool allow_exceptions)
      : root_(root),
        text_(text),
        name_(name),
        read_to_(read_to),
        allow_exceptions_(allow_exceptions) {}

  bool null() { return add(nullptr), true; }
  bool boolean(bool value) { return add(value), true; }
  bool number_integer(nlohmann::json::number_integer_t value) { return add(value), true; }
  bool number_unsigned(nlohmann::json::number_unsigned_t value) { return add(value), true; }
  bool number_float(nlohmann::json::number_float_t value, const nlohmann::json::string_t&) {
    return add(value), true;
  }
  bool string(nlohmann::json::string_t& value) { return add(std::move(value)), true; }
  bool binary(nlohmann::json::binary_t& value) {
    return add(nlohmann::json::binary(std::move(value))), true;
  }
  bool start_object(std::size_t) { return open(nlohmann::json::object()); }
  bool start_array(std::size_t) { return open(nlohmann::json::array()); }
  bool end_object() { return open_.pop_back(), true; }
  bool end_array() { return open_.pop_back(), true; }

  bool key(nlohmann::json::string_t& key) {
    Open& object = open_.back();
    auto& members = object.value->get_ref<nlohmann::json::object_t&>();
    const auto [member, added] = members.emplace(key, nullptr);
    if (!added) fail_duplicate(key);
    object.key = &member->first;
    member_ = &member->second;
    return true;
  }

  // `position` counts the characters read, the offending one included.
  template <typename Exception>
  bool parse_error(std::size_t position, const std::string& token, const Exception& error) {
    if (!allow_exceptions_) return false;
    if constexpr (std::is_same_v<Exception, nlohmann::json::parse_error>) {
      throw error;
    } else {
      // The one other error: a number beyond a double's range (out_of_range.406), named at
      // its first character.
      static_cast<void>(error);
      const std::size_t start = position > token.size() ? position - token.size() : 0;
      throw ConfigError(at(start) + "invalid JSON: a number beyond a double's range, got " +
                        short_text(token));
    }
  }

 private:
  struct Open {
    nlohmann::json* value;
    const std::string* key;  // objects: the key of the member being read
    std::size_t start;       // offset of the opening brace or bracket
  };

  nlohmann::json* add(nlohmann::json value) {
    if (open_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    nlohmann::json& parent = *open_.back().value;
    if (parent.is_array()) {
      parent.get_ref<nlohmann::json::array_t&>().push_back(std::move(value));
      return &parent.get_ref<nlohmann::json::array_t&>().back();
    }
    *member_ = std::move(value);
    return member_;
  }

  bool open(nlohmann::json container) {
    const auto read = static_cast<std::size_t>(read_to_ - text_.data());
    if (open_.size() >= static_cast<std::size_t>(kMaxJsonDepth)) {
      // The container being opened: the next element of an array, or the member whose key
      // was read last.
      const nlohmann::json& innermost = *open_.back().value;
      const std::string last = innermost.is_array() ? std::to_string(innermost.size())
                                                    : escape_pointer_token(*open_.back().key);
      throw ConfigError(at(read > 0 ? read - 1 : 0) + display_pointer(pointer_to(last)) +
                        ": expected JSON nested at most " + std::to_string(kMaxJsonDepth) +
                        " levels deep, got a deeper " +
                        (container.is_array() ? "array" : "object"));
    }
    open_.push_back(Open{add(std::move(container)), nullptr, read > 0 ? read - 1 : 0});
    return true;
  }

  // The JSON pointer of a value in the innermost open container, whose last token is `last`:
  // each outer container contributes the element or member being read in it.
  std::string pointer_to(const std::string& last) const {
    std::string pointer;
    for (std::size_t i = 0; i + 1 < open_.size(); ++i) {
      const nlohmann::json& value = *open_[i].value;
      pointer += '/';
      pointer +=
          value.is_array() ? std::to_string(value.size() - 1) : escape_pointer_token(*open_[i].key);
    }
    return pointer + '/' + last;
  }

  [[noreturn]] void fail_duplicate(const std::string& key) const {
    const std::string pointer = pointer_to(escape_pointer_token(key));
    // The parser has just read the key's closing quote.
    const auto read = static_cast<std::size_t>(read_to_ - text_.data());
    std::string message = at(opening_quote(text_, read - 1)) + display_pointer(pointer) +
                          ": expected each key at most once in an object, got " + quote_text(key) +
                          " again";
    // The first one: parse the object again up to it.
    const std::string_view object = text_.substr(open_.back().start);
    const char* finder_read_to = object.data();
    FirstKeyFinder finder(key, finder_read_to);
    nlohmann::json::sax_parse(TrackingIterator(object.data(), &finder_read_to),
                              TrackingIterator(object.data() + object.size(), &finder_read_to),
                              &finder, nlohmann::json::input_format_t::json, false);
    if (finder.found) {
      const auto first = static_cast<std::size_t>(*finder.found - text_.data());
      const auto [first_line, first_column] =
          line_and_column(text_, opening_quote(text_, first - 1));
      message += " (first at line " + std::to_string(first_line) + ", column " +
                 std::to_string(first_column) + ")";
    }
    throw ConfigError(message);
  }

  std::string at(std::size_t offset) const { return position_in(name_, text_, offset); }

  nlohmann::json& root_;
  std::string_view text_;
  const std::string& name_;
  const char* const& read_to_;
  bool allow_exceptions_;
  std::vector<Open> open_;
  nlohmann::json* member_ = nullptr;  // the member whose key was read last
};

// Parses `text` with StrictDomBuilder; a syntax error throws nlohmann's parse_error, or,
// without `allow_exceptions`, gives a discarded value.
nlohmann::json parse_strictly(std::string_view text, const std::string& name,
                              bool allow_exceptions) {
  nlohmann::json root;
  const char* read_to = text.data();
  StrictDomBuilder builder(root, text, name, read_to, allow_exceptions);
  const bool parsed =
      nlohmann::json::sax_parse(TrackingIterator(text.data(), &read_to),
                                TrackingIterator(text.data() + text.size(), &read_to), &builder);
  return parsed ? std::move(root) : nlohmann::json(nlohmann::json::value_t::discarded);
}

// Integers written as JSON floats (2e3, 40.0) are taken below 9e15, where a double holds every
// integer exactly; above it, 1e18 might stand for a neighbouring integer the double rounded.
constexpr double kExactFloatLimit = 9.0e15;

bool integral(double value) { return std::isfinite(value) && value == std::floor(value); }

// A JSON float that holds an integer exactly (magnitude below kExactFloatLimit), as that integer.
std::optional<std::int64_t> exact_integer(double value) {
  if (integral(value) && std::fabs(value) < kExactFloatLimit) {
    return static_cast<std::int64_t>(value);
  }
  return std::nullopt;
}

// What an integer key expects, said so that a float beyond the exact range (which may lie within
// `range`) learns why it is refused.
std::string expected_integer(const nlohmann::json& value, const std::string& range) {
  if (value.is_number_float() && integral(value.get<double>()) &&
      std::fabs(value.get<double>()) >= kExactFloatLimit) {
    return range + " written without a fraction or exponent (as a float, only below 9e15)";
  }
  return range;
}

}  // namespace

std::string describe_file_type(std::filesystem::file_type type) {
  switch (type) {
    case std::filesystem::file_type::directory:
      return "a directory";
    case std::filesystem::file_type::character:
      return "a character device";
    case std::filesystem::file_type::block:
      return "a block device";
    case std::filesystem::file_type::fifo:
      return "a FIFO";
    case std::filesystem::file_type::socket:
      return "a socket";
    default:
      return "a file that is not a regular file";
  }
}

std::string compact_json(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

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

void check_source(const JsonNode& node) {
  if (node.as_string().empty()) {
    node.fail_expected("a non-empty string naming where the numbers come from");
  }
}

namespace {

// The length of the well-formed UTF-8 sequence at text[i] (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF), or 0 when the bytes there are not one.
std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  const auto at = [&](std::size_t k) -> unsigned char {
    return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0;
  };
  const unsigned char lead = at(0);
  std::size_t length = 0;
  unsigned char low = 0x80;  // the range of the second byte
  unsigned char high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;   // overlong below U+0800
    if (lead == 0xed) high = 0x9f;  // surrogates
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;   // overlong below U+10000
    if (lead == 0xf4) high = 0x8f;  // above U+10FFFF
  } else {
    return 0;
  }
  if (at(1) < low || at(1) > high) return 0;
  for (std::size_t k = 2; k < length; ++k) {
    if (at(k) < 0x80 || at(k) > 0xbf) return 0;
  }
  return length;
}

}  // namespace

std::string console_text(std::string_view text) {
  constexpr const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte == '\n') {
      out += "\\n";
    } else if (byte == '\r') {
      out += "\\r";
    } else if (byte == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte == 0x7f) {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else if (byte < 0x80) {
      out += text[i];
    } else if (const std::size_t length = utf8_sequence_length(text, i); length == 0) {
      // Not UTF-8: a lone byte, which an 8-bit terminal may read as a C1 control (0x9b: CSI).
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else if (byte == 0xc2 && static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      // A C1 control character, U+0080..U+009F, in UTF-8.
      const auto next = static_cast<unsigned char>(text[i + 1]);
      out += "\\u00";
      out += kHex[next >> 4];
      out += kHex[next & 0xf];
      ++i;
    } else {
      out.append(text.substr(i, length));
      i += length - 1;
    }
  }
  return out;
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
  throw ConfigError(*file_ + ": " + display_pointer(pointer_) + ": " + message);
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
    if (const auto value = exact_integer(value_->get<double>())) return *value;
  }
  fail_expected(expected_integer(*value_, "an integer"));
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
  if (value_->is_number_float() && !exact_integer(value_->get<double>())) {
    fail_expected(expected_integer(*value_, range()));
  }
  const std::int64_t value = as_int();
  if (value < min || value > max) fail_expected(range());
  return value;
}

std::uint64_t JsonNode::as_strict_uint64() const {
  if (value_->is_number_unsigned()) return value_->get<std::uint64_t>();
  // Documents built in memory hold signed integers; parsed ones hold unsigned.
  if (value_->is_number_integer() && value_->get<std::int64_t>() >= 0) {
    return static_cast<std::uint64_t>(value_->get<std::int64_t>());
  }
  fail_expected("a non-negative integer");
}

std::uint64_t JsonNode::as_uint64() const {
  if (value_->is_number_unsigned()) return value_->get<std::uint64_t>();
  if (value_->is_number_integer() && value_->get<std::int64_t>() >= 0) {
    return static_cast<std::uint64_t>(value_->get<std::int64_t>());
  }
  if (value_->is_number_float()) {  // the floats as_int() takes
    if (const auto value = exact_integer(value_->get<double>()); value && *value >= 0) {
      return static_cast<std::uint64_t>(*value);
    }
  }
  fail_expected(expected_integer(
      *value_,
      "an integer in [0, " + std::to_string(std::numeric_limits<std::uint64_t>::max()) + "]"));
}

std::string JsonNode::as_string() const {
  if (!value_->is_string()) fail_expected("a string");
  return value_->get<std::string>();
}

std::string JsonNode::as_name() const {
  std::string name = as_string();
  if (name.empty()) fail_expected("a non-empty name");
  const bool control = std::any_of(name.begin(), name.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte < 0x20 || byte == 0x7f;
  });
  if (control) fail_expected("a name without control characters");
  return name;
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

std::string read_input_file(const std::filesystem::path& path, std::string_view expected) {
  const auto fail = [&](const std::string& message) {
    throw ConfigError(path.string() + ": " + message);
  };
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (!std::filesystem::exists(status)) fail("cannot open file");
  if (!std::filesystem::is_regular_file(status)) {
    fail("expected " + std::string(expected) + ", got " + describe_file_type(status.type()));
  }
  const std::string limit = "expected " + std::string(expected) + " of at most " +
                            std::to_string(kMaxInputFileBytes >> 20) + " MiB (" +
                            std::to_string(kMaxInputFileBytes) + " bytes), got ";
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (!error && size > kMaxInputFileBytes) fail(limit + std::to_string(size) + " bytes");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open file");
  // Read in blocks up to the limit: the file may grow, and some files report no size.
  std::string text;
  if (!error) text.reserve(static_cast<std::size_t>(size));
  std::vector<char> block(std::size_t{1} << 16);
  while (in.read(block.data(), static_cast<std::streamsize>(block.size())) || in.gcount() > 0) {
    const auto count = static_cast<std::size_t>(in.gcount());
    if (text.size() + count > kMaxInputFileBytes) {
      fail(limit + "more than " + std::to_string(kMaxInputFileBytes) + " bytes");
    }
    text.append(block.data(), count);
  }
  if (in.bad()) fail("cannot read file");
  return text;
}

JsonDocument JsonDocument::parse_file(const std::filesystem::path& path) {
  return parse_text(read_input_file(path, "a JSON file"), path.string());
}

JsonDocument JsonDocument::parse_text(std::string_view text, std::string name) {
  // The parser would take a NUL character for the end of the input and ignore what follows.
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    throw ConfigError(position_in(name, text, nul) +
                      "invalid JSON: expected text, got a NUL character");
  }
  try {
    auto value = std::make_shared<nlohmann::json>(parse_strictly(text, name, true));
    return JsonDocument(std::move(value), std::move(name));
  } catch (const nlohmann::json::parse_error& error) {
    const std::string what = error.what();
    // nlohmann's message reads "[json.exception.parse_error.101] parse error at line 1, column
    // 2: why", where the reason may quote the input ("last read: '...'"): the reason is what
    // follows the first ": " after the position.
    const auto position = what.find(" column ");
    const auto colon = what.find(": ", position == std::string::npos ? 0 : position);
    const std::string reason =
        printable(colon == std::string::npos ? what : what.substr(colon + 2));
    const std::size_t offset = error.byte > 0 ? static_cast<std::size_t>(error.byte - 1) : 0;
    throw ConfigError(position_in(name, text, offset) + "invalid JSON: " + reason);
  }
}

void check_unique_keys(std::string_view text, const std::string& name) {
  static_cast<void>(parse_strictly(text, name, false));
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
