// The digest fields of a record: what is computed over the whole tensor,
// outside the writer's lock. The schema marks them `source: digest`; the
// generated digest() (fields_gen.hpp) calls digest_<field> for each, so a
// new digest field is one schema line and one function here (and its twins
// in orchlog/encoding/digest.py and src/encoding/digest.rs), all held to the
// vectors.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "orchlog/blake3.hpp"
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

inline void digest_stats(const Tensor& t, const TensorSize& size, schema::Stats& out) {
  out = compute_stats(t.dtype, static_cast<const std::uint8_t*>(t.data), size.numel);
}

inline void digest_sketch(const Tensor& t, const TensorSize& size, std::array<double, sketch::kRows>& out) {
  const sketch::Rows rows = compute_sketch(t.dtype, static_cast<const std::uint8_t*>(t.data), size.numel);
  for (int r = 0; r < sketch::kRows; ++r) out[r] = rows[r];
}

inline void digest_blake3(const Tensor& t, const TensorSize& size, Hex256& out) {
  blake3_hex(t.data, static_cast<std::size_t>(size.nbytes), out.text);
}

// Digest members as the record view holds them.
inline const schema::Stats& digest_view(const schema::Stats& s) { return s; }
inline std::string_view digest_view(const Hex256& h) { return std::string_view(h.text, 64); }
template <std::size_t N>
schema::FloatsView digest_view(const std::array<double, N>& floats) {
  return {floats.data(), N};
}

}  // namespace detail
}  // namespace orchlog
