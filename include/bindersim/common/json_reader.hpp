// Strict reading of JSON input files: every error names the file, the JSON pointer, what was
// expected and what was found; unknown keys are rejected with the closest valid name.
#pragma once

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bindersim {

// A JSON value with its origin (file name and JSON pointer). Does not own the value: the
// JsonDocument it came from must outlive it. Every accessor throws ConfigError on a mismatch.
class JsonNode {
 public:
  JsonNode(const nlohmann::json& value, std::shared_ptr<const std::string> file,
           std::string pointer);

  const nlohmann::json& raw() const { return *value_; }
  const std::string& file() const { return *file_; }
  // JSON pointer of this value ("" for the root).
  const std::string& pointer() const { return pointer_; }

  bool is_object() const { return value_->is_object(); }
  bool is_array() const { return value_->is_array(); }
  bool is_string() const { return value_->is_string(); }
  bool is_null() const { return value_->is_null(); }

  double as_number() const;
  double as_number(double min, double max) const;  // inclusive range
  std::int64_t as_int() const;                     // a number without fraction
  std::int64_t as_int(std::int64_t min, std::int64_t max) const;
  std::uint64_t as_uint64() const;  // an integer in [0, 2^64 - 1] (seeds)
  // A non-negative integer stored as one, as in the documents bindersim writes: unlike
  // as_uint64(), a float (3.0) is refused.
  std::uint64_t as_strict_uint64() const;
  std::string as_string() const;
  // A name that goes into one-line output and identifiers: a non-empty string without control
  // characters (a newline would split a line).
  std::string as_name() const;
  bool as_bool() const;
  // A string that must be one of `valid`; the error lists them.
  std::string as_enum(std::span<const std::string_view> valid) const;
  std::string as_enum(std::initializer_list<std::string_view> valid) const {
    return as_enum(std::span<const std::string_view>(valid.begin(), valid.size()));
  }

  // Elements of an array (fails if this is not an array).
  std::vector<JsonNode> items() const;
  // The child at `key`/`index` without strictness checks; for ObjectReader and arrays.
  JsonNode child(std::string_view key) const;
  JsonNode child(std::size_t index) const;

  // Throws ConfigError "<file>: <pointer>: <message>".
  [[noreturn]] void fail(const std::string& message) const;
  // Throws "<file>: <pointer>: expected <expected>, got <description of the value>".
  [[noreturn]] void fail_expected(const std::string& expected) const;

 private:
  const nlohmann::json* value_;
  std::shared_ptr<const std::string> file_;
  std::string pointer_;
};

// The deepest nesting of arrays and objects a document may have: copying or printing a value
// recurses once per level. Input files nest a handful of levels.
inline constexpr int kMaxJsonDepth = 256;

// The largest input file read, in bytes (64 MiB): input files are a few MB at most, and a path
// to a device (/dev/zero) or a huge file must not fill the memory.
inline constexpr std::uintmax_t kMaxInputFileBytes = std::uintmax_t{64} << 20;

// What a path that is not a regular file is, for "expected ..., got <kind>": "a directory",
// "a FIFO", ...
std::string describe_file_type(std::filesystem::file_type type);

// The whole content of an input file. A missing file, a path that is not a regular file (a
// directory, a device, a FIFO, a socket) or a file larger than kMaxInputFileBytes is a
// ConfigError naming the path, `expected` (what the file should be, e.g. "a JSON file") and
// what was found.
std::string read_input_file(const std::filesystem::path& path, std::string_view expected);

// Owns a parsed JSON document and the name of the file it came from.
class JsonDocument {
 public:
  // Parses a file read by read_input_file(); a missing file, a path that is not a regular file,
  // a file larger than kMaxInputFileBytes or a syntax error is a ConfigError (a syntax error
  // naming line and column), as are nesting deeper than kMaxJsonDepth and a key given twice in
  // one object (see parse_text()).
  static JsonDocument parse_file(const std::filesystem::path& path);
  // Parses text; `name` stands for the file in error messages. An object that gives a key twice
  // is a ConfigError naming the line, column and JSON pointer of the second one.
  static JsonDocument parse_text(std::string_view text, std::string name);
  // Wraps an existing value.
  static JsonDocument from_value(nlohmann::json value, std::string name);

  JsonNode root() const { return JsonNode(*value_, name_, ""); }
  const nlohmann::json& value() const { return *value_; }
  const std::string& name() const { return *name_; }

 private:
  JsonDocument(std::shared_ptr<nlohmann::json> value, std::string name);
  std::shared_ptr<nlohmann::json> value_;
  std::shared_ptr<const std::string> name_;
};

// A "source" field: a non-empty string naming where the numbers of its object come from
// (datasheet, device tree, measurement or fit); anything else is a ConfigError at the node.
void check_source(const JsonNode& node);

// Reads one JSON object strictly: keys are taken with required()/optional(), and finish()
// rejects any key that was not taken, naming the closest valid key.
class ObjectReader {
 public:
  explicit ObjectReader(const JsonNode& node);  // fails if `node` is not an object
  ~ObjectReader() = default;

  JsonNode required(std::string_view key);
  std::optional<JsonNode> optional(std::string_view key);
  bool has(std::string_view key) const;

  // Convenience readers for optional scalars with a documented default.
  double number_or(std::string_view key, double fallback);
  std::int64_t int_or(std::string_view key, std::int64_t fallback);
  bool bool_or(std::string_view key, bool fallback);
  std::string string_or(std::string_view key, std::string fallback);

  // Every key of the object must have been taken by now.
  void finish() const;

  const JsonNode& node() const { return node_; }

 private:
  JsonNode node_;
  std::vector<std::string> taken_;
};

// Rejects JSON `text` with an object that gives a key twice, as parse_text() does, `name`
// standing for the text in the message. Text that is not valid JSON passes: the caller decides
// what else it may be (a --set value that is not JSON is a plain string).
void check_unique_keys(std::string_view text, const std::string& name);

// `value` as compact JSON text (no spaces; an object's keys sorted), bytes that are not UTF-8
// replaced by U+FFFD instead of throwing (a value built in memory from a --set may hold them).
std::string compact_json(const nlohmann::json& value);

// A short description of a JSON value for error messages: "a string \"big\"", "an array", ...
std::string describe_json(const nlohmann::json& value);
// `text` escaped as inside a JSON string, without the quotes: control characters as "\n" or
// "\u0001", bytes that are not UTF-8 replaced.
std::string escaped_text(std::string_view text);
// `text` for one line of console output (tables, titles, progress lines): control characters
// escaped, "\n", "\r" and "\t" as such, other C0 characters and DEL as "\x1b", C1 characters
// (U+0080..U+009F) as "\u009b", bytes that are not UTF-8 as "\x9b", so that a string from an
// input file or the command line can neither split the line nor drive the terminal; everything
// else as it is.
std::string console_text(std::string_view text);
// escaped_text() shortened to at most 40 characters (ending in "...") so that a line stays short.
std::string short_text(std::string_view text);
// short_text() in quotes: a name from the input as a message quotes it.
std::string quote_text(std::string_view text);
// Names from the input for a message: each short_text(), joined by ", ", at most `limit` of
// them and then "and N more", so that the line stays short however many there are.
std::string name_list(std::span<const std::string> names, std::size_t limit = 10);
// The closest of `candidates` to `word` by edit distance, if it is close enough to suggest.
std::optional<std::string> closest_name(std::string_view word,
                                        std::span<const std::string> candidates);
// " (did you mean \"x\"?)" with closest_name() quoted, or "" when none is close enough.
std::string did_you_mean(std::string_view word, std::span<const std::string> candidates);
// Escapes a key for use in a JSON pointer (RFC 6901: "~" -> "~0", "/" -> "~1").
std::string escape_pointer_token(std::string_view key);

}  // namespace bindersim
