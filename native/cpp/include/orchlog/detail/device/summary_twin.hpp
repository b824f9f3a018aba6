// The CPU twin of the device summary: the work items of summary_math.hpp run
// in loops, in the same decomposition the kernels launch them
// (cuda/summary_kernels.cuh), and the Summary they fill turned into a
// record's digest. Tests check the twin's digests against the host emitters'
// for every dtype; the GPU check (scripts/gpu-check.sh) checks the kernels'
// Summary against the twin's, bit for bit.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "orchlog/detail/device/summary_math.hpp"
#include "orchlog/detail/fields_gen.hpp"

namespace orchlog {
namespace detail {
namespace device {

// Sketch chunks transformed per pass: the device keeps this many groups'
// outputs in scratch (kSketchSlab * 512 doubles, 8 MiB) between the
// transform and the accumulation.
inline constexpr std::int64_t kSketchSlab = 2048;

// The record's digest from what the device computed. The stats lanes are
// combined by the host emitter's own LaneSums (whose first addition to a
// lane, +0.0 + x, is x: a lane sum is never -0.0), the sketch rows as the
// host kernel combines them.
inline TensorDigest finish(const Summary& s) {
  TensorDigest d;
  LaneSums acc;
  for (int q = 0; q < kLanes; ++q) {
    const StatsLane& lane = s.lanes[q];
    acc.add_to_lane(q, lane.sum, lane.sq);
    acc.min[q] = lane.min;
    acc.max[q] = lane.max;
    acc.finite += lane.finite;
    acc.nan += lane.nan;
    acc.inf += lane.inf;
  }
  d.stats = acc.finish();
  const sketch::Tables& t = sketch::tables();
  for (int row = 0; row < kRows; ++row) {
    double l[kLanes];
    for (int q = 0; q < kLanes; ++q) l[q] = s.sketch[q][t.lanes[q][row]];
    d.sketch[static_cast<std::size_t>(row)] =
        sketch::to_row(((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7])));
  }
  static const char kHex[] = "0123456789abcdef";
  for (int w = 0; w < 8; ++w)
    for (int k = 0; k < 4; ++k) {
      const auto byte = static_cast<unsigned>((s.blake3[w] >> (8 * k)) & 0xFFu);
      d.blake3.text[2 * (4 * w + k)] = kHex[byte >> 4];
      d.blake3.text[2 * (4 * w + k) + 1] = kHex[byte & 0xFu];
    }
  d.blake3.text[64] = '\0';
  return d;
}

// The Summary of `e` (its `nbytes` bytes hashed), each kernel's work items in a loop.
inline Summary summarize_twin(const Elements& e, std::uint64_t nbytes, std::int64_t slab = kSketchSlab) {
  Summary s{};
  for (int q = 0; q < kLanes; ++q) stats_lane(e, q, s.lanes[q]);

  const std::int64_t chunks = sketch_chunks(e.n);
  std::vector<double> groups(static_cast<std::size_t>(std::min(chunks, slab) * kChunk));
  for (std::int64_t first = 0; first < chunks; first += slab) {
    const std::int64_t count = std::min(slab, chunks - first);
    for (std::int64_t c = first; c < first + count; ++c)
      for (int q = 0; q < kLanes; ++q)
        sketch_group(e, c, q, &groups[static_cast<std::size_t>(((c - first) * kLanes + q) * kRows)]);
    for (int q = 0; q < kLanes; ++q)
      for (int a = 0; a < kRows; ++a) sketch_accumulate(groups.data(), count, q, a, s.sketch[q][a]);
  }

  std::uint64_t n = blake3_chunks(nbytes);
  if (n == 1) {
    blake3_chunk(e.data, nbytes, 0, s.blake3);
    return s;
  }
  std::vector<std::uint32_t> below(8 * n), above(8 * ((n + 1) / 2));
  for (std::uint64_t i = 0; i < n; ++i) blake3_chunk(e.data, nbytes, i, &below[8 * i]);
  while (n > 2) {
    for (std::uint64_t i = 0; i < (n + 1) / 2; ++i) blake3_level(below.data(), n, i, above.data());
    std::swap(below, above);
    n = (n + 1) / 2;
  }
  blake3_root(below.data(), s.blake3);
  return s;
}

}  // namespace device
}  // namespace detail
}  // namespace orchlog
