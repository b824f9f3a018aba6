// liborchlog_c's CUDA entry points (orchlog/orchlog_cuda.h). With
// -DORCHLOG_C_CUDA=ON this file is compiled with ORCHLOG_CUDA against the
// CUDA runtime; without it, the same functions refuse device tensors.
#define ORCHLOG_C_BUILDING 1
#include "orchlog/orchlog_cuda.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "abi_gen.hpp"
#include "c_args.hpp"
#include "orchlog/detail/logger/macro_support.hpp"
#include "orchlog/orchlog.hpp"

namespace {

void copy_why(const std::string& text, char* why, size_t why_len) {
  if (why == nullptr || why_len == 0) return;
  const size_t n = std::min(text.size(), why_len - 1);
  std::memcpy(why, text.data(), n);
  why[n] = '\0';
}

}  // namespace

extern "C" {

#if ORCHLOG_CUDA_ENABLED

int orchlog_cuda_available(void) { return 1; }

int orchlog_cuda_log_named(const char* checkpoint, const void* data, const char* dtype, const int64_t* shape,
                           size_t ndim, const orchlog_key* key, const orchlog_named_parts* parts,
                           const orchlog_meta* meta, size_t n_meta, void* stream) {
  if (!orchlog::detail::may_log()) return 0;
  try {
    if (orchlog::detail::g_state.load(std::memory_order_relaxed) == orchlog::detail::kUnconfigured)
      orchlog::detail::configure_from_env_once("c");
    const orchlog::detail::DTypeArg dt(dtype);
    const std::string_view name = checkpoint ? checkpoint : "";
    if (!orchlog::detail::dtype_known(dt, name)) return 0;
    const std::vector<orchlog::MetaItem> items = orchlog_c::meta_of(meta, n_meta);
    return orchlog::cuda::detail::write_record(name, {data, *dt.dtype, orchlog_c::shape_of(shape, ndim)},
                                               static_cast<cudaStream_t>(stream), orchlog_c::key_of(key, parts),
                                               orchlog::detail::span_of(items))
               ? 1
               : 0;
  } catch (...) {
    return 0;
  }
}

int orchlog_cuda_read(const void* data, size_t nbytes, void* stream, void* out, char* why, size_t why_len) {
  try {
    std::string reason;
    switch (orchlog::cuda::detail::read_to_host(data, nbytes, static_cast<cudaStream_t>(stream), out, reason)) {
      case orchlog::cuda::detail::Read::host:
        return ORCHLOG_CUDA_HOST;
      case orchlog::cuda::detail::Read::copied:
        return ORCHLOG_CUDA_COPIED;
      case orchlog::cuda::detail::Read::refused:
        break;
    }
    copy_why(reason, why, why_len);
  } catch (...) {
    copy_why("out of memory", why, why_len);
  }
  return ORCHLOG_CUDA_REFUSED;
}

uint64_t orchlog_cuda_capture_skips(void) { return orchlog::cuda::capture_skips(); }

#else  // built without CUDA

int orchlog_cuda_available(void) { return 0; }

int orchlog_cuda_log_named(const char* checkpoint, const void*, const char*, const int64_t*, size_t, const orchlog_key*,
                           const orchlog_named_parts*, const orchlog_meta*, size_t, void*) {
  if (!orchlog::detail::may_log()) return 0;
  orchlog::detail::configure_from_env_once("c");
  if (!orchlog::enabled()) return 0;
  orchlog::detail::logger().report(orchlog::detail::kCuda,
                                   "record '" + std::string(checkpoint ? checkpoint : "") +
                                       "' not written: liborchlog_c was built without CUDA (-DORCHLOG_C_CUDA=ON "
                                       "builds it with), so it cannot tell device memory from host memory");
  return 0;
}

int orchlog_cuda_read(const void*, size_t, void*, void*, char* why, size_t why_len) {
  copy_why("liborchlog_c was built without CUDA (-DORCHLOG_C_CUDA=ON builds it with)", why, why_len);
  return ORCHLOG_CUDA_REFUSED;
}

uint64_t orchlog_cuda_capture_skips(void) { return 0; }

#endif

int orchlog_cuda_log(const char* checkpoint, const void* data, const char* dtype, const int64_t* shape, size_t ndim,
                     const orchlog_key* key, void* stream) {
  return orchlog_cuda_log_named(checkpoint, data, dtype, shape, ndim, key, nullptr, nullptr, 0, stream);
}

}  // extern "C"
