#include "bindersim/common/json_reader.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "bindersim/common/error.hpp"
#include "config_error.hpp"

namespace bindersim {
namespace {

using testing::error_of;

JsonDocument parse(std::string_view text) {
  return JsonDocument::parse_text(text, "topologies/x.json");
}

// ---------------------------------------------------------------------------------------------
// Syntax errors

TEST(JsonDocumentTest, SyntaxErrorNamesFileLineAndColumn) {
  // The stray '}' is on line 3, column 8 (1-based): the message starts with exactly that.
  const std::string text = "{\n  \"a\": 1,\n  \"b\": }\n";
  const std::string message = error_of([&] { parse(text); });
  EXPECT_EQ(message.rfind("topologies/x.json: line 3, column 8: invalid JSON: ", 0), 0u) << message;
  // One line, and no nlohmann exception id leaks into it.
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_EQ(message.find("[json.exception"), std::string::npos) << message;
}

TEST(JsonDocumentTest, SyntaxErrorOnFirstLineCountsColumnsFromOne) {
  // "[1, 2,, 3]": the second comma is the 7th character.
  const std::string message = error_of([] { parse("[1, 2,, 3]"); });
  EXPECT_EQ(message.rfind("topologies/x.json: line 1, column 7: invalid JSON: ", 0), 0u) << message;
}

TEST(JsonDocumentTest, TruncatedDocumentIsAnError) {
  // The text ends inside the object: still one line naming the file and a position.
  const std::string message = error_of([] { parse("{\"a\": [1, 2"); });
  EXPECT_EQ(message.rfind("topologies/x.json: line 1, column ", 0), 0u) << message;
  EXPECT_NE(message.find("invalid JSON"), std::string::npos) << message;
}

TEST(JsonDocumentTest, ParseFileNamesThePathOnSyntaxErrorAndMissingFile) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "json_reader";
  std::filesystem::create_directories(dir);
  const std::filesystem::path bad = dir / "bad.json";
  {
    std::ofstream out(bad);
    out << "{\n\"a\": tru\n}\n";
  }
  // "tru" starts at column 6 of line 2; the reported column is within that literal.
  const std::string message = error_of([&] { JsonDocument::parse_file(bad); });
  EXPECT_EQ(message.rfind(bad.string() + ": line 2, column ", 0), 0u) << message;

  const std::filesystem::path missing = dir / "missing.json";
  EXPECT_EQ(error_of([&] { JsonDocument::parse_file(missing); }),
            missing.string() + ": cannot open file");
  std::filesystem::remove_all(dir);
}

TEST(JsonDocumentTest, SyntaxErrorQuotingBadBytesKeepsTheWholeReasonInPrintableText) {
  // The reason used to be cut at the last ": ", which nlohmann's "last read: '...'" holds,
  // leaving only the raw byte 0xff of the input.
  EXPECT_EQ(error_of([] { parse("{\"name\": \"\xff\"}"); }),
            "topologies/x.json: line 1, column 11: invalid JSON: syntax error while parsing value "
            "- invalid string: ill-formed UTF-8 byte; last read: '\"\\xff'");
}

TEST(JsonDocumentTest, NestingDeeperThanTheLimitIsAnError) {
  // A scenario nested 100000 levels deep overflowed the stack when --set copied it.
  const auto nested = [](int depth) {
    return std::string(static_cast<std::size_t>(depth), '[') +
           std::string(static_cast<std::size_t>(depth), ']');
  };
  EXPECT_NO_THROW(parse(nested(kMaxJsonDepth)));
  // The 257th '[' is the 257th character; the pointer is shortened in the message.
  const std::string message = error_of([&] { parse(nested(kMaxJsonDepth + 1)); });
  EXPECT_EQ(message.rfind("topologies/x.json: line 1, column 257: /0/0/0/", 0), 0u) << message;
  const std::string tail = ": expected JSON nested at most 256 levels deep, got a deeper array";
  ASSERT_GE(message.size(), tail.size());
  EXPECT_EQ(message.substr(message.size() - tail.size()), tail) << message;
}

TEST(JsonDocumentTest, NestingErrorNamesTheMemberThatOpensTooDeep) {
  // An object, then 255 arrays: the 256th array, the member "key"'s, is one too many.
  const std::string text = "{\"key\": " + std::string(256, '[') + std::string(256, ']') + "}";
  const std::string message = error_of([&] { parse(text); });
  EXPECT_EQ(message.rfind("topologies/x.json: line 1, column 264: /key/0/0/", 0), 0u) << message;
}

TEST(JsonDocumentTest, NumberBeyondADoublesRangeIsAJsonErrorAtItsPosition) {
  // nlohmann reports it as out_of_range.406, which used to escape as an internal error.
  EXPECT_EQ(error_of([] { parse("{\"a\": 1e999}"); }),
            "topologies/x.json: line 1, column 7: invalid JSON: a number beyond a double's range, "
            "got 1e999");
  EXPECT_EQ(error_of([] { parse("[\n-1E400]"); }),
            "topologies/x.json: line 2, column 1: invalid JSON: a number beyond a double's range, "
            "got -1E400");
  // A numeral of many digits is shortened: the message stays one short line.
  const std::string message = error_of([] { parse("[1" + std::string(100000, '0') + "]"); });
  EXPECT_LT(message.size(), 160u) << message;
  EXPECT_NE(message.find("line 1, column 2: invalid JSON: a number beyond a double's range, got "
                         "100000"),
            std::string::npos)
      << message;
}

TEST(JsonDocumentTest, NulCharacterIsAnErrorNotTheEndOfTheText) {
  // The parser would stop at the NUL and ignore the rest.
  EXPECT_EQ(
      error_of([] { parse(std::string("{}\0garbage", 10)); }),
      "topologies/x.json: line 1, column 3: invalid JSON: expected text, got a NUL character");
}

TEST(JsonDocumentTest, DirectoryIsNotReadAsAnEmptyDocument) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "dir.json";
  std::filesystem::create_directories(dir);
  EXPECT_EQ(error_of([&] { JsonDocument::parse_file(dir); }),
            dir.string() + ": expected a JSON file, got a directory");
  std::filesystem::remove_all(dir);
}

TEST(JsonDocumentTest, ParsedDocumentKeepsItsName) {
  // The root has the empty pointer and the document's name as its file.
  const JsonDocument doc = parse("{\"a\": 1}");
  EXPECT_EQ(doc.name(), "topologies/x.json");
  EXPECT_EQ(doc.root().file(), "topologies/x.json");
  EXPECT_EQ(doc.root().pointer(), "");
  EXPECT_TRUE(doc.root().is_object());
}

// ---------------------------------------------------------------------------------------------
// Type mismatches

TEST(JsonNodeTest, TypeMismatchNamesFilePointerExpectedAndFound) {
  // The example of the design document, read through ObjectReader as a loader would.
  const JsonDocument doc = parse(R"({"cpus": [{}, {}, {}, {"capacity": "big"}]})");
  const std::string message = error_of([&] {
    ObjectReader root(doc.root());
    const auto cpus = root.required("cpus").items();
    ObjectReader cpu(cpus.at(3));
    cpu.required("capacity").as_number();
  });
  EXPECT_EQ(message, "topologies/x.json: /cpus/3/capacity: expected a number, got \"big\"");
}

TEST(JsonNodeTest, EachAccessorNamesWhatItExpected) {
  const JsonDocument doc =
      parse(R"({"s": "text", "n": 4, "b": true, "z": null, "o": {}, "a": [1]})");
  const JsonNode root = doc.root();
  EXPECT_EQ(error_of([&] { root.child("n").as_string(); }),
            "topologies/x.json: /n: expected a string, got 4");
  EXPECT_EQ(error_of([&] { root.child("s").as_bool(); }),
            "topologies/x.json: /s: expected true or false, got \"text\"");
  EXPECT_EQ(error_of([&] { root.child("b").as_number(); }),
            "topologies/x.json: /b: expected a number, got true");
  EXPECT_EQ(error_of([&] { root.child("z").as_int(); }),
            "topologies/x.json: /z: expected an integer, got null");
  EXPECT_EQ(error_of([&] { root.child("o").items(); }),
            "topologies/x.json: /o: expected an array, got an object");
  EXPECT_EQ(error_of([&] { ObjectReader reader(root.child("a")); }),
            "topologies/x.json: /a: expected an object, got an array");
}

TEST(JsonNodeTest, AccessorsReturnMatchingValues) {
  const JsonDocument doc = parse(R"({"s": "text", "n": 4.5, "i": -7, "b": false})");
  const JsonNode root = doc.root();
  EXPECT_EQ(root.child("s").as_string(), "text");
  EXPECT_DOUBLE_EQ(root.child("n").as_number(), 4.5);
  EXPECT_EQ(root.child("i").as_int(), -7);
  EXPECT_DOUBLE_EQ(root.child("i").as_number(), -7.0);
  EXPECT_FALSE(root.child("b").as_bool());
}

TEST(JsonNodeTest, LongStringsAreShortenedInMessages) {
  // A long bad value is cut so that the message stays one readable line.
  const std::string long_value(200, 'x');
  const JsonDocument doc = parse("{\"v\": \"" + long_value + "\"}");
  const std::string message = error_of([&] { doc.root().child("v").as_number(); });
  EXPECT_EQ(message.rfind("topologies/x.json: /v: expected a number, got \"xxx", 0), 0u);
  EXPECT_LT(message.size(), 100u) << message;
  EXPECT_EQ(message.substr(message.size() - 4), "...\"") << message;
}

TEST(JsonNodeTest, ConsoleTextEscapesControlCharactersOnly) {
  // A newline, an escape sequence, DEL and C1's CSI cannot split a line or colour the terminal;
  // quotes, backslashes and other UTF-8 stay as they are.
  EXPECT_EQ(console_text("a\nb\x1b[31mRED"), "a\\nb\\x1b[31mRED");
  EXPECT_EQ(console_text("\t\r\x7f\x01"), "\\t\\r\\x7f\\x01");
  EXPECT_EQ(console_text("csi \xc2\x9b, nbsp \xc2\xa0"), "csi \\u009b, nbsp \xc2\xa0");
  EXPECT_EQ(console_text("\"ctabs\" \\ Δ%"), "\"ctabs\" \\ Δ%");
  EXPECT_EQ(console_text(std::string("nul\0", 4)), "nul\\x00");
  EXPECT_EQ(console_text(""), "");
}

TEST(JsonNodeTest, ConsoleTextEscapesBytesThatAreNotUtf8) {
  // A lone 0x9b is CSI to an 8-bit terminal: bytes outside a well-formed UTF-8 sequence are
  // escaped one by one; whole sequences of two, three and four bytes stay.
  EXPECT_EQ(console_text("a\x9b[31m"), "a\\x9b[31m");
  EXPECT_EQ(console_text("\xc3"), "\\xc3");                             // cut short at the end
  EXPECT_EQ(console_text("\xc3("), "\\xc3(");                           // no continuation byte
  EXPECT_EQ(console_text("\xc0\xaf"), "\\xc0\\xaf");                    // overlong "/"
  EXPECT_EQ(console_text("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");           // overlong, three bytes
  EXPECT_EQ(console_text("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(console_text("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(console_text("é € 😀"), "é € 😀");
  EXPECT_EQ(console_text("\xe2\x82"), "\\xe2\\x82");  // a three-byte sequence cut short
}

TEST(JsonNodeTest, DescribeJsonNamesEachKind) {
  EXPECT_EQ(describe_json(nlohmann::json(nullptr)), "null");
  EXPECT_EQ(describe_json(nlohmann::json::object()), "an object");
  EXPECT_EQ(describe_json(nlohmann::json::array()), "an array");
  EXPECT_EQ(describe_json(nlohmann::json(true)), "true");
  EXPECT_EQ(describe_json(nlohmann::json(false)), "false");
  EXPECT_EQ(describe_json(nlohmann::json("big")), "\"big\"");
  EXPECT_EQ(describe_json(nlohmann::json(12)), "12");
  EXPECT_EQ(describe_json(nlohmann::json(-2.5)), "-2.5");
}

// ---------------------------------------------------------------------------------------------
// Integers and ranges

TEST(JsonNodeTest, AsIntRejectsFractions) {
  // 1.5 is a number but not an integer; 3.0 is an integer written with a fraction part.
  const JsonDocument doc = parse(R"({"f": 1.5, "w": 3.0, "e": 1e300})");
  EXPECT_EQ(error_of([&] { doc.root().child("f").as_int(); }),
            "topologies/x.json: /f: expected an integer, got 1.5");
  EXPECT_EQ(doc.root().child("w").as_int(), 3);
  // Too large to be an exact int64: rejected rather than converted with undefined behaviour.
  EXPECT_EQ(error_of([&] { doc.root().child("e").as_int(); }),
            "topologies/x.json: /e: expected an integer written without a fraction or exponent "
            "(as a float, only below 9e15), got 1e+300");
}

TEST(JsonNodeTest, IntegralFloatsAreTakenWhereEveryIntegerIsExact) {
  // 2e3 is 2000; 1e18 is an integer too, but a double that large stands for a range of integers,
  // so it is refused, with a message saying why rather than "expected an integer in [0, 2^64-1]"
  // of a value plainly inside that range.
  const JsonDocument doc = parse(R"({"small": 2e3, "large": 1e18, "negative": -1.0})");
  const JsonNode root = doc.root();
  EXPECT_EQ(root.child("small").as_int(0, 5000), 2000);
  EXPECT_EQ(root.child("small").as_uint64(), 2000u);
  const std::string why = " written without a fraction or exponent (as a float, only below 9e15)";
  EXPECT_EQ(error_of([&] { root.child("large").as_uint64(); }),
            "topologies/x.json: /large: expected an integer in [0, 18446744073709551615]" + why +
                ", got 1e+18");
  EXPECT_EQ(error_of([&] { root.child("large").as_int(0, 2'000'000'000'000'000'000); }),
            "topologies/x.json: /large: expected an integer in [0, 2000000000000000000]" + why +
                ", got 1e+18");
  // Out of range whatever its notation: the range alone.
  EXPECT_EQ(error_of([&] { root.child("negative").as_uint64(); }),
            "topologies/x.json: /negative: expected an integer in [0, 18446744073709551615], got "
            "-1.0");
}

TEST(JsonNodeTest, AsIntRejectsIntegersBeyondInt64) {
  // 2^64 - 1 parses as an unsigned integer; it must not wrap around to -1 (which would pass a
  // range check like [-20, 19]). The message names the range the value missed.
  const JsonDocument doc = parse(R"({"u": 18446744073709551615, "m": 9223372036854775807})");
  EXPECT_EQ(error_of([&] { doc.root().child("u").as_int(); }),
            "topologies/x.json: /u: expected an integer in [-9223372036854775808, "
            "9223372036854775807], got 18446744073709551615");
  EXPECT_EQ(error_of([&] { doc.root().child("u").as_int(-20, 19); }),
            "topologies/x.json: /u: expected an integer in [-20, 19], got 18446744073709551615");
  EXPECT_EQ(doc.root().child("m").as_int(), std::numeric_limits<std::int64_t>::max());
}

TEST(JsonNodeTest, AsUint64TakesTheWholeUnsignedRangeAndNothingElse) {
  // Seeds: every 64-bit unsigned value, whether nlohmann stored it as signed or unsigned.
  const JsonDocument doc = parse(
      R"({"max": 18446744073709551615, "zero": 0, "w": 7.0, "neg": -1, "f": 0.5, "s": "1",
          "big": 1e300})");
  const JsonNode root = doc.root();
  EXPECT_EQ(root.child("max").as_uint64(), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(root.child("zero").as_uint64(), 0u);
  EXPECT_EQ(root.child("w").as_uint64(), 7u);
  const nlohmann::json built = {{"signed", std::int64_t{5}}};
  const JsonNode built_root(built, std::make_shared<const std::string>("built.json"), "");
  EXPECT_EQ(built_root.child("signed").as_uint64(), 5u);
  const std::string range = "expected an integer in [0, 18446744073709551615], got ";
  EXPECT_EQ(error_of([&] { root.child("neg").as_uint64(); }),
            "topologies/x.json: /neg: " + range + "-1");
  EXPECT_EQ(error_of([&] { root.child("f").as_uint64(); }),
            "topologies/x.json: /f: " + range + "0.5");
  EXPECT_EQ(error_of([&] { root.child("s").as_uint64(); }),
            "topologies/x.json: /s: " + range + "\"1\"");
  EXPECT_EQ(error_of([&] { root.child("big").as_uint64(); }),
            "topologies/x.json: /big: expected an integer in [0, 18446744073709551615] written "
            "without a fraction or exponent (as a float, only below 9e15), got 1e+300");
}

TEST(JsonNodeTest, IntegerRangesAreInclusiveAndNamedInTheMessage) {
  const JsonDocument doc = parse(R"({"lo": 1, "hi": 99, "over": 100, "under": 0})");
  const JsonNode root = doc.root();
  EXPECT_EQ(root.child("lo").as_int(1, 99), 1);
  EXPECT_EQ(root.child("hi").as_int(1, 99), 99);
  EXPECT_EQ(error_of([&] { root.child("over").as_int(1, 99); }),
            "topologies/x.json: /over: expected an integer in [1, 99], got 100");
  EXPECT_EQ(error_of([&] { root.child("under").as_int(1, 99); }),
            "topologies/x.json: /under: expected an integer in [1, 99], got 0");
}

TEST(JsonNodeTest, NumberRangesAreInclusiveAndNamedInTheMessage) {
  const JsonDocument doc = parse(R"({"a": 0.5, "b": 2, "c": -0.25, "s": "x"})");
  const JsonNode root = doc.root();
  EXPECT_DOUBLE_EQ(root.child("a").as_number(0.5, 1.5), 0.5);
  EXPECT_DOUBLE_EQ(root.child("b").as_number(0, 2), 2.0);
  EXPECT_EQ(error_of([&] { root.child("c").as_number(0, 1.5); }),
            "topologies/x.json: /c: expected a number in [0, 1.5], got -0.25");
  // A type error takes precedence over the range.
  EXPECT_EQ(error_of([&] { root.child("s").as_number(0, 1); }),
            "topologies/x.json: /s: expected a number, got \"x\"");
}

// ---------------------------------------------------------------------------------------------
// Enums

TEST(JsonNodeTest, EnumAcceptsAValidValue) {
  const JsonDocument doc = parse(R"({"p": "gki"})");
  EXPECT_EQ(doc.root().child("p").as_enum({"mainline", "gki"}), "gki");
}

TEST(JsonNodeTest, EnumErrorListsTheValidValues) {
  // An unknown string and a value of the wrong type both list every valid value, in order.
  const JsonDocument doc = parse(R"({"p": "eas", "q": 3})");
  EXPECT_EQ(error_of([&] {
              doc.root().child("p").as_enum({"mainline", "gki"});
            }),
            "topologies/x.json: /p: expected one of mainline, gki, got \"eas\"");
  EXPECT_EQ(error_of([&] {
              doc.root().child("q").as_enum({"mainline", "gki"});
            }),
            "topologies/x.json: /q: expected one of mainline, gki, got 3");
}

TEST(JsonNodeTest, EnumIsCaseSensitive) {
  const JsonDocument doc = parse(R"({"p": "Mainline"})");
  EXPECT_EQ(error_of([&] { doc.root().child("p").as_enum({"mainline"}); }),
            "topologies/x.json: /p: expected one of mainline, got \"Mainline\"");
}

// ---------------------------------------------------------------------------------------------
// ObjectReader: required, optional, unknown keys

TEST(ObjectReaderTest, MissingRequiredKeyNamesTheKeyAndTheObject) {
  const JsonDocument doc = parse(R"({"kernel": {"selector": "fifo"}})");
  ObjectReader root(doc.root());
  const JsonNode kernel = root.required("kernel");
  ObjectReader reader(kernel);
  EXPECT_EQ(error_of([&] { reader.required("placement"); }),
            "topologies/x.json: /kernel: missing required key \"placement\"");
}

TEST(ObjectReaderTest, MissingKeyAtTheRootIsReportedAtSlash) {
  // The root's pointer is empty; messages show it as "/" so that the field is never blank.
  const JsonDocument doc = parse("{}");
  ObjectReader reader(doc.root());
  EXPECT_EQ(error_of([&] { reader.required("schema"); }),
            "topologies/x.json: /: missing required key \"schema\"");
}

TEST(ObjectReaderTest, OptionalKeysAndDefaults) {
  // Absent optional keys give the documented fallback; present ones are read and checked.
  const JsonDocument doc = parse(R"({"n": 2.5, "i": 7, "b": true, "s": "x", "bad": "y"})");
  ObjectReader reader(doc.root());
  EXPECT_DOUBLE_EQ(reader.number_or("n", 1.0), 2.5);
  EXPECT_DOUBLE_EQ(reader.number_or("n2", 1.0), 1.0);
  EXPECT_EQ(reader.int_or("i", 3), 7);
  EXPECT_EQ(reader.int_or("i2", 3), 3);
  EXPECT_TRUE(reader.bool_or("b", false));
  EXPECT_FALSE(reader.bool_or("b2", false));
  EXPECT_EQ(reader.string_or("s", "d"), "x");
  EXPECT_EQ(reader.string_or("s2", "d"), "d");
  EXPECT_FALSE(reader.optional("absent").has_value());
  EXPECT_TRUE(reader.has("bad"));
  EXPECT_FALSE(reader.has("absent"));
  EXPECT_EQ(error_of([&] { reader.int_or("bad", 0); }),
            "topologies/x.json: /bad: expected an integer, got \"y\"");
  // Every key was taken, so finish() accepts the object.
  EXPECT_NO_THROW(reader.finish());
}

TEST(ObjectReaderTest, UnknownKeySuggestsTheClosestNameAndListsValidKeys) {
  const JsonDocument doc = parse(R"({"kernel": {"placment": "mainline", "selector": "fifo"}})");
  ObjectReader root(doc.root());
  ObjectReader kernel(root.required("kernel"));
  kernel.optional("placement");
  kernel.optional("priority_inheritance");
  kernel.required("selector");
  // The valid keys are listed sorted; the typo is named by its own pointer.
  EXPECT_EQ(error_of([&] { kernel.finish(); }),
            "topologies/x.json: /kernel/placment: unknown key (did you mean \"placement\"?); "
            "valid keys: placement, priority_inheritance, selector");
}

TEST(ObjectReaderTest, UnknownKeyFarFromEveryNameGetsNoSuggestion) {
  const JsonDocument doc = parse(R"({"name": "a", "colour": "red"})");
  ObjectReader reader(doc.root());
  reader.required("name");
  reader.optional("seed");
  EXPECT_EQ(error_of([&] { reader.finish(); }),
            "topologies/x.json: /colour: unknown key; valid keys: name, seed");
}

TEST(ObjectReaderTest, UnknownKeyInAnObjectThatTakesNoKeys) {
  const JsonDocument doc = parse(R"({"x": 1})");
  ObjectReader reader(doc.root());
  EXPECT_EQ(error_of([&] { reader.finish(); }),
            "topologies/x.json: /x: unknown key; valid keys: (none)");
}

TEST(ObjectReaderTest, KeyTakenTwiceIsListedOnce) {
  const JsonDocument doc = parse(R"({"a": 1, "unrelated": 2})");
  ObjectReader reader(doc.root());
  reader.optional("a");
  reader.optional("a");
  reader.has("never_taken");  // has() only looks: it does not make a key valid
  EXPECT_EQ(error_of([&] { reader.finish(); }),
            "topologies/x.json: /unrelated: unknown key; valid keys: a");
}

TEST(ClosestNameTest, SuggestsOnlyCloseNames) {
  const std::vector<std::string> names = {"placement", "selector", "priority_inheritance"};
  EXPECT_EQ(closest_name("placment", names), "placement");
  EXPECT_EQ(closest_name("selecter", names), "selector");
  EXPECT_EQ(closest_name("priority_inheritence", names), "priority_inheritance");
  EXPECT_EQ(closest_name("colour", names), std::nullopt);
  EXPECT_EQ(closest_name("x", std::vector<std::string>{}), std::nullopt);
  // Names of very different lengths are not compared, and a word of more than 256 characters
  // gets no suggestion (the distance costs the product of the lengths).
  const std::string long_name(300, 'a');
  EXPECT_EQ(
      closest_name(long_name.substr(0, 250), std::vector<std::string>{long_name.substr(0, 249)}),
      long_name.substr(0, 249));
  EXPECT_EQ(closest_name(long_name, std::vector<std::string>{long_name + "b"}), std::nullopt);
}

TEST(NameListTest, ListsAtMostTheLimitAndCountsTheRest) {
  const std::vector<std::string> names = {"a", "b", "c", "d"};
  EXPECT_EQ(name_list(names), "a, b, c, d");
  EXPECT_EQ(name_list(names, 2), "a, b and 2 more");
  EXPECT_EQ(name_list(std::vector<std::string>{}), "");
  EXPECT_EQ(name_list(std::vector<std::string>{"x\ny"}), "x\\ny");
}

// ---------------------------------------------------------------------------------------------
// JSON pointers

TEST(JsonPointerTest, EscapesTildeAndSlash) {
  // RFC 6901: "~" becomes "~0" and "/" becomes "~1" (in that order, so "~1" stays literal).
  EXPECT_EQ(escape_pointer_token("plain"), "plain");
  EXPECT_EQ(escape_pointer_token("a/b"), "a~1b");
  EXPECT_EQ(escape_pointer_token("m~n"), "m~0n");
  EXPECT_EQ(escape_pointer_token("~1"), "~01");
  EXPECT_EQ(escape_pointer_token("/~/"), "~1~0~1");
}

TEST(JsonPointerTest, ChildPointersEscapeKeysInMessages) {
  const JsonDocument doc = parse(R"({"a/b": {"m~n": "v"}})");
  const JsonNode node = doc.root().child("a/b").child("m~n");
  EXPECT_EQ(node.pointer(), "/a~1b/m~0n");
  EXPECT_EQ(error_of([&] { node.as_int(); }),
            "topologies/x.json: /a~1b/m~0n: expected an integer, got \"v\"");
  // The escaped pointer resolves back to the same value.
  EXPECT_EQ(doc.value().at(nlohmann::json::json_pointer(node.pointer())), "v");
}

TEST(JsonPointerTest, UnknownKeysAreEscapedToo) {
  const JsonDocument doc = parse(R"({"x/y": 1})");
  ObjectReader reader(doc.root());
  EXPECT_EQ(error_of([&] { reader.finish(); }),
            "topologies/x.json: /x~1y: unknown key; valid keys: (none)");
}

TEST(JsonPointerTest, NestedObjectsAndArraysBuildThePointer) {
  const JsonDocument doc = parse(R"({"a": [{"b": 1}, {"b": "two"}]})");
  const auto items = doc.root().child("a").items();
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].pointer(), "/a/0");
  EXPECT_EQ(items[0].child("b").pointer(), "/a/0/b");
  EXPECT_EQ(items[0].child("b").as_int(), 1);
  EXPECT_EQ(error_of([&] { items[1].child("b").as_int(); }),
            "topologies/x.json: /a/1/b: expected an integer, got \"two\"");
  // Every pointer this reader builds resolves to the node it describes.
  for (const auto& item : items) {
    const JsonNode b = item.child("b");
    EXPECT_EQ(doc.value().at(nlohmann::json::json_pointer(b.pointer())), b.raw());
  }
}

TEST(JsonPointerTest, FailPrefixesFileAndPointer) {
  const JsonDocument doc = JsonDocument::from_value(nlohmann::json{{"k", {1, 2, 3}}}, "mem.json");
  const JsonNode node = doc.root().child("k").child(std::size_t{2});
  EXPECT_EQ(error_of([&] { node.fail("custom message"); }), "mem.json: /k/2: custom message");
  EXPECT_EQ(error_of([&] { node.fail_expected("a string"); }),
            "mem.json: /k/2: expected a string, got 3");
}

}  // namespace
}  // namespace bindersim
