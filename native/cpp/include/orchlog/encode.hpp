// The canonical encoder: the exact JSONL line and msgpack frame of one record
// or run header, as every orchlog emitter writes them (FORMAT.md). The logger
// uses the same steps; this entry point exists for conformance tests and for
// tools that want the bytes without a file. Its inputs, RecordInput and
// HeaderInput, are generated from the schema (api_gen.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchlog/api_gen.hpp"
#include "orchlog/detail/compiled.hpp"
#include "orchlog/types.hpp"

namespace orchlog {

struct EncodedRecord {
  std::string jsonl;  // one line with its newline
  std::string frame;  // one msgpack map, tensor bytes included
  std::string blake3;
};

struct EncodedHeader {
  std::string jsonl;
  std::string frame;
};

// The encoded record, or nullopt (and `error`) when the tensor is malformed.
ORCHLOG_API std::optional<EncodedRecord> encode_record(const RecordInput& in, std::string* error = nullptr);
ORCHLOG_API EncodedHeader encode_header(const HeaderInput& in);

}  // namespace orchlog

#if ORCHLOG_DEFINE_API
#include "orchlog/detail/encode/record_parts.hpp"

namespace orchlog {

ORCHLOG_API std::optional<EncodedRecord> encode_record(const RecordInput& in, std::string* error) {
  std::string why;
  const auto size = detail::measure(in.tensor, why);
  if (!size) {
    if (error) *error = why;
    return std::nullopt;
  }
  const detail::SortedMeta meta(detail::span_of(in.meta));
  detail::RecordParts parts;
  parts.checkpoint = in.checkpoint;
  parts.key = detail::normalized(in.key);
  parts.tensor = &in.tensor;
  parts.size = *size;
  parts.digest = detail::digest(in.tensor, *size);
  parts.meta = &meta;
  const schema::RecordView view = detail::record_view(parts, detail::run_fields(in), in.seq, in.values);
  EncodedRecord out;
  detail::append_jsonl(out.jsonl, view);
  const schema::BytesView data = detail::append_frame_prefix(out.frame, view);
  out.frame.append(reinterpret_cast<const char*>(data.data), data.size);
  out.blake3.assign(view.blake3);
  return out;
}

ORCHLOG_API EncodedHeader encode_header(const HeaderInput& in) {
  const detail::SortedMeta config(detail::span_of(in.config));
  const schema::HeaderView h = detail::header_view(in, config.view());
  EncodedHeader out;
  detail::append_header_jsonl(out.jsonl, h);
  detail::append_header_frame(out.frame, h);
  return out;
}

}  // namespace orchlog
#endif  // ORCHLOG_DEFINE_API
