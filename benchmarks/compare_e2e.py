"""Full tensors end to end: GB/s comparing two full-tensor traces on disk, against reading the same files.

The files are read once before timing, so every side sees them in the page
cache. Baselines, in the same run and on the same bytes:
  pyarrow    binary stream: pyarrow.OSFile(path).read() of each whole file;
             Parquet: pyarrow.parquet.read_table(path) of each file (every
             column, decompressed): "reading with pyarrow alone"
  python     open(path, "rb").read() of each whole file (bytes, not tensors)
orchlog runs the whole `compare` (records decoded, tensors loaded lazily one
pair at a time, every metric including the exact p99, grading, report).

Every side runs in a fresh Python, in turn with the others, keeping its best
run: a reader warmed up by earlier calls in the same process (pyarrow's
memory pool, already faulted-in pages) would otherwise look up to twice as
fast as one that starts cold. CPU time (all threads) is reported beside wall
time, because pyarrow reads with several threads and on a machine whose other
core is busy the wall-clock ratio moves while the CPU ratio hardly does.

FORMATS maps a format name to (writer, baseline code). GB/s count the files'
bytes on disk; for Parquet (zstd) they are about 0.91 of the tensors'.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.compare_measure import in_child
from benchmarks.compare_traces import write_frames_pair, write_parquet_pair

# Baselines as code for in_child: `paths` holds the two trace files; `result` what was read.
_PYARROW_FILE = "import pyarrow as pa\nresult = sum(len(pa.OSFile(p, 'r').read()) for p in paths)"
_PYTHON_FILE = "result = sum(len(open(p, 'rb').read()) for p in paths)"
_PYARROW_TABLE = "import pyarrow.parquet as pq\nresult = sum(pq.read_table(p).nbytes for p in paths)"

FORMATS: dict[str, tuple[Callable[[Path, Path, int, int], None], dict[str, str]]] = {
    "binary-stream": (write_frames_pair, {"pyarrow": _PYARROW_FILE, "python": _PYTHON_FILE}),
    "parquet": (write_parquet_pair, {"pyarrow": _PYARROW_TABLE, "python": _PYTHON_FILE}),
}

ORCHLOG = """
from orchlog.compare import CompareOptions, compare
# The walk alone: the diagnosis of the first divergence is benchmarks/diagnose.py's.
report = compare(*paths, CompareOptions(diagnose=False))
result = report.findings.pairs
"""


def run(work: Path, records: int, mib_per_tensor: int, repeat: int, fmt: str = "binary-stream") -> dict[str, Any]:
    writer, baselines = FORMATS[fmt]
    numel = mib_per_tensor * (1 << 20) // 4
    a, b = work / f"e2e_{fmt}_{records}x{mib_per_tensor}_a", work / f"e2e_{fmt}_{records}x{mib_per_tensor}_b"
    if not (a.exists() and b.exists()):
        writer(a, b, records, numel)
    size = a.stat().st_size + b.stat().st_size
    paths = f"paths = ({str(a)!r}, {str(b)!r})\n"
    sides = {**{name: paths + code for name, code in baselines.items()}, "orchlog": paths + ORCHLOG}
    in_child(sides["python"])  # the page cache
    best: dict[str, dict[str, Any]] = {}
    for _ in range(repeat):
        for name, code in sides.items():
            run_once = in_child(code)
            if name not in best or run_once["seconds"] < best[name]["seconds"]:
                best[name] = {**run_once, "peak_rss": max(run_once["peak_rss"], best.get(name, {}).get("peak_rss", 0))}
    assert best["orchlog"]["result"] == records
    ours = best["orchlog"]
    out = {
        "format": fmt,
        "records": records,
        "tensor_mib": mib_per_tensor,
        "trace_bytes": size,
        "orchlog_gb_s": size / ours["seconds"] / 1e9,
        "orchlog_cpu_s": ours["cpu_seconds"],
        "orchlog_peak_rss": ours["peak_rss"],
    }
    for name in baselines:
        out[f"{name}_read_gb_s"] = size / best[name]["seconds"] / 1e9
        out[f"{name}_cpu_s"] = best[name]["cpu_seconds"]
        out[f"orchlog_vs_{name}"] = best[name]["seconds"] / ours["seconds"]
        out[f"orchlog_vs_{name}_cpu"] = best[name]["cpu_seconds"] / ours["cpu_seconds"]
    return out
