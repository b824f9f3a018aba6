"""Benchmark of the C++ emitter (and the Python emitter built on it).

    .venv/bin/python benchmarks/cpp_emitter.py            # about half a minute
    .venv/bin/python benchmarks/cpp_emitter.py --mib 64   # a smaller largest tensor

Every figure is printed next to a baseline measured in the same run, as a
ratio: a disabled ORCH_LOG call against the same loop without it, the
full-mode write path against fwrite of the same bytes to the same directory,
the header's BLAKE3 against the `blake3` package (Rust, one thread) on the
same buffer. Times are CPU time of the measuring thread, because the
machines this runs on are shared. The table is Markdown, ready for docs/cpp.md.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import tempfile
import time
from pathlib import Path

import blake3
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "benchmarks" / "bench_cpp.cpp"


def machine() -> str:
    model = platform.processor() or "unknown CPU"
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return f"{model}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def build() -> Path:
    out = ROOT / ".cache" / "bench" / "bench_cpp"
    out.parent.mkdir(parents=True, exist_ok=True)
    # What an engine would use: -O2, no -march flags; the SIMD kernels are chosen at run time.
    subprocess.run(["g++", "-std=c++17", "-O2", "-DORCH_LOGGING", f"-I{ROOT / 'native/cpp/include'}", str(SOURCE),
                    "-o", str(out), "-pthread"], check=True)
    return out


def best_of(reps: int, fn) -> float:
    best = float("inf")
    for _ in range(reps):
        t0 = time.thread_time()
        fn()
        best = min(best, time.thread_time() - t0)
    return best


def blake3_against_package(mib: int) -> dict:
    from orchlog import _native

    data = np.random.default_rng(0).integers(0, 256, mib << 20, dtype=np.uint8).tobytes()
    header = package = float("inf")
    for _ in range(3):  # alternate, so that both see the same machine state
        header = min(header, best_of(1, lambda: _native.blake3_hex(data)))
        package = min(package, best_of(1, lambda: blake3.blake3(data).digest()))
    assert _native.blake3_hex(data) == blake3.blake3(data).hexdigest()
    return {"header_gb_per_s": len(data) / header / 1e9, "package_gb_per_s": len(data) / package / 1e9}


def python_disabled_call() -> dict:
    import orchlog

    orchlog.configure(path="")
    x = np.zeros(4, dtype=np.float32)

    def noop(*args, **kwargs):
        return False

    n = 200_000
    off = best_of(3, lambda: [orchlog.log("attn_norm", x, token_idx=i) for i in range(n)]) / n
    base = best_of(3, lambda: [noop("attn_norm", x, token_idx=i) for i in range(n)]) / n
    return {"disabled_log_ns": off * 1e9, "noop_call_ns": base * 1e9}


def table(r: dict, mib: int) -> str:
    d, w, b, p = r["cpp"]["disabled"], r["cpp"]["write"], r["blake3"], r["python"]
    lines = [f"Machine: {r['machine']}; largest tensor {mib} MiB; files in {r['dir']}.", "",
             "| measure | orchlog | baseline | ratio |", "|---|---|---|---|",
             f"| disabled ORCH_LOG call (ns) | {d['disabled_call_ns']:.2f} | empty loop {d['empty_loop_ns']:.2f} "
             f"| {d['disabled_call_ns'] - d['empty_loop_ns']:+.2f} ns |",
             f"| BLAKE3, {mib} MiB (GB/s) | {b['header_gb_per_s']:.2f} | blake3 package {b['package_gb_per_s']:.2f} "
             f"| {b['header_gb_per_s'] / b['package_gb_per_s']:.2f}x |",
             f"| full-mode write, {w['bytes'] >> 20} MiB (GB/s) | {w['writev_gb_per_s']:.2f} "
             f"| fwrite {w['fwrite_gb_per_s']:.2f} | {w['writev_gb_per_s'] / w['fwrite_gb_per_s']:.2f}x |",
             f"| Python orchlog.log, off (ns) | {p['disabled_log_ns']:.0f} | no-op Python call {p['noop_call_ns']:.0f} "
             f"| {p['disabled_log_ns'] / p['noop_call_ns']:.2f}x |", "",
             "| tensor (f32) | mode | records/s | GB/s |", "|---|---|---|---|"]
    for m in r["cpp"]["modes"]:
        size = f"{m['bytes'] >> 20} MiB" if m["bytes"] >= 1 << 20 else f"{m['bytes'] >> 10} KiB"
        lines.append(f"| {size} | {m['mode']} | {m['records_per_s']:,.0f} | {m['gb_per_s']:.2f} |")
    lines += ["", "| BLAKE3 kernel (header, C++) | GB/s |", "|---|---|"]
    lines += [f"| {k} | {v:.2f} |" for k, v in r["cpp"]["blake3"].items()]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mib", type=int, default=256, help="size of the largest tensor (default 256)")
    parser.add_argument("--dir", help="where the logs go (default: a scratch directory in .cache/)")
    parser.add_argument("--json", action="store_true", help="print the raw figures as JSON too")
    args = parser.parse_args()
    exe = build()
    (ROOT / ".cache").mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.dir or ROOT / ".cache") as out:
        cpp = json.loads(subprocess.run([str(exe), out, str(args.mib)], check=True, capture_output=True,
                                        text=True).stdout)
    results = {"machine": machine(), "dir": args.dir or ".cache/", "cpp": cpp,
               "blake3": blake3_against_package(args.mib), "python": python_disabled_call()}
    print(table(results, args.mib))
    if args.json:
        print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
