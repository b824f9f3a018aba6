// The reference trace a graft or ORCH_LOG_AGAINST reads from, indexed once
// (checkpoint and key parts -> each record's place and digest), so that a
// graft costs one read of the tensor it replaces and a comparison none.
//
// A graft reads a full-mode binary stream and indexes the records that carry
// their tensor. ORCH_LOG_AGAINST indexes every record, with what its summary
// proves (stats, sketch, BLAKE3) and where its tensor lies when it has one,
// from a binary stream (full or summary frames) or a JSONL trace.
//
// A key that occurs several times in the reference (a checkpoint logged at
// every decode step without a step number) is matched by occurrence: the
// n-th call under that key takes the n-th reference record under it.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "orchlog/api_gen.hpp"
#include "orchlog/detail/decode/json_reader.hpp"
#include "orchlog/detail/decode/msgpack_reader.hpp"
#include "orchlog/detail/encode/utf8.hpp"
#include "orchlog/schema_gen.hpp"

namespace orchlog {
namespace detail {

// Appends one key part in a form that cannot be confused with another's:
// null, an integer, a length-prefixed text or a boolean.
inline void append_key_text(std::string& out, const std::optional<std::string_view>& v) {
  if (!v) return out.append("n;"), void();
  out.append("s").append(std::to_string(v->size())).append(":").append(v->data(), v->size());
}
template <class T>
void append_key_text(std::string& out, const std::optional<T>& v) {
  if (!v) return out.append("n;"), void();
  out.append(std::is_same_v<T, bool> ? "b" : "i").append(std::to_string(static_cast<std::int64_t>(*v))).append(";");
}

// The lookup text of a checkpoint and its resolved key (every key part).
inline std::string graft_key_text(std::string_view checkpoint, const Key& key) {
  std::string out;
  append_key_text(out, std::optional<std::string_view>(checkpoint));
  for_each_key_part(key, [&out](std::string_view, const auto& part) { append_key_text(out, part); });
  return out;
}

// What a reference record's summary proves (ORCH_LOG_AGAINST).
struct ReferenceSummary {
  std::int64_t numel = -1;
  std::optional<double> rms;
  std::int64_t nan_count = 0;
  std::int64_t inf_count = 0;
  std::string blake3;  // 64 hex digits, or empty
  bool sketched = false;
  std::array<double, 64> sketch{};  // the stored f32 rows, widened
};

inline std::string shape_text(const std::int64_t* dims, std::size_t n) {
  std::string out = "[";
  for (std::size_t i = 0; i < n; ++i) out += (i ? "," : "") + std::to_string(dims[i]);
  return out + "]";
}

// The key as a warning names it: checkpoint and every key part that is set.
inline std::string key_description(std::string_view checkpoint, const Key& key) {
  std::string out = "'" + std::string(checkpoint) + "'";
  for_each_key_part(key, [&out](std::string_view name, const auto& part) {
    if (!part) return;
    out.append(" ").append(name).append("=");
    if constexpr (std::is_same_v<std::decay_t<decltype(*part)>, std::string_view>) {
      out.append(*part);
    } else {
      out.append(std::to_string(static_cast<std::int64_t>(*part)));
    }
  });
  return out;
}

// Where one reference record's tensor lies in the file (when it has one), and what it holds.
struct ReferenceTensor {
  std::uint64_t offset = 0;  // of the first tensor byte
  std::uint64_t nbytes = 0;
  bool has_data = false;
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape;
  ReferenceSummary summary;  // read for ORCH_LOG_AGAINST only
};

// What the index is for: a graft needs tensors, a comparison every record's summary.
enum class ReferenceUse { graft, against };

class ReferenceIndex {
 public:
  // Reads the records of `path`; false (with `error`) when the file cannot be
  // read or holds no record to use. Records it cannot parse end the index
  // (what came before stays usable) and are reported in `error` as a note.
  bool build(const std::string& path, std::string& error, ReferenceUse use = ReferenceUse::graft) {
    path_ = path;
    use_ = use;
    const char* what = use == ReferenceUse::graft ? "graft reference" : "ORCH_LOG_AGAINST reference";
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return error = std::string("cannot open the ") + what + " '" + path + "'", false;
    if (std::fgetc(f) == '{') {  // a JSONL trace: its header line opens with {"orchlog":
      std::fclose(f);
      if (use == ReferenceUse::graft) {
        error = "the graft reference '" + path + "' is JSONL; a graft needs a full-mode binary stream";
        return false;
      }
      return build_jsonl(path, error);
    }
    std::fseek(f, 0, SEEK_END);
    const long end = std::ftell(f);
    const std::uint64_t size = end < 0 ? 0 : static_cast<std::uint64_t>(end);
    std::uint64_t pos = 0;
    std::size_t window = std::size_t{1} << 16;
    std::vector<unsigned char> buf;
    while (pos < size) {
      const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(window, size - pos));
      buf.resize(want);
      std::fseek(f, static_cast<long>(pos), SEEK_SET);
      if (std::fread(buf.data(), 1, want, f) != want) {
        error = "reading the graft reference '" + path + "' failed";
        break;
      }
      std::uint64_t next = 0;
      const Parse p = parse_frame(buf.data(), buf.data() + want, pos, next);
      if (p == Parse::more && want < size - pos) {
        window *= 2;  // the frame's fields run past the window: read it again, whole
        continue;
      }
      if (p != Parse::ok) {
        error = std::string("the ") + what + " '" + path + "' is not a binary stream from byte " + std::to_string(pos) +
                " on (records before it are used)";
        break;
      }
      pos = next;
      window = std::size_t{1} << 16;
    }
    std::fclose(f);
    if (by_key_.empty()) {
      if (error.empty())
        error = use == ReferenceUse::graft
                    ? "the graft reference '" + path + "' holds no record with its tensor (a full-mode trace)"
                    : "the ORCH_LOG_AGAINST reference '" + path + "' holds no record";
      return false;
    }
    return true;
  }

  // The n-th reference record under `key_text`, or null.
  const ReferenceTensor* find(const std::string& key_text, std::size_t occurrence) const {
    const auto it = by_key_.find(key_text);
    if (it == by_key_.end() || occurrence >= it->second.size()) return nullptr;
    return &it->second[occurrence];
  }

  // Reads a record's tensor bytes into `out`; false when the file changed under us.
  bool read(const ReferenceTensor& t, std::vector<unsigned char>& out) const {
    std::FILE* f = std::fopen(path_.c_str(), "rb");
    if (!f) return false;
    out.resize(static_cast<std::size_t>(t.nbytes));
    const bool ok = std::fseek(f, static_cast<long>(t.offset), SEEK_SET) == 0 &&
                    std::fread(out.data(), 1, out.size(), f) == out.size();
    std::fclose(f);
    return ok;
  }

  std::size_t records() const {
    std::size_t n = 0;
    for (const auto& kv : by_key_) n += kv.second.size();
    return n;
  }

 private:
  enum class Parse { ok, more, bad };

  // One frame at file offset `base` (its bytes from `p`); on ok, `next` is the
  // offset after it and a record with tensor bytes is indexed.
  Parse parse_frame(const unsigned char* p, const unsigned char* end, std::uint64_t base, std::uint64_t& next) {
    MsgReader r(p, end);
    std::uint32_t entries = 0;
    if (!r.container(true, entries)) return r.miss == Miss::kMore ? Parse::more : Parse::bad;
    std::string checkpoint;
    bool header = false, has_checkpoint = false, has_data = false;
    Key key;
    ReferenceTensor t;
    std::optional<DType> dtype;
    std::uint64_t data_end = 0;
    for (std::uint32_t i = 0; i < entries; ++i) {
      std::string_view name;
      if (!r.str(name)) return r.miss == Miss::kMore ? Parse::more : Parse::bad;
      bool ok = true;
      if (name == "orchlog") {
        header = true;
        ok = r.skip();
      } else if (name == "checkpoint") {
        std::string_view s;
        ok = r.str(s);
        checkpoint.assign(s), has_checkpoint = ok;
      } else if (name == "dtype") {
        std::string_view s;
        ok = r.str(s);
        if (ok) dtype = schema::dtype_from_name(s);
      } else if (name == "shape") {
        std::uint32_t dims = 0;
        ok = r.container(false, dims);
        for (std::uint32_t d = 0; ok && d < dims; ++d) {
          std::int64_t v = 0;
          ok = r.int64(v);
          t.shape.push_back(v);
        }
      } else if (name == "numel") {
        ok = r.int64(t.summary.numel);
      } else if (use_ == ReferenceUse::against && name == "blake3") {
        std::string_view s;
        ok = r.str(s);
        if (ok) t.summary.blake3.assign(s);
      } else if (use_ == ReferenceUse::against && name == "sketch") {
        ok = read_sketch(r, t.summary);
      } else if (use_ == ReferenceUse::against && name == "stats") {
        ok = read_stats(r, t.summary);
      } else if (name == "data") {
        std::uint32_t n = 0;
        if (r.nil()) continue;
        ok = r.bin_header(n);
        if (ok) {
          has_data = true;
          t.has_data = true;
          t.offset = base + static_cast<std::uint64_t>(r.pos() - p);
          t.nbytes = n;
          data_end = t.offset + n;
          if (i + 1 < entries) {  // fields after the tensor: only when it is in the window
            ok = r.need(n);
            if (ok) r.advance(n);
          }
        }
      } else if (!key_part(r, name, key, ok)) {
        ok = r.skip();
      }
      if (!ok) return r.miss == Miss::kMore ? Parse::more : Parse::bad;
    }
    const std::uint64_t after_fields = base + static_cast<std::uint64_t>(r.pos() - p);
    next = std::max(after_fields, data_end);
    const bool wanted = use_ == ReferenceUse::against || has_data;  // a graft needs the tensor
    if (header || !has_checkpoint || !wanted || !dtype) return texts_.clear(), Parse::ok;
    t.dtype = *dtype;
    by_key_[graft_key_text(checkpoint, key)].push_back(std::move(t));
    texts_.clear();
    return Parse::ok;
  }

  // The sketch's rows (msgpack floats); a sketch of another length is not one the bounds hold for.
  static bool read_sketch(MsgReader& r, ReferenceSummary& s) {
    if (r.nil()) return true;
    std::uint32_t n = 0;
    if (!r.container(false, n)) return false;
    for (std::uint32_t i = 0; i < n; ++i) {
      double v = 0;
      if (!r.number(v, false)) return false;
      if (i < s.sketch.size()) s.sketch[i] = v;
    }
    s.sketched = n == s.sketch.size();
    return true;
  }

  static bool read_stats(MsgReader& r, ReferenceSummary& s) {
    std::uint32_t n = 0;
    if (!r.container(true, n)) return false;
    for (std::uint32_t i = 0; i < n; ++i) {
      std::string_view name;
      if (!r.str(name)) return false;
      bool ok = true;
      if (name == "rms") {
        double v = 0;
        if (r.nil()) {
          s.rms.reset();
        } else if ((ok = r.number(v, false))) {
          s.rms = v;
        }
      } else if (name == "nan_count") {
        ok = r.int64(s.nan_count);
      } else if (name == "inf_count") {
        ok = r.int64(s.inf_count);
      } else {
        ok = r.skip();
      }
      if (!ok) return false;
    }
    return true;
  }

  // A JSONL trace, one line at a time: each record line with its summary (no tensor: a line's
  // values are not read as one). Lines longer than kMaxLine, and lines that are not an orchlog
  // record, end the index with a note, as a damaged frame does.
  static constexpr std::size_t kMaxLine = std::size_t{256} << 20;

  bool build_jsonl(const std::string& path, std::string& error) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return error = "cannot open the ORCH_LOG_AGAINST reference '" + path + "'", false;
    std::string line;
    std::vector<char> chunk(std::size_t{1} << 16);
    std::uint64_t number = 0;
    bool done = false;
    while (!done) {
      const std::size_t got = std::fread(chunk.data(), 1, chunk.size(), f);
      if (got == 0) done = true;
      std::size_t start = 0;
      for (std::size_t i = 0; i < got; ++i) {
        if (chunk[i] != '\n') continue;
        line.append(chunk.data() + start, i - start);
        start = i + 1;
        ++number;
        if (!index_line(line)) {
          error = "the ORCH_LOG_AGAINST reference '" + path + "' has no orchlog record at line " +
                  std::to_string(number) + " (records before it are used)";
          done = true;
          break;
        }
        line.clear();
      }
      if (!done) line.append(chunk.data() + start, got - start);
      if (line.size() > kMaxLine) {
        error = "the ORCH_LOG_AGAINST reference '" + path + "' has a line longer than 256 MiB after line " +
                std::to_string(number) + " (records before it are used)";
        done = true;
      }
    }
    std::fclose(f);
    if (by_key_.empty()) {
      if (error.empty()) error = "the ORCH_LOG_AGAINST reference '" + path + "' holds no record";
      return false;
    }
    return true;
  }

  // One line: a header or a blank line is skipped, a record indexed; false for anything else.
  bool index_line(const std::string& line) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) return true;
    if (!is_valid_utf8(line)) return false;  // emitters write UTF-8 only
    JsonValue doc;
    if (!JsonReader::parse(line, doc) || doc.kind != JsonValue::Kind::object) return false;
    if (doc.get("orchlog") != nullptr) return true;  // a run header
    const JsonValue* checkpoint = doc.get("checkpoint");
    const JsonValue* dtype_name = doc.get("dtype");
    const JsonValue* shape = doc.get("shape");
    if (!checkpoint || checkpoint->kind != JsonValue::Kind::string || !dtype_name ||
        dtype_name->kind != JsonValue::Kind::string || !shape || shape->kind != JsonValue::Kind::array)
      return false;
    const auto dtype = schema::dtype_from_name(dtype_name->text);
    if (!dtype) return false;
    ReferenceTensor t;
    t.dtype = *dtype;
    for (const JsonValue& d : shape->items) {
      const auto v = d.integer();
      if (!v) return false;
      t.shape.push_back(*v);
    }
    Key key;
    bool ok = true;
    for_each_key_part(key, [&](std::string_view part_name, auto& part) {
      using Part = typename std::decay_t<decltype(part)>::value_type;
      const JsonValue* v = doc.get(part_name);
      if (!v || v->is_null()) return part.reset();
      if constexpr (std::is_same_v<Part, std::string_view>) {
        if (v->kind != JsonValue::Kind::string) return void(ok = false);
        texts_.emplace_back(v->text);
        part = std::string_view(texts_.back());
      } else if constexpr (std::is_same_v<Part, bool>) {
        if (v->kind != JsonValue::Kind::boolean) return void(ok = false);
        part = v->b;
      } else {
        const auto i = v->integer();
        if (!i) return void(ok = false);
        part = static_cast<Part>(*i);
      }
    });
    ReferenceSummary& s = t.summary;
    if (const JsonValue* numel = doc.get("numel")) s.numel = numel->integer().value_or(-1);
    if (const JsonValue* blake3 = doc.get("blake3"); blake3 && blake3->kind == JsonValue::Kind::string)
      s.blake3 = blake3->text;
    if (const JsonValue* stats = doc.get("stats"); stats && stats->kind == JsonValue::Kind::object) {
      if (const JsonValue* rms = stats->get("rms"); rms && !rms->is_null()) s.rms = rms->real();
      if (const JsonValue* nan = stats->get("nan_count")) s.nan_count = nan->integer().value_or(0);
      if (const JsonValue* inf = stats->get("inf_count")) s.inf_count = inf->integer().value_or(0);
    }
    if (const JsonValue* sketch = doc.get("sketch");
        sketch && sketch->kind == JsonValue::Kind::array && sketch->items.size() == s.sketch.size()) {
      s.sketched = true;
      for (std::size_t i = 0; i < s.sketch.size(); ++i) {
        const auto v = sketch->items[i].real();
        if (!v) s.sketched = false;
        // Written as the shortest text of an f32: parsed to the nearest double, then to that f32.
        s.sketch[i] = v ? static_cast<double>(static_cast<float>(*v)) : 0.0;
      }
    }
    if (ok) by_key_[graft_key_text(checkpoint->text, key)].push_back(std::move(t));
    texts_.clear();
    return ok;
  }

  // Reads a key part named `name` into `key`; false when `name` is not one.
  bool key_part(MsgReader& r, std::string_view name, Key& key, bool& ok) {
    bool found = false;
    for_each_key_part(key, [&](std::string_view part_name, auto& part) {
      if (found || part_name != name) return;
      found = true;
      using Part = typename std::decay_t<decltype(part)>::value_type;
      if (r.nil()) return part.reset();
      if constexpr (std::is_same_v<Part, std::string_view>) {
        std::string_view s;
        ok = r.str(s);
        texts_.emplace_back(s);
        part = std::string_view(texts_.back());
      } else if constexpr (std::is_same_v<Part, bool>) {
        std::int8_t b = 0;
        ok = r.boolean(b);
        part = b != 0;
      } else {
        std::int64_t v = 0;
        ok = r.int64(v);
        part = static_cast<Part>(v);
      }
    });
    return found;
  }

  std::string path_;
  ReferenceUse use_ = ReferenceUse::graft;
  std::unordered_map<std::string, std::vector<ReferenceTensor>> by_key_;
  std::deque<std::string> texts_;  // text key parts of the frame being parsed (stable addresses)
};

}  // namespace detail
}  // namespace orchlog
