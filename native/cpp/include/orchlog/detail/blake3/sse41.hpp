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

// One compression with its state as four rows of four words, a G per lane: the compressions a
// hash's tree makes one at a time (the last, partial chunk, the parents above a partial batch and
// the root) at about a third of the portable loop's time. Same contracts as portable.hpp's
// compress_in_place and compress_xof.
template <int R>
ORCHLOG_ALWAYS_INLINE void row_round(V& r0, V& r1, V& r2, V& r3, const std::uint32_t m[16]) {
  constexpr const std::uint8_t* s = kSchedule.word[R];
  const auto word = [&](int i) { return static_cast<int>(m[s[i]]); };
  g(r0, r1, r2, r3, _mm_setr_epi32(word(0), word(2), word(4), word(6)),
    _mm_setr_epi32(word(1), word(3), word(5), word(7)));
  // Diagonals into columns: G(0,5,10,15), G(1,6,11,12), G(2,7,8,13), G(3,4,9,14).
  r1 = _mm_shuffle_epi32(r1, _MM_SHUFFLE(0, 3, 2, 1));
  r2 = _mm_shuffle_epi32(r2, _MM_SHUFFLE(1, 0, 3, 2));
  r3 = _mm_shuffle_epi32(r3, _MM_SHUFFLE(2, 1, 0, 3));
  g(r0, r1, r2, r3, _mm_setr_epi32(word(8), word(10), word(12), word(14)),
    _mm_setr_epi32(word(9), word(11), word(13), word(15)));
  r1 = _mm_shuffle_epi32(r1, _MM_SHUFFLE(2, 1, 0, 3));
  r2 = _mm_shuffle_epi32(r2, _MM_SHUFFLE(1, 0, 3, 2));
  r3 = _mm_shuffle_epi32(r3, _MM_SHUFFLE(0, 3, 2, 1));
}

inline void compress_rows(const std::uint32_t cv[8], const std::uint8_t block[kBlockLen], std::uint8_t block_len,
                          std::uint64_t counter, std::uint8_t flags, V rows[4]) {
  std::uint32_t m[16];
  for (int i = 0; i < 16; ++i) m[i] = load_le32(block + 4 * i);
  V r0 = _mm_loadu_si128(reinterpret_cast<const V*>(cv)), r1 = _mm_loadu_si128(reinterpret_cast<const V*>(cv + 4));
  V r2 = _mm_loadu_si128(reinterpret_cast<const V*>(kIV));
  V r3 = _mm_setr_epi32(static_cast<int>(static_cast<std::uint32_t>(counter)),
                        static_cast<int>(static_cast<std::uint32_t>(counter >> 32)), block_len, flags);
  row_round<0>(r0, r1, r2, r3, m);
  row_round<1>(r0, r1, r2, r3, m);
  row_round<2>(r0, r1, r2, r3, m);
  row_round<3>(r0, r1, r2, r3, m);
  row_round<4>(r0, r1, r2, r3, m);
  row_round<5>(r0, r1, r2, r3, m);
  row_round<6>(r0, r1, r2, r3, m);
  rows[0] = r0, rows[1] = r1, rows[2] = r2, rows[3] = r3;
}

inline void compress_in_place(std::uint32_t cv[8], const std::uint8_t block[kBlockLen], std::uint8_t block_len,
                              std::uint64_t counter, std::uint8_t flags) {
  V r[4];
  compress_rows(cv, block, block_len, counter, flags, r);
  _mm_storeu_si128(reinterpret_cast<V*>(cv), _mm_xor_si128(r[0], r[2]));
  _mm_storeu_si128(reinterpret_cast<V*>(cv + 4), _mm_xor_si128(r[1], r[3]));
}

inline void compress_xof(const std::uint32_t cv[8], const std::uint8_t block[kBlockLen], std::uint8_t block_len,
                         std::uint64_t counter, std::uint8_t flags, std::uint8_t out[64]) {
  V r[4];
  compress_rows(cv, block, block_len, counter, flags, r);
  alignas(16) std::uint32_t words[16];
  _mm_store_si128(reinterpret_cast<V*>(words), _mm_xor_si128(r[0], r[2]));
  _mm_store_si128(reinterpret_cast<V*>(words + 4), _mm_xor_si128(r[1], r[3]));
  _mm_store_si128(reinterpret_cast<V*>(words + 8),
                  _mm_xor_si128(r[2], _mm_loadu_si128(reinterpret_cast<const V*>(cv))));
  _mm_store_si128(reinterpret_cast<V*>(words + 12),
                  _mm_xor_si128(r[3], _mm_loadu_si128(reinterpret_cast<const V*>(cv + 4))));
  for (int i = 0; i < 16; ++i) store_le32(out + 4 * i, words[i]);
}

}  // namespace sse41
}  // namespace blake3
}  // namespace detail
}  // namespace orchlog
ORCHLOG_TARGET_END
#endif
