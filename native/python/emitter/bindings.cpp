// The Python emitter's native half: orchlog._native.log/configure/... over
// the header-only C++ logger, so Python writes exactly what C++ writes.
//
// Tensors come in through the buffer protocol (NumPy, memoryview, bytes,
// array.array) or __dlpack__ (torch CPU tensors, including bf16) without a
// copy; only non-contiguous or big-endian data is copied, because the format
// hashes C-contiguous little-endian bytes. log() never raises: a bad argument
// is a warning and an error count, as in every other emitter.
#include <pybind11/pybind11.h>
#include <sched.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>
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
  orchlog::detail::settle_state("python");
  return orchlog::detail::g_state.load(std::memory_order_relaxed) == orchlog::detail::kOn;
}

// A Python value as a key part of type T (None: none); text goes into `room`,
// which the part then points into.
template <class T>
std::optional<T> part_of(const py::handle& value, std::string_view name, std::string& room) {
  const std::string what(name);
  if constexpr (std::is_same_v<T, std::string_view>) {
    if (value.is_none()) return std::nullopt;
    room = text_of(value, what.c_str());
    return std::string_view(room);
  } else if constexpr (std::is_same_v<T, bool>) {
    if (value.is_none()) return std::nullopt;
    if (!PyBool_Check(value.ptr())) throw BadArgument(what + " must be a bool or None");
    return value.ptr() == Py_True;
  } else {
    return index_of<T>(value, what.c_str());
  }
}

// The key of a log call: the positional parts in order, then the named ones.
struct KeyArgs {
  orchlog::Key key;
  std::array<std::string, orchlog::detail::kKeyParts> texts;
};

void fill_key(KeyArgs& out, const py::tuple& positional, const py::handle& named) {
  const py::dict names = named.is_none() ? py::dict() : py::reinterpret_borrow<py::dict>(named);
  std::size_t index = 0, used = 0;
  orchlog::detail::for_each_key_part(out.key, [&](std::string_view name, auto& part) {
    using T = typename std::decay_t<decltype(part)>::value_type;
    py::handle value = index < positional.size() ? positional[index] : py::handle(Py_None);
    const py::str key = py::str(std::string(name));
    if (names.contains(key)) {
      value = names[key];
      ++used;
    }
    part = part_of<T>(value, name, out.texts[index++]);
  });
  if (used != names.size()) {
    std::string known;
    orchlog::detail::for_each_key_part(
        out.key, [&known](std::string_view name, auto&) { known.append(known.empty() ? "" : ", ").append(name); });
    throw BadArgument("unknown key part among " + py::str(names.attr("keys")()).cast<std::string>() +
                      " (known: " + known + ")");
  }
}

// A log or graft call's checkpoint, key and meta as the core takes them, with the text they point into.
struct CallArgs {
  std::string name;
  KeyArgs key_args;
  MetaArgs meta_args;

  CallArgs(const py::handle& checkpoint, const py::tuple& positional, const py::handle& named, const py::handle& meta)
      : name(text_of(checkpoint, "checkpoint")) {
    fill_key(key_args, positional, named);
    fill_meta(meta, meta_args, "meta");
  }
};

// Runs a record's work; what it throws becomes one warning naming `api`, never an exception in the host.
template <typename Work>
py::bool_ guarded(const char* api, Work&& work) {
  try {
    return py::bool_(work());
  } catch (const BadArgument& e) {
    orchlog::detail::logger().report(orchlog::detail::kBadCall, std::string(api) + ": " + e.what());
  } catch (py::error_already_set& e) {
    orchlog::detail::logger().report(orchlog::detail::kBadCall, std::string(api) + ": " + e.what());
  } catch (...) {
    orchlog::detail::logger().report(orchlog::detail::kInternal, std::string(api) + ": a record was not written");
  }
  return py::bool_(false);
}

py::bool_ log_record(const py::handle& checkpoint, const py::handle& array, const py::tuple& positional,
                     const py::handle& named, const py::handle& meta, const py::object& dtype) {
  if (!orchlog::detail::may_log() || !ensure_configured()) return py::bool_(false);
  return guarded("orchlog.log", [&] {
    const CallArgs args(checkpoint, positional, named, meta);
    const TensorBytes bytes(array, dtype);
    const orchlog::Tensor tensor = bytes.tensor();
    py::gil_scoped_release release;  // hashing a large tensor should not stall other Python threads
    return orchlog::log(args.name, tensor, args.key_args.key, args.meta_args.items);
  });
}

// A writable, C-contiguous buffer a graft can overwrite in place, held while it lives.
class WritableBuffer {
 public:
  WritableBuffer(const py::handle& array, const py::object& dtype_override) {
    if (PyObject_GetBuffer(array.ptr(), &view_, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE | PyBUF_FORMAT) != 0) {
      PyErr_Clear();
      throw BadArgument(std::string("cannot graft into a ") + Py_TYPE(array.ptr())->tp_name +
                        ": it needs a writable, C-contiguous buffer (a NumPy array; torch: tensor.numpy())");
    }
    bool big_endian = false;
    const auto native = dtype_of_format(view_.format, view_.itemsize, big_endian);
    std::optional<orchlog::DType> override;
    if (!dtype_override.is_none()) {
      override = orchlog::schema::dtype_from_name(py::str(dtype_override).cast<std::string>());
      if (!override) throw BadArgument("unknown dtype '" + py::str(dtype_override).cast<std::string>() + "'");
      if (static_cast<Py_ssize_t>(orchlog::schema::dtype_size(*override)) != view_.itemsize)
        throw BadArgument("dtype " + py::str(dtype_override).cast<std::string>() + " does not fit items of " +
                          std::to_string(view_.itemsize) + " bytes");
    }
    if (!override && !native)
      throw BadArgument(std::string("unsupported element format '") + (view_.format ? view_.format : "B") +
                        "' (pass dtype= to reinterpret, e.g. dtype='bf16' for 2-byte bfloat16 bits)");
    if (big_endian && view_.itemsize > 1) throw BadArgument("cannot graft into a big-endian array");
    dtype_ = override ? *override : *native;
    if (view_.ndim > 0 && view_.shape == nullptr) {
      shape_.push_back(view_.len / view_.itemsize);
    } else {
      for (int i = 0; i < view_.ndim; ++i) shape_.push_back(view_.shape[i]);
    }
  }
  ~WritableBuffer() { PyBuffer_Release(&view_); }
  WritableBuffer(const WritableBuffer&) = delete;
  WritableBuffer& operator=(const WritableBuffer&) = delete;

  void* data() const { return view_.buf; }
  orchlog::DType dtype() const { return dtype_; }
  orchlog::Shape shape() const { return orchlog::Shape(shape_.data(), shape_.size()); }

 private:
  Py_buffer view_{};
  orchlog::DType dtype_ = orchlog::DType::f32;
  std::vector<std::int64_t> shape_;
};

py::bool_ graft_record(const py::handle& checkpoint, const py::handle& array, const py::tuple& positional,
                       const py::handle& named, const py::handle& meta, const py::object& dtype) {
  if (!orchlog::detail::may_log() || !ensure_configured()) return py::bool_(false);
  return guarded("orchlog.graft", [&] {
    const CallArgs args(checkpoint, positional, named, meta);
    const WritableBuffer buffer(array, dtype);
    py::gil_scoped_release release;
    return orchlog::graft(args.name, buffer.data(), buffer.dtype(), buffer.shape(), args.key_args.key,
                          args.meta_args.items);
  });
}

std::optional<std::string> opt_text(const py::handle& obj, const char* what) {
  if (obj.is_none()) return std::nullopt;
  return text_of(obj, what);
}

// Settings were checked by orchlog.emit.api.configure: a dict of setting -> value
// (`all` given as -1), absent or None meaning "from the env knob".
bool configure_run(const py::dict& settings, const py::handle& config) {
  orchlog::Options o;
  o.producer = "python";
  orchlog::detail::for_each_setting(o, [&settings](const orchlog::schema::KnobSpec& k, auto& member) {
    using T = typename std::decay_t<decltype(member)>::value_type;
    const py::str key = py::str(std::string(k.setting));
    if (!settings.contains(key) || settings[key].is_none()) return;
    const py::handle value = settings[key];
    if constexpr (std::is_same_v<T, std::string>) {
      member = text_of(value, std::string(k.setting).c_str());
    } else if constexpr (std::is_enum_v<T>) {
      const std::string choice = value.cast<std::string>();
      for (std::size_t i = 0; i < k.n_choices; ++i)
        if (k.choices[i] == choice) member = static_cast<T>(i);
    } else {
      member = value.cast<T>();
    }
  });
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

// The key parts a vector input names (absent ones stay none).
py::dict doc_parts(const py::dict& doc) {
  py::dict parts;
  orchlog::Key key;
  orchlog::detail::for_each_key_part(key, [&](std::string_view name, auto&) {
    const py::str k = py::str(std::string(name));
    if (doc.contains(k)) parts[k] = doc[k];
  });
  return parts;
}

// A field of an encoder input from a dict of the vector files' shape (text into `room`).
template <class T>
T input_field(const py::dict& doc, std::string_view name, std::string& room) {
  const py::handle value = doc[py::str(std::string(name))];
  if constexpr (std::is_same_v<T, std::string_view>) {
    room = text_of(value, std::string(name).c_str());
    return room;
  } else if constexpr (std::is_same_v<T, std::optional<std::string_view>>) {
    if (value.is_none()) return std::nullopt;
    room = text_of(value, std::string(name).c_str());
    return std::string_view(room);
  } else {
    return value.cast<T>();
  }
}

// The canonical bytes of one record: `doc` holds what the vector files' inputs
// hold (checkpoint, the run's fields, each key part, seq, dtype, shape, data,
// values, meta).
py::tuple encode_record_bytes(const py::dict& doc) {
  std::deque<std::string> texts;  // stable: the input's views point into it
  orchlog::RecordInput in;
  in.checkpoint = input_field<std::string_view>(doc, "checkpoint", texts.emplace_back());
  orchlog::detail::for_each_run_field(in, [&](std::string_view name, auto& field) {
    field = input_field<std::decay_t<decltype(field)>>(doc, name, texts.emplace_back());
  });
  KeyArgs key_args;
  fill_key(key_args, py::tuple(), doc_parts(doc));
  in.key = key_args.key;
  in.seq = doc["seq"].cast<std::int64_t>();
  orchlog::detail::for_each_call_field(in.call, [&doc, &texts](std::string_view name, auto& field) {
    const py::str key(name.data(), name.size());
    if (!doc.contains(key) || doc[key].is_none()) return;  // absent: what a log call writes
    if constexpr (std::is_same_v<std::decay_t<decltype(field)>, bool>) {
      field = doc[key].cast<bool>();
    } else {
      field = std::string_view(texts.emplace_back(doc[key].cast<std::string>()));
    }
  });
  MetaArgs meta_args;
  fill_meta(doc["meta"], meta_args, "meta");
  const auto dt = orchlog::schema::dtype_from_name(doc["dtype"].cast<std::string>());
  if (!dt) throw py::value_error("unknown dtype " + doc["dtype"].cast<std::string>());
  std::vector<std::int64_t> dims;
  for (const auto& d : doc["shape"]) dims.push_back(d.cast<std::int64_t>());
  const py::buffer data = doc["data"].cast<py::buffer>();
  const py::buffer_info raw = data.request();
  in.tensor = {raw.ptr, *dt, orchlog::Shape(dims)};
  in.values = doc["values"].cast<std::int64_t>();
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

// The canonical bytes of a run header: `doc` holds the language and the header's settings.
py::tuple encode_header_bytes(const py::dict& doc) {
  std::deque<std::string> texts;
  orchlog::HeaderInput h;
  h.language = input_field<std::string_view>(doc, "language", texts.emplace_back());
  MetaArgs config_args;
  orchlog::detail::for_each_header_field(h, [&](std::string_view name, auto& field) {
    using T = std::decay_t<decltype(field)>;
    if constexpr (std::is_same_v<T, std::vector<orchlog::MetaItem>>) {
      fill_meta(doc[py::str(std::string(name))], config_args, "config");
      field = config_args.items;
    } else {
      field = input_field<T>(doc, name, texts.emplace_back());
    }
  });
  const auto encoded = orchlog::encode_header(h);
  return py::make_tuple(py::bytes(encoded.jsonl), py::bytes(encoded.frame));
}

// ------------------------------------------- a tensor for the Parquet route

// Collects the values a visit walks: a stats struct's fields, in schema order.
struct PyValues {
  py::list items;
  void begin_object(std::size_t) {}
  void end_object() {}
  void key(std::string_view) {}
  void f64(double v) { items.append(py::float_(v)); }
  void opt_f64(const std::optional<double>& v) {
    items.append(v ? py::object(py::float_(*v)) : py::object(py::none()));
  }
  void i64(std::int64_t v) { items.append(py::int_(v)); }
};

// A digest field's value for Python, from what the record view holds.
py::object digest_value(const orchlog::schema::Stats& s) {
  PyValues values;
  orchlog::schema::visit_stats<orchlog::schema::Encoding::jsonl>(values, s);
  return py::tuple(values.items);
}
py::object digest_value(std::string_view hex) { return py::str(std::string(hex)); }
py::object digest_value(const orchlog::schema::FloatsView& floats) {
  py::tuple out(floats.size);
  for (std::size_t i = 0; i < floats.size; ++i) out[i] = py::float_(floats.data[i]);
  return out;
}

// A tensor as orchlog.log takes it, digested by the same C++ code as the
// logger's records: what `orchlog.configure(format="parquet")` hands to the
// Parquet writer instead of the reference NumPy stats (about 50 times slower).
class DigestedTensor {
 public:
  DigestedTensor(const py::handle& array, const py::object& dtype) {
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

  // The digest fields by name, as a record carries them: stats as a tuple in
  // schema order, hashes as hex text, floats as a tuple.
  py::dict digest() const {
    orchlog::detail::TensorDigest d;
    {
      py::gil_scoped_release release;
      d = orchlog::detail::digest(tensor_, size_);
    }
    py::dict out;
    orchlog::detail::for_each_digest_field(d, [&out](std::string_view name, const auto& value) {
      out[py::str(std::string(name))] = digest_value(orchlog::detail::digest_view(value));
    });
    return out;
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

// ------------------------------------- many tensors' digests, as columns

// Each digest field's bytes, a row after another: stats as f64 in schema order (NaN where absent), floats as
// f32, hashes as their hex text. What `orchlog validate --verify-hashes` compares with a batch's columns.
struct DigestRows {
  std::vector<std::pair<std::string, std::string>> columns;  // field name, its rows' bytes

  std::string& column(std::string_view name) {
    for (auto& [n, bytes] : columns)
      if (n == name) return bytes;
    return columns.emplace_back(std::string(name), std::string()).second;
  }
  template <class T>
  static void append(std::string& out, T v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  struct StatsRow {
    std::string& out;
    void begin_object(std::size_t) {}
    void end_object() {}
    void key(std::string_view) {}
    void f64(double v) { append(out, v); }
    void opt_f64(const std::optional<double>& v) { append(out, v ? *v : std::numeric_limits<double>::quiet_NaN()); }
    void i64(std::int64_t v) { append(out, static_cast<double>(v)); }
  };
  void put(std::string_view name, const orchlog::schema::Stats& s) {
    StatsRow row{column(name)};
    orchlog::schema::visit_stats<orchlog::schema::Encoding::jsonl>(row, s);
  }
  void put(std::string_view name, const orchlog::schema::FloatsView& floats) {
    std::string& out = column(name);
    for (std::size_t i = 0; i < floats.size; ++i) append(out, static_cast<float>(floats.data[i]));
  }
  void put(std::string_view name, std::string_view hex) { column(name).append(hex); }
};

// The contiguous int64 items of a buffer (a NumPy array's).
const std::int64_t* int64_items(const py::buffer_info& info, std::size_t n, const char* what) {
  if (info.itemsize != 8 || (info.format != "q" && info.format != "l") ||  // NumPy's int64 is "l" on LP64
      static_cast<std::size_t>(info.size) != n || (info.ndim == 1 && info.strides[0] != 8))
    throw py::value_error(std::string(what) + " must be " + std::to_string(n) + " contiguous int64");
  return static_cast<const std::int64_t*>(info.ptr);
}

using Span = std::pair<orchlog::Tensor, orchlog::detail::TensorSize>;

// How many threads digest `bytes`: one for every 4 MiB, no more than the cores this process may run on,
// 8 at most. Each digest is BLAKE3 and the sketch's f64 arithmetic (as an emitter computes it): bound by
// compute, not memory, so a second core halves it (`validate --verify-hashes` of a full-mode trace).
std::size_t digest_threads(std::uint64_t bytes) {
  std::size_t cores = 1;
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof set, &set) == 0) cores = static_cast<std::size_t>(CPU_COUNT(&set));
  const auto by_size = static_cast<std::size_t>(std::min<std::uint64_t>(bytes >> 22, 8));
  return std::max<std::size_t>(1, std::min({cores, std::size_t(8), by_size}));
}

// The digests of `spans`, in their order, cut into runs of about equal bytes, one run per thread (the
// caller's among them). A thread that cannot be started leaves its run to the caller.
std::vector<orchlog::detail::TensorDigest> digest_all(const std::vector<Span>& spans) {
  std::vector<orchlog::detail::TensorDigest> out(spans.size());
  const auto run = [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i) out[i] = orchlog::detail::digest(spans[i].first, spans[i].second);
  };
  std::uint64_t total = 0;
  for (const Span& s : spans) total += s.second.nbytes;
  const std::size_t parts = digest_threads(total);
  std::vector<std::size_t> cut{0};
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < spans.size() && cut.size() < parts; ++i) {
    seen += spans[i].second.nbytes;
    if (seen * parts >= total * cut.size()) cut.push_back(i + 1);
  }
  cut.push_back(spans.size());
  std::vector<std::thread> helpers;
  std::exception_ptr failed;
  std::mutex failed_lock;
  for (std::size_t k = 1; k + 1 < cut.size(); ++k) {
    const std::size_t from = cut[k], to = cut[k + 1];
    try {
      helpers.emplace_back([&, from, to] {
        try {
          run(from, to);
        } catch (...) {
          const std::lock_guard<std::mutex> hold(failed_lock);
          failed = std::current_exception();
        }
      });
    } catch (const std::system_error&) {
      run(from, to);
    }
  }
  try {
    run(cut[0], cut[1]);
  } catch (...) {
    for (std::thread& t : helpers) t.join();
    throw;
  }
  for (std::thread& t : helpers) t.join();
  if (failed) std::rethrow_exception(failed);
  return out;
}

// The digests of many flat tensors, each `lengths[i]` bytes of dtype `dtypes[i]` at `starts[i]` in
// `buffers[i]` (the rows of a read window share it): {field: bytes of its rows}, as DigestRows lays them out.
py::dict digest_spans(const py::list& buffers, const py::buffer& starts, const py::buffer& lengths,
                      const py::list& dtypes) {
  const std::size_t n = buffers.size();
  if (dtypes.size() != n) throw py::value_error("digest_spans needs a dtype per buffer");
  const py::buffer_info start_info = starts.request(), length_info = lengths.request();
  const std::int64_t* start = int64_items(start_info, n, "starts");
  const std::int64_t* length = int64_items(length_info, n, "lengths");
  std::vector<py::buffer_info> held;  // each distinct buffer's view, held until the digests are done
  const PyObject* last = nullptr;
  std::vector<Span> tensors;
  tensors.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const py::handle buffer = buffers[i];
    if (buffer.ptr() != last) held.push_back(py::reinterpret_borrow<py::buffer>(buffer).request()), last = buffer.ptr();
    const auto dtype = orchlog::schema::dtype_from_name(py::str(dtypes[i]).cast<std::string>());
    if (!dtype) throw py::value_error("unknown dtype '" + py::str(dtypes[i]).cast<std::string>() + "'");
    const std::int64_t size = static_cast<std::int64_t>(orchlog::schema::dtype_size(*dtype));
    const std::int64_t have = held.back().size * held.back().itemsize;
    if (start[i] < 0 || length[i] < 0 || start[i] > have || length[i] > have - start[i] || length[i] % size)
      throw py::value_error("span " + std::to_string(i) + " is not whole elements inside its buffer");
    const std::int64_t numel = length[i] / size;
    const orchlog::Tensor tensor{static_cast<const char*>(held.back().ptr) + start[i], *dtype, {numel}};
    std::string error;
    const auto measured = orchlog::detail::measure(tensor, error);
    if (!measured) throw py::value_error("span " + std::to_string(i) + ": " + error);
    tensors.emplace_back(tensor, *measured);
  }
  DigestRows rows;
  {
    py::gil_scoped_release release;
    for (const orchlog::detail::TensorDigest& d : digest_all(tensors)) {
      orchlog::detail::for_each_digest_field(d, [&rows](std::string_view name, const auto& value) {
        rows.put(name, orchlog::detail::digest_view(value));
      });
    }
  }
  py::dict out;
  for (const auto& [name, bytes] : rows.columns) out[py::str(name)] = py::bytes(bytes);
  return out;
}

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
  m.def("log", &log_record, arg("checkpoint"), arg("array"), arg("positional") = py::tuple(), arg("named") = py::none(),
        arg("meta") = py::none(), arg("dtype") = py::none(),
        "Write one record (see orchlog.log): the key's positional parts as a tuple, the others by name in a dict. "
        "Returns whether it was written. Never raises.");
  m.def("graft", &graft_record, arg("checkpoint"), arg("array"), arg("positional") = py::tuple(),
        arg("named") = py::none(), arg("meta") = py::none(), arg("dtype") = py::none(),
        "Overwrite a writable array from the reference run when ORCH_GRAFT_SELECT accepts its key, then log it "
        "(see orchlog.graft). Returns whether it was overwritten. Never raises.");
  m.def("configure", &configure_run, arg("settings"), arg("config") = py::none(),
        "Start a new run: settings by name (absent or None: the env knob). Returns whether logging is on.");
  // The logger's state byte, read where it lies: orchlog.log's off path looks at it instead of calling in.
  static_assert(sizeof(orchlog::detail::g_state) == 1, "the state is one byte");
  m.def(
      "state_view",
      [] {
        // Read-only: Python never writes it (pybind11 takes a non-const pointer either way).
        return py::memoryview::from_memory(static_cast<void*>(&orchlog::detail::g_state), 1, true);
      },
      "A read-only view of the logger's one-byte state; STATE_OFF while logging is off.");
  m.attr("STATE_OFF") = static_cast<int>(orchlog::detail::kOff);
  m.def("flush", [] { return orchlog::flush(); }, "Ask the kernel to put written records on disk.");
  m.def("close", [] { orchlog::close(); }, "End the run; logging stays off until configure().");
  m.def("status", &status_dict, "enabled, records, errors, path, binary_path.");
  m.def("encode_record", &encode_record_bytes, arg("fields"),
        "The canonical (jsonl, frame) bytes of one record, as the logger writes them; `fields` as a vector's input "
        "(with `data` as bytes).");
  m.def("encode_header", &encode_header_bytes, arg("fields"),
        "The canonical (jsonl, frame) bytes of a run header; `fields`: the language and the header's settings.");
  py::class_<DigestedTensor>(m, "DigestedTensor",
                             "A tensor as orchlog.log takes it (ValueError when it cannot be logged), digested "
                             "by the C++ core: dtype, shape, nbytes, digest(), copy_into(buffer).")
      .def(py::init<const py::handle&, const py::object&>(), arg("array"), arg("dtype") = py::none(),
           py::keep_alive<1, 2>())
      .def_property_readonly("dtype", &DigestedTensor::dtype)
      .def_property_readonly("shape", &DigestedTensor::shape)
      .def_property_readonly("nbytes", &DigestedTensor::nbytes)
      .def("digest", &DigestedTensor::digest, "The digest fields by name (stats as a tuple in schema order).")
      .def("copy_into", &DigestedTensor::copy_into, arg("out"), "Copy the C-order little-endian bytes into out.");
  m.def("digest_spans", &digest_spans, arg("buffers"), arg("starts"), arg("lengths"), arg("dtypes"),
        "The digests of many flat tensors, lengths[i] bytes of dtypes[i] at starts[i] (int64 arrays) in buffers[i]: "
        "{field: bytes}, a row after another (stats as f64, NaN where absent; floats as f32; hashes as hex text).");
  m.def("blake3_hex", &blake3_hex, arg("data"), arg("path") = py::none(),
        "BLAKE3 of a contiguous buffer; path forces a kernel (portable, sse41, avx2, avx512).");
  m.def("blake3_paths", &blake3_paths, "The BLAKE3 kernels this CPU runs.");
  m.def(
      "kernel_paths",
      [] {
        using orchlog::detail::SketchPath;
        const SketchPath sketch = orchlog::detail::sketch_best_path();
        py::dict out;
        out["blake3"] = std::string(orchlog::blake3_path_name(orchlog::blake3_path()));
        out["sketch"] = sketch == SketchPath::avx512 ? "avx512" : sketch == SketchPath::avx2 ? "avx2" : "portable";
        out["crc32c"] = orchlog::detail::crc32c_hardware() ? "sse42" : "portable";
        return out;
      },
      "The kernels the emitter runs: the CPU's widest within ORCHLOG_ISA (ORCHLOG_BLAKE3 forces BLAKE3's).");
}
