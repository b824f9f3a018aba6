// CUDA support: log tensors that live in device memory.
//
// Active when compiled by nvcc (__CUDACC__) or with ORCHLOG_CUDA defined (a
// host compiler and the CUDA runtime headers; link cudart). A device (or
// managed) pointer is read after the work queued on `stream` before it has
// run; host pointers take the normal path. With no CUDA device or driver
// every pointer is a host pointer.
//
//   orchlog::cuda::log("attn_out", {d_x, orchlog::DType::f16, {n, 896}}, stream, {token_idx});
//   ORCH_LOG_CUDA("attn_out", token_idx, d_x, stream, "f16", n, 896);
//
// The engine's CUDA state is left as it was found:
// - a stream that is capturing a CUDA graph (or the legacy default stream
//   while a blocking stream captures) is never touched: the record is
//   skipped, with one warning, and counted (capture_skips());
// - the logger's own calls run in the relaxed capture mode, so that a
//   copy on a stream that is not capturing cannot invalidate another
//   thread's global-mode capture;
// - an error the engine has not read yet (cudaPeekAtLastError) is never
//   cleared: the record is skipped, with one warning, and no CUDA call is
//   made; an error the logger's own calls raise is cleared before it
//   returns. (A fault of the engine's kernels that a synchronize reports is
//   sticky: the engine's next call reports it again.)
//
// Built by nvcc, summary mode computes the record's stats, sketch and BLAKE3
// on the device (detail/device/kernels.hpp) and copies back a few kilobytes
// and the leading values, not the tensor; the bytes are the host emitter's.
#pragma once

#if defined(__CUDACC__) || defined(ORCHLOG_CUDA)
#define ORCHLOG_CUDA_ENABLED 1

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "orchlog/detail/logger/core.hpp"  // logger() and measure(), also in compiled-library mode
#include "orchlog/detail/logger/macro_support.hpp"
#include "orchlog/logger.hpp"
#if defined(__CUDACC__)
#include <memory>
#include <mutex>

#include "orchlog/detail/device/kernels.hpp"
#include "orchlog/detail/device/ring.hpp"
#endif

namespace orchlog {
namespace cuda {
namespace detail {

enum Presence : int { kUnknown = 0, kPresent = 1, kAbsent = 2 };
inline std::atomic<int> g_presence{kUnknown};
inline std::atomic<std::uint64_t> g_capture_skips{0};
inline std::atomic<bool> g_device_summaries{true};

inline bool no_cuda(cudaError_t e) { return e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver; }

// The thread's stream capture mode is relaxed for the scope, then restored.
class RelaxedCapture {
 public:
  RelaxedCapture() noexcept { ok_ = cudaThreadExchangeStreamCaptureMode(&mode_) == cudaSuccess; }
  ~RelaxedCapture() {
    if (ok_) (void)cudaThreadExchangeStreamCaptureMode(&mode_);
  }
  RelaxedCapture(const RelaxedCapture&) = delete;
  RelaxedCapture& operator=(const RelaxedCapture&) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
  bool ok_ = false;
};

// Whether `stream` may be used now: `capturing` when it is capturing a graph
// (work enqueued on it is recorded, not run), else the reason it may not be
// touched at all (empty: it may).
struct CaptureState {
  bool capturing = false;
  std::string refusal;
};

inline CaptureState capture_state(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t e = cudaStreamIsCapturing(stream, &status);
  if (e == cudaErrorStreamCaptureImplicit)
    return {false, "it was logged on the legacy default stream while a blocking stream is capturing a CUDA graph"};
  if (e != cudaSuccess)
    return {false, std::string("the stream's capture state could not be read: ") + cudaGetErrorName(e)};
  if (status == cudaStreamCaptureStatusActive) return {true, "its stream is capturing a CUDA graph"};
  if (status == cudaStreamCaptureStatusInvalidated) return {false, "its stream's CUDA graph capture was invalidated"};
  return {};
}

// Clears, on leaving, the error the logger's own CUDA calls left (none was pending on entry).
struct ClearOwnError {
  bool asked;  // false: no CUDA call was made (CUDA is absent), so there is nothing of ours to clear
  ~ClearOwnError() {
    if (asked) (void)cudaGetLastError();
  }
};

inline void report(std::string_view checkpoint, ::orchlog::detail::Warning kind, const std::string& why) {
  ::orchlog::detail::logger().report(kind, "record '" + std::string(checkpoint) + "' not written: " + why);
}

#if defined(__CUDACC__)
// Logging inside captured graphs (start_graph_logging): the ring in mapped
// pinned memory, and the device buffers each recorded log call keeps.
struct GraphLogging {
  std::mutex mutex;
  void* host = nullptr;
  unsigned char* device = nullptr;  // the device's address of `host`
  void* device_block = nullptr;     // the ring's claim counter and busy flags, in device memory
  std::unique_ptr<::orchlog::detail::device::Ring> ring;
  std::vector<void*> buffers;
};

inline GraphLogging& graph_logging() {
  static GraphLogging* g = new GraphLogging();  // never destroyed, like the logger
  return *g;
}

// Records into the capture on `stream` the nodes that log this call at every
// replay: the summary kernels, the kernel that fills a slot of the ring, and
// the host node that wakes the writer. Empty, or why it could not.
inline std::string record_into_graph(std::string_view checkpoint, const Tensor& t,
                                     const ::orchlog::detail::TensorSize& size, cudaStream_t stream, const Key& key) {
  namespace dev = ::orchlog::detail::device;
  GraphLogging& g = graph_logging();
  std::lock_guard<std::mutex> lock(g.mutex);
  if (!g.ring) return "logging inside captured CUDA graphs is off (orchlog::cuda::start_graph_logging turns it on)";
  const auto session = ::orchlog::detail::logger().session();
  if (!session) return "logging is off";
  if (!::orchlog::detail::would_write(checkpoint, key, 1)) return {};  // not selected: nothing to record
  const bool full = session->settings.writes_frames();
  const std::uint64_t payload =
      full || session->settings.knobs.values < 0
          ? size.nbytes
          : static_cast<std::uint64_t>(std::min<std::int64_t>(session->settings.knobs.values, size.numel)) *
                schema::dtype_size(t.dtype);
  const std::int64_t site = g.ring->register_site(dev::Ring::site(checkpoint, key, t.dtype, t.shape, payload, full));
  if (site < 0) return "the record ring has no room for another logged call or for this tensor";
  const std::size_t scratch = dev::scratch_bytes(size.numel, size.nbytes);
  const std::size_t summary_at = (scratch + 255) / 256 * 256;
  void* buffer = nullptr;
  if (cudaMalloc(&buffer, summary_at + sizeof(dev::Summary)) != cudaSuccess) return "no device memory for its summary";
  g.buffers.push_back(buffer);
  auto* summary = reinterpret_cast<dev::Summary*>(static_cast<unsigned char*>(buffer) + summary_at);
  const dev::Elements e{static_cast<const std::uint8_t*>(t.data), t.dtype, size.numel};
  cudaError_t error = dev::enqueue_summary(e, size.nbytes, summary, buffer, stream);
  if (error == cudaSuccess) {
    dev::ring_fill_kernel<><<<1, 256, 0, stream>>>(g.ring->view(g.device_block, g.device),
                                                   static_cast<std::uint32_t>(site), summary,
                                                   static_cast<const unsigned char*>(t.data), payload);
    error = cudaGetLastError();
  }
  if (error == cudaSuccess) error = cudaLaunchHostFunc(stream, dev::ring_notify, g.ring.get());
  if (error != cudaSuccess) return std::string("recording it into the graph failed: ") + cudaGetErrorString(error);
  return {};
}

// Summary mode on the device: the kernels fill a Summary, which comes back
// with the leading values the run keeps. False (nothing enqueued, or all of
// it finished) when the run needs the tensor itself or scratch memory could
// not be had: the caller copies the tensor instead.
inline bool summarize_on_device(std::string_view checkpoint, const Tensor& t, const ::orchlog::detail::TensorSize& size,
                                cudaStream_t stream, const Key& key, ::orchlog::detail::MetaSpan meta, bool& written) {
  written = false;
  if (!g_device_summaries.load(std::memory_order_relaxed)) return false;
  const auto session = ::orchlog::detail::logger().session();
  if (!session || session->settings.writes_frames() || session->settings.knobs.values < 0) return false;
  if (!::orchlog::detail::would_write(checkpoint, key, 1)) return true;  // not selected: nothing to compute
  namespace dev = ::orchlog::detail::device;
  const std::size_t scratch = dev::scratch_bytes(size.numel, size.nbytes);
  const std::size_t summary_at = (scratch + 255) / 256 * 256;
  void* buffer = nullptr;
  if (cudaMallocAsync(&buffer, summary_at + sizeof(dev::Summary), stream) != cudaSuccess) return false;
  auto* summary = reinterpret_cast<dev::Summary*>(static_cast<unsigned char*>(buffer) + summary_at);
  const dev::Elements e{static_cast<const std::uint8_t*>(t.data), t.dtype, size.numel};
  dev::Summary host{};
  const auto kept = static_cast<std::size_t>(std::min<std::int64_t>(session->settings.knobs.values, size.numel)) *
                    schema::dtype_size(t.dtype);
  std::vector<unsigned char> leading(std::max<std::size_t>(kept, 1));
  cudaError_t error = dev::enqueue_summary(e, size.nbytes, summary, buffer, stream);
  if (error == cudaSuccess) error = cudaMemcpyAsync(&host, summary, sizeof host, cudaMemcpyDeviceToHost, stream);
  if (error == cudaSuccess && kept > 0)
    error = cudaMemcpyAsync(leading.data(), t.data, kept, cudaMemcpyDeviceToHost, stream);
  const cudaError_t freed = cudaFreeAsync(buffer, stream);
  if (error == cudaSuccess) error = freed;
  if (error == cudaSuccess) error = cudaStreamSynchronize(stream);
  if (error != cudaSuccess) {
    report(checkpoint, ::orchlog::detail::kCuda,
           std::string("computing its summary on the GPU failed: ") + cudaGetErrorString(error));
    return true;
  }
  const ::orchlog::detail::TensorDigest digest = dev::finish(host);
  written =
      ::orchlog::detail::write_record(checkpoint, Tensor{leading.data(), t.dtype, t.shape}, key, meta, {}, &digest);
  return true;
}
#endif

// Where a pointer's bytes are, as far as the logger may ask: in host memory
// (or CUDA is absent), in device memory (with the state of `stream`), or not to
// be asked about at all, because an error of the engine's is waiting to be read.
struct Located {
  enum Kind { host, device, pending } kind = host;
  bool asked = false;    // whether CUDA was called
  std::string why;       // pending: the waiting error
  CaptureState capture;  // device: the stream's
};

// Any CUDA error the logger's calls raise here or after is the logger's own
// (the caller clears it with ClearOwnError), unless `pending`.
inline Located locate(const void* data, cudaStream_t stream) {
  if (g_presence.load(std::memory_order_relaxed) == kAbsent || data == nullptr) return {};
  const cudaError_t pending = cudaPeekAtLastError();
  if (no_cuda(pending)) {
    g_presence.store(kAbsent, std::memory_order_relaxed);
    return {};
  }
  if (pending != cudaSuccess)
    return {Located::pending,
            false,
            std::string("a CUDA error of the engine's (") + cudaGetErrorName(pending) +
                ") was waiting to be read; orchlog makes no CUDA call until it is, so that the engine's own check "
                "still sees it",
            {}};
  cudaPointerAttributes attr{};
  const cudaError_t e = cudaPointerGetAttributes(&attr, data);
  if (e != cudaSuccess) {
    if (no_cuda(e)) g_presence.store(kAbsent, std::memory_order_relaxed);
    return {Located::host, true, {}, {}};  // also what older runtimes say about plain host memory
  }
  g_presence.store(kPresent, std::memory_order_relaxed);
  if (attr.type != cudaMemoryTypeDevice && attr.type != cudaMemoryTypeManaged) return {Located::host, true, {}, {}};
  return {Located::device, true, {}, capture_state(stream)};
}

inline std::string skipped_in_capture(const std::string& refusal) {
  g_capture_skips.fetch_add(1, std::memory_order_relaxed);
  return refusal +
         "; orchlog never synchronizes a capturing stream (skipped records are counted by "
         "orchlog::cuda::capture_skips())";
}

// The `nbytes` at `data` into `out`, after the work queued on `stream`: host
// memory is not copied (`host`), device memory is (`copied`); `refused` (and
// `why`) when the stream is capturing, an error is pending or the copy failed.
enum class Read { host, copied, refused };

inline Read read_to_host(const void* data, std::size_t nbytes, cudaStream_t stream, void* out, std::string& why) {
  const Located where = locate(data, stream);
  if (where.kind == Located::pending) {
    why = where.why;
    return Read::refused;
  }
  const ClearOwnError clear{where.asked};
  if (where.kind == Located::host) return Read::host;
  if (where.capture.capturing || !where.capture.refusal.empty()) {
    why = skipped_in_capture(where.capture.refusal);
    return Read::refused;
  }
  const RelaxedCapture relaxed;
  cudaError_t error = cudaMemcpyAsync(out, data, nbytes, cudaMemcpyDeviceToHost, stream);
  if (error == cudaSuccess) error = cudaStreamSynchronize(stream);
  if (error != cudaSuccess) {
    why = std::string("copying a device tensor to the host failed: ") + cudaGetErrorString(error);
    return Read::refused;
  }
  return Read::copied;
}

inline bool write_record(std::string_view checkpoint, const Tensor& t, cudaStream_t stream, const Key& key,
                         ::orchlog::detail::MetaSpan meta) noexcept {
  using ::orchlog::detail::write_record;
  try {
    const Located where = locate(t.data, stream);
    if (where.kind == Located::pending) {
      report(checkpoint, ::orchlog::detail::kCudaPending, where.why);
      return false;
    }
    const ClearOwnError clear{where.asked};
    if (where.kind == Located::host) return write_record(checkpoint, t, key, meta);
    std::string why;
    const auto size = ::orchlog::detail::measure(t, why);
    if (!size) return write_record(checkpoint, t, key, meta);  // which reports it
    CaptureState capture = where.capture;
#if defined(__CUDACC__)
    if (capture.capturing) {
      const RelaxedCapture relaxed;  // its device memory is allocated outside the capture
      const std::string not_recorded = record_into_graph(checkpoint, t, *size, stream, key);
      if (not_recorded.empty()) return false;  // recorded: the replays write it
      capture.refusal += " and " + not_recorded;
    }
#endif
    if (!capture.refusal.empty()) {
      report(checkpoint, ::orchlog::detail::kCudaCapture, skipped_in_capture(capture.refusal));
      return false;
    }
#if defined(__CUDACC__)
    {
      const RelaxedCapture relaxed;
      bool summarized = false;
      if (summarize_on_device(checkpoint, t, *size, stream, key, meta, summarized)) return summarized;
    }
#endif
    thread_local std::vector<unsigned char> copy;
    copy.resize(static_cast<std::size_t>(size->nbytes));
    if (read_to_host(t.data, copy.size(), stream, copy.data(), why) != Read::copied) {
      report(checkpoint, ::orchlog::detail::kCuda, why);
      return false;
    }
    const bool written = write_record(checkpoint, Tensor{copy.data(), t.dtype, t.shape}, key, meta);
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

// Device tensors not logged because their stream was capturing a CUDA graph.
inline std::uint64_t capture_skips() noexcept { return detail::g_capture_skips.load(std::memory_order_relaxed); }

// Logging inside captured CUDA graphs (nvcc builds): from now on a log call
// met while its stream captures records into the graph the work that logs it
// at every replay (the summary kernels, a kernel that fills a slot of a ring
// of `slots` slots in mapped pinned memory, a host node that wakes the writer
// thread). A replay's record has the capture's key with step = the capture's
// step (0 when none) + the replay count, so replays pair with an eager run's
// steps. Payloads (the leading values, or the tensor in full mode) up to
// `max_payload` bytes; a full ring drops records, each counted, never
// waiting. False when it cannot start (not an nvcc build, no pinned memory)
// or has started already.
struct GraphRing {
  std::uint64_t slots = 1024;
  std::uint32_t max_sites = 4096;    // log calls recorded into graphs, over the run
  std::uint64_t max_payload = 4096;  // bytes: ORCH_LOG_VALUES elements, or a whole tensor in full mode
};

inline bool start_graph_logging(const GraphRing& options = {}) noexcept {
#if defined(__CUDACC__)
  namespace dev = ::orchlog::detail::device;
  try {
    detail::GraphLogging& g = detail::graph_logging();
    std::lock_guard<std::mutex> lock(g.mutex);
    if (g.ring) return false;
    const std::uint64_t slot_bytes = dev::slot_bytes_for(options.max_payload);
    const std::uint64_t bytes = dev::Ring::memory_bytes(options.slots, slot_bytes, options.max_sites);
    const detail::RelaxedCapture relaxed;
    void* device = nullptr;
    if (cudaHostAlloc(&g.host, bytes, cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess ||
        cudaHostGetDevicePointer(&device, g.host, 0) != cudaSuccess ||
        cudaMalloc(&g.device_block, dev::device_block_bytes(options.slots)) != cudaSuccess ||
        cudaMemset(g.device_block, 0, dev::device_block_bytes(options.slots)) != cudaSuccess) {
      (void)cudaGetLastError();
      if (g.host != nullptr) (void)cudaFreeHost(g.host);
      if (g.device_block != nullptr) (void)cudaFree(g.device_block);
      g.host = nullptr;
      g.device_block = nullptr;
      return false;
    }
    std::memset(g.host, 0, bytes);
    g.device = static_cast<unsigned char*>(device);
    g.ring = std::make_unique<dev::Ring>(g.host, options.slots, slot_bytes, options.max_sites, true);
    return true;
  } catch (...) {
    return false;
  }
#else
  static_cast<void>(options);
  return false;
#endif
}

// After the last replay has finished: writes what is left, then the record
// `orchlog.graph_records` (an i64 tensor and meta: expected, written,
// dropped), and frees the ring and the recorded calls' device memory.
inline void stop_graph_logging() noexcept {
#if defined(__CUDACC__)
  try {
    detail::GraphLogging& g = detail::graph_logging();
    std::lock_guard<std::mutex> lock(g.mutex);
    if (!g.ring) return;
    const bool clean = cudaPeekAtLastError() == cudaSuccess;  // an error of the engine's is left to it
    g.ring->close();
    g.ring.reset();
    for (void* buffer : g.buffers) (void)cudaFree(buffer);
    g.buffers.clear();
    (void)cudaFreeHost(g.host);
    (void)cudaFree(g.device_block);
    g.host = nullptr;
    g.device = nullptr;
    g.device_block = nullptr;
    if (clean) (void)cudaGetLastError();
  } catch (...) {
  }
#endif
}

// Whether summary mode computes summaries on the GPU (the default, in nvcc
// builds) or copies the tensor and summarizes it on the host (the same bytes;
// for comparing the two). Returns the previous setting.
inline bool use_device_summaries(bool on) noexcept { return detail::g_device_summaries.exchange(on); }

}  // namespace cuda
}  // namespace orchlog

#else
#define ORCHLOG_CUDA_ENABLED 0
#endif
