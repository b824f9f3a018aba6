"""What checking a graft reference costs: the first graft call indexes the whole reference, reading every
byte through CRC-32C, and each graft reads its frame again with the tensor's BLAKE3.

    .venv/bin/python -m benchmarks.graft_index --mib 1024 --runs 3

Writes a full-mode reference of about MIB MiB (records of 1 MiB f32 tensors, through the C++ core), then, in
turn, with the file in the page cache: reading the whole file in 1 MiB pieces in Python (the baseline: what
any index that reads every byte costs at least) against the first `orchlog.graft` call (which indexes it)
and against the next graft calls (each checks and copies one 1 MiB tensor) against a plain 1 MiB copy.
Medians of the runs; ratios within one run. Prints a Markdown table for docs/graft.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.compare_measure import load_average, machine  # noqa: E402

TENSOR = 1 << 18  # f32 elements: 1 MiB


def _write(path: Path, records: int) -> None:
    import orchlog

    orchlog.configure(path=str(path), mode="full", team="ref", values=0)
    x = np.random.default_rng(0).standard_normal(TENSOR).astype(np.float32)
    for token in range(records):
        orchlog.log("hidden", x, token_idx=token)
    orchlog.close()


def _read_all(path: Path) -> float:
    started = time.perf_counter()
    with open(path, "rb", buffering=0) as f:
        while f.read(1 << 20):
            pass
    return time.perf_counter() - started


def _graft(path: Path, records: int) -> tuple[float, float]:
    """(seconds of the first graft call, median seconds of the others)."""
    import orchlog

    orchlog.configure(path=os.devnull, graft_from=str(path), graft_select="checkpoint=*")
    out = np.zeros(TENSOR, np.float32)
    times = []
    for token in range(min(records, 64)):
        started = time.perf_counter()
        assert orchlog.graft("hidden", out, token_idx=token)
        times.append(time.perf_counter() - started)
    orchlog.close()
    return times[0], statistics.median(times[1:])


def _copy() -> float:
    a, b = np.ones(TENSOR, np.float32), np.zeros(TENSOR, np.float32)
    started = time.perf_counter()
    for _ in range(64):
        b[:] = a
    return (time.perf_counter() - started) / 64


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mib", type=int, default=1024)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        path = Path(tmp) / "reference.bin"
        _write(path, args.mib)
        size = path.stat().st_size
        _read_all(path)  # into the page cache
        rows = []
        for _ in range(args.runs):
            read = _read_all(path)
            first, each = _graft(path, args.mib)
            rows.append((read, first, each, _copy()))
    read, first, each, copy = (statistics.median(col) for col in zip(*rows))
    print(f"{machine()}; load {load_average():.1f}; reference {size / 2**20:.0f} MiB, {args.mib} records of 1 MiB\n")
    print("| what | time | against |")
    print("|---|---:|---|")
    print(f"| reading the reference (Python, 1 MiB pieces) | {read:.3f} s ({size / read / 1e9:.2f} GB/s) | baseline |")
    print(f"| first graft call: indexing every frame, CRC-32C | {first:.3f} s | {first / read:.2f}x the read |")
    print(f"| each later graft of a 1 MiB tensor (CRC-32C, BLAKE3, copy) | {each * 1e3:.2f} ms | "
          f"{each / copy:.0f}x a 1 MiB copy ({copy * 1e6:.0f} us) |")  # fmt: skip


if __name__ == "__main__":
    main()
