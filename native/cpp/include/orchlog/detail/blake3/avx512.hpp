// BLAKE3 hash_many over 16 inputs with AVX-512F (512-bit vectors, native
// rotates), and over 8 and 4 inputs with the AVX2 and SSE4.1 kernels given
// AVX-512VL's one-instruction rotates; the last four chunks or fewer of a
// hash (a hidden state is a few chunks) run row-wise, four to a vector
// (rows_kernel.inc).
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

// The last four chunks or fewer of a hash, row-wise (rows_kernel.inc): each chunk's state as four rows
// in one 128-bit lane of a 512-bit vector.
namespace avx512_rows {
struct RowOps {
  using V = __m512i;
  static V add(V a, V b) { return _mm512_add_epi32(a, b); }
  static V xor_(V a, V b) { return _mm512_xor_si512(a, b); }
  template <int kBits>
  static V ror(V x) {
    return _mm512_ror_epi32(x, kBits);
  }
  template <int kImm>
  static V shuffle(V x) {
    return _mm512_shuffle_epi32(x, static_cast<_MM_PERM_ENUM>(kImm));
  }
  template <int kImm>
  static V shuffle2(V a, V b) {
    return _mm512_castps_si512(_mm512_shuffle_ps(_mm512_castsi512_ps(a), _mm512_castsi512_ps(b), kImm));
  }
  // Words w of each 128-bit lane from b where bit w of kMask4 is set, else from a.
  template <int kMask4>
  static V blend(V a, V b) {
    return _mm512_mask_blend_epi32(static_cast<__mmask16>(kMask4 * 0x1111), a, b);
  }
  static V unpacklo64(V a, V b) { return _mm512_unpacklo_epi64(a, b); }
  static V unpacklo32(V a, V b) { return _mm512_unpacklo_epi32(a, b); }
  static V unpackhi32(V a, V b) { return _mm512_unpackhi_epi32(a, b); }
  static V lanes4(const std::uint32_t* p) {
    return _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static V load(const std::uint32_t* p) { return _mm512_load_si512(p); }
  static void store(std::uint32_t* p, V v) { _mm512_store_si512(p, v); }
  // Sixteen bytes at `offset` of each of four blocks, one 128-bit lane each.
  static V load_lanes(const std::uint8_t* const blocks[4], std::size_t offset) {
    const auto at = [&](int l) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(blocks[l] + offset)); };
    return _mm512_inserti32x4(_mm512_inserti32x4(_mm512_inserti32x4(_mm512_castsi128_si512(at(0)), at(1), 1), at(2), 2),
                              at(3), 3);
  }
};
#include "orchlog/detail/blake3/rows_kernel.inc"
}  // namespace avx512_rows
}  // namespace blake3
}  // namespace detail
}  // namespace orchlog
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
ORCHLOG_TARGET_END
#endif
