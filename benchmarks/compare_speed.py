#!/usr/bin/env python3
"""Compare's speed as ratios to baselines measured in the same run: medians of interleaved runs, wall and CPU time.

    .venv/bin/python benchmarks/compare_speed.py rows --records 200000     # full-mode hidden-state rows vs cat, NumPy
    .venv/bin/python benchmarks/compare_speed.py start                     # --help and a 1,000-record compare vs python -c pass
    .venv/bin/python benchmarks/compare_speed.py p99 --mib 4               # exact p99 vs reading both arrays once
    .venv/bin/python benchmarks/compare_speed.py report --records 2000000  # --format html vs text
    .venv/bin/python benchmarks/compare_speed.py validate --records 50000  # validate (--verify-hashes) vs cat, vs record by record
    .venv/bin/python benchmarks/compare_speed.py all --runs 5 --json out.json
    .venv/bin/python benchmarks/compare_speed.py rows --isa avx512,avx2    # and as a machine without AVX-512 runs
    .venv/bin/python benchmarks/compare_speed.py rows --page-cache written # only the traces as the emitter wrote them

Every case is a whole process (what a user waits for). The cases of one
figure run in turn, --runs times (ABAB..., not AA..BB..), so that a burst of
load on the shared machine hits both sides; each side's median is kept, and
its CPU time (user + system of the process and its threads), which load
disturbs far less than wall time. Traces are written once under --work; `rows`
keeps a copy of each beside it (`*.copied.bin`) for the copied page-cache state.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.compare_measure import ISA_CAPS, ROOT, machine, memory_touch_gbps

PY = sys.executable
ORCHLOG = [PY, "-m", "orchlog"]


# Each case: a command, or (command, extra environment).
Case = list[str] | tuple[list[str], dict[str, str]]


def _run(case: Case) -> tuple[float, float]:
    """Wall and CPU seconds of one process (its children's rusage, taken around it)."""
    cmd, extra = case if isinstance(case, tuple) else (case, {})
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env={**os.environ, **extra})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def interleaved(cases: Mapping[str, Case], runs: int) -> dict[str, dict[str, Any]]:
    """Median wall and CPU time of each command, the commands run in turn `runs` times (each turn's wall
    times kept too, in `turns_wall_s`, for the spread of a ratio)."""
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, cmd in cases.items():
            times[name].append(_run(cmd))
    return {
        name: {
            "wall_s": statistics.median(w for w, _ in t),
            "cpu_s": statistics.median(c for _, c in t),
            "turns_wall_s": [w for w, _ in t],
        }
        for name, t in times.items()
    }


def _ratios(result: dict[str, Any], ours: str, base: str) -> dict[str, Any]:
    """The ratio of the medians, and the quartiles of the ratios within each turn: how far a single figure of
    this machine moves from minute to minute (the load of other sessions reaches both sides of one turn)."""
    o, b = result[ours], result[base]
    turns = [x / y for x, y in zip(o["turns_wall_s"], b["turns_wall_s"])]
    spread = statistics.quantiles(turns, n=4) if len(turns) > 1 else turns * 3
    return {
        "wall_ratio": o["wall_s"] / b["wall_s"],
        "cpu_ratio": o["cpu_s"] / max(b["cpu_s"], 1e-9),
        "wall_ratio_per_turn_q1_q3": [spread[0], spread[2]],
    }


NUMPY_ROWS = """
import sys, numpy as np
# The plain script: the bytes of both traces read as raw f32 rows of 896 (the same amount of floats as
# the traces hold), max|a-b| and cosine per row.
a, b = (np.fromfile(p, dtype=np.uint8) for p in sys.argv[1:3])
n = min(a.size, b.size) // 3584 * 3584
a, b = a[:n].view(np.float32).reshape(-1, 896), b[:n].view(np.float32).reshape(-1, 896)
d = np.abs(a - b).max(axis=1)
cos = (a * b).sum(axis=1) / np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))
print(d.max(), cos.min())
"""


def _byte_compiled() -> None:
    """An installed wheel carries byte-compiled modules; a checkout under PYTHONDONTWRITEBYTECODE would
    compile every changed module at every start, which is not what users wait for."""
    subprocess.run([PY, "-m", "compileall", "-q", str(ROOT / "orchlog")], check=True, stdout=subprocess.DEVNULL)


def _per_isa(name: str, cmd: list[str], isas: list[str]) -> dict[str, Case]:
    """The command once per vector cap (ISA_CAPS): `name` for the first, `name@isa` for the others."""
    return {(name if i == 0 else f"{name}@{isa}"): (cmd, ISA_CAPS[isa]) for i, isa in enumerate(isas)}


# How a trace's bytes lie in the page cache changes what `cat` costs by a factor of three, and orchlog's
# time far less. Written record by record (what a compare right after the engine's run reads), the cache
# holds the file in 4 KiB pages; written in large pieces (a trace copied in, or read back from disk), the
# kernel may hold it in large folios (ext4 since Linux 6.16, XFS, tmpfs), each read from it a fraction of
# the cost. Both states are measured; each says how fast a plain read of it ran.
PAGE_CACHE_STATES = ("written", "copied")
_PIECE = 16 << 20


def _copied(src: Path) -> Path:
    """A copy of src written in 16 MiB pieces, then read once (so that it is in the page cache)."""
    dst = src.with_name(f"{src.stem}.copied{src.suffix}")
    if not dst.exists() or dst.stat().st_size != src.stat().st_size:
        with src.open("rb") as fin, dst.open("wb") as fout:
            while piece := fin.read(_PIECE):
                fout.write(piece)
    _read_gbps(dst)
    return dst


def _as_written(path: Path, records: int) -> None:
    """The trace written again as the emitter writes it, a record's bytes at a time (from its copy, the same
    bytes), then synced: the page cache then holds it as it holds a trace an engine just wrote, whatever
    became of its pages since (evicted and read back from disk, they would lie in large folios, as in the
    copied state: the 200,000-row pair read 9.3 GB/s as written, 13.1 GB/s a day of other work later)."""
    source = _copied(path)
    piece = max(path.stat().st_size // records, 1)
    fresh = path.with_name(f"{path.name}.rewriting")  # renamed over the trace once whole, never half written
    with source.open("rb") as fin, fresh.open("wb", buffering=0) as fout:
        while chunk := fin.read(piece):
            fout.write(chunk)
        os.fsync(fout.fileno())
    os.replace(fresh, path)


def _read_gbps(path: Path) -> float:
    """GB/s of reading the file from the page cache in 16 MiB preads (the best of three passes)."""
    buf = bytearray(_PIECE)
    best = float("inf")
    with path.open("rb", buffering=0) as f:
        for _ in range(3):
            start, offset = time.perf_counter(), 0
            while got := os.preadv(f.fileno(), [buf], offset):
                offset += got
            best = min(best, time.perf_counter() - start)
    return path.stat().st_size / best / 1e9


def rows(work: Path, records: int, runs: int, isas: list[str], states: list[str]) -> dict[str, Any]:
    from benchmarks.compare_traces import write_rows_pair

    written = work / f"rows_{records}_a.bin", work / f"rows_{records}_b.bin"
    if not all(p.exists() for p in written):
        write_rows_pair(*written, records)
    script = work / "numpy_rows.py"
    script.write_text(NUMPY_ROWS)
    _byte_compiled()
    out: dict[str, Any] = {"records": records, "trace_bytes": sum(p.stat().st_size for p in written)}
    for state in states:
        if state == "written":
            for path in written:
                _as_written(path, records)
        a, b = written if state == "written" else (_copied(written[0]), _copied(written[1]))
        cases = {
            **_per_isa("orchlog", [*ORCHLOG, "compare", str(a), str(b), "-q"], isas),
            "cat": ["sh", "-c", f"cat {a} {b} > /dev/null"],
            "numpy": ([PY, str(script), str(a), str(b)], ISA_CAPS[isas[0]]),
            # The floor of any Python tool: the interpreter starting and importing NumPy, reading nothing.
            "import_numpy": [PY, "-c", "import numpy"],
        }
        res = interleaved(cases, runs)
        out[state] = {
            "page_cache_read_gbps": round(min(_read_gbps(a), _read_gbps(b)), 2),
            **res,
            "orchlog_vs_cat": _ratios(res, "orchlog", "cat"),
            "orchlog_vs_numpy": _ratios(res, "orchlog", "numpy"),
            "import_numpy_vs_cat": _ratios(res, "import_numpy", "cat"),
            **{f"orchlog@{isa}_vs_cat": _ratios(res, f"orchlog@{isa}", "cat") for isa in isas[1:]},
        }
    return out


def start(work: Path, runs: int, isas: list[str]) -> dict[str, Any]:
    from benchmarks.compare_traces import write_jsonl_pair

    a, b = work / "jsonl_1000_a.jsonl", work / "jsonl_1000_b.jsonl"
    if not (a.exists() and b.exists()):
        write_jsonl_pair(a, b, 1000)
    _byte_compiled()
    cases = {
        "python": [PY, "-c", "pass"],
        "help": [*ORCHLOG, "compare", "--help"],
        **_per_isa("compare_1000", [*ORCHLOG, "compare", str(a), str(b), "-q"], isas),
    }
    res = interleaved(cases, runs)
    return {**res, "help_vs_python": _ratios(res, "help", "python")}


P99 = """
import sys, time, numpy as np
from orchlog import kernels
n = int(sys.argv[1]) * (1 << 20) // 4
rng = np.random.default_rng(0)
a = rng.standard_normal(n, dtype=np.float32); b = (a + rng.standard_normal(n, dtype=np.float32) * 1e-3).astype(np.float32)
def best(fn, k=int(sys.argv[2])):
    t = []
    for _ in range(k):
        s = time.perf_counter(); fn(); t.append(time.perf_counter() - s)
    return float(np.median(t))
floor = best(lambda: (a.max(), b.max()))
sums = best(lambda: kernels.diff_sums(a, b))
p99 = best(lambda: kernels.abs_diff_quantile(a, b, 0.99))
print(floor, sums, p99)
"""


def p99(mib: int, runs: int) -> dict[str, Any]:
    out = subprocess.run([PY, "-c", P99, str(mib), str(max(runs, 5) * 4)], capture_output=True, text=True, check=True)
    floor, sums, q = (float(x) for x in out.stdout.split())
    return {
        "array_mib": mib,
        "floor_s": floor,
        "sums_s": sums,
        "p99_s": q,
        "metrics_and_p99_vs_floor": floor / (sums + q),
        "p99_vs_floor": floor / q,
    }


def report(work: Path, records: int, runs: int) -> dict[str, Any]:
    from benchmarks.compare_traces import write_jsonl_pair

    a, b = work / f"jsonl_{records}_a.jsonl", work / f"jsonl_{records}_b.jsonl"
    if not (a.exists() and b.exists()):
        write_jsonl_pair(a, b, records)
    out = work / "report.out"
    _byte_compiled()
    cases = {
        fmt: [*ORCHLOG, "compare", str(a), str(b), "-q", "--format", fmt, "-o", str(out)] for fmt in ("text", "html")
    }
    res = interleaved(cases, runs)
    return {"records": records, **res, "html_vs_text": _ratios(res, "html", "text")}


# `orchlog validate` as it was before it checked whole batches: every record made and checked on its own.
RECORD_BY_RECORD = (
    "import sys; from orchlog.read.trace import Trace; Trace.runs = lambda self, tensors=False: iter(self); "
    "from orchlog.cli import main; sys.exit(main(sys.argv[1:]))"
)


def _write_every_value(path: Path, records: int) -> None:
    """JSONL with every value (`ORCH_LOG_VALUES=all`) of `records` tensors of 64 f32, as the C++ core writes it."""
    import numpy as np

    import orchlog

    rng = np.random.default_rng(0)
    rows = rng.standard_normal((1024, 64)).astype(np.float32)
    orchlog.configure(path=str(path), mode="summary", values="all")
    try:
        for i in range(records):
            orchlog.log("attn_out", rows[i % len(rows)], token_idx=i // 32, layer=i % 32)
    finally:
        orchlog.close()


def validate(work: Path, records: int, runs: int) -> dict[str, Any]:
    """`orchlog validate`, with and without `--verify-hashes`, of a full-mode binary stream, the same packed into
    Parquet, a JSONL summary trace and JSONL with every value of `records` records, against `cat` of the same file and against checking
    them record by record (the way it was, same code otherwise)."""
    from benchmarks.compare_traces import write_jsonl_pair, write_rows_pair
    from orchlog.parquet import pack

    binary = work / f"rows_{records}_a.bin", work / f"rows_{records}_b.bin"
    if not all(p.exists() for p in binary):
        write_rows_pair(*binary, records)
    parquet = work / f"rows_{records}_a.parquet"
    if not parquet.exists():
        pack([binary[0]], parquet)
    jsonl = work / f"jsonl_{records}_a.jsonl", work / f"jsonl_{records}_b.jsonl"
    if not all(p.exists() for p in jsonl):
        write_jsonl_pair(*jsonl, records)
    every_value = work / f"jsonl_every_value_{records}.jsonl"
    if not every_value.exists():
        _write_every_value(every_value, records)
    _byte_compiled()
    out: dict[str, Any] = {"records": records}
    kinds = (("binary", binary[0]), ("parquet", parquet), ("jsonl", jsonl[0]), ("jsonl_every_value", every_value))
    for kind, path in kinds:
        cases: dict[str, Case] = {
            "validate": [*ORCHLOG, "validate", str(path), "--quiet"],
            "record_by_record": [PY, "-c", RECORD_BY_RECORD, "validate", str(path), "--quiet"],
            "verify": [*ORCHLOG, "validate", str(path), "--verify-hashes", "--quiet"],
            "verify_record_by_record": [PY, "-c", RECORD_BY_RECORD, "validate", str(path), "--verify-hashes", "-q"],
            "cat": ["sh", "-c", f"cat {path} > /dev/null"],
        }
        res = interleaved(cases, runs)
        out[kind] = {
            "trace_bytes": path.stat().st_size,
            **res,
            "validate_vs_cat": _ratios(res, "validate", "cat"),
            "validate_vs_record_by_record": _ratios(res, "validate", "record_by_record"),
            "verify_vs_cat": _ratios(res, "verify", "cat"),
            "verify_vs_record_by_record": _ratios(res, "verify", "verify_record_by_record"),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("which", choices=("rows", "start", "p99", "report", "validate", "all"))
    p.add_argument("--records", type=int, help="rows, validate: 200,000; report: 2,000,000")
    p.add_argument("--mib", type=int, default=4, help="p99: MiB per array (4)")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--work", type=Path, default=ROOT / ".cache" / "bench")
    p.add_argument("--json", type=Path, help="also write the figures here")
    p.add_argument(
        "--isa",
        default="avx512",
        help="comma-separated vector caps (avx512, avx2, baseline: orchlog's, NumPy's and glibc's kernels capped as on "
        "a machine without the wider ones); rows and start run orchlog once per cap in the same turns",
    )
    p.add_argument(
        "--page-cache",
        default=",".join(PAGE_CACHE_STATES),
        help="rows: the page-cache states to measure, comma-separated: written (the traces as the emitter wrote "
        "them, record by record), copied (a copy written in 16 MiB pieces: as a trace copied in or read back "
        "from disk lies in the cache where the kernel uses large folios)",
    )
    args = p.parse_args(argv)
    isas = args.isa.split(",")
    states = args.page_cache.split(",")
    if not all(state in PAGE_CACHE_STATES for state in states):
        p.error(f"--page-cache takes {', '.join(PAGE_CACHE_STATES)}")
    if not all(isa in ISA_CAPS for isa in isas):
        p.error(f"--isa takes {', '.join(ISA_CAPS)}")
    args.work.mkdir(parents=True, exist_ok=True)
    out: dict[str, Any] = {
        "machine": machine(),
        "memory": memory_touch_gbps(),
        "uptime_at_start": subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(),
    }
    print(f"machine: {out['machine']}; memory {out['memory']}; {out['uptime_at_start']}")
    jobs: dict[str, Callable[[], dict[str, Any]]] = {
        "start": lambda: start(args.work, args.runs, isas),
        "p99": lambda: p99(args.mib, args.runs),
        "rows": lambda: rows(args.work, args.records or 200_000, args.runs, isas, states),
        "report": lambda: report(args.work, args.records or 2_000_000, args.runs),
        "validate": lambda: validate(args.work, args.records or 200_000, args.runs),
    }
    for name, job in jobs.items():
        if args.which in (name, "all"):
            out[name] = job()
            print(f"[{name}]", json.dumps(out[name], indent=1))
    out["uptime_at_end"] = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(out["uptime_at_end"])
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
