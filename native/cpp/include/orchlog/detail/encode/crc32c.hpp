// CRC-32C (Castagnoli: reflected polynomial 0x82F63B78, init and final xor
// 0xFFFFFFFF; "123456789" gives 0xE3069283), the binary stream's frame
// checksum (FORMAT.md, "Frame checksum").
//
//   std::uint32_t c = orchlog::detail::crc32c_update(0, data, n);   // then
//   c = orchlog::detail::crc32c_update(c, more, m);                 // == the CRC of data + more
//
// x86 CPUs with SSE4.2 run the crc32 instruction (8 bytes a step), picked at
// run time, on three streams at once for long buffers; other machines
// slicing-by-8 over a table built once. Both give the same value: it is one
// function of the bytes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "orchlog/detail/blake3/simd_target.hpp"
#include "orchlog/detail/isa.hpp"

namespace orchlog {
namespace detail {
namespace crc32c_impl {

inline const std::array<std::array<std::uint32_t, 256>, 8>& tables() {
  static const auto built = [] {
    std::array<std::array<std::uint32_t, 256>, 8> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
      t[0][i] = c;
    }
    for (std::uint32_t i = 0; i < 256; ++i)
      for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
    return t;
  }();
  return built;
}

// The register form (pre- and post-inverted by the caller).
inline std::uint32_t portable(std::uint32_t crc, const unsigned char* p, std::size_t n) noexcept {
  const auto& t = tables();
  while (n >= 8) {
    std::uint32_t lo = static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
                       static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
    const std::uint32_t hi = static_cast<std::uint32_t>(p[4]) | static_cast<std::uint32_t>(p[5]) << 8 |
                             static_cast<std::uint32_t>(p[6]) << 16 | static_cast<std::uint32_t>(p[7]) << 24;
    lo ^= crc;
    crc = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^ t[3][hi & 0xFF] ^
          t[2][(hi >> 8) & 0xFF] ^ t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
    p += 8, n -= 8;
  }
  while (n--) crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xFF];
  return crc;
}

// Appending n zero bytes is linear in the register (crc(s, Y) = shift(s, |Y|) ^ crc(0, Y)), so it is
// a 32x32 bit matrix, applied here as four byte-indexed tables. Two shifts, by one and two stream
// blocks, join three CRCs computed side by side into the CRC of their concatenation.
constexpr std::size_t kStreamBlock = 256;  // bytes per stream: long enough that joining costs little

using ShiftTable = std::array<std::array<std::uint32_t, 256>, 4>;

inline ShiftTable shift_table(std::size_t zeros) {
  static const unsigned char nothing[2 * kStreamBlock] = {};
  std::array<std::uint32_t, 32> basis{};
  for (int bit = 0; bit < 32; ++bit) basis[bit] = portable(std::uint32_t(1) << bit, nothing, zeros);
  ShiftTable t{};
  for (int byte = 0; byte < 4; ++byte)
    for (std::uint32_t v = 0; v < 256; ++v)
      for (int bit = 0; bit < 8; ++bit)
        if (v >> bit & 1u) t[byte][v] ^= basis[8 * byte + bit];
  return t;
}

inline std::uint32_t shifted(const ShiftTable& t, std::uint32_t crc) noexcept {
  return t[0][crc & 0xFF] ^ t[1][(crc >> 8) & 0xFF] ^ t[2][(crc >> 16) & 0xFF] ^ t[3][crc >> 24];
}

inline const std::array<ShiftTable, 2>& stream_shifts() {
  static const std::array<ShiftTable, 2> built{shift_table(2 * kStreamBlock), shift_table(kStreamBlock)};
  return built;
}

}  // namespace crc32c_impl
}  // namespace detail
}  // namespace orchlog

#if ORCHLOG_X86_SIMD && (defined(__x86_64__) || defined(_M_X64))
#define ORCHLOG_CRC32C_SSE42 1
ORCHLOG_TARGET_BEGIN("sse4.2")
namespace orchlog {
namespace detail {
namespace crc32c_impl {
inline std::uint64_t word_at(const unsigned char* p) noexcept {
  std::uint64_t word;
  std::memcpy(&word, p, 8);  // x86 is little-endian, as the instruction expects
  return word;
}

inline std::uint32_t sse42(std::uint32_t crc, const unsigned char* p, std::size_t n) noexcept {
  // The instruction takes 3 cycles and issues every cycle: three independent streams keep it busy.
  if (n >= 3 * kStreamBlock) {
    const auto& shifts = stream_shifts();
    for (; n >= 3 * kStreamBlock; p += 3 * kStreamBlock, n -= 3 * kStreamBlock) {
      std::uint64_t c0 = crc, c1 = 0, c2 = 0;
      for (std::size_t i = 0; i < kStreamBlock; i += 8) {
        c0 = _mm_crc32_u64(c0, word_at(p + i));
        c1 = _mm_crc32_u64(c1, word_at(p + kStreamBlock + i));
        c2 = _mm_crc32_u64(c2, word_at(p + 2 * kStreamBlock + i));
      }
      crc = shifted(shifts[0], std::uint32_t(c0)) ^ shifted(shifts[1], std::uint32_t(c1)) ^ std::uint32_t(c2);
    }
  }
  std::uint64_t c = crc;
  for (; n >= 8; p += 8, n -= 8) {
    c = _mm_crc32_u64(c, word_at(p));
  }
  auto c32 = static_cast<std::uint32_t>(c);
  for (; n; ++p, --n) c32 = _mm_crc32_u8(c32, *p);
  return c32;
}
}  // namespace crc32c_impl
}  // namespace detail
}  // namespace orchlog
ORCHLOG_TARGET_END
#else
#define ORCHLOG_CRC32C_SSE42 0
#endif

namespace orchlog {
namespace detail {

inline bool crc32c_hardware() noexcept {
#if ORCHLOG_CRC32C_SSE42
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2") != 0 && isa_allowed(IsaCap::sse4);
  }();
  return has;
#else
  return false;
#endif
}

// CRC-32C of n bytes at p, continuing from `crc` (0 to start).
inline std::uint32_t crc32c_update(std::uint32_t crc, const void* data, std::size_t n, bool hardware) noexcept {
  const auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
#if ORCHLOG_CRC32C_SSE42
  if (hardware) return ~crc32c_impl::sse42(crc, p, n);
#endif
  static_cast<void>(hardware);
  return ~crc32c_impl::portable(crc, p, n);
}

inline std::uint32_t crc32c_update(std::uint32_t crc, const void* data, std::size_t n) noexcept {
  return crc32c_update(crc, data, n, crc32c_hardware());
}

}  // namespace detail
}  // namespace orchlog
