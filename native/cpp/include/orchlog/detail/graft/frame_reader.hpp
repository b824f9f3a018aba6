// One frame of a reference (ORCH_GRAFT_FROM, or a binary ORCH_LOG_AGAINST),
// read from the file and checked: a reference is input the engine did not
// make, read inside the engine, so nothing in it is trusted until its frame
// checksum (CRC-32C, FORMAT.md "Frame checksum") agrees, and no length it
// claims is allocated or read before it is checked against the limits below
// and the bytes the file holds.
//
// The limits are far above anything an emitter writes (the schema's record
// frame has 26 fields; names are identifiers) and make a frame's fields, the
// tensor bytes aside, cost at most about kMaxText per text field to hold:
//   - at most kMaxEntries entries in a frame's map,
//   - field names of at most kMaxFieldName bytes, texts of at most kMaxText,
//   - at most kMaxDims dimensions (NumPy's own limit), each a non-negative int64,
//   - values skipped (the leading `values`, `meta`, and for a graft `stats` and
//     the sketch) nest at most kMaxDepth deep and are streamed past, never held;
//   - for ORCH_LOG_AGAINST, the summary read is bounded too: `stats` a map of
//     at most kMaxEntries numbers, the sketch's first kSketchRows rows kept
//     (a sketch of another length is read past and proves nothing).
// The tensor bytes are held only when the caller asks for them, and only
// when their length is the one the caller expects (graft_record.hpp checks it
// against the engine's tensor first).
#pragma once

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <unistd.h>

#include "orchlog/api_gen.hpp"
#include "orchlog/detail/encode/crc32c.hpp"
#include "orchlog/schema_gen.hpp"

namespace orchlog {
namespace detail {

inline constexpr std::uint32_t kMaxEntries = 256;
inline constexpr std::uint32_t kMaxFieldName = 64;
inline constexpr std::uint32_t kMaxText = 64u << 10;
inline constexpr std::uint32_t kMaxDims = 64;
inline constexpr int kMaxDepth = 32;

// Reads a file from an offset through a small buffer, keeping the CRC-32C of
// every byte consumed since the start (computed when a buffer's bytes are
// dropped, or asked for). Every read is checked against the size the file had
// when the reference was opened; reading past it is `cut`.
class FrameSource {
 public:
  // The buffer is on the heap: a graft call may run on an engine thread with a small stack.
  FrameSource(int fd, std::uint64_t size, std::uint64_t pos) : fd_(fd), size_(size), pos_(pos), buf_(kBuffer) {}

  std::uint64_t pos() const { return pos_; }
  std::uint64_t left() const { return size_ - pos_; }
  bool cut = false;    // the file ended inside what was asked for
  bool error = false;  // a read failed

  // Starts the CRC afresh at the next byte (a frame's first).
  void restart_crc() {
    fold();
    crc_ = 0;
  }

  // CRC-32C of every byte consumed since the start offset or restart_crc().
  std::uint32_t crc() {
    fold();
    return crc_;
  }

  bool byte(std::uint8_t& out) {
    if (at_ < have_) {  // the common case: a long array of small values is skipped a byte at a time
      out = buf_[at_++];
      ++pos_;
      return true;
    }
    return bytes(&out, 1);
  }

  bool bytes(void* out, std::size_t n) {
    auto* dst = static_cast<unsigned char*>(out);
    if (n > left()) return cut = true, false;
    while (n > 0) {
      if (at_ == have_ && !refill()) return false;
      const std::size_t take = std::min(n, have_ - at_);
      std::memcpy(dst, buf_.data() + at_, take);
      dst += take, at_ += take, pos_ += take, n -= take;
    }
    return true;
  }

  // Streams past n bytes (through the CRC), holding none of them.
  bool skip(std::uint64_t n) {
    if (n > left()) return cut = true, false;
    while (n > 0) {
      if (at_ == have_ && !refill()) return false;
      const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(n, have_ - at_));
      at_ += take, pos_ += take, n -= take;
    }
    return true;
  }

  // Passes up to `most` bytes of what the buffer holds that are each a whole one-byte msgpack value, and
  // returns how many: a long array of small values is then passed a buffer at a time, not a value at a time
  // (a hostile reference's array of 3 x 2^30 zeros took the graft 11 s).
  std::uint64_t pass_one_byte_values(std::uint64_t most) {
    const std::size_t end = at_ + static_cast<std::size_t>(std::min<std::uint64_t>(most, have_ - at_));
    std::size_t i = at_;
    while (i < end && one_byte_value(buf_[i])) ++i;
    const std::size_t n = i - at_;
    at_ = i, pos_ += n;
    return n;
  }

  // A positive or negative fixint, nil, false or true: a value that is its type byte alone.
  static bool one_byte_value(std::uint8_t t) { return t <= 0x7F || t >= 0xE0 || t == 0xC0 || t == 0xC2 || t == 0xC3; }

  template <typename U>
  bool be(U& out) {  // a big-endian unsigned integer of sizeof(U) bytes
    unsigned char b[sizeof(U)];
    if (!bytes(b, sizeof b)) return false;
    U v = 0;
    for (std::size_t i = 0; i < sizeof(U); ++i) v = static_cast<U>((v << 8) | U(b[i]));
    return out = v, true;
  }

 private:
  static constexpr std::size_t kBuffer = std::size_t{1} << 16;

  void fold() {
    if (at_ > folded_) crc_ = crc32c_update(crc_, buf_.data() + folded_, at_ - folded_);
    folded_ = at_;
  }

  bool refill() {
    fold();
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(kBuffer, left()));
    ssize_t got;
    do {
      got = ::pread(fd_, buf_.data(), want, static_cast<off_t>(pos_));
    } while (got < 0 && errno == EINTR);
    if (got < 0) return error = true, false;
    if (got == 0) return cut = true, false;  // shorter than when it was opened
    have_ = static_cast<std::size_t>(got), at_ = 0, folded_ = 0;
    return true;
  }

  int fd_;
  std::uint64_t size_, pos_;
  std::vector<unsigned char> buf_;
  std::size_t have_ = 0, at_ = 0, folded_ = 0;
  std::uint32_t crc_ = 0;
};

// What a reference record's summary proves (ORCH_LOG_AGAINST).
inline constexpr std::size_t kSketchRows = 64;
struct ReferenceSummary {
  std::int64_t numel = -1;
  std::optional<double> rms;
  std::int64_t nan_count = 0;
  std::int64_t inf_count = 0;
  std::string blake3;  // 64 hex digits, or empty
  bool sketched = false;
  std::array<double, kSketchRows> sketch{};  // the stored f32 rows, widened
};

// What a frame says, as far as a graft or ORCH_LOG_AGAINST needs it.
struct FrameFields {
  FrameFields() { parts.fill("n;"); }

  bool header = false;
  std::int64_t schema_version = 0;
  bool has_checkpoint = false;
  std::string checkpoint;
  // Each key part as graft_key_text writes it ("n;" when the frame has none).
  std::array<std::string, kKeyParts> parts;
  std::optional<DType> dtype;
  bool has_shape = false;
  std::vector<std::int64_t> shape;
  std::optional<std::int64_t> seq;
  std::string blake3;  // 64 lowercase hex digits, or empty
  bool has_data = false;
  std::uint64_t data_offset = 0, data_size = 0;
  // numel, stats and sketch: read only by a parser asked for summaries (blake3 is above).
  ReferenceSummary summary;
};

// Where a record's tensor bytes go when the caller keeps them: into `out`,
// only when they are exactly `expected` bytes.
struct KeepData {
  std::uint64_t expected = 0;
  std::vector<unsigned char>* out = nullptr;
};

class FrameParser {
 public:
  // `summaries`: read each record's numel, stats and sketch (ORCH_LOG_AGAINST); a graft skips them.
  explicit FrameParser(FrameSource& src, bool summaries = false) : s_(src), summaries_(summaries) {}

  // Reads one whole frame; false with `why` when the file ends inside it or it
  // breaks a rule above, including a missing or wrong checksum.
  bool read(FrameFields& f, const KeepData* keep, std::string& why) {
    std::uint32_t entries = 0;
    if (!container(true, entries)) return fail(why, "not a msgpack map");
    if (entries > kMaxEntries) return fail(why, "a map of " + std::to_string(entries) + " entries");
    std::uint32_t seen = 0;  // bits of the fields read, to refuse one given twice
    for (std::uint32_t i = 0; i < entries; ++i) {
      const std::uint32_t crc_before = s_.crc();  // every value read whole: no byte is pending
      std::string name;
      if (!text(name, kMaxFieldName)) return fail(why, "a field name that is not a short text");
      if (name == "crc32c") {
        std::uint8_t marker = 0;
        std::uint32_t stored = 0;
        if (!next(marker) || marker != 0xCE || !s_.be(stored)) return fail(why, "a checksum that is not a uint32");
        if (i + 1 != entries) return fail(why, "fields after the checksum");
        if (stored != crc_before) return fail(why, "it fails its checksum (CRC-32C)");
        return true;
      }
      const int bit = field_bit(name);
      if (bit >= 0) {
        if (seen & (1u << bit)) return fail(why, "the field '" + name + "' twice");
        seen |= 1u << bit;
      }
      if (!field(name, f, keep, why)) return why.empty() ? fail(why, "a malformed field '" + name + "'") : false;
    }
    return fail(why, "no checksum (crc32c) at its end");
  }

 private:
  bool fail(std::string& why, std::string what) {
    if (s_.error)
      why = "reading it failed";
    else if (s_.cut)
      why = "the file ends inside it";
    else
      why = std::move(what);
    return false;
  }

  static int field_bit(std::string_view name) {
    static constexpr std::string_view known[] = {"orchlog", "checkpoint", "dtype", "shape", "seq",
                                                 "blake3",  "data",       "numel", "stats", "sketch"};
    constexpr int n_known = static_cast<int>(sizeof known / sizeof known[0]);
    static_assert(n_known + kKeyParts <= 32, "one bit of `seen` per field");
    for (int i = 0; i < n_known; ++i)
      if (known[i] == name) return i;
    const int part = key_part_index(name);
    return part < 0 ? -1 : n_known + part;
  }

  bool field(const std::string& name, FrameFields& f, const KeepData* keep, std::string& why) {
    if (name == "orchlog") {
      f.header = true;
      return int64(f.schema_version);
    }
    if (name == "checkpoint") return f.has_checkpoint = text(f.checkpoint, kMaxText);
    if (name == "dtype") {
      std::string s;
      if (!text(s, kMaxFieldName)) return false;
      f.dtype = schema::dtype_from_name(s);
      return true;
    }
    if (name == "shape") {
      std::uint32_t dims = 0;
      if (!container(false, dims) || dims > kMaxDims) return false;
      f.shape.clear();
      for (std::uint32_t d = 0; d < dims; ++d) {
        std::int64_t v = 0;
        if (!int64(v) || v < 0) return false;
        f.shape.push_back(v);
      }
      return f.has_shape = true;
    }
    if (name == "seq") {
      std::int64_t v = 0;
      if (!int64(v)) return false;
      return f.seq = v, true;
    }
    if (name == "blake3") {
      if (nil()) return true;
      if (!text(f.blake3, 64) || f.blake3.size() != 64) return false;
      for (const char c : f.blake3)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
      return true;
    }
    if (name == "data") return data(f, keep, why);
    if (summaries_) {
      if (name == "numel") return int64(f.summary.numel);
      if (name == "stats") return stats(f.summary);
      if (name == "sketch") return sketch(f.summary);
    }
    bool ok = true;
    if (key_part(name, f, ok)) return ok;
    return skip();
  }

  bool data(FrameFields& f, const KeepData* keep, std::string& why) {
    if (nil()) return true;
    std::uint8_t marker = 0;
    if (!next(marker)) return false;
    std::uint32_t n = 0;
    if (marker == 0xC4) {
      std::uint8_t v = 0;
      if (!s_.be(v)) return false;
      n = v;
    } else if (marker == 0xC5) {
      std::uint16_t v = 0;
      if (!s_.be(v)) return false;
      n = v;
    } else if (marker != 0xC6 || !s_.be(n)) {
      return false;
    }
    f.has_data = true;
    f.data_offset = s_.pos();
    f.data_size = n;
    if (!keep) return s_.skip(n);
    if (n != keep->expected) {
      why = "its tensor is " + std::to_string(n) + " bytes where the index said " + std::to_string(keep->expected);
      return false;
    }
    keep->out->resize(n);
    return s_.bytes(keep->out->data(), n);
  }

  // The stats map: rms (a number or nil), nan_count and inf_count; other stats are read past.
  bool stats(ReferenceSummary& out) {
    std::uint32_t n = 0;
    if (!container(true, n) || n > kMaxEntries) return false;
    for (std::uint32_t i = 0; i < n; ++i) {
      std::string name;
      if (!text(name, kMaxFieldName)) return false;
      bool ok = true;
      if (name == "rms") {
        double v = 0;
        if (nil()) {
          out.rms.reset();
        } else if ((ok = number(v))) {
          out.rms = v;
        }
      } else if (name == "nan_count") {
        ok = int64(out.nan_count);
      } else if (name == "inf_count") {
        ok = int64(out.inf_count);
      } else {
        ok = skip();
      }
      if (!ok) return false;
    }
    return true;
  }

  // The sketch's rows (msgpack floats); one of another length is read past, and is not one the bounds hold for.
  bool sketch(ReferenceSummary& out) {
    if (nil()) return true;
    std::uint32_t n = 0;
    if (!container(false, n)) return false;
    if (n != kSketchRows) {
      for (std::uint32_t i = 0; i < n; ++i)
        if (!skip()) return false;
      return true;
    }
    for (std::size_t i = 0; i < kSketchRows; ++i)
      if (!number(out.sketch[i])) return false;
    return out.sketched = true;
  }

  // A msgpack float (32 or 64 bits) or int, as a double.
  bool number(double& v) {
    std::uint8_t t = 0;
    if (!peek(t)) return false;
    if (t == 0xCA) {
      pending_.reset();
      std::uint32_t bits = 0;
      if (!s_.be(bits)) return false;
      float x;
      std::memcpy(&x, &bits, sizeof x);
      return v = static_cast<double>(x), true;
    }
    if (t == 0xCB) {
      pending_.reset();
      std::uint64_t bits = 0;
      if (!s_.be(bits)) return false;
      std::memcpy(&v, &bits, sizeof v);
      return true;
    }
    std::int64_t i = 0;
    if (!int64(i)) return false;
    return v = static_cast<double>(i), true;
  }

  // Reads a key part named `name` into f.parts, in graft_key_text's form
  // whatever its type (a value of another type than the part's is a key no
  // call has); false when `name` is not a key part.
  bool key_part(const std::string& name, FrameFields& f, bool& ok) {
    const int index = key_part_index(name);
    if (index < 0) return false;
    std::string& out = f.parts[static_cast<std::size_t>(index)];
    out.clear();
    std::uint8_t t = 0;
    if (!(ok = peek(t))) return true;
    if (t == 0xC0 || t == 0xC2 || t == 0xC3) {
      pending_.reset();
      out = t == 0xC0 ? "n;" : (t == 0xC3 ? "b1;" : "b0;");
    } else if ((t >= 0xA0 && t <= 0xBF) || (t >= 0xD9 && t <= 0xDB)) {
      std::string s;
      ok = text(s, kMaxText);
      if (ok) out.append("s").append(std::to_string(s.size())).append(":").append(s);
    } else {
      std::int64_t v = 0;
      ok = int64(v);
      if (ok) out.append("i").append(std::to_string(v)).append(";");
    }
    return true;
  }

  static int key_part_index(std::string_view name) {
    int k = 0, found = -1;
    Key key;
    for_each_key_part(key, [&](std::string_view part, const auto&) {
      if (part == name) found = k;
      ++k;
    });
    return found;
  }

  // Takes a nil if one is next; anything else stays next.
  bool nil() {
    std::uint8_t b = 0;
    if (!peek(b) || b != 0xC0) return false;
    pending_.reset();
    return true;
  }

  // The next byte, left to be read again (a one-byte lookahead).
  bool peek(std::uint8_t& b) {
    if (pending_) return b = *pending_, true;
    if (!s_.byte(b)) return false;
    pending_ = b;
    return true;
  }

  bool next(std::uint8_t& b) {
    if (pending_) {
      b = *pending_;
      pending_.reset();
      return true;
    }
    return s_.byte(b);
  }

  bool text(std::string& out, std::uint32_t limit) {
    std::uint8_t t = 0;
    if (!next(t)) return false;
    std::uint32_t n = 0;
    if (t >= 0xA0 && t <= 0xBF) {
      n = t & 0x1Fu;
    } else if (t == 0xD9) {
      std::uint8_t v = 0;
      if (!s_.be(v)) return false;
      n = v;
    } else if (t == 0xDA) {
      std::uint16_t v = 0;
      if (!s_.be(v)) return false;
      n = v;
    } else if (t != 0xDB || !s_.be(n)) {
      return false;
    }
    if (n > limit || n > s_.left()) return false;
    out.resize(n);
    return s_.bytes(out.data(), n);
  }

  bool container(bool map, std::uint32_t& n) {
    std::uint8_t t = 0;
    if (!next(t)) return false;
    const unsigned fix = map ? 0x80 : 0x90;
    if (t >= fix && t <= fix + 0x0F) return n = t & 0x0Fu, true;
    if (t == (map ? 0xDE : 0xDC)) {
      std::uint16_t v = 0;
      if (!s_.be(v)) return false;
      return n = v, true;
    }
    if (t == (map ? 0xDF : 0xDD)) return s_.be(n);
    return false;
  }

  // A msgpack int that fits int64.
  bool int64(std::int64_t& v) {
    std::uint8_t t = 0;
    if (!next(t)) return false;
    if (t <= 0x7F) return v = t, true;
    if (t >= 0xE0) return v = static_cast<std::int8_t>(t), true;
    switch (t) {
      case 0xCC: {
        std::uint8_t u = 0;
        return s_.be(u) && (v = u, true);
      }
      case 0xCD: {
        std::uint16_t u = 0;
        return s_.be(u) && (v = u, true);
      }
      case 0xCE: {
        std::uint32_t u = 0;
        return s_.be(u) && (v = u, true);
      }
      case 0xCF: {
        std::uint64_t u = 0;
        if (!s_.be(u) || u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return false;
        return v = static_cast<std::int64_t>(u), true;
      }
      case 0xD0: {
        std::uint8_t u = 0;
        return s_.be(u) && (v = static_cast<std::int8_t>(u), true);
      }
      case 0xD1: {
        std::uint16_t u = 0;
        return s_.be(u) && (v = static_cast<std::int16_t>(u), true);
      }
      case 0xD2: {
        std::uint32_t u = 0;
        return s_.be(u) && (v = static_cast<std::int32_t>(u), true);
      }
      case 0xD3: {
        std::uint64_t u = 0;
        if (!s_.be(u)) return false;
        std::memcpy(&v, &u, sizeof v);
        return true;
      }
      default:
        return false;
    }
  }

  // Streams past one value of the types orchlog writes, nested at most kMaxDepth deep.
  bool skip() {
    std::uint64_t left[kMaxDepth];
    int depth = 0;
    std::uint64_t todo = 1;
    for (;;) {
      while (todo == 0) {
        if (depth == 0) return true;
        todo = left[--depth];
      }
      if (todo >= 8 && !pending_) {
        todo -= s_.pass_one_byte_values(todo);
        if (todo == 0) continue;
      }
      --todo;
      std::uint8_t t = 0;
      if (!next(t)) return false;
      std::uint64_t bytes = 0, items = 0;
      if (FrameSource::one_byte_value(t)) {
      } else if (t >= 0xA0 && t <= 0xBF) {
        bytes = t & 0x1Fu;
      } else if (t >= 0x80 && t <= 0x8F) {
        items = 2u * (t & 0x0Fu);
      } else if (t >= 0x90 && t <= 0x9F) {
        items = t & 0x0Fu;
      } else if (t == 0xC4 || t == 0xD9 || t == 0xCC || t == 0xD0) {
        std::uint8_t n = 0;
        if (t == 0xCC || t == 0xD0) {
          bytes = 1;
        } else {
          if (!s_.be(n)) return false;
          bytes = n;
        }
      } else if (t == 0xC5 || t == 0xDA || t == 0xDC || t == 0xDE) {
        std::uint16_t n = 0;
        if (!s_.be(n)) return false;
        if (t == 0xDC)
          items = n;
        else if (t == 0xDE)
          items = 2u * n;
        else
          bytes = n;
      } else if (t == 0xC6 || t == 0xDB || t == 0xDD || t == 0xDF) {
        std::uint32_t n = 0;
        if (!s_.be(n)) return false;
        if (t == 0xDD)
          items = n;
        else if (t == 0xDF)
          items = 2u * std::uint64_t{n};
        else
          bytes = n;
      } else if (t == 0xCA || t == 0xCE || t == 0xD2) {
        bytes = 4;
      } else if (t == 0xCB || t == 0xCF || t == 0xD3) {
        bytes = 8;
      } else if (t == 0xCD || t == 0xD1) {
        bytes = 2;
      } else {
        return false;  // ext types and 0xc1: never in what orchlog writes
      }
      if (!s_.skip(bytes)) return false;
      if (items) {
        if (items > s_.left()) return s_.cut = true, false;  // at least a byte each
        if (depth == kMaxDepth) return false;
        left[depth++] = todo, todo = items;
      }
    }
  }

  FrameSource& s_;
  bool summaries_;
  std::optional<std::uint8_t> pending_;
};

}  // namespace detail
}  // namespace orchlog
