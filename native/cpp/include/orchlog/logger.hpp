// The C++ API of the logger, for code that wants no macros.
//
//   orchlog::configure();  // optional: the ORCH_LOG_* env knobs are read on first use anyway
//   orchlog::log("attn_norm", {x, orchlog::DType::f32, {n_tokens, 896}}, {/*token_idx*/ 5, /*layer*/ 3});
//
// Every function is noexcept and never harms the host: a bad argument or a
// failed write gives a warning on stderr (once per kind) and an error count;
// a failed write also switches logging off.
#pragma once

#include <initializer_list>
#include <string_view>
#include <vector>

#include "orchlog/api_gen.hpp"
#include "orchlog/detail/logger/core.hpp"
#include "orchlog/options.hpp"
#include "orchlog/types.hpp"

namespace orchlog {

// Starts a new run (closing the previous one): opens the file(s), writes the
// header. Fields left unset in `options` come from the env knobs. Returns
// whether logging is on.
inline bool configure(const Options& options = {}) noexcept { return detail::configure(options); }

// Writes one record when logging is on and the selector matches; returns
// whether it was written.
inline bool log(std::string_view checkpoint, const Tensor& tensor, const Key& key = {},
                std::initializer_list<MetaItem> meta = {}) noexcept {
  if (ORCHLOG_LIKELY(!detail::may_log())) return false;
  return detail::write_record(checkpoint, tensor, key, detail::span_of(meta));
}

inline bool log(std::string_view checkpoint, const Tensor& tensor, const Key& key,
                const std::vector<MetaItem>& meta) noexcept {
  if (ORCHLOG_LIKELY(!detail::may_log())) return false;
  return detail::write_record(checkpoint, tensor, key, detail::span_of(meta));
}

// Whether log() would write a record under this key now: logging is on and
// the selector accepts it. For adapters that can avoid copying a tensor out
// of an engine. `token_count` > 1 asks about the tokens key.token_idx ..
// key.token_idx + token_count - 1 together: true when any one is selected.
inline bool selects(std::string_view checkpoint, const Key& key = {}, std::int64_t token_count = 1) noexcept {
  if (ORCHLOG_LIKELY(!detail::may_log())) return false;
  return detail::would_write(checkpoint, key, token_count);
}

// Whether records are being written (reads the env knobs on first use).
inline bool enabled() noexcept {
  if (detail::g_state.load(std::memory_order_relaxed) == detail::kUnconfigured) detail::configure_from_env_once();
  return detail::g_state.load(std::memory_order_relaxed) == detail::kOn;
}

// Records are in the kernel when log() returns (a crash loses none); flush()
// also asks the kernel to put them on the disk. Returns false when that failed.
inline bool flush() noexcept {
  const auto session = detail::logger().session();
  if (!session) return true;
  try {
    std::lock_guard<std::mutex> lock(session->mutex);
    return session->jsonl.sync() && session->frames.sync();
  } catch (...) {
    return false;
  }
}

// Ends the run and closes its files; logging stays off until configure().
inline void close() noexcept {
  try {
    std::lock_guard<std::mutex> lock(detail::logger().configure_mutex);
    detail::logger().install(nullptr);
  } catch (...) {
  }
}

inline Status status() noexcept {
  Status s;
  try {
    detail::Logger& lg = detail::logger();
    s.errors = lg.errors();
    s.enabled = detail::g_state.load(std::memory_order_relaxed) == detail::kOn;
    if (const auto session = lg.session()) {
      std::lock_guard<std::mutex> lock(session->mutex);
      s.records = session->seq;
      s.path = session->settings.path;
      s.binary_path = session->settings.binary_path;
    }
  } catch (...) {
  }
  return s;
}

}  // namespace orchlog
