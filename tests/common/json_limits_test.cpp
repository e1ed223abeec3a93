// Limits of JSON input: only regular files of at most kMaxInputFileBytes are read, and an object
// that gives a key twice is an error naming its position and JSON pointer.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "bindersim/common/error.hpp"
#include "bindersim/common/json_reader.hpp"
#include "config_error.hpp"

namespace bindersim {
namespace {

namespace fs = std::filesystem;

using testing::error_of;

JsonDocument parse(std::string_view text) { return JsonDocument::parse_text(text, "in.json"); }

class InputFileTest : public ::testing::Test {
 protected:
  // One directory per test: ctest runs the tests of this fixture in parallel processes, and
  // a shared one was removed under a test by another's teardown.
  InputFileTest()
      : dir_(fs::path(::testing::TempDir()) /
             (std::string("json_limits_") +
              ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~InputFileTest() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// ---------------------------------------------------------------------------------------------
// Input files

TEST_F(InputFileTest, ADeviceIsRefusedWithoutReadingIt) {
  // /dev/zero never ends: reading it used to grow the memory without bound.
  EXPECT_EQ(error_of([] { JsonDocument::parse_file("/dev/zero"); }),
            "/dev/zero: expected a JSON file, got a character device");
  EXPECT_EQ(error_of([] { read_input_file("/dev/zero", "a runs file (JSON Lines)"); }),
            "/dev/zero: expected a runs file (JSON Lines), got a character device");
}

TEST_F(InputFileTest, AFifoAndADirectoryAreRefused) {
  const fs::path fifo = dir_ / "pipe.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // Opening a FIFO without a writer would block: it must be refused before it is opened.
  EXPECT_EQ(error_of([&] { JsonDocument::parse_file(fifo); }),
            fifo.string() + ": expected a JSON file, got a FIFO");
  EXPECT_EQ(error_of([&] { JsonDocument::parse_file(dir_); }),
            dir_.string() + ": expected a JSON file, got a directory");
}

TEST_F(InputFileTest, AFileLargerThanTheLimitIsRefusedWithItsSize) {
  const fs::path big = dir_ / "big.json";
  { std::ofstream(big) << "[]"; }
  fs::resize_file(big, kMaxInputFileBytes + 1);  // sparse: nothing is written
  EXPECT_EQ(error_of([&] { JsonDocument::parse_file(big); }),
            big.string() + ": expected a JSON file of at most 64 MiB (67108864 bytes), got " +
                std::to_string(kMaxInputFileBytes + 1) + " bytes");
}

TEST_F(InputFileTest, AFileWithinTheLimitIsReadWhole) {
  const fs::path file = dir_ / "small.json";
  { std::ofstream(file) << "{\"a\": [1, 2, 3]}\n"; }
  EXPECT_EQ(read_input_file(file, "a JSON file"), "{\"a\": [1, 2, 3]}\n");
  EXPECT_EQ(JsonDocument::parse_file(file).value()["a"].size(), 3u);
}

// ---------------------------------------------------------------------------------------------
// Duplicate keys

TEST(DuplicateKeyTest, ASecondKeyNamesItsPositionPointerAndTheFirst) {
  EXPECT_EQ(error_of([] { parse("{\"schema\": \"x\",\n \"name\": \"a\",\n \"name\": \"b\"}"); }),
            "in.json: line 3, column 2: /name: expected each key at most once in an object, got "
            "\"name\" again (first at line 2, column 2)");
}

TEST(DuplicateKeyTest, ThePointerGoesThroughObjectsAndArrays) {
  const std::string text = R"({"a": [[{"k": 1}], {"k": [1, {"k": 0}], "z": 0, "k": 2}]})";
  EXPECT_EQ(error_of([&] { parse(text); }),
            "in.json: line 1, column 49: /a/1/k: expected each key at most once in an object, "
            "got \"k\" again (first at line 1, column 21)");
}

TEST(DuplicateKeyTest, KeysWithEscapesAndSlashesArePositionedAndEscaped) {
  const std::string text = R"({"x": {"a/\"b": 1, "a/\"b": 2}})";
  EXPECT_EQ(error_of([&] { parse(text); }),
            "in.json: line 1, column 20: /x/a~1\\\"b: expected each key at most once in an "
            "object, got \"a/\\\"b\" again (first at line 1, column 8)");
}

TEST(DuplicateKeyTest, TheSameKeyInDifferentObjectsIsFine) {
  const JsonDocument document =
      parse(R"({"a": {"k": 1}, "b": {"k": 2}, "c": [{"k": 3}, {"k": 4}]})");
  EXPECT_EQ(document.value()["c"][1]["k"], 4);
}

TEST(DuplicateKeyTest, CheckUniqueKeysRejectsDuplicatesAndPassesText) {
  EXPECT_EQ(error_of([] {
              check_unique_keys(R"({"selector":"bogus","selector":"fifo"})", "--set kernel=...");
            }),
            "--set kernel=...: line 1, column 21: /selector: expected each key at most once in an "
            "object, got \"selector\" again (first at line 1, column 2)");
  // Not JSON: a plain string, for the caller to judge.
  EXPECT_NO_THROW(check_unique_keys("mainline", "--set kernel.placement=mainline"));
  EXPECT_NO_THROW(check_unique_keys(R"({"a": 1, "b": 2})", "--set kernel={...}"));
}

TEST(DuplicateKeyTest, ParsedDocumentsAreUnchanged) {
  const std::string text =
      R"({"b": [1, -2, 3.5, 18446744073709551615, true, null, "s\u00e9"], "a": {"x": {}}, "c": []})";
  EXPECT_EQ(parse(text).value(), nlohmann::json::parse(text));
  EXPECT_EQ(parse("7").value(), 7);
}

}  // namespace
}  // namespace bindersim
