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
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "metrics.hpp"

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

// Run fn(lo, hi, worker) over [0, n) split across the cores.
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

// Count the elements of |a-b| below lo and within [lo, hi], keeping (up to
// `cap` of) the latter. Blocks of 64 are counted with vector compares and
// walked one by one only when something in them falls inside the bracket.
template <typename T>
ORCHLOG_WIDEST void bracket_pass(const T* a, const T* b, size_t n, T lo, T hi, size_t cap, uint64_t* below,
                                 uint64_t* inside, std::vector<T>* kept) {
  constexpr size_t kStep = 64;
  uint64_t under = 0, in = 0;
  for (size_t base = 0; base < n; base += kStep) {
    const size_t top = std::min(n, base + kStep);
    unsigned under_here = 0, hits = 0;
    for (size_t i = base; i < top; ++i) {
      const T v = std::fabs(a[i] - b[i]);
      under_here += v < lo;
      hits += (v >= lo) & (v <= hi);
    }
    under += under_here;
    if (!hits) continue;
    in += hits;
    if (kept->size() >= cap) continue;
    for (size_t i = base; i < top; ++i) {
      const T v = std::fabs(a[i] - b[i]);
      if (v >= lo && v <= hi) kept->push_back(v);
    }
  }
  *below = under, *inside = in;
}

// The k-th smallest of |a-b| for arrays that fit in cache, by blocks: one pass
// (at vector width) writes the differences and each block's largest; the
// m = n - k largest differences are then all at or above t0, the m-th largest
// of the block maxima (each of the m blocks with the largest maxima holds one
// element at least that large), so only blocks whose maximum reaches t0 are
// looked into, and only their elements from t0 up are partitioned. For the
// 99th percentile that is a few dozen elements, not the whole array.
constexpr size_t kSelectBlock = 32;

template <typename T>
ORCHLOG_WIDEST void block_maxima(const T* a, const T* b, size_t n, T* diffs, T* maxima) {
  for (size_t base = 0, blk = 0; base < n; base += kSelectBlock, ++blk) {
    const size_t len = std::min(kSelectBlock, n - base);
    T most = 0;
#pragma omp simd reduction(max : most)
    for (size_t j = 0; j < len; ++j) {
      const T v = std::fabs(a[base + j] - b[base + j]);
      diffs[base + j] = v;
      most = most > v ? most : v;
    }
    maxima[blk] = most;
  }
}

template <typename T>
T block_select(const T* a, const T* b, size_t n, uint64_t k, std::vector<T>& scratch) {
  const size_t blocks = (n + kSelectBlock - 1) / kSelectBlock, m = n - size_t(k);
  scratch.resize(n + 2 * blocks);
  T *diffs = scratch.data(), *maxima = diffs + n, *ranked = maxima + blocks;
  block_maxima<T>(a, b, n, diffs, maxima);
  if (m > blocks) {  // too few blocks to bound the rank: partition the differences themselves
    std::nth_element(diffs, diffs + k, diffs + n);
    return diffs[k];
  }
  std::copy(maxima, maxima + blocks, ranked);
  std::nth_element(ranked, ranked + (blocks - m), ranked + blocks);
  const T floor = ranked[blocks - m];
  size_t kept = 0;  // the candidates, gathered at the front of `diffs` (never ahead of what is read)
  for (size_t blk = 0; blk < blocks; ++blk) {
    if (maxima[blk] < floor) continue;
    const size_t base = blk * kSelectBlock, len = std::min(kSelectBlock, n - base);
    for (size_t j = 0; j < len; ++j)
      if (diffs[base + j] >= floor) diffs[kept++] = diffs[base + j];
  }
  std::nth_element(diffs, diffs + (kept - m), diffs + kept);
  return diffs[kept - m];
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
T bracket_select(const T* a, const T* b, size_t n, uint64_t k) {
  const size_t samples = std::min<size_t>(size_t(1) << 16, std::max<size_t>(4096, size_t(8 * std::sqrt(double(n)))));
  // The sample is taken in runs of contiguous elements spread evenly over the array: whole cache
  // lines, which cost a fraction of one scattered load per element.
  constexpr size_t kRun = 64;
  std::vector<T> sample(samples);
  const size_t runs = samples / kRun, stride = n / runs;
  for (size_t r = 0; r < runs; ++r)
    for (size_t j = 0; j < kRun; ++j) sample[r * kRun + j] = std::fabs(a[r * stride + j] - b[r * stride + j]);
  const double q = double(k) / double(n), margin = 4.0 * std::sqrt(std::max(q * (1 - q), 1e-6) / double(samples));
  const size_t lo_rank = size_t(std::max(0.0, q - margin) * double(samples - 1));
  const size_t hi_rank = size_t(std::min(1.0, q + margin) * double(samples - 1));
  std::nth_element(sample.begin(), sample.begin() + std::ptrdiff_t(lo_rank), sample.end());
  const T lo = sample[lo_rank];
  std::nth_element(sample.begin() + std::ptrdiff_t(lo_rank), sample.begin() + std::ptrdiff_t(hi_rank), sample.end());
  const T hi = sample[hi_rank];
  unsigned workers = worker_count(n, kBracketPerThread);
  std::vector<uint64_t> below(workers, 0), inside(workers, 0);
  std::vector<std::vector<T>> parts(workers);
  const size_t cap = kGatherLimit / workers;  // past this, counting goes on but gathering stops
  split(n, workers, [&](size_t start, size_t stop, unsigned w) {
    bracket_pass<T>(a + start, b + start, stop - start, lo, hi, lo == hi ? 0 : cap, &below[w], &inside[w], &parts[w]);
  });
  uint64_t n_below = 0, n_inside = 0;
  for (unsigned w = 0; w < workers; ++w) n_below += below[w], n_inside += inside[w];
  if (k < n_below || k >= n_below + n_inside) return radix_select(a, b, n, k);
  if (lo == hi) return lo;
  std::vector<T>& all = parts[0];
  for (unsigned w = 1; w < workers; ++w) all.insert(all.end(), parts[w].begin(), parts[w].end());
  if (all.size() != n_inside) return radix_select(a, b, n, k);  // the bracket held more than the cap
  auto nth = all.begin() + std::ptrdiff_t(k - n_below);
  std::nth_element(all.begin(), nth, all.end());
  return *nth;
}

// The k-th smallest |a-b| (0-based) of n > k elements, exactly, by whichever way is cheapest at
// that size; `scratch` is reused between calls so that small arrays allocate nothing.
template <typename T>
T select_t(const T* a, const T* b, size_t n, uint64_t k, std::vector<T>& scratch) {
  if (n >= kBracketFrom) return bracket_select(a, b, n, k);
  return block_select(a, b, n, k, scratch);
}

template <typename T>
double abs_diff_select_t(py::array_t<T, py::array::c_style> a, py::array_t<T, py::array::c_style> b, uint64_t k) {
  size_t n = size_t(std::min(a.size(), b.size()));
  if (k >= n) throw py::value_error("rank k is out of range");
  py::gil_scoped_release nogil;
  std::vector<T> scratch;
  return double(select_t<T>(a.data(), b.data(), n, k, scratch));
}

}  // namespace orchlog_kernels
