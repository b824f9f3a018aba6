// ORCH_LOG_CUDA inside CUDA graph capture must never break the capture nor
// change the engine's results, and must leave the engine's CUDA errors as
// they were. Prints one line per check ("ok NAME" or "FAIL NAME: why"), then
// "captures: OK" when all passed; without a GPU, "no CUDA device".
//
// 1. a logged kernel captured on a non-blocking stream (global mode): the
//    record is skipped and counted, the capture succeeds, and the graph
//    replayed N times gives the eager run's output;
// 2. a log on the legacy default stream while a blocking stream captures:
//    skipped (cudaErrorStreamCaptureImplicit, which is cleared), capture intact;
// 3. a log from another thread on a stream that is not capturing, while this
//    thread captures in global mode: written, and the capture is intact;
// 4. a CUDA error the engine has not read: the record is skipped and the
//    engine still reads its own error.
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

#include <cuda_runtime.h>

#include <orchlog/orchlog.hpp>

__global__ void step(const float* x, float* y, int n, float scale) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * scale + 1.0f;
}

namespace {

int failures = 0;

void check(bool ok, const char* name, const char* why = "") {
  std::printf(ok ? "ok %s\n" : "FAIL %s: %s\n", name, why);
  if (!ok) ++failures;
}

}  // namespace

int main() {
  const int n = 1 << 16, replays = 5;
  float *x = nullptr, *y = nullptr;
  if (cudaMalloc(&x, n * sizeof(float)) != cudaSuccess) {
    (void)cudaGetLastError();
    std::puts("no CUDA device");
    return 0;
  }
  cudaMalloc(&y, n * sizeof(float));
  std::vector<float> host(n), eager(n), replayed(n);
  for (int i = 0; i < n; ++i) host[i] = 0.25f * static_cast<float>(i % 97);
  cudaMemcpy(x, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cudaStream_t stream, blocking, other;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  cudaStreamCreate(&blocking);
  cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking);

  // Eager: the reference output, logged once.
  step<<<n / 256, 256, 0, stream>>>(x, y, n, 3.0f);
  ORCH_LOG_CUDA("y", 0, y, stream, "f32", n);
  cudaMemcpyAsync(eager.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  const std::int64_t written_eager = orchlog::status().records;

  // 1. Captured on a non-blocking stream, global mode.
  cudaMemsetAsync(y, 0, n * sizeof(float), stream);
  cudaGraph_t graph = nullptr;
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) == cudaSuccess, "begin capture");
  step<<<n / 256, 256, 0, stream>>>(x, y, n, 3.0f);
  ORCH_LOG_CUDA("y", 1, y, stream, "f32", n);
  // 3. Another thread logs a tensor on a stream that is not capturing, during this global-mode capture.
  bool other_written = false;
  std::thread([&] {
    other_written = orchlog::cuda::log("other", {x, orchlog::DType::f32, {n}}, other, orchlog::Key{2});
  }).join();
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  check(ended == cudaSuccess && graph != nullptr, "capture with a logged tensor succeeds", cudaGetErrorName(ended));
  check(orchlog::cuda::capture_skips() == 1, "the record inside the capture is skipped and counted");
  check(other_written, "a log on another, non-capturing stream during a global capture is written");
  cudaGraphExec_t exec = nullptr;
  check(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess, "the graph instantiates");
  for (int r = 0; r < replays; ++r) cudaGraphLaunch(exec, stream);
  cudaMemcpyAsync(replayed.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  check(replayed == eager, "the replayed graph computes what the eager run did");

  // 2. The legacy default stream while a blocking stream captures.
  cudaGraph_t blocking_graph = nullptr;
  cudaStreamBeginCapture(blocking, cudaStreamCaptureModeThreadLocal);
  step<<<n / 256, 256, 0, blocking>>>(x, y, n, 3.0f);
  ORCH_LOG_CUDA("legacy", 3, y, 0, "f32", n);
  const cudaError_t blocking_ended = cudaStreamEndCapture(blocking, &blocking_graph);
  check(blocking_ended == cudaSuccess && blocking_graph != nullptr,
        "a log on the legacy stream leaves a blocking stream's capture intact", cudaGetErrorName(blocking_ended));
  check(orchlog::cuda::capture_skips() == 2, "the legacy-stream record is skipped and counted");
  check(cudaGetLastError() == cudaSuccess, "no CUDA error is left after the captures");

  // 4. An error the engine has not read yet (a failed allocation is not sticky).
  void* huge = nullptr;
  (void)cudaMalloc(&huge, ~std::size_t{0} >> 2);
  const std::uint64_t errors = orchlog::status().errors;
  ORCH_LOG_CUDA("pending", 4, y, stream, "f32", n);
  check(orchlog::status().errors == errors + 1, "a record met by a pending error is skipped and counted");
  check(cudaGetLastError() == cudaErrorMemoryAllocation, "the engine still reads its own error");

  check(orchlog::status().records == written_eager + 1, "exactly the eager and the other-stream records are written");
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaGraphDestroy(blocking_graph);
  cudaStreamDestroy(other);
  cudaStreamDestroy(blocking);
  cudaStreamDestroy(stream);
  cudaFree(y);
  cudaFree(x);
  std::puts(failures == 0 ? "captures: OK" : "captures: FAILED");
  return failures == 0 ? 0 : 1;
}
