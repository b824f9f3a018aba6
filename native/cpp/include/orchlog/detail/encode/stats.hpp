// Whole-tensor statistics in the canonical summation order (FORMAT.md, "Stats").
//
// Element i goes to lane i % 8; each lane adds in element order, in f64,
// from +0.0; non-finite elements are only counted; the lanes combine as
// ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)). Squares must be rounded products:
// compilers contract `q += x*x` into a fused multiply-add when FMA is enabled
// (GCC does so by default in gnu++ modes with -march=native), which changes
// the last bits, so every product is forced into a register before it is added.
//
// Not for translation units built with -ffast-math, which licenses the
// compiler to reorder these sums.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>

#include "orchlog/detail/encode/number_text.hpp"
#include "orchlog/schema_gen.hpp"

namespace orchlog {
namespace detail {

// Makes the compiler believe `x` was changed, so it must compute it first.
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define ORCHLOG_MATERIALIZE(x) __asm__("" : "+x"(x))
#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
#define ORCHLOG_MATERIALIZE(x) __asm__("" : "+w"(x))
#elif defined(__GNUC__) || defined(__clang__)
#define ORCHLOG_MATERIALIZE(x) __asm__("" : "+m"(x))
#else
#define ORCHLOG_MATERIALIZE(x) ((void)0)
#endif
// Clang contracts within one expression by default; it takes a pragma per block.
#if defined(__clang__)
#define ORCHLOG_NO_CONTRACT _Pragma("clang fp contract(off)")
#else
#define ORCHLOG_NO_CONTRACT
#endif

inline constexpr int kLanes = static_cast<int>(schema::kStatsLanes);
static_assert(kLanes == 8, "the stats kernel is written for 8 lanes");

struct LaneSums {
#if defined(__GNUC__) || defined(__clang__)
  // Two lanes per 16-byte vector: the vector path below adds whole pairs.
  typedef double Pair __attribute__((vector_size(16)));
  Pair sum[4] = {}, sq[4] = {};
  void add_to_lane(int lane, double x, double square) {
    sum[lane >> 1][lane & 1] += x;
    sq[lane >> 1][lane & 1] += square;
  }
  double sum_of(int lane) const { return sum[lane >> 1][lane & 1]; }
  double sq_of(int lane) const { return sq[lane >> 1][lane & 1]; }
#else
  double sum[kLanes] = {}, sq[kLanes] = {};
  void add_to_lane(int lane, double x, double square) {
    sum[lane] += x;
    sq[lane] += square;
  }
  double sum_of(int lane) const { return sum[lane]; }
  double sq_of(int lane) const { return sq[lane]; }
#endif
  double min[kLanes], max[kLanes];
  std::int64_t finite = 0, nan = 0, inf = 0;

  LaneSums() {
    for (int l = 0; l < kLanes; ++l) {
      min[l] = std::numeric_limits<double>::infinity();
      max[l] = -std::numeric_limits<double>::infinity();
    }
  }

  void add_one(int lane, double x) {
    ORCHLOG_NO_CONTRACT
    if (x != x) {
      ++nan;
      return;
    }
    if (x - x != 0) {  // only +-Inf give NaN here
      ++inf;
      return;
    }
    double square = x * x;
    ORCHLOG_MATERIALIZE(square);
    add_to_lane(lane, x, square);
    min[lane] = x < min[lane] ? x : min[lane];
    max[lane] = x > max[lane] ? x : max[lane];
    ++finite;
  }

  // Eight consecutive elements, lane l first; `may_be_nonfinite` is false for integer dtypes.
  void add_eight(const double x[kLanes], bool may_be_nonfinite) {
    ORCHLOG_NO_CONTRACT
#if defined(__GNUC__) || defined(__clang__)
    Pair v[4];
    std::memcpy(v, x, sizeof v);
    if (may_be_nonfinite) {
      const Pair z = (v[0] - v[0]) + (v[1] - v[1]) + (v[2] - v[2]) + (v[3] - v[3]);  // NaN iff any is not finite
      if (z[0] != z[0] || z[1] != z[1]) {
        for (int l = 0; l < kLanes; ++l) add_one(l, x[l]);
        return;
      }
    }
    for (int k = 0; k < 4; ++k) {
      Pair square = v[k] * v[k];
      ORCHLOG_MATERIALIZE(square);
      sum[k] += v[k];
      sq[k] += square;
    }
    for (int l = 0; l < kLanes; ++l) {
      min[l] = x[l] < min[l] ? x[l] : min[l];
      max[l] = x[l] > max[l] ? x[l] : max[l];
    }
    finite += kLanes;
#else
    static_cast<void>(may_be_nonfinite);
    for (int l = 0; l < kLanes; ++l) add_one(l, x[l]);
#endif
  }

  schema::Stats finish() const;
};

// What the stats are made of: each lane's sum and sum of squares, the extremes and the counts.
struct StatsLanes {
  double sum[kLanes] = {}, sq[kLanes] = {};
  double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
  std::int64_t finite = 0, nan = 0, inf = 0;

  schema::Stats finish() const {
    schema::Stats s;
    s.nan_count = nan;
    s.inf_count = inf;
    if (finite == 0) return s;
    const double total = ((sum[0] + sum[1]) + (sum[2] + sum[3])) + ((sum[4] + sum[5]) + (sum[6] + sum[7]));
    const double total_sq = ((sq[0] + sq[1]) + (sq[2] + sq[3])) + ((sq[4] + sq[5]) + (sq[6] + sq[7]));
    const double n = static_cast<double>(finite);
    // A zero result is written +0 whatever sign the arithmetic gave it.
    const auto plus_zero = [](double v) { return v == 0 ? 0.0 : v; };
    s.min = plus_zero(lo);
    s.max = plus_zero(hi);
    s.mean = plus_zero(total / n);
    s.rms = plus_zero(std::sqrt(total_sq / n));
    s.abs_max = plus_zero(std::fabs(lo) > std::fabs(hi) ? std::fabs(lo) : std::fabs(hi));
    return s;
  }
};

inline schema::Stats LaneSums::finish() const {
  StatsLanes lanes;
  for (int i = 0; i < kLanes; ++i) {
    lanes.sum[i] = sum_of(i);
    lanes.sq[i] = sq_of(i);
    lanes.lo = min[i] < lanes.lo ? min[i] : lanes.lo;
    lanes.hi = max[i] > lanes.hi ? max[i] : lanes.hi;
  }
  lanes.finite = finite;
  lanes.nan = nan;
  lanes.inf = inf;
  return lanes.finish();
}

template <class Load>
schema::Stats accumulate_stats(std::int64_t n, bool may_be_nonfinite, Load load) {
  LaneSums acc;
  std::int64_t i = 0;
  double x[kLanes];
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) x[l] = load(i + l);
    acc.add_eight(x, may_be_nonfinite);
  }
  for (; i < n; ++i) acc.add_one(static_cast<int>(i % kLanes), load(i));
  return acc.finish();
}

// The NaN and ±Inf elements of a tensor of a float dtype (integer dtypes have none).
inline void count_nonfinite(schema::DType dtype, const std::uint8_t* data, std::int64_t numel, std::int64_t& nan,
                            std::int64_t& inf) {
  using schema::DType;
  nan = inf = 0;
  if (dtype != DType::f32 && dtype != DType::f64 && dtype != DType::f16 && dtype != DType::bf16) return;
  for (std::int64_t i = 0; i < numel; ++i) {
    const double x =
        dtype == DType::f64 ? f64_at(data, i) : static_cast<double>(f32_from_bits(f32_bits_at(dtype, data, i)));
    nan += x != x;
    inf += x - x != 0 && x == x;
  }
}

// Stats of `numel` elements of `dtype` stored little-endian at `data`.
inline schema::Stats compute_stats(schema::DType dtype, const std::uint8_t* data, std::int64_t numel) {
  using schema::DType;
  switch (dtype) {
    case DType::f32:
      return accumulate_stats(numel, true, [data](std::int64_t i) {
        float f;
        std::memcpy(&f, data + 4 * i, sizeof f);
        return static_cast<double>(f);
      });
    case DType::f64:
      return accumulate_stats(numel, true, [data](std::int64_t i) { return f64_at(data, i); });
    case DType::f16:
    case DType::bf16:
      return accumulate_stats(numel, true, [data, dtype](std::int64_t i) {
        return static_cast<double>(f32_from_bits(f32_bits_at(dtype, data, i)));
      });
    case DType::i8:
    case DType::u8:
    case DType::i32:
    case DType::i64:
      // i64 widens with round-to-nearest, like every other emitter.
      return accumulate_stats(numel, false,
                              [data, dtype](std::int64_t i) { return static_cast<double>(int_at(dtype, data, i)); });
  }
  return {};
}

}  // namespace detail
}  // namespace orchlog
