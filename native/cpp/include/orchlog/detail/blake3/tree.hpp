// The BLAKE3 hash tree over a contiguous buffer, on top of hash_many.
//
// Chunks of 1024 bytes are the leaves; parents join pairs of chaining values.
// The tree is left-complete, which is exactly what pairing neighbours level
// by level gives (an odd last node moves up unchanged). To bound memory the
// input is cut into 64 KiB segments, each a complete subtree, kept on a
// stack merged like a binary counter; the final (possibly partial) segment
// is merged in right to left, and the last merge is the root.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "orchlog/detail/blake3/avx2.hpp"
#include "orchlog/detail/blake3/avx512.hpp"
#include "orchlog/detail/blake3/path.hpp"
#include "orchlog/detail/blake3/portable.hpp"
#include "orchlog/detail/blake3/sse41.hpp"

namespace orchlog {

namespace detail {
namespace blake3 {

inline constexpr std::size_t kSegmentChunks = 64;
inline constexpr std::size_t kSegmentLen = kSegmentChunks * kChunkLen;

inline void hash_many(Blake3Path path, const std::uint8_t* base, std::size_t stride, std::size_t n, std::size_t blocks,
                      std::uint64_t counter, bool increment_counter, std::uint8_t flags, std::uint8_t flags_start,
                      std::uint8_t flags_end, std::uint8_t* out) noexcept {
#if ORCHLOG_X86_SIMD
  const auto run = [&](auto kernel, std::size_t lanes) {
    kernel(base, stride, lanes, blocks, counter, increment_counter, flags, flags_start, flags_end, out);
    base += lanes * stride;
    out += lanes * kOutLen;
    if (increment_counter) counter += lanes;
    n -= lanes;
  };
  const auto full_batches = [&](std::size_t degree, auto kernel) {
    while (n >= degree) run(kernel, degree);
  };
  // Whole batches at each width, widest first; then two or three leftover
  // inputs as one partial batch of the narrowest kernel.
  if (path == Blake3Path::avx512) {
    full_batches(avx512::kDegree, avx512::hash_many);
    full_batches(avx512_ymm::kDegree, avx512_ymm::hash_many);
    full_batches(avx512_xmm::kDegree, avx512_xmm::hash_many);
    if (n >= 2) run(avx512_xmm::hash_many, n);
  } else {
    if (path >= Blake3Path::avx2) full_batches(avx2::kDegree, avx2::hash_many);
    if (path >= Blake3Path::sse41) {
      full_batches(sse41::kDegree, sse41::hash_many);
      if (n >= 2) run(sse41::hash_many, n);
    }
  }
#else
  (void)path;
#endif
  hash_many_portable(base, stride, n, blocks, counter, increment_counter, flags, flags_start, flags_end, out);
}

// The compressions made one at a time: with SSE4.1 where the path allows it (every x86-64 path but
// the portable one), else the portable loop. Both give the same bits.
inline void compress_one(Blake3Path path, std::uint32_t cv[8], const std::uint8_t block[kBlockLen],
                         std::uint8_t block_len, std::uint64_t counter, std::uint8_t flags) noexcept {
#if ORCHLOG_X86_SIMD
  if (path >= Blake3Path::sse41) return sse41::compress_in_place(cv, block, block_len, counter, flags);
#else
  (void)path;
#endif
  compress_in_place(cv, block, block_len, counter, flags);
}

inline void compress_one_xof(Blake3Path path, const std::uint32_t cv[8], const std::uint8_t block[kBlockLen],
                             std::uint8_t block_len, std::uint64_t counter, std::uint8_t flags,
                             std::uint8_t out[64]) noexcept {
#if ORCHLOG_X86_SIMD
  if (path >= Blake3Path::sse41) return sse41::compress_xof(cv, block, block_len, counter, flags, out);
#else
  (void)path;
#endif
  compress_xof(cv, block, block_len, counter, flags, out);
}

// A node whose last compression is still to be done: as a chaining value,
// or with the ROOT flag as the hash output.
struct Node {
  std::uint32_t cv[8];
  std::uint8_t block[kBlockLen];
  std::uint8_t block_len;
  std::uint64_t counter;
  std::uint8_t flags;
};

inline Node chunk_node(Blake3Path path, const std::uint8_t* p, std::size_t len, std::uint64_t counter) noexcept {
  Node node{};
  std::memcpy(node.cv, kIV, sizeof node.cv);
  const std::size_t blocks = len == 0 ? 1 : (len + kBlockLen - 1) / kBlockLen;
  for (std::size_t b = 0; b + 1 < blocks; ++b)
    compress_one(path, node.cv, p + b * kBlockLen, kBlockLen, counter, b == 0 ? kChunkStart : 0);
  const std::size_t last = len - (blocks - 1) * kBlockLen;
  if (last > 0) std::memcpy(node.block, p + (blocks - 1) * kBlockLen, last);
  node.block_len = static_cast<std::uint8_t>(last);
  node.counter = counter;
  node.flags = static_cast<std::uint8_t>((blocks == 1 ? kChunkStart : 0) | kChunkEnd);
  return node;
}

inline Node parent_node(const std::uint8_t left_right[2 * kOutLen]) noexcept {
  Node node{};
  std::memcpy(node.cv, kIV, sizeof node.cv);
  std::memcpy(node.block, left_right, kBlockLen);
  node.block_len = kBlockLen;
  node.flags = kParent;
  return node;
}

inline void node_cv(Blake3Path path, const Node& node, std::uint8_t out[kOutLen]) noexcept {
  std::uint32_t cv[8];
  std::memcpy(cv, node.cv, sizeof cv);
  compress_one(path, cv, node.block, node.block_len, node.counter, node.flags);
  for (int i = 0; i < 8; ++i) store_le32(out + 4 * i, cv[i]);
}

inline void node_root_output(Blake3Path path, const Node& node, std::uint8_t* out, std::size_t out_len) noexcept {
  std::uint8_t block[64];
  for (std::uint64_t t = 0; out_len > 0; ++t) {
    compress_one_xof(path, node.cv, node.block, node.block_len, t, static_cast<std::uint8_t>(node.flags | kRoot),
                     block);
    const std::size_t take = out_len < 64 ? out_len : 64;
    std::memcpy(out, block, take);
    out += take;
    out_len -= take;
  }
}

#if ORCHLOG_X86_SIMD
// How chunk_cvs splits the chunks of `len` bytes: the widest kernel's whole batches (`batched` chunks),
// then the `lanes` chunks they leave over (a partial last chunk among them, or only whole chunks, the
// last `last_len` bytes long) in one batch of the narrowest kernel that holds them all. Whole chunks
// left over had gone through hash_many's narrower transposed batches and a single one through the
// portable loop: on AVX2, 5 KiB took twice as long as 8 KiB.
struct ChunkSplit {
  std::size_t batched, lanes, last_len;
};

inline ChunkSplit split_chunks(Blake3Path path, std::size_t len) noexcept {
  const std::size_t full = len / kChunkLen, rest = len % kChunkLen;
  const std::size_t widest = path == Blake3Path::avx512 ? avx512::kDegree
                             : path == Blake3Path::avx2 ? avx2::kDegree
                                                        : sse41::kDegree;
  return {full - full % widest, full % widest + (rest != 0 ? 1 : 0), rest != 0 ? rest : kChunkLen};
}
#endif

// Chaining values of the chunks of [p, p + len), len >= 1; returns their number.
inline std::size_t chunk_cvs(Blake3Path path, const std::uint8_t* p, std::size_t len, std::uint64_t counter,
                             std::uint8_t* cvs) noexcept {
  const std::size_t full = len / kChunkLen, rest = len % kChunkLen;
#if ORCHLOG_X86_SIMD
  const auto [batched, lanes, last_len] = split_chunks(path, len);
  if (lanes != 0 && path >= Blake3Path::sse41) {
    hash_many(path, p, kChunkLen, batched, kChunkLen / kBlockLen, counter, true, 0, kChunkStart, kChunkEnd, cvs);
    const std::uint8_t* tail = p + batched * kChunkLen;
    std::uint8_t* out = cvs + batched * kOutLen;
    if (path == Blake3Path::avx512) {
      if (lanes <= avx512_rows::kDegree) {
        avx512_rows::hash_chunks(tail, lanes, last_len, counter + batched, out);
      } else if (lanes <= avx512_ymm::kDegree) {
        avx512_ymm::hash_chunks(tail, lanes, last_len, counter + batched, out);
      } else {
        avx512::hash_chunks(tail, lanes, last_len, counter + batched, out);
      }
    } else if (path == Blake3Path::avx2 && lanes <= avx2_rows::kDegree) {
      avx2_rows::hash_chunks(tail, lanes, last_len, counter + batched, out);
    } else if (lanes > sse41::kDegree) {
      avx2::hash_chunks(tail, lanes, last_len, counter + batched, out);
    } else {
      sse41::hash_chunks(tail, lanes, last_len, counter + batched, out);
    }
    return batched + lanes;
  }
#endif
  hash_many(path, p, kChunkLen, full, kChunkLen / kBlockLen, counter, true, 0, kChunkStart, kChunkEnd, cvs);
  if (rest == 0) return full;
  node_cv(path, chunk_node(path, p + full * kChunkLen, rest, counter + full), cvs + full * kOutLen);
  return full + 1;
}

// Joins neighbouring chaining values level by level until two remain (n >= 2).
// In place: parent i lands at 32*i, below the inputs still to be read.
inline void reduce_to_two(Blake3Path path, std::uint8_t* cvs, std::size_t n) noexcept {
  while (n > 2) {
    const std::size_t pairs = n / 2;
    hash_many(path, cvs, 2 * kOutLen, pairs, 1, 0, false, kParent, 0, 0, cvs);
    if (n % 2) std::memmove(cvs + pairs * kOutLen, cvs + 2 * pairs * kOutLen, kOutLen);
    n = pairs + n % 2;
  }
}

// The tree of an input longer than one chunk, fed a segment at a time: add() takes the whole 64 KiB
// segments but the last, in order; finish() the rest (1 byte to one segment) and writes the hash. A
// caller that reads the input for something else as well can do so a segment at a time, while the
// segment is in cache.
class SegmentHasher {
 public:
  explicit SegmentHasher(Blake3Path path) noexcept : path_(path) {}

  void add(const std::uint8_t* segment) noexcept {
    reduce_to_two(path_, cvs_, chunk_cvs(path_, segment, kSegmentLen, segments_ * kSegmentChunks, cvs_));
    std::uint8_t cv[kOutLen];
    node_cv(path_, parent_node(cvs_), cv);
    for (std::uint64_t t = ++segments_; t % 2 == 0; t /= 2) {  // merge equal-sized subtrees
      std::memcpy(stack_[--depth_] + kOutLen, cv, kOutLen);
      node_cv(path_, parent_node(stack_[depth_]), cv);
    }
    std::memcpy(stack_[depth_++], cv, kOutLen);
  }

  void finish(const std::uint8_t* rest, std::size_t len, std::uint8_t* out, std::size_t out_len) noexcept {
    const std::size_t n = chunk_cvs(path_, rest, len, segments_ * kSegmentChunks, cvs_);
    if (n > 1) reduce_to_two(path_, cvs_, n);
    if (depth_ == 0) {  // the whole input was one segment: its top parent is the root
      node_root_output(path_, parent_node(cvs_), out, out_len);
      return;
    }
    std::uint8_t right[kOutLen];
    if (n > 1) {
      node_cv(path_, parent_node(cvs_), right);
    } else {
      std::memcpy(right, cvs_, kOutLen);
    }
    while (depth_ > 1) {
      std::memcpy(stack_[--depth_] + kOutLen, right, kOutLen);
      node_cv(path_, parent_node(stack_[depth_]), right);
    }
    std::memcpy(stack_[0] + kOutLen, right, kOutLen);
    node_root_output(path_, parent_node(stack_[0]), out, out_len);
  }

 private:
  Blake3Path path_;
  std::uint8_t cvs_[kSegmentChunks * kOutLen];
  std::uint8_t stack_[64][2 * kOutLen];  // each entry: a left CV, room for its right partner
  std::size_t depth_ = 0;
  std::uint64_t segments_ = 0;
};

// The hash of an input of more than one chunk and at most one segment, its last chunks' blocks compressed
// a step at a time: step() does the next block of each of them and says whether there was one, finish()
// does what is left and writes the hash. The last four chunks or fewer after the widest kernel's
// batches (all of a hidden-state row of 896 f32: three and a half) go through a row-wise kernel
// (rows_kernel.inc) whose compressions are each a chain of dependent instructions: a caller's own
// independent work between the steps runs on the core's idle units. The batches are hashed at once;
// paths and lengths without such a tail do everything in finish().
class SteppedHasher {
 public:
  static constexpr std::size_t kMinLen = kChunkLen + 1, kMaxLen = kSegmentLen;

  SteppedHasher(Blake3Path path, const std::uint8_t* p, std::size_t len) noexcept : path_(path), p_(p), len_(len) {
#if ORCHLOG_X86_SIMD
    if (path != Blake3Path::avx512 && path != Blake3Path::avx2) return;
    const auto [batched, lanes, last_len] = split_chunks(path, len);
    if (lanes == 0 || lanes > avx512_rows::kDegree) return;  // no row-wise tail: chunk_cvs in finish()
    hash_many(path, p, kChunkLen, batched, kChunkLen / kBlockLen, 0, true, 0, kChunkStart, kChunkEnd, cvs_);
    if (path == Blake3Path::avx512) {
      avx512_rows::start(rows_, p + batched * kChunkLen, lanes, last_len, batched, cvs_ + batched * kOutLen);
    } else {
      avx2_rows::start(rows_, p + batched * kChunkLen, lanes, last_len, batched, cvs_ + batched * kOutLen);
    }
    chunks_ = batched + lanes;
#endif
  }

  bool step() noexcept {
#if ORCHLOG_X86_SIMD
    if (chunks_ == 0) return false;
    return path_ == Blake3Path::avx512 ? avx512_rows::step(rows_) : avx2_rows::step(rows_);
#else
    return false;
#endif
  }

  void finish(std::uint8_t* out, std::size_t out_len) noexcept {
    std::size_t n = chunks_;
#if ORCHLOG_X86_SIMD
    if (n != 0) path_ == Blake3Path::avx512 ? avx512_rows::finish(rows_) : avx2_rows::finish(rows_);
#endif
    if (n == 0) n = chunk_cvs(path_, p_, len_, 0, cvs_);
    reduce_to_two(path_, cvs_, n);
    node_root_output(path_, parent_node(cvs_), out, out_len);
  }

 private:
  Blake3Path path_;
  const std::uint8_t* p_;
  std::size_t len_;
  std::size_t chunks_ = 0;  // with a row-wise tail: the number of chunks
  RowsState rows_;
  std::uint8_t cvs_[kSegmentChunks * kOutLen];
};

inline void hash(Blake3Path path, const std::uint8_t* p, std::size_t len, std::uint8_t* out,
                 std::size_t out_len) noexcept {
  if (len <= kChunkLen) {
    node_root_output(path, chunk_node(path, p, len, 0), out, out_len);
    return;
  }
  SegmentHasher hasher(path);
  std::size_t offset = 0;
  for (; len - offset > kSegmentLen; offset += kSegmentLen) hasher.add(p + offset);
  hasher.finish(p + offset, len - offset, out, out_len);
}

}  // namespace blake3
}  // namespace detail
}  // namespace orchlog
