// The digest fields of a record: what is computed over the whole tensor,
// outside the writer's lock. The schema marks them `source: digest`; the
// generated digest() (fields_gen.hpp) makes one DigestPass over the tensor
// and calls digest_<field>(pass, out) for each, so a new digest field is one
// schema line and one function here (and its twins in
// orchlog/encoding/digest.py and src/encoding/digest.rs), all held to the
// vectors; a field the pass does not compute reads pass.tensor itself.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "orchlog/blake3.hpp"
#include "orchlog/detail/blake3/tree.hpp"
#include "orchlog/detail/encode/sketch.hpp"
#include "orchlog/detail/encode/stats.hpp"
#include "orchlog/schema_gen.hpp"
#include "orchlog/types.hpp"

namespace orchlog {
namespace detail {

struct TensorSize {
  std::int64_t numel = 0;
  std::uint64_t nbytes = 0;
};

// The element count and byte size of a tensor, or nullopt with `error` set
// when the tensor cannot be recorded as given.
inline std::optional<TensorSize> measure(const Tensor& t, std::string& error) {
  TensorSize size{1, 0};
  for (std::size_t i = 0; i < t.shape.size(); ++i) {
    const std::int64_t d = t.shape[i];
    if (d < 0) {
      error = "shape has a negative dimension (" + std::to_string(d) + ")";
      return std::nullopt;
    }
    if (d != 0 && size.numel > std::numeric_limits<std::int64_t>::max() / d) {
      error = "shape has more elements than fit in 64 bits";
      return std::nullopt;
    }
    size.numel *= d;
  }
  const auto itemsize = static_cast<std::uint64_t>(schema::dtype_size(t.dtype));
  if (static_cast<std::uint64_t>(size.numel) > std::numeric_limits<std::size_t>::max() / itemsize) {
    error = "tensor is larger than the address space";
    return std::nullopt;
  }
  size.nbytes = static_cast<std::uint64_t>(size.numel) * itemsize;
  if (t.data == nullptr && size.nbytes > 0) {
    error = "null data pointer for a tensor of " + std::to_string(size.numel) + " elements";
    return std::nullopt;
  }
  return size;
}

// 64 lowercase hex digits and a NUL.
struct Hex256 {
  char text[65] = {};
};

inline void hex_of(const std::uint8_t hash[32], char out[65]) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (int i = 0; i < 32; ++i) {
    out[2 * i] = kHex[hash[i] >> 4];
    out[2 * i + 1] = kHex[hash[i] & 15];
  }
  out[64] = '\0';
}

// One read of the tensor for every digest field the format defines: the stats come from the sketch's
// pass (sketch.hpp), and a tensor larger than a BLAKE3 segment (64 KiB) is hashed a segment at a time,
// each segment just before the sketch reads it, so that it is read from memory once; one of a segment
// or less has its last chunks hashed between the sketch's runs (SteppedHasher).
//
// Every size goes through one pair of hook types (SegmentFeed, StepFeed), each doing nothing where its
// size does not need it, so that the sketch kernel is compiled once per element type and instruction
// set rather than once per size class: every translation unit that logs compiles it (a third as much).
struct DigestPass {
  const Tensor& tensor;
  const TensorSize& size;
  schema::Stats stats;
  sketch::Rows sketch{};
  Hex256 blake3;

  // Before chunk c: the segment it begins, if the hash has not had it yet (never the last segment,
  // which finish() takes with the bytes after it).
  struct SegmentFeed {
    detail::blake3::SegmentHasher* hasher;  // null: nothing to feed (a tensor of a segment or less)
    const std::uint8_t* data;
    std::size_t nbytes, chunks_per_segment, hashed;
    void operator()(std::int64_t c) {
      if (hasher == nullptr) return;
      const std::size_t at = static_cast<std::size_t>(c) / chunks_per_segment * detail::blake3::kSegmentLen;
      if (at == hashed && nbytes - at > detail::blake3::kSegmentLen) {
        hasher->add(data + at);
        hashed += detail::blake3::kSegmentLen;
      }
    }
  };
  // Between the sketch's runs: the next step of the last chunks' hash, if it is stepped.
  struct StepFeed {
    detail::blake3::SteppedHasher* hasher;  // null: no stepped hash
    void operator()() {
      if (hasher != nullptr) hasher->step();
    }
  };

  DigestPass(const Tensor& t, const TensorSize& s) : tensor(t), size(s) {
    const auto* data = static_cast<const std::uint8_t*>(t.data);
    const auto nbytes = static_cast<std::size_t>(s.nbytes);
    const Blake3Path path = blake3_path();
    std::uint8_t hash[32];
    SegmentFeed feed{nullptr, data, nbytes, 1, 0};
    StepFeed step{nullptr};
    if (nbytes >= detail::blake3::SteppedHasher::kMinLen && nbytes <= detail::blake3::SteppedHasher::kMaxLen) {
      // The last few chunks' hash is a chain of 16 compressions, each waiting on the one before: done
      // between the sketch's runs, the sketch's independent arithmetic fills the time they wait.
      detail::blake3::SteppedHasher hasher(path, data, nbytes);
      step.hasher = &hasher;
      sketch = compute_sketch_and_stats(sketch_best_path(), t.dtype, data, s.numel, stats, feed, step);
      hasher.finish(hash, sizeof hash);
    } else if (nbytes <= detail::blake3::kChunkLen) {
      detail::blake3::hash(path, data, nbytes, hash, sizeof hash);
      sketch = compute_sketch_and_stats(sketch_best_path(), t.dtype, data, s.numel, stats, feed, step);
    } else {
      const std::size_t chunk_bytes = static_cast<std::size_t>(sketch::kChunk) * schema::dtype_size(t.dtype);
      detail::blake3::SegmentHasher hasher(path);
      // Every segment before the last is hashed before its first chunk is sketched.
      feed = SegmentFeed{&hasher, data, nbytes, detail::blake3::kSegmentLen / chunk_bytes, 0};
      sketch = compute_sketch_and_stats(sketch_best_path(), t.dtype, data, s.numel, stats, feed, step);
      std::size_t hashed = feed.hashed;
      for (; nbytes - hashed > detail::blake3::kSegmentLen; hashed += detail::blake3::kSegmentLen)
        hasher.add(data + hashed);  // only for a compiler without vector extensions, whose sketch calls no hook
      hasher.finish(data + hashed, nbytes - hashed, hash, sizeof hash);
    }
    hex_of(hash, blake3.text);
  }
};

inline void digest_stats(const DigestPass& pass, schema::Stats& out) { out = pass.stats; }

inline void digest_sketch(const DigestPass& pass, std::array<double, sketch::kRows>& out) {
  for (int r = 0; r < sketch::kRows; ++r) out[r] = pass.sketch[r];
}

inline void digest_blake3(const DigestPass& pass, Hex256& out) { out = pass.blake3; }

// Digest members as the record view holds them.
inline const schema::Stats& digest_view(const schema::Stats& s) { return s; }
inline std::string_view digest_view(const Hex256& h) { return std::string_view(h.text, 64); }
template <std::size_t N>
schema::FloatsView digest_view(const std::array<double, N>& floats) {
  return {floats.data(), N};
}

}  // namespace detail
}  // namespace orchlog
