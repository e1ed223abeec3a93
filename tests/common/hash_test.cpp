#include "bindersim/common/hash.hpp"

#include <gtest/gtest.h>

namespace bindersim {
namespace {

TEST(Fnv1aTest, MatchesThePublishedTestVectors) {
  // FNV-1a 64-bit reference values (Fowler, Noll, Vo test suite).
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ULL);
}

TEST(Hex64Test, IsSixteenLowercaseHexDigits) {
  // Leading zeros kept, all 64 bits preserved (a JSON number would lose the low bits).
  EXPECT_EQ(hex64(0), "0000000000000000");
  EXPECT_EQ(hex64(0xabULL), "00000000000000ab");
  EXPECT_EQ(hex64(0x8000000000000001ULL), "8000000000000001");
  EXPECT_EQ(hex64(0xFEDCBA9876543210ULL), "fedcba9876543210");
}

TEST(DocumentHashTest, IsTheHashOfTheCanonicalText) {
  EXPECT_EQ(document_hash(nlohmann::json::parse(R"({"b": [1, 2.5], "a": "x"})")),
            fnv1a64(R"({"a":"x","b":[1,2.5]})"));
}

TEST(DocumentHashTest, IgnoresWhitespaceAndKeyOrderButNotValues) {
  const auto a = nlohmann::json::parse(R"({"name": "s", "kernel": {"x": 1, "y": true}})");
  const auto b = nlohmann::json::parse("{\"kernel\":{\"y\":true,\n\"x\":1},\"name\":\"s\"}");
  const auto c = nlohmann::json::parse(R"({"name": "s", "kernel": {"x": 2, "y": true}})");
  EXPECT_EQ(document_hash(a), document_hash(b));
  EXPECT_NE(document_hash(a), document_hash(c));
}

TEST(DocumentHashTest, HashesInvalidUtf8InsteadOfThrowing) {
  const nlohmann::json bad = std::string("\xff\xfe");
  EXPECT_EQ(document_hash(bad), fnv1a64("\"\xEF\xBF\xBD\xEF\xBF\xBD\""));
}

}  // namespace
}  // namespace bindersim
