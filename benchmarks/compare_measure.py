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


def machine() -> str:
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                return f"{line.split(':', 1)[1].strip()}, {os.cpu_count()} cores"
    except OSError:
        pass
    return f"unknown CPU, {os.cpu_count()} cores"


def load_average() -> float:
    return os.getloadavg()[0]


def uptime() -> str:
    """`uptime`'s line: the time and the load averages that a figure is recorded with."""
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
