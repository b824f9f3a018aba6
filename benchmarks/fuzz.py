"""The long mutation run: mutants of every emitter's traces in every format through show, validate, compare and pack
(or, with --weights, of every weight format through `orchlog weights`).

    .venv/bin/python -m benchmarks.fuzz --mutants 10000 --workers 2 --work /tmp/orchlog-fuzz
    .venv/bin/python -m benchmarks.fuzz --weights --mutants 10000 --workers 2

Prints the figures docs/robustness.md records (mutants, internal errors,
aborts, hangs, peak memory, time) and exits 1 when anything failed; the
failing mutants are kept under WORK/failures with what went wrong, ready to
become regression files (tests/fuzz/regressions/). The C++, C and Rust
emitters' traces join the seeds when their builds succeed here.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.fuzz.campaign import run_campaign
from tests.fuzz.seeds import make_seeds
from tests.fuzz.weight_seeds import make_weight_seeds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mutants", type=int, default=10000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--start", type=int, default=0, help="number of the first mutant (another run, other mutants)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/orchlog-fuzz"))
    parser.add_argument("--no-native", action="store_true", help="leave out the C++, C and Rust emitters' traces")
    parser.add_argument("--weights", action="store_true", help="weight files through `orchlog weights` instead")
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    if args.weights:
        seeds = make_weight_seeds(args.work / "seeds")
    else:
        seeds = make_seeds(args.work / "seeds", native=not args.no_native)
    print(f"seeds ({len(seeds)}): {', '.join(s.name for s in seeds)}", flush=True)
    result = run_campaign(seeds, args.mutants, args.work, workers=args.workers, start=args.start)
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(result.summary())
    print(f"machine: {os.cpu_count()} cores; {load}")
    return 1 if result.failures else 0


if __name__ == "__main__":
    sys.exit(main())
