// A CUDA host that logs tensors in device memory, each beside a host twin
// holding the same values: on a GPU every device record must read back equal
// to its twin. The twins logged before any CUDA call are written on any
// machine; without a GPU the program says so and stops there.
//
// Device cases: a kernel still running on a stream when the log is asked for
// (the copy must wait for it), a pointer into the middle of an allocation, an
// f16 tensor copied onto the device, managed memory written on the default stream and logged through
// ORCH_LOG_TOKEN, and orchlog::cuda::log with a key. After them no CUDA error
// may be left for the engine's own checks.
#include <cstdint>
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#include <orchlog/orchlog.hpp>

// x[i] = 0.5 i, written only after spinning `delay` clock cycles, so that a
// copy that did not wait for the kernel would read the buffer's old bytes.
__global__ void fill(float* x, int n, long long delay) {
  const long long start = clock64();
  while (clock64() - start < delay) {
  }
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 0.5f * static_cast<float>(i);
}

int main() {
  const int n = 4096;
  const int blocks = (n + 255) / 256;
  const long long delay = 100000000;  // about 50 ms at the clocks of current GPUs
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i) host[i] = 0.5f * static_cast<float>(i);
  std::vector<std::uint16_t> half_host(n);  // f16 bits of 1 + k/1024
  for (int i = 0; i < n; ++i) half_host[i] = static_cast<std::uint16_t>(0x3C00 + i % 1024);

  // Host twins (token 0): host pointers take the host path, also in CUDA builds.
  ORCH_LOG_CUDA("f32", 0, host.data(), nullptr, "f32", n);
  ORCH_LOG_CUDA("offset", 0, host.data() + 1024, nullptr, "f32", 16, 64);
  ORCH_LOG_TOKEN("managed", 0, host.data(), "f32", n);
  ORCH_LOG_CUDA("f16", 0, half_host.data(), nullptr, "f16", n);
  orchlog::cuda::log("api", {host.data(), orchlog::DType::f32, {64, 64}}, nullptr, orchlog::Key{0, 3});

  float* dev = nullptr;
  if (cudaMalloc(&dev, n * sizeof(float)) != cudaSuccess) {
    (void)cudaGetLastError();
    std::puts("no CUDA device");
    return 0;
  }
  cudaMemset(dev, 0, n * sizeof(float));
  cudaDeviceSynchronize();  // the stream below does not wait on the default one
  // Non-blocking, so that a copy made on the wrong stream would not wait for fill.
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  fill<<<blocks, 256, 0, stream>>>(dev, n, delay);
  ORCH_LOG_CUDA("f32", 1, dev, stream, "f32", n);                 // waits for fill on `stream`
  ORCH_LOG_CUDA("offset", 1, dev + 1024, stream, "f32", 16, 64);  // inside the allocation
  orchlog::cuda::log("api", {dev, orchlog::DType::f32, {64, 64}}, stream, orchlog::Key{1, 3});

  std::uint16_t* dev_half = nullptr;  // a 2-byte dtype, put on the device by a copy on the stream
  cudaMalloc(&dev_half, n * sizeof(std::uint16_t));
  cudaMemcpyAsync(dev_half, half_host.data(), n * sizeof(std::uint16_t), cudaMemcpyHostToDevice, stream);
  ORCH_LOG_CUDA("f16", 1, dev_half, stream, "f16", n);

  float* managed = nullptr;
  cudaMallocManaged(&managed, n * sizeof(float));
  fill<<<blocks, 256>>>(managed, n, delay);  // the legacy default stream, which ORCH_LOG_TOKEN waits on
  ORCH_LOG_TOKEN("managed", 1, managed, "f32", n);

  cudaDeviceSynchronize();
  const cudaError_t left = cudaGetLastError();
  cudaFree(managed);
  cudaFree(dev_half);
  cudaStreamDestroy(stream);
  cudaFree(dev);
  std::printf("device tensors logged; error left: %s\n", cudaGetErrorName(left));
  return 0;
}
