// The CUDA kernels of the device summary: each runs the work items of
// summary_math.hpp one per thread, in the decomposition the CPU twin
// (summary_twin.hpp) loops over. Compiled only by nvcc.
//
// Enqueued on the engine's stream, they read the tensor where it lies and
// leave a Summary of a few kilobytes in device memory: 8 threads walk the
// stats lanes (the format's order makes each lane one chain of additions),
// one thread per (chunk, lane) group transforms the sketch and 512 threads
// add the groups into the accumulators in chunk order, a slab of chunks at a
// time; one thread per 1 KiB chunk hashes, then one launch per tree level.
#pragma once

#if defined(__CUDACC__)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "orchlog/detail/device/summary_math.hpp"
#include "orchlog/detail/device/summary_twin.hpp"

namespace orchlog {
namespace detail {
namespace device {

// Templates, so that every translation unit of a header-only build may hold them.
template <class = void>
__global__ void stats_kernel(Elements e, Summary* out) {
  const int q = static_cast<int>(threadIdx.x);
  if (q < kLanes) stats_lane(e, q, out->lanes[q]);
}

template <class = void>
__global__ void sketch_groups_kernel(Elements e, std::int64_t first, std::int64_t count, double* groups) {
  const std::int64_t item = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (item >= count * kLanes) return;
  sketch_group(e, first + item / kLanes, static_cast<int>(item % kLanes), groups + item * kRows);
}

template <class = void>
__global__ void sketch_accumulate_kernel(const double* groups, std::int64_t count, Summary* out) {
  const int item = static_cast<int>(threadIdx.x);  // one block of 512: lane item / 64, accumulator item % 64
  if (item < kLanes * kRows)
    sketch_accumulate(groups, count, item / kRows, item % kRows, out->sketch[item / kRows][item % kRows]);
}

template <class = void>
__global__ void blake3_chunks_kernel(const std::uint8_t* p, std::uint64_t len, std::uint64_t n, std::uint32_t* cvs) {
  const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) blake3_chunk(p, len, i, cvs + 8 * i);
}

template <class = void>
__global__ void blake3_level_kernel(const std::uint32_t* below, std::uint64_t n, std::uint32_t* above) {
  const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < (n + 1) / 2) blake3_level(below, n, i, above);
}

template <class = void>
__global__ void blake3_root_kernel(const std::uint32_t* two, Summary* out) {
  if (threadIdx.x == 0) blake3_root(two, out->blake3);
}

// Device scratch the kernels need for a tensor of `n` elements and `nbytes` bytes.
inline std::size_t scratch_bytes(std::int64_t n, std::uint64_t nbytes) {
  const std::int64_t chunks = std::min(sketch_chunks(n), kSketchSlab);
  const std::uint64_t leaves = blake3_chunks(nbytes);
  return static_cast<std::size_t>(chunks * kChunk) * sizeof(double) +
         static_cast<std::size_t>(leaves + (leaves + 1) / 2) * 8 * sizeof(std::uint32_t);
}

inline unsigned int blocks_for(std::uint64_t items, unsigned int threads) {
  return static_cast<unsigned int>((items + threads - 1) / threads);
}

// Enqueues on `stream` the kernels that fill `*out` (device memory) with the
// Summary of `e` (`nbytes` bytes of device memory), using `scratch`
// (scratch_bytes of device memory). Returns the first error of the enqueueing.
inline cudaError_t enqueue_summary(const Elements& e, std::uint64_t nbytes, Summary* out, void* scratch,
                                   cudaStream_t stream) {
  cudaError_t error = cudaMemsetAsync(out, 0, sizeof(Summary), stream);
  if (error != cudaSuccess) return error;
  stats_kernel<><<<1, 32, 0, stream>>>(e, out);
  auto* groups = static_cast<double*>(scratch);
  const std::int64_t chunks = sketch_chunks(e.n);
  for (std::int64_t first = 0; first < chunks; first += kSketchSlab) {
    const std::int64_t count = std::min(kSketchSlab, chunks - first);
    sketch_groups_kernel<>
        <<<blocks_for(static_cast<std::uint64_t>(count * kLanes), 128), 128, 0, stream>>>(e, first, count, groups);
    sketch_accumulate_kernel<><<<1, kLanes * kRows, 0, stream>>>(groups, count, out);
  }
  auto* below = reinterpret_cast<std::uint32_t*>(groups + std::min(chunks, kSketchSlab) * kChunk);
  std::uint64_t n = blake3_chunks(nbytes);
  if (n == 1) {
    blake3_chunks_kernel<><<<1, 32, 0, stream>>>(e.data, nbytes, 1, out->blake3);
    return cudaGetLastError();
  }
  std::uint32_t* above = below + 8 * n;
  blake3_chunks_kernel<><<<blocks_for(n, 128), 128, 0, stream>>>(e.data, nbytes, n, below);
  while (n > 2) {
    blake3_level_kernel<><<<blocks_for((n + 1) / 2, 128), 128, 0, stream>>>(below, n, above);
    std::swap(below, above);
    n = (n + 1) / 2;
  }
  blake3_root_kernel<><<<1, 32, 0, stream>>>(below, out);
  return cudaGetLastError();  // a launch error is ours: the caller made sure none was pending before
}

}  // namespace device
}  // namespace detail
}  // namespace orchlog
#endif
