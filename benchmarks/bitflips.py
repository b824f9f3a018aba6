"""How many single-bit flips in a record does `orchlog validate` notice? Measured, per kind of trace.

    .venv/bin/python -m benchmarks.bitflips --flips 2000

Flips one random bit in the records (never the run header) of traces made by
the Python emitter (the C++ core): JSONL summaries (10 leading values),
JSONL with every value, and the binary stream, whose frames end with their
CRC-32C since schema 2.
A flip counts as detected when `validate` (then `validate --verify-hashes`)
reports at least one problem. Prints one line per kind; docs/robustness.md
records the figures.
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
from pathlib import Path

from orchlog.read.paths import open_trace
from orchlog.read.validate import validate
from tests.fuzz.seeds import make_seeds


def _header_end(path: Path) -> int:
    trace = open_trace(path)
    first = next(iter(trace))
    assert first.location is not None  # a record read from a file says where it is
    return first.location.offset if first.location.offset is not None else path.read_bytes().index(b"\n") + 1


def measure(path: Path, flips: int, rng: random.Random, work: Path) -> tuple[float, float]:
    data = path.read_bytes()
    start = _header_end(path)
    seen = [0, 0]
    for n in range(flips):
        i = rng.randrange(start, len(data))
        damaged = bytearray(data)
        damaged[i] ^= 1 << rng.randrange(8)
        target = work / f"m{n % 4}{''.join(path.suffixes)}"
        target.write_bytes(bytes(damaged))
        seen[0] += not validate(open_trace(target))
        seen[1] += not validate(open_trace(target), verify_hashes=True)
    return seen[0] / flips, seen[1] / flips


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--flips", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=15)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="orchlog-bitflips-"))
    try:
        seeds = {s.name: s.path for s in make_seeds(work / "seeds")}
        kinds = {
            "JSONL summary (10 values)": seeds["python-jsonl"],
            "JSONL, every value": seeds["python-jsonl-all-values"],
            "binary stream (schema 2: frame CRC-32C)": seeds["python-binary"],
        }
        for name, path in kinds.items():
            plain, verified = measure(path, args.flips, random.Random(args.seed), work)
            print(f"{name:<40} detected by validate {plain:6.1%}   with --verify-hashes {verified:6.1%}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
