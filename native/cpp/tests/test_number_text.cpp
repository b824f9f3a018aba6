// Canonical float text (floats.json) and exact half-precision widening.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "orchlog/detail/encode/number_text.hpp"
#include "support/json.hpp"

namespace t = orchlog_test;
namespace d = orchlog::detail;

namespace {
std::string token_for(const std::string& dtype, std::uint64_t bits) {
  std::string out;
  if (dtype == "f64") {
    double v;
    std::memcpy(&v, &bits, sizeof v);
    d::append_f64(out, v);
  } else if (dtype == "f32") {
    d::append_f32(out, d::f32_from_bits(static_cast<std::uint32_t>(bits)));
  } else if (dtype == "f16") {
    d::append_f32(out, d::f32_from_bits(d::f16_to_f32_bits(static_cast<std::uint16_t>(bits))));
  } else {
    d::append_f32(out, d::f32_from_bits(d::bf16_to_f32_bits(static_cast<std::uint16_t>(bits))));
  }
  return out;
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
  std::string out;
  d::append_i64(out, std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(out, "-9223372036854775808");
}
