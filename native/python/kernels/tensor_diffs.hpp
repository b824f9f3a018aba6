// orchlog._kernels: Every difference metric of many whole-tensor pairs at once, from their bytes.
// Included once, by module.cpp: the kernels build as one translation unit.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#include "cosine.hpp"
#include "select.hpp"

namespace orchlog_kernels {

// ------------------------------------------------------------ tensor pairs
//
// A trace of hidden-state rows holds hundreds of thousands of small tensors;
// measuring them one Python call at a time costs more than the arithmetic.
// tensor_diffs takes every pair of a round at once: for each side a buffer
// (any object with the buffer protocol), a byte offset, an element count and
// an element code, and returns DIFF_COLUMNS columns of one entry per pair
// (a [columns, pairs] array: the compare takes each column whole), computed
// exactly as orchlog/compare/measuring/tensor_metrics.py's tensor_diff computes it
// from the arrays flat_tensor makes: both sides f32 when both are f32, f16,
// bf16 (or f64 values known to be f32), f64 otherwise; the same fused sums
// (sums_range), the same exact p99, the same closing arithmetic. A pair with
// a NaN or Inf on either side is flagged instead: its careful path (masking
// the positions where both agree) stays in Python, which makes the rule.

enum ElementCode : int8_t { kF32 = 0, kF16, kBF16, kF64, kI8, kU8, kI32, kI64, kF64AsF32 };
constexpr size_t kCodeSize[] = {4, 2, 2, 8, 1, 1, 4, 8, 8};
constexpr int kDiffColumns = 15;  // orchlog.kernels.PREFIX_COLUMNS: the TensorDiff fields in order

inline bool narrow(int8_t code) { return code == kF32 || code == kF16 || code == kBF16 || code == kF64AsF32; }

// f16 bits to f32, exactly (NaN payloads shifted, not quieted), as orchlog.encoding.dtypes does it.
inline float f16_to_f32(uint16_t h) {
  uint32_t sign = uint32_t(h >> 15) << 31, exp = (h >> 10) & 0x1F, mant = h & 0x3FF, bits;
  if (exp == 0) {
    float tiny = float(mant) * 0x1p-24f;  // zeros and subnormals: exact in f32
    return sign ? -tiny : tiny;
  }
  bits = exp == 0x1F ? (sign | (0xFFu << 23) | (mant << 13)) : (sign | ((exp + 112) << 23) | (mant << 13));
  float out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

template <typename S>
inline S load(const unsigned char* p) {
  S v;
  std::memcpy(&v, p, sizeof v);  // the bytes may sit at any offset of a frame: no alignment assumed
  return v;
}

// n elements of one side as T, in `out`.
template <typename T>
void widen(const unsigned char* src, int8_t code, size_t n, T* out) {
  switch (code) {
    case kF32:
      for (size_t i = 0; i < n; ++i) out[i] = T(load<float>(src + 4 * i));
      break;
    case kF16:
      for (size_t i = 0; i < n; ++i) out[i] = T(f16_to_f32(load<uint16_t>(src + 2 * i)));
      break;
    case kBF16:
      for (size_t i = 0; i < n; ++i) {
        uint32_t bits = uint32_t(load<uint16_t>(src + 2 * i)) << 16;
        float f;
        std::memcpy(&f, &bits, sizeof f);
        out[i] = T(f);
      }
      break;
    case kF64:
      for (size_t i = 0; i < n; ++i) out[i] = T(load<double>(src + 8 * i));
      break;
    case kF64AsF32:
      for (size_t i = 0; i < n; ++i) out[i] = T(float(load<double>(src + 8 * i)));
      break;
    case kI8:
      for (size_t i = 0; i < n; ++i) out[i] = T(double(load<int8_t>(src + i)));
      break;
    case kU8:
      for (size_t i = 0; i < n; ++i) out[i] = T(double(load<uint8_t>(src + i)));
      break;
    case kI32:
      for (size_t i = 0; i < n; ++i) out[i] = T(double(load<int32_t>(src + 4 * i)));
      break;
    case kI64:
      for (size_t i = 0; i < n; ++i) out[i] = T(double(load<int64_t>(src + 8 * i)));
      break;
  }
}

// A side's elements as T: the bytes themselves when they already are T and aligned, else a widened copy.
template <typename T>
const T* as_elements(const unsigned char* src, int8_t code, size_t n, std::vector<T>& scratch) {
  const bool same = (sizeof(T) == 4 && code == kF32) || (sizeof(T) == 8 && code == kF64);
  if (same && reinterpret_cast<uintptr_t>(src) % alignof(T) == 0) return reinterpret_cast<const T*>(src);
  scratch.resize(n);
  widen<T>(src, code, n, scratch.data());
  return scratch.data();
}

struct PairScratch {
  std::vector<float> fa, fb, fsel;
  std::vector<double> da, db, dsel;
};

// One pair's row from its elements (kLoose: read in place, at any alignment); returns false (the row
// left alone) when either side holds a NaN or Inf.
template <typename T, bool kLoose>
bool row_from(const typename Elem<T, kLoose>::type* a, const typename Elem<T, kLoose>::type* b, size_t n, bool p99,
              std::vector<T>& sel, bool threads, double* out) {
  // The nearest rank, as kernels.abs_diff_quantile takes it: ceil(0.99 n) - 1.
  const uint64_t k = uint64_t(std::max(0.0, std::ceil(0.99 * double(n)) - 1));
  Sums s;
  bool selected = false;  // the rank taken in the same read as the sums (large arrays)
  T rank_value = 0;
  if constexpr (!kLoose) {
    if (p99 && n >= kBracketFrom) {
      selected = sums_and_select<T>(a, b, n, k, threads ? worker_count(n) : 1, s, rank_value);
    } else {
      s = sums_of<T>(a, b, n, threads ? worker_count(n) : 1);
    }
  } else {
    s = sums_of<T, true>(a, b, n);
  }
  if (s.nonfinite != 0) return false;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (n == 0) {
    out[0] = 0, out[1] = 0.0;
    for (int c = 2; c < 14; ++c) out[c] = nan;
    out[14] = 0;
    return true;
  }
  double q = nan;
  if (selected) {
    q = double(rank_value);
  } else if (p99 && s.max_abs == 0) {  // equal tensors (a common pair): every difference is +0, nothing to select
    q = 0.0;
  } else if (p99) {
    if constexpr (kLoose) {
      q = double(small_select<T, true>(a, b, n, k, sel));
    } else {
      q = double(select_t<T>(a, b, n, k, sel));
    }
  }
  const double dn = double(n);
  double row[kDiffColumns] = {dn,
                              s.max_abs,
                              s.sum_abs / dn,
                              s.max_rel,
                              q,
                              std::sqrt(s.sum_a2 / dn),
                              std::sqrt(s.sum_b2 / dn),
                              std::sqrt(s.sum_d2 / dn),
                              cosine_from_sums(s.sum_a2, s.sum_b2, s.sum_d2),
                              std::sqrt(s.sum_d2),
                              s.min_a,
                              s.max_a,
                              s.min_b,
                              s.max_b,
                              0.0};
  std::memcpy(out, row, sizeof row);
  return true;
}

// One pair's row. Small pairs stored as T are read where they lie, whatever their alignment; the
// others as their aligned elements (a copy where they are stored as another type or misaligned).
template <typename T>
bool diff_row(const unsigned char* pa, int8_t ca, const unsigned char* pb, int8_t cb, size_t n, bool p99,
              std::vector<T>& sa, std::vector<T>& sb, std::vector<T>& sel, bool threads, double* out) {
  const int8_t own = sizeof(T) == 4 ? kF32 : kF64;
  if (Elem<T, true>::in_place && ca == own && cb == own && !threads && n < kBracketFrom) {
    using L = typename Elem<T, true>::type;
    return row_from<T, true>(reinterpret_cast<const L*>(pa), reinterpret_cast<const L*>(pb), n, p99, sel, false, out);
  }
  return row_from<T, false>(as_elements<T>(pa, ca, n, sa), as_elements<T>(pb, cb, n, sb), n, p99, sel, threads, out);
}

// Buffers of one side: the objects repeat (every record of a batch shares its batch's buffer), so
// each distinct one is asked for its memory once, under the GIL.
struct Side {
  std::vector<const unsigned char*> ptr;
  std::vector<Py_buffer> views;
  ~Side() {
    for (auto& v : views) PyBuffer_Release(&v);
  }
};

void resolve(py::sequence bufs, const int64_t* start, const int64_t* count, const int8_t* code, size_t pairs,
             Side& side) {
  if (size_t(py::len(bufs)) != pairs) throw py::value_error("one buffer per pair is needed");
  side.ptr.resize(pairs);
  PyObject* last = nullptr;
  Py_buffer* view = nullptr;
  for (size_t p = 0; p < pairs; ++p) {
    py::object obj = bufs[p];
    if (obj.ptr() != last) {
      side.views.emplace_back();
      view = &side.views.back();
      if (PyObject_GetBuffer(obj.ptr(), view, PyBUF_SIMPLE) != 0) {
        side.views.pop_back();
        throw py::error_already_set();
      }
      last = obj.ptr();
    }
    if (code[p] < 0 || code[p] > kF64AsF32) throw py::value_error("unknown element code");
    const int64_t bytes = count[p] * int64_t(kCodeSize[code[p]]);
    if (start[p] < 0 || count[p] < 0 || start[p] + bytes > int64_t(view->len)) {
      throw py::index_error("tensor bytes out of their buffer's range");
    }
    side.ptr[p] = static_cast<const unsigned char*>(view->buf) + start[p];
  }
}

// Ask for the first bytes of a pair's tensor before they are read, unless they follow the bytes of the
// pair before it (rows packed in one array, which the hardware prefetcher streams already). A binary
// stream's tensors lie a frame apart, on pages of their own, and that prefetcher stays within a page:
// each pair began with waits on memory, and pairs of 896-float rows took a quarter longer (475 against
// 380 ns; benchmarks/compare_kernel.py, `framed`). Longer tensors stream on from their first bytes.
constexpr size_t kAheadPairs = 2;         // pairs measured meanwhile: enough for memory to answer
constexpr size_t kAheadBytes = 16 << 10;  // of each side's tensor
inline void prefetch_tensor(const unsigned char* p, int64_t count, int8_t code, const unsigned char* before_end) {
  if (p == before_end) return;
  const size_t bytes = std::min(size_t(count) * kCodeSize[code], kAheadBytes);
  for (size_t at = 0; at < bytes; at += 64) __builtin_prefetch(p + at, 0, 3);
}

// The rows of the pairs listed in `which`, one after the other on this thread, into `out` by column
// (column k of pair p at out[k * pairs + p]: the caller takes each column as one contiguous array).
void diff_rows(const Side& A, const Side& B, const int64_t* na, const int64_t* nb, const int8_t* ca, const int8_t* cb,
               const size_t* which, size_t count, size_t pairs, bool p99, bool threads, double* out, uint8_t* flagged) {
  PairScratch s;
  for (size_t i = 0; i < count; ++i) {
    const size_t p = which[i], n = size_t(std::min(na[p], nb[p]));
    if (i + kAheadPairs < count) {
      const size_t q = which[i + kAheadPairs], before = which[i + kAheadPairs - 1];
      prefetch_tensor(A.ptr[q], na[q], ca[q], A.ptr[before] + size_t(na[before]) * kCodeSize[ca[before]]);
      prefetch_tensor(B.ptr[q], nb[q], cb[q], B.ptr[before] + size_t(nb[before]) * kCodeSize[cb[before]]);
    }
    double row[kDiffColumns];
    const bool ok = narrow(ca[p]) && narrow(cb[p])
                        ? diff_row<float>(A.ptr[p], ca[p], B.ptr[p], cb[p], n, p99, s.fa, s.fb, s.fsel, threads, row)
                        : diff_row<double>(A.ptr[p], ca[p], B.ptr[p], cb[p], n, p99, s.da, s.db, s.dsel, threads, row);
    flagged[p] = !ok;
    if (ok) {
      for (int k = 0; k < kDiffColumns; ++k) out[size_t(k) * pairs + p] = row[k];
    }
  }
}

py::tuple tensor_diffs(py::sequence bufs_a, py::array_t<int64_t, py::array::c_style> start_a,
                       py::array_t<int64_t, py::array::c_style> count_a, py::array_t<int8_t, py::array::c_style> code_a,
                       py::sequence bufs_b, py::array_t<int64_t, py::array::c_style> start_b,
                       py::array_t<int64_t, py::array::c_style> count_b, py::array_t<int8_t, py::array::c_style> code_b,
                       bool p99) {
  const size_t pairs = size_t(start_a.size());
  for (auto* col : {&count_a, &start_b, &count_b}) {
    if (size_t(col->size()) != pairs) throw py::value_error("every column needs one entry per pair");
  }
  if (size_t(code_a.size()) != pairs || size_t(code_b.size()) != pairs) {
    throw py::value_error("every column needs one entry per pair");
  }
  Side A, B;
  resolve(bufs_a, start_a.data(), count_a.data(), code_a.data(), pairs, A);
  resolve(bufs_b, start_b.data(), count_b.data(), code_b.data(), pairs, B);
  py::array_t<double> out({int64_t(kDiffColumns), int64_t(pairs)});  // by column (diff_rows)
  py::array_t<uint8_t> flagged{py::ssize_t(pairs)};
  double* o = out.mutable_data();
  uint8_t* f = flagged.mutable_data();
  const int64_t *na = count_a.data(), *nb = count_b.data();
  const int8_t *ca = code_a.data(), *cb = code_b.data();
  {
    py::gil_scoped_release nogil;
    // Pairs large enough to split across the cores are measured one by one, each on every core;
    // the rest are shared out among the cores in runs of about equal work.
    std::vector<size_t> large, small;
    size_t work = 0;
    for (size_t p = 0; p < pairs; ++p) {
      const size_t n = size_t(std::min(na[p], nb[p]));
      if (worker_count(n, kSelectPerThread) > 1) {
        large.push_back(p);
      } else {
        small.push_back(p), work += n + 64;  // a fixed cost per pair besides its elements
      }
    }
    diff_rows(A, B, na, nb, ca, cb, large.data(), large.size(), pairs, p99, true, o, f);
    const unsigned workers = unsigned(std::min<size_t>(worker_count(work, kSelectPerThread), small.size()));
    std::vector<std::thread> threads;
    size_t begin = 0, done = 0;
    for (unsigned w = 0; w < workers; ++w) {
      size_t end = begin;
      const size_t goal = work * (w + 1) / workers;
      while (end < small.size() && done < goal) {
        const size_t p = small[end++];
        done += size_t(std::min(na[p], nb[p])) + 64;
      }
      if (w + 1 == workers) end = small.size();
      const size_t* first = small.data() + begin;
      const size_t count = end - begin;
      if (w + 1 == workers) {
        diff_rows(A, B, na, nb, ca, cb, first, count, pairs, p99, false, o, f);
      } else {
        threads.emplace_back(
            [&, first, count] { diff_rows(A, B, na, nb, ca, cb, first, count, pairs, p99, false, o, f); });
      }
      begin = end;
    }
    for (auto& t : threads) t.join();
  }
  return py::make_tuple(out, flagged);
}

}  // namespace orchlog_kernels
