// The reference trace a graft reads from: a full-mode binary stream, indexed
// once (checkpoint and key parts -> where each record's frame lies), so that
// a graft costs one read of the frame it takes its tensor from, checked again
// whole before a byte of it reaches the engine (frame_reader.hpp).
//
// A key that occurs several times in the reference (a checkpoint logged at
// every decode step without a step number) is matched by occurrence: the
// n-th graft call under that key takes the n-th reference record under it.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
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

// Where one reference record lies in the file, and what it holds.
struct ReferenceTensor {
  std::uint64_t frame = 0;   // offset of the frame's first byte
  std::uint64_t offset = 0;  // of the first tensor byte
  std::uint64_t nbytes = 0;
  std::int64_t seq = 0;
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape;
};

class ReferenceIndex {
 public:
  ReferenceIndex() = default;
  ReferenceIndex(const ReferenceIndex&) = delete;
  ReferenceIndex& operator=(const ReferenceIndex&) = delete;
  ReferenceIndex(ReferenceIndex&& o) noexcept
      : path_(std::move(o.path_)), fd_(o.fd_), size_(o.size_), by_key_(std::move(o.by_key_)) {
    o.fd_ = -1;
  }
  ~ReferenceIndex() {
    if (fd_ >= 0) ::close(fd_);
  }

  // Reads every frame of `path` once, checking each (frame_reader.hpp); false
  // (with `error`) when the file cannot be read, is not a regular file, or holds
  // no usable record. The first frame that fails a check ends the index: what
  // came before stays usable and `error` says where and why. Ending there,
  // rather than skipping the frame, keeps occurrence matching right: a damaged
  // frame's key is unknown, so every later record under its key could be
  // another call's.
  bool build(const std::string& path, std::string& error) {
    path_ = path;
    int fd;
    do {
      fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return error = "cannot open the graft reference '" + path + "': " + std::strerror(errno), false;
    fd_ = fd;
    struct stat st{};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
      return error = "the graft reference '" + path + "' is not a regular file", false;
    size_ = static_cast<std::uint64_t>(st.st_size);
    FrameSource src(fd, size_, 0);
    std::int64_t next_seq = 0;
    bool headed = false;
    while (src.left() > 0) {
      const std::uint64_t at = src.pos();
      src.restart_crc();
      FrameFields f;
      std::string why;
      if (!FrameParser(src).read(f, nullptr, why)) {
        error = stop(at, why);
        break;
      }
      if (f.header) {
        if (headed) {
          error = stop(at, "a second run header (two runs in one file?)");
          break;
        }
        if (f.schema_version < 2) {
          error = "the graft reference '" + path + "' is schema " + std::to_string(f.schema_version) +
                  ": its frames carry no checksum, so a damaged record could not be told from a sound one; "
                  "record the reference again with this orchlog";
          by_key_.clear();
          break;
        }
        headed = true;
        continue;
      }
      if (!headed) {
        error = stop(at, "a record before the run header");
        break;
      }
      if (f.seq != next_seq) {
        error = stop(at, "a record numbered " + (f.seq ? std::to_string(*f.seq) : std::string("(none)")) + " where " +
                             std::to_string(next_seq) + " was next (records missing, repeated or moved)");
        break;
      }
      ++next_seq;
      if (!f.has_checkpoint || !f.has_data || !f.dtype || !f.has_shape) continue;  // nothing to graft from
      ReferenceTensor t;
      t.frame = at, t.offset = f.data_offset, t.nbytes = f.data_size, t.seq = *f.seq, t.dtype = *f.dtype;
      t.shape = std::move(f.shape);
      by_key_[key_text(f)].push_back(std::move(t));
    }
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

  // Reads a record's frame again, checks it whole (its checksum, that it is
  // the record indexed under `key_text`, and the BLAKE3 of its tensor bytes)
  // and leaves the tensor bytes in `out`; false with `why` when any check
  // fails. `out` never holds more than t.nbytes, which the caller has checked
  // against the engine's tensor.
  bool read(const ReferenceTensor& t, const std::string& key_text, std::vector<unsigned char>& out,
            std::string& why) const {
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
  // The lookup text of a frame's checkpoint and key parts, as graft_key_text writes a call's.
  static std::string key_text(const FrameFields& f) {
    std::string out;
    append_key_text(out, std::optional<std::string_view>(f.checkpoint));
    for (const std::string& part : f.parts) out += part;
    return out;
  }

  std::string stop(std::uint64_t at, const std::string& why) const {
    return "the graft reference '" + path_ + "' is unusable from byte " + std::to_string(at) + " on: " + why +
           " (records before it are used)";
  }

  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::unordered_map<std::string, std::vector<ReferenceTensor>> by_key_;
};

}  // namespace detail
}  // namespace orchlog
