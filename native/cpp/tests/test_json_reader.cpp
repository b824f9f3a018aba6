// The strict JSON reader the ORCH_LOG_AGAINST index parses JSONL lines with:
// every RFC 8259 text it must accept, and what it must refuse without reading
// past the text or recursing without bound.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "orchlog/detail/decode/json_reader.hpp"

using orchlog::detail::JsonReader;
using orchlog::detail::JsonValue;

namespace {

JsonValue parsed(const std::string& text) {
  JsonValue v;
  EXPECT_TRUE(JsonReader::parse(text, v)) << text;
  return v;
}

}  // namespace

TEST(JsonReader, ReadsARecordLineWithItsEscapesNumbersAndNonfiniteTexts) {
  const JsonValue v = parsed(R"({"a":"x\u00e9\ud83d\ude00\n\"","b":[1,-0.5e3,"NaN","-Infinity",null,true,false]} )");
  ASSERT_EQ(v.kind, JsonValue::Kind::object);
  EXPECT_EQ(v.get("a")->text, "x\xc3\xa9\xf0\x9f\x98\x80\n\"");
  const auto& items = v.get("b")->items;
  ASSERT_EQ(items.size(), 7u);
  EXPECT_EQ(items[0].integer(), 1);
  EXPECT_EQ(items[1].real(), -500.0);
  EXPECT_FALSE(items[1].integer().has_value());
  EXPECT_TRUE(std::isnan(*items[2].real()));
  EXPECT_EQ(items[3].real(), -INFINITY);
  EXPECT_TRUE(items[4].is_null());
  EXPECT_TRUE(items[5].b);
  EXPECT_EQ(v.get("c"), nullptr);
}

TEST(JsonReader, ShortestFloatTextParsesToTheNearestDoubleWhateverTheLocale) {
  EXPECT_EQ(parsed("0.1").real(), 0.1);
  EXPECT_EQ(static_cast<float>(*parsed("1.0000001").real()), 1.0000001f);
  EXPECT_EQ(parsed("1e-320").real(), 1e-320);
  EXPECT_EQ(parsed("9223372036854775807").integer(), INT64_MAX);
  EXPECT_FALSE(parsed("9223372036854775808").integer().has_value());
}

TEST(JsonReader, RefusesWhatIsNotStrictJson) {
  for (const char* text :
       {"",         "{",        "[1,]",     "{\"a\":1,}", "01",          "1.",          ".5",
        "-",        "NaN",      "Infinity", "\"\\x\"",    "\"\\udc00\"", "\"\\ud800\"", "\"\\ud800\\u0041\"",
        "\"a\nb\"", "{} x",     "{'a':1}",  "{\"a\" 1}",  "[1 2]",       "tru",         "nul",
        "\"abc",    "\"\\u12\""}) {
    JsonValue v;
    EXPECT_FALSE(JsonReader::parse(text, v)) << text;
  }
}

TEST(JsonReader, RefusesNestingBeyondItsDepthWithoutRecursingFurther) {
  JsonValue v;
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_FALSE(JsonReader::parse(deep, v));
  const std::string ok = std::string(JsonReader::kMaxDepth, '[') + std::string(JsonReader::kMaxDepth, ']');
  EXPECT_TRUE(JsonReader::parse(ok, v));
}

TEST(JsonReader, AHexSketchGivesItsF32BitsAndAnyOtherTextGivesNothing) {
  const JsonValue v = parsed(R"("3f800000c0490fdb7fc00001")");
  const float want[] = {1.0f, -3.14159274f};
  for (int i = 0; i < 2; ++i) EXPECT_EQ(v.hex_f32(i), want[i]);
  const std::optional<float> nan = v.hex_f32(2);
  ASSERT_TRUE(nan.has_value());
  std::uint32_t bits;
  std::memcpy(&bits, &*nan, sizeof bits);
  EXPECT_EQ(bits, 0x7fc00001u);  // a NaN's payload kept
  EXPECT_FALSE(v.hex_f32(3).has_value());
  for (const char* bad : {R"("3F800000")", R"("3f80000g")", R"("+f800000")"})
    EXPECT_FALSE(parsed(bad).hex_f32(0).has_value()) << bad;
  EXPECT_FALSE(parsed("1").hex_f32(0).has_value());
}
