// orchlog._kernels: which elements of an object column are None, by pointer.
// Included once, by module.cpp: the kernels build as one translation unit.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <cstring>

namespace orchlog_kernels {

namespace py = pybind11;

// NumPy's `column == None` calls the rich comparison per element (about 20 ns each); a batch's
// object columns (loaders, meta maps, alignments) are asked this several times a round.
inline py::array_t<bool> is_none(py::array column) {
  if (column.ndim() != 1 || column.dtype().kind() != 'O') throw py::type_error("is_none takes a 1-D object array");
  const py::ssize_t n = column.shape(0), stride = column.strides(0);
  py::array_t<bool> out{n};
  bool* o = out.mutable_data();
  const auto* base = static_cast<const char*>(column.data());
  for (py::ssize_t i = 0; i < n; ++i) {
    PyObject* item;
    std::memcpy(&item, base + i * stride, sizeof item);
    o[i] = item == Py_None || item == nullptr;  // NumPy fills object arrays with None; a NULL reads as None too
  }
  return out;
}

}  // namespace orchlog_kernels
