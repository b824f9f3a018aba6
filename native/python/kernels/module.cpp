// orchlog._kernels: the comparer's hot loops, with NumPy fallbacks in orchlog/kernels.py.
//
//   pair_metrics(a, b, k=-1)    one fused pass over two f32/f64 arrays: every
//                               one-pass difference metric at once, and with
//                               k >= 0 the k-th smallest |a-b| in the same read
//   abs_diff_select(a, b, k, isa="best")
//                               the k-th smallest |a-b| exactly: a sample brackets
//                               the rank, one vector pass counts and gathers
//                               what lies inside (radix select where it misses)
//   prefix_diffs(...)           the same metrics over the leading values of many
//                               pairs of summary records at once
//   sketch_sums(...)            the sums over two sketches' rows that bound
//                               ||a - b|| for many pairs of summary records
//   tensor_diffs(...)           every metric of many whole-tensor pairs at once,
//                               read from their bytes (a batch's buffer)
//   decode_frames(buf, base, inline_max)
//                               binary-stream record frames -> columns; frames it
//                               does not take whole are handed back to Python
//   parse_orchlog_jsonl(buf, first_line)
//                               canonical orchlog JSONL lines -> columns; lines
//                               it does not recognise are handed back to Python
//   ReadAhead(paths, window, windows_each, inline_max, map_from)
//                               the first windows of binary traces read and decoded
//                               on a thread of their own, while the command imports
//   map_window(fd, offset, length)
//                               a read-only window of a file, mapped; unmapped on a
//                               thread of its own once nothing refers to it
//   exit_on_bus_error(line, named)
//                               the `orchlog` command's one-line error, naming the
//                               file, and exit 2 when a mapped file is cut shorter
//   keep_freed_memory(mmap_threshold, trim_threshold)
//                               the `orchlog` command's heap keeps what it frees
//                               for the next batch (glibc's malloc thresholds)
//   crc32c(buf, crc=0)          CRC-32C of a buffer (binary frames' checksum)
//   is_none(column)             which elements of a 1-D object array are None
//   libm_exp(x)                 exp of every element by the C library's exp, the
//                               same bits on every machine (NumPy's differ with AVX-512)
//
// The Python side checks every result against its NumPy twin in the tests.
#include "bus_error.hpp"
#include "crc32c.hpp"
#include "frames.hpp"
#include "heap.hpp"
#include "is_none.hpp"
#include "jsonl_columns.hpp"
#include "libm_exp.hpp"
#include "mapping.hpp"
#include "readahead.hpp"
#include "sketch_sums.hpp"
#include "tensor_diffs.hpp"

using namespace orchlog_kernels;

PYBIND11_MODULE(_kernels, m) {
  m.doc() = "orchlog comparer kernels (see orchlog/kernels.py for the NumPy twins)";
  m.def("pair_metrics", &pair_metrics_t<float>, py::arg("a"), py::arg("b"), py::arg("k") = -1);
  m.def("pair_metrics", &pair_metrics_t<double>, py::arg("a"), py::arg("b"), py::arg("k") = -1);
  m.def("abs_diff_select", &abs_diff_select_t<float>, py::arg("a"), py::arg("b"), py::arg("k"),
        py::arg("isa") = "best");
  m.def("abs_diff_select", &abs_diff_select_t<double>, py::arg("a"), py::arg("b"), py::arg("k"),
        py::arg("isa") = "best");
  m.def("crc32c", &crc32c, py::arg("buf"), py::arg("crc") = 0);
  m.def(
      "isa",
      [] {
        const Isa isa = best_isa();
        return isa == Isa::avx512 ? "avx512" : isa == Isa::avx2 ? "avx2" : "portable";
      },
      "The vector width the kernels run at: the CPU's widest within ORCHLOG_ISA.");
  m.def("is_none", &is_none, py::arg("column"));
  m.def("libm_exp", &libm_exp, py::arg("x"));
  m.def("map_window", &map_window, py::arg("fd"), py::arg("offset"), py::arg("length"));
  m.def("exit_on_bus_error", &exit_on_bus_error, py::arg("line"), py::arg("named") = "",
        "From now on, a read of a mapped page past its file's end prints a line and exits with status 2: "
        "`named` with its {path} replaced by the file's path where it can be found, else `line`.");
  m.def("keep_freed_memory", &keep_freed_memory, py::arg("mmap_threshold"), py::arg("trim_threshold"),
        "Blocks under `mmap_threshold` bytes come from the heap, and up to `trim_threshold` bytes free at its "
        "top stay there (glibc's mallopt); False where the C library has no such settings.");
  m.def(
      "unmapped", [] { Unmapper::drain(); }, py::call_guard<py::gil_scoped_release>(),
      "Wait until every window dropped so far is unmapped.");
  m.def(
      "hold_unmapping", [](bool on) { Unmapper::hold(on); }, py::arg("on"),
      "Hold the unmapping thread (True) or let it go on (False): what is dropped meanwhile waits, up to its "
      "bounds (the tests' view of them).");
  m.def("parse_orchlog_jsonl", &parse_orchlog_jsonl, py::arg("buf"), py::arg("first_line"));
  m.def("prefix_diffs", &prefix_diffs, py::arg("values_a"), py::arg("offsets_a"), py::arg("rows_a"),
        py::arg("values_b"), py::arg("offsets_b"), py::arg("rows_b"));
  // f32 first: an f64 pair must not be narrowed to fit it (pybind11 tries the overloads in order, without
  // converting on the first pass).
  m.def("sketch_sums", &sketch_sums<float>, py::arg("sketch_a"), py::arg("rows_a"), py::arg("sketch_b"),
        py::arg("rows_b"));
  m.def("sketch_sums", &sketch_sums<double>, py::arg("sketch_a"), py::arg("rows_a"), py::arg("sketch_b"),
        py::arg("rows_b"));
  m.def("decode_frames", &decode_frames, py::arg("buf"), py::arg("base"), py::arg("inline_max"), py::arg("trail") = 0);
  py::class_<ReadAhead>(m, "ReadAhead")
      .def(py::init(
               [](const py::sequence& paths, size_t window, size_t windows_each, uint32_t inline_max, size_t map_from) {
                 std::vector<std::string> files;
                 for (const py::handle path : paths)
                   files.push_back(py::cast<std::string>(path));  // bytes: os.fsencode
                 return std::make_unique<ReadAhead>(files, window, windows_each, inline_max, map_from);
               }),
           py::arg("paths"), py::arg("window"), py::arg("windows_each"), py::arg("inline_max"), py::arg("map_from"))
      .def("identity", &ReadAhead::identity, py::arg("file"))
      .def("take", &ReadAhead::take, py::arg("file"), py::arg("pos"), py::arg("trail"))
      .def("taken", &ReadAhead::taken, py::arg("file"))
      .def("ready", &ReadAhead::ready, py::arg("file"))
      .def("wait", &ReadAhead::wait, py::call_guard<py::gil_scoped_release>())
      .def("finish", &ReadAhead::finish, py::call_guard<py::gil_scoped_release>());
  m.def("tensor_diffs", &tensor_diffs, py::arg("bufs_a"), py::arg("start_a"), py::arg("count_a"), py::arg("code_a"),
        py::arg("bufs_b"), py::arg("start_b"), py::arg("count_b"), py::arg("code_b"), py::arg("p99") = true);
}
