// Grafting: replay a reference run into the engine under test, so that what
// differs at a stage's output is that stage's own error.
//
//   orchlog::graft("attn_norm", x, orchlog::DType::f32, {n_tokens, 896}, {token_idx, layer});
//
// A graft call is a log call on a writable tensor: when ORCH_GRAFT_SELECT
// accepts its key, the tensor is first overwritten with the reference
// record's values (ORCH_GRAFT_FROM, a full-mode binary stream; dtype
// converted among f32/f16/bf16/f64, shape checked), then the record is logged
// with `grafted` true. Unselected, or without a matching reference record, it
// is exactly a log call. It costs what a log call costs when logging is off.
#pragma once

#include <initializer_list>
#include <string_view>
#include <vector>

#include "orchlog/detail/logger/entry.hpp"
#include "orchlog/types.hpp"
#if ORCHLOG_DEFINE_API
#include "orchlog/detail/graft/graft_record.hpp"
#endif

namespace orchlog {

// Overwrites `data` from the reference when selected, then logs it; returns
// whether the tensor was overwritten.
inline bool graft(std::string_view checkpoint, void* data, DType dtype, const Shape& shape, const Key& key = {},
                  std::initializer_list<MetaItem> meta = {}) noexcept {
  if (ORCHLOG_LIKELY(!detail::may_log())) return false;
  return detail::graft_record(checkpoint, data, dtype, shape, key, detail::span_of(meta));
}

inline bool graft(std::string_view checkpoint, void* data, DType dtype, const Shape& shape, const Key& key,
                  const std::vector<MetaItem>& meta) noexcept {
  if (ORCHLOG_LIKELY(!detail::may_log())) return false;
  return detail::graft_record(checkpoint, data, dtype, shape, key, detail::span_of(meta));
}

// Whether a graft call under this key (or any of `token_count` tokens from
// key.token_idx) would overwrite its tensor: the run grafts (ORCH_GRAFT_SELECT)
// and selects it. For adapters that must ask before they have the tensor.
inline bool graft_selects(std::string_view checkpoint, const Key& key = {}, std::int64_t token_count = 1) noexcept {
  if (ORCHLOG_LIKELY(!detail::may_log())) return false;
  return detail::would_graft(checkpoint, key, token_count);
}

// A selected graft the host cannot make (the tensor is in device memory, a
// non-contiguous view, quantized): counted as an error, warned about once
// with `why`, and counted as a call under its key, so that later calls under
// the key still take the reference records of their own occurrence.
inline void graft_refused(std::string_view checkpoint, const Key& key, std::string_view why) noexcept {
  if (ORCHLOG_LIKELY(!detail::may_log())) return;
  detail::refuse_graft(checkpoint, key, why);
}

}  // namespace orchlog
