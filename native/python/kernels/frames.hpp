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
#include "orchlog/detail/decode/msgpack_reader.hpp"

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
  // The frame checksum as `orchlog validate` checks it (orchlog_frames._FrameCheck): the file offset of its
  // key and its value, when it is the frame's last key, a fixstr, holding a uint32 (12 bytes, as every
  // emitter writes it); -1 otherwise (no checksum, another form, or read after the window), and Python
  // reads that frame again to say what is wrong with it.
  std::vector<int64_t> check_at, check;
};

using orchlog::detail::Miss;
using orchlog::detail::MsgReader;

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

inline uint32_t load_be32(const unsigned char* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | uint32_t(p[3]);
}

// The leading float32s of up to n numbers at r's position, as emitters write a digest or an f32
// tensor's leading values (5 bytes each: type byte, big-endian bits), without number()'s dispatch per
// value; returns how many it read (the rest, if any, is number()'s). T: float or double.
template <class T>
inline uint32_t read_f32_run(MsgReader& r, T* out, uint32_t n) {
  const unsigned char* p = r.pos();
  const uint32_t fit = uint32_t(std::min<size_t>(n, r.left() / 5));
  uint32_t k = 0;
  for (; k < fit && p[0] == 0xCA; ++k, p += 5) {
    const uint32_t bits = load_be32(p + 1);
    float f;
    std::memcpy(&f, &bits, sizeof f);
    out[k] = T(f);
  }
  r.advance(size_t(k) * 5);
  return k;
}

inline bool read_values(MsgReader& r, std::vector<double>& out) {
  uint32_t count;
  if (!(r.container(false, count) && r.need(count))) return false;  // a byte per value at least: no reserving on faith
  const size_t first = out.size();
  out.resize(first + count);
  uint32_t k = read_f32_run(r, out.data() + first, count);
  for (; k < count; ++k) {
    if (!r.number(out[first + k], true)) return out.resize(first + k), false;
  }
  return true;
}

// Exactly n numbers (a digest's floats), appended to `out` at the column's precision (f32 read as it is,
// where going through a per-frame f64 array cost a conversion each way and 512 bytes set to NaN a frame);
// another count is Python's to decide. False leaves `out` as it was.
template <class T>
inline bool read_floats(MsgReader& r, std::vector<T>& out, uint32_t n) {
  uint32_t count;
  if (!r.container(false, count)) return false;
  if (count != n) return r.fail_other();
  const size_t at = out.size();
  out.resize(at + n);
  for (uint32_t k = read_f32_run(r, out.data() + at, n); k < n; ++k) {
    double v;
    if (!r.number(v, true)) return out.resize(at), false;
    out[at + k] = T(v);
  }
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

// The keys of the last frame read, by their place in it. A stream's frames come from one emitter, which
// writes the same keys in the same order, so a key is most often the very bytes the last frame had at
// its place: two words compared instead of a string's header read, its length switched on and its name
// compared: the decoder 9% faster on frames of hidden-state rows (docs/compare.md, "Seventeenth round").
struct KeyMemo {
  static constexpr uint32_t kPlaces = 32;
  const unsigned char* at[kPlaces] = {};  // the key's bytes (its str header and name), in the chunk
  uint8_t len[kPlaces] = {};              // how many; 0: none noted (a key of 16 bytes or more is never noted)
  FrameKey key[kPlaces] = {};
};

// Whether the first `len` (1..15) bytes at a and b are the same; both have 16 bytes to read.
inline bool same_bytes16(const unsigned char* a, const unsigned char* b, size_t len) {
  uint64_t a0, a1, b0, b1;
  std::memcpy(&a0, a, 8), std::memcpy(&a1, a + 8, 8), std::memcpy(&b0, b, 8), std::memcpy(&b1, b + 8, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  a0 = __builtin_bswap64(a0), a1 = __builtin_bswap64(a1), b0 = __builtin_bswap64(b0), b1 = __builtin_bswap64(b1);
#endif
  const uint64_t low = len >= 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * len)) - 1;
  const uint64_t high = len <= 8 ? 0 : (uint64_t(1) << (8 * (len - 8))) - 1;
  return ((a0 ^ b0) & low) == 0 && ((a1 ^ b1) & high) == 0;
}

// One record frame at r's position into `c` (and its tensor bytes noted); false leaves `c` as it was.
// Keys after tensor bytes that run past the chunk (the frame checksum) are left for the next chunk:
// `trail` says how many. `memo`: the keys of the frame before, in the same chunk (and this frame's after).
inline bool parse_frame(MsgReader& r, const unsigned char* chunk, int64_t base, uint32_t inline_max, FrameColumns& c,
                        uint32_t& trail, KeyMemo& memo) {
  trail = 0;
  uint32_t entries;
  if (!r.container(true, entries)) return false;
  if (entries > 64) return r.fail_other();
  FrameRecord f;
  const size_t rows = c.offset.size(), values_at = c.values.size(), shape_at = c.shape.size();
  auto undo = [&] {
    undo_read_into(c, rows, values_at, shape_at);
    return false;
  };
  uint64_t seen = 0;
  bool past_data = false;
  const unsigned char* check_key = nullptr;
  for (uint32_t i = 0; i < entries; ++i) {
    if (f.data.outside && !past_data) {  // a key after tensor bytes left unread: skip them if the chunk holds them
      if (size_t(r.left()) < f.data.size) {
        trail = entries - i;
        break;
      }
      r.advance(f.data.size), past_data = true;
    }
    const unsigned char* key_at = r.pos();
    FrameKey key;
    const size_t noted = i < KeyMemo::kPlaces ? memo.len[i] : 0;
    if (noted != 0 && r.left() >= 16 && same_bytes16(key_at, memo.at[i], noted)) {
      key = memo.key[i], r.advance(noted);  // the same bytes as the last frame's key here: the same key
    } else {
      std::string_view name;
      if (!r.str(name)) return undo();
      key = frame_key(name);
      const size_t len = size_t(r.pos() - key_at);
      if (i < KeyMemo::kPlaces && len < 16) memo.at[i] = key_at, memo.len[i] = uint8_t(len), memo.key[i] = key;
    }
    if (key == kFrameHeaderKey) return r.fail_other(), undo();
    if (key == kFrameCrc32c && i + 1 == entries && *key_at == 0xA6 && r.left() >= 5 && *r.pos() == 0xCE) {
      check_key = key_at;
    }
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
  c.check_at.push_back(check_key ? base + int64_t(check_key - chunk) : -1);
  c.check.push_back(check_key ? int64_t(load_be32(check_key + 8)) : -1);  // the key (7 bytes), 0xCE, the value
  if (f.meta_begin) {
    c.meta_spans.push_back(int64_t(c.line.size()) - 1);
    c.meta_spans.push_back(int64_t(f.meta_begin - chunk)), c.meta_spans.push_back(int64_t(f.meta_end - chunk));
  }
  return true;
}

// Ask for the frame after next before it is parsed, guessing that it starts as far on as this one
// did. A window's frame headers sit a tensor apart, further than the hardware prefetcher looks
// (across pages), so each header cost a wait on memory: most of the decoder's own time on frames of
// small tensors. A wrong guess costs a few loads of lines nobody reads.
inline void prefetch_header(const unsigned char* chunk, size_t size, size_t at) {
  constexpr size_t kHeaderLines = 16;  // 1 KiB: a record's keys, shape, stats and sketch
  for (size_t line = 0; line < kHeaderLines && at + 64 * line < size; ++line) {
    __builtin_prefetch(chunk + at + 64 * line, 0, 3);
  }
}

// Size the columns for a chunk of frames like its first (`first_bytes` long, its tensor bytes included),
// and a quarter more, so that growing them rarely copies; more frames than that are still taken. Frames
// a few bytes shorter than the first (smaller integers, shorter names) once made the last rows of most
// windows copy every column to a new block twice the size, a fifth of a full-mode compare's page
// faults; room never written costs no memory (its pages are never touched).
inline void reserve_like_first(FrameColumns& c, size_t chunk_size, size_t first_bytes) {
  const size_t like_first = chunk_size / std::max<size_t>(first_bytes, 1) + 1;
  const size_t rows = std::min<size_t>(like_first + like_first / 4 + 16, 1u << 20);
  c.reserve_rows(rows, std::max<size_t>(c.values.size(), 1), chunk_size);  // a value is a byte at least
  c.offset.reserve(rows), c.data_pos.reserve(rows), c.data_len.reserve(rows);
  c.check_at.reserve(rows), c.check.reserve(rows);
}

// The `n` key-value pairs a chunk starts with: the rest of the frame the previous chunk ended in, after
// tensor bytes that ran past it (the frame checksum); skipped, as verifying it is `orchlog validate`'s.
inline bool skip_trail(MsgReader& r, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    std::string_view name;
    if (!r.str(name) || frame_key(name) == kFrameHeaderKey || !r.skip()) return false;
  }
  return true;
}

// What decode_frames found in one window: its columns, and where and why it stopped.
struct FrameWindow {
  FrameColumns columns;
  int stop = kStopEnd;
  int64_t next = 0;    // the file offset to go on from
  uint32_t trail = 0;  // key-value pairs of a frame after its tensor bytes, at `next`
};

// The record frames of `size` bytes at file offset `base`; touches no Python object (so it runs without
// the GIL, and on the read-ahead's own thread, readahead.hpp).
inline FrameWindow decode_window(const unsigned char* chunk, size_t size, int64_t base, uint32_t inline_max,
                                 uint32_t trail_in) {
  FrameWindow w;
  FrameColumns& c = w.columns;
  w.next = base + int64_t(size);
  size_t pos = 0;
  if (trail_in) {
    MsgReader r(chunk, chunk + size);
    if (!skip_trail(r, trail_in)) {
      w.stop = r.miss == Miss::kMore ? kStopMore : kStopOther;
      w.next = base;
      if (w.stop == kStopMore) w.trail = trail_in;  // still to skip, from a larger window
      return w;
    }
    pos = size_t(r.pos() - chunk);
  }
  KeyMemo memo;
  while (pos < size) {
    MsgReader r(chunk + pos, chunk + size);
    if (!parse_frame(r, chunk, base, inline_max, c, w.trail, memo)) {
      w.stop = r.miss == Miss::kMore ? kStopMore : kStopOther;
      w.next = base + int64_t(pos);
      break;
    }
    c.offset.back() = base + int64_t(pos);
    const int64_t data_end = c.data_len.back() >= 0 ? c.data_pos.back() + c.data_len.back() : 0;
    if (data_end > base + int64_t(size)) {  // tensor bytes past the chunk: the caller moves on past them
      w.stop = kStopSkip, w.next = data_end;
      break;
    }
    const size_t frame_start = pos;
    pos = size_t(r.pos() - chunk);
    if (data_end > 0) pos = std::max(pos, size_t(data_end - base));
    if (c.offset.size() == 1) reserve_like_first(c, size - frame_start, pos - frame_start);
    prefetch_header(chunk, size, pos + (pos - frame_start));
  }
  return w;
}

inline py::dict frame_window_dict(FrameWindow&& w) {
  FrameColumns& c = w.columns;
  py::dict d;
  d["stop"] = w.stop;
  d["next"] = w.next;
  d["trail"] = w.trail;
  d["offset"] = to_array(std::move(c.offset));
  d["data_pos"] = to_array(std::move(c.data_pos)), d["data_len"] = to_array(std::move(c.data_len));
  d["meta_spans"] = to_array(std::move(c.meta_spans));
  d["check_at"] = to_array(std::move(c.check_at)), d["check"] = to_array(std::move(c.check));
  columns_into(std::move(c), d);  // the columns a JSONL line fills too, by the schema's layout
  return d;
}

py::dict decode_frames(py::buffer buf, int64_t base, uint32_t inline_max, uint32_t trail_in) {
  py::buffer_info info = buf.request();
  const auto* chunk = static_cast<const unsigned char*>(info.ptr);
  const size_t size = size_t(info.size * info.itemsize);
  FrameWindow w;
  {
    py::gil_scoped_release nogil;
    w = decode_window(chunk, size, base, inline_max, trail_in);
  }
  return frame_window_dict(std::move(w));
}

}  // namespace orchlog_kernels
