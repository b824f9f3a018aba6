// Canonical float text (floats.json) and exact half-precision widening.
#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "orchlog/detail/encode/number_text.hpp"
#include "support/json.hpp"

namespace t = orchlog_test;
namespace d = orchlog::detail;

namespace {
// The text a write_* function lays out, as a string.
template <class Write>
std::string text_of(Write write) {
  char text[d::kNumberRoom];
  return std::string(text, static_cast<std::size_t>(write(text) - text));
}

std::string token_for(const std::string& dtype, std::uint64_t bits) {
  float f;
  if (dtype == "f64") {
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return text_of([v](char* at) { return d::write_float(at, v); });
  } else if (dtype == "f32") {
    f = d::f32_from_bits(static_cast<std::uint32_t>(bits));
  } else if (dtype == "f16") {
    f = d::f32_from_bits(d::f16_to_f32_bits(static_cast<std::uint16_t>(bits)));
  } else {
    f = d::f32_from_bits(d::bf16_to_f32_bits(static_cast<std::uint16_t>(bits)));
  }
  return text_of([f](char* at) { return d::write_float(at, f); });
}
}  // namespace

TEST(NumberText, EveryFloatVectorPrintsItsExactToken) {
  const t::Json doc = t::load_vectors("floats.json");
  int checked = 0;
  for (const char* dtype : {"f32", "f64", "f16", "bf16"}) {
    if (!doc.has(dtype)) continue;
    for (const t::Json& pair : doc[dtype].items) {
      const std::uint64_t bits = std::stoull(pair[0].str(), nullptr, 16);
      EXPECT_EQ(token_for(dtype, bits), pair[1].str()) << dtype << " " << pair[0].str();
      ++checked;
    }
  }
  EXPECT_GT(checked, 200);
}

TEST(NumberText, HalfWideningKeepsSignallingNanPayloads) {
  EXPECT_EQ(d::f16_to_f32_bits(0x7C01), 0x7F802000u);  // signalling NaN stays signalling
  EXPECT_EQ(d::f16_to_f32_bits(0xFE00), 0xFFC00000u);
  EXPECT_EQ(d::bf16_to_f32_bits(0x7F81), 0x7F810000u);
}

TEST(NumberText, HalfWideningIsExactForSubnormalsAndZeros) {
  EXPECT_EQ(d::f16_to_f32_bits(0x0001), 0x33800000u);  // 2^-24
  EXPECT_EQ(d::f16_to_f32_bits(0x03FF), 0x387FC000u);  // largest subnormal
  EXPECT_EQ(d::f16_to_f32_bits(0x8000), 0x80000000u);
  EXPECT_EQ(d::f16_to_f32_bits(0x3C00), 0x3F800000u);  // 1.0
}

TEST(NumberText, IntegersArePlainDecimal) {
  EXPECT_EQ(text_of([](char* at) { return d::write_i64(at, std::numeric_limits<std::int64_t>::min()); }),
            "-9223372036854775808");
}

namespace {
// The text write_shortest lays out, read the plain way: digits up to the 'e', then std::from_chars.
template <class Float>
std::string shortest_read_plainly(Float v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<std::size_t>(r.ptr - buf));
  std::string out;
  if (sci.front() == '-') out.push_back('-'), sci.remove_prefix(1);
  const std::size_t e = sci.find('e');
  std::string digits;
  for (std::size_t i = 0; i < e; ++i)
    if (sci[i] != '.') digits.push_back(sci[i]);
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  int exponent = 0;
  std::from_chars(sci.data() + e + (sci[e + 1] == '+' ? 2 : 1), sci.data() + sci.size(), exponent);
  out += text_of([&](char* at) { return d::ecmascript_layout(at, digits, exponent + 1); });
  return out;
}
}  // namespace

// write_shortest reads the exponent from the back of to_chars' text: the same text as reading it
// plainly, over random bit patterns of both widths (every exponent, subnormals included).
TEST(NumberText, ShortestTextMatchesThePlainReadingOfEveryExponent) {
  std::uint64_t state = 0x9E3779B97F4A7C15ull;
  const auto next = [&] {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return state;
  };
  int checked = 0;
  for (int i = 0; i < 200000; ++i) {
    const std::uint32_t f_bits = static_cast<std::uint32_t>(next());
    const float f = d::f32_from_bits(f_bits);
    if (std::isfinite(f) && f != 0) {
      const std::string fast = text_of([f](char* at) { return d::write_shortest(at, f); });
      ASSERT_EQ(fast, shortest_read_plainly(f)) << "f32 bits " << f_bits;
      ++checked;
    }
    const std::uint64_t g_bits = next();
    double g;
    std::memcpy(&g, &g_bits, sizeof g);
    if (std::isfinite(g) && g != 0) {
      const std::string fast = text_of([g](char* at) { return d::write_shortest(at, g); });
      ASSERT_EQ(fast, shortest_read_plainly(g)) << "f64 bits " << g_bits;
      ++checked;
    }
  }
  EXPECT_GT(checked, 390000);
}

TEST(NumberText, HexDigitsAreEightLowercaseMostSignificantFirst) {
  // Every digit value in every place, then a stride through all 32-bit words, against printf.
  const auto check = [](std::uint32_t bits) {
    char got[8], want[9];
    d::hex32(got, bits);
    std::snprintf(want, sizeof want, "%08x", static_cast<unsigned>(bits));
    ASSERT_EQ(std::string(got, 8), std::string(want, 8)) << bits;
  };
  for (int place = 0; place < 8; ++place)
    for (std::uint32_t digit = 0; digit < 16; ++digit) check(digit << (4 * place));
  for (std::uint64_t bits = 0; bits <= 0xFFFFFFFFull; bits += 9973) check(static_cast<std::uint32_t>(bits));
  check(0xFFFFFFFFu);
}
