"""The pybind11 extension is built through CMake and carries the generated tables."""

from __future__ import annotations

from orchlog import _native, schema_gen


def test_native_module_reports_the_schema_version():
    assert _native.SCHEMA_VERSION == schema_gen.SCHEMA_VERSION
    assert _native.LIBRARY_VERSION == schema_gen.LIBRARY_VERSION


def test_native_dtype_table_matches_python():
    for alias, name in schema_gen.DTYPE_ALIASES.items():
        assert _native.dtype_size(alias) == schema_gen.DTYPE_SIZES[name]
    assert _native.dtype_size("q4_0") is None
