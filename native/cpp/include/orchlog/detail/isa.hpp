// The widest instruction set orchlog's run-time-dispatched kernels may use (BLAKE3, the sketch, CRC-32C,
// and the compare kernels of the Python extension): the CPU's own, or less when ORCHLOG_ISA says so,
// read once. It is for tests and for measuring on one machine what a machine without AVX-512 (or
// without AVX2) runs; every path gives the same bits.
//
//   ORCHLOG_ISA=avx512    the default where the CPU has it
//   ORCHLOG_ISA=avx2      AVX2 at most (x86-64-v3)
//   ORCHLOG_ISA=sse4      SSE4.2 at most (x86-64-v2)
//   ORCHLOG_ISA=baseline  the build's own instruction set (x86-64: SSE2)
#pragma once

#include <cstdlib>
#include <string_view>

#include "orchlog/detail/stderr.hpp"

namespace orchlog {
namespace detail {

enum class IsaCap { baseline, sse4, avx2, avx512 };

inline IsaCap isa_cap() noexcept {
  static const IsaCap cap = [] {
    const char* raw = std::getenv("ORCHLOG_ISA");
    const std::string_view name = raw == nullptr ? "" : raw;
    if (name.empty() || name == "avx512") return IsaCap::avx512;
    if (name == "avx2") return IsaCap::avx2;
    if (name == "sse4") return IsaCap::sse4;
    if (name == "baseline") return IsaCap::baseline;
    print_warning({"ORCHLOG_ISA=", name, " is not avx512, avx2, sse4 or baseline; using the CPU's widest"});
    return IsaCap::avx512;
  }();
  return cap;
}

// Whether the cap allows kernels of instruction set `isa`.
inline bool isa_allowed(IsaCap isa) noexcept { return static_cast<int>(isa) <= static_cast<int>(isa_cap()); }

}  // namespace detail
}  // namespace orchlog
