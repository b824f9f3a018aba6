// The Python emitter's native core: pybind11 bindings over the C++ logger.
#include <pybind11/pybind11.h>

#include "orchlog/schema_gen.hpp"

namespace py = pybind11;

void bind_emitter(py::module_& m);  // bindings.cpp

PYBIND11_MODULE(_native, m) {
  m.doc() = "orchlog native core (C++ logger bound with pybind11)";
  m.attr("SCHEMA_VERSION") = orchlog::schema::kSchemaVersion;
  m.attr("LIBRARY_VERSION") = std::string(orchlog::schema::kLibraryVersion);
  m.def(
      "dtype_size",
      [](const std::string& name) -> py::object {
        auto d = orchlog::schema::dtype_from_name(name);
        if (!d) return py::none();
        return py::int_(orchlog::schema::dtype_size(*d));
      },
      "Element size in bytes of a dtype name or alias, or None if unknown.");
  bind_emitter(m);
}
