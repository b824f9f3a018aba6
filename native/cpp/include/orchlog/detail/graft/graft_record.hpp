// The out-of-line part of every graft call: overwrite the tensor from the
// run's reference (ORCH_GRAFT_FROM) when ORCH_GRAFT_SELECT accepts its key,
// then log it as a log call would, marked `grafted` when it was overwritten.
//
// Nothing here harms the host: a reference that cannot be read, a key it does
// not hold, or a record of another shape or dtype is a warning (printed once
// per kind, counted every time) and leaves the tensor as the engine made it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "orchlog/detail/graft/convert.hpp"
#include "orchlog/detail/graft/reference.hpp"
#include "orchlog/detail/logger/core.hpp"

namespace orchlog {
namespace detail {

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
  std::int64_t ref_numel = 1;
  for (const std::int64_t d : ref->shape) ref_numel *= d;
  if (!same_shape || !graft_converts(ref->dtype, dtype) ||
      ref->nbytes != static_cast<std::uint64_t>(ref_numel) * schema::dtype_size(ref->dtype)) {
    lg.report(kGraftMismatch, "graft " + key_description(checkpoint, key) + ": the reference record is " +
                                  std::string(schema::dtype_name(ref->dtype)) + " " +
                                  shape_text(ref->shape.data(), ref->shape.size()) + ", the tensor " +
                                  std::string(schema::dtype_name(dtype)) + " " +
                                  shape_text(shape.data(), shape.size()) + "; the tensor is left alone");
    return false;
  }
  std::vector<unsigned char> bytes;
  if (!g.reference->read(*ref, bytes)) {
    lg.report(kGraftReference, "reading the graft reference '" + *st.knobs.graft_from +
                                   "' failed (was it changed?); the tensor is left alone");
    return false;
  }
  convert_elements(ref->dtype, bytes.data(), dtype, static_cast<unsigned char*>(data), size.numel);
  return true;
}

// Whether the run grafts under this key: on, selected and with a reference named.
inline bool graft_selected(const Settings& st, std::string_view checkpoint, const Key& key) {
  return st.graft_selector && st.graft_selector->matches({checkpoint, resolved(key, run_fields(st.knobs)), 1});
}

ORCHLOG_NOINLINE ORCHLOG_API bool graft_record(std::string_view checkpoint, void* data, DType dtype, const Shape& shape,
                                               const Key& given_key, MetaSpan meta) noexcept {
  Logger& lg = logger();
  bool grafted = false;
  try {
    if (g_state.load(std::memory_order_relaxed) == kUnconfigured) configure_from_env_once();
    const std::shared_ptr<Session> session = lg.session();
    if (!session || g_state.load(std::memory_order_relaxed) != kOn) return false;
    KeyTexts texts;
    const Key key = resolved(valid_key(given_key, texts), run_fields(session->settings.knobs));
    std::string checkpoint_text;
    const std::string_view name = as_valid_utf8(checkpoint, checkpoint_text);
    if (data != nullptr && graft_selected(session->settings, name, key)) {
      std::string error;
      const auto size = measure(Tensor{data, dtype, shape}, error);
      if (size) grafted = overwrite_from_reference(*session, name, key, data, dtype, shape, *size);
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
