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

class JsonlWriter {
 public:
  explicit JsonlWriter(std::string& out) : out_(out) {}

  void begin_object(std::size_t) {
    out_.push_back('{');
    first_[++depth_] = true;
  }
  void end_object() {
    out_.push_back('}');
    --depth_;
  }
  void key(std::string_view name) {  // schema field names: plain ASCII identifiers, one append each
    char text[64];
    char* at = text;
    if (!first_[depth_]) *at++ = ',';
    first_[depth_] = false;
    *at++ = '"';
    if (name.size() > sizeof text - 4) name = name.substr(0, sizeof text - 4);  // no schema name is this long
    at = std::copy(name.begin(), name.end(), at);
    *at++ = '"';
    *at++ = ':';
    out_.append(text, static_cast<std::size_t>(at - text));
  }

  void str(std::string_view s) { append_json_string(out_, s); }
  void opt_str(const std::optional<std::string_view>& s) { s ? str(*s) : null(); }
  void i32(std::int32_t v) { append_i64(out_, v); }
  void opt_i32(const std::optional<std::int32_t>& v) { v ? i32(*v) : null(); }
  void i64(std::int64_t v) { append_i64(out_, v); }
  void opt_i64(const std::optional<std::int64_t>& v) { v ? i64(*v) : null(); }
  void f64(double v) { append_f64(out_, v); }
  void opt_f64(const std::optional<double>& v) { v ? f64(*v) : null(); }
  void boolean(bool v) { out_.append(v ? "true" : "false"); }
  void opt_boolean(const std::optional<bool>& v) { v ? boolean(*v) : null(); }
  // f32 values held exactly in doubles, printed in f32's shortest digits.
  void floats_f32(const schema::FloatsView& v) {
    floats(v, [this](double x) { append_f32(out_, static_cast<float>(x)); });
  }
  void floats_f64(const schema::FloatsView& v) {
    floats(v, [this](double x) { append_f64(out_, x); });
  }
  // `text: hex` (FORMAT.md, "Numbers"): one string of the floats' f32 bits, 8 hex digits each.
  void floats_f32_hex(const schema::FloatsView& v) {
    const std::size_t start = out_.size();
    out_.resize(start + 8 * v.size + 2);
    char* at = &out_[start];
    *at++ = '"';
    for (std::size_t i = 0; i < v.size; ++i, at += 8) hex32(at, f32_bits(static_cast<float>(v.data[i])));
    *at = '"';
  }
  void dtype(schema::DType d) {
    out_.push_back('"');
    out_.append(schema::dtype_name(d));
    out_.push_back('"');
  }
  void hex256(std::string_view hex) {
    out_.push_back('"');
    out_.append(hex);
    out_.push_back('"');
  }
  void shape(const schema::ShapeView& s) {
    out_.push_back('[');
    for (std::size_t i = 0; i < s.size; ++i) {
      if (i) out_.push_back(',');
      append_i64(out_, s.data[i]);
    }
    out_.push_back(']');
  }
  void values(const schema::ValuesView& v) {
    using schema::DType;
    out_.push_back('[');
    for (std::int64_t i = 0; i < v.count; ++i) {
      if (i) out_.push_back(',');
      switch (v.dtype) {
        case DType::f32:
        case DType::f16:
        case DType::bf16:
          append_f32(out_, f32_from_bits(f32_bits_at(v.dtype, v.data, i)));
          break;
        case DType::f64:
          append_f64(out_, f64_at(v.data, i));
          break;
        default:
          append_i64(out_, int_at(v.dtype, v.data, i));
      }
    }
    out_.push_back(']');
  }
  void meta(const schema::MetaView& m) {
    out_.push_back('{');
    for (std::size_t i = 0; i < m.size; ++i) {
      if (i) out_.push_back(',');
      const schema::MetaEntry& e = m.data[i];
      append_json_string(out_, e.key);
      out_.push_back(':');
      switch (e.value.kind) {
        case schema::MetaValue::Kind::boolean:
          out_.append(e.value.b ? "true" : "false");
          break;
        case schema::MetaValue::Kind::integer:
          append_i64(out_, e.value.i);
          break;
        case schema::MetaValue::Kind::real:
          append_f64(out_, e.value.f);
          break;
        case schema::MetaValue::Kind::text:
          append_json_string(out_, e.value.s);
          break;
      }
    }
    out_.push_back('}');
  }
  void bytes(const schema::BytesView&) {}  // the tensor bytes are not part of a summary

 private:
  void null() { out_.append("null"); }
  template <class Write>
  void floats(const schema::FloatsView& v, Write write) {
    out_.push_back('[');
    for (std::size_t i = 0; i < v.size; ++i) {
      if (i) out_.push_back(',');
      write(v.data[i]);
    }
    out_.push_back(']');
  }

  std::string& out_;
  bool first_[8] = {};
  int depth_ = -1;
};

}  // namespace detail
}  // namespace orchlog
