// The linear sketch of a tensor (FORMAT.md, "Sketch"): 64 f32 numbers from
// which two summaries bound ‖a − b‖₂ without the tensors.
//
//   std::array<float, 64> rows = orchlog::detail::compute_sketch(dtype, data, numel);
//
// Each 512-element chunk is 8 groups of 64 (lane q holds elements 8p + q);
// each group gets hashed signs, a 64-point Walsh-Hadamard transform and
// hashed signs again, and its outputs are added into 64 accumulator rows of
// its lane through a permutation the chunk picks from a table. The kernel is
// compiled for AVX-512, AVX2 and the build's own instruction set, and the
// fastest one the CPU runs is used; every path gives the same bits, since
// each is the same sequence of IEEE additions (orchlog/encoding/sketch.py is
// the reference, tests/encoding/sketch_vectors.json the shared vectors).
//
// Not for translation units built with -ffast-math, which licenses the
// compiler to reorder these sums.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

#include "orchlog/detail/blake3/simd_target.hpp"
#include "orchlog/detail/encode/number_text.hpp"
#include "orchlog/detail/encode/stats.hpp"
#include "orchlog/detail/hd.hpp"
#include "orchlog/detail/isa.hpp"
#include "orchlog/schema_gen.hpp"

namespace orchlog {
namespace detail {
namespace sketch {

inline constexpr int kRows = 64;
inline constexpr int kLanes = 8;
inline constexpr std::int64_t kChunk = kRows * kLanes;
inline constexpr int kTable = 1024;  // row permutations a chunk picks from
inline constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ull;
// Consecutive 64-bit words of pi's hex digits: constants no one chose, one per stream.
inline constexpr std::uint64_t kSeedSigns = 0x243F6A8885A308D3ull;
inline constexpr std::uint64_t kSeedPick = 0x13198A2E03707344ull;
inline constexpr std::uint64_t kSeedTable = 0xA4093822299F31D0ull;
inline constexpr std::uint64_t kSeedLanes = 0x082EFA98EC4E6C89ull;
inline constexpr std::uint64_t kSignBit = 0x8000000000000000ull;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
inline constexpr bool kLittleEndian = true;
#else
inline constexpr bool kLittleEndian = false;
#endif

using Rows = std::array<float, kRows>;

// The kernel's loops over 8 vectors must be unrolled for the vectors to stay in registers.
#if defined(__clang__)
#define ORCHLOG_UNROLL_8 _Pragma("unroll")
#elif defined(__NVCC__) && defined(__CUDACC_VER_MAJOR__) && __CUDACC_VER_MAJOR__ >= 12
// nvcc's front end passes the GCC pragma on to the host compiler, but warns that it does not know it.
#define ORCHLOG_UNROLL_8 \
  _Pragma("nv_diagnostic push") _Pragma("nv_diag_suppress 1675") _Pragma("GCC unroll 8") _Pragma("nv_diagnostic pop")
#elif defined(__GNUC__)
#define ORCHLOG_UNROLL_8 _Pragma("GCC unroll 8")
#else
#define ORCHLOG_UNROLL_8
#endif

// Output j of SplitMix64 seeded with `seed`.
ORCHLOG_HD constexpr std::uint64_t splitmix64(std::uint64_t seed, std::uint64_t j) noexcept {
  std::uint64_t z = seed + (j + 1) * kGolden;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Permutation m of stream `seed`: a Fisher-Yates shuffle of 0..63 whose k-th
// swap (entry i = 63 - k with entry (w * (i + 1)) >> 32) takes w from the low
// (k even) or high (k odd) half of output 32m + k / 2.
ORCHLOG_HD inline void permutation(std::uint64_t seed, std::uint64_t m, std::uint8_t out[kRows]) noexcept {
  for (int r = 0; r < kRows; ++r) out[r] = static_cast<std::uint8_t>(r);
  for (int k = 0; k < kRows - 1; ++k) {
    const int i = kRows - 1 - k;
    const std::uint64_t w = (splitmix64(seed, 32 * m + k / 2) >> (32 * (k % 2))) & 0xFFFFFFFFull;
    const auto j = static_cast<int>((w * static_cast<std::uint64_t>(i + 1)) >> 32);
    const std::uint8_t held = out[i];
    out[i] = out[j];
    out[j] = held;
  }
}

struct Tables {
  std::uint8_t rows[kTable][kRows];   // the permutations chunks pick from
  std::uint8_t lanes[kLanes][kRows];  // row t of the sketch reads row lanes[q][t] of lane q
};

// Built once, on first use (64 KiB).
inline const Tables& tables() {
  static const Tables built = [] {
    Tables t{};
    for (int m = 0; m < kTable; ++m) permutation(kSeedTable, static_cast<std::uint64_t>(m), t.rows[m]);
    for (int q = 0; q < kLanes; ++q) permutation(kSeedLanes, static_cast<std::uint64_t>(q), t.lanes[q]);
    return t;
  }();
  return built;
}

// A row as stored: the nearest f32, ties to even (values beyond f32 become ±Inf); zero as +0.
inline float to_row(double v) noexcept {
  const auto f = static_cast<float>(v);
  return f == 0 ? 0.0f : f;
}

namespace portable {
inline constexpr int kWidth = 2;
#include "orchlog/detail/encode/sketch_kernel.inc"
}  // namespace portable

}  // namespace sketch
}  // namespace detail
}  // namespace orchlog

#if ORCHLOG_X86_SIMD
ORCHLOG_TARGET_BEGIN("avx2")
namespace orchlog {
namespace detail {
namespace sketch {
namespace avx2 {
inline constexpr int kWidth = 4;
#include "orchlog/detail/encode/sketch_kernel.inc"
}  // namespace avx2
}  // namespace sketch
}  // namespace detail
}  // namespace orchlog
ORCHLOG_TARGET_END

ORCHLOG_TARGET_BEGIN("avx512f")
namespace orchlog {
namespace detail {
namespace sketch {
namespace avx512 {
inline constexpr int kWidth = 8;
#include "orchlog/detail/encode/sketch_kernel.inc"
}  // namespace avx512
}  // namespace sketch
}  // namespace detail
}  // namespace orchlog
ORCHLOG_TARGET_END
#endif

namespace orchlog {
namespace detail {

enum class SketchPath { portable, avx2, avx512 };

inline bool sketch_path_supported(SketchPath path) noexcept {
#if ORCHLOG_X86_SIMD
  __builtin_cpu_init();
  switch (path) {
    case SketchPath::portable:
      return true;
    case SketchPath::avx2:
      return __builtin_cpu_supports("avx2");
    case SketchPath::avx512:
      return __builtin_cpu_supports("avx512f");
  }
  return false;
#else
  return path == SketchPath::portable;
#endif
}

// The widest kernel this CPU runs, within ORCHLOG_ISA (isa.hpp).
inline SketchPath sketch_best_path() noexcept {
  static const SketchPath best =
      sketch_path_supported(SketchPath::avx512) && isa_allowed(IsaCap::avx512) ? SketchPath::avx512
      : sketch_path_supported(SketchPath::avx2) && isa_allowed(IsaCap::avx2)   ? SketchPath::avx2
                                                                               : SketchPath::portable;
  return best;
}

// The sketch of `numel` elements of `dtype` stored little-endian at `data`, on the given kernel path
// (which must be supported).
inline sketch::Rows compute_sketch(SketchPath path, schema::DType dtype, const std::uint8_t* data, std::int64_t numel) {
#if ORCHLOG_X86_SIMD
  if (path == SketchPath::avx512) return sketch::avx512::compute(dtype, data, numel);
  if (path == SketchPath::avx2) return sketch::avx2::compute(dtype, data, numel);
#endif
  static_cast<void>(path);
  return sketch::portable::compute(dtype, data, numel);
}

inline sketch::Rows compute_sketch(schema::DType dtype, const std::uint8_t* data, std::int64_t numel) {
  return compute_sketch(sketch_best_path(), dtype, data, numel);
}

// The sketch and the stats (stats.hpp) of the same elements, from one read of them. before_chunk(c), if
// given, is called before chunk c (elements 512c to 512c + 511) is read: a caller that reads the tensor
// for something else too (BLAKE3) does it there, so that the chunk is read while in cache. between(),
// if given, is called between the kernel's runs of 8 positions (sketch_kernel.inc), and may be called
// not at all (the portable path): a caller puts there short work that waits on its own results (a
// BLAKE3 compression), which the core then does beside the sketch's.
template <class BeforeChunk, class Between>
sketch::Rows compute_sketch_and_stats(SketchPath path, schema::DType dtype, const std::uint8_t* data,
                                      std::int64_t numel, schema::Stats& stats, BeforeChunk&& before_chunk,
                                      Between&& between) {
#if ORCHLOG_X86_SIMD
  if (path == SketchPath::avx512)
    return sketch::avx512::compute_with_stats(dtype, data, numel, stats, before_chunk, between);
  if (path == SketchPath::avx2)
    return sketch::avx2::compute_with_stats(dtype, data, numel, stats, before_chunk, between);
#endif
  static_cast<void>(path);
  return sketch::portable::compute_with_stats(dtype, data, numel, stats, before_chunk, between);
}

template <class BeforeChunk>
sketch::Rows compute_sketch_and_stats(SketchPath path, schema::DType dtype, const std::uint8_t* data,
                                      std::int64_t numel, schema::Stats& stats, BeforeChunk&& before_chunk) {
  return compute_sketch_and_stats(path, dtype, data, numel, stats, before_chunk, [] {});
}

inline sketch::Rows compute_sketch_and_stats(SketchPath path, schema::DType dtype, const std::uint8_t* data,
                                             std::int64_t numel, schema::Stats& stats) {
  return compute_sketch_and_stats(path, dtype, data, numel, stats, [](std::int64_t) {});
}

inline sketch::Rows compute_sketch_and_stats(schema::DType dtype, const std::uint8_t* data, std::int64_t numel,
                                             schema::Stats& stats) {
  return compute_sketch_and_stats(sketch_best_path(), dtype, data, numel, stats);
}

}  // namespace detail
}  // namespace orchlog
