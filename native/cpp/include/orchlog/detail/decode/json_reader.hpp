// A strict reader of one JSON text (a line of a JSONL trace) into a small
// tree, for the reference index: RFC 8259 only (no NaN, no comments, no
// trailing commas), nesting at most kMaxDepth deep, every escape checked, and
// nothing read past the text. Numbers are kept as their text and converted on
// demand, locale-free (std::from_chars). A text that is not valid gives
// false, never an exception of its own (allocation failure is the caller's).
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace orchlog {
namespace detail {

struct JsonValue {
  enum class Kind : std::uint8_t { null, boolean, number, string, array, object };
  Kind kind = Kind::null;
  bool b = false;
  std::string text;  // a number's digits, or a string's decoded UTF-8
  std::vector<JsonValue> items;
  std::vector<std::pair<std::string, JsonValue>> members;  // in the order written

  const JsonValue* get(std::string_view name) const {
    for (const auto& m : members)
      if (m.first == name) return &m.second;
    return nullptr;
  }
  bool is_null() const { return kind == Kind::null; }

  // A number as a double (correctly rounded), or the strings the JSONL encoding writes for non-finite floats.
  std::optional<double> real() const {
    if (kind == Kind::string) {
      if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
      if (text == "Infinity") return std::numeric_limits<double>::infinity();
      if (text == "-Infinity") return -std::numeric_limits<double>::infinity();
      return std::nullopt;
    }
    if (kind != Kind::number) return std::nullopt;
    double v = 0;
    const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size()) return std::nullopt;
    return v;
  }
  // The `i`-th f32 of a string of f32 bits, 8 lowercase hex digits each, most significant first (FORMAT.md,
  // "Numbers": a `floats` field with `text: hex`); nullopt for any other text.
  std::optional<float> hex_f32(std::size_t i) const {
    if (kind != Kind::string || text.size() < 8 * (i + 1)) return std::nullopt;
    std::uint32_t bits = 0;
    for (std::size_t k = 8 * i; k < 8 * (i + 1); ++k) {
      const char c = text[k];
      const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (d < 0) return std::nullopt;
      bits = bits << 4 | static_cast<std::uint32_t>(d);
    }
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
  // An integer number (no fraction or exponent) that fits int64.
  std::optional<std::int64_t> integer() const {
    if (kind != Kind::number) return std::nullopt;
    std::int64_t v = 0;
    const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size()) return std::nullopt;
    return v;
  }
};

class JsonReader {
 public:
  static constexpr int kMaxDepth = 16;

  // Parses `text` whole (surrounding spaces, tabs, CR and LF allowed) into `out`.
  static bool parse(std::string_view text, JsonValue& out) {
    JsonReader r(text);
    r.space();
    if (!r.value(out, 0)) return false;
    r.space();
    return r.p_ == r.end_;
  }

 private:
  explicit JsonReader(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  void space() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }
  bool literal(std::string_view word) {
    if (std::size_t(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word) return false;
    p_ += word.size();
    return true;
  }

  bool value(JsonValue& v, int depth) {
    if (p_ >= end_ || depth > kMaxDepth) return false;
    switch (*p_) {
      case '{':
        return object(v, depth);
      case '[':
        return array(v, depth);
      case '"':
        v.kind = JsonValue::Kind::string;
        return string(v.text);
      case 't':
        v.kind = JsonValue::Kind::boolean, v.b = true;
        return literal("true");
      case 'f':
        v.kind = JsonValue::Kind::boolean, v.b = false;
        return literal("false");
      case 'n':
        v.kind = JsonValue::Kind::null;
        return literal("null");
      default:
        v.kind = JsonValue::Kind::number;
        return number(v.text);
    }
  }

  bool object(JsonValue& v, int depth) {
    v.kind = JsonValue::Kind::object;
    ++p_;
    space();
    if (p_ < end_ && *p_ == '}') return ++p_, true;
    for (;;) {
      std::string name;
      space();
      if (p_ >= end_ || *p_ != '"' || !string(name)) return false;
      space();
      if (p_ >= end_ || *p_ != ':') return false;
      ++p_;
      space();
      v.members.emplace_back(std::move(name), JsonValue());
      if (!value(v.members.back().second, depth + 1)) return false;
      space();
      if (p_ >= end_) return false;
      if (*p_ == '}') return ++p_, true;
      if (*p_ != ',') return false;
      ++p_;
    }
  }

  bool array(JsonValue& v, int depth) {
    v.kind = JsonValue::Kind::array;
    ++p_;
    space();
    if (p_ < end_ && *p_ == ']') return ++p_, true;
    for (;;) {
      space();
      v.items.emplace_back();
      if (!value(v.items.back(), depth + 1)) return false;
      space();
      if (p_ >= end_) return false;
      if (*p_ == ']') return ++p_, true;
      if (*p_ != ',') return false;
      ++p_;
    }
  }

  // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
  bool number(std::string& out) {
    const char* start = p_;
    auto digits = [this]() {
      const char* s = p_;
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
      return p_ > s;
    };
    if (p_ < end_ && *p_ == '-') ++p_;
    if (p_ < end_ && *p_ == '0') {
      ++p_;
    } else if (!digits()) {
      return false;
    }
    if (p_ < end_ && *p_ == '.') {
      ++p_;
      if (!digits()) return false;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (!digits()) return false;
    }
    out.assign(start, p_);
    return true;
  }

  bool hex4(std::uint32_t& out) {
    if (end_ - p_ < 4) return false;
    out = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = *p_++;
      const int d = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
      if (d < 0) return false;
      out = out * 16 + static_cast<std::uint32_t>(d);
    }
    return true;
  }

  static void utf8(std::uint32_t cp, std::string& out) {
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  // A string, its escapes decoded; raw control characters are refused, as are lone surrogates.
  bool string(std::string& out) {
    ++p_;  // the opening quote
    out.clear();
    while (p_ < end_) {
      const unsigned char c = static_cast<unsigned char>(*p_++);
      if (c == '"') return true;
      if (c < 0x20) return false;
      if (c != '\\') {
        out.push_back(static_cast<char>(c));
        continue;
      }
      if (p_ >= end_) return false;
      const char e = *p_++;
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out.push_back(e);
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'u': {
          std::uint32_t cp = 0;
          if (!hex4(cp)) return false;
          if (cp >= 0xDC00 && cp <= 0xDFFF) return false;
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            std::uint32_t low = 0;
            if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return false;
            p_ += 2;
            if (!hex4(low) || low < 0xDC00 || low > 0xDFFF) return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          utf8(cp, out);
          break;
        }
        default:
          return false;
      }
    }
    return false;  // no closing quote
  }

  const char* p_;
  const char* end_;
};

}  // namespace detail
}  // namespace orchlog
