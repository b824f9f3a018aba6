// The canonical encoder: the exact JSONL line and msgpack frame of one record
// or run header, as every orchlog emitter writes them (FORMAT.md). The logger
// uses the same steps; this entry point exists for conformance tests and for
// tools that want the bytes without a file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchlog/detail/encode/record_parts.hpp"
#include "orchlog/types.hpp"

namespace orchlog {

struct RecordInput {
  std::string_view checkpoint;  // raw bytes; invalid UTF-8 is repaired
  std::string_view team;
  Key key;
  std::int32_t rank = 0;
  std::int32_t world_size = 1;
  std::int64_t seq = 0;
  Tensor tensor;
  std::int64_t values = 10;  // leading values kept; kAllValues keeps all
  std::vector<MetaItem> meta;
};

struct EncodedRecord {
  std::string jsonl;  // one line with its newline
  std::string frame;  // one msgpack map, tensor bytes included
  std::string blake3;
};

// The encoded record, or nullopt (and `error`) when the tensor is malformed.
inline std::optional<EncodedRecord> encode_record(const RecordInput& in, std::string* error = nullptr) {
  std::string why;
  const auto size = detail::measure(in.tensor, why);
  if (!size) {
    if (error) *error = why;
    return std::nullopt;
  }
  const detail::SortedMeta meta(detail::span_of(in.meta));
  detail::RecordParts parts;
  parts.checkpoint = in.checkpoint;
  parts.key = in.key;
  parts.tensor = &in.tensor;
  parts.size = *size;
  parts.summary = detail::summarize(in.tensor, *size);
  parts.meta = &meta;
  const schema::RecordView view = detail::record_view(parts, {in.team, in.rank, in.world_size, in.seq, in.values});
  EncodedRecord out;
  detail::append_jsonl(out.jsonl, view);
  const schema::BytesView data = detail::append_frame_prefix(out.frame, view);
  out.frame.append(reinterpret_cast<const char*>(data.data), data.size);
  out.blake3.assign(parts.summary.blake3, 64);
  return out;
}

struct HeaderInput {
  std::string_view language = "cpp";  // producer.language: cpp, c, rust or python
  std::string_view created;           // RFC 3339 UTC, e.g. 2026-01-02T03:04:05Z
  std::string_view team;
  std::optional<std::string_view> model;
  std::optional<std::string_view> git_commit;
  std::int32_t rank = 0;
  std::int32_t world_size = 1;
  std::int32_t values = 10;  // -1: all
  std::optional<std::string_view> select;
  std::vector<MetaItem> config;
};

struct EncodedHeader {
  std::string jsonl;
  std::string frame;
};

inline EncodedHeader encode_header(const HeaderInput& in) {
  const detail::SortedMeta config(detail::span_of(in.config));
  schema::HeaderView h;
  h.orchlog = schema::kSchemaVersion;
  h.producer = {in.language, "orchlog", schema::kLibraryVersion};
  h.team = in.team;
  h.model = in.model;
  h.git_commit = in.git_commit;
  h.created = in.created;
  h.rank = in.rank;
  h.world_size = in.world_size;
  h.values = in.values;
  h.select = in.select;
  h.config = config.view();
  EncodedHeader out;
  detail::append_header_jsonl(out.jsonl, h);
  detail::append_header_frame(out.frame, h);
  return out;
}

}  // namespace orchlog
