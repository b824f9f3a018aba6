// The out-of-line part of every graft call: overwrite the tensor from the
// run's reference (ORCH_GRAFT_FROM) when ORCH_GRAFT_SELECT accepts its key,
// then log it as a log call would, marked `grafted` when it was overwritten.
//
// Nothing here harms the host: a reference that cannot be read, a key it does
// not hold, a record of another shape or dtype, or one that fails its checks
// (reference.hpp) is a warning (printed once per kind, counted every time) and
// leaves the tensor as the engine made it.
#pragma once

#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "orchlog/detail/graft/convert.hpp"
#include "orchlog/detail/graft/reference.hpp"
#include "orchlog/detail/logger/core.hpp"

namespace orchlog {
namespace detail {

// Overwrites `data` (dtype, shape as given, its size measured) from the
// reference record under the key; true when it did. Call with the key valid
// and resolved.
inline bool overwrite_from_reference(Session& session, std::string_view checkpoint, const Key& key, void* data,
                                     DType dtype, const Shape& shape, const TensorSize& size) {
  Logger& lg = logger();
  const Settings& st = session.settings;
  GraftState& g = session.graft;
  std::lock_guard<std::mutex> lock(g.mutex);
  if (!g.loaded) {
    g.loaded = true;
    if (!st.knobs.graft_from) {
      lg.report(kGraftReference, "ORCH_GRAFT_SELECT is set but ORCH_GRAFT_FROM is not; grafting nothing");
      return false;
    }
    std::string error;
    ReferenceIndex index;
    const bool usable = index.build(*st.knobs.graft_from, error);
    if (!error.empty()) lg.report(kGraftReference, usable ? error : error + "; grafting nothing");
    if (usable) g.reference.emplace(std::move(index));
  }
  if (!g.reference) return false;
  const std::string key_text = graft_key_text(checkpoint, key);
  const std::size_t occurrence = g.counts[key_text]++;
  const ReferenceTensor* ref = g.reference->find(key_text, occurrence);
  if (!ref) {
    lg.report(kGraftMissing, "graft " + key_description(checkpoint, key) + " (call " + std::to_string(occurrence + 1) +
                                 " under this key): the reference holds no such record; the tensor is left alone");
    return false;
  }
  const bool same_shape =
      ref->shape.size() == shape.size() && std::equal(ref->shape.begin(), ref->shape.end(), shape.data());
  // The record's tensor must be exactly its shape's bytes in its dtype; the
  // product is checked, since the shape comes from a file (the engine's own
  // shape was measured, and a different one is refused before this matters).
  std::uint64_t ref_bytes = schema::dtype_size(ref->dtype);
  bool fits = true;
  for (const std::int64_t d : ref->shape) {
    const auto u = static_cast<std::uint64_t>(d);
    if (d < 0 || (u != 0 && ref_bytes > std::numeric_limits<std::uint64_t>::max() / u)) fits = false;
    if (fits) ref_bytes *= u;
  }
  if (!same_shape || !graft_converts(ref->dtype, dtype) || !fits || ref->nbytes != ref_bytes) {
    lg.report(kGraftMismatch, "graft " + key_description(checkpoint, key) + ": the reference record is " +
                                  std::string(schema::dtype_name(ref->dtype)) + " " +
                                  shape_text(ref->shape.data(), ref->shape.size()) + ", the tensor " +
                                  std::string(schema::dtype_name(dtype)) + " " +
                                  shape_text(shape.data(), shape.size()) + "; the tensor is left alone");
    return false;
  }
  // Checked whole (checksum, key, BLAKE3) before a byte of it reaches the tensor.
  std::vector<unsigned char> bytes;
  std::string why;
  if (!g.reference->read(*ref, key_text, bytes, why)) {
    lg.report(kGraftDamaged, "graft " + key_description(checkpoint, key) + ": the reference record at byte " +
                                 std::to_string(ref->frame) + " of '" + *st.knobs.graft_from + "' is refused: " + why +
                                 "; the tensor is left alone");
    return false;
  }
  if (size.numel > 0) convert_elements(ref->dtype, bytes.data(), dtype, static_cast<unsigned char*>(data), size.numel);
  return true;
}

// The session, checkpoint (valid UTF-8) and resolved key of a graft call;
// graft_call() fills it and says whether the run grafts the call (logging on,
// ORCH_GRAFT_SELECT taking the key).
struct GraftCall {
  std::shared_ptr<Session> session;
  KeyTexts texts;
  Key key;
  std::string checkpoint_text;
  std::string_view checkpoint;
};

inline bool graft_call(GraftCall& call, std::string_view checkpoint, const Key& given_key, std::int64_t token_count) {
  settle_state();
  call.session = logger().session();
  if (!call.session || g_state.load(std::memory_order_relaxed) != kOn) return false;
  const Settings& st = call.session->settings;
  call.key = resolved(valid_key(given_key, call.texts), run_fields(st.knobs));
  call.checkpoint = as_valid_utf8(checkpoint, call.checkpoint_text);
  return st.graft_selector && st.graft_selector->matches({call.checkpoint, call.key, token_count});
}

ORCHLOG_NOINLINE ORCHLOG_API bool would_graft(std::string_view checkpoint, const Key& given_key,
                                              std::int64_t token_count) noexcept {
  try {
    GraftCall call;
    return graft_call(call, checkpoint, given_key, token_count);
  } catch (...) {
    return false;
  }
}

ORCHLOG_NOINLINE ORCHLOG_API void refuse_graft(std::string_view checkpoint, const Key& given_key,
                                               std::string_view why) noexcept {
  try {
    GraftCall call;
    if (!graft_call(call, checkpoint, given_key, 1)) return;
    GraftState& g = call.session->graft;
    {
      std::lock_guard<std::mutex> lock(g.mutex);
      ++g.counts[graft_key_text(call.checkpoint, call.key)];
    }
    logger().report(kGraftDevice, "graft " + key_description(call.checkpoint, call.key) + ": " + std::string(why) +
                                      "; the tensor is left alone");
  } catch (...) {
    logger().report(kInternal, "a graft was not made: out of memory");
  }
}

ORCHLOG_NOINLINE ORCHLOG_API bool graft_record(std::string_view checkpoint, void* data, DType dtype, const Shape& shape,
                                               const Key& given_key, MetaSpan meta) noexcept {
  Logger& lg = logger();
  bool grafted = false;
  try {
    GraftCall call;
    // An empty tensor may come as a null pointer: `measure` accepts that
    // only without bytes, and then there is nothing to overwrite.
    if (graft_call(call, checkpoint, given_key, 1)) {
      std::string error;
      const auto size = measure(Tensor{data, dtype, shape}, error);
      if (size) grafted = overwrite_from_reference(*call.session, call.checkpoint, call.key, data, dtype, shape, *size);
    }
  } catch (...) {
    lg.report(kInternal, "a graft was not made: out of memory");
  }
  CallFields call;
  call.grafted = grafted;
  write_record(checkpoint, Tensor{data, dtype, shape}, given_key, meta, call);
  return grafted;
}

}  // namespace detail
}  // namespace orchlog
