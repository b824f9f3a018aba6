// BLAKE3 hash_many over 4 inputs with SSE4.1 (128-bit vectors).
#pragma once

#include "orchlog/detail/blake3/portable.hpp"
#include "orchlog/detail/blake3/simd_target.hpp"

#if ORCHLOG_X86_SIMD
ORCHLOG_TARGET_BEGIN("sse4.1")
namespace orchlog {
namespace detail {
namespace blake3 {
namespace sse41 {

struct Ops {
  using V = __m128i;
  static constexpr std::size_t kDegree = 4;
  static V set1(std::uint32_t x) { return _mm_set1_epi32(static_cast<int>(x)); }
  static V load_u32(const std::uint32_t* p) { return _mm_load_si128(reinterpret_cast<const V*>(p)); }
  static void store_u32(std::uint32_t* p, V v) { _mm_store_si128(reinterpret_cast<V*>(p), v); }
  static V add(V a, V b) { return _mm_add_epi32(a, b); }
  static V xor_(V a, V b) { return _mm_xor_si128(a, b); }
  // Rotations by whole bytes are one byte shuffle; the others two shifts.
  static V rot16(V x) {
    return _mm_shuffle_epi8(x, _mm_set_epi8(13, 12, 15, 14, 9, 8, 11, 10, 5, 4, 7, 6, 1, 0, 3, 2));
  }
  static V rot8(V x) { return _mm_shuffle_epi8(x, _mm_set_epi8(12, 15, 14, 13, 8, 11, 10, 9, 4, 7, 6, 5, 0, 3, 2, 1)); }
  static V rot12(V x) { return _mm_or_si128(_mm_srli_epi32(x, 12), _mm_slli_epi32(x, 20)); }
  static V rot7(V x) { return _mm_or_si128(_mm_srli_epi32(x, 7), _mm_slli_epi32(x, 25)); }

  // 4x4 transpose of 32-bit words: rows are inputs, columns message words.
  static void transpose4(V r[4]) {
    const V a0 = _mm_unpacklo_epi32(r[0], r[1]), b0 = _mm_unpackhi_epi32(r[0], r[1]);
    const V a1 = _mm_unpacklo_epi32(r[2], r[3]), b1 = _mm_unpackhi_epi32(r[2], r[3]);
    r[0] = _mm_unpacklo_epi64(a0, a1);
    r[1] = _mm_unpackhi_epi64(a0, a1);
    r[2] = _mm_unpacklo_epi64(b0, b1);
    r[3] = _mm_unpackhi_epi64(b0, b1);
  }
  static void load_message(const std::uint8_t* const inputs[4], std::size_t offset, V m[16]) {
    for (int q = 0; q < 4; ++q) {  // words 4q .. 4q+3 of each input
      for (int l = 0; l < 4; ++l)
        m[4 * q + l] = _mm_loadu_si128(reinterpret_cast<const V*>(inputs[l] + offset + 16 * q));
      transpose4(m + 4 * q);
    }
  }
};

#include "orchlog/detail/blake3/simd_kernel.inc"

}  // namespace sse41
}  // namespace blake3
}  // namespace detail
}  // namespace orchlog
ORCHLOG_TARGET_END
#endif
