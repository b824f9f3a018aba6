// The digest's one pass over a tensor (detail/encode/digest.hpp) gives what the stats, the sketch
// and BLAKE3 give each on its own, for every dtype, on every sketch kernel, for tensors shorter than
// a BLAKE3 segment (hashed whole) and longer (hashed a segment at a time between the sketch's chunks).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "orchlog/blake3.hpp"
#include "orchlog/detail/encode/digest.hpp"

namespace {

using orchlog::detail::SketchPath;
using orchlog::schema::DType;

std::string bits(const std::optional<double>& v) {
  if (!v) return "null";
  std::uint64_t b;
  std::memcpy(&b, &*v, sizeof b);
  return std::to_string(b);
}

void expect_same_stats(const orchlog::schema::Stats& a, const orchlog::schema::Stats& b) {
  EXPECT_EQ(bits(a.min), bits(b.min));
  EXPECT_EQ(bits(a.max), bits(b.max));
  EXPECT_EQ(bits(a.mean), bits(b.mean));
  EXPECT_EQ(bits(a.rms), bits(b.rms));
  EXPECT_EQ(bits(a.abs_max), bits(b.abs_max));
  EXPECT_EQ(a.nan_count, b.nan_count);
  EXPECT_EQ(a.inf_count, b.inf_count);
}

// Random bytes, or for float dtypes mostly ordinary values with NaN, ±Inf and -0.0 scattered in.
std::vector<std::uint8_t> tensor_bytes(DType dtype, std::int64_t numel, std::mt19937_64& rng, bool specials) {
  const auto size = static_cast<std::size_t>(orchlog::schema::dtype_size(dtype));
  std::vector<std::uint8_t> out(static_cast<std::size_t>(numel) * size + 1);  // +1: room to shift by a byte
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  if (dtype != DType::f32 && dtype != DType::f64) return out;
  for (std::int64_t i = 0; i < numel; ++i) {
    double x = std::ldexp(static_cast<double>(rng() % 2000001) / 1e6 - 1.0, static_cast<int>(rng() % 40) - 20);
    if (specials) {
      const auto pick = rng() % 64;
      x = pick == 0 ? NAN : pick == 1 ? INFINITY : pick == 2 ? -INFINITY : pick == 3 ? -0.0 : x;
    }
    if (dtype == DType::f32) {
      const auto f = static_cast<float>(x);
      std::memcpy(out.data() + 4 * i, &f, 4);
    } else {
      std::memcpy(out.data() + 8 * i, &x, 8);
    }
  }
  return out;
}

}  // namespace

TEST(Digest, SketchAndStatsFromOnePassEqualEachAloneOnEveryKernel) {
  std::mt19937_64 rng(30);
  const DType dtypes[] = {DType::f32, DType::bf16, DType::f16, DType::f64,
                          DType::i8,  DType::u8,   DType::i32, DType::i64};
  for (DType dtype : dtypes) {
    for (std::int64_t numel : {0, 1, 7, 8, 9, 63, 64, 65, 511, 512, 513, 896, 1000, 4096, 5000}) {
      for (bool specials : {false, true}) {
        auto bytes = tensor_bytes(dtype, numel, rng, specials);
        for (int shift : {0, 1}) {  // a tensor off its element boundary reads the same
          if (shift) std::memmove(bytes.data() + 1, bytes.data(), bytes.size() - 1);
          const std::uint8_t* data = bytes.data() + shift;
          const auto alone = orchlog::detail::compute_stats(dtype, data, numel);
          for (SketchPath path : {SketchPath::portable, SketchPath::avx2, SketchPath::avx512}) {
            if (!orchlog::detail::sketch_path_supported(path)) continue;
            SCOPED_TRACE(std::string(orchlog::schema::dtype_name(dtype)) + " numel " + std::to_string(numel) +
                         " path " + std::to_string(static_cast<int>(path)) + (specials ? " with NaN/Inf" : ""));
            orchlog::schema::Stats fused;
            const auto rows = orchlog::detail::compute_sketch_and_stats(path, dtype, data, numel, fused);
            const auto sketch_alone = orchlog::detail::compute_sketch(path, dtype, data, numel);
            EXPECT_EQ(0, std::memcmp(rows.data(), sketch_alone.data(), sizeof rows));
            expect_same_stats(fused, alone);
          }
        }
      }
    }
  }
}

TEST(Digest, TensorsLongerThanABlake3SegmentHashAsAWhole) {
  std::mt19937_64 rng(31);
  const std::size_t segment = orchlog::detail::blake3::kSegmentLen;
  for (DType dtype : {DType::f32, DType::f16, DType::f64, DType::i8}) {
    const auto size = static_cast<std::size_t>(orchlog::schema::dtype_size(dtype));
    // Around one, two and five segments, and short of a whole sketch chunk at the end.
    for (std::size_t nbytes : {segment, segment + size, 2 * segment, 2 * segment + 3 * size, 5 * segment - 7 * size}) {
      const auto numel = static_cast<std::int64_t>(nbytes / size);
      const auto bytes = tensor_bytes(dtype, numel, rng, true);
      const orchlog::Tensor tensor{bytes.data(), dtype, {numel}};
      const orchlog::detail::TensorSize tsize{numel, static_cast<std::uint64_t>(numel) * size};
      SCOPED_TRACE(std::string(orchlog::schema::dtype_name(dtype)) + " of " + std::to_string(tsize.nbytes) + " bytes");
      const orchlog::detail::DigestPass pass(tensor, tsize);
      char hex[65];
      orchlog::blake3_hex(bytes.data(), static_cast<std::size_t>(tsize.nbytes), hex);
      EXPECT_EQ(std::string(pass.blake3.text), std::string(hex));
      const auto rows = orchlog::detail::compute_sketch(dtype, bytes.data(), numel);
      EXPECT_EQ(0, std::memcmp(pass.sketch.data(), rows.data(), sizeof rows));
      expect_same_stats(pass.stats, orchlog::detail::compute_stats(dtype, bytes.data(), numel));
    }
  }
}
