// orchlog._kernels: Canonical orchlog JSONL lines -> columns; other lines go back to Python.
// Included once, by module.cpp: the kernels build as one translation unit.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "prefix.hpp"

namespace orchlog_kernels {

// ------------------------------------------------------------ JSONL lines
//
// Emitters write every record with the same fields in the same order and no
// spaces (FORMAT.md), so a parser that expects exactly that layout reads
// almost every line of a real trace without a general JSON parser. Any line
// it does not recognise (a header, a hand-edited or foreign line, a broken
// one) is returned untouched for the Python reader to parse or report.

// Names repeat on every line; look them up by view, without building a string.
struct Interner {
  std::deque<std::string> names;
  std::unordered_map<std::string_view, int32_t> ids;
  int32_t id(std::string_view s) {
    auto it = ids.find(s);
    if (it != ids.end()) return it->second;
    names.emplace_back(s);
    int32_t i = int32_t(names.size()) - 1;
    ids.emplace(std::string_view(names.back()), i);
    return i;
  }
  py::list to_list() const {
    py::list out;
    for (auto& s : names)
      out.append(py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(s.data(), Py_ssize_t(s.size()), "replace")));
    return out;
  }
};

struct Cursor {
  const char* p;
  const char* end;

  // A literal of known length, so that the comparison compiles to a few loads instead of a call.
  template <size_t N>
  bool lit(const char (&s)[N]) {
    constexpr size_t n = N - 1;
    if (size_t(end - p) < n || std::memcmp(p, s, n) != 0) return false;
    p += n;
    return true;
  }

  static int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  bool u4(uint32_t& cp) {
    if (end - p < 4) return false;
    cp = 0;
    for (int i = 0; i < 4; ++i) {
      int h = hex(p[i]);
      if (h < 0) return false;
      cp = cp * 16 + uint32_t(h);
    }
    p += 4;
    return true;
  }

  static void utf8(uint32_t cp, std::string& out) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6)), out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12)), out += char(0x80 | ((cp >> 6) & 0x3F)), out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18)), out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F)), out += char(0x80 | (cp & 0x3F));
    }
  }

  // A JSON string (the opening quote not yet consumed): a view of the line when it
  // holds no escape, else decoded to UTF-8 in `scratch`.
  bool str(std::string_view& out, std::string& scratch) {
    if (p >= end || *p != '"') return false;
    const char* start = ++p;
    while (p < end && *p != '"' && *p != '\\' && *p != '\n') ++p;
    if (p < end && *p == '"') {
      out = std::string_view(start, size_t(p - start));
      ++p;
      return true;
    }
    scratch.assign(start, p);
    while (p < end) {
      char c = *p++;
      if (c == '"') {
        out = scratch;
        return true;
      }
      if (c == '\n') return false;
      if (c != '\\') {
        scratch += c;
        continue;
      }
      if (p >= end) return false;
      char e = *p++;
      switch (e) {
        case '"':
          scratch += '"';
          break;
        case '\\':
          scratch += '\\';
          break;
        case '/':
          scratch += '/';
          break;
        case 'b':
          scratch += '\b';
          break;
        case 'f':
          scratch += '\f';
          break;
        case 'n':
          scratch += '\n';
          break;
        case 'r':
          scratch += '\r';
          break;
        case 't':
          scratch += '\t';
          break;
        case 'u': {
          uint32_t cp;
          if (!u4(cp)) return false;
          if (cp >= 0xD800 && cp < 0xDC00) {  // a surrogate pair, or a lone one (kept as U+FFFD)
            uint32_t lo;
            const char* save = p;
            if (lit("\\u") && u4(lo) && lo >= 0xDC00 && lo < 0xE000) {
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else {
              p = save;
              cp = 0xFFFD;
            }
          } else if (cp >= 0xDC00 && cp < 0xE000) {
            cp = 0xFFFD;
          }
          utf8(cp, scratch);
          break;
        }
        default:
          return false;
      }
    }
    return false;
  }

  bool null() { return lit("null"); }

  bool int64(int64_t& v) {
    auto r = std::from_chars(p, end, v);
    if (r.ec != std::errc() || r.ptr == p) return false;
    p = r.ptr;
    return true;
  }

  bool opt_int(int64_t& v) {
    if (null()) {
      v = -1;  // every key field is >= 0 in the schema, so -1 cannot be a value
      return true;
    }
    return int64(v) && v >= 0;
  }

  // A number, or one of the strings the format writes for non-finite values.
  bool number(double& v) {
    if (p < end && *p == '"') {
      if (lit("\"NaN\"")) return v = std::numeric_limits<double>::quiet_NaN(), true;
      if (lit("\"Infinity\"")) return v = INFINITY, true;
      if (lit("\"-Infinity\"")) return v = -INFINITY, true;
      return false;
    }
    if (p >= end || !(*p == '-' || (*p >= '0' && *p <= '9'))) return false;  // from_chars also takes "inf"
    if (fast_number(v)) return true;
    auto r = std::from_chars(p, end, v);
    if (r.ec != std::errc() || r.ptr == p) return false;
    p = r.ptr;
    return true;
  }

  // Whether the 8 bytes at q are all ASCII digits, and their value (SWAR, as fast_float reads them).
  static bool eight_digits(const char* q, uint32_t& value) {
    uint64_t v;
    std::memcpy(&v, q, 8);
    if ((((v & 0xF0F0F0F0F0F0F0F0ULL) | (((v + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4))) !=
        0x3333333333333333ULL)
      return false;
    v -= 0x3030303030303030ULL;
    v = (v * 10) + (v >> 8);
    v = (((v & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))) +
         (((v >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >>
        32;
    value = uint32_t(v);
    return true;
  }

  // How many of the 8 bytes at q are digits before the first that is not (0 to 8), and their value,
  // read as one word: the digits are shifted to the end of the word and '0's put before them, so
  // that the eight-digit parse reads the same value. The last fraction digits of a number (fewer
  // than eight) otherwise cost a loop whose exit the branch predictor cannot guess.
  static unsigned leading_digits(const char* q, uint32_t& value) {
    uint64_t v;
    std::memcpy(&v, q, 8);
    // A byte's high bit set when it is not a digit: below '0' (the subtraction borrows) or above '9'.
    const uint64_t below = (v - 0x3030303030303030ULL) | v;
    const uint64_t above = v + 0x4646464646464646ULL;  // '9' + 0x46 = 0x7F; larger bytes reach 0x80
    const uint64_t other = (below | above) & 0x8080808080808080ULL;
    const unsigned k = other ? unsigned(__builtin_ctzll(other)) / 8 : 8;
    if (k == 0) return value = 0, 0;
    if (k < 8) v = (v << (8 * (8 - k))) | (0x3030303030303030ULL >> (8 * k));
    eight_digits(reinterpret_cast<const char*>(&v), value);
    return k;
  }

  // Clinger's fast path: a decimal whose digits make an integer m <= 2^53
  // and whose power of ten is within 10^+-22 is exactly m * 10^e or m / 10^e
  // in doubles, each a single correctly rounded operation on exact operands.
  // Every f32 value in the canonical text (at most 9 significant digits)
  // takes this path; anything else is left to from_chars. Fraction digits
  // are read eight at a time where eight follow: a sketch is 64 of them.
  bool fast_number(double& v) {
    static constexpr uint64_t kPow10Int[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};
    static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const char* q = p;
    bool neg = q < end && *q == '-';
    q += neg;
    uint64_t m = 0;  // wraps past 19 digits, which are then refused
    int e10 = 0;
    const char* digits = q;
    for (; q < end && unsigned(*q - '0') < 10; ++q) m = m * 10 + unsigned(*q - '0');
    if (q == digits) return false;
    ptrdiff_t count = q - digits;
    if (q < end && *q == '.') {
      const char* frac = ++q;
      uint32_t eight;
      while (end - q >= 8 && eight_digits(q, eight)) m = m * 100000000 + eight, q += 8;
      if (end - q >= 8) {
        const unsigned k = leading_digits(q, eight);
        m = m * kPow10Int[k] + eight, q += k;
      }
      for (; q < end && unsigned(*q - '0') < 10; ++q) m = m * 10 + unsigned(*q - '0');
      if (q == frac) return false;
      e10 = -int(q - frac);
      count += q - frac;
    }
    if (count > 19 || m > (uint64_t(1) << 53)) return false;
    if (q < end && (*q == 'e' || *q == 'E')) {
      ++q;
      bool eneg = q < end && *q == '-';
      q += (q < end && (*q == '-' || *q == '+'));
      int e = 0;
      const char* exp = q;
      for (; q < end && unsigned(*q - '0') < 10 && e < 1000; ++q) e = e * 10 + (*q - '0');
      if (q == exp) return false;
      e10 += eneg ? -e : e;
    }
    if (e10 < -22 || e10 > 22) return false;
    double x = double(m);
    x = e10 < 0 ? x / kPow10[-e10] : x * kPow10[e10];
    v = neg ? -x : x;
    p = q;
    return true;
  }

  bool opt_number(double& v) {
    if (null()) return v = std::numeric_limits<double>::quiet_NaN(), true;
    return number(v);
  }

  bool boolean(int8_t& v) {
    if (lit("true")) return v = 1, true;
    if (lit("false")) return v = 0, true;
    return false;
  }

  bool opt_bool(int8_t& v) {
    if (null()) return v = -1, true;
    return boolean(v);
  }

  // The items of an array of integers >= min whose `[` has been read, and its `]`.
  bool int_list(std::vector<int64_t>& out, int64_t min) {
    if (lit("]")) return true;
    do {
      int64_t d;
      if (!int64(d) || d < min) return false;
      out.push_back(d);
    } while (lit(","));
    return lit("]");
  }

  // The items of an array of numbers whose `[` has been read, and its `]`.
  bool number_list(std::vector<double>& out) {
    if (lit("]")) return true;
    do {
      double v;
      if (!number(v)) return false;
      out.push_back(v);
    } while (lit(","));
    return lit("]");
  }

  // Exactly n numbers of an array whose `[` has been read, and its `]`.
  bool fixed_numbers(double* out, size_t n) {
    for (size_t i = 0; i < n; ++i)
      if ((i && !lit(",")) || !number(out[i])) return false;
    return lit("]");
  }

  // n f32 as one string of their bits, 8 lowercase hex digits each, most significant first, after the
  // opening quote (FORMAT.md, "Numbers": a `floats` field with `text: hex`).
  bool fixed_hex_f32(double* out, size_t n) {
    if (size_t(end - p) < 8 * n + 1 || p[8 * n] != '"') return false;
    for (size_t i = 0; i < n; ++i) {
      uint32_t bits = 0;
      for (int d = 0; d < 8; ++d) {
        const char c = p[8 * i + d];
        const int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (v < 0) return false;
        bits = bits << 4 | uint32_t(v);
      }
      float f;
      std::memcpy(&f, &bits, sizeof f);
      out[i] = double(f);
    }
    p += 8 * n + 1;
    return true;
  }

  // The raw text of a JSON object (strings may hold braces).
  bool object_text(std::string_view& out) {
    const char* start = p;
    if (p >= end || *p != '{') return false;
    int depth = 0;
    bool in_str = false;
    for (; p < end && *p != '\n'; ++p) {
      char c = *p;
      if (in_str) {
        if (c == '\\')
          ++p;
        else if (c == '"')
          in_str = false;
      } else if (c == '"') {
        in_str = true;
      } else if (c == '{') {
        ++depth;
      } else if (c == '}' && --depth == 0) {
        ++p;
        out = std::string_view(start, size_t(p - start));
        return true;
      }
    }
    return false;
  }
};

// x rounded to the nearest f32 (ties to even), as NumPy's astype(float32) does, without the undefined
// conversion of a double beyond float's range: from FLT_MAX and half its spacing on, that is +-inf.
inline double to_f32(double x) {
  static const double kRoundsToInf = double(std::numeric_limits<float>::max()) + std::ldexp(1.0, 103);
  if (std::fabs(x) >= kRoundsToInf) return std::copysign(std::numeric_limits<double>::infinity(), x);
  return double(float(x));
}

// Hash text that is not ASCII goes to Python, which reports it (the column holds 64 bytes per row).
inline bool is_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char ch) { return static_cast<unsigned char>(ch) < 0x80; });
}

// Hand a vector's storage to NumPy without copying it: the array owns the vector.
template <typename T>
py::array_t<T> to_array(std::vector<T>&& v) {
  auto* owned = new std::vector<T>(std::move(v));
  py::capsule free_when_done(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>({py::ssize_t(owned->size())}, {py::ssize_t(sizeof(T))}, owned->data(), free_when_done);
}

}  // namespace orchlog_kernels

#include "jsonl_layout_gen.hpp"  // Columns and parse_line: the fields of a line, in schema order

namespace orchlog_kernels {

py::dict parse_orchlog_jsonl(py::buffer buf, int64_t first_line) {
  py::buffer_info info = buf.request();
  const char* data = static_cast<const char*>(info.ptr);
  size_t size = size_t(info.size * info.itemsize);
  Columns c;
  c.reserve_for(data, size);
  std::vector<int64_t> other;  // (line, start, end) triples for Python
  int64_t lineno = first_line;
  {
    py::gil_scoped_release nogil;
    size_t pos = 0;
    while (pos < size) {
      const char* start = data + pos;
      const char* nl = static_cast<const char*>(std::memchr(start, '\n', size - pos));
      const char* stop = nl ? nl : data + size;
      bool blank =
          *start != '{' && std::all_of(start, stop, [](char ch) { return ch == ' ' || ch == '\t' || ch == '\r'; });
      if (!blank && !parse_line(start, stop, lineno, c)) {
        other.push_back(lineno), other.push_back(int64_t(pos)), other.push_back(int64_t(stop - data));
      }
      pos = size_t(stop - data) + (nl ? 1 : 0);
      lineno += nl ? 1 : 0;
    }
  }
  py::dict d;
  d["lines"] = lineno - first_line;  // newlines seen: the next chunk's first line is first_line + lines
  columns_into(std::move(c), d);
  d["other"] = to_array(std::move(other));
  return d;
}

}  // namespace orchlog_kernels
