// The Python emitter's native half: orchlog._native.log/configure/... over
// the header-only C++ logger, so Python writes exactly what C++ writes.
//
// Tensors come in through the buffer protocol (NumPy, memoryview, bytes,
// array.array) or __dlpack__ (torch CPU tensors, including bf16) without a
// copy; only non-contiguous or big-endian data is copied, because the format
// hashes C-contiguous little-endian bytes. log() never raises: a bad argument
// is a warning and an error count, as in every other emitter.
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "orchlog/orchlog.hpp"

namespace py = pybind11;

namespace {

// A problem with an argument, reported (not raised) by log().
struct BadArgument : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---------------------------------------------------------------- DLPack
// The ABI of dlpack.h (v0.x "dltensor" capsules), which every producer fills.
struct DLDevice {
  std::int32_t device_type;
  std::int32_t device_id;
};
struct DLDataType {
  std::uint8_t code;
  std::uint8_t bits;
  std::uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  std::int32_t ndim;
  DLDataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;
  std::uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};
enum { kDLCPU = 1, kDLCUDAHost = 3 };
enum { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4 };

std::optional<orchlog::DType> dtype_of_dlpack(DLDataType t) {
  using orchlog::DType;
  if (t.lanes != 1) return std::nullopt;
  if (t.code == kDLFloat && t.bits == 32) return DType::f32;
  if (t.code == kDLFloat && t.bits == 16) return DType::f16;
  if (t.code == kDLBfloat && t.bits == 16) return DType::bf16;
  if (t.code == kDLFloat && t.bits == 64) return DType::f64;
  if (t.code == kDLInt && t.bits == 8) return DType::i8;
  if (t.code == kDLUInt && t.bits == 8) return DType::u8;
  if (t.code == kDLInt && t.bits == 32) return DType::i32;
  if (t.code == kDLInt && t.bits == 64) return DType::i64;
  return std::nullopt;
}

// ------------------------------------------------------- buffer protocol
// The schema dtype of a struct-module format ("f", "<e", "=q" ...), or none.
std::optional<orchlog::DType> dtype_of_format(const char* format, Py_ssize_t itemsize, bool& big_endian) {
  using orchlog::DType;
  std::string f = format ? format : "B";
  big_endian = false;
  if (!f.empty() && (f[0] == '<' || f[0] == '>' || f[0] == '!' || f[0] == '=' || f[0] == '@')) {
    big_endian = f[0] == '>' || f[0] == '!';
    f.erase(0, 1);
  }
  if (f.size() != 1) return std::nullopt;
  switch (f[0]) {
    case 'f':
      return itemsize == 4 ? std::optional<DType>(DType::f32) : std::nullopt;
    case 'd':
      return itemsize == 8 ? std::optional<DType>(DType::f64) : std::nullopt;
    case 'e':
      return itemsize == 2 ? std::optional<DType>(DType::f16) : std::nullopt;
    case 'b':
      return DType::i8;
    case 'B':
      return DType::u8;
    case 'h':
    case 'i':
    case 'l':
    case 'q':
    case 'n':
      if (itemsize == 1) return DType::i8;
      if (itemsize == 4) return DType::i32;
      if (itemsize == 8) return DType::i64;
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

// Copies a strided array into C order, element by element (bytes per element: itemsize).
void gather_c_order(const char* base, const std::vector<std::int64_t>& shape,
                    const std::vector<std::int64_t>& byte_strides, std::size_t itemsize, char* out) {
  const std::size_t ndim = shape.size();
  std::int64_t numel = 1;
  for (auto d : shape) numel *= d;
  if (numel == 0) return;
  std::vector<std::int64_t> index(ndim, 0);
  for (std::int64_t n = 0; n < numel; ++n) {
    std::int64_t offset = 0;
    for (std::size_t i = 0; i < ndim; ++i) offset += index[i] * byte_strides[i];
    std::memcpy(out + n * static_cast<std::int64_t>(itemsize), base + offset, itemsize);
    for (std::size_t i = ndim; i-- > 0;) {
      if (++index[i] < shape[i]) break;
      index[i] = 0;
    }
  }
}

bool is_c_contiguous(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& byte_strides,
                     std::int64_t itemsize) {
  std::int64_t expected = itemsize;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i] == 0) return true;
    if (shape[i] != 1 && byte_strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

// A tensor's bytes as the logger wants them, keeping its source alive.
class TensorBytes {
 public:
  TensorBytes(const py::handle& array, const py::object& dtype_override) {
    std::optional<orchlog::DType> override;
    if (!dtype_override.is_none()) {
      override = orchlog::schema::dtype_from_name(py::str(dtype_override).cast<std::string>());
      if (!override) throw BadArgument("unknown dtype '" + py::str(dtype_override).cast<std::string>() + "'");
    }
    if (PyObject_GetBuffer(array.ptr(), &view_, PyBUF_RECORDS_RO) == 0) {
      has_view_ = true;
      from_buffer(override);
    } else {
      PyErr_Clear();
      if (!py::hasattr(array, "__dlpack__"))
        throw BadArgument(std::string("cannot read a ") + Py_TYPE(array.ptr())->tp_name +
                          ": it has neither the buffer protocol nor __dlpack__");
      from_dlpack(array, override);
    }
  }
  ~TensorBytes() {
    if (has_view_) PyBuffer_Release(&view_);
  }
  TensorBytes(const TensorBytes&) = delete;
  TensorBytes& operator=(const TensorBytes&) = delete;

  orchlog::Tensor tensor() const { return {data_, dtype_, orchlog::Shape(shape_.data(), shape_.size())}; }

 private:
  void from_buffer(std::optional<orchlog::DType> override) {
    bool big_endian = false;
    const auto native = dtype_of_format(view_.format, view_.itemsize, big_endian);
    if (override) {
      if (static_cast<Py_ssize_t>(orchlog::schema::dtype_size(*override)) != view_.itemsize)
        throw BadArgument("dtype " + std::string(orchlog::schema::dtype_name(*override)) + " does not fit items of " +
                          std::to_string(view_.itemsize) + " bytes");
      dtype_ = *override;
    } else if (native) {
      dtype_ = *native;
    } else {
      throw BadArgument(std::string("unsupported element format '") + (view_.format ? view_.format : "B") +
                        "' (pass dtype= to reinterpret, e.g. dtype='bf16' for 2-byte bfloat16 bits)");
    }
    std::vector<std::int64_t> strides;
    if (view_.ndim == 0) {
      // a 0-d scalar
    } else if (view_.shape == nullptr) {
      shape_.push_back(view_.len / view_.itemsize);
    } else {
      for (int i = 0; i < view_.ndim; ++i) {
        shape_.push_back(view_.shape[i]);
        strides.push_back(view_.strides ? view_.strides[i] : 0);
      }
    }
    const bool contiguous = view_.strides == nullptr || is_c_contiguous(shape_, strides, view_.itemsize);
    data_ = view_.buf;
    if (!contiguous) {
      copy_.resize(static_cast<std::size_t>(view_.len));
      gather_c_order(static_cast<const char*>(view_.buf), shape_, strides, static_cast<std::size_t>(view_.itemsize),
                     copy_.data());
      data_ = copy_.data();
    }
    if (big_endian && view_.itemsize > 1) {
      if (data_ != copy_.data())
        copy_.assign(static_cast<const char*>(view_.buf), static_cast<const char*>(view_.buf) + view_.len);
      for (Py_ssize_t i = 0; i + view_.itemsize <= view_.len; i += view_.itemsize)
        std::reverse(copy_.begin() + i, copy_.begin() + i + view_.itemsize);
      data_ = copy_.data();
    }
  }

  void from_dlpack(const py::handle& array, std::optional<orchlog::DType> override) {
    capsule_ = array.attr("__dlpack__")();
    auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule_.ptr(), "dltensor"));
    if (managed == nullptr) {
      PyErr_Clear();
      throw BadArgument("__dlpack__ did not return a 'dltensor' capsule");
    }
    // The capsule is left unconsumed, so its destructor returns the tensor to its producer.
    const DLTensor& t = managed->dl_tensor;
    if (t.device.device_type != kDLCPU && t.device.device_type != kDLCUDAHost)
      throw BadArgument("the tensor is on device type " + std::to_string(t.device.device_type) +
                        "; orchlog.log takes host memory (move it with .cpu())");
    const auto native = dtype_of_dlpack(t.dtype);
    const std::size_t itemsize = (t.dtype.bits * t.dtype.lanes + 7u) / 8u;
    if (override) {
      if (orchlog::schema::dtype_size(*override) != itemsize)
        throw BadArgument("dtype does not fit the tensor's items");
      dtype_ = *override;
    } else if (native) {
      dtype_ = *native;
    } else {
      throw BadArgument("unsupported DLPack dtype (code " + std::to_string(t.dtype.code) + ", " +
                        std::to_string(t.dtype.bits) + " bits)");
    }
    shape_.assign(t.shape, t.shape + t.ndim);
    const char* base = static_cast<const char*>(t.data) + t.byte_offset;
    data_ = base;
    if (t.strides != nullptr) {
      std::vector<std::int64_t> byte_strides;
      for (int i = 0; i < t.ndim; ++i) byte_strides.push_back(t.strides[i] * static_cast<std::int64_t>(itemsize));
      if (!is_c_contiguous(shape_, byte_strides, static_cast<std::int64_t>(itemsize))) {
        std::int64_t numel = 1;
        for (auto d : shape_) numel *= d;
        copy_.resize(static_cast<std::size_t>(numel) * itemsize);
        gather_c_order(base, shape_, byte_strides, itemsize, copy_.data());
        data_ = copy_.data();
      }
    }
  }

  Py_buffer view_{};
  bool has_view_ = false;
  py::object capsule_;
  orchlog::DType dtype_ = orchlog::DType::f32;
  std::vector<std::int64_t> shape_;
  const void* data_ = nullptr;
  std::vector<char> copy_;
};

// ------------------------------------------------------------ arguments

// Names as UTF-8 bytes: bytes as given (repaired later), str via
// surrogatepass so that a lone surrogate is repaired like invalid bytes.
std::string text_of(const py::handle& obj, const char* what) {
  if (PyBytes_Check(obj.ptr())) return std::string(PyBytes_AS_STRING(obj.ptr()), PyBytes_GET_SIZE(obj.ptr()));
  if (PyUnicode_Check(obj.ptr())) {
    PyObject* raw = PyUnicode_AsEncodedString(obj.ptr(), "utf-8", "surrogatepass");
    if (raw == nullptr) throw py::error_already_set();
    std::string out(PyBytes_AS_STRING(raw), PyBytes_GET_SIZE(raw));
    Py_DECREF(raw);
    return out;
  }
  throw BadArgument(std::string(what) + " must be str or bytes, not " + Py_TYPE(obj.ptr())->tp_name);
}

template <class T>
std::optional<T> index_of(const py::handle& obj, const char* what) {
  if (obj.is_none()) return std::nullopt;
  if (PyBool_Check(obj.ptr()) || !PyLong_Check(obj.ptr()))
    throw BadArgument(std::string(what) + " must be an int or None, not " + Py_TYPE(obj.ptr())->tp_name);
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow);
  // Negative or beyond the field's type means none, as in every emitter (engines use -1 for "no layer").
  if (overflow != 0 || v < 0 || v > static_cast<long long>(std::numeric_limits<T>::max())) return std::nullopt;
  return static_cast<T>(v);
}

// Meta items with the strings they point into.
struct MetaArgs {
  std::vector<std::string> text;  // keys and string values, stable: reserved up front
  std::vector<orchlog::MetaItem> items;
};

void fill_meta(const py::handle& obj, MetaArgs& out, const char* what) {
  if (obj.is_none()) return;
  if (!PyDict_Check(obj.ptr())) throw BadArgument(std::string(what) + " must be a dict");
  const py::dict d = py::reinterpret_borrow<py::dict>(obj);
  out.text.reserve(2 * d.size());
  for (const auto& kv : d) {
    if (!PyUnicode_Check(kv.first.ptr())) throw BadArgument(std::string(what) + " keys must be str");
    out.text.push_back(text_of(kv.first, "a meta key"));
    const std::string_view key = out.text.back();
    const py::handle v = kv.second;
    if (PyBool_Check(v.ptr())) {
      out.items.emplace_back(key, v.ptr() == Py_True);
    } else if (PyLong_Check(v.ptr())) {
      int overflow = 0;
      const long long i = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
      if (overflow != 0) throw BadArgument(std::string(what) + "['" + std::string(key) + "'] does not fit in i64");
      out.items.emplace_back(key, static_cast<std::int64_t>(i));
    } else if (PyFloat_Check(v.ptr())) {
      out.items.emplace_back(key, PyFloat_AS_DOUBLE(v.ptr()));
    } else if (PyUnicode_Check(v.ptr())) {
      out.text.push_back(text_of(v, "a meta value"));
      out.items.emplace_back(key, std::string_view(out.text.back()));
    } else {
      throw BadArgument(std::string(what) + "['" + std::string(key) + "'] has type " + Py_TYPE(v.ptr())->tp_name +
                        "; only bool, int, float and str are allowed");
    }
  }
}

bool ensure_configured() {
  if (orchlog::detail::g_state.load(std::memory_order_relaxed) == orchlog::detail::kUnconfigured)
    orchlog::detail::configure_from_env_once("python");
  return orchlog::detail::g_state.load(std::memory_order_relaxed) == orchlog::detail::kOn;
}

py::bool_ log_record(const py::handle& checkpoint, const py::handle& array, const py::handle& token_idx,
                     const py::handle& layer, const py::handle& stage, const py::handle& step, const py::handle& meta,
                     const py::object& dtype) {
  if (!orchlog::detail::may_log() || !ensure_configured()) return py::bool_(false);
  try {
    const std::string name = text_of(checkpoint, "checkpoint");
    std::optional<std::string> stage_text;
    if (!stage.is_none()) stage_text = text_of(stage, "stage");
    orchlog::Key key(index_of<std::int64_t>(token_idx, "token_idx"), index_of<std::int32_t>(layer, "layer"),
                     std::nullopt, index_of<std::int32_t>(step, "step"));
    if (stage_text) key.stage = *stage_text;
    MetaArgs meta_args;
    fill_meta(meta, meta_args, "meta");
    const TensorBytes bytes(array, dtype);
    const orchlog::Tensor tensor = bytes.tensor();
    bool written;
    {
      py::gil_scoped_release release;  // hashing a large tensor should not stall other Python threads
      written = orchlog::log(name, tensor, key, meta_args.items);
    }
    return py::bool_(written);
  } catch (const BadArgument& e) {
    orchlog::detail::logger().report(orchlog::detail::kBadCall, std::string("orchlog.log: ") + e.what());
  } catch (py::error_already_set& e) {
    orchlog::detail::logger().report(orchlog::detail::kBadCall, std::string("orchlog.log: ") + e.what());
  } catch (...) {
    orchlog::detail::logger().report(orchlog::detail::kInternal, "orchlog.log: a record was not written");
  }
  return py::bool_(false);
}

std::optional<std::string> opt_text(const py::handle& obj, const char* what) {
  if (obj.is_none()) return std::nullopt;
  return text_of(obj, what);
}

// Arguments were checked by orchlog.emit.api.configure; None means "from the env knob".
bool configure_run(const py::handle& path, const py::handle& team, const py::handle& values, const py::handle& mode,
                   const py::handle& select, const py::handle& rank, const py::handle& world_size,
                   const py::handle& model, const py::handle& git_commit, const py::handle& config) {
  orchlog::Options o;
  o.producer = "python";
  o.path = opt_text(path, "path");
  o.team = opt_text(team, "team");
  if (!values.is_none()) o.values = values.cast<std::int64_t>();
  if (!mode.is_none()) {
    const std::string m = mode.cast<std::string>();
    o.mode = m == "full" ? orchlog::Mode::full : m == "both" ? orchlog::Mode::both : orchlog::Mode::summary;
  }
  o.select = opt_text(select, "select");
  if (!rank.is_none()) o.rank = rank.cast<std::int32_t>();
  if (!world_size.is_none()) o.world_size = world_size.cast<std::int32_t>();
  o.model = opt_text(model, "model");
  o.git_commit = opt_text(git_commit, "git_commit");
  MetaArgs config_args;
  fill_meta(config, config_args, "config");
  o.config = config_args.items;
  py::gil_scoped_release release;
  return orchlog::configure(o);
}

py::dict status_dict() {
  const orchlog::Status s = orchlog::status();
  py::dict d;
  d["enabled"] = s.enabled;
  d["records"] = s.records;
  d["errors"] = s.errors;
  d["path"] = s.path.empty() ? py::object(py::none()) : py::object(py::str(s.path));
  d["binary_path"] = s.binary_path.empty() ? py::object(py::none()) : py::object(py::str(s.binary_path));
  return d;
}

// ------------------------------------------------- canonical encoder (tests)

py::tuple encode_record_bytes(const py::handle& checkpoint, const py::buffer& data, const std::string& dtype,
                              const py::iterable& shape, const py::handle& team, const py::handle& token_idx,
                              const py::handle& layer, const py::handle& stage, const py::handle& step,
                              std::int32_t rank, std::int32_t world_size, std::int64_t seq, std::int64_t values,
                              const py::handle& meta) {
  const std::string name = text_of(checkpoint, "checkpoint");
  const std::string team_text = text_of(team, "team");
  std::optional<std::string> stage_text;
  if (!stage.is_none()) stage_text = text_of(stage, "stage");
  MetaArgs meta_args;
  fill_meta(meta, meta_args, "meta");
  const auto dt = orchlog::schema::dtype_from_name(dtype);
  if (!dt) throw py::value_error("unknown dtype " + dtype);
  std::vector<std::int64_t> dims;
  for (const auto& d : shape) dims.push_back(d.cast<std::int64_t>());
  const py::buffer_info raw = data.request();
  orchlog::RecordInput in;
  in.checkpoint = name;
  in.team = team_text;
  in.key = orchlog::Key(index_of<std::int64_t>(token_idx, "token_idx"), index_of<std::int32_t>(layer, "layer"),
                        std::nullopt, index_of<std::int32_t>(step, "step"));
  if (stage_text) in.key.stage = *stage_text;
  in.rank = rank;
  in.world_size = world_size;
  in.seq = seq;
  in.tensor = {raw.ptr, *dt, orchlog::Shape(dims)};
  in.values = values;
  in.meta = meta_args.items;
  std::string error;
  const auto size = orchlog::detail::measure(in.tensor, error);
  if (!size) throw py::value_error(error);
  if (static_cast<std::uint64_t>(raw.size * raw.itemsize) != size->nbytes)
    throw py::value_error("data holds " + std::to_string(raw.size * raw.itemsize) + " bytes, the shape wants " +
                          std::to_string(size->nbytes));
  const auto encoded = orchlog::encode_record(in, &error);
  if (!encoded) throw py::value_error(error);
  return py::make_tuple(py::bytes(encoded->jsonl), py::bytes(encoded->frame));
}

py::tuple encode_header_bytes(const std::string& language, const std::string& created, const py::handle& team,
                              const py::handle& model, const py::handle& git_commit, std::int32_t rank,
                              std::int32_t world_size, std::int32_t values, const py::handle& select,
                              const py::handle& config) {
  const std::string team_text = text_of(team, "team");
  const auto model_text = opt_text(model, "model");
  const auto commit_text = opt_text(git_commit, "git_commit");
  const auto select_text = opt_text(select, "select");
  MetaArgs config_args;
  fill_meta(config, config_args, "config");
  orchlog::HeaderInput h;
  h.language = language;
  h.created = created;
  h.team = team_text;
  if (model_text) h.model = *model_text;
  if (commit_text) h.git_commit = *commit_text;
  h.rank = rank;
  h.world_size = world_size;
  h.values = values;
  if (select_text) h.select = *select_text;
  h.config = config_args.items;
  const auto encoded = orchlog::encode_header(h);
  return py::make_tuple(py::bytes(encoded.jsonl), py::bytes(encoded.frame));
}

// ------------------------------------------- a tensor for the Parquet route

// A tensor as orchlog.log takes it, summarised by the same C++ code as the
// logger's records: what `orchlog.configure(format="parquet")` hands to the
// Parquet writer instead of the reference NumPy stats (about 50 times slower).
class SummarizedTensor {
 public:
  SummarizedTensor(const py::handle& array, const py::object& dtype) {
    try {
      bytes_ = std::make_unique<TensorBytes>(array, dtype);
    } catch (const BadArgument& e) {
      throw py::value_error(e.what());
    }
    tensor_ = bytes_->tensor();
    std::string error;
    const auto size = orchlog::detail::measure(tensor_, error);
    if (!size) throw py::value_error(error);
    size_ = *size;
  }

  std::string dtype() const { return std::string(orchlog::schema::dtype_name(tensor_.dtype)); }
  py::tuple shape() const {
    py::tuple out(tensor_.shape.size());
    for (std::size_t i = 0; i < tensor_.shape.size(); ++i) out[i] = tensor_.shape[i];
    return out;
  }
  std::uint64_t nbytes() const { return size_.nbytes; }

  // (min, max, mean, rms, abs_max, nan_count, inf_count) and the BLAKE3 hex, as a record carries them.
  py::tuple summarize() const {
    orchlog::detail::Summary s;
    {
      py::gil_scoped_release release;
      s = orchlog::detail::summarize(tensor_, size_);
    }
    const auto opt = [](const std::optional<double>& v) {
      return v ? py::object(py::float_(*v)) : py::object(py::none());
    };
    const py::tuple stats = py::make_tuple(opt(s.stats.min), opt(s.stats.max), opt(s.stats.mean), opt(s.stats.rms),
                                           opt(s.stats.abs_max), s.stats.nan_count, s.stats.inf_count);
    return py::make_tuple(stats, std::string(s.blake3, 64));
  }

  // The tensor's bytes (C order, little-endian) into a writable buffer of exactly nbytes.
  void copy_into(const py::buffer& out) const {
    const py::buffer_info info = out.request(true);
    if (static_cast<std::uint64_t>(info.size * info.itemsize) != size_.nbytes)
      throw py::value_error("copy_into needs a buffer of " + std::to_string(size_.nbytes) + " bytes");
    py::gil_scoped_release release;
    if (size_.nbytes) std::memcpy(info.ptr, tensor_.data, static_cast<std::size_t>(size_.nbytes));
  }

 private:
  std::unique_ptr<TensorBytes> bytes_;
  orchlog::Tensor tensor_;
  orchlog::detail::TensorSize size_;
};

std::string blake3_hex(const py::buffer& data, const py::object& path) {
  const py::buffer_info info = data.request();
  if (!PyBuffer_IsContiguous(info.view(), 'C')) throw py::value_error("blake3_hex needs contiguous bytes");
  orchlog::Blake3Path kernel = orchlog::blake3_path();
  if (!path.is_none()) {
    const auto p = orchlog::blake3_path_from_name(path.cast<std::string>());
    if (!p || !orchlog::blake3_path_supported(*p)) throw py::value_error("this CPU cannot run that BLAKE3 kernel");
    kernel = *p;
  }
  char hex[65];
  {
    py::gil_scoped_release release;
    orchlog::blake3_hex(kernel, info.ptr, static_cast<std::size_t>(info.size * info.itemsize), hex);
  }
  return std::string(hex, 64);
}

py::list blake3_paths() {
  py::list out;
  for (auto p : orchlog::kAllBlake3Paths)
    if (orchlog::blake3_path_supported(p)) out.append(std::string(orchlog::blake3_path_name(p)));
  return out;
}

}  // namespace

void bind_emitter(py::module_& m) {
  using py::arg;
  m.def("log", &log_record, arg("checkpoint"), arg("array"), arg("token_idx") = py::none(), arg("layer") = py::none(),
        arg("stage") = py::none(), arg("step") = py::none(), arg("meta") = py::none(), arg("dtype") = py::none(),
        "Write one record (see orchlog.log); returns whether it was written. Never raises.");
  m.def("configure", &configure_run, arg("path"), arg("team"), arg("values"), arg("mode"), arg("select"), arg("rank"),
        arg("world_size"), arg("model"), arg("git_commit"), arg("config"),
        "Start a new run; None takes the env knob. Returns whether logging is on.");
  m.def("flush", [] { return orchlog::flush(); }, "Ask the kernel to put written records on disk.");
  m.def("close", [] { orchlog::close(); }, "End the run; logging stays off until configure().");
  m.def("status", &status_dict, "enabled, records, errors, path, binary_path.");
  m.def("encode_record", &encode_record_bytes, arg("checkpoint"), arg("data"), arg("dtype"), arg("shape"), arg("team"),
        arg("token_idx"), arg("layer"), arg("stage"), arg("step"), arg("rank"), arg("world_size"), arg("seq"),
        arg("values"), arg("meta"), "The canonical (jsonl, frame) bytes of one record, as the logger writes them.");
  m.def("encode_header", &encode_header_bytes, arg("language"), arg("created"), arg("team"), arg("model"),
        arg("git_commit"), arg("rank"), arg("world_size"), arg("values"), arg("select"), arg("config"),
        "The canonical (jsonl, frame) bytes of a run header.");
  py::class_<SummarizedTensor>(m, "SummarizedTensor",
                               "A tensor as orchlog.log takes it (ValueError when it cannot be logged), summarised "
                               "by the C++ core: dtype, shape, nbytes, summarize(), copy_into(buffer).")
      .def(py::init<const py::handle&, const py::object&>(), arg("array"), arg("dtype") = py::none(),
           py::keep_alive<1, 2>())
      .def_property_readonly("dtype", &SummarizedTensor::dtype)
      .def_property_readonly("shape", &SummarizedTensor::shape)
      .def_property_readonly("nbytes", &SummarizedTensor::nbytes)
      .def("summarize", &SummarizedTensor::summarize, "((min, max, mean, rms, abs_max, nan_count, inf_count), blake3)")
      .def("copy_into", &SummarizedTensor::copy_into, arg("out"), "Copy the C-order little-endian bytes into out.");
  m.def("blake3_hex", &blake3_hex, arg("data"), arg("path") = py::none(),
        "BLAKE3 of a contiguous buffer; path forces a kernel (portable, sse41, avx2, avx512).");
  m.def("blake3_paths", &blake3_paths, "The BLAKE3 kernels this CPU runs.");
}
