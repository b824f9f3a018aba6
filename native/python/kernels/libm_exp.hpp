// orchlog._kernels: exp of every element of an f64 array by the C library's `exp`.
// Included once, by module.cpp: the kernels build as one translation unit.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cmath>

namespace orchlog_kernels {

namespace py = pybind11;

// NumPy's f64 exp runs its own vector code where the CPU has AVX-512 and the C library's `exp`
// elsewhere, and the two differ in the last bit of about one element in twenty: a KL divergence
// computed from them differed in its last digits between machines. This is the C library's on every
// machine (one element at a time: the loop is not marked for vectorising, so no vector variant of exp
// is substituted), as Python's math.exp is.
inline py::array_t<double> libm_exp(py::array_t<double, py::array::c_style | py::array::forcecast> x) {
  py::array_t<double> out(x.request().shape);
  const double* in = x.data();
  double* o = out.mutable_data();
  const py::ssize_t n = x.size();
  {
    py::gil_scoped_release nogil;
    for (py::ssize_t i = 0; i < n; ++i) o[i] = std::exp(in[i]);
  }
  return out;
}

}  // namespace orchlog_kernels
