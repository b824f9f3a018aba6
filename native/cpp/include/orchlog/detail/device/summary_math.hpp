// The arithmetic of a record's summary (stats, sketch, BLAKE3) as work items
// that a CUDA kernel runs one per thread and the CPU twin (summary_twin.hpp)
// runs in loops: one source, compiled by nvcc for the device and by any host
// compiler, so the twin's bytes checked against the host emitters' on the CPU
// vouch for the kernels' arithmetic too.
//
// What the format's fixed order (FORMAT.md, "Stats" and "Sketch") leaves
// parallel, and what it does not:
// - stats: lane q (elements q, q+8, ...) is one chain of f64 additions in
//   element order, and so is its sum of squares; no reassociation gives the
//   same rounding, so each lane is one work item (8 in all) walking n/8
//   elements. Min, max and the counts are exact whatever the order.
// - sketch: the 64-point transform of each (chunk, lane) group is
//   independent (one work item per group); each of the 8 x 64 accumulators
//   then adds its groups' outputs in chunk order (one work item per
//   accumulator, n/512 additions each).
// - BLAKE3: every 1 KiB chunk is independent; parents pair neighbours level
//   by level (an odd last node moves up), which is the left-complete tree.
//
// Every f64 operation is an explicit round-to-nearest add, subtract or
// multiply (__dadd_rn and friends on the device, which nvcc never contracts
// into an FMA; a materialized product on the host); elements are widened on
// their bits, never by hardware converters, so -ftz or --use_fast_math in
// the engine's build cannot change a bit.
#pragma once

#include <cstdint>
#include <cstring>

#include "orchlog/detail/encode/number_text.hpp"
#include "orchlog/detail/encode/sketch.hpp"
#include "orchlog/detail/encode/stats.hpp"
#include "orchlog/detail/hd.hpp"
#include "orchlog/schema_gen.hpp"

namespace orchlog {
namespace detail {
namespace device {

inline constexpr int kLanes = 8;
inline constexpr int kRows = 64;
inline constexpr std::int64_t kChunk = kRows * kLanes;  // sketch chunk: 512 elements
inline constexpr std::uint64_t kBlake3Chunk = 1024;     // BLAKE3 chunk: bytes

// ------------------------------------------------------------------ f64 arithmetic

ORCHLOG_HD inline double f64_from_bits(std::uint64_t bits) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(bits));
#else
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
#endif
}

ORCHLOG_HD inline std::uint64_t f64_bits(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(x));
#else
  std::uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
#endif
}

// Whether f64 bits are an infinity or a NaN (its exponent all ones), and which.
ORCHLOG_HD inline bool f64_special(std::uint64_t bits) {
  return (bits & 0x7FF0000000000000ull) == 0x7FF0000000000000ull;
}
ORCHLOG_HD inline bool f64_nan(std::uint64_t bits) { return f64_special(bits) && (bits & 0x000FFFFFFFFFFFFFull) != 0; }

ORCHLOG_HD inline double add_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

ORCHLOG_HD inline double sub_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}

// A rounded product that no compiler may fuse into a following addition.
ORCHLOG_HD inline double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  double p = a * b;
  ORCHLOG_MATERIALIZE(p);
  return p;
#endif
}

// ------------------------------------------------------------------ elements

// The f64 bits of the f32 with bits `b`: exact, NaN payloads kept.
ORCHLOG_HD inline std::uint64_t f64_bits_of_f32_bits(std::uint32_t b) {
  const std::uint64_t sign = static_cast<std::uint64_t>(b >> 31) << 63;
  const std::uint32_t exp = (b >> 23) & 0xFFu;
  std::uint32_t mant = b & 0x7FFFFFu;
  if (exp == 0xFF) return sign | 0x7FF0000000000000ull | (static_cast<std::uint64_t>(mant) << 29);
  if (exp != 0) return sign | (static_cast<std::uint64_t>(exp + 896) << 52) | (static_cast<std::uint64_t>(mant) << 29);
  if (mant == 0) return sign;
  std::uint32_t e = 897;  // subnormal: the leading 1 moves into the implicit bit
  while ((mant & 0x800000u) == 0) {
    mant <<= 1;
    --e;
  }
  return sign | (static_cast<std::uint64_t>(e) << 52) | (static_cast<std::uint64_t>(mant & 0x7FFFFFu) << 29);
}

// Little-endian loads. The device reads an aligned word in one load (a GPU
// is little-endian) and composes bytes only where the tensor is misaligned;
// the host composes bytes, as the host emitters do.
ORCHLOG_HD inline std::uint16_t word16_at(const std::uint8_t* p) {
#if defined(__CUDA_ARCH__)
  if ((reinterpret_cast<std::uintptr_t>(p) & 1) == 0) return *reinterpret_cast<const std::uint16_t*>(p);
#endif
  return load_u16_le(p);
}

ORCHLOG_HD inline std::uint32_t word32_at(const std::uint8_t* p) {
#if defined(__CUDA_ARCH__)
  if ((reinterpret_cast<std::uintptr_t>(p) & 3) == 0) return *reinterpret_cast<const std::uint32_t*>(p);
#endif
  return load_u32_le(p);
}

ORCHLOG_HD inline std::uint64_t word64_at(const std::uint8_t* p) {
#if defined(__CUDA_ARCH__)
  if ((reinterpret_cast<std::uintptr_t>(p) & 7) == 0) return *reinterpret_cast<const std::uint64_t*>(p);
#endif
  return load_u64_le(p);
}

// C-contiguous little-endian elements of one dtype.
struct Elements {
  const std::uint8_t* data = nullptr;
  schema::DType dtype = schema::DType::f32;
  std::int64_t n = 0;
};

// Element i widened exactly to f64 (i64 rounds to nearest); `finite` says whether it counts.
ORCHLOG_HD inline double element(const Elements& e, std::int64_t i, bool& finite) {
  using schema::DType;
  std::uint64_t bits = 0;
  switch (e.dtype) {
    case DType::f64:
      bits = word64_at(e.data + 8 * i);
      break;
    case DType::f32:
      bits = f64_bits_of_f32_bits(word32_at(e.data + 4 * i));
      break;
    case DType::f16:
      bits = f64_bits_of_f32_bits(f16_to_f32_bits(word16_at(e.data + 2 * i)));
      break;
    case DType::bf16:
      bits = f64_bits_of_f32_bits(bf16_to_f32_bits(word16_at(e.data + 2 * i)));
      break;
    case DType::i8:
      finite = true;
      return static_cast<double>(static_cast<std::int8_t>(e.data[i]));
    case DType::u8:
      finite = true;
      return static_cast<double>(e.data[i]);
    case DType::i32:
      finite = true;
      return static_cast<double>(static_cast<std::int32_t>(word32_at(e.data + 4 * i)));
    case DType::i64:
      finite = true;
      return static_cast<double>(static_cast<std::int64_t>(word64_at(e.data + 8 * i)));
  }
  finite = !f64_special(bits);
  return f64_from_bits(bits);
}

// ------------------------------------------------------------------ stats

// One lane's share of the stats: what LaneSums (encode/stats.hpp) keeps per lane.
struct StatsLane {
  double sum;
  double sq;
  double min;
  double max;
  std::int64_t finite;
  std::int64_t nan;
  std::int64_t inf;
};

// A lane before its first element.
ORCHLOG_HD inline StatsLane stats_start() {
  return {0.0, 0.0, f64_from_bits(0x7FF0000000000000ull), f64_from_bits(0xFFF0000000000000ull), 0, 0, 0};
}

// Element x (as element() widened it) added to a lane. Widening keeps NaN
// and infinities, so x's own bits say whether it counts as finite. No
// branch (a GPU thread pays for each): an element that does not count adds
// +0.0, which changes no sum, since a sum that starts at +0.0 never becomes
// -0.0 under round-to-nearest.
ORCHLOG_HD inline void stats_add(StatsLane& s, double x) {
  const std::uint64_t bits = f64_bits(x);
  const bool special = f64_special(bits), nan = f64_nan(bits);
  const double v = special ? 0.0 : x;
  s.sum = add_rn(s.sum, v);
  s.sq = add_rn(s.sq, mul_rn(v, v));
  s.min = !special && x < s.min ? x : s.min;
  s.max = !special && x > s.max ? x : s.max;
  s.finite += special ? 0 : 1;
  s.nan += nan ? 1 : 0;
  s.inf += special && !nan ? 1 : 0;
}

// Eight consecutive elements of a lane (x[0] first), added as stats_add adds
// them one by one, with less waiting: the sums stay two chains in element
// order, but the minimum and maximum of the eight are found in a tree whose
// every pair keeps the earlier element when they compare equal (as the chain
// does: -0.0 and +0.0 compare equal, so which one a minimum is depends on
// which came first), then meet the lane's in one step; the counts are added
// once.
ORCHLOG_HD inline void stats_add8(StatsLane& s, const double x[8]) {
  double lo[8], hi[8];
  std::int64_t finite = 0, nan = 0;
  for (int u = 0; u < 8; ++u) {
    const std::uint64_t bits = f64_bits(x[u]);
    const bool special = f64_special(bits);
    nan += f64_nan(bits) ? 1 : 0;
    finite += special ? 0 : 1;
    const double v = special ? 0.0 : x[u];
    s.sum = add_rn(s.sum, v);
    s.sq = add_rn(s.sq, mul_rn(v, v));
    lo[u] = special ? f64_from_bits(0x7FF0000000000000ull) : x[u];  // never below a finite element
    hi[u] = special ? f64_from_bits(0xFFF0000000000000ull) : x[u];
  }
  for (int w = 1; w < 8; w <<= 1)
    for (int u = 0; u + w < 8; u += 2 * w) {
      lo[u] = lo[u + w] < lo[u] ? lo[u + w] : lo[u];
      hi[u] = hi[u + w] > hi[u] ? hi[u + w] : hi[u];
    }
  s.min = lo[0] < s.min ? lo[0] : s.min;
  s.max = hi[0] > s.max ? hi[0] : s.max;
  s.finite += finite;
  s.nan += nan;
  s.inf += 8 - finite - nan;
}

// Work item q (0..7): lane q's chains over elements q, q + 8, ... in order,
// eight at a time as the kernel adds them.
ORCHLOG_HD inline void stats_lane(const Elements& e, int q, StatsLane& out) {
  StatsLane s = stats_start();
  bool finite = false;
  std::int64_t i = q;
  for (; i + 7 * kLanes < e.n; i += 8 * kLanes) {
    double x[8];
    for (int u = 0; u < 8; ++u) x[u] = element(e, i + u * kLanes, finite);
    stats_add8(s, x);
  }
  for (; i < e.n; i += kLanes) stats_add(s, element(e, i, finite));
  out = s;
}

// ------------------------------------------------------------------ sketch

// Work item (c, q): group (chunk c, lane q) transformed, its output for
// accumulator a of lane q written to out[a] (out holds 64 doubles).
ORCHLOG_HD inline void sketch_group(const Elements& e, std::int64_t c, int q, double* out) {
  const auto g = static_cast<std::uint64_t>(kLanes * c + q);
  const std::uint64_t delta = sketch::splitmix64(sketch::kSeedSigns, 2 * g);
  const std::uint64_t tau = sketch::splitmix64(sketch::kSeedSigns, 2 * g + 1);
  double y[kRows];
  ORCHLOG_DEVICE_UNROLL
  for (int p = 0; p < kRows; ++p) {
    const std::int64_t i = kChunk * c + 8 * p + q;
    bool finite = false;
    double x = i < e.n ? element(e, i, finite) : 0.0;
    if (!finite) x = 0.0;  // NaN and +-Inf count as +0.0; so do the positions past the end
    y[p] = (delta >> p) & 1 ? -x : x;
  }
  ORCHLOG_DEVICE_UNROLL
  for (int h = 1; h < kRows; h <<= 1) {
    ORCHLOG_DEVICE_UNROLL
    for (int p = 0; p < kRows; ++p)
      if (!(p & h)) {
        const double sum = add_rn(y[p], y[p + h]);
        y[p + h] = sub_rn(y[p], y[p + h]);
        y[p] = sum;
      }
  }
  std::uint8_t pick[kRows];
  sketch::permutation(sketch::kSeedTable, sketch::splitmix64(sketch::kSeedPick, static_cast<std::uint64_t>(c)) >> 54,
                      pick);
  ORCHLOG_DEVICE_UNROLL
  for (int r = 0; r < kRows; ++r) out[pick[r]] = (tau >> r) & 1 ? -y[r] : y[r];
}

// Work item (q, a): accumulator a of lane q adds its share of chunks
// first .. first + count in chunk order, from `groups` laid out as
// [chunk - first][lane][accumulator] (what sketch_group wrote).
// The additions are one chain; the loads ahead of them are not, so they go
// in batches of 8 (a GPU thread does not run ahead of a load it waits on).
ORCHLOG_HD inline void sketch_accumulate(const double* groups, std::int64_t count, int q, int a, double& acc) {
  double s = acc;
  const double* at = groups + q * kRows + a;
  constexpr std::int64_t kStride = kLanes * kRows;
  std::int64_t c = 0;
  for (; c + 8 <= count; c += 8) {
    double g[8];
    for (int k = 0; k < 8; ++k) g[k] = at[(c + k) * kStride];
    for (int k = 0; k < 8; ++k) s = add_rn(s, g[k]);
  }
  for (; c < count; ++c) s = add_rn(s, at[c * kStride]);
  acc = s;
}

inline std::int64_t sketch_chunks(std::int64_t n) { return (n + kChunk - 1) / kChunk; }

// ------------------------------------------------------------------ BLAKE3

enum Blake3Flag : std::uint32_t { kChunkStart = 1, kChunkEnd = 2, kParent = 4, kRoot = 8 };

// The compression function (the BLAKE3 specification), chaining-value form.
ORCHLOG_HD inline void blake3_compress(const std::uint32_t cv[8], const std::uint32_t block[16],
                                       std::uint32_t block_len, std::uint64_t counter, std::uint32_t flags,
                                       std::uint32_t out[8]) {
  const std::uint32_t iv[8] = {0x6A09E667u, 0xBB67AE85u, 0x3C6EF372u, 0xA54FF53Au,
                               0x510E527Fu, 0x9B05688Cu, 0x1F83D9ABu, 0x5BE0CD19u};
  const std::uint8_t permute[16] = {2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8};
  std::uint32_t v[16], m[16], next[16];
  for (int i = 0; i < 8; ++i) v[i] = cv[i];
  for (int i = 0; i < 4; ++i) v[8 + i] = iv[i];
  v[12] = static_cast<std::uint32_t>(counter);
  v[13] = static_cast<std::uint32_t>(counter >> 32);
  v[14] = block_len;
  v[15] = flags;
  for (int i = 0; i < 16; ++i) m[i] = block[i];
  const auto g = [&v](int a, int b, int c, int d, std::uint32_t x, std::uint32_t y) {
    const auto rotr = [](std::uint32_t w, int k) { return (w >> k) | (w << (32 - k)); };
    v[a] = v[a] + v[b] + x;
    v[d] = rotr(v[d] ^ v[a], 16);
    v[c] = v[c] + v[d];
    v[b] = rotr(v[b] ^ v[c], 12);
    v[a] = v[a] + v[b] + y;
    v[d] = rotr(v[d] ^ v[a], 8);
    v[c] = v[c] + v[d];
    v[b] = rotr(v[b] ^ v[c], 7);
  };
  for (int r = 0; r < 7; ++r) {
    g(0, 4, 8, 12, m[0], m[1]);
    g(1, 5, 9, 13, m[2], m[3]);
    g(2, 6, 10, 14, m[4], m[5]);
    g(3, 7, 11, 15, m[6], m[7]);
    g(0, 5, 10, 15, m[8], m[9]);
    g(1, 6, 11, 12, m[10], m[11]);
    g(2, 7, 8, 13, m[12], m[13]);
    g(3, 4, 9, 14, m[14], m[15]);
    for (int i = 0; i < 16; ++i) next[i] = m[permute[i]];
    for (int i = 0; i < 16; ++i) m[i] = next[i];
  }
  for (int i = 0; i < 8; ++i) out[i] = v[i] ^ v[i + 8];
}

ORCHLOG_HD inline void blake3_iv(std::uint32_t cv[8]) {
  const std::uint32_t iv[8] = {0x6A09E667u, 0xBB67AE85u, 0x3C6EF372u, 0xA54FF53Au,
                               0x510E527Fu, 0x9B05688Cu, 0x1F83D9ABu, 0x5BE0CD19u};
  for (int i = 0; i < 8; ++i) cv[i] = iv[i];
}

// Work item i: the chaining value of chunk i of the `len` bytes at `p`
// (with the ROOT flag when it is the only chunk: then it is the hash).
ORCHLOG_HD inline void blake3_chunk(const std::uint8_t* p, std::uint64_t len, std::uint64_t i, std::uint32_t out[8]) {
  const std::uint64_t start = i * kBlake3Chunk;
  const std::uint64_t size = len - start < kBlake3Chunk ? len - start : kBlake3Chunk;
  const std::uint64_t blocks = size == 0 ? 1 : (size + 63) / 64;
  const bool root = len <= kBlake3Chunk;
  std::uint32_t cv[8];
  blake3_iv(cv);
  for (std::uint64_t b = 0; b < blocks; ++b) {
    const std::uint64_t at = start + 64 * b;
    const std::uint64_t block_len = b + 1 < blocks ? 64 : size - 64 * b;
    std::uint32_t words[16];
    if (block_len == 64) {
      for (int w = 0; w < 16; ++w) words[w] = word32_at(p + at + 4 * w);
    } else {
      for (int w = 0; w < 16; ++w) {
        std::uint32_t word = 0;
        for (int k = 0; k < 4; ++k) {
          const std::uint64_t j = static_cast<std::uint64_t>(4 * w + k);
          if (j < block_len) word |= static_cast<std::uint32_t>(p[at + j]) << (8 * k);
        }
        words[w] = word;
      }
    }
    std::uint32_t flags = b == 0 ? kChunkStart : 0u;
    if (b + 1 == blocks) flags |= kChunkEnd | (root ? kRoot : 0u);
    blake3_compress(cv, words, static_cast<std::uint32_t>(block_len), i, flags, cv);
  }
  for (int w = 0; w < 8; ++w) out[w] = cv[w];
}

inline std::uint64_t blake3_chunks(std::uint64_t len) { return len == 0 ? 1 : (len + kBlake3Chunk - 1) / kBlake3Chunk; }

// Work item i of a level of `n` > 2 chaining values (8 words each): parent i
// of nodes 2i and 2i + 1, or the odd last node moved up; the level above has
// (n + 1) / 2 nodes.
ORCHLOG_HD inline void blake3_level(const std::uint32_t* below, std::uint64_t n, std::uint64_t i,
                                    std::uint32_t* above) {
  if (2 * i + 1 == n) {
    for (int w = 0; w < 8; ++w) above[8 * i + w] = below[8 * (2 * i) + w];
    return;
  }
  std::uint32_t cv[8];
  blake3_iv(cv);
  blake3_compress(cv, below + 16 * i, 64, 0, kParent, above + 8 * i);
}

// The last two chaining values joined under the ROOT flag: the hash.
ORCHLOG_HD inline void blake3_root(const std::uint32_t* two, std::uint32_t out[8]) {
  std::uint32_t cv[8];
  blake3_iv(cv);
  blake3_compress(cv, two, 64, 0, kParent | kRoot, out);
}

// ------------------------------------------------------------------ the result

// What the device hands back for one tensor: kilobytes, whatever its size.
struct Summary {
  StatsLane lanes[kLanes];
  double sketch[kLanes][kRows];  // accumulator a of lane q
  std::uint32_t blake3[8];       // the hash as little-endian words
};

}  // namespace device
}  // namespace detail
}  // namespace orchlog
