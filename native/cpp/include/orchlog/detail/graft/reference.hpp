// The reference trace a graft or ORCH_LOG_AGAINST reads from, indexed once
// (checkpoint and key parts -> each record's place and what its summary
// proves), so that a graft costs one read of the frame it takes its tensor
// from, checked again whole before a byte of it reaches the engine
// (frame_reader.hpp), and a comparison against a summary none.
//
// A graft reads a full-mode binary stream and indexes the records that carry
// their tensor. ORCH_LOG_AGAINST indexes every record, with what its summary
// proves (stats, sketch, BLAKE3) and where its tensor lies when it has one,
// from a binary stream (full or summary frames, held to the same checks as a
// graft's) or a JSONL trace.
//
// A key that occurs several times in the reference (a checkpoint logged at
// every decode step without a step number) is matched by occurrence: the
// n-th call under that key takes the n-th reference record under it.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "orchlog/api_gen.hpp"
#include "orchlog/blake3.hpp"
#include "orchlog/detail/decode/json_reader.hpp"
#include "orchlog/detail/encode/utf8.hpp"
#include "orchlog/detail/graft/frame_reader.hpp"
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

// Where one reference record lies in the file, and what it holds.
struct ReferenceTensor {
  std::uint64_t frame = 0;   // offset of the frame's first byte (binary streams)
  std::uint64_t offset = 0;  // of the first tensor byte
  std::uint64_t nbytes = 0;
  bool has_data = false;  // the record carries its tensor (a JSONL record never does)
  std::int64_t seq = 0;
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape;
  ReferenceSummary summary;  // read for ORCH_LOG_AGAINST only
};

// What the index is for: a graft needs tensors, a comparison every record's summary.
enum class ReferenceUse { graft, against };

class ReferenceIndex {
 public:
  ReferenceIndex() = default;
  ReferenceIndex(const ReferenceIndex&) = delete;
  ReferenceIndex& operator=(const ReferenceIndex&) = delete;
  ReferenceIndex(ReferenceIndex&& o) noexcept
      : path_(std::move(o.path_)), use_(o.use_), fd_(o.fd_), size_(o.size_), by_key_(std::move(o.by_key_)) {
    o.fd_ = -1;
  }
  ~ReferenceIndex() {
    if (fd_ >= 0) ::close(fd_);
  }

  // Reads every record of `path` once; false (with `error`) when the file
  // cannot be read, is not a regular file, or holds no usable record. A binary
  // stream's frames are each checked (frame_reader.hpp); the first frame that
  // fails a check ends the index: what came before stays usable and `error`
  // says where and why. Ending there, rather than skipping the frame, keeps
  // occurrence matching right: a damaged frame's key is unknown, so every
  // later record under its key could be another call's. A JSONL trace
  // (ORCH_LOG_AGAINST only) ends the same way at its first line that is no
  // orchlog record.
  bool build(const std::string& path, std::string& error, ReferenceUse use = ReferenceUse::graft) {
    path_ = path;
    use_ = use;
    int fd;
    do {
      fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return error = "cannot open the " + what() + " '" + path + "': " + std::strerror(errno), false;
    fd_ = fd;
    struct stat st{};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
      return error = "the " + what() + " '" + path + "' is not a regular file", false;
    size_ = static_cast<std::uint64_t>(st.st_size);
    if (size_ > 0 && first_byte() == '{') {  // a JSONL trace: its header line opens with {"orchlog":
      if (use == ReferenceUse::graft)
        return error = "the graft reference '" + path + "' is JSONL; a graft needs a full-mode binary stream", false;
      build_jsonl(error);
    } else {
      build_frames(error);
    }
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

  // Reads a record's frame again, checks it whole (its checksum, that it is
  // the record indexed under `key_text`, and the BLAKE3 of its tensor bytes)
  // and leaves the tensor bytes in `out`; false with `why` when any check
  // fails. `out` never holds more than t.nbytes, which the caller has checked
  // against the engine's tensor. Only for a record that has its tensor.
  bool read(const ReferenceTensor& t, const std::string& key_text, std::vector<unsigned char>& out,
            std::string& why) const {
    if (!t.has_data) return why = "it has no tensor", false;
    FrameSource src(fd_, size_, t.frame);
    FrameFields f;
    const KeepData keep{t.nbytes, &out};
    if (!FrameParser(src).read(f, &keep, why)) return false;
    if (f.header || !f.has_checkpoint || !f.dtype || !f.has_shape || !f.has_data || f.data_offset != t.offset ||
        f.seq != t.seq || *f.dtype != t.dtype || f.shape != t.shape || ReferenceIndex::key_text(f) != key_text)
      return why = "it is not the record indexed there (was the file changed?)", false;
    if (f.blake3.size() != 64) return why = "it has no BLAKE3 of its tensor", false;
    char hex[65];
    blake3_hex(out.data(), out.size(), hex);
    if (f.blake3.compare(0, 64, hex, 64) != 0) return why = "its tensor bytes do not match their BLAKE3", false;
    return true;
  }

  std::size_t records() const {
    std::size_t n = 0;
    for (const auto& kv : by_key_) n += kv.second.size();
    return n;
  }

 private:
  std::string what() const { return use_ == ReferenceUse::graft ? "graft reference" : "ORCH_LOG_AGAINST reference"; }

  int first_byte() const {
    unsigned char c = 0;
    ssize_t got;
    do {
      got = ::pread(fd_, &c, 1, 0);
    } while (got < 0 && errno == EINTR);
    return got == 1 ? c : -1;
  }

  // A binary stream, one checked frame at a time.
  void build_frames(std::string& error) {
    FrameSource src(fd_, size_, 0);
    std::int64_t next_seq = 0;
    bool headed = false;
    const bool against = use_ == ReferenceUse::against;
    while (src.left() > 0) {
      const std::uint64_t at = src.pos();
      src.restart_crc();
      FrameFields f;
      std::string why;
      if (!FrameParser(src, against).read(f, nullptr, why)) {
        error = stop(at, why);
        return;
      }
      if (f.header) {
        if (headed) {
          error = stop(at, "a second run header (two runs in one file?)");
          return;
        }
        if (f.schema_version < 2) {
          error = "the " + what() + " '" + path_ + "' is schema " + std::to_string(f.schema_version) +
                  ": its frames carry no checksum, so a damaged record could not be told from a sound one; "
                  "record the reference again with this orchlog";
          by_key_.clear();
          return;
        }
        headed = true;
        continue;
      }
      if (!headed) {
        error = stop(at, "a record before the run header");
        return;
      }
      if (f.seq != next_seq) {
        error = stop(at, "a record numbered " + (f.seq ? std::to_string(*f.seq) : std::string("(none)")) + " where " +
                             std::to_string(next_seq) + " was next (records missing, repeated or moved)");
        return;
      }
      ++next_seq;
      // A graft needs the tensor; a comparison takes a summary record too.
      if (!f.has_checkpoint || !f.dtype || !f.has_shape || (!against && !f.has_data)) continue;
      ReferenceTensor t;
      t.frame = at, t.seq = *f.seq, t.dtype = *f.dtype;
      t.has_data = f.has_data, t.offset = f.data_offset, t.nbytes = f.data_size;
      t.shape = std::move(f.shape);
      if (against) {
        t.summary = std::move(f.summary);
        t.summary.blake3 = f.blake3;
      }
      by_key_[key_text(f)].push_back(std::move(t));
    }
  }

  // A JSONL trace, one line at a time through the opened file: each record
  // line with its summary (no tensor: a line's values are not read as one).
  // Lines longer than kMaxLine, and lines that are not an orchlog record, end
  // the index with a note, as a damaged frame does.
  static constexpr std::size_t kMaxLine = std::size_t{256} << 20;

  void build_jsonl(std::string& error) {
    std::string line;
    std::vector<char> chunk(std::size_t{1} << 16);
    std::uint64_t number = 0, pos = 0;
    bool done = false;
    while (!done) {
      ssize_t got;
      do {
        got = ::pread(fd_, chunk.data(), chunk.size(), static_cast<off_t>(pos));
      } while (got < 0 && errno == EINTR);
      if (got < 0) {
        error = "reading the ORCH_LOG_AGAINST reference '" + path_ + "' failed after line " + std::to_string(number) +
                " (records before it are used)";
        return;
      }
      if (got == 0 || pos + static_cast<std::uint64_t>(got) >= size_) done = true;  // as large as when opened
      const std::size_t n =
          static_cast<std::size_t>(std::min<std::uint64_t>(static_cast<std::uint64_t>(got), size_ - pos));
      pos += n;
      std::size_t start = 0;
      for (std::size_t i = 0; i < n; ++i) {
        if (chunk[i] != '\n') continue;
        line.append(chunk.data() + start, i - start);
        start = i + 1;
        ++number;
        if (!index_line(line)) {
          error = "the ORCH_LOG_AGAINST reference '" + path_ + "' has no orchlog record at line " +
                  std::to_string(number) + " (records before it are used)";
          return;
        }
        line.clear();
      }
      line.append(chunk.data() + start, n - start);
      if (line.size() > kMaxLine) {
        error = "the ORCH_LOG_AGAINST reference '" + path_ + "' has a line longer than 256 MiB after line " +
                std::to_string(number) + " (records before it are used)";
        return;
      }
    }
    // A last line without its newline: a whole record is used, one cut short (a crash, a writer
    // still at work) is said as a note.
    if (!line.empty() && !index_line(line))
      error = "the ORCH_LOG_AGAINST reference '" + path_ + "' ends inside line " + std::to_string(number + 1) +
              " (records before it are used)";
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
    std::deque<std::string> texts;  // the text key parts (stable addresses)
    bool ok = true;
    for_each_key_part(key, [&](std::string_view part_name, auto& part) {
      using Part = typename std::decay_t<decltype(part)>::value_type;
      const JsonValue* v = doc.get(part_name);
      if (!v || v->is_null()) return part.reset();
      if constexpr (std::is_same_v<Part, std::string_view>) {
        if (v->kind != JsonValue::Kind::string) return void(ok = false);
        texts.emplace_back(v->text);
        part = std::string_view(texts.back());
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
      s.sketched = true;  // schema 2: the rows as numbers
      for (std::size_t i = 0; i < s.sketch.size(); ++i) {
        const auto v = sketch->items[i].real();
        if (!v) s.sketched = false;
        // Written as the shortest text of an f32: parsed to the nearest double, then to that f32.
        s.sketch[i] = v ? static_cast<double>(static_cast<float>(*v)) : 0.0;
      }
    } else if (sketch && sketch->kind == JsonValue::Kind::string && sketch->text.size() == 8 * s.sketch.size()) {
      s.sketched = true;  // schema 3: the rows' f32 bits in hex, exact
      for (std::size_t i = 0; i < s.sketch.size(); ++i) {
        const auto v = sketch->hex_f32(i);
        if (!v) s.sketched = false;
        s.sketch[i] = v ? static_cast<double>(*v) : 0.0;
      }
    }
    if (ok) by_key_[graft_key_text(checkpoint->text, key)].push_back(std::move(t));
    return ok;
  }

  // The lookup text of a frame's checkpoint and key parts, as graft_key_text writes a call's.
  static std::string key_text(const FrameFields& f) {
    std::string out;
    append_key_text(out, std::optional<std::string_view>(f.checkpoint));
    for (const std::string& part : f.parts) out += part;
    return out;
  }

  std::string stop(std::uint64_t at, const std::string& why) const {
    return "the " + what() + " '" + path_ + "' is unusable from byte " + std::to_string(at) + " on: " + why +
           " (records before it are used)";
  }

  std::string path_;
  ReferenceUse use_ = ReferenceUse::graft;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::unordered_map<std::string, std::vector<ReferenceTensor>> by_key_;
};

}  // namespace detail
}  // namespace orchlog
