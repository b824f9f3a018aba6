"""Timing and memory helpers for the benchmarks: best-of-N wall time, peak RSS of a child process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def best_of(fn: Callable[[], object], repeat: int) -> float:
    """The fastest of `repeat` runs, in seconds: the run least disturbed by whatever else the machine does."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def best_of_each(fns: list[Callable[[], object]], repeat: int) -> list[float]:
    """The fastest of `repeat` runs of each function, the functions taking turns: what disturbs one
    run (another machine's memory traffic, a busy core) falls on all of them alike."""
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def in_child(code: str, repeat: int = 1) -> dict[str, Any]:
    """Run Python `code` in a fresh interpreter `repeat` times; the best wall time (with the CPU time
    of that run, all threads) and the peak RSS.

    The code must leave its result in a variable named `result` (any JSON-able
    value); timing covers the whole of `code`, imports excluded.
    """
    wrapper = (
        "import json, sys, time\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "import numpy, orchlog, orchlog.compare\n"
        "start, cpu = time.perf_counter(), time.process_time()\n"
        f"{code}\n"
        "elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu\n"
        # VmHWM, not ru_maxrss: after fork and exec, ru_maxrss still counts the parent's pages.
        "peak = next(int(l.split()[1]) * 1024 for l in open('/proc/self/status') if l.startswith('VmHWM'))\n"
        "print(json.dumps({'seconds': elapsed, 'cpu_seconds': cpu, 'peak_rss': peak, 'result': result}))\n"
    )
    runs = []
    for _ in range(repeat):
        proc = subprocess.run([sys.executable, "-c", wrapper], capture_output=True, text=True, env={**os.environ})
        if proc.returncode != 0:
            raise RuntimeError(f"benchmark child failed:\n{proc.stderr}")
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    best = min(runs, key=lambda r: r["seconds"])
    return {**best, "peak_rss": max(r["peak_rss"] for r in runs)}


# The CPU flags that decide which kernels run (orchlog's, NumPy's, glibc's memcpy), widest last.
VECTOR_FLAGS = ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vbmi2")


def cpu_flags() -> str:
    """This machine's vector flags (/proc/cpuinfo), and the caps the environment puts on them."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        flags = []
    have = " ".join(f for f in VECTOR_FLAGS if f in flags) or "none known"
    caps = [
        f"{k}={os.environ[k]}" for k in ("ORCHLOG_ISA", "NPY_DISABLE_CPU_FEATURES", "GLIBC_TUNABLES") if k in os.environ
    ]
    return f"flags {have}" + (f" (capped: {'; '.join(caps)})" if caps else "")


def machine() -> str:
    """The CPU's model, core count and vector flags, as every figure in the docs states them."""
    model = "unknown CPU"
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, {cpu_flags()}"


# A fresh process writes 256 MiB it never touched, then writes it again: each first write faults a page
# in and has the kernel zero it, and under a hypervisor that takes freed memory back (a balloon with free
# page reporting) the host backs the page again first. Every window and column a compare fills is such
# memory once; the two rates say what that costs here.
_TOUCH = """
import time, numpy as np
a = np.empty(256 << 20, dtype=np.uint8)
t0 = time.perf_counter(); a.fill(1); t1 = time.perf_counter(); a.fill(2); t2 = time.perf_counter()
print(a.nbytes / (t1 - t0) / 1e9, a.nbytes / (t2 - t1) / 1e9)
"""


def memory_touch_gbps(tries: int = 3) -> dict[str, float]:
    """GB/s of a first write to fresh memory and of writing it again: the median of `tries` processes."""
    first, again = [], []
    for _ in range(tries):
        out = subprocess.run([sys.executable, "-c", _TOUCH], capture_output=True, text=True, check=True).stdout
        f, g = (float(x) for x in out.split())
        first.append(f)
        again.append(g)
        time.sleep(1)  # memory freed a moment ago may be handed out again still backed
    return {
        "first_touch_gbps": round(sorted(first)[tries // 2], 2),
        "rewrite_gbps": round(sorted(again)[tries // 2], 2),
    }


# What a machine without AVX-512 (or without AVX2) runs, on this one: orchlog's kernels (ORCHLOG_ISA),
# NumPy's dispatched loops and glibc's string functions, all capped. The kernel's own copies (the page
# cache into a read buffer) are not: the kernel picks them itself.
ISA_CAPS = {
    "avx512": {},
    "avx2": {
        "ORCHLOG_ISA": "avx2",
        "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
        "GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD",
    },
    "baseline": {
        "ORCHLOG_ISA": "baseline",
        "NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR",
        "GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD,-AVX2,-AVX,-FMA",
    },
}


def load_average() -> float:
    return os.getloadavg()[0]


def uptime() -> str:
    """`uptime`'s line: the time and the load averages that a figure is recorded with."""
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
