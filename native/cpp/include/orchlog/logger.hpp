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
#include "orchlog/detail/logger/entry.hpp"
#include "orchlog/options.hpp"
#include "orchlog/types.hpp"
#if ORCHLOG_DEFINE_API
#include "orchlog/detail/logger/core.hpp"
#endif

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
  detail::settle_state();
  return detail::g_state.load(std::memory_order_relaxed) == detail::kOn;
}

// Records are in the kernel when log() returns (a crash loses none); flush()
// also asks the kernel to put them on the disk. Returns false when that failed.
inline bool flush() noexcept { return detail::flush_run(); }

// Ends the run and closes its files; logging stays off until configure().
inline void close() noexcept { detail::close_run(); }

inline Status status() noexcept { return detail::run_status(); }

}  // namespace orchlog
