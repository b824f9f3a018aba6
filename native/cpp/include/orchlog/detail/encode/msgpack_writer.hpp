// The binary-stream encoding as a visitor for schema::visit_record /
// visit_header: canonical msgpack, every value in its smallest form (str8
// allowed), float32 only for the values of f32/f16/bf16 tensors.
//
// The tensor bytes (`data`) are not copied: the writer records where they
// are and where they go in its output (data_at()), and the caller sends the
// output before that point, the tensor bytes, then the rest (writev), or
// splices them in itself. The rest is the frame fields, `crc32c` last: the
// checksum covers every byte before its key, the tensor bytes included.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "orchlog/detail/encode/crc32c.hpp"
#include "orchlog/detail/encode/number_text.hpp"
#include "orchlog/detail/encode/utf8.hpp"
#include "orchlog/schema_gen.hpp"

namespace orchlog {
namespace detail {

// The largest tensor a msgpack bin (bin32) can hold.
inline constexpr std::uint64_t kMaxFrameDataBytes = 0xFFFFFFFFu;

class MsgpackWriter {
 public:
  explicit MsgpackWriter(std::string& out) : out_(out), start_(out.size()) {}

  // The tensor bytes, as given to bytes(), and where in the output they belong (its end when none were).
  schema::BytesView data() const { return data_; }
  std::size_t data_at() const { return has_data_ ? data_at_ : out_.size(); }

  // The frame's bytes so far, in order: those before the tensor bytes, the tensor bytes, those after
  // (what a frame field, frame_<field>(), is computed over).
  std::array<std::string_view, 3> frame_so_far() const {
    const std::string_view frame = std::string_view(out_).substr(start_);
    const std::size_t before = data_at() - start_;
    return {frame.substr(0, before), std::string_view(reinterpret_cast<const char*>(data_.data), data_.size),
            frame.substr(before)};
  }

  // The frame checksum: CRC-32C of every byte of the frame before its key, then the key and the
  // value, always a uint32.
  void frame_crc32c() {
    std::uint32_t crc = 0;
    for (const std::string_view piece : frame_so_far()) crc = crc32c_update(crc, piece.data(), piece.size());
    raw_str("crc32c");
    out_.push_back(static_cast<char>(0xCE));
    big_endian(crc, 4);
  }

  void begin_object(std::size_t n) { container_header(n, 0x80, 0xDE, 0xDF); }
  void end_object() {}
  void key(std::string_view name) { raw_str(name); }

  void str(std::string_view s) {
    std::string scratch;
    raw_str(as_valid_utf8(s, scratch));
  }
  void opt_str(const std::optional<std::string_view>& s) { s ? str(*s) : nil(); }
  void i32(std::int32_t v) { integer(v); }
  void opt_i32(const std::optional<std::int32_t>& v) { v ? i32(*v) : nil(); }
  void i64(std::int64_t v) { integer(v); }
  void opt_i64(const std::optional<std::int64_t>& v) { v ? i64(*v) : nil(); }
  void f64(double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    float64_bits(bits);
  }
  void opt_f64(const std::optional<double>& v) { v ? f64(*v) : nil(); }
  void boolean(bool v) { out_.push_back(static_cast<char>(v ? 0xC3 : 0xC2)); }
  void opt_boolean(const std::optional<bool>& v) { v ? boolean(*v) : nil(); }
  void floats_f32(const schema::FloatsView& v) {
    container_header(v.size, 0x90, 0xDC, 0xDD);
    for (std::size_t i = 0; i < v.size; ++i) {
      const float f = static_cast<float>(v.data[i]);
      std::uint32_t bits;
      std::memcpy(&bits, &f, sizeof bits);
      out_.push_back(static_cast<char>(0xCA));
      big_endian(bits, 4);
    }
  }
  void floats_f64(const schema::FloatsView& v) {
    container_header(v.size, 0x90, 0xDC, 0xDD);
    for (std::size_t i = 0; i < v.size; ++i) f64(v.data[i]);
  }
  // Hex is JSONL's text for these floats; msgpack stores floats as they are.
  void floats_f32_hex(const schema::FloatsView& v) { floats_f32(v); }
  void dtype(schema::DType d) { raw_str(schema::dtype_name(d)); }
  void hex256(std::string_view hex) { raw_str(hex); }
  void shape(const schema::ShapeView& s) {
    container_header(s.size, 0x90, 0xDC, 0xDD);
    for (std::size_t i = 0; i < s.size; ++i) integer(s.data[i]);
  }
  void values(const schema::ValuesView& v) {
    using schema::DType;
    container_header(static_cast<std::uint64_t>(v.count), 0x90, 0xDC, 0xDD);
    for (std::int64_t i = 0; i < v.count; ++i) {
      switch (v.dtype) {
        case DType::f32:
        case DType::f16:
        case DType::bf16:  // as float32 bits: NaN payloads survive
          out_.push_back(static_cast<char>(0xCA));
          big_endian(f32_bits_at(v.dtype, v.data, i), 4);
          break;
        case DType::f64:
          float64_bits(load_u64_le(v.data + 8 * i));
          break;
        default:
          integer(int_at(v.dtype, v.data, i));
      }
    }
  }
  void meta(const schema::MetaView& m) {
    container_header(m.size, 0x80, 0xDE, 0xDF);
    for (std::size_t i = 0; i < m.size; ++i) {
      const schema::MetaEntry& e = m.data[i];
      str(e.key);
      switch (e.value.kind) {
        case schema::MetaValue::Kind::boolean:
          out_.push_back(static_cast<char>(e.value.b ? 0xC3 : 0xC2));
          break;
        case schema::MetaValue::Kind::integer:
          integer(e.value.i);
          break;
        case schema::MetaValue::Kind::real:
          f64(e.value.f);
          break;
        case schema::MetaValue::Kind::text:
          str(e.value.s);
          break;
      }
    }
  }
  void bytes(const schema::BytesView& b) {
    if (b.size <= 0xFF) {
      out_.push_back(static_cast<char>(0xC4));
      big_endian(b.size, 1);
    } else if (b.size <= 0xFFFF) {
      out_.push_back(static_cast<char>(0xC5));
      big_endian(b.size, 2);
    } else {
      out_.push_back(static_cast<char>(0xC6));
      big_endian(b.size, 4);
    }
    data_ = b;
    data_at_ = out_.size();
    has_data_ = true;
  }

 private:
  void nil() { out_.push_back(static_cast<char>(0xC0)); }

  void big_endian(std::uint64_t v, int n) {
    for (int i = n - 1; i >= 0; --i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  }
  void float64_bits(std::uint64_t bits) {
    out_.push_back(static_cast<char>(0xCB));
    big_endian(bits, 8);
  }
  void integer(std::int64_t v) {
    if (v >= 0) {
      const auto u = static_cast<std::uint64_t>(v);
      if (u <= 0x7F) {
        out_.push_back(static_cast<char>(u));
      } else if (u <= 0xFF) {
        out_.push_back(static_cast<char>(0xCC));
        big_endian(u, 1);
      } else if (u <= 0xFFFF) {
        out_.push_back(static_cast<char>(0xCD));
        big_endian(u, 2);
      } else if (u <= 0xFFFFFFFFu) {
        out_.push_back(static_cast<char>(0xCE));
        big_endian(u, 4);
      } else {
        out_.push_back(static_cast<char>(0xCF));
        big_endian(u, 8);
      }
      return;
    }
    const auto bits = static_cast<std::uint64_t>(v);
    if (v >= -32) {
      out_.push_back(static_cast<char>(bits & 0xFF));  // negative fixint
    } else if (v >= -0x80) {
      out_.push_back(static_cast<char>(0xD0));
      big_endian(bits, 1);
    } else if (v >= -0x8000) {
      out_.push_back(static_cast<char>(0xD1));
      big_endian(bits, 2);
    } else if (v >= -0x80000000LL) {
      out_.push_back(static_cast<char>(0xD2));
      big_endian(bits, 4);
    } else {
      out_.push_back(static_cast<char>(0xD3));
      big_endian(bits, 8);
    }
  }
  void raw_str(std::string_view s) {
    const std::size_t n = s.size();
    if (n <= 31) {
      out_.push_back(static_cast<char>(0xA0 | n));
    } else if (n <= 0xFF) {
      out_.push_back(static_cast<char>(0xD9));
      big_endian(n, 1);
    } else if (n <= 0xFFFF) {
      out_.push_back(static_cast<char>(0xDA));
      big_endian(n, 2);
    } else {
      out_.push_back(static_cast<char>(0xDB));
      big_endian(n, 4);
    }
    out_.append(s);
  }
  // fix form up to 15 entries, then the 16- and 32-bit forms.
  void container_header(std::uint64_t n, int fix, int form16, int form32) {
    if (n <= 15) {
      out_.push_back(static_cast<char>(fix | static_cast<int>(n)));
    } else if (n <= 0xFFFF) {
      out_.push_back(static_cast<char>(form16));
      big_endian(n, 2);
    } else {
      out_.push_back(static_cast<char>(form32));
      big_endian(n, 4);
    }
  }

  std::string& out_;
  std::size_t start_;  // where this frame began in out_
  schema::BytesView data_;
  std::size_t data_at_ = 0;  // where the tensor bytes go in out_
  bool has_data_ = false;
};

}  // namespace detail
}  // namespace orchlog
