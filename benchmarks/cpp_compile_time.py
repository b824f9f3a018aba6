#!/usr/bin/env python3
"""What orchlog costs a C++ translation unit to compile, header-only against compiled-library mode.

    .venv/bin/python benchmarks/cpp_compile_time.py                # about four minutes on two busy cores
    .venv/bin/python benchmarks/cpp_compile_time.py --repeat 3 --opt O2

One TU, examples/cpp/quickstart.cpp (one include, three macro calls), is compiled
with g++ -std=c++17 in each variant:

- baseline: the same TU with the orchlog include replaced by empty macros (what the
  TU costs without orchlog at all);
- header-only, logging compiled out and with -DORCH_LOGGING;
- compiled-library mode (-DORCHLOG_COMPILED_LIB, what linking orchlog::orchlog_compiled
  sets), compiled out and with -DORCH_LOGGING;
- the library's own TU (native/cpp/src/orchlog_compiled.cpp), paid once per build.

The figure is the compiler's CPU time (user + system of the child processes, from
wait4), not wall time: the machine is shared and loaded, and CPU time moves much less
with the load. The variants take turns, `--repeat` times, and each reports its median.

Then the run-time cost of a call while logging is off: a loop of ORCH_LOG_AT calls
with ORCH_LOG_FILE unset, built in each mode, counted in instructions by valgrind
(callgrind), against the same loop without the call: exact, whatever the load.
Prints Markdown for docs/cpp.md.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.compare_measure import load_average, machine  # noqa: E402

INCLUDE = ROOT / "native/cpp/include"
QUICKSTART = ROOT / "examples/cpp/quickstart.cpp"
LIBRARY_TU = ROOT / "native/cpp/src/orchlog_compiled.cpp"
LIBRARY_ROW = "the library's own TU (once per build)"
STUBS = "\n".join(f"#define {m}(...) static_cast<void>(0)" for m in ("ORCH_LOG", "ORCH_LOG_TOKEN", "ORCH_LOG_AT"))

# A hot loop an engine might have: one disabled call per iteration. The asm statement
# keeps the compiler from removing or merging iterations in either build.
CALL_LOOP = """\
#include <cstdlib>
#include <orchlog/orchlog.hpp>
int main(int argc, char**) {
  static float x[64];
  const long n = std::atol(std::getenv("CALLS"));
  for (long i = 0; i < n; ++i) {
#if WITH_CALL
    ORCH_LOG_AT("attn_out", i, argc, "add", 0, x, "f32", 64);
#endif
    asm volatile("" ::"r"(i) : "memory");
  }
  return 0;
}
"""


def cpu_seconds(cmd: list[str]) -> float:
    """User + system CPU time of a command and its children (the compiler's cc1plus)."""
    proc = subprocess.Popen(cmd)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}")
    return usage.ru_utime + usage.ru_stime


def compile_variants(work: Path, opt: str) -> dict[str, list[str]]:
    baseline = work / "baseline.cpp"
    baseline.write_text(QUICKSTART.read_text().replace("#include <orchlog/orchlog.hpp>", STUBS))
    cxx = ["g++", "-std=c++17", f"-{opt}", "-I", str(INCLUDE), "-c", "-o", str(work / "out.o")]
    return {
        "baseline: no orchlog": [*cxx, str(baseline)],
        "header-only, compiled out": [*cxx, str(QUICKSTART)],
        "header-only, ORCH_LOGGING": [*cxx, "-DORCH_LOGGING", str(QUICKSTART)],
        "compiled library, compiled out": [*cxx, "-DORCHLOG_COMPILED_LIB", str(QUICKSTART)],
        "compiled library, ORCH_LOGGING": [*cxx, "-DORCHLOG_COMPILED_LIB", "-DORCH_LOGGING", str(QUICKSTART)],
        LIBRARY_ROW: [*cxx, "-DORCHLOG_COMPILED_LIB", "-fPIC", str(LIBRARY_TU)],
    }


def measure_compile(work: Path, opt: str, repeat: int) -> dict[str, float]:
    variants = compile_variants(work, opt)
    times: dict[str, list[float]] = {name: [] for name in variants}
    for turn in range(repeat):
        for name, cmd in variants.items():
            times[name].append(cpu_seconds(cmd))
        print(f"  {opt} turn {turn + 1}/{repeat} done (load {load_average():.1f})", file=sys.stderr)
    return {name: statistics.median(t) for name, t in times.items()}


def instructions(binary: Path, calls: int) -> int:
    proc = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", str(binary)],
        env={**os.environ, "CALLS": str(calls), "ORCH_LOG_FILE": ""},
        capture_output=True,
        text=True,
        check=True,
    )
    match = re.search(r"Collected : (\d+)", proc.stderr)
    if match is None:
        raise SystemExit(f"callgrind printed no count:\n{proc.stderr}")
    return int(match.group(1))


def measure_disabled_call(work: Path, calls: int) -> dict[str, float]:
    """Instructions per call with logging off at run time, per build, above the empty loop."""
    source = work / "loop.cpp"
    source.write_text(CALL_LOOP)
    library = work / "orchlog_compiled.o"
    cxx = ["g++", "-std=c++17", "-O2", "-I", str(INCLUDE)]
    subprocess.run([*cxx, "-DORCHLOG_COMPILED_LIB", "-c", str(LIBRARY_TU), "-o", str(library)], check=True)
    builds = {
        "no call (baseline)": ["-DWITH_CALL=0"],
        "ORCH_LOGGING undefined": ["-DWITH_CALL=1"],
        "header-only, ORCH_LOGGING": ["-DWITH_CALL=1", "-DORCH_LOGGING"],
        "compiled library, ORCH_LOGGING": ["-DWITH_CALL=1", "-DORCH_LOGGING", "-DORCHLOG_COMPILED_LIB", str(library)],
    }
    per_call: dict[str, float] = {}
    for name, flags in builds.items():
        binary = work / f"loop_{len(per_call)}"
        subprocess.run([*cxx, str(source), *flags, "-o", str(binary), "-pthread"], check=True)
        # The difference between two loop lengths removes start-up and the first call's set-up.
        per_call[name] = (instructions(binary, 2 * calls) - instructions(binary, calls)) / calls
    return per_call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5, help="turns of every variant; medians are reported")
    parser.add_argument("--opt", action="append", choices=["O0", "O2"], help="optimisation levels (default both)")
    parser.add_argument("--calls", type=int, default=100_000, help="loop length for the disabled-call count")
    args = parser.parse_args()
    opts = args.opt or ["O2", "O0"]
    start_load = load_average()
    with tempfile.TemporaryDirectory(prefix="orchlog-compile-") as tmp:
        work = Path(tmp)
        compiled = {opt: measure_compile(work, opt, args.repeat) for opt in opts}
        disabled = measure_disabled_call(work, args.calls) if shutil.which("valgrind") else None
    gxx = subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    print(f"Machine: {machine()}; {gxx}; load average {start_load:.1f} at the start, {load_average():.1f} at the end.")
    print()
    header = " | ".join(f"-{opt}: CPU s (median of {args.repeat})" for opt in opts)
    print(f"| variant | {header} | {' | '.join(f'-{opt}: above baseline' for opt in opts)} |")
    print(f"|---|{'---|' * (2 * len(opts))}")
    for name in compiled[opts[0]]:
        cells = [f"{compiled[opt][name]:.2f}" for opt in opts]
        base = [compiled[opt]["baseline: no orchlog"] for opt in opts]
        above = [f"+{compiled[opt][name] - b:.2f} s" for opt, b in zip(opts, base)]
        if name.startswith("baseline"):
            above = ["—"] * len(opts)
        print(f"| {name} | {' | '.join(cells)} | {' | '.join(above)} |")
    for opt in opts:
        c = compiled[opt]
        saved = c["header-only, ORCH_LOGGING"] - c["compiled library, ORCH_LOGGING"]
        ratio = c["compiled library, ORCH_LOGGING"] / c["header-only, ORCH_LOGGING"]
        print(
            f"\n-{opt}: compiled-library mode takes {ratio:.2f}x the CPU time of header-only for a TU with "
            f"ORCH_LOGGING ({saved:.2f} s less per TU); the library's TU costs "
            f"{c[LIBRARY_ROW]:.2f} s once."
        )
    if disabled is not None:
        empty_loop = disabled["no call (baseline)"]
        print(
            f"\nInstructions per ORCH_LOG_AT call while logging is off at run time (callgrind, {args.calls:,} calls):\n"
        )
        print("| build | instructions per iteration | above the empty loop |")
        print("|---|---|---|")
        for name, n in disabled.items():
            print(f"| {name} | {n:.2f} | {'—' if name.startswith('no call') else f'{n - empty_loop:+.2f}'} |")


if __name__ == "__main__":
    main()
