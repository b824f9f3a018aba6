// orchlog._kernels: Binary-stream record frames -> columns; any other frame goes back to Python.
// Included once, by module.cpp: the kernels build as one translation unit.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>
#include <vector>

#include "jsonl_columns.hpp"

namespace orchlog_kernels {

// ------------------------------------------------------------ binary frames
//
// A binary stream is msgpack maps back to back (FORMAT.md). decode_frames
// reads the record frames of one chunk of a file into columns, without the
// GIL: every field by its key (in any order; keys it does not know are
// skipped), the leading values as f64, and where each record's tensor bytes
// sit. Which keys there are, how each value is read and which column it
// fills is generated from the schema (frame_layout_gen.hpp); the value
// readers (MsgReader and the ones below it) are written here. It stops, and
// says where and why, at the first frame it does not take whole: one that
// runs past the chunk (the caller reads on and calls again), and one that is
// not a plain record (the header, a value of a type the schema does not give
// that field, garbage, a cut-short file), which the Python decoder
// (orchlog/read/formats/orchlog_frames.py) then reads or reports, with the
// rules it has always had. Every length and count is checked against the
// bytes present before anything is read or reserved, so no input, however
// hostile, makes it read out of bounds or allocate more than the chunk's
// size.

enum FrameStop : int { kStopEnd = 0, kStopMore = 1, kStopOther = 2, kStopSkip = 3 };

struct FrameColumns : Columns {
  std::vector<int64_t> offset, data_pos, data_len;  // data_pos: file offset of the tensor bytes (-1: none)
  std::vector<int64_t> meta_spans;                  // (row, start, end) of non-empty meta maps, in the chunk
};

// Why a frame was not taken: it needs bytes past the chunk, or it is not a plain record.
enum class Miss { kNone, kMore, kOther };

class MsgReader {
 public:
  MsgReader(const unsigned char* p, const unsigned char* end) : p_(p), end_(end) {}
  const unsigned char* pos() const { return p_; }
  Miss miss = Miss::kNone;

  bool fail_more() { return miss = Miss::kMore, false; }
  bool fail_other() { return miss = Miss::kOther, false; }
  bool need(size_t n) { return size_t(end_ - p_) >= n ? true : fail_more(); }
  void advance(size_t n) { p_ += n; }

  template <typename U>
  bool be(U& out) {  // a big-endian unsigned integer of sizeof(U) bytes
    if (!need(sizeof(U))) return false;
    U v = 0;
    for (size_t i = 0; i < sizeof(U); ++i) v = U((v << 8) | U(p_[i]));
    p_ += sizeof(U), out = v;
    return true;
  }

  // The length of a str whose type byte is next; false when the next value is not a str.
  bool str_header(uint32_t& n) {
    if (!need(1)) return false;
    const unsigned char t = *p_;
    if (t >= 0xA0 && t <= 0xBF) return ++p_, n = t & 0x1F, true;
    ++p_;
    if (t == 0xD9) return be_into<uint8_t>(n);
    if (t == 0xDA) return be_into<uint16_t>(n);
    if (t == 0xDB) return be_into<uint32_t>(n);
    --p_;
    return fail_other();
  }

  bool str(std::string_view& s) {
    uint32_t n;
    if (!str_header(n) || !need(n)) return false;
    s = std::string_view(reinterpret_cast<const char*>(p_), n), p_ += n;
    return true;
  }

  bool nil() {
    if (p_ < end_ && *p_ == 0xC0) return ++p_, true;
    return false;
  }

  // true or false as 1 or 0; any other value is Python's to decide.
  bool boolean(int8_t& v) {
    if (!need(1)) return false;
    if (*p_ == 0xC2 || *p_ == 0xC3) return v = int8_t(*p_++ == 0xC3), true;
    return fail_other();
  }

  // A msgpack int that fits int64 (a uint64 above that is not taken: the Python reader decides).
  bool int64(int64_t& v) {
    if (!need(1)) return false;
    const unsigned char t = *p_++;
    if (t <= 0x7F) return v = t, true;
    if (t >= 0xE0) return v = int64_t(int8_t(t)), true;
    switch (t) {
      case 0xCC:
        return unsigned_into<uint8_t>(v);
      case 0xCD:
        return unsigned_into<uint16_t>(v);
      case 0xCE:
        return unsigned_into<uint32_t>(v);
      case 0xCF: {
        uint64_t u;
        if (!be(u)) return false;
        if (u > uint64_t(std::numeric_limits<int64_t>::max())) return fail_other();
        return v = int64_t(u), true;
      }
      case 0xD0:
        return signed_into<uint8_t, int8_t>(v);
      case 0xD1:
        return signed_into<uint16_t, int16_t>(v);
      case 0xD2:
        return signed_into<uint32_t, int32_t>(v);
      case 0xD3:
        return signed_into<uint64_t, int64_t>(v);
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
      uint32_t bits;
      if (!be(bits)) return false;
      float f;
      std::memcpy(&f, &bits, sizeof f);
      return v = double(f), true;
    }
    if (t == 0xCB) {
      ++p_;
      uint64_t bits;
      if (!be(bits)) return false;
      std::memcpy(&v, &bits, sizeof v);
      return true;
    }
    if (t == 0xC0 && nil_is_nan) return ++p_, v = std::numeric_limits<double>::quiet_NaN(), true;
    if (t == 0xCF) {  // uint64: float(int) rounds to nearest, as the cast does
      ++p_;
      uint64_t u;
      if (!be(u)) return false;
      return v = double(u), true;
    }
    int64_t i;
    if (!int64(i)) return false;
    return v = double(i), true;
  }

  // The element count of an array or map whose type byte is next.
  bool container(bool map, uint32_t& n) {
    if (!need(1)) return false;
    const unsigned char t = *p_++;
    const unsigned char fix = map ? 0x80 : 0x90;
    if (t >= fix && t <= fix + 0x0F) return n = t & 0x0F, true;
    if (t == (map ? 0xDE : 0xDC)) return be_into<uint16_t>(n);
    if (t == (map ? 0xDF : 0xDD)) return be_into<uint32_t>(n);
    return --p_, fail_other();
  }

  bool bin_header(uint32_t& n) {
    if (!need(1)) return false;
    const unsigned char t = *p_++;
    if (t == 0xC4) return be_into<uint8_t>(n);
    if (t == 0xC5) return be_into<uint16_t>(n);
    if (t == 0xC6) return be_into<uint32_t>(n);
    return --p_, fail_other();
  }

  // Step over any value of the types orchlog writes, nested up to a fixed depth.
  bool skip() {
    constexpr int kDepth = 32;
    uint64_t left[kDepth];
    int depth = 0;
    uint64_t todo = 1;
    for (;;) {
      while (todo == 0) {
        if (depth == 0) return true;
        todo = left[--depth];
      }
      --todo;
      if (!need(1)) return false;
      const unsigned char t = *p_;
      uint32_t n = 0;
      if (t <= 0x7F || t >= 0xE0 || t == 0xC0 || t == 0xC2 || t == 0xC3) {
        ++p_;
      } else if ((t >= 0xA0 && t <= 0xBF) || t == 0xD9 || t == 0xDA || t == 0xDB) {
        if (!str_header(n) || !need(n)) return false;
        p_ += n;
      } else if (t == 0xC4 || t == 0xC5 || t == 0xC6) {
        if (!bin_header(n) || !need(n)) return false;
        p_ += n;
      } else if (t == 0xCA || t == 0xCB || (t >= 0xCC && t <= 0xD3)) {
        static const uint8_t widths[] = {4, 8, 1, 2, 4, 8, 1, 2, 4, 8};
        if (!need(1 + widths[t - 0xCA])) return false;
        p_ += 1 + widths[t - 0xCA];
      } else if ((t >= 0x80 && t <= 0x8F) || t == 0xDE || t == 0xDF || (t >= 0x90 && t <= 0x9F) || t == 0xDC ||
                 t == 0xDD) {
        const bool map = (t >= 0x80 && t <= 0x8F) || t == 0xDE || t == 0xDF;
        if (!container(map, n)) return false;
        const uint64_t items = uint64_t(n) * (map ? 2 : 1);
        if (!need(size_t(std::min<uint64_t>(items, uint64_t(end_ - p_) + 1)))) return false;  // a byte each at least
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
  bool be_into(uint32_t& n) {
    U v;
    if (!be(v)) return false;
    return n = uint32_t(v), true;
  }
  template <typename U>
  bool unsigned_into(int64_t& out) {
    U v;
    if (!be(v)) return false;
    return out = int64_t(v), true;
  }
  template <typename U, typename S>
  bool signed_into(int64_t& out) {
    U v;
    if (!be(v)) return false;
    S s;
    std::memcpy(&s, &v, sizeof s);
    return out = int64_t(s), true;
  }

  const unsigned char* p_;
  const unsigned char* end_;
};

// Where a record's tensor bytes are: in the chunk, or (outside) past what was read of it.
struct FrameBytes {
  const unsigned char* at = nullptr;
  uint32_t size = 0;
  bool outside = false;  // at least inline_max bytes: read later, by offset, so they may run past the chunk
};

// The readers of the values the generated layout (frame_layout_gen.hpp) does not read with MsgReader alone.

inline bool read_shape(MsgReader& r, std::vector<int64_t>& out) {
  uint32_t dims;
  bool ok = r.container(false, dims) && r.need(dims);
  for (uint32_t d = 0; ok && d < dims; ++d) {
    int64_t v;
    ok = r.int64(v);
    if (ok) out.push_back(v);
  }
  return ok;
}

inline bool read_values(MsgReader& r, std::vector<double>& out) {
  uint32_t count;
  bool ok = r.container(false, count) && r.need(count);  // one byte per value at least: no reserving on faith
  for (uint32_t k = 0; ok && k < count; ++k) {
    double v;
    ok = r.number(v, true);
    if (ok) out.push_back(v);
  }
  return ok;
}

// Exactly n numbers (a digest's floats); another count is Python's to decide.
inline bool read_floats(MsgReader& r, double* out, uint32_t n) {
  uint32_t count;
  if (!r.container(false, count)) return false;
  if (count != n) return r.fail_other();
  for (uint32_t k = 0; k < n; ++k)
    if (!r.number(out[k], true)) return false;
  return true;
}

// 64 ASCII characters, or Python decides (it stores what it is given).
inline bool read_hash(MsgReader& r, std::string_view& out) {
  if (!r.str(out)) return false;
  const bool ascii = std::all_of(out.begin(), out.end(), [](char ch) { return ch > 0; });
  return (out.size() == 64 && ascii) || r.fail_other();
}

// Where a non-empty meta map lies (Python decodes it); str keys and scalar values, or Python decides.
inline bool read_meta(MsgReader& r, const unsigned char*& begin, const unsigned char*& end) {
  const unsigned char* at = r.pos();
  uint32_t n = 0;
  bool ok = r.container(true, n) && r.need(n);
  for (uint32_t k = 0; ok && k < n; ++k) {
    std::string_view key;
    ok = r.str(key) && r.need(1);
    if (!ok) break;
    const unsigned char t = *r.pos();
    const bool scalar = t <= 0x7F || t >= 0xE0 || (t >= 0xA0 && t <= 0xBF) || t == 0xC0 || t == 0xC2 || t == 0xC3 ||
                        (t >= 0xCA && t <= 0xD3) || (t >= 0xD9 && t <= 0xDB);
    ok = scalar ? r.skip() : r.fail_other();
  }
  if (ok && n > 0) begin = at, end = r.pos();
  return ok;
}

inline bool read_bytes(MsgReader& r, FrameBytes& out, uint32_t inline_max) {
  if (!r.bin_header(out.size)) return false;
  out.at = r.pos();
  if (out.size >= inline_max) return out.outside = true;
  if (!r.need(out.size)) return false;
  r.advance(out.size);
  return true;
}

}  // namespace orchlog_kernels

#include "frame_layout_gen.hpp"  // FrameKey, FrameRecord, read_field, push_record: the fields, in schema order

namespace orchlog_kernels {

// The fields orchlog_jsonl._REQUIRED names: a frame without one is Python's to report.
constexpr uint64_t kRequiredKeys = (uint64_t(1) << kFrameCheckpoint) | (uint64_t(1) << kFrameDtype) |
                                   (uint64_t(1) << kFrameShape) | (uint64_t(1) << kFrameNumel) |
                                   (uint64_t(1) << kFrameValues) | (uint64_t(1) << kFrameStats) |
                                   (uint64_t(1) << kFrameBlake3);

// One record frame at r's position into `c` (and its tensor bytes noted); false leaves `c` as it was.
inline bool parse_frame(MsgReader& r, const unsigned char* chunk, int64_t base, uint32_t inline_max, FrameColumns& c) {
  uint32_t entries;
  if (!r.container(true, entries)) return false;
  if (entries > 64) return r.fail_other();
  FrameRecord f;
  const size_t values_at = c.values.size(), shape_at = c.shape.size();
  auto undo = [&] {
    c.values.resize(values_at), c.shape.resize(shape_at);
    return false;
  };
  uint64_t seen = 0;
  for (uint32_t i = 0; i < entries; ++i) {
    if (f.data.outside) return r.fail_other(), undo();  // a key after tensor bytes left unread
    std::string_view name;
    if (!r.str(name)) return undo();
    const FrameKey key = frame_key(name);
    if (key == kFrameHeaderKey) return r.fail_other(), undo();
    if (key != kFrameUnknownKey) {
      if (seen & (uint64_t(1) << key)) return r.fail_other(), undo();  // a repeated key: Python decides
      seen |= uint64_t(1) << key;
    }
    if (!read_field(r, key, f, c, inline_max)) return undo();
  }
  if ((seen & kRequiredKeys) != kRequiredKeys) return r.fail_other(), undo();
  c.offset.push_back(0);  // filled in by the caller, which knows where the frame started
  c.line.push_back(-1);
  push_record(f, c);
  const bool has_data = f.data.at != nullptr;
  c.data_pos.push_back(has_data ? base + int64_t(f.data.at - chunk) : -1);
  c.data_len.push_back(has_data ? int64_t(f.data.size) : -1);
  if (f.meta_begin) {
    c.meta_spans.push_back(int64_t(c.line.size()) - 1);
    c.meta_spans.push_back(int64_t(f.meta_begin - chunk)), c.meta_spans.push_back(int64_t(f.meta_end - chunk));
  }
  return true;
}

// Size the columns for a chunk of frames like its first (`first_bytes` long, its tensor bytes included),
// so that growing them rarely copies; more frames than that are still taken.
inline void reserve_like_first(FrameColumns& c, size_t chunk_size, size_t first_bytes) {
  const size_t rows = std::min<size_t>(chunk_size / std::max<size_t>(first_bytes, 1) + 1, 1u << 20);
  c.reserve_rows(rows, std::max<size_t>(c.values.size(), 1), chunk_size);  // a value is a byte at least
  c.offset.reserve(rows), c.data_pos.reserve(rows), c.data_len.reserve(rows);
}

py::dict decode_frames(py::buffer buf, int64_t base, uint32_t inline_max) {
  py::buffer_info info = buf.request();
  const auto* chunk = static_cast<const unsigned char*>(info.ptr);
  const size_t size = size_t(info.size * info.itemsize);
  FrameColumns c;
  int stop = kStopEnd;
  int64_t next = base + int64_t(size);
  {
    py::gil_scoped_release nogil;
    size_t pos = 0;
    while (pos < size) {
      MsgReader r(chunk + pos, chunk + size);
      if (!parse_frame(r, chunk, base, inline_max, c)) {
        stop = r.miss == Miss::kMore ? kStopMore : kStopOther;
        next = base + int64_t(pos);
        break;
      }
      c.offset.back() = base + int64_t(pos);
      const int64_t data_end = c.data_len.back() >= 0 ? c.data_pos.back() + c.data_len.back() : 0;
      if (data_end > base + int64_t(size)) {  // tensor bytes past the chunk: the caller moves on past them
        stop = kStopSkip, next = data_end;
        break;
      }
      const size_t frame_start = pos;
      pos = size_t(r.pos() - chunk);
      if (data_end > 0) pos = std::max(pos, size_t(data_end - base));
      if (c.offset.size() == 1) reserve_like_first(c, size - frame_start, pos - frame_start);
    }
  }
  py::dict d;
  d["stop"] = stop;
  d["next"] = next;
  d["offset"] = to_array(std::move(c.offset));
  d["data_pos"] = to_array(std::move(c.data_pos)), d["data_len"] = to_array(std::move(c.data_len));
  d["meta_spans"] = to_array(std::move(c.meta_spans));
  columns_into(std::move(c), d);  // the columns a JSONL line fills too, by the schema's layout
  return d;
}

}  // namespace orchlog_kernels
