// The sketch kernel reproduces every case of the shared sketch vectors bit
// for bit, on every kernel path this CPU runs.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "orchlog/detail/encode/sketch.hpp"
#include "support/json.hpp"

namespace t = orchlog_test;
using orchlog::detail::SketchPath;

namespace {

// The inputs of `generate` cases, built as tests/encoding/sketch_vectors.py describes.
std::string generated(const t::Json& spec, orchlog::schema::DType dtype, std::int64_t numel) {
  using orchlog::detail::sketch::splitmix64;
  const auto seed = static_cast<std::uint64_t>(spec["seed"].i64());
  std::string out;
  for (std::int64_t i = 0; i < numel; ++i) {
    const std::uint64_t word = splitmix64(seed, static_cast<std::uint64_t>(i));
    if (dtype == orchlog::schema::DType::i32) {
      const auto v = static_cast<std::uint32_t>(word >> 32);
      for (int b = 0; b < 4; ++b) out.push_back(static_cast<char>((v >> (8 * b)) & 0xFF));
      continue;
    }
    const double scale = spec["scale"].f64();
    const double value = static_cast<double>(word >> 11) * 0x1p-53 * 2 * scale - scale;
    std::uint64_t bits = 0;
    int size = 8;
    if (dtype == orchlog::schema::DType::f32) {
      const auto f = static_cast<float>(value);
      std::uint32_t b32;
      std::memcpy(&b32, &f, sizeof b32);
      bits = b32;
      size = 4;
    } else {
      std::memcpy(&bits, &value, sizeof bits);
    }
    for (int b = 0; b < size; ++b) out.push_back(static_cast<char>((bits >> (8 * b)) & 0xFF));
  }
  return out;
}

std::string row_bits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  char text[9];
  std::snprintf(text, sizeof text, "%08x", b);
  return text;
}

}  // namespace

TEST(Sketch, EveryVectorIsReproducedBitForBitOnEveryKernelPath) {
  const t::Json doc = t::parse_json(t::read_file(ORCHLOG_SKETCH_VECTORS));
  ASSERT_GT(doc["cases"].size(), 20u);
  int paths_run = 0;
  for (SketchPath path : {SketchPath::portable, SketchPath::avx2, SketchPath::avx512}) {
    if (!orchlog::detail::sketch_path_supported(path)) continue;
    ++paths_run;
    for (const t::Json& c : doc["cases"].items) {
      SCOPED_TRACE(c["name"].str() + " on path " + std::to_string(static_cast<int>(path)));
      const auto dtype = *orchlog::schema::dtype_from_name(c["dtype"].str());
      const std::int64_t numel = c["numel"].i64();
      const std::string data =
          c.has("data_hex") ? t::from_hex(c["data_hex"].str()) : generated(c["generate"], dtype, numel);
      const auto rows =
          orchlog::detail::compute_sketch(path, dtype, reinterpret_cast<const std::uint8_t*>(data.data()), numel);
      ASSERT_EQ(c["expected_bits"].size(), rows.size());
      for (std::size_t r = 0; r < rows.size(); ++r) EXPECT_EQ(row_bits(rows[r]), c["expected_bits"][r].str()) << r;
    }
  }
  EXPECT_GE(paths_run, 1);
}

TEST(Sketch, IsLinearUpToRounding) {
  std::vector<float> a(3000), b(3000), d(3000);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>(i % 13) * 0.25f - 1.0f;
    b[i] = a[i] + (i == 1234 ? 0.5f : 0.0f);
    d[i] = b[i] - a[i];
  }
  const auto bytes = [](const std::vector<float>& v) { return reinterpret_cast<const std::uint8_t*>(v.data()); };
  using orchlog::schema::DType;
  const auto sa = orchlog::detail::compute_sketch(DType::f32, bytes(a), 3000);
  const auto sb = orchlog::detail::compute_sketch(DType::f32, bytes(b), 3000);
  const auto sd = orchlog::detail::compute_sketch(DType::f32, bytes(d), 3000);
  // One element differs by 0.5: every row of the difference is ±0.5 exactly.
  for (int r = 0; r < 64; ++r) {
    EXPECT_EQ(std::abs(sd[r]), 0.5f);
    EXPECT_NEAR(sb[r] - sa[r], sd[r], 1e-5);
  }
}
