"""Reading a large Polygraphy RunResults JSON: orchlog's reader (long strings left in the file, each array
decoded when it is read) against the plain json.load Polygraphy's own loader starts from.

    .venv/bin/python -m benchmarks.polygraphy_read [--mib 256] [--arrays 64]

Writes one RunResults file with Polygraphy's own serializer (random float32 arrays), then, each in a
fresh process so that peak memory is its own: (a) `json.load` of the file (no array decoded yet),
(b) orchlog listing every record (`orchlog show`'s work: no array decoded), (c) orchlog reading every
tensor one after the other (compare's work). Prints seconds and peak resident memory of each, and
the ratios of (b) and (c) to (a), measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CHILD = {
    "json.load": "import json,sys; json.load(open(sys.argv[1]))",
    "orchlog records": "import sys, orchlog; n = sum(1 for _ in orchlog.open_trace(sys.argv[1]))",
    "orchlog tensors": "import sys, orchlog\nfor r in orchlog.open_trace(sys.argv[1]): r.raw_bytes()",
}


def write(path: Path, mib: int, arrays: int) -> None:
    import numpy as np
    from polygraphy.comparator import IterationResult, RunResults

    rng = np.random.default_rng(0)
    n = mib * 2**20 // 4 // arrays
    outputs = {f"/model/layers.{k}/out": rng.standard_normal(n, dtype=np.float32) for k in range(arrays)}
    results = RunResults()
    results.append(("onnxrt-runner", [IterationResult(outputs=outputs, runtime=0.0, runner_name="onnxrt-runner")]))
    results.save(str(path))


def measure(code: str, path: Path) -> tuple[float, int]:
    script = (
        "import resource, sys, time\nt = time.perf_counter()\n" + code + "\n"
        "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)"
    )
    out = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, check=True)
    seconds, rss = out.stdout.split()
    return float(seconds), int(rss)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.polygraphy_read", description=__doc__)
    p.add_argument("--mib", type=int, default=256, help="array bytes in the file (default 256)")
    p.add_argument("--arrays", type=int, default=64)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "outputs.json"
        started = time.perf_counter()
        # Written in a process of its own: a child's peak memory starts at its parent's (Linux keeps
        # ru_maxrss across fork and exec), and Polygraphy's serializer holds several copies of the arrays.
        subprocess.run(
            [sys.executable, "-c", f"from benchmarks.polygraphy_read import write; from pathlib import Path; "
             f"write(Path({str(path)!r}), {args.mib}, {args.arrays})"],
            check=True, capture_output=True,
        )  # fmt: skip
        print(
            f"wrote {path.stat().st_size / 2**20:.0f} MiB ({args.arrays} arrays) in {time.perf_counter() - started:.1f} s"
        )
        results = {name: measure(code, path) for name, code in _CHILD.items()}
    base_s, base_m = results["json.load"]
    for name, (s, m) in results.items():
        print(f"{name:16s} {s:7.2f} s ({s / base_s:4.2f}x)  peak {m / 2**20:7.0f} MiB ({m / base_m:4.2f}x)")
    print(json.dumps({k: {"seconds": s, "peak_bytes": m} for k, (s, m) in results.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
