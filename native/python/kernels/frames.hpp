// orchlog._kernels: Binary-stream record frames -> columns; any other frame goes back to Python.
// Included once, by module.cpp: the kernels build as one translation unit.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

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
// sit. It stops, and says where and why, at the first frame it does not take
// whole: one that runs past the chunk (the caller reads on and calls again),
// and one that is not a plain record (the header, a value of a type the
// schema does not give that field, garbage, a cut-short file), which the
// Python decoder (orchlog/read/formats/orchlog_frames.py) then reads or
// reports, with the rules it has always had. Every length and count is
// checked against the bytes present before anything is read or reserved, so
// no input, however hostile, makes it read out of bounds or allocate more
// than the chunk's size.

enum FrameStop : int { kStopEnd = 0, kStopMore = 1, kStopOther = 2, kStopSkip = 3 };

struct FrameColumns : Columns {
  std::vector<int64_t> offset, data_pos, data_len;  // data_pos: file offset of the tensor bytes (-1: none)
  std::vector<int64_t> meta_spans;                  // (row, start, end) of non-empty meta maps, in the chunk
};

using orchlog::detail::Miss;
using orchlog::detail::MsgReader;

// The fields of one record, as parsed, before they go into the columns.
struct FrameRecord {
  std::string_view checkpoint, team, stage, dtype, blake3;
  bool has_stage = false;
  int64_t token_idx = -1, layer = -1, step = -1, seq = -1, rank = 0, world_size = 1, numel = 0;
  double stats[5];
  int64_t counts[2] = {0, 0};
  const unsigned char *data = nullptr, *meta_begin = nullptr, *meta_end = nullptr;
  uint32_t data_len = 0;
  bool has_data = false, data_outside = false;
  int8_t grafted = 0;  // absent in frames written before the field existed: not grafted
};

enum Key : int {
  kCheckpoint,
  kTeam,
  kTokenIdx,
  kLayer,
  kStage,
  kStep,
  kRank,
  kWorldSize,
  kSeq,
  kDtype,
  kShape,
  kNumel,
  kValues,
  kStats,
  kBlake3,
  kMeta,
  kData,
  kGrafted,
  kUnknownKey,
  kHeaderKey
};  // clang-format: one line per group would not read better

inline Key key_of(std::string_view k) {
  // By length first: at most a few names share one, so a key costs a compare or two.
  switch (k.size()) {
    case 3:
      return k == "seq" ? kSeq : kUnknownKey;
    case 4:
      return k == "team"   ? kTeam
             : k == "step" ? kStep
             : k == "rank" ? kRank
             : k == "meta" ? kMeta
             : k == "data" ? kData
                           : kUnknownKey;
    case 5:
      return k == "layer"   ? kLayer
             : k == "stage" ? kStage
             : k == "dtype" ? kDtype
             : k == "shape" ? kShape
             : k == "numel" ? kNumel
             : k == "stats" ? kStats
                            : kUnknownKey;
    case 6:
      return k == "values" ? kValues : k == "blake3" ? kBlake3 : kUnknownKey;
    case 7:
      return k == "orchlog" ? kHeaderKey : k == "grafted" ? kGrafted : kUnknownKey;
    case 9:
      return k == "token_idx" ? kTokenIdx : kUnknownKey;
    case 10:
      return k == "checkpoint" ? kCheckpoint : k == "world_size" ? kWorldSize : kUnknownKey;
    default:
      return kUnknownKey;
  }
}

// A nullable key field: nil is NONE (-1), an int is itself.
// A key number: null is -1 (every key field is >= 0 in the schema); a negative one is damage, for Python to report.
inline bool optional_int(MsgReader& r, int64_t& v) {
  if (r.nil()) return v = -1, true;
  return r.int64(v) && (v >= 0 || r.fail_other());
}

bool parse_stats(MsgReader& r, FrameRecord& f) {
  static const std::string_view names[] = {"min", "max", "mean", "rms", "abs_max", "nan_count", "inf_count"};
  uint32_t n;
  if (!r.container(true, n)) return false;
  for (double& s : f.stats) s = std::numeric_limits<double>::quiet_NaN();
  f.counts[0] = f.counts[1] = 0;
  unsigned seen = 0;
  for (uint32_t i = 0; i < n; ++i) {
    std::string_view k;
    if (!r.str(k)) return false;
    int which = -1;
    for (int j = 0; j < 7; ++j)
      if (names[j] == k) which = j;
    if (which < 0) {
      if (!r.skip()) return false;
      continue;
    }
    if (seen & (1u << which)) return r.fail_other();  // a repeated key: Python's dict keeps the last
    seen |= 1u << which;
    if (which >= 5) {
      if (!r.int64(f.counts[which - 5])) return false;
    } else if (!r.number(f.stats[which], true)) {
      return false;
    }
  }
  return true;
}

// One record frame at r's position into `c` (and its tensor bytes noted); false leaves `c` as it was.
bool parse_frame(MsgReader& r, const unsigned char* chunk, int64_t base, uint32_t inline_max, FrameColumns& c) {
  uint32_t entries;
  if (!r.container(true, entries)) return false;
  if (entries > 64) return r.fail_other();
  FrameRecord f;
  const size_t values_at = c.values.size(), shape_at = c.shape.size();
  auto undo = [&] {
    c.values.resize(values_at), c.shape.resize(shape_at);
    return false;
  };
  uint32_t seen = 0;
  for (uint32_t i = 0; i < entries; ++i) {
    if (f.data_outside) return r.fail_other(), undo();  // a key after tensor bytes left unread
    std::string_view name;
    if (!r.str(name)) return undo();
    const Key key = key_of(name);
    if (key == kHeaderKey) return r.fail_other(), undo();
    if (key == kUnknownKey) {
      if (!r.skip()) return undo();
      continue;
    }
    if (seen & (1u << key)) return r.fail_other(), undo();
    seen |= 1u << key;
    bool ok = true;
    switch (key) {
      case kCheckpoint:
        ok = r.str(f.checkpoint);
        break;
      case kTeam:
        ok = r.nil() || r.str(f.team);
        break;
      case kStage:
        ok = r.nil() || (f.has_stage = r.str(f.stage));
        break;
      case kDtype:
        ok = r.str(f.dtype);
        break;
      case kBlake3:  // 64 ASCII characters, or Python decides (it stores what it is given)
        ok = r.nil() || (r.str(f.blake3) && ((f.blake3.size() == 64 && std::all_of(f.blake3.begin(), f.blake3.end(),
                                                                                   [](char ch) { return ch > 0; })) ||
                                             r.fail_other()));
        break;
      case kTokenIdx:
        ok = optional_int(r, f.token_idx);
        break;
      case kLayer:
        ok = optional_int(r, f.layer);
        break;
      case kStep:
        ok = optional_int(r, f.step);
        break;
      case kSeq:
        ok = optional_int(r, f.seq);
        break;
      case kRank:
        ok = r.int64(f.rank);
        break;
      case kWorldSize:
        ok = r.int64(f.world_size);
        break;
      case kNumel:
        ok = r.int64(f.numel);
        break;
      case kGrafted:
        ok = r.boolean(f.grafted);
        break;
      case kShape: {
        uint32_t dims;
        ok = r.container(false, dims) && r.need(dims);
        for (uint32_t d = 0; ok && d < dims; ++d) {
          int64_t v;
          ok = r.int64(v);
          if (ok) c.shape.push_back(v);
        }
        break;
      }
      case kValues: {
        uint32_t count;
        ok = r.container(false, count) && r.need(count);  // one byte per value at least: no reserving on faith
        for (uint32_t k = 0; ok && k < count; ++k) {
          double v;
          ok = r.number(v, true);
          if (ok) c.values.push_back(v);
        }
        break;
      }
      case kStats:
        ok = parse_stats(r, f);
        break;
      case kMeta: {
        if (r.nil()) break;
        f.meta_begin = r.pos();
        uint32_t n = 0;
        ok = r.container(true, n) && r.need(n);
        for (uint32_t k = 0; ok && k < n; ++k) {  // str keys and scalar values, or Python decides
          std::string_view key;
          ok = r.str(key) && r.need(1);
          if (!ok) break;
          const unsigned char t = *r.pos();
          const bool scalar = t <= 0x7F || t >= 0xE0 || (t >= 0xA0 && t <= 0xBF) || t == 0xC0 || t == 0xC2 ||
                              t == 0xC3 || (t >= 0xCA && t <= 0xD3) || (t >= 0xD9 && t <= 0xDB);
          ok = scalar ? r.skip() : r.fail_other();
        }
        f.meta_end = r.pos();
        if (n == 0) f.meta_begin = nullptr;
        break;
      }
      case kData: {
        if (r.nil()) break;
        ok = r.bin_header(f.data_len);
        f.has_data = ok, f.data = r.pos();
        if (ok && f.data_len >= inline_max) {
          f.data_outside = true;  // read later, by offset: the bytes may run past the chunk
        } else if (ok && (ok = r.need(f.data_len))) {
          r.advance(f.data_len);
        }
        break;
      }
      default:
        break;
    }
    if (!ok) return undo();
  }
  constexpr uint32_t required = (1u << kCheckpoint) | (1u << kDtype) | (1u << kShape) | (1u << kNumel) |
                                (1u << kValues) | (1u << kStats) | (1u << kBlake3);
  if ((seen & required) != required) return r.fail_other(), undo();
  c.offset.push_back(0);  // filled in by the caller, which knows where the frame started
  c.line.push_back(-1);
  c.checkpoint.push_back(c.checkpoint_names.id(f.checkpoint));
  c.team.push_back(c.team_names.id(f.team));
  c.stage.push_back(f.has_stage ? c.stage_names.id(f.stage) : -1);
  c.dtype.push_back(c.dtype_names.id(f.dtype));
  c.token_idx.push_back(f.token_idx), c.layer.push_back(f.layer), c.step.push_back(f.step), c.seq.push_back(f.seq);
  c.rank.push_back(f.rank), c.world_size.push_back(f.world_size), c.numel.push_back(f.numel);
  c.grafted.push_back(f.grafted);
  c.shape_off.push_back(int64_t(c.shape.size())), c.val_off.push_back(int64_t(c.values.size()));
  c.stats.insert(c.stats.end(), f.stats, f.stats + 5);
  c.counts.insert(c.counts.end(), f.counts, f.counts + 2);
  if (f.blake3.size() == 64) {
    c.blake3.insert(c.blake3.end(), f.blake3.begin(), f.blake3.end());
  } else {
    c.blake3.insert(c.blake3.end(), 64, '\0');  // no hash: b"" in the S64 column
  }
  c.data_pos.push_back(f.has_data ? base + int64_t(f.data - chunk) : -1);
  c.data_len.push_back(f.has_data ? int64_t(f.data_len) : -1);
  if (f.meta_begin) {
    c.meta_spans.push_back(int64_t(c.line.size()) - 1);
    c.meta_spans.push_back(int64_t(f.meta_begin - chunk)), c.meta_spans.push_back(int64_t(f.meta_end - chunk));
  }
  return true;
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
      pos = size_t(r.pos() - chunk);
      if (data_end > 0) pos = std::max(pos, size_t(data_end - base));
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
