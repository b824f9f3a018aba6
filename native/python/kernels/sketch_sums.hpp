// orchlog._kernels: The three sums over the rows of two sketches that bound ||a - b|| for summary records.
// Included once, by module.cpp: the kernels build as one translation unit.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cmath>
#include <cstdint>

namespace orchlog_kernels {

namespace py = pybind11;

// For each pair p, over the R rows of sketch_a[rows_a[p]] and sketch_b[rows_b[p]] (f32, as a batch holds
// the schema's f32 rows, or f64): sum (a - b)^2, sum (|a| + |b|) and sum (|a| + |b|)^2, in f64, as
// orchlog/kernels.py's twin computes them from the gathered rows. NumPy spent a millisecond a round on
// the temporaries (the gathered rows, the differences, the magnitudes): half of a summary compare's
// bound arithmetic.
template <typename T>
py::array_t<double> sketch_sums(py::array_t<T, py::array::c_style> sketch_a,
                                py::array_t<int64_t, py::array::c_style> rows_a,
                                py::array_t<T, py::array::c_style> sketch_b,
                                py::array_t<int64_t, py::array::c_style> rows_b) {
  if (sketch_a.ndim() != 2 || sketch_b.ndim() != 2 || sketch_a.shape(1) != sketch_b.shape(1)) {
    throw py::value_error("two sketch columns of the same width are needed");
  }
  const int64_t pairs = rows_a.size(), width = sketch_a.shape(1), na = sketch_a.shape(0), nb = sketch_b.shape(0);
  if (rows_b.size() != pairs) throw py::value_error("one row of each side per pair");
  const int64_t *ra = rows_a.data(), *rb = rows_b.data();
  for (int64_t p = 0; p < pairs; ++p) {
    if (ra[p] < 0 || ra[p] >= na || rb[p] < 0 || rb[p] >= nb) throw py::index_error("sketch row out of range");
  }
  py::array_t<double> out({pairs, int64_t(3)});
  double* o = out.mutable_data();
  const T *sa = sketch_a.data(), *sb = sketch_b.data();
  {
    py::gil_scoped_release nogil;
    for (int64_t p = 0; p < pairs; ++p) {
      const T *x = sa + ra[p] * width, *y = sb + rb[p] * width;
      double d2 = 0, u1 = 0, u2 = 0;
      for (int64_t j = 0; j < width; ++j) {
        const double xj = double(x[j]), yj = double(y[j]);
        const double d = xj - yj, u = std::fabs(xj) + std::fabs(yj);
        d2 += d * d, u1 += u, u2 += u * u;
      }
      o[3 * p] = d2, o[3 * p + 1] = u1, o[3 * p + 2] = u2;
    }
  }
  return out;
}

}  // namespace orchlog_kernels
