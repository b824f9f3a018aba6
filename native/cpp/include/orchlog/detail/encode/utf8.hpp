// UTF-8 repair and JSON string escaping (FORMAT.md, "Text").
//
// Names reach the logger as raw bytes (std::string_view, const char*); the
// format wants valid UTF-8 with each ill-formed sequence replaced by one
// U+FFFD per *maximal subpart* (what Python's errors="replace" does), so that
// every emitter prints the same characters for the same bytes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace orchlog {
namespace detail {

inline constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";

// Length of the well-formed sequence starting at s[i], or 0 when it is
// ill-formed; `consumed` is then the length of its maximal subpart (>= 1).
// The ranges are those of the Unicode Standard, Table 3-7.
inline std::size_t utf8_sequence(std::string_view s, std::size_t i, std::size_t& consumed) noexcept {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = byte(i);
  consumed = 1;
  if (lead < 0x80) return 1;
  std::size_t need;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    need = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    need = 3;
    if (lead == 0xE0) lo = 0xA0;
    if (lead == 0xED) hi = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    need = 4;
    if (lead == 0xF0) lo = 0x90;
    if (lead == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  for (std::size_t k = 1; k < need; ++k) {
    if (i + k >= s.size()) return 0;
    const unsigned char c = byte(i + k);
    const unsigned char min = k == 1 ? lo : 0x80, max = k == 1 ? hi : 0xBF;
    if (c < min || c > max) return 0;
    consumed = k + 1;
  }
  return need;
}

inline bool is_valid_utf8(std::string_view s) noexcept {
  std::size_t i = 0, consumed = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const std::size_t n = utf8_sequence(s, i, consumed);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

// Appends `s` to `out` with every maximal ill-formed subpart replaced by U+FFFD.
inline void append_repaired_utf8(std::string& out, std::string_view s) {
  std::size_t i = 0, consumed = 0;
  while (i < s.size()) {
    const std::size_t n = utf8_sequence(s, i, consumed);
    if (n == 0) {
      out.append(kReplacementChar);
      i += consumed;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
}

// `s` itself when it is valid UTF-8 (the common case, no copy), else its
// repaired text, built in `scratch`.
inline std::string_view as_valid_utf8(std::string_view s, std::string& scratch) {
  if (is_valid_utf8(s)) return s;
  scratch.clear();
  append_repaired_utf8(scratch, s);
  return scratch;
}

// The most characters the JSON string literal of `n` bytes of valid UTF-8 takes (write_json_string).
inline constexpr std::size_t json_string_room(std::size_t n) noexcept { return 2 + 6 * n; }

// The JSON string literal of valid UTF-8 text `s` at `at` (room for json_string_room(s.size())); returns
// the end. Only `"`, `\` and C0 controls are escaped.
inline char* write_json_string(char* at, std::string_view s) noexcept {
  static constexpr char kHex[] = "0123456789abcdef";
  *at++ = '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c != '"' && c != '\\') {
      *at++ = ch;
      continue;
    }
    *at++ = '\\';
    switch (c) {
      case '"':
      case '\\':
        *at++ = ch;
        break;
      case '\b':
        *at++ = 'b';
        break;
      case '\f':
        *at++ = 'f';
        break;
      case '\n':
        *at++ = 'n';
        break;
      case '\r':
        *at++ = 'r';
        break;
      case '\t':
        *at++ = 't';
        break;
      default:
        at = std::copy_n("u00", 3, at);
        *at++ = kHex[c >> 4];
        *at++ = kHex[c & 15];
    }
  }
  *at++ = '"';
  return at;
}

// Decodes the next code point of valid UTF-8 text (the selector's `?` matches one).
inline std::uint32_t next_code_point(std::string_view s, std::size_t& i) noexcept {
  const unsigned char lead = static_cast<unsigned char>(s[i]);
  std::size_t n = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
  if (i + n > s.size()) n = s.size() - i;
  std::uint32_t cp = n == 1 ? lead : n == 2 ? (lead & 0x1Fu) : n == 3 ? (lead & 0x0Fu) : (lead & 0x07u);
  for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
  i += n;
  return cp;
}

}  // namespace detail
}  // namespace orchlog
