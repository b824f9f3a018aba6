/* A C engine logging device tensors through liborchlog_c's CUDA entry points
   (orchlog/orchlog_cuda.h), for a GPU machine (scripts/gpu-check.sh): each
   device tensor beside a host twin of the same values (token 0 host, token 1
   device), orchlog_cuda_read of device memory (what the Rust crate's feature
   `cuda` calls), and a log call on a capturing stream, which must be skipped
   and counted with the capture intact. The records' equality is checked by
   the script; this program checks the rest and prints "c abi: OK". */
#include <cuda_runtime_api.h>
#include <orchlog/orchlog_cuda.h>
#include <stdio.h>
#include <string.h>

#define N 4096

static int fail(const char* what) {
  printf("FAIL %s\n", what);
  return 1;
}

int main(void) {
  static float host[N];
  static unsigned short half_host[N];
  static float back[N];
  const int64_t shape[2] = {4, N / 4};
  const orchlog_key host_key = {0, 1, ORCHLOG_NONE, NULL};
  const orchlog_key device_key = {1, 1, ORCHLOG_NONE, NULL};
  char why[256] = "";
  void* dev = NULL;
  void* dev_half = NULL;
  cudaStream_t stream = NULL;
  cudaGraph_t graph = NULL;
  int i;
  for (i = 0; i < N; ++i) host[i] = 0.25f * (float)(i - N / 2);
  for (i = 0; i < N; ++i) half_host[i] = (unsigned short)(0x3C00 + i % 1024);

  if (!orchlog_cuda_available()) return fail("liborchlog_c was built without CUDA");
  if (cudaMalloc(&dev, sizeof host) != cudaSuccess || cudaMalloc(&dev_half, sizeof half_host) != cudaSuccess) {
    (void)cudaGetLastError();
    puts("no CUDA device");
    return 0;
  }
  if (cudaStreamCreate(&stream) != cudaSuccess) return fail("cudaStreamCreate");
  /* Queued on the stream, not yet done when the log is asked for: the read must wait for it. */
  if (cudaMemcpyAsync(dev, host, sizeof host, cudaMemcpyHostToDevice, stream) != cudaSuccess) return fail("copy");
  if (cudaMemcpyAsync(dev_half, half_host, sizeof half_host, cudaMemcpyHostToDevice, stream) != cudaSuccess)
    return fail("copy f16");

  if (orchlog_cuda_log("f32", host, "f32", shape, 2, &host_key, NULL) != 1) return fail("host f32 not logged");
  if (orchlog_cuda_log("f32", dev, "f32", shape, 2, &device_key, stream) != 1) return fail("device f32 not logged");
  if (orchlog_cuda_log("f16", half_host, "f16", shape, 2, &host_key, NULL) != 1) return fail("host f16 not logged");
  if (orchlog_cuda_log("f16", dev_half, "f16", shape, 2, &device_key, stream) != 1)
    return fail("device f16 not logged");

  if (orchlog_cuda_read(dev, sizeof host, stream, back, why, sizeof why) != ORCHLOG_CUDA_COPIED)
    return fail(why[0] ? why : "orchlog_cuda_read did not copy device memory");
  if (memcmp(back, host, sizeof host) != 0) return fail("orchlog_cuda_read read other bytes");
  if (orchlog_cuda_read(host, sizeof host, stream, back, why, sizeof why) != ORCHLOG_CUDA_HOST)
    return fail("a host pointer was not answered ORCHLOG_CUDA_HOST");

  /* A log call inside a capture: skipped and counted, the capture still succeeds. */
  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) != cudaSuccess) return fail("begin capture");
  if (cudaMemsetAsync(dev, 0, sizeof host, stream) != cudaSuccess) return fail("memset in capture");
  if (orchlog_cuda_log("captured", dev, "f32", shape, 2, &device_key, stream) != 0)
    return fail("a capturing stream's tensor was logged");
  if (cudaStreamEndCapture(stream, &graph) != cudaSuccess || graph == NULL)
    return fail("the capture was broken by the log call");
  if (orchlog_cuda_capture_skips() != 1) return fail("the capture skip was not counted once");

  if (cudaGetLastError() != cudaSuccess) return fail("a CUDA error was left behind");
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  cudaFree(dev);
  cudaFree(dev_half);
  orchlog_close();
  /* The skipped record is the one error orchlog may count. */
  if (orchlog_error_count() != orchlog_cuda_capture_skips()) return fail("orchlog counted another error");
  puts("c abi: OK");
  return 0;
}
