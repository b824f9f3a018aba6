// A CUDA host that logs a device tensor (filled by a kernel on a stream) and
// the same values from host memory. Without a GPU the device part cannot
// run: it says so, and the host record is still written.
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#include <orchlog/orchlog.hpp>

__global__ void fill(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 0.5f * static_cast<float>(i);
}

int main() {
  const int n = 4096;
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i) host[i] = 0.5f * static_cast<float>(i);
  ORCH_LOG_CUDA("tensor", 0, host.data(), nullptr, "f32", n);  // a host pointer takes the host path

  float* dev = nullptr;
  if (cudaMalloc(&dev, n * sizeof(float)) != cudaSuccess) {
    (void)cudaGetLastError();
    std::puts("no CUDA device");
    return 0;
  }
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  fill<<<(n + 255) / 256, 256, 0, stream>>>(dev, n);
  ORCH_LOG_CUDA("tensor", 1, dev, stream, "f32", n);  // copied after the kernel on `stream`
  cudaStreamDestroy(stream);
  cudaFree(dev);
  std::puts("device tensor logged");
  return 0;
}
