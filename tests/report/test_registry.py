"""orchlog.report names its renderers: every name must resolve, and none is imported before it is used."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import orchlog.report as report


@pytest.mark.parametrize("kind", sorted(report._RENDERERS))
def test_every_result_class_and_renderer_named_exists(kind):
    module, _, name = kind.rpartition(".")
    result_class = getattr(importlib.import_module(module), name)
    assert isinstance(result_class, type)
    for fmt, renderer in report._RENDERERS[kind].items():
        assert fmt in report.FORMATS
        assert callable(report._renderer(renderer)), renderer


def test_a_subclass_renders_as_its_base():
    from orchlog.compare.per_token import PerTokenReport

    class Mine(PerTokenReport):
        pass

    assert report._renderers(Mine.__new__(Mine)) is report._RENDERERS["orchlog.compare.per_token.PerTokenReport"]


def test_an_unknown_result_is_refused():
    with pytest.raises(TypeError, match="renders no int"):
        report.render(3)


def test_importing_the_package_loads_no_renderer():
    code = "import sys, orchlog.report; print(sorted(m for m in sys.modules if m.startswith(('orchlog.report.', 'orchlog.guardrail', 'orchlog.weights'))))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"
