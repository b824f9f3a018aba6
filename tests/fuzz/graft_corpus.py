"""One corpus of damaged graft references, and the rule every emitter's graft is held to over it.

A graft reads its reference inside the engine, so a damaged reference must
never reach the engine's tensor. `write_reference` writes a sound one (the
emitter's own full-mode trace: several checkpoints and layers, a key
logged twice, float dtypes converted on the way, an integer and an empty
tensor) and the `PLAN` of graft calls an engine makes against it. The
mutants are that file damaged:

- `damaged`: tests/fuzz/mutate.py's damage to the bytes (bit flips,
  boundary bytes, cuts, deleted, repeated and inserted ranges, msgpack
  headers claiming 4 G entries or nesting 20,000 deep), one to three each;
- `rearranged`: whole frames, each still sound, deleted, repeated or swapped,
  and a key field or dtype rewritten with the checksum left stale;
- `forged`: frames that break a reader's limit (65 dimensions, a shape whose
  product overflows, negative dimensions, a 70,000-byte name, 300 map
  entries, nesting 40 deep, a tensor length beyond the file, a second run
  header, a schema-1 header), their checksum recomputed so that only the
  limit stands in the way.

The harnesses (tests/native/programs/graft_mutants.cpp,
native/rust/examples/graft_mutants.rs, tests/fuzz/graft_python.py) graft the
plan from each mutant and print, per mutant, what each call returned and the
tensor's bytes after it. `check` holds every answer to one rule: a call
either left its tensor as the engine made it (0xA5 bytes) and returned
false, or returned true with exactly the bytes the sound reference gives.
"""

from __future__ import annotations

import dataclasses
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

import orchlog
from orchlog.kernels import crc32c
from tests.fuzz.mutate import damage_bytes

SENTINEL = 0xA5
CRC_KEY = b"\xa6crc32c\xce"


@dataclasses.dataclass(frozen=True)
class Call:
    checkpoint: str
    token: int  # -1: none
    layer: int
    dtype: str  # the engine's
    shape: tuple[int, ...]

    def line(self) -> str:
        return f"{self.checkpoint}\t{self.token}\t{self.layer}\t{self.dtype}\t{','.join(map(str, self.shape))}"

    @property
    def nbytes(self) -> int:
        return (
            int(np.prod(self.shape, dtype=np.int64)) * {"f32": 4, "f16": 2, "bf16": 2, "f64": 8, "i32": 4}[self.dtype]
        )


def _records(rng: np.random.Generator) -> list[tuple[str, int, int, np.ndarray, str]]:
    """(checkpoint, token, layer, tensor as the reference logs it, the engine's dtype)."""
    out = []
    for token in range(3):
        for layer in range(2):
            out.append(("attn_norm", token, layer, rng.standard_normal((2, 3)).astype(np.float32), "f32"))
        out.append(("ffn_out", token, 1, rng.standard_normal(4).astype(np.float16), "f32"))  # f16 -> f32
        out.append(("l_out", token, 1, rng.standard_normal(300).astype(np.float32), "f16"))  # f32 -> f16
    out.append(("logits", -1, -1, rng.standard_normal(5).astype(np.float64), "bf16"))  # f64 -> bf16
    out.append(("logits", -1, -1, rng.standard_normal(5).astype(np.float64), "bf16"))  # the same key again
    out.append(("ids", 3, -1, rng.integers(0, 1000, 3).astype(np.int32), "i32"))
    out.append(("empty", 3, -1, np.zeros(0, np.float32), "f32"))
    return out


def write_reference(path: Path, seed: int = 27) -> list[Call]:
    """A sound full-mode reference written by the emitter; the plan of graft calls that takes all of it."""
    records = _records(np.random.default_rng(seed))
    assert orchlog.configure(path=str(path), mode="full", team="reference")
    try:
        for checkpoint, token, layer, tensor, _ in records:
            keys: dict[str, Any] = {"token_idx": None if token < 0 else token, "layer": None if layer < 0 else layer}
            assert orchlog.log(checkpoint, tensor, **keys)
    finally:
        orchlog.close()
    return [Call(c, t, lay, engine, tensor.shape) for c, t, lay, tensor, engine in records]


def frames(data: bytes) -> list[bytes]:
    """The file's frames, each ending with its checksum (the sound reference's tensors hold no such bytes)."""
    out, start = [], 0
    while start < len(data):
        end = data.index(CRC_KEY, start) + len(CRC_KEY) + 4
        out.append(data[start:end])
        start = end
    return out


def reseal(frame: bytes) -> bytes:
    """The frame with its checksum recomputed over what it now holds."""
    prefix = frame[: -len(CRC_KEY) - 4]
    return prefix + CRC_KEY + crc32c(prefix).to_bytes(4, "big")


# ---------------------------------------------------------------- mutants


def _rearranged(rng: random.Random, parts: list[bytes]) -> tuple[list[bytes], str]:
    parts = list(parts)
    i = rng.randrange(1, len(parts))
    j = rng.randrange(1, len(parts))
    how = rng.choice(["delete", "repeat", "swap", "key", "dtype"])
    if how == "delete":
        del parts[i]
    elif how == "repeat":
        parts.insert(j, parts[i])
    elif how == "swap" and i != j:
        parts[i], parts[j] = parts[j], parts[i]
    elif how in ("key", "dtype"):  # a field rewritten in place, the checksum left stale
        frame = parts[i]
        spots = [b"\xa9token_idx", b"\xa5layer", b"\xa3seq"] if how == "key" else [b"\xa5dtype\xa3"]
        spot = next((frame.index(s) + len(s) for s in spots if s in frame), None)
        if spot is not None:
            b = frame[spot]
            new = (b + 1) & 0x7F if how == "key" else None
            patched = bytes([new]) if new is not None else rng.choice([b"f16", b"i32", b"f64"])
            parts[i] = frame[:spot] + patched + frame[spot + len(patched) :]
    return parts, f"{how}@{i},{j}"


def forged(parts: list[bytes]) -> list[tuple[str, str, list[bytes]]]:
    """Frames that break a limit, each resealed (only the limit keeps them out): (name, the words of the
    warning that refuses it, the file's frames)."""
    header, records = parts[0], parts[1:]
    big = next(i for i, f in enumerate(records) if b"l_out" in f)  # a 300-element tensor: its frame uses array16/bin16
    victim = records[big]
    shape_at = victim.index(b"\xa5shape") + len(b"\xa5shape")
    shape_len = 4  # [300]: fixarray of one uint16
    assert victim[shape_at : shape_at + shape_len] == b"\x91\xcd\x01\x2c"
    assert victim[:3] == b"\xde\x00\x1a"  # a map16 of 26 entries

    def with_shape(encoded: bytes) -> bytes:
        return reseal(victim[:shape_at] + encoded + victim[shape_at + shape_len :])

    def replace(i: int, frame: bytes) -> list[bytes]:
        return [header] + records[:i] + [frame] + records[i + 1 :]

    cp_at = victim.index(b"\xaacheckpoint") + len(b"\xaacheckpoint")
    cp_end = cp_at + 1 + (victim[cp_at] & 0x1F)
    meta_at = victim.index(b"\xa4meta") + len(b"\xa4meta")
    data_at = victim.index(b"\xa4data") + len(b"\xa4data")
    long_name = b"x" * 70_000
    out = [
        ("65-dims", "a malformed field 'shape'", replace(big, with_shape(b"\xdc\x00\x41" + b"\x01" * 65))),
        (
            "overflowing-shape",
            "the reference record is f32 [4611686018427387904,16]",
            replace(big, with_shape(b"\x92\xcf" + (2**62).to_bytes(8, "big") + b"\x10")),
        ),
        (
            "int64-max-dims",
            "the reference record is f32 [9223372036854775807,9223372036854775807,9223372036854775807]",
            replace(big, with_shape(b"\x93" + (b"\xcf" + (2**63 - 1).to_bytes(8, "big")) * 3)),
        ),
        ("negative-dim", "a malformed field 'shape'", replace(big, with_shape(b"\x92\xff\xd1\xfe\xd4"))),
        ("uint64-dim", "a malformed field 'shape'", replace(big, with_shape(b"\x91\xcf" + b"\xff" * 8))),
        (
            "long-name",
            "a malformed field 'checkpoint'",
            replace(
                big, reseal(victim[:cp_at] + b"\xdb" + len(long_name).to_bytes(4, "big") + long_name + victim[cp_end:])
            ),
        ),
        ("300-entries", "a map of 300 entries", replace(big, reseal(b"\xde\x01\x2c" + victim[3:]))),
        (
            "deep-meta",
            "a malformed field 'meta'",
            replace(big, reseal(victim[:meta_at] + b"\x81\xa1a" * 40 + b"\x80" + victim[meta_at + 1 :])),
        ),
        (
            "tensor-past-the-end",
            "the file ends inside it",
            replace(big, reseal(victim[:data_at] + b"\xc6\xff\xff\xff\xff" + victim[data_at + 3 :])),
        ),
        ("second-header", "a second run header", [header] + records[:3] + [header] + records[3:]),
        ("schema-1", "is schema 1: its frames carry no checksum", forged_schema_1(parts)),
        ("no-header", "a record before the run header", records),
        (
            "no-checksum",
            "no checksum (crc32c) at its end",
            replace(big, b"\xde\x00\x18" + victim[3 : -len(CRC_KEY) - 4]),
        ),
    ]
    return out


def forged_schema_1(parts: list[bytes]) -> list[bytes]:
    """The frames under a header that says schema 1 (whose frames had no checksum), resealed."""
    header = parts[0]
    assert header[1:9] == b"\xa7orchlog" and header[9] == orchlog.SCHEMA_VERSION
    return [reseal(header[:9] + b"\x01" + header[10:])] + parts[1:]


def make_mutants(reference: Path, count: int, work: Path, start: int = 0) -> list[tuple[Path, str]]:
    """`count` damaged or rearranged mutants (numbered from `start`), then every forged one, written under `work`."""
    data = reference.read_bytes()
    parts = frames(data)
    assert b"".join(parts) == data
    out = []
    for n in range(start, start + count):
        rng = random.Random(f"graft/{n}")
        if rng.random() < 0.8:
            mutant, done = damage_bytes(rng, data, "frames")
            how = ",".join(done)
        else:
            rearranged, how = _rearranged(rng, parts)
            mutant = b"".join(rearranged)
        path = work / f"mutant-{n}.bin"
        path.write_bytes(mutant)
        out.append((path, how))
    for name, _, frames_ in forged(parts):
        path = work / f"forged-{name}.bin"
        path.write_bytes(b"".join(frames_))
        out.append((path, name))
    return out


# ---------------------------------------------------------------- harnesses


def run_harness(command: list[str], plan: list[Call], references: list[Path], work: Path, env: dict | None = None):
    """Run one harness over the references; its lines and stderr."""
    plan_file, list_file = work / "plan.tsv", work / "references.txt"
    plan_file.write_text("".join(c.line() + "\n" for c in plan), encoding="utf-8")
    list_file.write_text("".join(f"{p}\n" for p in references), encoding="utf-8")
    done = subprocess.run(
        [*command, str(plan_file), str(list_file)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(env or {})},
        check=False,
    )
    assert done.returncode == 0, f"{command[0]} exited {done.returncode}: {done.stderr[-3000:]}"
    lines = done.stdout.splitlines()
    assert len(lines) == len(references), done.stderr[-3000:]
    return lines, done.stderr


def python_harness() -> list[str]:
    return [sys.executable, "-m", "tests.fuzz.graft_python"]


def parse(line: str) -> tuple[str, list[bytes]] | None:
    if line == "off":
        return None
    flags, tensors = line.split("\t")
    return flags, [bytes.fromhex(t) for t in tensors.split(",")]


def check(plan: list[Call], sound: str, answers: list[str], mutants: list[tuple[Path, str]]) -> list[str]:
    """Every way an answer breaks the rule (module docstring), one line each; `sound` is the sound reference's answer."""
    parsed = parse(sound)
    assert parsed is not None
    sound_flags, sound_tensors = parsed
    assert sound_flags == "1" * len(plan), f"the sound reference does not graft every call: {sound_flags}"
    problems = []
    for (path, how), line in zip(mutants, answers):
        got = parse(line)
        if got is None:
            problems.append(f"{path.name} ({how}): the logger turned itself off (an internal error)")
            continue
        flags, tensors = got
        for k, call in enumerate(plan):
            untouched = bytes([SENTINEL]) * call.nbytes
            if flags[k] == "1" and tensors[k] != sound_tensors[k]:
                problems.append(f"{path.name} ({how}): call {k} ({call.checkpoint}) grafted other bytes")
            if flags[k] == "0" and tensors[k] != untouched:
                problems.append(f"{path.name} ({how}): call {k} ({call.checkpoint}) was written but returned false")
    return problems
