// BLAKE3 hash_many over 16 inputs with AVX-512F (512-bit vectors, native
// rotates), and over 8 and 4 inputs with the AVX2 and SSE4.1 kernels given
// AVX-512VL's one-instruction rotates; the last four chunks or fewer of a
// hash (a hidden state is a few chunks) run row-wise, four to a vector.
#pragma once

#include "orchlog/detail/blake3/avx2.hpp"
#include "orchlog/detail/blake3/portable.hpp"
#include "orchlog/detail/blake3/simd_target.hpp"
#include "orchlog/detail/blake3/sse41.hpp"

#if ORCHLOG_X86_SIMD
ORCHLOG_TARGET_BEGIN("avx512f,avx512vl")
// GCC 12 warns about its own _mm512_undefined_epi32() inside the intrinsics
// (GCC bug 105593); nothing here is uninitialised.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
namespace orchlog {
namespace detail {
namespace blake3 {
namespace avx512 {

struct Ops {
  using V = __m512i;
  static constexpr std::size_t kDegree = 16;
  static V set1(std::uint32_t x) { return _mm512_set1_epi32(static_cast<int>(x)); }
  static V load_u32(const std::uint32_t* p) { return _mm512_load_si512(p); }
  static void store_u32(std::uint32_t* p, V v) { _mm512_store_si512(p, v); }
  static V add(V a, V b) { return _mm512_add_epi32(a, b); }
  static V xor_(V a, V b) { return _mm512_xor_si512(a, b); }
  static V rot16(V x) { return _mm512_ror_epi32(x, 16); }
  static V rot12(V x) { return _mm512_ror_epi32(x, 12); }
  static V rot8(V x) { return _mm512_ror_epi32(x, 8); }
  static V rot7(V x) { return _mm512_ror_epi32(x, 7); }

  // 16x16 transpose of 32-bit words. After two rounds of unpacks, c[4g+k]
  // holds, in its 128-bit lane L, word 4L+k of rows 4g..4g+3; two rounds of
  // 128-bit lane shuffles then gather lane L of c[k], c[4+k], c[8+k], c[12+k].
  static void transpose16(V r[16]) {
    V c[16];
    for (int g4 = 0; g4 < 4; ++g4) {
      const V* row = r + 4 * g4;
      const V a0 = _mm512_unpacklo_epi32(row[0], row[1]), b0 = _mm512_unpackhi_epi32(row[0], row[1]);
      const V a1 = _mm512_unpacklo_epi32(row[2], row[3]), b1 = _mm512_unpackhi_epi32(row[2], row[3]);
      c[4 * g4 + 0] = _mm512_unpacklo_epi64(a0, a1);
      c[4 * g4 + 1] = _mm512_unpackhi_epi64(a0, a1);
      c[4 * g4 + 2] = _mm512_unpacklo_epi64(b0, b1);
      c[4 * g4 + 3] = _mm512_unpackhi_epi64(b0, b1);
    }
    for (int k = 0; k < 4; ++k) {
      const V d0 = _mm512_shuffle_i32x4(c[k], c[4 + k], 0x44);
      const V d1 = _mm512_shuffle_i32x4(c[k], c[4 + k], 0xEE);
      const V d2 = _mm512_shuffle_i32x4(c[8 + k], c[12 + k], 0x44);
      const V d3 = _mm512_shuffle_i32x4(c[8 + k], c[12 + k], 0xEE);
      r[k] = _mm512_shuffle_i32x4(d0, d2, 0x88);
      r[4 + k] = _mm512_shuffle_i32x4(d0, d2, 0xDD);
      r[8 + k] = _mm512_shuffle_i32x4(d1, d3, 0x88);
      r[12 + k] = _mm512_shuffle_i32x4(d1, d3, 0xDD);
    }
  }
  static void load_message(const std::uint8_t* const inputs[16], std::size_t offset, V m[16]) {
    for (int l = 0; l < 16; ++l) {
      // Sixteen inputs a chunk apart are more streams than hardware prefetchers
      // follow; asking for each input's block four ahead keeps the loads in cache.
      _mm_prefetch(reinterpret_cast<const char*>(inputs[l] + offset + 4 * kBlockLen), _MM_HINT_T0);
      m[l] = _mm512_loadu_si512(inputs[l] + offset);
    }
    transpose16(m);
  }
};

#include "orchlog/detail/blake3/simd_kernel.inc"

}  // namespace avx512

namespace avx512_ymm {
struct Ops : avx2::Ops {
  static V rot16(V x) { return _mm256_ror_epi32(x, 16); }
  static V rot12(V x) { return _mm256_ror_epi32(x, 12); }
  static V rot8(V x) { return _mm256_ror_epi32(x, 8); }
  static V rot7(V x) { return _mm256_ror_epi32(x, 7); }
};
#include "orchlog/detail/blake3/simd_kernel.inc"
}  // namespace avx512_ymm

namespace avx512_xmm {
struct Ops : sse41::Ops {
  static V rot16(V x) { return _mm_ror_epi32(x, 16); }
  static V rot12(V x) { return _mm_ror_epi32(x, 12); }
  static V rot8(V x) { return _mm_ror_epi32(x, 8); }
  static V rot7(V x) { return _mm_ror_epi32(x, 7); }
};
#include "orchlog/detail/blake3/simd_kernel.inc"
}  // namespace avx512_xmm

// The last few chunks of a hash (a hidden-state row is three and a half) with each chunk's state as
// four rows in one 128-bit lane of a 512-bit vector: one instruction advances the same row of four
// chunks, and the rounds are SSE4.1's row-wise compression (the BLAKE3 reference's
// blake3_sse41.c) lane by lane. The transposed kernels instead hold one word of each chunk per
// lane and need a vector per state word: at four chunks or fewer that is 0.76x the time of the
// xmm kernel (1.49 against 1.94 us for four chunks on an AVX-512 AMD EPYC).
namespace avx512_rows {
using V = __m512i;
inline constexpr std::size_t kDegree = 4;

#define ORCHLOG_B3_SHUFFLE_PS2(a, b, imm) \
  _mm512_castps_si512(_mm512_shuffle_ps(_mm512_castsi512_ps(a), _mm512_castsi512_ps(b), (imm)))
#define ORCHLOG_B3_SHUFFLE(x, imm) _mm512_shuffle_epi32((x), static_cast<_MM_PERM_ENUM>(imm))

ORCHLOG_ALWAYS_INLINE void g1(V& r0, V& r1, V& r2, V& r3, V m) {
  r0 = _mm512_add_epi32(_mm512_add_epi32(r0, m), r1);
  r3 = _mm512_ror_epi32(_mm512_xor_si512(r3, r0), 16);
  r2 = _mm512_add_epi32(r2, r3);
  r1 = _mm512_ror_epi32(_mm512_xor_si512(r1, r2), 12);
}

ORCHLOG_ALWAYS_INLINE void g2(V& r0, V& r1, V& r2, V& r3, V m) {
  r0 = _mm512_add_epi32(_mm512_add_epi32(r0, m), r1);
  r3 = _mm512_ror_epi32(_mm512_xor_si512(r3, r0), 8);
  r2 = _mm512_add_epi32(r2, r3);
  r1 = _mm512_ror_epi32(_mm512_xor_si512(r1, r2), 7);
}

// Diagonals into columns and back, as the reference does it (rows 0, 2 and 3 move; row 1 stays).
ORCHLOG_ALWAYS_INLINE void diagonalize(V& r0, V& r2, V& r3) {
  r0 = ORCHLOG_B3_SHUFFLE(r0, _MM_SHUFFLE(2, 1, 0, 3));
  r3 = ORCHLOG_B3_SHUFFLE(r3, _MM_SHUFFLE(1, 0, 3, 2));
  r2 = ORCHLOG_B3_SHUFFLE(r2, _MM_SHUFFLE(0, 3, 2, 1));
}

ORCHLOG_ALWAYS_INLINE void undiagonalize(V& r0, V& r2, V& r3) {
  r0 = ORCHLOG_B3_SHUFFLE(r0, _MM_SHUFFLE(0, 3, 2, 1));
  r3 = ORCHLOG_B3_SHUFFLE(r3, _MM_SHUFFLE(1, 0, 3, 2));
  r2 = ORCHLOG_B3_SHUFFLE(r2, _MM_SHUFFLE(2, 1, 0, 3));
}

// One block of each lane's chunk: cv0/cv1 hold words 0-3 and 4-7 of each lane's chaining value, m0-m3
// words 0-3, 4-7, 8-11 and 12-15 of each lane's block, r3 each lane's counter, length and flags. The
// message schedule is applied to the vectors as the reference's shuffles do (the same every round
// after the first).
ORCHLOG_ALWAYS_INLINE void compress(V& cv0, V& cv1, V m0, V m1, V m2, V m3, V r3) {
  V r0 = cv0, r1 = cv1;
  V r2 = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIV)));
  V t0 = ORCHLOG_B3_SHUFFLE_PS2(m0, m1, _MM_SHUFFLE(2, 0, 2, 0));
  g1(r0, r1, r2, r3, t0);
  V t1 = ORCHLOG_B3_SHUFFLE_PS2(m0, m1, _MM_SHUFFLE(3, 1, 3, 1));
  g2(r0, r1, r2, r3, t1);
  diagonalize(r0, r2, r3);
  V t2 = ORCHLOG_B3_SHUFFLE(ORCHLOG_B3_SHUFFLE_PS2(m2, m3, _MM_SHUFFLE(2, 0, 2, 0)), _MM_SHUFFLE(2, 1, 0, 3));
  g1(r0, r1, r2, r3, t2);
  V t3 = ORCHLOG_B3_SHUFFLE(ORCHLOG_B3_SHUFFLE_PS2(m2, m3, _MM_SHUFFLE(3, 1, 3, 1)), _MM_SHUFFLE(2, 1, 0, 3));
  g2(r0, r1, r2, r3, t3);
  undiagonalize(r0, r2, r3);
  for (int round = 1; round < 7; ++round) {
    m0 = t0, m1 = t1, m2 = t2, m3 = t3;
    t0 = ORCHLOG_B3_SHUFFLE(ORCHLOG_B3_SHUFFLE_PS2(m0, m1, _MM_SHUFFLE(3, 1, 1, 2)), _MM_SHUFFLE(0, 3, 2, 1));
    g1(r0, r1, r2, r3, t0);
    t1 = _mm512_mask_blend_epi32(0xAAAA, ORCHLOG_B3_SHUFFLE(m0, _MM_SHUFFLE(0, 0, 3, 3)),
                                 ORCHLOG_B3_SHUFFLE_PS2(m2, m3, _MM_SHUFFLE(3, 3, 2, 2)));
    g2(r0, r1, r2, r3, t1);
    diagonalize(r0, r2, r3);
    t2 = ORCHLOG_B3_SHUFFLE(_mm512_mask_blend_epi32(0x8888, _mm512_unpacklo_epi64(m3, m1), m2), _MM_SHUFFLE(1, 3, 2, 0));
    g1(r0, r1, r2, r3, t2);
    t3 = ORCHLOG_B3_SHUFFLE(_mm512_unpacklo_epi32(m2, _mm512_unpackhi_epi32(m1, m3)), _MM_SHUFFLE(0, 1, 3, 2));
    g2(r0, r1, r2, r3, t3);
    undiagonalize(r0, r2, r3);
  }
  cv0 = _mm512_xor_si512(r0, r2);
  cv1 = _mm512_xor_si512(r1, r3);
}
#undef ORCHLOG_B3_SHUFFLE
#undef ORCHLOG_B3_SHUFFLE_PS2

// Sixteen bytes at `offset` of each lane's block, one lane each.
ORCHLOG_ALWAYS_INLINE V load_lanes(const std::uint8_t* const blocks[kDegree], std::size_t offset) {
  const auto at = [&](std::size_t l) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(blocks[l] + offset)); };
  return _mm512_inserti32x4(_mm512_inserti32x4(_mm512_inserti32x4(_mm512_castsi128_si512(at(0)), at(1), 1), at(2), 2),
                            at(3), 3);
}

// Same contract as the transposed kernels' hash_chunks (simd_kernel.inc), for 1 <= lanes <= 4: chaining
// values of `lanes` consecutive chunks at `p`, numbered from `counter`, the last `last_len` bytes long
// (1 to kChunkLen) and the others whole. A lane whose blocks are done compresses zeros, and its result
// is taken at its last block.
inline void hash_chunks(const std::uint8_t* p, std::size_t lanes, std::size_t last_len, std::uint64_t counter,
                        std::uint8_t* out) {
  alignas(64) static constexpr std::uint8_t kZeros[kBlockLen] = {};
  alignas(64) std::uint8_t last_block[kBlockLen] = {};  // the last lane's last block, zero-padded
  const std::size_t last_blocks = (last_len + kBlockLen - 1) / kBlockLen;
  const std::size_t last_block_len = last_len - (last_blocks - 1) * kBlockLen;
  std::memcpy(last_block, p + (lanes - 1) * kChunkLen + (last_blocks - 1) * kBlockLen, last_block_len);
  const std::size_t steps = lanes > 1 ? kChunkLen / kBlockLen : last_blocks;
  V cv0 = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIV)));
  V cv1 = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIV + 4)));
  alignas(64) std::uint32_t row3[4 * kDegree], words0[4 * kDegree], words1[4 * kDegree];
  for (std::size_t l = 0; l < kDegree; ++l) {
    const std::uint64_t c = counter + (l < lanes ? l : 0);
    row3[4 * l] = static_cast<std::uint32_t>(c);
    row3[4 * l + 1] = static_cast<std::uint32_t>(c >> 32);
  }
  for (std::size_t b = 0; b < steps; ++b) {
    const std::uint8_t* blocks[kDegree];
    std::size_t done_lane = kDegree;  // a lane whose last block this is, before the others' (the last lane)
    for (std::size_t l = 0; l < kDegree; ++l) {
      const std::size_t n = l + 1 < lanes ? kChunkLen / kBlockLen : l + 1 == lanes ? last_blocks : 0;
      const bool last = b + 1 == n;
      blocks[l] = b >= n ? kZeros : last && l + 1 == lanes ? last_block : p + l * kChunkLen + b * kBlockLen;
      row3[4 * l + 2] = static_cast<std::uint32_t>(last && l + 1 == lanes ? last_block_len : kBlockLen);
      row3[4 * l + 3] = (b == 0 ? std::uint32_t{kChunkStart} : 0u) | (last ? std::uint32_t{kChunkEnd} : 0u);
      if (last && b + 1 < steps) done_lane = l;
    }
    compress(cv0, cv1, load_lanes(blocks, 0), load_lanes(blocks, 16), load_lanes(blocks, 32), load_lanes(blocks, 48),
             _mm512_load_si512(row3));
    if (done_lane < kDegree) {
      _mm512_store_si512(words0, cv0);
      _mm512_store_si512(words1, cv1);
      for (int i = 0; i < 4; ++i) store_le32(out + 32 * done_lane + 4 * i, words0[4 * done_lane + i]);
      for (int i = 0; i < 4; ++i) store_le32(out + 32 * done_lane + 16 + 4 * i, words1[4 * done_lane + i]);
    }
  }
  _mm512_store_si512(words0, cv0);
  _mm512_store_si512(words1, cv1);
  const std::size_t whole = last_blocks < steps ? lanes - 1 : lanes;  // lanes still to write
  for (std::size_t l = 0; l < whole; ++l) {
    for (int i = 0; i < 4; ++i) store_le32(out + 32 * l + 4 * i, words0[4 * l + i]);
    for (int i = 0; i < 4; ++i) store_le32(out + 32 * l + 16 + 4 * i, words1[4 * l + i]);
  }
}
}  // namespace avx512_rows
}  // namespace blake3
}  // namespace detail
}  // namespace orchlog
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
ORCHLOG_TARGET_END
#endif
