"""Full tensors end to end: GB/s comparing two full-tensor traces on disk, against reading the same files.

The files are read once before timing, so both sides see them in the page
cache. Baselines, in the same run and on the same bytes:
  pyarrow    pyarrow.OSFile(path).read() of each whole file ("reading with pyarrow alone")
  python     open(path, "rb").read() of each whole file
orchlog runs the whole `compare` (frames decoded, tensors loaded lazily one
pair at a time, every metric including the exact p99, grading, report).

FORMATS maps a format name to (writer, baseline readers). The binary stream
is here now; a Parquet entry (written by the Parquet packer, read by
pyarrow.parquet.read_table as its baseline) slots in beside it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pyarrow as pa

from benchmarks.compare_traces import write_frames_pair
from benchmarks.compare_measure import best_of, in_child


def _read_all_pyarrow(path: Path) -> int:
    with pa.OSFile(str(path), "r") as f:
        return len(f.read())


def _read_all_python(path: Path) -> int:
    with open(path, "rb") as f:
        return len(f.read())


FORMATS: dict[str, tuple[Callable[[Path, Path, int, int], None], dict[str, Callable[[Path], int]]]] = {
    "binary-stream": (lambda a, b, records, numel: write_frames_pair(a, b, records, numel),
                      {"pyarrow": _read_all_pyarrow, "python": _read_all_python}),
}

ORCHLOG = """
from orchlog.compare import compare
report = compare(%(a)r, %(b)r)
result = report.findings.pairs
"""


def run(work: Path, records: int, mib_per_tensor: int, repeat: int, fmt: str = "binary-stream") -> dict:
    writer, baselines = FORMATS[fmt]
    numel = mib_per_tensor * (1 << 20) // 4
    a, b = work / f"e2e_{fmt}_{records}x{mib_per_tensor}_a", work / f"e2e_{fmt}_{records}x{mib_per_tensor}_b"
    if not (a.exists() and b.exists()):
        writer(a, b, records, numel)
    size = a.stat().st_size + b.stat().st_size
    out = {"format": fmt, "records": records, "tensor_mib": mib_per_tensor, "trace_bytes": size}
    for name, read in baselines.items():
        read(a), read(b)  # warm the page cache
        seconds = best_of(lambda: (read(a), read(b)), repeat)
        out[f"{name}_read_gb_s"] = size / seconds / 1e9
    ours = in_child(ORCHLOG % {"a": str(a), "b": str(b)}, repeat)
    assert ours["result"] == records
    out["orchlog_gb_s"] = size / ours["seconds"] / 1e9
    out["orchlog_peak_rss"] = ours["peak_rss"]
    for name in baselines:
        out[f"orchlog_vs_{name}"] = out["orchlog_gb_s"] / out[f"{name}_read_gb_s"]
    return out
