// The JSONL encoding as a visitor for schema::visit_record / visit_header:
// the generated code decides the order of fields, this decides their text.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "orchlog/detail/encode/number_text.hpp"
#include "orchlog/detail/encode/utf8.hpp"
#include "orchlog/schema_gen.hpp"

namespace orchlog {
namespace detail {

// Writes through a cursor into `out`, grown ahead of each item to the most that item can take: a
// record is some sixty small pieces, and a std::string append each (a capacity check and a memcpy call)
// was a tenth of a summary record's cost. `out` holds exactly the text once the writer is gone.
class JsonlWriter {
 public:
  explicit JsonlWriter(std::string& out) : out_(out), at_(nullptr), end_(nullptr) {
    const std::size_t used = out_.size();
    out_.resize(used + kFirstRoom);
    at_ = &out_[used];
    end_ = out_.data() + out_.size();
  }
  ~JsonlWriter() { out_.resize(static_cast<std::size_t>(at_ - out_.data())); }
  JsonlWriter(const JsonlWriter&) = delete;
  JsonlWriter& operator=(const JsonlWriter&) = delete;

  void begin_object(std::size_t) {
    put('{');
    first_[++depth_] = true;
  }
  void end_object() {
    put('}');
    --depth_;
  }
  void key(std::string_view name) {  // schema field names: plain ASCII identifiers
    char* at = room(name.size() + 4);
    if (!first_[depth_]) *at++ = ',';
    first_[depth_] = false;
    *at++ = '"';
    at = std::copy(name.begin(), name.end(), at);
    *at++ = '"';
    *at++ = ':';
    at_ = at;
  }
  void newline() { put('\n'); }

  void str(std::string_view s) {
    std::string scratch;
    const std::string_view valid = as_valid_utf8(s, scratch);
    at_ = write_json_string(room(json_string_room(valid.size())), valid);
  }
  void opt_str(const std::optional<std::string_view>& s) { s ? str(*s) : null(); }
  void i32(std::int32_t v) { i64(v); }
  void opt_i32(const std::optional<std::int32_t>& v) { v ? i32(*v) : null(); }
  void i64(std::int64_t v) { at_ = write_i64(room(kNumberRoom), v); }
  void opt_i64(const std::optional<std::int64_t>& v) { v ? i64(*v) : null(); }
  void f64(double v) { at_ = write_float(room(kNumberRoom), v); }
  void opt_f64(const std::optional<double>& v) { v ? f64(*v) : null(); }
  void boolean(bool v) { text(v ? "true" : "false"); }
  void opt_boolean(const std::optional<bool>& v) { v ? boolean(*v) : null(); }
  // f32 values held exactly in doubles, printed in f32's shortest digits.
  void floats_f32(const schema::FloatsView& v) {
    floats(v, [](char* at, double x) { return write_float(at, static_cast<float>(x)); });
  }
  void floats_f64(const schema::FloatsView& v) {
    floats(v, [](char* at, double x) { return write_float(at, x); });
  }
  // `text: hex` (FORMAT.md, "Numbers"): one string of the floats' f32 bits, 8 hex digits each.
  void floats_f32_hex(const schema::FloatsView& v) {
    char* at = room(8 * v.size + 2);
    *at++ = '"';
    for (std::size_t i = 0; i < v.size; ++i, at += 8) hex32(at, f32_bits(static_cast<float>(v.data[i])));
    *at++ = '"';
    at_ = at;
  }
  void dtype(schema::DType d) {
    const std::string_view name = schema::dtype_name(d);
    char* at = room(name.size() + 2);
    *at++ = '"';
    at = std::copy(name.begin(), name.end(), at);
    *at++ = '"';
    at_ = at;
  }
  void hex256(std::string_view hex) {
    char* at = room(hex.size() + 2);
    *at++ = '"';
    at = std::copy(hex.begin(), hex.end(), at);
    *at++ = '"';
    at_ = at;
  }
  void shape(const schema::ShapeView& s) {
    put('[');
    for (std::size_t i = 0; i < s.size; ++i) {
      if (i) put(',');
      i64(s.data[i]);
    }
    put(']');
  }
  void values(const schema::ValuesView& v) {
    using schema::DType;
    put('[');
    for (std::int64_t i = 0; i < v.count; ++i) {
      char* at = room(kNumberRoom + 1);
      if (i) *at++ = ',';
      switch (v.dtype) {
        case DType::f32:
        case DType::f16:
        case DType::bf16:
          at = write_float(at, f32_from_bits(f32_bits_at(v.dtype, v.data, i)));
          break;
        case DType::f64:
          at = write_float(at, f64_at(v.data, i));
          break;
        default:
          at = write_i64(at, int_at(v.dtype, v.data, i));
      }
      at_ = at;
    }
    put(']');
  }
  void meta(const schema::MetaView& m) {
    put('{');
    for (std::size_t i = 0; i < m.size; ++i) {
      if (i) put(',');
      const schema::MetaEntry& e = m.data[i];
      str(e.key);
      put(':');
      switch (e.value.kind) {
        case schema::MetaValue::Kind::boolean:
          boolean(e.value.b);
          break;
        case schema::MetaValue::Kind::integer:
          i64(e.value.i);
          break;
        case schema::MetaValue::Kind::real:
          f64(e.value.f);
          break;
        case schema::MetaValue::Kind::text:
          str(e.value.s);
          break;
      }
    }
    put('}');
  }
  void bytes(const schema::BytesView&) {}  // the tensor bytes are not part of a summary

 private:
  static constexpr std::size_t kFirstRoom = 2048;  // a summary record's line fits

  // The cursor, with at least `n` characters of room after it.
  char* room(std::size_t n) {
    if (static_cast<std::size_t>(end_ - at_) < n) {
      const std::size_t used = static_cast<std::size_t>(at_ - out_.data());
      out_.resize(std::max(2 * out_.size(), used + n + kFirstRoom));
      at_ = out_.data() + used;
      end_ = out_.data() + out_.size();
    }
    return at_;
  }
  void put(char c) { *room(1) = c, ++at_; }
  void text(std::string_view t) { at_ = std::copy(t.begin(), t.end(), room(t.size())); }
  void null() { text("null"); }
  template <class Write>
  void floats(const schema::FloatsView& v, Write write) {
    put('[');
    for (std::size_t i = 0; i < v.size; ++i) {
      char* at = room(kNumberRoom + 1);
      if (i) *at++ = ',';
      at_ = write(at, v.data[i]);
    }
    put(']');
  }

  std::string& out_;
  char* at_;
  char* end_;
  bool first_[8] = {};
  int depth_ = -1;
};

}  // namespace detail
}  // namespace orchlog
