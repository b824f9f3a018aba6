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

struct Columns {
  std::vector<int64_t> line, token_idx, layer, step, seq, rank, world_size, numel, shape_off{0}, shape, val_off{0};
  std::vector<int32_t> checkpoint, team, stage, dtype;
  std::vector<double> values, stats;                  // stats: 5 per row (min max mean rms abs_max), NaN for null
  std::vector<int64_t> counts;                        // 2 per row (nan_count inf_count)
  std::vector<char> blake3;                           // 64 per row
  std::vector<std::pair<int64_t, std::string>> meta;  // rows with a non-empty meta: (row, JSON text)
  Interner checkpoints, teams, stages, dtypes;

  // Size every column for the lines in the buffer (values: as many per line as the first line has),
  // so that growing them rarely copies. Every guess is capped by what the bytes can hold: a record
  // line is at least kMinRecord bytes and a value at least two ("0,"), so a buffer of blank lines or
  // a long first line never reserves more than a small multiple of its own size.
  void reserve_for(const char* data, size_t size) {
    constexpr size_t kMinRecord = 200;
    size_t lines = std::min(size_t(std::count(data, data + size, '\n')) + 1, size / kMinRecord + 1);
    const char* first_end = static_cast<const char*>(std::memchr(data, '\n', size));
    size_t first_len = first_end ? size_t(first_end - data) : size;
    size_t per_line = size_t(std::count(data, data + first_len, ',')) + 1;
    for (auto* col : {&line, &token_idx, &layer, &step, &seq, &rank, &world_size, &numel}) col->reserve(lines);
    for (auto* col : {&checkpoint, &team, &stage, &dtype}) col->reserve(lines);
    shape_off.reserve(lines + 1), val_off.reserve(lines + 1), shape.reserve(lines * 2);
    values.reserve(std::min(lines * std::min<size_t>(per_line, 4096), size / 2 + 1));
    stats.reserve(lines * 5), counts.reserve(lines * 2), blake3.reserve(lines * 64);
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

  // Clinger's fast path: a decimal with at most 15 significant digits and a
  // power of ten within 10^+-22 is exactly m * 10^e or m / 10^e in doubles,
  // each a single correctly rounded operation on exact operands. Every f32
  // value in the canonical text (at most 9 digits) takes this path; anything
  // else is left to from_chars.
  bool fast_number(double& v) {
    static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const char* q = p;
    bool neg = q < end && *q == '-';
    q += neg;
    uint64_t m = 0;
    int sig = 0, e10 = 0;
    const char* digits = q;
    for (; q < end && unsigned(*q - '0') < 10; ++q) {
      if (m || *q != '0') m = m * 10 + unsigned(*q - '0'), ++sig;
    }
    if (q == digits || sig > 15) return false;
    if (q < end && *q == '.') {
      const char* frac = ++q;
      for (; q < end && unsigned(*q - '0') < 10; ++q) {
        if (m || *q != '0') m = m * 10 + unsigned(*q - '0'), ++sig;
        --e10;
      }
      if (q == frac || sig > 15) return false;
    }
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

// Hash text that is not ASCII goes to Python, which reports it (the column holds 64 bytes per row).
inline bool is_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char ch) { return static_cast<unsigned char>(ch) < 0x80; });
}

// Parse one canonical record line [p, end) into the columns; false leaves them untouched.
bool parse_line(const char* p, const char* end, int64_t lineno, Columns& c) {
  Cursor k{p, end};
  std::string_view checkpoint, team, stage, dtype, blake3, meta;
  std::string s1, s2, s3, s4, s5;  // only filled for strings with escapes
  bool has_stage;
  int64_t token_idx, layer, step, rank, world_size, seq, numel;
  size_t shape_mark = c.shape.size(), val_mark = c.values.size();
  auto undo = [&] {
    c.shape.resize(shape_mark);
    c.values.resize(val_mark);
    return false;
  };
  if (!(k.lit("{\"checkpoint\":") && k.str(checkpoint, s1) && k.lit(",\"team\":") && k.str(team, s2) &&
        k.lit(",\"token_idx\":") && k.opt_int(token_idx) && k.lit(",\"layer\":") && k.opt_int(layer) &&
        k.lit(",\"stage\":")))
    return false;
  has_stage = !k.null();
  if (has_stage && !k.str(stage, s3)) return false;
  if (!(k.lit(",\"step\":") && k.opt_int(step) && k.lit(",\"rank\":") && k.int64(rank) && rank >= 0 &&
        k.lit(",\"world_size\":") && k.int64(world_size) && world_size >= 1 && k.lit(",\"seq\":") && k.int64(seq) &&
        seq >= 0 && k.lit(",\"dtype\":") && k.str(dtype, s4) && k.lit(",\"shape\":[")))
    return false;
  if (!k.lit("]")) {
    do {
      int64_t d;
      if (!k.int64(d) || d < 0) return undo();
      c.shape.push_back(d);
    } while (k.lit(","));
    if (!k.lit("]")) return undo();
  }
  if (!(k.lit(",\"numel\":") && k.int64(numel) && numel >= 0 && k.lit(",\"values\":["))) return undo();
  if (!k.lit("]")) {
    do {
      double v;
      if (!k.number(v)) return undo();
      c.values.push_back(v);
    } while (k.lit(","));
    if (!k.lit("]")) return undo();
  }
  double st[5];
  int64_t nan_count, inf_count;
  if (!(k.lit(",\"stats\":{\"min\":") && k.opt_number(st[0]) && k.lit(",\"max\":") && k.opt_number(st[1]) &&
        k.lit(",\"mean\":") && k.opt_number(st[2]) && k.lit(",\"rms\":") && k.opt_number(st[3]) &&
        k.lit(",\"abs_max\":") && k.opt_number(st[4]) && k.lit(",\"nan_count\":") && k.int64(nan_count) &&
        nan_count >= 0 && k.lit(",\"inf_count\":") && k.int64(inf_count) && inf_count >= 0 && k.lit("},\"blake3\":") &&
        k.str(blake3, s5) && blake3.size() == 64 && is_ascii(blake3) && k.lit(",\"meta\":") && k.object_text(meta) &&
        k.lit("}") && k.p == end))
    return undo();
  c.line.push_back(lineno);
  c.checkpoint.push_back(c.checkpoints.id(checkpoint));
  c.team.push_back(c.teams.id(team));
  c.stage.push_back(has_stage ? c.stages.id(stage) : -1);
  c.dtype.push_back(c.dtypes.id(dtype));
  c.token_idx.push_back(token_idx), c.layer.push_back(layer), c.step.push_back(step);
  c.rank.push_back(rank), c.world_size.push_back(world_size), c.seq.push_back(seq), c.numel.push_back(numel);
  c.shape_off.push_back(int64_t(c.shape.size()));
  c.val_off.push_back(int64_t(c.values.size()));
  c.stats.insert(c.stats.end(), st, st + 5);
  c.counts.push_back(nan_count), c.counts.push_back(inf_count);
  c.blake3.insert(c.blake3.end(), blake3.begin(), blake3.end());
  if (meta != "{}") c.meta.emplace_back(int64_t(c.line.size()) - 1, std::string(meta));
  return true;
}

// Hand a vector's storage to NumPy without copying it: the array owns the vector.
template <typename T>
py::array_t<T> to_array(std::vector<T>&& v) {
  auto* owned = new std::vector<T>(std::move(v));
  py::capsule free_when_done(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>({py::ssize_t(owned->size())}, {py::ssize_t(sizeof(T))}, owned->data(), free_when_done);
}

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
  d["n"] = c.line.size();
  d["lines"] = lineno - first_line;  // newlines seen: the next chunk's first line is first_line + lines
  d["line"] = to_array(std::move(c.line));
  d["checkpoint"] = to_array(std::move(c.checkpoint)), d["checkpoint_names"] = c.checkpoints.to_list();
  d["team"] = to_array(std::move(c.team)), d["team_names"] = c.teams.to_list();
  d["stage"] = to_array(std::move(c.stage)), d["stage_names"] = c.stages.to_list();
  d["dtype"] = to_array(std::move(c.dtype)), d["dtype_names"] = c.dtypes.to_list();
  d["token_idx"] = to_array(std::move(c.token_idx)), d["layer"] = to_array(std::move(c.layer)),
  d["step"] = to_array(std::move(c.step));
  d["rank"] = to_array(std::move(c.rank)), d["world_size"] = to_array(std::move(c.world_size)),
  d["seq"] = to_array(std::move(c.seq));
  d["numel"] = to_array(std::move(c.numel));
  d["shape_off"] = to_array(std::move(c.shape_off)), d["shape"] = to_array(std::move(c.shape));
  d["val_off"] = to_array(std::move(c.val_off)), d["values"] = to_array(std::move(c.values));
  d["stats"] = to_array(std::move(c.stats)), d["counts"] = to_array(std::move(c.counts));
  d["blake3"] = py::bytes(c.blake3.data(), c.blake3.size());
  py::list meta;
  for (auto& [row, text] : c.meta) meta.append(py::make_tuple(row, py::bytes(text)));
  d["meta"] = meta;
  d["other"] = to_array(std::move(other));
  return d;
}

}  // namespace orchlog_kernels
