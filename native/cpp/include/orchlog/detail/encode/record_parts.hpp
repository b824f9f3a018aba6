// The steps from a tensor and its key to encoded bytes, shared by the
// canonical encoder (encode.hpp) and the logger: the parts of a record,
// meta in canonical order, the fields read off the tensor, and encoding the
// record view (fields_gen.hpp) with the JSONL and msgpack visitors.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchlog/api_gen.hpp"
#include "orchlog/detail/encode/digest.hpp"
#include "orchlog/detail/encode/jsonl_writer.hpp"
#include "orchlog/detail/encode/msgpack_writer.hpp"
#include "orchlog/detail/encode/utf8.hpp"
#include "orchlog/detail/fields_gen.hpp"
#include "orchlog/schema_gen.hpp"
#include "orchlog/types.hpp"

namespace orchlog {
namespace detail {

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
  CallFields call;
  const Tensor* tensor = nullptr;
  TensorSize size;
  TensorDigest digest;
  const SortedMeta* meta = nullptr;
};

inline schema::MetaView meta_view(const RecordParts& p) {
  return p.meta != nullptr ? p.meta->view() : schema::MetaView{};
}

// The fields read off the tensor as given, `values` of its leading elements
// kept (kAllValues: every one). record_view (fields_gen.hpp) fills the rest.
inline void set_tensor_fields(schema::RecordView& v, const RecordParts& p, std::int64_t values) {
  const auto* bytes = static_cast<const std::uint8_t*>(p.tensor->data);
  v.dtype = p.tensor->dtype;
  v.shape = {p.tensor->shape.data(), p.tensor->shape.size()};
  v.numel = p.size.numel;
  v.values = {p.tensor->dtype, bytes, values < 0 ? p.size.numel : std::min(values, p.size.numel)};
  v.data = {bytes, static_cast<std::size_t>(p.size.nbytes)};
}

// One JSONL line, newline included.
inline void append_jsonl(std::string& out, const schema::RecordView& v) {
  JsonlWriter w(out);
  schema::visit_record<schema::Encoding::jsonl>(w, v);
  w.newline();
}

// A msgpack frame but its tensor bytes, which go at `out[data_at]` (the
// writer sends out[..data_at], the tensor bytes, then out[data_at..]).
struct FrameSplit {
  std::size_t data_at = 0;
  schema::BytesView data;
};

inline FrameSplit append_frame(std::string& out, const schema::RecordView& v) {
  MsgpackWriter w(out);
  schema::visit_record<schema::Encoding::msgpack>(w, v);
  return {w.data_at(), w.data()};
}

inline void append_header_jsonl(std::string& out, const schema::HeaderView& h) {
  JsonlWriter w(out);
  schema::visit_header<schema::Encoding::jsonl>(w, h);
  w.newline();
}

inline void append_header_frame(std::string& out, const schema::HeaderView& h) {
  MsgpackWriter w(out);
  schema::visit_header<schema::Encoding::msgpack>(w, h);
}

}  // namespace detail
}  // namespace orchlog
