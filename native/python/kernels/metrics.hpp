// orchlog._kernels: One fused pass over two f32/f64 arrays: every one-pass difference metric at once.
// Included once, by module.cpp: the kernels build as one translation unit.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "orchlog/detail/blake3/simd_target.hpp"
#include "orchlog/detail/isa.hpp"

namespace py = pybind11;

namespace orchlog_kernels {

// The vector width a kernel runs at: the widest the CPU has, within ORCHLOG_ISA (orchlog/detail/isa.hpp),
// so that one machine can measure what a machine without AVX-512 or AVX2 runs.
enum class Isa { portable, avx2, avx512 };

inline bool isa_supported(Isa isa) {
#if ORCHLOG_X86_SIMD
  __builtin_cpu_init();
  if (isa == Isa::avx512) return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("popcnt");
  if (isa == Isa::avx2) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
#endif
  return isa == Isa::portable;
}

inline Isa best_isa() {
  using orchlog::detail::isa_allowed;
  using orchlog::detail::IsaCap;
  static const Isa best = isa_supported(Isa::avx512) && isa_allowed(IsaCap::avx512) ? Isa::avx512
                          : isa_supported(Isa::avx2) && isa_allowed(IsaCap::avx2)   ? Isa::avx2
                                                                                    : Isa::portable;
  return best;
}

// The kernels below whose loops the compiler vectorises are built at each width (AVX-512, AVX2, the
// build's own) and picked per call by best_isa(); GCC's target_clones picked by the CPU alone, which no
// environment variable can narrow. Each width's copy holds its own inlined copy of the loop.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ORCHLOG_KERNEL_WIDTHS 1
#define ORCHLOG_AVX512 __attribute__((target("avx512f")))
#define ORCHLOG_AVX2 __attribute__((target("avx2")))
#else
#define ORCHLOG_KERNEL_WIDTHS 0
#endif

// ------------------------------------------------------------------ metrics

struct Sums {
  double sum_abs = 0, sum_d2 = 0, sum_a2 = 0, sum_b2 = 0;
  double max_abs = 0, max_rel = 0;
  double min_a = INFINITY, max_a = -INFINITY, min_b = INFINITY, max_b = -INFINITY;
  double nonfinite = 0;  // blocks whose sums of squares are not finite: 0 when every element is finite

  void merge(const Sums& o) {
    sum_abs += o.sum_abs, sum_d2 += o.sum_d2, sum_a2 += o.sum_a2, sum_b2 += o.sum_b2;
    max_abs = std::max(max_abs, o.max_abs), max_rel = std::max(max_rel, o.max_rel);
    min_a = std::min(min_a, o.min_a), max_a = std::max(max_a, o.max_a);
    min_b = std::min(min_b, o.min_b), max_b = std::max(max_b, o.max_b);
    nonfinite += o.nonfinite;
  }
};

// Sums run in the input's own precision over blocks short enough that the
// rounding error stays near one ulp of the block sum, and blocks add up in
// f64. That keeps the loop at SIMD width (converting every element to f64
// halves it) while the cosine, taken from the difference formula below,
// stays accurate to a few parts in 1e4 of 1-cos even when 1-cos is 1e-7.
//
// The order of every addition is fixed, so that a pair's figures are the same bits on every machine:
// within a block, element i adds into lane i % kSumLanes<T> (each lane in element order, products
// rounded before they are added: the module is built without FMA contraction), and the lanes combine
// pairwise; blocks add up in f64 in order within pieces of kPiece elements, and pieces add up in order,
// whichever core summed them. A compiler's own vectorisation of the reduction (16 f32 lanes with
// AVX-512, 8 with AVX2) and the core count had set the order: a cosine's last digits differed between
// an AVX-512 and an AVX2-only machine.
constexpr size_t kBlock = 1024;
constexpr size_t kPiece = size_t(1) << 21;  // elements; a multiple of kBlock
template <typename T>
constexpr int kSumLanes = 64 / sizeof(T);  // one 512-bit vector, two 256-bit ones, four 128-bit ones

// The elements of a pair as the kernels read them: T itself, or (kLoose) T through a pointer of any
// alignment. A frame leaves its tensor bytes wherever its header ended, so three in four small
// tensors of a binary stream sit off their natural boundary; reading them in place saves the copy
// that would align them (13% of the metric kernel's time on rows of 896). The type is a member
// typedef, never a template argument: GCC drops attributes from template arguments. Compilers
// without the attribute copy, as before.
template <typename T, bool kLoose>
struct Elem {
  typedef T type;
  static constexpr bool in_place = false;  // true where the loose type reads unaligned elements in place
};
#if defined(__GNUC__)
template <>
struct Elem<float, true> {
  typedef float __attribute__((aligned(1), may_alias)) type;
  static constexpr bool in_place = true;
};
template <>
struct Elem<double, true> {
  typedef double __attribute__((aligned(1), may_alias)) type;
  static constexpr bool in_place = true;
};
#endif

// Forced inline: block_sums is compiled into each of sums_range's clones at the clone's width. As a
// function of its own it was built once, for the baseline ISA, and every clone called that.
#if defined(__GNUC__)
#define ORCHLOG_INTO_CLONES inline __attribute__((always_inline))
#else
#define ORCHLOG_INTO_CLONES inline
#endif

// The lanes of a block's sum, added pairwise: ((l0 + l1) + (l2 + l3)) + ... .
template <typename T, int kN>
ORCHLOG_INTO_CLONES T lanes_total(const T (&lane)[kN]) {
  T half[kN / 2];
  for (int k = 0; k < kN / 2; ++k) half[k] = lane[2 * k] + lane[2 * k + 1];
  if constexpr (kN / 2 == 1) {
    return half[0];
  } else {
    return lanes_total<T, kN / 2>(half);
  }
}

// One block's running figures, lane by lane.
template <typename T>
struct BlockLanes {
  static constexpr int kL = kSumLanes<T>;
  T sum_abs[kL] = {}, sum_d2[kL] = {}, sum_a2[kL] = {}, sum_b2[kL] = {};
  T max_abs[kL], max_rel[kL], min_a[kL], max_a[kL], min_b[kL], max_b[kL];

  ORCHLOG_INTO_CLONES explicit BlockLanes(const Sums& s) {
    for (int k = 0; k < kL; ++k) {
      max_abs[k] = max_rel[k] = 0;
      min_a[k] = T(s.min_a), max_a[k] = T(s.max_a), min_b[k] = T(s.min_b), max_b[k] = T(s.max_b);
    }
  }
  ORCHLOG_INTO_CLONES void add(int k, T x, T y) {
    const T tiny = T(1e-8);
    const T d = x - y, ad = std::fabs(d);
    T ax = std::fabs(x);
    ax = ax > tiny ? ax : tiny;
    const T rel = ad / ax;
    max_abs[k] = max_abs[k] > ad ? max_abs[k] : ad;
    max_rel[k] = max_rel[k] > rel ? max_rel[k] : rel;
    sum_abs[k] += ad, sum_d2[k] += d * d, sum_a2[k] += x * x, sum_b2[k] += y * y;
    min_a[k] = min_a[k] < x ? min_a[k] : x, max_a[k] = max_a[k] > x ? max_a[k] : x;
    min_b[k] = min_b[k] < y ? min_b[k] : y, max_b[k] = max_b[k] > y ? max_b[k] : y;
  }
};

template <typename T, bool kLoose = false>
ORCHLOG_INTO_CLONES void block_sums(const typename Elem<T, kLoose>::type* __restrict a,
                                    const typename Elem<T, kLoose>::type* __restrict b, size_t n, Sums& s) {
  constexpr int kL = kSumLanes<T>;
  BlockLanes<T> l(s);
  size_t i = 0;
  for (; i + kL <= n; i += kL) {
#pragma omp simd
    for (int k = 0; k < kL; ++k) l.add(k, a[i + k], b[i + k]);
  }
  for (int k = 0; i + size_t(k) < n; ++k) l.add(k, a[i + k], b[i + k]);
  s.sum_abs += lanes_total(l.sum_abs), s.sum_d2 += lanes_total(l.sum_d2);
  const T a2 = lanes_total(l.sum_a2), b2 = lanes_total(l.sum_b2);
  s.sum_a2 += a2, s.sum_b2 += b2;
  for (int k = 0; k < kL; ++k) {
    s.max_abs = std::max<double>(s.max_abs, l.max_abs[k]), s.max_rel = std::max<double>(s.max_rel, l.max_rel[k]);
    s.min_a = std::min<double>(s.min_a, l.min_a[k]), s.max_a = std::max<double>(s.max_a, l.max_a[k]);
    s.min_b = std::min<double>(s.min_b, l.min_b[k]), s.max_b = std::max<double>(s.max_b, l.max_b[k]);
  }
  // A NaN or Inf on either side makes its sum of squares NaN or Inf. (So does a square
  // too large for T; the caller then takes the careful path, which is merely slower.)
  s.nonfinite += std::isfinite(a2) && std::isfinite(b2) ? 0.0 : 1.0;
}

template <typename T, bool kLoose>
ORCHLOG_INTO_CLONES void sums_range_body(const typename Elem<T, kLoose>::type* a,
                                         const typename Elem<T, kLoose>::type* b, size_t n, Sums* out) {
  for (size_t s = 0; s < n; s += kBlock) block_sums<T, kLoose>(a + s, b + s, std::min(kBlock, n - s), *out);
}

#if ORCHLOG_KERNEL_WIDTHS
template <typename T, bool kLoose>
ORCHLOG_AVX512 void sums_range_avx512(const typename Elem<T, kLoose>::type* a, const typename Elem<T, kLoose>::type* b,
                                      size_t n, Sums* out) {
  sums_range_body<T, kLoose>(a, b, n, out);
}
template <typename T, bool kLoose>
ORCHLOG_AVX2 void sums_range_avx2(const typename Elem<T, kLoose>::type* a, const typename Elem<T, kLoose>::type* b,
                                  size_t n, Sums* out) {
  sums_range_body<T, kLoose>(a, b, n, out);
}
#endif

// At the widest vector width best_isa() allows.
template <typename T, bool kLoose = false>
void sums_range(const typename Elem<T, kLoose>::type* a, const typename Elem<T, kLoose>::type* b, size_t n, Sums* out) {
#if ORCHLOG_KERNEL_WIDTHS
  const Isa isa = best_isa();
  if (isa == Isa::avx512) return sums_range_avx512<T, kLoose>(a, b, n, out);
  if (isa == Isa::avx2) return sums_range_avx2<T, kLoose>(a, b, n, out);
#endif
  sums_range_body<T, kLoose>(a, b, n, out);
}

// Large arrays are split across the cores, a piece or more each: the loop is compute-bound, not
// memory-bound, so a second core nearly halves the time.
constexpr size_t kPerThread = kPiece;

// The core count, asked once: std::thread::hardware_concurrency reads /sys on every call,
// which cost more than the metrics of a small pair.
unsigned core_count() {
  static const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return cores;
}

// How many threads to split n elements across: one per `per_thread` elements, at most one per core.
unsigned worker_count(size_t n, size_t per_thread = kPerThread) {
  return unsigned(std::min<size_t>(core_count(), std::max<size_t>(1, n / per_thread)));
}

// Run fn(lo, hi, worker) over [0, n) split across `workers` threads, the calling one among them.
template <typename F>
void split(size_t n, unsigned workers, F fn) {
  std::vector<std::thread> threads;
  size_t chunk = n / workers;
  for (unsigned w = 1; w < workers; ++w) {
    size_t lo = w * chunk, hi = (w + 1 == workers) ? n : (w + 1) * chunk;
    threads.emplace_back([=] { fn(lo, hi, w); });
  }
  fn(0, workers > 1 ? chunk : n, 0);
  for (auto& t : threads) t.join();
}

// The sums of n elements in the canonical order (above): pieces of kPiece elements, each its blocks in
// order, merged in order; up to `workers` threads sum whole pieces side by side.
template <typename T, bool kLoose = false>
Sums sums_of(const typename Elem<T, kLoose>::type* a, const typename Elem<T, kLoose>::type* b, size_t n,
             unsigned workers = 1) {
  const size_t pieces = std::max<size_t>(1, (n + kPiece - 1) / kPiece);
  std::vector<Sums> part(pieces);
  workers = unsigned(std::max<size_t>(1, std::min<size_t>(workers, pieces)));
  split(pieces, workers, [&](size_t first, size_t last, unsigned) {
    for (size_t p = first; p < last; ++p) {
      const size_t lo = p * kPiece;
      sums_range<T, kLoose>(a + lo, b + lo, std::min(kPiece, n - std::min(n, lo)), &part[p]);
    }
  });
  for (size_t p = 1; p < pieces; ++p) part[0].merge(part[p]);
  return part[0];
}

}  // namespace orchlog_kernels
