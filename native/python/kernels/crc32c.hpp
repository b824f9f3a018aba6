// orchlog._kernels: CRC-32C (Castagnoli), the checksum recommended for binary frames.
// Included once, by module.cpp: the kernels build as one translation unit.
//
// Slicing-by-8 over a table built once: about a byte per cycle and a half,
// portable. Frames are checked by `orchlog validate --verify-hashes`, which
// reads every byte anyway; emitters would want the SSE4.2 / ARMv8 instruction.
#pragma once

#include <pybind11/pybind11.h>

#include <array>
#include <cstdint>
#include <cstring>

namespace orchlog_kernels {

namespace py = pybind11;

inline const std::array<std::array<uint32_t, 256>, 8>& crc32c_tables() {
  static const auto tables = [] {
    std::array<std::array<uint32_t, 256>, 8> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
      for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
    return t;
  }();
  return tables;
}

// CRC-32C of data, continuing from `crc` (0 to start): crc32c(b, crc32c(a)) == crc32c(a + b).
inline uint32_t crc32c_update(uint32_t crc, const unsigned char* p, size_t n) {
  const auto& t = crc32c_tables();
  crc = ~crc;
  while (n >= 8) {
    uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + 4, 4);
    lo ^= crc;  // little-endian hosts, as every platform orchlog builds on
    crc = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^ t[3][hi & 0xFF] ^
          t[2][(hi >> 8) & 0xFF] ^ t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
    p += 8, n -= 8;
  }
  while (n--) crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xFF];
  return ~crc;
}

inline uint32_t crc32c(py::buffer buf, uint32_t crc) {
  py::buffer_info info = buf.request();
  const auto* p = static_cast<const unsigned char*>(info.ptr);
  const size_t n = size_t(info.size * info.itemsize);
  py::gil_scoped_release nogil;
  return crc32c_update(crc, p, n);
}

}  // namespace orchlog_kernels
