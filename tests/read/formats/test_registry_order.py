"""Formats are asked in priority order, their modules imported only as the order reaches them: the table of
modules states each one's lowest priority truly, and opening an orchlog trace imports no other tool's
reader."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict

import numpy as np
import pytest

from orchlog.read import formats
from tests.tracegen import emit, record


def test_each_module_is_listed_with_the_lowest_priority_it_registers_in_order():
    lowest: dict[str, int] = defaultdict(lambda: 10**9)
    for fmt in formats.formats():
        module = fmt.sniff.__module__
        lowest[module] = min(lowest[module], fmt.priority)
    listed = dict((module, bound) for bound, module in formats._MODULES)
    assert listed == dict(lowest)
    bounds = [bound for bound, _ in formats._MODULES]
    assert bounds == sorted(bounds)


def test_the_lazy_order_is_the_order_of_every_format_at_once():
    every = [f.name for f in formats.formats()]
    assert [f.name for f in formats._by_priority()] == every


@pytest.mark.parametrize(
    ("name", "mode", "fmt"), [("a.bin", "full", "orchlog-binary"), ("a.jsonl", "summary", "orchlog-jsonl")]
)
def test_opening_an_orchlog_trace_imports_no_other_tools_reader(tmp_path, name, mode, fmt):
    path = emit(tmp_path / name, [record("x", np.ones(4, np.float32))], mode=mode)
    probe = (
        "import json, sys\nimport orchlog\n"
        f"assert orchlog.open_trace({str(path)!r}).format == {fmt!r}\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('orchlog.read.formats.'))))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    loaded = set(json.loads(out.strip().splitlines()[-1]))
    others = {module for _, module in formats._MODULES} - {
        "orchlog.read.formats.parquet",
        "orchlog.read.formats.orchlog_frames",
        "orchlog.read.formats.orchlog_jsonl",
    }
    assert not loaded & others, loaded & others
