"""Does msgpack's C unpacker read binary-stream frames faster than orchlog's Python decoder?

    .venv/bin/python benchmarks/frame_headers.py               # three tensor sizes, 5 turns
    .venv/bin/python benchmarks/frame_headers.py --repeat 9

(needs `pip install msgpack`; orchlog itself does not depend on it.)

The reader (orchlog/read/formats/orchlog_frames.py) decodes each frame's
metadata in Python and seeks past the `data` bytes, so that opening a large
trace costs what its metadata costs. msgpack's Unpacker decodes whole values
in C, but cannot seek: it reads every tensor byte, and hands `data` back as a
copy. Three readers, on the same files, taking turns:

  python      orchlog's _Decoder, data left on disk (what open_trace does)
  msgpack     Unpacker over the file: every frame decoded whole, data copied
  msgpack-kv  Unpacker key by key, skip() over data (read, not copied)
  records     for context: orchlog.open_trace's whole job, TraceRecords made
              (the decoder is part of it)

Each figure is frames per second of the best turn, and the median over turns
of the time ratio against `python` measured in the same turn (>1: slower than
`python`). Files are written to --dir (default .cache/ in the checkout) and
deleted afterwards; the page cache is warm after the first turn.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import orchlog
from orchlog.encoding.record import HeaderInput, RecordInput, encode_header, encode_record
from orchlog.read.formats.orchlog_frames import _Decoder

# (label, f32 elements per tensor, frames): about 64 MiB of file per size but the smallest.
SIZES = [("16 values", 16, 40_000), ("16 KiB tensors", 4096, 4_000), ("1 MiB tensors", 262_144, 64)]


def write_frames(path: Path, numel: int, frames: int) -> None:
    """A binary stream of `frames` f32 records of `numel` elements each, written by the reference encoder."""
    rng = np.random.default_rng(0)
    header = HeaderInput(language="python", created="2026-01-01T00:00:00Z", team="bench", model="bench")
    tensors = [rng.standard_normal(numel, dtype=np.float32).tobytes() for _ in range(16)]
    with open(path, "wb") as f:
        f.write(encode_header(header)[1])
        for i in range(frames):
            rec = RecordInput(
                "l_out", "f32", (numel,), tensors[i % 16], team="bench", token_idx=i // 32, layer=i % 32, seq=i
            )
            f.write(encode_record(rec).frame)


def read_python(path: Path) -> int:
    with open(path, "rb") as f:
        dec = _Decoder(f, path.stat().st_size)
        n = 0
        while f.peek(1):
            dec.value()
            n += 1
    return n


def read_msgpack(path: Path) -> int:
    import msgpack

    with open(path, "rb") as f:
        return sum(1 for _ in msgpack.Unpacker(f, raw=False, max_buffer_size=1 << 30))


def read_msgpack_kv(path: Path) -> int:
    import msgpack

    with open(path, "rb") as f:
        unpacker = msgpack.Unpacker(f, raw=False, max_buffer_size=1 << 30)
        n = 0
        while True:
            try:
                keys = unpacker.read_map_header()
            except msgpack.OutOfData:
                return n
            frame = {}
            for _ in range(keys):
                key = unpacker.unpack()
                if key == "data":
                    unpacker.skip()
                else:
                    frame[key] = unpacker.unpack()
            n += 1


def read_records(path: Path) -> int:
    return 1 + sum(1 for _ in orchlog.open_trace(path))  # the header, then the records


READERS: dict[str, Callable[[Path], int]] = {
    "python": read_python,
    "msgpack": read_msgpack,
    "msgpack-kv": read_msgpack_kv,
    "records": read_records,
}


def machine() -> str:
    import msgpack

    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}, msgpack "
        f"{'.'.join(map(str, msgpack.version))}; load average at start {load}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5, help="turns per size (default 5)")
    ap.add_argument("--dir", type=Path, default=Path(__file__).resolve().parent.parent / ".cache")
    args = ap.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    print(machine())
    print(f"{'tensors':<16} {'MiB':>5} {'reader':<11} {'frames/s':>10} {'time vs python':>15}")
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="frame-headers-") as tmp:
        for label, numel, frames in SIZES:
            path = Path(tmp) / "trace.bin"
            write_frames(path, numel, frames)
            times: dict[str, list[float]] = {name: [] for name in READERS}
            for _ in range(args.repeat):
                for name, read in READERS.items():
                    start = time.perf_counter()
                    got = read(path)
                    times[name].append(time.perf_counter() - start)
                    if got != frames + 1:  # the header is a frame too
                        sys.exit(f"{name} read {got} frames of {frames + 1}")
            mib = path.stat().st_size / (1 << 20)
            for name in READERS:
                ratio = statistics.median(t / p for t, p in zip(times[name], times["python"]))
                rate = (frames + 1) / min(times[name])
                print(f"{label:<16} {mib:>5.0f} {name:<11} {rate:>10,.0f} {ratio:>14.2f}x")
            path.unlink()


if __name__ == "__main__":
    main()
