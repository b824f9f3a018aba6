"""Benchmarks for the Parquet encoding; figures go to docs/parquet.md.

    .venv/bin/python benchmarks/parquet_bench.py            # everything (a few minutes on 2 cores)
    .venv/bin/python benchmarks/parquet_bench.py codec      # one part: codec | pack | read

Every speed is a ratio against a baseline measured in the same run, on the
same bytes: the runs take turns --repeat times and the median of the
per-turn ratios is reported (the machine may be shared); GB/s figures are
the best turn. Inputs are
synthetic transformer activations (benchmarks/activations.py). Files go to
--dir (default: .cache/ in the checkout) and are deleted afterwards; `read`
writes a 2 GiB trace once.
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import activations
from orchlog.encoding.record import HeaderInput, RecordInput, encode_header, encode_record, record_values
from orchlog.parquet import pack, read
from orchlog.parquet.schema import DEFAULT_CODEC, DEFAULT_LEVEL, DEFAULT_ROW_GROUP_BYTES
from orchlog.parquet.writer import Writer

MiB = 1 << 20
CODECS = [("none", None), ("snappy", None), ("lz4", None), ("zstd", 1), ("zstd", 3), ("zstd", 9)]


def codec_label(codec: str, level: int | None) -> str:
    return codec if level is None else f"{codec}-{level}"


# ------------------------------------------------------------------ helpers


def best_time(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def cpu_seconds() -> float:
    """CPU time of this process, all threads, user and system."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def taking_turns(
    runs: dict[str, Callable[[], object]], repeat: int, outputs: dict[str, Path] | None = None
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """(wall times, CPU times) of each run, the runs taking turns `repeat` times so that a busy
    neighbour on a shared machine slows them alike; `outputs` are deleted before each run
    (replacing a large file costs its unlink)."""
    wall: dict[str, list[float]] = {name: [] for name in runs}
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, fn in runs.items():
            if outputs and name in outputs:
                outputs[name].unlink(missing_ok=True)
            start, start_cpu = time.perf_counter(), cpu_seconds()
            fn()
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(cpu_seconds() - start_cpu)
    return wall, cpu


PEAK_RSS = "print(next(line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM')))"


def peak_memory_mib(code: str) -> float:
    """Peak RSS of a fresh Python running `code`, above one that only imports orchlog's formats.

    VmHWM, not ru_maxrss: a child's ru_maxrss starts at its parent's when that is larger.
    """

    def peak(body: str) -> float:
        script = f"import orchlog.read.formats, orchlog.parquet; orchlog.read.formats.formats()\n{body}\n{PEAK_RSS}"
        return (
            int(
                subprocess.run(
                    [sys.executable, "-c", script], capture_output=True, text=True, check=True
                ).stdout.split()[-1]
            )
            / 1024
        )

    return peak(code) - peak("")


def median_ratio(numerators: list[float], denominators: list[float]) -> float:
    """The median of the per-turn ratios: robust to a turn slowed by someone else."""
    return statistics.median(a / b for a, b in zip(numerators, denominators))


def bytes_read_by_process() -> int:
    """rchar: bytes this process asked read()/pread() for, page cache or not (Linux)."""
    with open("/proc/self/io") as f:
        for line in f:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    raise RuntimeError("no rchar in /proc/self/io")


def machine() -> str:
    model = subprocess.run("lscpu | grep 'Model name'", shell=True, capture_output=True, text=True).stdout
    model = model.split(":", 1)[-1].strip() or platform.processor()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}, pyarrow {pa.__version__}; "
        f"load average at start {load}"
    )


Tensor = tuple[str, int | None, int, str, np.ndarray]  # checkpoint, layer, prompt, dtype, array


def activation_tensors(form: str, prompts: int, tokens: int, layers: int = 8) -> Iterator[Tensor]:
    """(checkpoint, layer, prompt, dtype, array) for `prompts` prompt passes of `tokens` tokens."""
    model = activations.Model(layers=layers)
    for p in range(prompts):
        for name, layer, x in activations.forward(model, activations.prompt(p, tokens)):
            dtype, arr = activations.cast(x, form)
            yield name, layer, p, dtype, np.ascontiguousarray(arr)


def record_input(name: str, layer: int | None, step: int, dtype: str, arr: np.ndarray, seq: int) -> RecordInput:
    return RecordInput(
        checkpoint=name, dtype=dtype, shape=arr.shape, data=arr.tobytes(), layer=layer, step=step, seq=seq
    )


def write_rows(path: Path, rows: list[dict[str, Any]], codec: str, level: int | None) -> None:
    with Writer(path, headers=[], codec=codec, level=level) as w:
        for row in rows:
            w.append(row)


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


# ------------------------------------------------------------------ parts


def bench_codec(work: Path, repeat: int) -> None:
    print("## Codec: file size / raw tensor bytes, and write time relative to no compression\n")
    print("Rows of one 64-token prompt pass through 8 layers (all checkpoints), written by orchlog's writer.\n")
    print(
        "| form | raw MiB | "
        + " | ".join(codec_label(*c) for c in CODECS)
        + " | typed column zstd-1 | typed column + byte_stream_split zstd-1 |"
    )
    print("|---|---|" + "---|" * (len(CODECS) + 2))
    for form in activations.FORMS:
        rows, arrays = [], []
        for seq, (name, layer, step, dtype, arr) in enumerate(activation_tensors(form, prompts=1, tokens=64)):
            rows.append(record_values(record_input(name, layer, step, dtype, arr, seq)))
            arrays.append(arr.reshape(-1))
        raw = sum(len(r["data"]) for r in rows)
        outputs = {codec_label(*c): work / f"codec-{codec_label(*c)}.parquet" for c in CODECS}
        runs: dict[str, Callable[[], object]] = {
            codec_label(codec, level): functools.partial(
                write_rows, outputs[codec_label(codec, level)], rows, codec, level
            )
            for codec, level in CODECS
        }
        times, _ = taking_turns(runs, repeat, outputs)
        cells = []
        for name, path in outputs.items():
            cells.append(f"{os.path.getsize(path) / raw:.3f} ({median_ratio(times[name], times['none']):.1f}x)")
            path.unlink()
        cells += [typed_column_size(work, form, arrays, raw, bss) for bss in (False, True)]
        print(f"| {form} | {raw / MiB:.1f} | " + " | ".join(cells) + " |")
    print("\nEach cell: size ratio (write time / write time without compression).")
    print(
        "Typed column: all elements in one float32/float16/fixed_size_binary(2) column instead of "
        "orchlog's large_binary, to show what byte_stream_split would add.\n"
    )


def typed_column_size(work: Path, form: str, arrays: list[np.ndarray], raw: int, bss: bool) -> str:
    flat = np.concatenate(arrays)
    if form == "bf16":
        column = pa.FixedSizeBinaryArray.from_buffers(pa.binary(2), len(flat), [None, pa.py_buffer(flat.tobytes())])
    else:
        column = pa.array(flat)
    out = work / "typed.parquet"
    pq.write_table(
        pa.table({"x": column}),
        out,
        compression="zstd",
        compression_level=1,
        use_dictionary=False,
        use_byte_stream_split=bss,
    )
    size = os.path.getsize(out)
    out.unlink()
    return f"{size / raw:.3f}"


def bench_pack(work: Path, repeat: int, mib: int) -> None:
    print(f"## pack throughput (about {mib} MiB of f32 activations, hashes verified)\n")
    stream = work / "pack-in.bin"
    raw = 0
    with open(stream, "wb") as f:
        f.write(encode_header(HeaderInput(language="python", created="2026-01-01T00:00:00Z"))[1])
        tensors = activation_tensors("f32", prompts=64, tokens=128)
        for seq, (name, layer, step, dtype, arr) in enumerate(tensors):
            f.write(encode_record(record_input(name, layer, step, dtype, arr, seq)).frame)
            raw += arr.nbytes
            if raw >= mib * MiB:
                break
    out, base = work / "packed.parquet", work / "baseline.parquet"
    print(
        "| codec | pack GB/s | write_table GB/s (same rows, same codec) | pack / write_table throughput "
        "| CPU seconds, write_table / pack |"
    )
    print("|---|---|---|---|---|")
    for codec, level in ((DEFAULT_CODEC, DEFAULT_LEVEL), ("none", None)):
        pack([stream], out, codec=codec, level=level)
        table = pq.read_table(out)  # the same rows and bytes, in memory
        wall, cpu = taking_turns(
            {
                "pack": lambda: pack([stream], out, codec=codec, level=level),
                "write_table": lambda: pq.write_table(table, base, compression=codec, compression_level=level),
            },
            repeat,
            {"pack": out, "write_table": base},
        )
        gb_per_s = {name: raw / min(times) / 1e9 for name, times in wall.items()}
        print(
            f"| {codec_label(codec, level)} | {gb_per_s['pack']:.2f} | {gb_per_s['write_table']:.2f} "
            f"| {median_ratio(wall['write_table'], wall['pack']):.2f}x "
            f"| {median_ratio(cpu['write_table'], cpu['pack']):.2f}x |"
        )
    packed = work / "memory.parquet"
    pack_mib = peak_memory_mib(f"from orchlog.parquet import pack; pack([{str(stream)!r}], {str(packed)!r})")
    read_mib = peak_memory_mib(f"from orchlog.parquet import read\nfor rec in read({str(packed)!r}): rec.tensor()")
    packed.unlink()
    print(
        f"\nPeak memory above an idle process, row groups of {DEFAULT_ROW_GROUP_BYTES // MiB} MiB: "
        f"pack {pack_mib:.0f} MiB, reading every tensor in order {read_mib:.0f} MiB "
        f"(the trace: {raw / MiB:.0f} MiB)."
    )
    import blake3

    data = table.column("data").to_pylist()
    t_hash = best_time(lambda: [blake3.blake3(d).digest() for d in data], repeat)
    print(
        f"\nFor scale: blake3 alone hashes these bytes at {raw / t_hash / 1e9:.2f} GB/s on one core. "
        f"{raw / MiB:.0f} MiB in {len(data)} tensors; input stream in the page cache.\n"
    )
    for p in (stream, out, base):
        p.unlink()


def bench_read(work: Path, repeat: int, gib: float, row_group_bytes: int) -> None:
    print(f"## Reading one 4 MiB tensor out of a {gib:g} GiB trace\n")
    pool = np.concatenate([x.reshape(-1) for *_, x in activation_tensors("f32", prompts=1, tokens=64)])
    distinct = [pool[i * MiB : (i + 1) * MiB] for i in range(len(pool) // MiB)]  # 1 Mi f32 = 4 MiB each
    rows = [
        record_values(RecordInput(checkpoint="ffn_out", dtype="f32", shape=(1024, 1024), data=d.tobytes()))
        for d in distinct
    ]
    path = work / "big.parquet"
    n = int(gib * 1024 / 4)
    layers = 24
    with Writer(path, row_group_bytes=row_group_bytes) as w:
        for i in range(n):
            w.append({**rows[i % len(rows)], "layer": i % layers, "token_idx": i // layers, "seq": i})
    size = os.path.getsize(path)
    meta = pq.ParquetFile(path).metadata
    picks = [((n // 2) % layers, (n // 2) // layers), ((n - 1) % layers, (n - 1) // layers), (3, 0)]

    def read_one(layer: int, token: int) -> int:
        (rec,) = list(read(path, layer=layer, token_idx=token))
        tensor = rec.tensor()
        assert tensor is not None
        nbytes: int = tensor.nbytes
        return nbytes

    results = []
    for layer, token in picks:
        before = bytes_read_by_process()
        read_one(layer, token)
        nbytes = bytes_read_by_process() - before
        results.append((best_time(lambda: read_one(layer, token), repeat), nbytes))
    full_before = bytes_read_by_process()
    t_full = best_time(lambda: pq.read_table(path, columns=["data"]), 1)
    full_bytes = bytes_read_by_process() - full_before
    print(
        f"File: {size / 2**30:.2f} GiB, {n} tensors, {meta.num_row_groups} row groups of about "
        f"{row_group_bytes // MiB} MiB of tensors, footer {meta.serialized_size / 1024:.0f} KiB.\n"
    )
    print("| read | time | bytes read | share of the file |")
    print("|---|---|---|---|")
    for (layer, token), (t, nbytes) in zip(picks, results):
        print(
            f"| read(layer={layer}, token_idx={token}).tensor() | {t * 1000:.0f} ms | {nbytes / MiB:.1f} MiB "
            f"| {pct(nbytes / size)} |"
        )
    print(
        f"| baseline: pq.read_table(columns=['data']) | {t_full * 1000:.0f} ms | {full_bytes / MiB:.0f} MiB "
        f"| {pct(full_bytes / size)} |"
    )
    print("\nTimes include opening the file and the selection scan; the file is in the page cache.\n")
    path.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("parts", nargs="*", metavar="PART", help="codec, pack or read (default: all three)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per timing; the best is kept")
    parser.add_argument("--pack-mib", type=int, default=512, help="size of the pack input")
    parser.add_argument("--read-gib", type=float, default=2.0, help="size of the trace for the read test")
    parser.add_argument(
        "--row-group-mb", type=int, default=DEFAULT_ROW_GROUP_BYTES // MiB, help="row group size for the read test"
    )
    parser.add_argument("--dir", help="where to write the files (default: .cache/ in the checkout)")
    args = parser.parse_args()
    parts = args.parts or ["codec", "pack", "read"]
    if set(parts) - {"codec", "pack", "read"}:
        parser.error(f"unknown part in {parts}; choose from codec, pack, read")
    scratch = Path(args.dir) if args.dir else Path(__file__).resolve().parent.parent / ".cache"
    scratch.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="parquet-bench-", dir=scratch))
    try:
        print(f"Machine: {machine()}\n")
        if "codec" in parts:
            bench_codec(work, args.repeat)
        if "pack" in parts:
            bench_pack(work, args.repeat, args.pack_mib)
        if "read" in parts:
            bench_read(work, args.repeat, args.read_gib, args.row_group_mb * MiB)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
