// What a call site of the logger needs: the run state behind the one-load
// fast path and, in compiled-library mode, the declarations of the
// out-of-line functions behind it (defined in core.hpp, which header-only
// mode includes instead; see detail/compiled.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

#include "orchlog/api_gen.hpp"
#include "orchlog/detail/compiled.hpp"
#include "orchlog/options.hpp"
#include "orchlog/types.hpp"

#if defined(__GNUC__) || defined(__clang__)
#define ORCHLOG_LIKELY(x) __builtin_expect(!!(x), 1)
#define ORCHLOG_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define ORCHLOG_NOINLINE __attribute__((noinline, cold))
#else
#define ORCHLOG_LIKELY(x) (x)
#define ORCHLOG_UNLIKELY(x) (x)
#define ORCHLOG_NOINLINE
#endif

namespace orchlog {
namespace detail {

struct TensorDigest;  // fields_gen.hpp

// kForked: this process was forked from one that was logging (set in the
// child by a pthread_atfork handler); the first call settles it (core.hpp).
enum State : std::uint8_t { kUnconfigured = 0, kOff = 1, kOn = 2, kForked = 3 };

inline std::atomic<std::uint8_t> g_state{kUnconfigured};

inline bool may_log() noexcept { return g_state.load(std::memory_order_relaxed) != kOff; }

#if defined(ORCHLOG_COMPILED_LIB)
bool configure(const Options& options) noexcept;
// First use without configure(): settings come from the env knobs alone.
// `producer` is the language the bindings (C, Python) write in the header.
void configure_from_env_once(std::string_view producer = "cpp") noexcept;
// Before the first call of a run: configures it from the env (first use) or
// settles a forked child's (kForked).
void settle_state(std::string_view producer = "cpp") noexcept;
// The out-of-line part of every log call, and of orchlog::selects().
ORCHLOG_NOINLINE bool write_record(std::string_view checkpoint, const Tensor& tensor, const Key& given_key,
                                   MetaSpan meta, CallFields call = {},
                                   const TensorDigest* given_digest = nullptr) noexcept;
// The out-of-line part of every graft call (orchlog/graft.hpp).
ORCHLOG_NOINLINE bool graft_record(std::string_view checkpoint, void* data, DType dtype, const Shape& shape,
                                   const Key& given_key, MetaSpan meta) noexcept;
ORCHLOG_NOINLINE bool would_write(std::string_view checkpoint, const Key& given_key, std::int64_t token_count) noexcept;
// The out-of-line parts of orchlog::graft_selects() and graft_refused().
ORCHLOG_NOINLINE bool would_graft(std::string_view checkpoint, const Key& given_key, std::int64_t token_count) noexcept;
ORCHLOG_NOINLINE void refuse_graft(std::string_view checkpoint, const Key& given_key, std::string_view why) noexcept;
// The bodies of orchlog::flush(), close() and status().
bool flush_run() noexcept;
void close_run() noexcept;
Status run_status() noexcept;
#endif

}  // namespace detail
}  // namespace orchlog
