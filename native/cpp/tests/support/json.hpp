// A small JSON reader for the conformance vectors (tests only).
//
// Numbers keep their text so that 64-bit integers survive exactly; objects
// keep their key order.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace orchlog_test {

struct Json {
  enum class Type { null, boolean, number, string, array, object };
  Type type = Type::null;
  bool b = false;
  std::string text;  // number text or string value
  std::vector<Json> items;
  std::vector<std::pair<std::string, Json>> members;

  bool is_null() const { return type == Type::null; }
  const Json& operator[](std::size_t i) const { return items.at(i); }
  const Json& operator[](const std::string& key) const {
    for (const auto& m : members)
      if (m.first == key) return m.second;
    throw std::out_of_range("no key " + key);
  }
  bool has(const std::string& key) const {
    for (const auto& m : members)
      if (m.first == key) return true;
    return false;
  }
  std::int64_t i64() const { return std::stoll(text); }
  double f64() const { return std::stod(text); }
  const std::string& str() const { return text; }
  std::size_t size() const { return type == Type::array ? items.size() : members.size(); }
};

class JsonParser {
 public:
  explicit JsonParser(const std::string& s) : s_(s) {}
  Json parse() {
    Json v = value();
    ws();
    if (i_ != s_.size()) fail("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& why) {
    throw std::runtime_error("JSON: " + why + " at " + std::to_string(i_));
  }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }
  bool eat(const char* lit) {
    const std::string l(lit);
    if (s_.compare(i_, l.size(), l) == 0) {
      i_ += l.size();
      return true;
    }
    return false;
  }
  Json value() {
    ws();
    Json v;
    if (i_ >= s_.size()) fail("unexpected end");
    const char c = s_[i_];
    if (c == '{') {
      v.type = Json::Type::object;
      ++i_;
      ws();
      if (s_[i_] == '}') return ++i_, v;
      for (;;) {
        ws();
        std::string key = string();
        ws();
        if (s_[i_++] != ':') fail("expected :");
        v.members.emplace_back(std::move(key), value());
        ws();
        if (s_[i_] == ',') {
          ++i_;
          continue;
        }
        if (s_[i_++] != '}') fail("expected }");
        return v;
      }
    }
    if (c == '[') {
      v.type = Json::Type::array;
      ++i_;
      ws();
      if (s_[i_] == ']') return ++i_, v;
      for (;;) {
        v.items.push_back(value());
        ws();
        if (s_[i_] == ',') {
          ++i_;
          continue;
        }
        if (s_[i_++] != ']') fail("expected ]");
        return v;
      }
    }
    if (c == '"') {
      v.type = Json::Type::string;
      v.text = string();
      return v;
    }
    if (eat("null")) return v;
    if (eat("true")) {
      v.type = Json::Type::boolean;
      v.b = true;
      return v;
    }
    if (eat("false")) {
      v.type = Json::Type::boolean;
      return v;
    }
    v.type = Json::Type::number;
    const std::size_t start = i_;
    while (i_ < s_.size() && std::string("+-0123456789.eE").find(s_[i_]) != std::string::npos) ++i_;
    if (start == i_) fail("bad value");
    v.text = s_.substr(start, i_ - start);
    return v;
  }
  void utf8(std::string& out, std::uint32_t cp) {
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
  std::uint32_t hex4() {
    const std::uint32_t v = static_cast<std::uint32_t>(std::stoul(s_.substr(i_, 4), nullptr, 16));
    i_ += 4;
    return v;
  }
  std::string string() {
    if (s_[i_++] != '"') fail("expected string");
    std::string out;
    while (s_[i_] != '"') {
      char c = s_[i_++];
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      c = s_[i_++];
      switch (c) {
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
          std::uint32_t cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00 && s_.compare(i_, 2, "\\u") == 0) {
            i_ += 2;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (hex4() - 0xDC00);
          }
          utf8(out, cp);
          break;
        }
        default:
          out.push_back(c);
      }
    }
    ++i_;
    return out;
  }

  const std::string& s_;
  std::size_t i_ = 0;
};

inline Json parse_json(const std::string& text) { return JsonParser(text).parse(); }

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline Json load_vectors(const std::string& name) {
  return parse_json(read_file(std::string(ORCHLOG_VECTORS_DIR) + "/" + name));
}

inline std::string from_hex(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

inline std::string to_hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

}  // namespace orchlog_test
