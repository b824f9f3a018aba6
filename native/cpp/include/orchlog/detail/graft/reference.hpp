// The reference trace a graft reads from: a full-mode binary stream, indexed
// once (checkpoint and key parts -> where each record's tensor bytes lie), so
// that a graft costs one read of the tensor it replaces.
//
// A key that occurs several times in the reference (a checkpoint logged at
// every decode step without a step number) is matched by occurrence: the
// n-th graft call under that key takes the n-th reference record under it.
#pragma once

#include <algorithm>
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
#include "orchlog/detail/decode/msgpack_reader.hpp"
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

// Where one reference record's tensor lies in the file, and what it holds.
struct ReferenceTensor {
  std::uint64_t offset = 0;  // of the first tensor byte
  std::uint64_t nbytes = 0;
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape;
};

class ReferenceIndex {
 public:
  // Reads the frames of `path`; false (with `error`) when the file cannot be
  // read or holds no record frame. Frames it cannot parse end the index (what
  // came before stays usable) and are reported in `error` as a note.
  bool build(const std::string& path, std::string& error) {
    path_ = path;
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return error = "cannot open the graft reference '" + path + "'", false;
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
        error = "the graft reference '" + path + "' is not a binary stream from byte " + std::to_string(pos) +
                " on (records before it are used)";
        break;
      }
      pos = next;
      window = std::size_t{1} << 16;
    }
    std::fclose(f);
    if (by_key_.empty()) {
      if (error.empty())
        error = "the graft reference '" + path + "' holds no record with its tensor (a full-mode trace)";
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
      } else if (name == "data") {
        std::uint32_t n = 0;
        if (r.nil()) continue;
        ok = r.bin_header(n);
        if (ok) {
          has_data = true;
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
    if (header || !has_checkpoint || !has_data || !dtype) return Parse::ok;  // nothing to graft from
    t.dtype = *dtype;
    by_key_[graft_key_text(checkpoint, key)].push_back(std::move(t));
    texts_.clear();
    return Parse::ok;
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
  std::unordered_map<std::string, std::vector<ReferenceTensor>> by_key_;
  std::deque<std::string> texts_;  // text key parts of the frame being parsed (stable addresses)
};

}  // namespace detail
}  // namespace orchlog
