// The CUDA kernels of the device summary: each runs the work items of
// summary_math.hpp one per thread, in the decomposition the CPU twin
// (summary_twin.hpp) loops over. Compiled only by nvcc.
//
// Enqueued on the engine's stream, they read the tensor where it lies and
// leave a Summary of a few kilobytes in device memory: 8 threads walk the
// stats lanes (the format's order makes each lane one chain of additions)
// through tiles the rest of their block loads, one thread per (chunk, lane)
// group transforms the sketch and 512 threads add the groups into the
// accumulators in chunk order, a slab of chunks at a time; one thread per
// 1 KiB chunk hashes, then one launch per tree level.
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

// The stats: each lane is one chain of additions (the format's order), so
// their speed is an f64 addition's latency per 8 elements, provided the
// elements are at hand. One block: while the 8 lane threads of its first warp
// add a tile held in shared memory, the other warps load the tile after the
// next (coalesced, widened, about two elements a thread), so a load's
// latency is hidden behind two tiles' additions.
inline constexpr int kStatsTile = 2048;  // elements: three tiles of f64 are 48 KiB
inline constexpr int kStatsBuffers = 3;  // the loaders work two tiles ahead of the adders
inline constexpr int kStatsThreads = 1024;
inline constexpr int kStatsLoaders = kStatsThreads - 32;  // every warp but the first

// Templates, so that every translation unit of a header-only build may hold them.
template <class = void>
__device__ void stats_load_tile(const Elements& e, std::int64_t first, int loader, int loaders, double* tile) {
  for (int j = loader; j < kStatsTile && first + j < e.n; j += loaders) {
    bool finite = false;
    tile[j] = element(e, first + j, finite);
  }
}

template <class = void>
__global__ void __launch_bounds__(kStatsThreads) stats_kernel(Elements e, Summary* out) {
  __shared__ double tiles[kStatsBuffers][kStatsTile];
  const int t = static_cast<int>(threadIdx.x);
  const std::int64_t count = (e.n + kStatsTile - 1) / kStatsTile;
  StatsLane s = stats_start();
  for (int k = 0; k < kStatsBuffers - 1 && k < count; ++k)
    stats_load_tile(e, k * kStatsTile, t, kStatsThreads, tiles[k]);
  __syncthreads();
  for (std::int64_t k = 0; k < count; ++k) {
    const double* tile = tiles[k % kStatsBuffers];
    if (t < kLanes) {  // lane t: elements t, t + 8, ... of the tile, in order
      const int m = static_cast<int>(e.n - k * kStatsTile < kStatsTile ? e.n - k * kStatsTile : kStatsTile);
      int j = t;
      for (; j + 7 * kLanes < m; j += 8 * kLanes) {
        double x[8];
        for (int u = 0; u < 8; ++u) x[u] = tile[j + u * kLanes];
        stats_add8(s, x);
      }
      for (; j < m; j += kLanes) stats_add(s, tile[j]);
    } else if (t >= 32 && k + kStatsBuffers - 1 < count) {
      const std::int64_t ahead = k + kStatsBuffers - 1;
      stats_load_tile(e, ahead * kStatsTile, t - 32, kStatsLoaders, tiles[ahead % kStatsBuffers]);
    }
    __syncthreads();
  }
  if (t < kLanes) out->lanes[t] = s;
}

template <class = void>
__global__ void sketch_groups_kernel(Elements e, std::int64_t first, std::int64_t count, double* groups) {
  const std::int64_t item = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (item >= count * kLanes) return;
  sketch_group(e, first + item / kLanes, static_cast<int>(item % kLanes), groups + item * kRows);
}

template <class = void>
__global__ void sketch_accumulate_kernel(const double* groups, std::int64_t count, bool first, Summary* out) {
  const int item = static_cast<int>(threadIdx.x);  // one block of 512: lane item / 64, accumulator item % 64
  if (item >= kLanes * kRows) return;
  double& acc = out->sketch[item / kRows][item % kRows];
  if (first) acc = 0.0;  // what the host's accumulators start from; the Summary is not cleared before
  sketch_accumulate(groups, count, item / kRows, item % kRows, acc);
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

// The three parts of a Summary, each enqueued on `stream` (enqueue_summary
// runs them in turn; benchmarks/cuda_overhead.cu times them one by one).
inline void enqueue_stats(const Elements& e, Summary* out, cudaStream_t stream) {
  stats_kernel<><<<1, kStatsThreads, 0, stream>>>(e, out);
}

inline void enqueue_sketch(const Elements& e, Summary* out, void* scratch, cudaStream_t stream) {
  auto* groups = static_cast<double*>(scratch);
  const std::int64_t chunks = sketch_chunks(e.n);
  std::int64_t first = 0;
  do {  // an empty tensor still sets the accumulators to zero
    const std::int64_t count = std::min(kSketchSlab, chunks - first);
    if (count > 0)
      sketch_groups_kernel<>
          <<<blocks_for(static_cast<std::uint64_t>(count * kLanes), 128), 128, 0, stream>>>(e, first, count, groups);
    sketch_accumulate_kernel<><<<1, kLanes * kRows, 0, stream>>>(groups, count, first == 0, out);
    first += kSketchSlab;
  } while (first < chunks);
}

// Its scratch follows the sketch's in `scratch`.
inline void enqueue_blake3(const Elements& e, std::uint64_t nbytes, Summary* out, void* scratch, cudaStream_t stream) {
  auto* below = reinterpret_cast<std::uint32_t*>(static_cast<double*>(scratch) +
                                                 std::min(sketch_chunks(e.n), kSketchSlab) * kChunk);
  std::uint64_t n = blake3_chunks(nbytes);
  if (n == 1) {
    blake3_chunks_kernel<><<<1, 32, 0, stream>>>(e.data, nbytes, 1, out->blake3);
    return;
  }
  std::uint32_t* above = below + 8 * n;
  blake3_chunks_kernel<><<<blocks_for(n, 128), 128, 0, stream>>>(e.data, nbytes, n, below);
  while (n > 2) {
    blake3_level_kernel<><<<blocks_for((n + 1) / 2, 128), 128, 0, stream>>>(below, n, above);
    std::swap(below, above);
    n = (n + 1) / 2;
  }
  blake3_root_kernel<><<<1, 32, 0, stream>>>(below, out);
}

// Enqueues on `stream` the kernels that fill `*out` (device memory) with the
// Summary of `e` (`nbytes` bytes of device memory), using `scratch`
// (scratch_bytes of device memory). Returns the first error of the enqueueing.
inline cudaError_t enqueue_summary(const Elements& e, std::uint64_t nbytes, Summary* out, void* scratch,
                                   cudaStream_t stream) {
  enqueue_stats(e, out, stream);  // the three write every byte of *out between them
  enqueue_sketch(e, out, scratch, stream);
  enqueue_blake3(e, nbytes, out, scratch, stream);
  return cudaGetLastError();  // a launch error is ours: the caller made sure none was pending before
}

}  // namespace device
}  // namespace detail
}  // namespace orchlog
#endif
