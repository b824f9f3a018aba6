"""How many single-bit flips in a record does `orchlog validate` notice? Measured, per kind of trace.

    .venv/bin/python -m benchmarks.bitflips --flips 2000

Flips one random bit in the records (never the run header) of traces made by
the Python emitter (the C++ core): JSONL summaries (10 leading values),
JSONL with every value, the binary stream, and the binary stream with the
recommended frame checksum (CRC-32C as the last key) added to every frame.
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

from orchlog.kernels import crc32c
from orchlog.read.paths import open_trace
from orchlog.read.validate import validate
from tests.fuzz.seeds import make_seeds


def _with_checksums(path: Path, out: Path) -> Path:
    """The stream with CRC-32C appended to every record frame, as the recommended field would be."""
    from orchlog.read.formats.orchlog_frames import _Decoder

    data = path.read_bytes()
    pieces, pos = [], 0
    with open(path, "rb") as f:
        dec = _Decoder(f, len(data))
        while pos < len(data):
            f.seek(pos)
            frame = dec.value()
            end = f.tell()
            raw = data[pos:end]
            if "orchlog" not in frame and raw[0] == 0xDE:
                count = int.from_bytes(raw[1:3], "big")
                raw = b"\xde" + (count + 1).to_bytes(2, "big") + raw[3:]
                raw += b"\xa6crc32c\xce" + crc32c(raw).to_bytes(4, "big")
            pieces.append(raw)
            pos = end
    out.write_bytes(b"".join(pieces))
    return out


def _header_end(path: Path) -> int:
    trace = open_trace(path)
    first = next(iter(trace))
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
            "binary stream": seeds["python-binary"],
            "binary stream + frame CRC-32C": _with_checksums(seeds["python-binary"], work / "crc.bin"),
        }
        for name, path in kinds.items():
            plain, verified = measure(path, args.flips, random.Random(args.seed), work)
            print(f"{name:<32} detected by validate {plain:6.1%}   with --verify-hashes {verified:6.1%}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
