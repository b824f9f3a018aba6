// The steps from a tensor and its key to encoded bytes, shared by the
// canonical encoder (encode.hpp) and the logger: checking the tensor,
// summarising it (stats and BLAKE3 over every byte), ordering meta, and
// encoding the record view with the JSONL and msgpack visitors.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchlog/blake3.hpp"
#include "orchlog/detail/encode/jsonl_writer.hpp"
#include "orchlog/detail/encode/msgpack_writer.hpp"
#include "orchlog/detail/encode/stats.hpp"
#include "orchlog/detail/encode/utf8.hpp"
#include "orchlog/schema_gen.hpp"
#include "orchlog/types.hpp"

namespace orchlog {
namespace detail {

struct TensorSize {
  std::int64_t numel = 0;
  std::uint64_t nbytes = 0;
};

// The element count and byte size of a tensor, or nullopt with `error` set
// when the tensor cannot be recorded as given.
inline std::optional<TensorSize> measure(const Tensor& t, std::string& error) {
  TensorSize size{1, 0};
  for (std::size_t i = 0; i < t.shape.size(); ++i) {
    const std::int64_t d = t.shape[i];
    if (d < 0) {
      error = "shape has a negative dimension (" + std::to_string(d) + ")";
      return std::nullopt;
    }
    if (d != 0 && size.numel > std::numeric_limits<std::int64_t>::max() / d) {
      error = "shape has more elements than fit in 64 bits";
      return std::nullopt;
    }
    size.numel *= d;
  }
  const auto itemsize = static_cast<std::uint64_t>(schema::dtype_size(t.dtype));
  if (static_cast<std::uint64_t>(size.numel) > std::numeric_limits<std::size_t>::max() / itemsize) {
    error = "tensor is larger than the address space";
    return std::nullopt;
  }
  size.nbytes = static_cast<std::uint64_t>(size.numel) * itemsize;
  if (t.data == nullptr && size.nbytes > 0) {
    error = "null data pointer for a tensor of " + std::to_string(size.numel) + " elements";
    return std::nullopt;
  }
  return size;
}

struct Summary {
  schema::Stats stats;
  char blake3[65] = {};
};

inline Summary summarize(const Tensor& t, const TensorSize& size) {
  Summary s;
  const auto* bytes = static_cast<const std::uint8_t*>(t.data);
  s.stats = compute_stats(t.dtype, bytes, size.numel);
  blake3_hex(bytes, static_cast<std::size_t>(size.nbytes), s.blake3);
  return s;
}

// Meta entries sorted by the UTF-8 bytes of their keys (keys repaired first,
// since the repaired text is what gets written). A repeated key keeps its
// last value, as a Python dict would.
class SortedMeta {
 public:
  SortedMeta() = default;
  explicit SortedMeta(MetaSpan items) {
    repaired_.reserve(items.size);  // string_views below point into it: no reallocation
    entries_.reserve(items.size);
    for (std::size_t i = 0; i < items.size; ++i) {
      std::string_view key = items.data[i].key;
      if (!is_valid_utf8(key)) {
        repaired_.emplace_back();
        append_repaired_utf8(repaired_.back(), key);
        key = repaired_.back();
      }
      entries_.push_back({key, items.data[i].value});
    }
    std::stable_sort(entries_.begin(), entries_.end(),
                     [](const schema::MetaEntry& a, const schema::MetaEntry& b) { return a.key < b.key; });
    std::vector<schema::MetaEntry> unique;
    for (std::size_t i = 0; i < entries_.size(); ++i)
      if (i + 1 == entries_.size() || entries_[i + 1].key != entries_[i].key) unique.push_back(entries_[i]);
    entries_.swap(unique);
  }
  SortedMeta(const SortedMeta&) = delete;
  SortedMeta& operator=(const SortedMeta&) = delete;

  schema::MetaView view() const { return {entries_.data(), entries_.size()}; }

 private:
  std::vector<std::string> repaired_;
  std::vector<schema::MetaEntry> entries_;
};

// Everything about a record that does not depend on the writer's state.
struct RecordParts {
  std::string_view checkpoint;
  Key key;
  const Tensor* tensor = nullptr;
  TensorSize size;
  Summary summary;
  const SortedMeta* meta = nullptr;
};

// Fields the writer supplies: who wrote it, in which order, how many values.
struct WriterFields {
  std::string_view team;
  std::int32_t rank = 0;
  std::int32_t world_size = 1;
  std::int64_t seq = 0;
  std::int64_t values = 10;
};

inline schema::RecordView record_view(const RecordParts& p, const WriterFields& w) {
  schema::RecordView v;
  v.checkpoint = p.checkpoint;
  v.team = w.team;
  v.token_idx = p.key.token_idx;
  v.layer = p.key.layer;
  v.stage = p.key.stage;
  v.step = p.key.step;
  v.rank = w.rank;
  v.world_size = w.world_size;
  v.seq = w.seq;
  v.dtype = p.tensor->dtype;
  v.shape = {p.tensor->shape.data(), p.tensor->shape.size()};
  v.numel = p.size.numel;
  const auto* bytes = static_cast<const std::uint8_t*>(p.tensor->data);
  const std::int64_t count = w.values < 0 ? p.size.numel : std::min(w.values, p.size.numel);
  v.values = {p.tensor->dtype, bytes, count};
  v.stats = p.summary.stats;
  v.blake3 = std::string_view(p.summary.blake3, 64);
  if (p.meta != nullptr) v.meta = p.meta->view();
  v.data = {bytes, static_cast<std::size_t>(p.size.nbytes)};
  return v;
}

// One JSONL line, newline included.
inline void append_jsonl(std::string& out, const schema::RecordView& v) {
  JsonlWriter w(out);
  schema::visit_record<schema::Encoding::jsonl>(w, v);
  out.push_back('\n');
}

// A msgpack frame up to and including the `data` bin header; returns the
// tensor bytes that complete it.
inline schema::BytesView append_frame_prefix(std::string& out, const schema::RecordView& v) {
  MsgpackWriter w(out);
  schema::visit_record<schema::Encoding::msgpack>(w, v);
  return w.data();
}

inline void append_header_jsonl(std::string& out, const schema::HeaderView& h) {
  JsonlWriter w(out);
  schema::visit_header<schema::Encoding::jsonl>(w, h);
  out.push_back('\n');
}

inline void append_header_frame(std::string& out, const schema::HeaderView& h) {
  MsgpackWriter w(out);
  schema::visit_header<schema::Encoding::msgpack>(w, h);
}

}  // namespace detail
}  // namespace orchlog
