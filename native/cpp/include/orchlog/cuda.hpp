// CUDA support: log tensors that live in device memory.
//
// Active when compiled by nvcc (__CUDACC__) or with ORCHLOG_CUDA defined (a
// host compiler and the CUDA runtime headers; link cudart). A device (or
// managed) pointer is copied to the host after the work queued on `stream`
// before it has run; host pointers take the normal path. With no CUDA
// device or driver every pointer is a host pointer.
//
//   orchlog::cuda::log("attn_out", {d_x, orchlog::DType::f16, {n, 896}}, stream, {token_idx});
//   ORCH_LOG_CUDA("attn_out", token_idx, d_x, stream, "f16", n, 896);
#pragma once

#if defined(__CUDACC__) || defined(ORCHLOG_CUDA)
#define ORCHLOG_CUDA_ENABLED 1

#include <cuda_runtime_api.h>

#include <atomic>
#include <initializer_list>
#include <string>
#include <vector>

#include "orchlog/detail/logger/core.hpp"  // logger() and measure(), also in compiled-library mode
#include "orchlog/detail/logger/macro_support.hpp"
#include "orchlog/logger.hpp"

namespace orchlog {
namespace cuda {
namespace detail {

enum Presence : int { kUnknown = 0, kPresent = 1, kAbsent = 2 };
inline std::atomic<int> g_presence{kUnknown};

// The host address of the tensor's bytes: `t.data` for host memory, else a
// copy in `copy`; nullptr (and `error`) when the copy failed.
inline const void* host_bytes(const Tensor& t, cudaStream_t stream, std::vector<unsigned char>& copy,
                              std::string& error) {
  if (g_presence.load(std::memory_order_relaxed) == kAbsent || t.data == nullptr) return t.data;
  cudaPointerAttributes attr{};
  cudaError_t e = cudaPointerGetAttributes(&attr, t.data);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // leave no error behind for the engine's own checks
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver)
      g_presence.store(kAbsent, std::memory_order_relaxed);
    return t.data;  // also what older runtimes say about plain host memory
  }
  g_presence.store(kPresent, std::memory_order_relaxed);
  if (attr.type != cudaMemoryTypeDevice && attr.type != cudaMemoryTypeManaged) return t.data;
  std::string why;
  const auto size = ::orchlog::detail::measure(t, why);
  if (!size) return t.data;  // write_record reports it
  copy.resize(static_cast<std::size_t>(size->nbytes));
  e = cudaMemcpyAsync(copy.data(), t.data, copy.size(), cudaMemcpyDeviceToHost, stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  if (e != cudaSuccess) {
    error = std::string("copying a device tensor to the host failed: ") + cudaGetErrorString(e);
    (void)cudaGetLastError();
    return nullptr;
  }
  return copy.data();
}

inline bool write_record(std::string_view checkpoint, const Tensor& t, cudaStream_t stream, const Key& key,
                         ::orchlog::detail::MetaSpan meta) noexcept {
  try {
    thread_local std::vector<unsigned char> copy;
    std::string error;
    const void* host = host_bytes(t, stream, copy, error);
    if (host == nullptr && t.data != nullptr) {
      ::orchlog::detail::logger().report(::orchlog::detail::kCuda,
                                         "record '" + std::string(checkpoint) + "' not written: " + error);
      return false;
    }
    const bool written = ::orchlog::detail::write_record(checkpoint, Tensor{host, t.dtype, t.shape}, key, meta);
    if (copy.capacity() > (std::size_t{256} << 20)) std::vector<unsigned char>().swap(copy);
    return written;
  } catch (...) {
    return false;
  }
}

ORCHLOG_NOINLINE inline bool macro_log(std::string_view checkpoint, const Key& key, const void* data,
                                       ::orchlog::detail::DTypeArg dtype, const Shape& shape,
                                       cudaStream_t stream) noexcept {
  if (!::orchlog::detail::dtype_known(dtype, checkpoint)) return false;
  return write_record(checkpoint, Tensor{data, *dtype.dtype, shape}, stream, key, {});
}

}  // namespace detail

// orchlog::log for tensors that may be in device memory.
inline bool log(std::string_view checkpoint, const Tensor& tensor, cudaStream_t stream = nullptr, const Key& key = {},
                std::initializer_list<MetaItem> meta = {}) noexcept {
  if (ORCHLOG_LIKELY(!::orchlog::detail::may_log())) return false;
  return detail::write_record(checkpoint, tensor, stream, key, ::orchlog::detail::span_of(meta));
}

}  // namespace cuda
}  // namespace orchlog

#else
#define ORCHLOG_CUDA_ENABLED 0
#endif
