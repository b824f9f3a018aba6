// A bounds-checked reader of the msgpack that orchlog writes: every length
// and count is checked against the bytes present before anything is read, so
// no input makes it read out of bounds. The Python kernels' frame decoder
// reads with it (the graft reference has a streaming reader of its own,
// detail/graft/frame_reader.hpp).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>

namespace orchlog {
namespace detail {

// Why a value was not read: it needs bytes past the end, or it is not what was asked for.
enum class Miss { kNone, kMore, kOther };

class MsgReader {
 public:
  MsgReader(const unsigned char* p, const unsigned char* end) : p_(p), end_(end) {}
  const unsigned char* pos() const { return p_; }
  Miss miss = Miss::kNone;

  bool fail_more() { return miss = Miss::kMore, false; }
  bool fail_other() { return miss = Miss::kOther, false; }
  bool need(std::size_t n) { return std::size_t(end_ - p_) >= n ? true : fail_more(); }
  std::size_t left() const { return std::size_t(end_ - p_); }
  void advance(std::size_t n) { p_ += n; }

  template <typename U>
  bool be(U& out) {  // a big-endian unsigned integer of sizeof(U) bytes
    if (!need(sizeof(U))) return false;
    U v = 0;
    for (std::size_t i = 0; i < sizeof(U); ++i) v = U((v << 8) | U(p_[i]));
    p_ += sizeof(U), out = v;
    return true;
  }

  // The length of a str whose type byte is next; false when the next value is not a str.
  bool str_header(std::uint32_t& n) {
    if (!need(1)) return false;
    const unsigned char t = *p_;
    if (t >= 0xA0 && t <= 0xBF) return ++p_, n = t & 0x1F, true;
    ++p_;
    if (t == 0xD9) return be_into<std::uint8_t>(n);
    if (t == 0xDA) return be_into<std::uint16_t>(n);
    if (t == 0xDB) return be_into<std::uint32_t>(n);
    --p_;
    return fail_other();
  }

  bool str(std::string_view& s) {
    std::uint32_t n;
    if (!str_header(n) || !need(n)) return false;
    s = std::string_view(reinterpret_cast<const char*>(p_), n), p_ += n;
    return true;
  }

  bool nil() {
    if (p_ < end_ && *p_ == 0xC0) return ++p_, true;
    return false;
  }

  // true or false as 1 or 0; any other value is Python's to decide.
  bool boolean(std::int8_t& v) {
    if (!need(1)) return false;
    if (*p_ == 0xC2 || *p_ == 0xC3) return v = std::int8_t(*p_++ == 0xC3), true;
    return fail_other();
  }

  // A msgpack int that fits int64 (a uint64 above that is not taken: the Python reader decides).
  bool int64(std::int64_t& v) {
    if (!need(1)) return false;
    const unsigned char t = *p_++;
    if (t <= 0x7F) return v = t, true;
    if (t >= 0xE0) return v = std::int64_t(std::int8_t(t)), true;
    switch (t) {
      case 0xCC:
        return unsigned_into<std::uint8_t>(v);
      case 0xCD:
        return unsigned_into<std::uint16_t>(v);
      case 0xCE:
        return unsigned_into<std::uint32_t>(v);
      case 0xCF: {
        std::uint64_t u;
        if (!be(u)) return false;
        if (u > std::uint64_t(std::numeric_limits<std::int64_t>::max())) return fail_other();
        return v = std::int64_t(u), true;
      }
      case 0xD0:
        return signed_into<std::uint8_t, std::int8_t>(v);
      case 0xD1:
        return signed_into<std::uint16_t, std::int16_t>(v);
      case 0xD2:
        return signed_into<std::uint32_t, std::int32_t>(v);
      case 0xD3:
        return signed_into<std::uint64_t, std::int64_t>(v);
      default:
        return --p_, fail_other();
    }
  }

  // A number as f64: float32, float64, or an int (as Python's float() of it); nil gives NaN when allowed.
  bool number(double& v, bool nil_is_nan) {
    if (!need(1)) return false;
    const unsigned char t = *p_;
    if (t == 0xCA) {
      ++p_;
      std::uint32_t bits;
      if (!be(bits)) return false;
      float f;
      std::memcpy(&f, &bits, sizeof f);
      return v = double(f), true;
    }
    if (t == 0xCB) {
      ++p_;
      std::uint64_t bits;
      if (!be(bits)) return false;
      std::memcpy(&v, &bits, sizeof v);
      return true;
    }
    if (t == 0xC0 && nil_is_nan) return ++p_, v = std::numeric_limits<double>::quiet_NaN(), true;
    if (t == 0xCF) {  // uint64: float(int) rounds to nearest, as the cast does
      ++p_;
      std::uint64_t u;
      if (!be(u)) return false;
      return v = double(u), true;
    }
    std::int64_t i;
    if (!int64(i)) return false;
    return v = double(i), true;
  }

  // The element count of an array or map whose type byte is next.
  bool container(bool map, std::uint32_t& n) {
    if (!need(1)) return false;
    const unsigned char t = *p_++;
    const unsigned char fix = map ? 0x80 : 0x90;
    if (t >= fix && t <= fix + 0x0F) return n = t & 0x0F, true;
    if (t == (map ? 0xDE : 0xDC)) return be_into<std::uint16_t>(n);
    if (t == (map ? 0xDF : 0xDD)) return be_into<std::uint32_t>(n);
    return --p_, fail_other();
  }

  bool bin_header(std::uint32_t& n) {
    if (!need(1)) return false;
    const unsigned char t = *p_++;
    if (t == 0xC4) return be_into<std::uint8_t>(n);
    if (t == 0xC5) return be_into<std::uint16_t>(n);
    if (t == 0xC6) return be_into<std::uint32_t>(n);
    return --p_, fail_other();
  }

  // Step over any value of the types orchlog writes, nested up to a fixed depth.
  bool skip() {
    constexpr int kDepth = 32;
    std::uint64_t left[kDepth];
    int depth = 0;
    std::uint64_t todo = 1;
    for (;;) {
      while (todo == 0) {
        if (depth == 0) return true;
        todo = left[--depth];
      }
      --todo;
      if (!need(1)) return false;
      const unsigned char t = *p_;
      std::uint32_t n = 0;
      if (t <= 0x7F || t >= 0xE0 || t == 0xC0 || t == 0xC2 || t == 0xC3) {
        ++p_;
      } else if ((t >= 0xA0 && t <= 0xBF) || t == 0xD9 || t == 0xDA || t == 0xDB) {
        if (!str_header(n) || !need(n)) return false;
        p_ += n;
      } else if (t == 0xC4 || t == 0xC5 || t == 0xC6) {
        if (!bin_header(n) || !need(n)) return false;
        p_ += n;
      } else if (t == 0xCA || t == 0xCB || (t >= 0xCC && t <= 0xD3)) {
        static const std::uint8_t widths[] = {4, 8, 1, 2, 4, 8, 1, 2, 4, 8};
        if (!need(1 + widths[t - 0xCA])) return false;
        p_ += 1 + widths[t - 0xCA];
      } else if ((t >= 0x80 && t <= 0x8F) || t == 0xDE || t == 0xDF || (t >= 0x90 && t <= 0x9F) || t == 0xDC ||
                 t == 0xDD) {
        const bool map = (t >= 0x80 && t <= 0x8F) || t == 0xDE || t == 0xDF;
        if (!container(map, n)) return false;
        const std::uint64_t items = std::uint64_t(n) * (map ? 2 : 1);
        if (!need(std::size_t(std::min<std::uint64_t>(items, std::uint64_t(end_ - p_) + 1))))
          return false;  // a byte each at least
        if (items) {
          if (depth == kDepth) return fail_other();
          left[depth++] = todo, todo = items;
        }
      } else {
        return fail_other();  // ext types and 0xc1: not a value orchlog writes
      }
    }
  }

 private:
  template <typename U>
  bool be_into(std::uint32_t& n) {
    U v;
    if (!be(v)) return false;
    return n = std::uint32_t(v), true;
  }
  template <typename U>
  bool unsigned_into(std::int64_t& out) {
    U v;
    if (!be(v)) return false;
    return out = std::int64_t(v), true;
  }
  template <typename U, typename S>
  bool signed_into(std::int64_t& out) {
    U v;
    if (!be(v)) return false;
    S s;
    std::memcpy(&s, &v, sizeof s);
    return out = std::int64_t(s), true;
  }

  const unsigned char* p_;
  const unsigned char* end_;
};

}  // namespace detail
}  // namespace orchlog
