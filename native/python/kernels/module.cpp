// orchlog._kernels: the comparer's hot loops, with NumPy fallbacks in orchlog/kernels.py.
//
//   pair_metrics(a, b)          one fused pass over two f32/f64 arrays: every
//                               one-pass difference metric at once
//   abs_diff_select(a, b, k)    the k-th smallest |a-b| exactly, by radix select
//                               on the float bits (two passes for f32)
//   prefix_diffs(...)           the same metrics over the leading values of many
//                               pairs of summary records at once
//   parse_orchlog_jsonl(buf, first_line)
//                               canonical orchlog JSONL lines -> columns; lines
//                               it does not recognise are handed back to Python
//   crc32c(buf, crc=0)          CRC-32C of a buffer (binary frames' checksum)
//
// The Python side checks every result against its NumPy twin in the tests.
#include "crc32c.hpp"
#include "jsonl_columns.hpp"

using namespace orchlog_kernels;

PYBIND11_MODULE(_kernels, m) {
  m.doc() = "orchlog comparer kernels (see orchlog/kernels.py for the NumPy twins)";
  m.def("pair_metrics", &pair_metrics_t<float>, py::arg("a"), py::arg("b"));
  m.def("pair_metrics", &pair_metrics_t<double>, py::arg("a"), py::arg("b"));
  m.def("abs_diff_select", &abs_diff_select_t<float>, py::arg("a"), py::arg("b"), py::arg("k"));
  m.def("abs_diff_select", &abs_diff_select_t<double>, py::arg("a"), py::arg("b"), py::arg("k"));
  m.def("crc32c", &crc32c, py::arg("buf"), py::arg("crc") = 0);
  m.def("parse_orchlog_jsonl", &parse_orchlog_jsonl, py::arg("buf"), py::arg("first_line"));
  m.def("prefix_diffs", &prefix_diffs, py::arg("values_a"), py::arg("offsets_a"), py::arg("rows_a"),
        py::arg("values_b"), py::arg("offsets_b"), py::arg("rows_b"));
}
