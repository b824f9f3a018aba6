// Reference tensor bytes -> the engine's dtype, for a graft. The same dtype is
// copied as is; floats (f32, f16, bf16, f64) convert among themselves with
// round-to-nearest-even, as a cast in NumPy or PyTorch does. Integer tensors
// only take their own dtype: converting token ids or quantized blocks would
// hide the very difference a graft is meant to remove.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "orchlog/detail/encode/number_text.hpp"
#include "orchlog/schema_gen.hpp"

namespace orchlog {
namespace detail {

inline bool is_float_dtype(DType d) {
  return d == DType::f32 || d == DType::f16 || d == DType::bf16 || d == DType::f64;
}

inline bool graft_converts(DType from, DType to) { return from == to || (is_float_dtype(from) && is_float_dtype(to)); }

inline std::uint16_t f32_to_bf16_bits(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);  // NaN stays NaN
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(bits >> 16);
}

inline std::uint16_t f32_to_f16_bits(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  const std::uint16_t sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t abs = bits & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return sign | 0x7E00u;           // NaN
  if (abs >= 0x477FF000u) return sign | 0x7C00u;          // rounds to or beyond 65520: Inf
  if (abs < 0x38800000u) {                                // below the smallest normal f16: subnormal or zero
    const int shift = 126 - static_cast<int>(abs >> 23);  // the value is mant * 2^-shift in units of 2^-24
    if (shift > 24) return sign;
    const std::uint32_t mant = (abs & 0x7FFFFFu) | 0x800000u;
    const std::uint32_t kept = mant >> shift;
    const std::uint32_t rest = mant & ((1u << shift) - 1);
    const std::uint32_t mid = 1u << (shift - 1);
    return sign | static_cast<std::uint16_t>(kept + (rest > mid || (rest == mid && (kept & 1u))));
  }
  const std::uint32_t rounded = abs - 0x38000000u + 0xFFFu + ((abs >> 13) & 1u);
  return sign | static_cast<std::uint16_t>(rounded >> 13);
}

inline double float_at(DType d, const unsigned char* p, std::int64_t i) {
  switch (d) {
    case DType::f64: {
      double v;
      std::memcpy(&v, p + 8 * i, sizeof v);
      return v;
    }
    default:
      return f32_from_bits(f32_bits_at(d, p, i));
  }
}

inline void store_float(DType d, unsigned char* p, std::int64_t i, double v) {
  switch (d) {
    case DType::f64:
      std::memcpy(p + 8 * i, &v, sizeof v);
      return;
    case DType::f32: {
      const float f = static_cast<float>(v);
      std::memcpy(p + 4 * i, &f, sizeof f);
      return;
    }
    default: {
      // Through f32: exact for an f32 source; an f64 source rounds twice, which
      // differs from one rounding only at exact ties of the f32 step.
      const float f = static_cast<float>(v);
      const std::uint16_t h = d == DType::f16 ? f32_to_f16_bits(f) : f32_to_bf16_bits(f);
      std::memcpy(p + 2 * i, &h, sizeof h);
      return;
    }
  }
}

// Writes `numel` elements of `from` at `src` into `dst` as `to` (graft_converts must hold).
inline void convert_elements(DType from, const unsigned char* src, DType to, unsigned char* dst, std::int64_t numel) {
  if (from == to) {
    std::memcpy(dst, src, static_cast<std::size_t>(numel) * schema::dtype_size(to));
    return;
  }
  for (std::int64_t i = 0; i < numel; ++i) store_float(to, dst, i, float_at(from, src, i));
}

}  // namespace detail
}  // namespace orchlog
