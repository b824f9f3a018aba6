// CRC-32C (Castagnoli: reflected polynomial 0x82F63B78, init and final xor
// 0xFFFFFFFF; "123456789" gives 0xE3069283), the binary stream's frame
// checksum (FORMAT.md, "Frame checksum").
//
//   std::uint32_t c = orchlog::detail::crc32c_update(0, data, n);   // then
//   c = orchlog::detail::crc32c_update(c, more, m);                 // == the CRC of data + more
//
// x86 CPUs with SSE4.2 run the crc32 instruction (8 bytes a step), picked at
// run time; other machines slicing-by-8 over a table built once. Both give
// the same value: it is one function of the bytes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "orchlog/detail/blake3/simd_target.hpp"

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

}  // namespace crc32c_impl
}  // namespace detail
}  // namespace orchlog

#if ORCHLOG_X86_SIMD && (defined(__x86_64__) || defined(_M_X64))
#define ORCHLOG_CRC32C_SSE42 1
ORCHLOG_TARGET_BEGIN("sse4.2")
namespace orchlog {
namespace detail {
namespace crc32c_impl {
inline std::uint32_t sse42(std::uint32_t crc, const unsigned char* p, std::size_t n) noexcept {
  std::uint64_t c = crc;
  for (; n >= 8; p += 8, n -= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);  // x86 is little-endian, as the instruction expects
    c = _mm_crc32_u64(c, word);
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
    return __builtin_cpu_supports("sse4.2") != 0;
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
