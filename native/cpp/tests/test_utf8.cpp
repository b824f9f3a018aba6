// Invalid UTF-8 becomes U+FFFD per maximal subpart; JSON escapes only what it must.
#include <gtest/gtest.h>

#include <string>

#include "orchlog/detail/encode/utf8.hpp"

namespace d = orchlog::detail;

namespace {
std::string repaired(const std::string& in) {
  std::string out;
  d::append_repaired_utf8(out, in);
  return out;
}
std::string json(const std::string& in) {  // as the JSONL writer writes a string: repaired, then escaped
  std::string scratch;
  const std::string_view valid = d::as_valid_utf8(in, scratch);
  std::string out(d::json_string_room(valid.size()), '\0');
  out.resize(static_cast<std::size_t>(d::write_json_string(&out[0], valid) - out.data()));
  return out;
}
const std::string R = "\xEF\xBF\xBD";  // U+FFFD
}  // namespace

TEST(Utf8, ValidTextIsLeftAlone) {
  const std::string text = "attn_norm \xC3\xA9 \xE6\xB3\xA8 \xF0\x9F\xA6\x99";
  EXPECT_TRUE(d::is_valid_utf8(text));
  EXPECT_EQ(repaired(text), text);
}

// Cases from the Unicode Standard's discussion of maximal subparts (Table 3-8)
// and what Python's errors="replace" produces for them.
TEST(Utf8, EachMaximalSubpartBecomesOneReplacementCharacter) {
  EXPECT_EQ(repaired("\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64"),
            "a" + R + R + R + "b" + R + "c" + R + R + "d");
  EXPECT_EQ(repaired("\xC0\xAF"), R + R);                  // overlong lead bytes are never valid
  EXPECT_EQ(repaired("\xE0\x80\x80"), R + R + R);          // E0 needs A0..BF next
  EXPECT_EQ(repaired("\xED\xA0\x80"), R + R + R);          // surrogates are not scalar values
  EXPECT_EQ(repaired("\xF4\x90\x80\x80"), R + R + R + R);  // beyond U+10FFFF
  EXPECT_EQ(repaired("\xE2\x82"), R);                      // truncated at the end: one subpart
  EXPECT_EQ(repaired("\xFF"), R);
}

TEST(Utf8, JsonEscapesQuotesBackslashesAndControlsOnly) {
  EXPECT_EQ(json("a\"b\\c\n\t\x01\x1f\x7f"), "\"a\\\"b\\\\c\\n\\t\\u0001\\u001f\x7f\"");
  EXPECT_EQ(json("\xE2\x80\xA8"), "\"\xE2\x80\xA8\"");  // U+2028 is written raw
  EXPECT_EQ(json("\b\f\r"), "\"\\b\\f\\r\"");
}

TEST(Utf8, JsonStringsAreRepairedFirst) { EXPECT_EQ(json("x\xFFy"), "\"x" + R + "y\""); }
