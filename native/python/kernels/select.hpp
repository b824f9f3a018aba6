// orchlog._kernels: The k-th smallest |a-b| exactly, by radix select on the float bits.
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
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "metrics.hpp"
#include "orchlog/detail/blake3/simd_target.hpp"

namespace orchlog_kernels {

// ------------------------------------------------------------ radix select
//
// |a-b| is non-negative, so the bits of the float read as an unsigned
// integer sort like the value. Each pass counts the next kDigit bits of the
// elements whose higher bits match what earlier passes fixed, and keeps the
// bucket that holds rank k. As soon as that bucket is small, its elements
// are gathered and the rank is selected among them; a bucket that stays
// large (many equal differences) just takes another counting pass, so
// memory never grows with n. Passes split across the cores.

template <typename T>
struct Bits;
template <>
struct Bits<float> {
  using U = uint32_t;
};
template <>
struct Bits<double> {
  using U = uint64_t;
};

constexpr int kDigit = 14;
constexpr size_t kGatherLimit = size_t(1) << 20;

template <typename T>
inline typename Bits<T>::U abs_diff_bits(T x, T y) {
  T d = std::fabs(x - y);
  typename Bits<T>::U u;
  std::memcpy(&u, &d, sizeof u);
  return u;
}

template <typename T>
T radix_select(const T* a, const T* b, size_t n, uint64_t k) {
  using U = typename Bits<T>::U;
  constexpr int kValueBits = int(sizeof(U) * 8) - 1;  // the sign bit of |a-b| is always 0
  unsigned workers = worker_count(n);
  U prefix = 0;  // the top `known` value bits of the answer
  int known = 0;
  uint64_t in_bucket = n;
  while (known < kValueBits && in_bucket > kGatherLimit) {
    const int digit = std::min(kDigit, kValueBits - known), shift = kValueBits - known - digit;
    const size_t buckets = size_t(1) << digit;
    std::vector<std::vector<uint64_t>> hists(workers, std::vector<uint64_t>(buckets, 0));
    split(n, workers, [&](size_t lo, size_t hi, unsigned w) {
      std::vector<uint32_t> h(buckets, 0);
      uint64_t* out = hists[w].data();
      for (size_t base = lo; base < hi; base += size_t(1) << 31) {  // flush before a 32-bit count could overflow
        size_t top = std::min(hi, base + (size_t(1) << 31));
        if (known == 0) {
          for (size_t i = base; i < top; ++i) ++h[abs_diff_bits(a[i], b[i]) >> shift];
        } else {
          for (size_t i = base; i < top; ++i) {
            U u = abs_diff_bits(a[i], b[i]);
            if ((u >> (shift + digit)) == prefix) ++h[(u >> shift) & (buckets - 1)];
          }
        }
        for (size_t j = 0; j < buckets; ++j) out[j] += h[j], h[j] = 0;
      }
    });
    uint64_t seen = 0;
    size_t bucket = 0;
    for (; bucket < buckets; ++bucket) {
      in_bucket = 0;
      for (auto& h : hists) in_bucket += h[bucket];
      if (seen + in_bucket > k) break;
      seen += in_bucket;
    }
    k -= seen;
    prefix = (prefix << digit) | U(bucket);
    known += digit;
  }
  if (known == kValueBits) {  // every bit fixed: the answer is the prefix itself
    T out;
    std::memcpy(&out, &prefix, sizeof out);
    return out;
  }
  const int rest = kValueBits - known;
  std::vector<std::vector<T>> parts(workers);
  split(n, workers, [&](size_t lo, size_t hi, unsigned w) {
    parts[w].reserve(size_t(in_bucket / workers + 16));
    for (size_t i = lo; i < hi; ++i) {
      U u = abs_diff_bits(a[i], b[i]);
      if ((u >> rest) == prefix) parts[w].push_back(std::fabs(a[i] - b[i]));
    }
  });
  std::vector<T>& all = parts[0];
  for (unsigned w = 1; w < workers; ++w) all.insert(all.end(), parts[w].begin(), parts[w].end());
  auto nth = all.begin() + std::ptrdiff_t(k);
  std::nth_element(all.begin(), nth, all.end());
  return *nth;
}

// ------------------------------------------------------------ bracket pass
//
// One streaming pass counts the elements of |a-b| below lo and within
// [lo, hi] and writes (up to `cap` of) the latter to `out`, which has room for
// cap + kPassSlack values: the vector kernels store a whole register at the
// write position and advance it by the number of elements they kept. NaN
// differences fall in neither count, as in every kernel here. The vector
// kernels keep the hits without branching on each element (AVX-512 compresses
// them within a register; AVX2 walks the set bits of a lane mask, which is
// rare: a bracket holds about 1% of the elements), so the pass runs at the
// speed of reading both arrays instead of walking again every block that
// holds a hit (44% of them for a 4-sigma bracket at the 99th percentile).

struct BracketCount {
  uint64_t below = 0, inside = 0;
};

constexpr size_t kPassSlack = 16;

template <typename T, bool kLoose = false>
BracketCount bracket_pass_portable(const typename Elem<T, kLoose>::type* a, const typename Elem<T, kLoose>::type* b,
                                   size_t n, T lo, T hi, T* out, size_t cap) {
  BracketCount c;
  for (size_t i = 0; i < n; ++i) {
    const T v = std::fabs(a[i] - b[i]);
    c.below += v < lo;
    if (v >= lo && v <= hi) {
      if (c.inside < cap) out[c.inside] = v;
      ++c.inside;
    }
  }
  return c;
}

#if ORCHLOG_X86_SIMD
ORCHLOG_TARGET_BEGIN("avx512f,popcnt")
inline BracketCount bracket_pass_avx512(const float* a, const float* b, size_t n, float lo, float hi, float* out,
                                        size_t cap) {
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  const __m512i magnitude = _mm512_set1_epi32(0x7fffffff);
  BracketCount c;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 d = _mm512_castsi512_ps(_mm512_and_si512(
        _mm512_castps_si512(_mm512_sub_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i))), magnitude));
    const __mmask16 under = _mm512_cmp_ps_mask(d, vlo, _CMP_LT_OQ);
    const __mmask16 in = _mm512_mask_cmp_ps_mask(__mmask16(~under), d, vhi, _CMP_LE_OQ);
    c.below += unsigned(__builtin_popcount(under));
    if (in) {  // compressed in a register, then stored whole: a compressing store is microcoded on some cores
      if (c.inside < cap) _mm512_storeu_ps(out + c.inside, _mm512_maskz_compress_ps(in, d));
      c.inside += unsigned(__builtin_popcount(in));
    }
  }
  const BracketCount tail =
      bracket_pass_portable<float>(a + i, b + i, n - i, lo, hi, out + c.inside, cap - std::min(cap, c.inside));
  return {c.below + tail.below, c.inside + tail.inside};
}

inline BracketCount bracket_pass_avx512(const double* a, const double* b, size_t n, double lo, double hi, double* out,
                                        size_t cap) {
  const __m512d vlo = _mm512_set1_pd(lo), vhi = _mm512_set1_pd(hi);
  const __m512i magnitude = _mm512_set1_epi64(0x7fffffffffffffffLL);
  BracketCount c;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m512d d = _mm512_castsi512_pd(_mm512_and_si512(
        _mm512_castpd_si512(_mm512_sub_pd(_mm512_loadu_pd(a + i), _mm512_loadu_pd(b + i))), magnitude));
    const __mmask8 under = _mm512_cmp_pd_mask(d, vlo, _CMP_LT_OQ);
    const __mmask8 in = _mm512_mask_cmp_pd_mask(__mmask8(~under), d, vhi, _CMP_LE_OQ);
    c.below += unsigned(__builtin_popcount(under));
    if (in) {
      if (c.inside < cap) _mm512_storeu_pd(out + c.inside, _mm512_maskz_compress_pd(in, d));
      c.inside += unsigned(__builtin_popcount(in));
    }
  }
  const BracketCount tail =
      bracket_pass_portable<double>(a + i, b + i, n - i, lo, hi, out + c.inside, cap - std::min(cap, c.inside));
  return {c.below + tail.below, c.inside + tail.inside};
}
ORCHLOG_TARGET_END

ORCHLOG_TARGET_BEGIN("avx2,popcnt")
// The set bits of `in` are the lanes of `lanes` to keep, in order.
template <typename T>
inline void keep_lanes(unsigned in, const T* lanes, T* out, size_t cap, BracketCount& c) {
  do {
    if (c.inside < cap) out[c.inside] = lanes[__builtin_ctz(in)];
    ++c.inside;
    in &= in - 1;
  } while (in);
}

inline BracketCount bracket_pass_avx2(const float* a, const float* b, size_t n, float lo, float hi, float* out,
                                      size_t cap) {
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  BracketCount c;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 d = _mm256_and_ps(_mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)), magnitude);
    const unsigned under = unsigned(_mm256_movemask_ps(_mm256_cmp_ps(d, vlo, _CMP_LT_OQ)));
    const unsigned in = unsigned(_mm256_movemask_ps(_mm256_cmp_ps(d, vhi, _CMP_LE_OQ))) & ~under;
    c.below += unsigned(__builtin_popcount(under));
    if (in) {
      alignas(32) float lanes[8];
      _mm256_store_ps(lanes, d);
      keep_lanes(in, lanes, out, cap, c);
    }
  }
  const BracketCount tail =
      bracket_pass_portable<float>(a + i, b + i, n - i, lo, hi, out + c.inside, cap - std::min(cap, c.inside));
  return {c.below + tail.below, c.inside + tail.inside};
}

inline BracketCount bracket_pass_avx2(const double* a, const double* b, size_t n, double lo, double hi, double* out,
                                      size_t cap) {
  const __m256d vlo = _mm256_set1_pd(lo), vhi = _mm256_set1_pd(hi);
  const __m256d magnitude = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
  BracketCount c;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256d d = _mm256_and_pd(_mm256_sub_pd(_mm256_loadu_pd(a + i), _mm256_loadu_pd(b + i)), magnitude);
    const unsigned under = unsigned(_mm256_movemask_pd(_mm256_cmp_pd(d, vlo, _CMP_LT_OQ)));
    const unsigned in = unsigned(_mm256_movemask_pd(_mm256_cmp_pd(d, vhi, _CMP_LE_OQ))) & ~under;
    c.below += unsigned(__builtin_popcount(under));
    if (in) {
      alignas(32) double lanes[4];
      _mm256_store_pd(lanes, d);
      keep_lanes(in, lanes, out, cap, c);
    }
  }
  const BracketCount tail =
      bracket_pass_portable<double>(a + i, b + i, n - i, lo, hi, out + c.inside, cap - std::min(cap, c.inside));
  return {c.below + tail.below, c.inside + tail.inside};
}
ORCHLOG_TARGET_END
#endif

template <typename T, bool kLoose = false>
BracketCount bracket_pass(Isa isa, const typename Elem<T, kLoose>::type* a, const typename Elem<T, kLoose>::type* b,
                          size_t n, T lo, T hi, T* out, size_t cap) {
#if ORCHLOG_X86_SIMD
  // The vector kernels load with loadu, which takes any address.
  const T *va = reinterpret_cast<const T*>(a), *vb = reinterpret_cast<const T*>(b);
  if (isa == Isa::avx512) return bracket_pass_avx512(va, vb, n, lo, hi, out, cap);
  if (isa == Isa::avx2) return bracket_pass_avx2(va, vb, n, lo, hi, out, cap);
#endif
  return bracket_pass_portable<T, kLoose>(a, b, n, lo, hi, out, cap);
}

// Every |a-b| at or above lo, in order, into out (room for n + kPassSlack values); returns how many.
// For the few largest differences of a small array, which sit in any block: AVX-512 stores every
// block's hits, compressed in a register, hit or not, as a branch on whether a block holds one is taken
// at random (bracket_pass keeps that branch: its hits are sparse); no count below, no cap to check.
#if ORCHLOG_X86_SIMD
ORCHLOG_TARGET_BEGIN("avx512f,popcnt")
inline size_t at_or_above_avx512(const float* a, const float* b, size_t n, float lo, float* out) {
  const __m512 vlo = _mm512_set1_ps(lo);
  const __m512i magnitude = _mm512_set1_epi32(0x7fffffff);
  size_t kept = 0, i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 d = _mm512_castsi512_ps(_mm512_and_si512(
        _mm512_castps_si512(_mm512_sub_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i))), magnitude));
    const __mmask16 in = _mm512_cmp_ps_mask(d, vlo, _CMP_GE_OQ);
    _mm512_storeu_ps(out + kept, _mm512_maskz_compress_ps(in, d));
    kept += unsigned(__builtin_popcount(in));
  }
  const float inf = std::numeric_limits<float>::infinity();
  return kept + bracket_pass_portable<float>(a + i, b + i, n - i, lo, inf, out + kept, n - i).inside;
}

inline size_t at_or_above_avx512(const double* a, const double* b, size_t n, double lo, double* out) {
  const __m512d vlo = _mm512_set1_pd(lo);
  const __m512i magnitude = _mm512_set1_epi64(0x7fffffffffffffffLL);
  size_t kept = 0, i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m512d d = _mm512_castsi512_pd(_mm512_and_si512(
        _mm512_castpd_si512(_mm512_sub_pd(_mm512_loadu_pd(a + i), _mm512_loadu_pd(b + i))), magnitude));
    const __mmask8 in = _mm512_cmp_pd_mask(d, vlo, _CMP_GE_OQ);
    _mm512_storeu_pd(out + kept, _mm512_maskz_compress_pd(in, d));
    kept += unsigned(__builtin_popcount(in));
  }
  const double inf = std::numeric_limits<double>::infinity();
  return kept + bracket_pass_portable<double>(a + i, b + i, n - i, lo, inf, out + kept, n - i).inside;
}
ORCHLOG_TARGET_END
#endif

template <typename T, bool kLoose = false>
size_t at_or_above(Isa isa, const typename Elem<T, kLoose>::type* a, const typename Elem<T, kLoose>::type* b, size_t n,
                   T lo, T* out) {
#if ORCHLOG_X86_SIMD
  if (isa == Isa::avx512)
    return at_or_above_avx512(reinterpret_cast<const T*>(a), reinterpret_cast<const T*>(b), n, lo, out);
#endif
  return bracket_pass<T, kLoose>(isa, a, b, n, lo, std::numeric_limits<T>::infinity(), out, n).inside;
}

// The k-th smallest of |a-b| for arrays that fit in cache. Deal the elements
// into S sets by position (element i to set i mod S, S a multiple of 32 and at
// least m = n - k), and take each set's largest difference in one pass at
// vector width (no reduction within a register: set j is a lane). The m
// largest differences are then all at or above t0, the m-th largest of the set
// maxima (each of the m sets with the largest maxima holds one element at
// least that large), so a bracket pass over [t0, inf] gathers every candidate
// at vector width, and only those are ranked. For the 99th percentile of a
// row of 896 that is some 11 candidates. (Blocks of 32 reduced one by one, and
// std::nth_element on their maxima, cost as much as the pair's other metrics.)
constexpr size_t kSetsStep = 32;

template <typename T, bool kLoose>
ORCHLOG_INTO_CLONES void set_maxima_body(const typename Elem<T, kLoose>::type* a,
                                         const typename Elem<T, kLoose>::type* b, size_t n, size_t sets, T* maxima) {
  std::fill(maxima, maxima + sets, T(0));
  size_t base = 0;
  if (sets == kSetsStep) {  // the usual case: the maxima stay in registers, the trip count known
    T most[kSetsStep] = {};
    for (; base + kSetsStep <= n; base += kSetsStep) {
#pragma omp simd
      for (size_t j = 0; j < kSetsStep; ++j) {
        const T v = std::fabs(a[base + j] - b[base + j]);
        most[j] = most[j] > v ? most[j] : v;
      }
    }
    std::copy(most, most + kSetsStep, maxima);
  }
  for (; base < n; base += sets) {
    const size_t len = std::min(sets, n - base);
#pragma omp simd
    for (size_t j = 0; j < len; ++j) {
      const T v = std::fabs(a[base + j] - b[base + j]);
      maxima[j] = maxima[j] > v ? maxima[j] : v;
    }
  }
}

#if ORCHLOG_KERNEL_WIDTHS
template <typename T, bool kLoose>
ORCHLOG_AVX512 void set_maxima_avx512(const typename Elem<T, kLoose>::type* a, const typename Elem<T, kLoose>::type* b,
                                      size_t n, size_t sets, T* maxima) {
  set_maxima_body<T, kLoose>(a, b, n, sets, maxima);
}
template <typename T, bool kLoose>
ORCHLOG_AVX2 void set_maxima_avx2(const typename Elem<T, kLoose>::type* a, const typename Elem<T, kLoose>::type* b,
                                  size_t n, size_t sets, T* maxima) {
  set_maxima_body<T, kLoose>(a, b, n, sets, maxima);
}
#endif

template <typename T, bool kLoose = false>
void set_maxima(const typename Elem<T, kLoose>::type* a, const typename Elem<T, kLoose>::type* b, size_t n, size_t sets,
                T* maxima) {
#if ORCHLOG_KERNEL_WIDTHS
  const Isa isa = best_isa();
  if (isa == Isa::avx512) return set_maxima_avx512<T, kLoose>(a, b, n, sets, maxima);
  if (isa == Isa::avx2) return set_maxima_avx2<T, kLoose>(a, b, n, sets, maxima);
#endif
  set_maxima_body<T, kLoose>(a, b, n, sets, maxima);
}

// The m-th largest of 1 <= count <= 32 values, 1 <= m <= count, without a branch: the largest value
// with at least m values at or above it. Each value's count is a lane, so the loops run at vector
// width with no reduction inside a register. The values are padded with -inf to 16 or 32 lanes, so
// the lane loops have a trip count the compiler knows (with the count's own, fewer than 16 ran
// scalar: the usual handful of candidates cost as much as all 32 set maxima); -inf is at or above
// no difference (those are >= 0 or NaN), and never the largest with m values at or above it.
template <typename T, size_t kLanes>
ORCHLOG_INTO_CLONES T mth_largest_lanes(const T* v, size_t count, size_t m) {
  using Count = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;  // lanes as wide as the values
  alignas(64) T w[kLanes];
  alignas(64) Count at_or_above[kLanes] = {};
  for (size_t j = 0; j < kLanes; ++j) w[j] = j < count ? v[j] : -std::numeric_limits<T>::infinity();
  for (size_t i = 0; i < count; ++i) {
    const T t = w[i];
#pragma omp simd
    for (size_t j = 0; j < kLanes; ++j) at_or_above[j] += t >= w[j];
  }
  T best = -std::numeric_limits<T>::infinity();
#pragma omp simd reduction(max : best)
  for (size_t j = 0; j < kLanes; ++j) {
    const T c = at_or_above[j] >= Count(m) ? w[j] : -std::numeric_limits<T>::infinity();
    best = best > c ? best : c;
  }
  return best;
}

template <typename T>
ORCHLOG_INTO_CLONES T mth_largest_few_body(const T* v, size_t count, size_t m) {
  return count <= 16 ? mth_largest_lanes<T, 16>(v, count, m) : mth_largest_lanes<T, 32>(v, count, m);
}

#if ORCHLOG_KERNEL_WIDTHS
template <typename T>
ORCHLOG_AVX512 T mth_largest_few_avx512(const T* v, size_t count, size_t m) {
  return mth_largest_few_body(v, count, m);
}
template <typename T>
ORCHLOG_AVX2 T mth_largest_few_avx2(const T* v, size_t count, size_t m) {
  return mth_largest_few_body(v, count, m);
}
#endif

template <typename T>
T mth_largest_few(const T* v, size_t count, size_t m) {
#if ORCHLOG_KERNEL_WIDTHS
  const Isa isa = best_isa();
  if (isa == Isa::avx512) return mth_largest_few_avx512(v, count, m);
  if (isa == Isa::avx2) return mth_largest_few_avx2(v, count, m);
#endif
  return mth_largest_few_body(v, count, m);
}

// The m-th largest of v[0, count), 1 <= m <= count, possibly reordering v.
template <typename T>
T mth_largest(T* v, size_t count, size_t m) {
  if (count <= 32) return mth_largest_few(v, count, m);
  std::nth_element(v, v + (count - m), v + count);
  return v[count - m];
}

template <typename T, bool kLoose = false>
T small_select(const typename Elem<T, kLoose>::type* a, const typename Elem<T, kLoose>::type* b, size_t n, uint64_t k,
               std::vector<T>& scratch, Isa isa = best_isa()) {
  const size_t m = n - size_t(k), sets = (m + kSetsStep - 1) / kSetsStep * kSetsStep;
  scratch.resize(n + kPassSlack + sets);
  T *picked = scratch.data(), *maxima = picked + n + kPassSlack;
  size_t kept = 0;
  if (sets <= n / 2) {  // else the sets hold an element or two each: nothing to gain over ranking them all
    set_maxima<T, kLoose>(a, b, n, sets, maxima);
    const T floor = mth_largest(maxima, sets, m);
    kept = at_or_above<T, kLoose>(isa, a, b, n, floor, picked);
  }
  if (kept < m) {  // no sets to bound the rank with (or NaNs among the maxima): rank every difference
    for (size_t i = 0; i < n; ++i) picked[i] = std::fabs(a[i] - b[i]);
    std::nth_element(picked, picked + k, picked + n);
    return picked[k];
  }
  return mth_largest(picked, kept, m);
}

constexpr size_t kBracketFrom = size_t(1) << 15;      // from this size on, bracket the rank with a sample
constexpr size_t kSelectPerThread = size_t(1) << 18;  // a thread per this many elements pays for itself
// The bracket pass of one array: a second thread did not make 1M f32 elements any faster even on a
// free core (0.89 ms against 0.85 ms on one, best of 50), and on a busy machine waiting for it cost
// milliseconds; from 4M elements on, each thread has enough to do.
constexpr size_t kBracketPerThread = size_t(1) << 22;

// The usual way in for large arrays: bracket rank k between two values read
// off a sample (partitioned, not sorted), then one streaming pass counts the
// elements below the bracket and gathers those inside it, and the rank is
// selected among those few. The count is exact, so a bracket that misses (an
// unlucky sample) only costs a fall back to the radix passes above, never a
// wrong answer. The sample grows as sqrt(n): a larger one narrows the bracket
// (fewer elements gathered) but costs more to partition.
template <typename T>
struct Bracket {
  T lo, hi;
  bool ok;  // false when the sample holds a NaN difference: no order to bracket by
};

template <typename T>
Bracket<T> sample_bracket(const T* a, const T* b, size_t n, uint64_t k) {
  const size_t samples = std::min<size_t>(size_t(1) << 16, std::max<size_t>(4096, size_t(8 * std::sqrt(double(n)))));
  // The sample is taken in runs of contiguous elements spread evenly over the array: whole cache
  // lines, which cost a fraction of one scattered load per element.
  constexpr size_t kRun = 64;
  std::vector<T> sample(samples);
  const size_t runs = samples / kRun, stride = n / runs;
  bool ok = true;
  for (size_t r = 0; r < runs; ++r)
    for (size_t j = 0; j < kRun; ++j) {
      const T d = std::fabs(a[r * stride + j] - b[r * stride + j]);
      ok = ok && d == d;
      sample[r * kRun + j] = d;
    }
  if (!ok) return {T(0), T(0), false};
  const double q = double(k) / double(n), margin = 4.0 * std::sqrt(std::max(q * (1 - q), 1e-6) / double(samples));
  const size_t lo_rank = size_t(std::max(0.0, q - margin) * double(samples - 1));
  const size_t hi_rank = size_t(std::min(1.0, q + margin) * double(samples - 1));
  std::nth_element(sample.begin(), sample.begin() + std::ptrdiff_t(lo_rank), sample.end());
  const T lo = sample[lo_rank];
  std::nth_element(sample.begin() + std::ptrdiff_t(lo_rank), sample.begin() + std::ptrdiff_t(hi_rank), sample.end());
  return {lo, sample[hi_rank], true};
}

// What each worker's stretch of a bracket pass found: its counts, and room for `cap` hits (and the
// slack the vector kernels store past the last), left uninitialised: zeroing the whole room (4 MiB)
// would cost more than the pass, and only the pages the hits land on are ever touched.
template <typename T>
struct BracketParts {
  size_t cap;
  std::vector<BracketCount> counts;
  std::vector<std::unique_ptr<T[]>> hits;

  BracketParts(const Bracket<T>& br, unsigned workers)
      : cap(br.lo == br.hi ? 0 : kGatherLimit / workers), counts(workers), hits(workers) {
    for (auto& h : hits) h.reset(new T[cap + kPassSlack]);
  }

  // Adds worker w's pass over one stretch; past the cap, counting goes on but gathering stops.
  void pass(Isa isa, const T* a, const T* b, size_t n, const Bracket<T>& br, unsigned w) {
    BracketCount& c = counts[w];
    const size_t at = std::min<size_t>(c.inside, cap);
    const BracketCount more = bracket_pass<T>(isa, a, b, n, br.lo, br.hi, hits[w].get() + at, cap - at);
    c.below += more.below, c.inside += more.inside;
  }

  // Rank k among the hits, or by the radix passes when the bracket missed it or held more than the cap.
  T select(const T* a, const T* b, size_t n, uint64_t k, const Bracket<T>& br) {
    uint64_t n_below = 0, n_inside = 0;
    bool all_kept = true;
    for (const BracketCount& c : counts)
      n_below += c.below, n_inside += c.inside, all_kept = all_kept && c.inside <= cap;
    if (k < n_below || k >= n_below + n_inside) return radix_select(a, b, n, k);
    if (br.lo == br.hi) return br.lo;
    if (!all_kept) return radix_select(a, b, n, k);
    std::vector<T> merged;  // the workers' hits side by side, when there are several
    T* all = hits[0].get();
    if (counts.size() > 1) {
      merged.reserve(size_t(n_inside));
      for (size_t w = 0; w < counts.size(); ++w)
        merged.insert(merged.end(), hits[w].get(), hits[w].get() + counts[w].inside);
      all = merged.data();
    }
    std::nth_element(all, all + (k - n_below), all + n_inside);
    return all[k - n_below];
  }
};

template <typename T>
T bracket_select(const T* a, const T* b, size_t n, uint64_t k, Isa isa) {
  const Bracket<T> br = sample_bracket(a, b, n, k);
  if (!br.ok) return radix_select(a, b, n, k);
  const unsigned workers = worker_count(n, kBracketPerThread);
  BracketParts<T> parts(br, workers);
  split(n, workers,
        [&](size_t start, size_t stop, unsigned w) { parts.pass(isa, a + start, b + start, stop - start, br, w); });
  return parts.select(a, b, n, k, br);
}

// A large pair's sums and its rank-k difference in one read of the arrays: the bracket comes from the
// sample first, then each worker runs the sums and the bracket pass over the same cache-sized stretch
// in turn, where one after the other each read the whole arrays from memory (two 64 MiB f32 arrays:
// 8.1 -> 5.6 ms, 256 MiB: 32.3 -> 20.5 ms, the two ways in turn; arrays that fit in the last-level
// cache gain nothing). Workers take whole pieces and stretches are whole sum blocks, each piece's sums
// kept apart and merged in order, so the sums are bit for bit those of sums_of, whatever the number of
// workers. False, with only the sums done, when the sample holds a NaN: the pair is not finite, and
// no rank is taken.
template <typename T>
bool sums_and_select(const T* a, const T* b, size_t n, uint64_t k, unsigned workers, Sums& sums, T& out,
                     Isa isa = best_isa()) {
  const Bracket<T> br = sample_bracket(a, b, n, k);
  if (!br.ok) {
    sums = sums_of<T>(a, b, n, workers);
    return false;
  }
  constexpr size_t kStretch = 8 * kBlock;  // 64 KiB of f32 pairs: still in L2 when the second pass reads it
  static_assert(kPiece % kStretch == 0, "a piece is whole stretches");
  const size_t pieces = std::max<size_t>(1, (n + kPiece - 1) / kPiece);
  workers = unsigned(std::max<size_t>(1, std::min<size_t>(workers, pieces)));
  BracketParts<T> parts(br, workers);
  std::vector<Sums> part_sums(pieces);
  split(pieces, workers, [&](size_t first, size_t last, unsigned w) {
    for (size_t p = first; p < last; ++p) {
      const size_t lo = p * kPiece, hi = std::min(n, lo + kPiece);
      for (size_t s = lo; s < hi; s += kStretch) {
        const size_t len = std::min(kStretch, hi - s);
        sums_range<T>(a + s, b + s, len, &part_sums[p]);
        parts.pass(isa, a + s, b + s, len, br, w);
      }
    }
  });
  for (size_t p = 1; p < pieces; ++p) part_sums[0].merge(part_sums[p]);
  sums = part_sums[0];
  if (sums.nonfinite != 0) return false;
  out = parts.select(a, b, n, k, br);
  return true;
}

// The k-th smallest |a-b| (0-based) of n > k elements, exactly, by whichever way is cheapest at
// that size; `scratch` is reused between calls so that small arrays allocate nothing. `isa` picks
// the bracket pass's kernel (the tests run each one the machine has).
template <typename T>
T select_t(const T* a, const T* b, size_t n, uint64_t k, std::vector<T>& scratch, Isa isa = best_isa()) {
  if (n >= kBracketFrom) return bracket_select(a, b, n, k, isa);
  return small_select<T>(a, b, n, k, scratch, isa);
}

// pair_metrics(a, b, k=-1): the one-pass sums of a pair, and with k >= 0 the k-th smallest |a-b| too
// (NaN when a side is not finite), in one read of large arrays.
template <typename T>
py::dict pair_metrics_t(py::array_t<T, py::array::c_style> a, py::array_t<T, py::array::c_style> b, int64_t k) {
  const size_t n = size_t(std::min(a.size(), b.size()));
  if (k >= 0 && uint64_t(k) >= n) throw py::value_error("rank k is out of range");
  Sums s;
  double rank_value = std::numeric_limits<double>::quiet_NaN();
  {
    py::gil_scoped_release nogil;
    T v;
    if (k >= 0 && n >= kBracketFrom) {
      if (sums_and_select<T>(a.data(), b.data(), n, uint64_t(k), worker_count(n), s, v)) rank_value = double(v);
    } else {
      s = sums_of<T>(a.data(), b.data(), n, worker_count(n));
      std::vector<T> scratch;
      if (k >= 0 && s.nonfinite == 0) rank_value = double(select_t<T>(a.data(), b.data(), n, uint64_t(k), scratch));
    }
  }
  py::dict d;
  d["n"] = n;
  d["all_finite"] = s.nonfinite == 0;
  d["sum_abs"] = s.sum_abs, d["sum_d2"] = s.sum_d2, d["sum_a2"] = s.sum_a2, d["sum_b2"] = s.sum_b2;
  d["max_abs"] = s.max_abs, d["max_rel"] = s.max_rel;
  d["min_a"] = s.min_a, d["max_a"] = s.max_a, d["min_b"] = s.min_b, d["max_b"] = s.max_b;
  if (k >= 0) d["rank_value"] = rank_value;
  return d;
}

inline Isa isa_named(const std::string& name) {
  if (name == "best") return best_isa();
  const Isa isa = name == "avx512" ? Isa::avx512 : name == "avx2" ? Isa::avx2 : Isa::portable;
  if ((name != "portable" && name != "avx2" && name != "avx512") || !isa_supported(isa))
    throw py::value_error("isa '" + name + "': want best, portable, or a vector kernel this CPU has (avx2, avx512)");
  return isa;
}

template <typename T>
double abs_diff_select_t(py::array_t<T, py::array::c_style> a, py::array_t<T, py::array::c_style> b, uint64_t k,
                         const std::string& isa) {
  size_t n = size_t(std::min(a.size(), b.size()));
  if (k >= n) throw py::value_error("rank k is out of range");
  const Isa chosen = isa_named(isa);
  py::gil_scoped_release nogil;
  std::vector<T> scratch;
  return double(select_t<T>(a.data(), b.data(), n, k, scratch, chosen));
}

}  // namespace orchlog_kernels
