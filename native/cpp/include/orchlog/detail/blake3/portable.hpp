// BLAKE3, written from the specification (https://github.com/BLAKE3-team/BLAKE3-specs):
// constants, the compression function and a portable hash_many. The SIMD
// kernels (blake3_sse41/avx2/avx512.hpp) compute the same hash_many over 4, 8
// or 16 inputs at once; blake3_tree.hpp assembles chunks into the hash tree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace orchlog {
namespace detail {
namespace blake3 {

inline constexpr std::size_t kBlockLen = 64;
inline constexpr std::size_t kChunkLen = 1024;
inline constexpr std::size_t kOutLen = 32;

inline constexpr std::uint32_t kIV[8] = {0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A,
                                         0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19};

enum Flags : std::uint8_t {
  kChunkStart = 1 << 0,
  kChunkEnd = 1 << 1,
  kParent = 1 << 2,
  kRoot = 1 << 3,
};

// The row-wise kernels' work on the last four chunks or fewer of a hash, between the steps that do it a
// block at a time (rows_kernel.inc): the chunks' chaining values so far (cv0: words 0-3 of each chunk,
// cv1: words 4-7, a 128-bit lane per chunk), row 3 of the state (counter, block length, flags) and the
// last chunk's last block, zero-padded.
struct RowsState {
  alignas(64) std::uint32_t cv0[16];
  alignas(64) std::uint32_t cv1[16];
  alignas(64) std::uint32_t r3[16];
  alignas(64) std::uint32_t row3[16];
  alignas(64) std::uint8_t last_block[kBlockLen];
  const std::uint8_t* p;
  std::uint8_t* out;
  std::size_t lanes, last_blocks, last_block_len, steps, block;
};

// The message word each G call reads in round r: the spec permutes the
// message between rounds; this is that permutation applied r times.
struct Schedule {
  std::uint8_t word[7][16];
};
constexpr Schedule make_schedule() {
  constexpr std::uint8_t kPermutation[16] = {2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8};
  Schedule s{};
  for (int i = 0; i < 16; ++i) s.word[0][i] = static_cast<std::uint8_t>(i);
  for (int r = 1; r < 7; ++r)
    for (int i = 0; i < 16; ++i) s.word[r][i] = s.word[r - 1][kPermutation[i]];
  return s;
}
inline constexpr Schedule kSchedule = make_schedule();

inline std::uint32_t load_le32(const std::uint8_t* p) noexcept {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}

inline void store_le32(std::uint8_t* p, std::uint32_t w) noexcept {
  p[0] = static_cast<std::uint8_t>(w);
  p[1] = static_cast<std::uint8_t>(w >> 8);
  p[2] = static_cast<std::uint8_t>(w >> 16);
  p[3] = static_cast<std::uint8_t>(w >> 24);
}

constexpr std::uint32_t rotr(std::uint32_t x, int n) noexcept { return (x >> n) | (x << (32 - n)); }

inline void g(std::uint32_t* v, int a, int b, int c, int d, std::uint32_t mx, std::uint32_t my) noexcept {
  v[a] = v[a] + v[b] + mx;
  v[d] = rotr(v[d] ^ v[a], 16);
  v[c] = v[c] + v[d];
  v[b] = rotr(v[b] ^ v[c], 12);
  v[a] = v[a] + v[b] + my;
  v[d] = rotr(v[d] ^ v[a], 8);
  v[c] = v[c] + v[d];
  v[b] = rotr(v[b] ^ v[c], 7);
}

// One round; a template so that every message index is a compile-time
// constant and the state stays in registers.
template <int R>
inline void round(std::uint32_t v[16], const std::uint32_t m[16]) noexcept {
  constexpr const std::uint8_t* s = kSchedule.word[R];
  g(v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
  g(v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
  g(v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
  g(v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
  g(v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
  g(v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
  g(v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
  g(v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
}

// The 16-word state after the seven rounds (before the output xors).
inline void compress_state(std::uint32_t v[16], const std::uint32_t cv[8], const std::uint8_t block[kBlockLen],
                           std::uint8_t block_len, std::uint64_t counter, std::uint8_t flags) noexcept {
  std::uint32_t m[16];
  for (int i = 0; i < 16; ++i) m[i] = load_le32(block + 4 * i);
  for (int i = 0; i < 8; ++i) v[i] = cv[i];
  for (int i = 0; i < 4; ++i) v[8 + i] = kIV[i];
  v[12] = static_cast<std::uint32_t>(counter);
  v[13] = static_cast<std::uint32_t>(counter >> 32);
  v[14] = block_len;
  v[15] = flags;
  round<0>(v, m);
  round<1>(v, m);
  round<2>(v, m);
  round<3>(v, m);
  round<4>(v, m);
  round<5>(v, m);
  round<6>(v, m);
}

// Chaining-value form: cv <- first half of the compression output.
inline void compress_in_place(std::uint32_t cv[8], const std::uint8_t block[kBlockLen], std::uint8_t block_len,
                              std::uint64_t counter, std::uint8_t flags) noexcept {
  std::uint32_t v[16];
  compress_state(v, cv, block, block_len, counter, flags);
  for (int i = 0; i < 8; ++i) cv[i] = v[i] ^ v[i + 8];
}

// Extended-output form: all 64 bytes (the root node's output blocks).
inline void compress_xof(const std::uint32_t cv[8], const std::uint8_t block[kBlockLen], std::uint8_t block_len,
                         std::uint64_t counter, std::uint8_t flags, std::uint8_t out[64]) noexcept {
  std::uint32_t v[16];
  compress_state(v, cv, block, block_len, counter, flags);
  for (int i = 0; i < 8; ++i) {
    store_le32(out + 4 * i, v[i] ^ v[i + 8]);
    store_le32(out + 32 + 4 * i, v[i + 8] ^ cv[i]);
  }
}

// Hashes `n` inputs of `blocks` whole blocks each, input i at base + i*stride,
// writing 32-byte chaining values to out + 32*i. Chunks use blocks = 16 and a
// counter that increments per input; parents use blocks = 1, the PARENT flag
// and counter 0. The SIMD kernels have exactly this contract.
inline void hash_many_portable(const std::uint8_t* base, std::size_t stride, std::size_t n, std::size_t blocks,
                               std::uint64_t counter, bool increment_counter, std::uint8_t flags,
                               std::uint8_t flags_start, std::uint8_t flags_end, std::uint8_t* out) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t cv[8];
    std::memcpy(cv, kIV, sizeof cv);
    const std::uint8_t* input = base + i * stride;
    for (std::size_t b = 0; b < blocks; ++b) {
      std::uint8_t block_flags = flags;
      if (b == 0) block_flags |= flags_start;
      if (b + 1 == blocks) block_flags |= flags_end;
      compress_in_place(cv, input + b * kBlockLen, kBlockLen, counter + (increment_counter ? i : 0), block_flags);
    }
    for (int w = 0; w < 8; ++w) store_le32(out + 32 * i + 4 * w, cv[w]);
  }
}

}  // namespace blake3
}  // namespace detail
}  // namespace orchlog
