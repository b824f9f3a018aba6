// Canonical number text for JSONL (FORMAT.md, "Numbers") and exact widening
// of half-precision floats.
//
// Floats: the shortest digits that round-trip in the value's own precision
// (std::to_chars with no precision gives exactly those), laid out as
// ECMAScript's Number::toString; negative zero is `-0.0` and non-finite
// values are the JSON strings "NaN", "Infinity", "-Infinity".
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "orchlog/detail/hd.hpp"
#include "orchlog/schema_gen.hpp"

namespace orchlog {
namespace detail {

// The most characters one number's text takes (write_i64, write_float): "-2.2250738585072014e-308" is 24.
inline constexpr std::size_t kNumberRoom = 32;

inline char* write_i64(char* at, std::int64_t v) { return std::to_chars(at, at + kNumberRoom, v).ptr; }

// Lays out `digits` (1 to 17 of them, no leading or trailing zeros) with decimal exponent n,
// value = 0.digits x 10^n, as ECMAScript Number::toString steps 6-10, into `at` (room for 32
// characters); returns the end. Built on the stack and appended once: a record's numbers are
// most of its appends.
inline char* ecmascript_layout(char* at, std::string_view digits, int n) {
  const int k = static_cast<int>(digits.size());
  const auto copy = [&at](std::string_view s) { at = std::copy(s.begin(), s.end(), at); };
  if (k <= n && n <= 21) {
    copy(digits);
    at = std::fill_n(at, n - k, '0');
  } else if (0 < n && n <= 21) {
    copy(digits.substr(0, static_cast<std::size_t>(n)));
    *at++ = '.';
    copy(digits.substr(static_cast<std::size_t>(n)));
  } else if (-6 < n && n <= 0) {
    copy("0.");
    at = std::fill_n(at, -n, '0');
    copy(digits);
  } else {
    *at++ = digits[0];
    if (k > 1) {
      *at++ = '.';
      copy(digits.substr(1));
    }
    *at++ = 'e';
    *at++ = n - 1 >= 0 ? '+' : '-';
    at = std::to_chars(at, at + 8, n - 1 >= 0 ? n - 1 : 1 - n).ptr;
  }
  return at;
}

// Shortest round-trip text of a finite, non-zero float or double, at `at` (room for kNumberRoom
// characters); returns the end.
template <class Float>
char* write_shortest(char* at, Float v) {
  char buf[kNumberRoom];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<std::size_t>(r.ptr - buf));  // "-d.ddde-xx"
  if (sci.front() == '-') {
    *at++ = '-';
    sci.remove_prefix(1);
  }
  // The exponent ends the text ("e+05", "e-308"): found from the back and read digit by digit, which
  // costs less than a search from the front and a general parse (about a tenth of a summary record).
  std::size_t e = sci.size() - 1;
  int exponent = 0, scale = 1;
  for (; sci[e] != 'e'; --e) {
    if (sci[e] >= '0' && sci[e] <= '9') exponent += (sci[e] - '0') * scale, scale *= 10;
  }
  if (sci[e + 1] == '-') exponent = -exponent;
  char digits[kNumberRoom];
  std::size_t k = 0;
  for (std::size_t i = 0; i < e; ++i)
    if (sci[i] != '.') digits[k++] = sci[i];
  while (k > 1 && digits[k - 1] == '0') --k;
  return ecmascript_layout(at, std::string_view(digits, k), exponent + 1);
}

// A float's canonical text (the header's rules) at `at`, room for kNumberRoom characters; returns the end.
template <class Float>
char* write_float(char* at, Float v) {
  const auto copy = [at](std::string_view token) { return std::copy(token.begin(), token.end(), at); };
  if (std::isnan(v)) return copy(schema::kNanToken);
  if (std::isinf(v)) return copy(v > 0 ? schema::kPosInfToken : schema::kNegInfToken);
  if (v == 0) return std::signbit(v) ? copy(schema::kNegativeZeroToken) : copy("0");
  return write_shortest(at, v);
}

// Eight lowercase hex digits of `bits` at `at`, most significant first (a float's `text: hex` form),
// worked out in one 64-bit word: each nibble spread to a byte of its own and turned into its digit
// there, then stored at once (a table look-up per byte made a sketch 256 two-byte stores).
inline void hex32(char* at, std::uint32_t bits) {
  std::uint64_t n = bits;
  n = ((n & 0x00000000FFFF0000ull) << 16) | (n & 0x000000000000FFFFull);
  n = ((n & 0x0000FF000000FF00ull) << 8) | (n & 0x000000FF000000FFull);
  n = ((n & 0x00F000F000F000F0ull) << 4) | (n & 0x000F000F000F000Full);                      // nibble k in byte k
  const std::uint64_t letters = ((n + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull;  // nibbles >= 10
  n += 0x3030303030303030ull + letters * ('a' - '0' - 10);
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  n = __builtin_bswap64(n);  // nibble 7 first
  std::memcpy(at, &n, sizeof n);
#else
  for (int k = 0; k < 8; ++k) at[k] = static_cast<char>(n >> (8 * (7 - k)));
#endif
}

inline std::uint32_t f32_bits(float f) noexcept {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

// ------------------------------------------------------------ widening
// Done on bits, never by hardware converters, which may quiet a signalling
// NaN: the f32 keeps the sign and the payload shifted left, no quiet bit set.

ORCHLOG_HD constexpr std::uint32_t bf16_to_f32_bits(std::uint16_t h) noexcept {
  return static_cast<std::uint32_t>(h) << 16;
}

ORCHLOG_HD constexpr std::uint32_t f16_to_f32_bits(std::uint16_t h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h >> 15) << 31;
  const std::uint32_t exp = (h >> 10) & 0x1Fu;
  std::uint32_t mant = h & 0x3FFu;
  if (exp == 0x1F) return sign | 0x7F800000u | (mant << 13);  // Inf, NaN with its payload
  if (exp != 0) return sign | ((exp + 112) << 23) | (mant << 13);
  if (mant == 0) return sign;  // signed zero
  // Subnormal: normalise so that the leading 1 moves into the implicit bit.
  std::uint32_t e = 113;
  while ((mant & 0x400u) == 0) {
    mant <<= 1;
    --e;
  }
  return sign | (e << 23) | ((mant & 0x3FFu) << 13);
}

inline float f32_from_bits(std::uint32_t bits) noexcept {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

ORCHLOG_HD inline std::uint32_t load_u32_le(const std::uint8_t* p) noexcept {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}

ORCHLOG_HD inline std::uint64_t load_u64_le(const std::uint8_t* p) noexcept {
  return static_cast<std::uint64_t>(load_u32_le(p)) | (static_cast<std::uint64_t>(load_u32_le(p + 4)) << 32);
}

ORCHLOG_HD inline std::uint16_t load_u16_le(const std::uint8_t* p) noexcept {
  return static_cast<std::uint16_t>(p[0] | (p[1] << 8));
}

// Element i of a tensor of a float dtype as the bits of the f32 it prints as
// (f32, f16, bf16). f64 and integer dtypes are read by their own loaders.
inline std::uint32_t f32_bits_at(schema::DType dtype, const std::uint8_t* data, std::int64_t i) noexcept {
  switch (dtype) {
    case schema::DType::f16:
      return f16_to_f32_bits(load_u16_le(data + 2 * i));
    case schema::DType::bf16:
      return bf16_to_f32_bits(load_u16_le(data + 2 * i));
    default:
      return load_u32_le(data + 4 * i);
  }
}

// Element i of an integer dtype, widened to i64.
inline std::int64_t int_at(schema::DType dtype, const std::uint8_t* data, std::int64_t i) noexcept {
  switch (dtype) {
    case schema::DType::i8:
      return static_cast<std::int8_t>(data[i]);
    case schema::DType::u8:
      return data[i];
    case schema::DType::i32:
      return static_cast<std::int32_t>(load_u32_le(data + 4 * i));
    default:
      return static_cast<std::int64_t>(load_u64_le(data + 8 * i));
  }
}

inline double f64_at(const std::uint8_t* data, std::int64_t i) noexcept {
  const std::uint64_t bits = load_u64_le(data + 8 * i);
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

}  // namespace detail
}  // namespace orchlog
