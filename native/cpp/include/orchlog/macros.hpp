// The ORCH_LOG* macros. Without ORCH_LOGGING defined they expand to nothing
// and do not evaluate their arguments; with it, a call costs one relaxed
// atomic load and a branch while logging is off at run time.
//
//   ORCH_LOG(checkpoint, data, dtype, dims...)
//   ORCH_LOG_TOKEN(checkpoint, token_idx, data, dtype, dims...)
//   ORCH_LOG_AT(checkpoint, token_idx, layer, stage, step, data, dtype, dims...)
//   ORCH_LOG_KEY(checkpoint, key, data, dtype, dims...)   key: an orchlog::Key, e.g. Key{t, l}.with_rank(r)
//   ORCH_LOG_CUDA(checkpoint, token_idx, data, stream, dtype, dims...)   device or host memory
//   ORCH_LOG_JSON_TOKEN(name, values, count, dtype, shape_text, token_idx)   the legacy form
//
//   ORCH_GRAFT(checkpoint, data, dtype, dims...)          data: writable host memory
//   ORCH_GRAFT_AT(checkpoint, token_idx, layer, stage, step, data, dtype, dims...)
//   ORCH_GRAFT_KEY(checkpoint, key, data, dtype, dims...)
//     overwrite the tensor from the reference run when ORCH_GRAFT_SELECT says
//     so, then log it (orchlog/graft.hpp); compiled out and off like ORCH_LOG.
//
// dtype is a name ("f32", "float16", "bf16" ...) or orchlog::DType; dims are
// integers, outermost first; key fields take integers (negative: none),
// orchlog::none or std::optional; stage takes a string or nullptr.
#pragma once

#if defined(ORCH_LOGGING)

#include "orchlog/cuda.hpp"
#include "orchlog/detail/logger/macro_support.hpp"
#include "orchlog/graft.hpp"

// Device pointers are detected only in CUDA builds (nvcc, or ORCHLOG_CUDA).
#if ORCHLOG_CUDA_ENABLED
#define ORCHLOG_DETAIL_WRITE(checkpoint, key, data, dtype, shape, stream) \
  ::orchlog::cuda::detail::macro_log(checkpoint, key, data, dtype, shape, stream)
#else
#define ORCHLOG_DETAIL_WRITE(checkpoint, key, data, dtype, shape, stream) \
  ::orchlog::detail::macro_log(checkpoint, key, data, dtype, shape)
#endif

#define ORCHLOG_DETAIL_LOG(checkpoint, key, data, dtype, shape, stream)                                   \
  do {                                                                                                    \
    if (ORCHLOG_UNLIKELY(::orchlog::detail::may_log()))                                                   \
      ORCHLOG_DETAIL_WRITE(::orchlog::detail::text_arg(checkpoint), key, (data), (dtype), shape, stream); \
  } while (0)

#define ORCHLOG_DETAIL_KEY(token_idx, layer, stage, step) ::orchlog::Key((token_idx), (layer), (stage), (step))

#define ORCH_LOG(checkpoint, data, dtype, ...) \
  ORCHLOG_DETAIL_LOG(checkpoint, ::orchlog::Key{}, data, dtype, ::orchlog::dims(__VA_ARGS__), nullptr)

#define ORCH_LOG_TOKEN(checkpoint, token_idx, data, dtype, ...)                                                    \
  ORCHLOG_DETAIL_LOG(checkpoint, ORCHLOG_DETAIL_KEY(token_idx, ::orchlog::none, ::orchlog::none, ::orchlog::none), \
                     data, dtype, ::orchlog::dims(__VA_ARGS__), nullptr)

#define ORCH_LOG_AT(checkpoint, token_idx, layer, stage, step, data, dtype, ...)                 \
  ORCHLOG_DETAIL_LOG(checkpoint, ORCHLOG_DETAIL_KEY(token_idx, layer, stage, step), data, dtype, \
                     ::orchlog::dims(__VA_ARGS__), nullptr)

#define ORCH_LOG_KEY(checkpoint, key, data, dtype, ...) \
  ORCHLOG_DETAIL_LOG(checkpoint, ::orchlog::Key(key), data, dtype, ::orchlog::dims(__VA_ARGS__), nullptr)

#define ORCH_LOG_CUDA(checkpoint, token_idx, data, stream, dtype, ...)                                             \
  ORCHLOG_DETAIL_LOG(checkpoint, ORCHLOG_DETAIL_KEY(token_idx, ::orchlog::none, ::orchlog::none, ::orchlog::none), \
                     data, dtype, ::orchlog::dims(__VA_ARGS__), (stream))

#define ORCH_LOG_JSON_TOKEN(name, values, count, dtype, shape_text, token_idx)                                       \
  ORCHLOG_DETAIL_LOG(name, ORCHLOG_DETAIL_KEY(token_idx, ::orchlog::none, ::orchlog::none, ::orchlog::none), values, \
                     dtype,                                                                                          \
                     ::orchlog::detail::legacy_shape(::orchlog::detail::text_arg(name), ::orchlog::to_dim(count),    \
                                                     ::orchlog::detail::text_arg(shape_text)),                       \
                     nullptr)

#define ORCHLOG_DETAIL_GRAFT(checkpoint, key, data, dtype, shape)                                           \
  do {                                                                                                      \
    if (ORCHLOG_UNLIKELY(::orchlog::detail::may_log()))                                                     \
      ::orchlog::detail::macro_graft(::orchlog::detail::text_arg(checkpoint), key, (data), (dtype), shape); \
  } while (0)

#define ORCH_GRAFT(checkpoint, data, dtype, ...) \
  ORCHLOG_DETAIL_GRAFT(checkpoint, ::orchlog::Key{}, data, dtype, ::orchlog::dims(__VA_ARGS__))

#define ORCH_GRAFT_AT(checkpoint, token_idx, layer, stage, step, data, dtype, ...)                 \
  ORCHLOG_DETAIL_GRAFT(checkpoint, ORCHLOG_DETAIL_KEY(token_idx, layer, stage, step), data, dtype, \
                       ::orchlog::dims(__VA_ARGS__))

#define ORCH_GRAFT_KEY(checkpoint, key, data, dtype, ...) \
  ORCHLOG_DETAIL_GRAFT(checkpoint, ::orchlog::Key(key), data, dtype, ::orchlog::dims(__VA_ARGS__))

#else  // logging compiled out: nothing is evaluated

#define ORCH_LOG(...) static_cast<void>(0)
#define ORCH_LOG_TOKEN(...) static_cast<void>(0)
#define ORCH_LOG_AT(...) static_cast<void>(0)
#define ORCH_LOG_KEY(...) static_cast<void>(0)
#define ORCH_LOG_CUDA(...) static_cast<void>(0)
#define ORCH_LOG_JSON_TOKEN(...) static_cast<void>(0)
#define ORCH_GRAFT(...) static_cast<void>(0)
#define ORCH_GRAFT_AT(...) static_cast<void>(0)
#define ORCH_GRAFT_KEY(...) static_cast<void>(0)

#endif
