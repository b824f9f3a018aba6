// BLAKE3 hash_many over 8 inputs with AVX2 (256-bit vectors), and the last four chunks or fewer of a
// hash row-wise.
#pragma once

#include "orchlog/detail/blake3/portable.hpp"
#include "orchlog/detail/blake3/simd_target.hpp"

#if ORCHLOG_X86_SIMD
ORCHLOG_TARGET_BEGIN("avx2")
namespace orchlog {
namespace detail {
namespace blake3 {
namespace avx2 {

struct Ops {
  using V = __m256i;
  static constexpr std::size_t kDegree = 8;
  static V set1(std::uint32_t x) { return _mm256_set1_epi32(static_cast<int>(x)); }
  static V load_u32(const std::uint32_t* p) { return _mm256_load_si256(reinterpret_cast<const V*>(p)); }
  static void store_u32(std::uint32_t* p, V v) { _mm256_store_si256(reinterpret_cast<V*>(p), v); }
  static V add(V a, V b) { return _mm256_add_epi32(a, b); }
  static V xor_(V a, V b) { return _mm256_xor_si256(a, b); }
  static V rot16(V x) {
    return _mm256_shuffle_epi8(x, _mm256_set_epi8(13, 12, 15, 14, 9, 8, 11, 10, 5, 4, 7, 6, 1, 0, 3, 2,  //
                                                  13, 12, 15, 14, 9, 8, 11, 10, 5, 4, 7, 6, 1, 0, 3, 2));
  }
  static V rot8(V x) {
    return _mm256_shuffle_epi8(x, _mm256_set_epi8(12, 15, 14, 13, 8, 11, 10, 9, 4, 7, 6, 5, 0, 3, 2, 1,  //
                                                  12, 15, 14, 13, 8, 11, 10, 9, 4, 7, 6, 5, 0, 3, 2, 1));
  }
  static V rot12(V x) { return _mm256_or_si256(_mm256_srli_epi32(x, 12), _mm256_slli_epi32(x, 20)); }
  static V rot7(V x) { return _mm256_or_si256(_mm256_srli_epi32(x, 7), _mm256_slli_epi32(x, 25)); }

  // 8x8 transpose of 32-bit words: interleave pairs of rows, then pairs of
  // pairs (each within 128-bit halves), then swap the halves across.
  static void transpose8(V r[8]) {
    V a[4], b[4], c[8];
    for (int p = 0; p < 4; ++p) {
      a[p] = _mm256_unpacklo_epi32(r[2 * p], r[2 * p + 1]);
      b[p] = _mm256_unpackhi_epi32(r[2 * p], r[2 * p + 1]);
    }
    for (int q = 0; q < 2; ++q) {  // rows 4q .. 4q+3
      c[4 * q + 0] = _mm256_unpacklo_epi64(a[2 * q], a[2 * q + 1]);
      c[4 * q + 1] = _mm256_unpackhi_epi64(a[2 * q], a[2 * q + 1]);
      c[4 * q + 2] = _mm256_unpacklo_epi64(b[2 * q], b[2 * q + 1]);
      c[4 * q + 3] = _mm256_unpackhi_epi64(b[2 * q], b[2 * q + 1]);
    }
    for (int k = 0; k < 4; ++k) {
      r[k] = _mm256_permute2x128_si256(c[k], c[4 + k], 0x20);
      r[4 + k] = _mm256_permute2x128_si256(c[k], c[4 + k], 0x31);
    }
  }
  static void load_message(const std::uint8_t* const inputs[8], std::size_t offset, V m[16]) {
    for (int h = 0; h < 2; ++h) {  // words 8h .. 8h+7 of each input
      for (int l = 0; l < 8; ++l) {
        // As in the AVX-512 kernel: help the prefetchers follow eight streams.
        if (h == 0) _mm_prefetch(reinterpret_cast<const char*>(inputs[l] + offset + 4 * kBlockLen), _MM_HINT_T0);
        m[8 * h + l] = _mm256_loadu_si256(reinterpret_cast<const V*>(inputs[l] + offset + 32 * h));
      }
      transpose8(m + 8 * h);
    }
  }
};

#include "orchlog/detail/blake3/simd_kernel.inc"

}  // namespace avx2

// The last four chunks or fewer of a hash, row-wise (rows_kernel.inc): each chunk's state as four rows
// in one 128-bit lane, two chunks to a 256-bit vector and two vectors side by side.
namespace avx2_rows {
struct RowOps {
  struct V {
    __m256i lo, hi;  // chunks 0 and 1, chunks 2 and 3
  };
  static V add(V a, V b) { return {_mm256_add_epi32(a.lo, b.lo), _mm256_add_epi32(a.hi, b.hi)}; }
  static V xor_(V a, V b) { return {_mm256_xor_si256(a.lo, b.lo), _mm256_xor_si256(a.hi, b.hi)}; }
  template <int kBits>
  static __m256i ror1(__m256i x) {
    if constexpr (kBits == 16) return avx2::Ops::rot16(x);
    if constexpr (kBits == 8) return avx2::Ops::rot8(x);
    return _mm256_or_si256(_mm256_srli_epi32(x, kBits), _mm256_slli_epi32(x, 32 - kBits));
  }
  template <int kBits>
  static V ror(V v) {
    return {ror1<kBits>(v.lo), ror1<kBits>(v.hi)};
  }
  template <int kImm>
  static V shuffle(V v) {
    return {_mm256_shuffle_epi32(v.lo, kImm), _mm256_shuffle_epi32(v.hi, kImm)};
  }
  template <int kImm>
  static __m256i shuffle2_1(__m256i x, __m256i y) {
    return _mm256_castps_si256(_mm256_shuffle_ps(_mm256_castsi256_ps(x), _mm256_castsi256_ps(y), kImm));
  }
  template <int kImm>
  static V shuffle2(V a, V b) {
    return {shuffle2_1<kImm>(a.lo, b.lo), shuffle2_1<kImm>(a.hi, b.hi)};
  }
  template <int kMask4>
  static V blend(V a, V b) {
    return {_mm256_blend_epi32(a.lo, b.lo, kMask4 | kMask4 << 4), _mm256_blend_epi32(a.hi, b.hi, kMask4 | kMask4 << 4)};
  }
  static V unpacklo64(V a, V b) { return {_mm256_unpacklo_epi64(a.lo, b.lo), _mm256_unpacklo_epi64(a.hi, b.hi)}; }
  static V unpacklo32(V a, V b) { return {_mm256_unpacklo_epi32(a.lo, b.lo), _mm256_unpacklo_epi32(a.hi, b.hi)}; }
  static V unpackhi32(V a, V b) { return {_mm256_unpackhi_epi32(a.lo, b.lo), _mm256_unpackhi_epi32(a.hi, b.hi)}; }
  static V lanes4(const std::uint32_t* p) {
    const __m256i v = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return {v, v};
  }
  static V load(const std::uint32_t* p) {
    return {_mm256_load_si256(reinterpret_cast<const __m256i*>(p)),
            _mm256_load_si256(reinterpret_cast<const __m256i*>(p + 8))};
  }
  static void store(std::uint32_t* p, V v) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(p), v.lo);
    _mm256_store_si256(reinterpret_cast<__m256i*>(p + 8), v.hi);
  }
  static __m256i two(const std::uint8_t* a, const std::uint8_t* b) {
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a))),
                                   _mm_loadu_si128(reinterpret_cast<const __m128i*>(b)), 1);
  }
  static V load_lanes(const std::uint8_t* const blocks[4], std::size_t offset) {
    return {two(blocks[0] + offset, blocks[1] + offset), two(blocks[2] + offset, blocks[3] + offset)};
  }
};
#include "orchlog/detail/blake3/rows_kernel.inc"
}  // namespace avx2_rows
}  // namespace blake3
}  // namespace detail
}  // namespace orchlog
ORCHLOG_TARGET_END
#endif
