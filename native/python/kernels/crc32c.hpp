// orchlog._kernels: CRC-32C (Castagnoli), the binary frames' checksum, by the
// emitters' own function (orchlog/detail/encode/crc32c.hpp: the SSE4.2
// instruction where the CPU has it, else slicing-by-8).
// Included once, by module.cpp: the kernels build as one translation unit.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>

#include "orchlog/detail/encode/crc32c.hpp"

namespace orchlog_kernels {

namespace py = pybind11;

inline uint32_t crc32c(py::buffer buf, uint32_t crc) {
  py::buffer_info info = buf.request();
  const auto* p = static_cast<const unsigned char*>(info.ptr);
  const size_t n = size_t(info.size * info.itemsize);
  py::gil_scoped_release nogil;
  return orchlog::detail::crc32c_update(crc, p, n);
}

}  // namespace orchlog_kernels
