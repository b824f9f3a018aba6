// orchlog._kernels: The same metrics over the leading values of many pairs of summary records at once.
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

#include "cosine.hpp"
#include "select.hpp"

namespace orchlog_kernels {

// ------------------------------------------------------------ leading values
//
// Summary records carry their first N values; comparing a million pairs of
// them is a million short loops, done here in one call. Row p of the result
// holds PREFIX_COLUMNS (orchlog/kernels.py) for values ia[p] of a and ib[p]
// of b over their common length: both NaN, or the same infinity, agree; any
// other non-finite position is a mismatch (max_abs becomes infinite); the
// metrics cover the positions where both sides are finite.

constexpr int kPrefixColumns = 15;

void prefix_row(const double* x, const double* y, int64_t m, std::vector<double>& scratch, double* out) {
  double sum_abs = 0, sum_a2 = 0, sum_b2 = 0, sum_d2 = 0, max_abs = 0, max_rel = 0;
  double min_a = INFINITY, max_a = -INFINITY, min_b = INFINITY, max_b = -INFINITY;
  int64_t count = 0, mismatch = 0;
  const bool rank = m >= 100;  // below 100 values the nearest-rank 99th percentile is the largest
  scratch.clear();
  for (int64_t k = 0; k < m; ++k) {
    const double a = x[k], b = y[k];
    if (std::isfinite(a) && std::isfinite(b)) {
      const double d = a - b, ad = std::fabs(d);
      ++count;
      sum_abs += ad, sum_a2 += a * a, sum_b2 += b * b, sum_d2 += d * d;
      max_abs = std::max(max_abs, ad);
      max_rel = std::max(max_rel, ad / std::max(std::fabs(a), 1e-8));
      min_a = std::min(min_a, a), max_a = std::max(max_a, a), min_b = std::min(min_b, b), max_b = std::max(max_b, b);
      if (rank) scratch.push_back(ad);
    } else if (!((std::isnan(a) && std::isnan(b)) || a == b)) {
      ++mismatch;
    }
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  out[0] = double(m), out[14] = double(mismatch);
  if (count == 0) {
    for (int c = 1; c < 14; ++c) out[c] = nan;
    out[1] = mismatch ? INFINITY : nan;
    return;
  }
  double p99 = max_abs;
  if (rank) {
    auto nth = scratch.begin() + std::ptrdiff_t(std::ceil(0.99 * double(count)) - 1);
    std::nth_element(scratch.begin(), nth, scratch.end());
    p99 = *nth;
  }
  const double cosine = cosine_from_sums(sum_a2, sum_b2, sum_d2);
  const double n = double(count);
  double row[kPrefixColumns] = {double(m),
                                mismatch ? INFINITY : max_abs,
                                sum_abs / n,
                                max_rel,
                                p99,
                                std::sqrt(sum_a2 / n),
                                std::sqrt(sum_b2 / n),
                                std::sqrt(sum_d2 / n),
                                cosine,
                                std::sqrt(sum_d2),
                                min_a,
                                max_a,
                                min_b,
                                max_b,
                                double(mismatch)};
  std::memcpy(out, row, sizeof row);
}

py::array_t<double> prefix_diffs(py::array_t<double, py::array::c_style> va,
                                 py::array_t<int64_t, py::array::c_style> oa,
                                 py::array_t<int64_t, py::array::c_style> ia,
                                 py::array_t<double, py::array::c_style> vb,
                                 py::array_t<int64_t, py::array::c_style> ob,
                                 py::array_t<int64_t, py::array::c_style> ib) {
  const int64_t pairs = ia.size();
  if (ib.size() != pairs) throw py::value_error("ia and ib differ in length");
  const int64_t rows_a = oa.size() - 1, rows_b = ob.size() - 1;
  const int64_t *pa = ia.data(), *pb = ib.data(), *fa = oa.data(), *fb = ob.data();
  for (int64_t p = 0; p < pairs; ++p) {
    if (pa[p] < 0 || pa[p] >= rows_a || pb[p] < 0 || pb[p] >= rows_b) throw py::index_error("row index out of range");
  }
  py::array_t<double> out({pairs, int64_t(kPrefixColumns)});
  double* o = out.mutable_data();
  const double *xa = va.data(), *xb = vb.data();
  {
    py::gil_scoped_release nogil;
    std::vector<double> scratch;
    for (int64_t p = 0; p < pairs; ++p) {
      const int64_t i = pa[p], j = pb[p];
      const int64_t m = std::min(fa[i + 1] - fa[i], fb[j + 1] - fb[j]);
      prefix_row(xa + fa[i], xb + fb[j], m, scratch, o + p * kPrefixColumns);
    }
  }
  return out;
}

}  // namespace orchlog_kernels
