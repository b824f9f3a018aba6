"""Feed a cross-language tensor file to the C producer (programs/cross_language.c).

C has no JSON reader at hand, so this turns the file into the plain token
stream the C program reads on stdin, then runs it under the same env knobs
and exits with its status. Everything the emitter sees is decided by the C
program and liborchlog_c; this only changes the spelling of the input.

    python -m tests.crosslang.c_producer PROGRAM tests/crosslang/tensors.json

The stream: `config N` and N meta lines, then per tensor `tensor CHECKPOINT
DTYPE NDIM DIMS... TOKEN LAYER STAGE STEP RANK TOKEN_ID SHARD_AXIS SHARD_INDEX
NUM_SHARDS SHARD_PARTIAL NMETA`, NMETA meta lines and
`data HEX`. Text is `x` + its UTF-8 bytes in hex, absent values `-`, key
numbers decimal as the file gives them, SHARD_PARTIAL 0 or 1. A meta line is `m KEY KIND VALUE`:
KIND b (0/1), i (decimal), f (the f64's 16 hex digits of bits), s (text).
A tensor marked `"graft": true` starts with `graft` instead of `tensor`.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from collections.abc import Iterable
from typing import Any

from tests.vectors_io import meta_from_json


def _text(s: str) -> str:
    return "x" + s.encode("utf-8").hex()


def _number(n: int | None) -> str:
    return "-" if n is None else str(n)


def _meta_lines(pairs: Iterable[tuple[str, Any]]) -> list[str]:
    lines = []
    for key, value in pairs:
        if isinstance(value, bool):
            kind, text = "b", str(int(value))
        elif isinstance(value, int):
            kind, text = "i", str(value)
        elif isinstance(value, float):
            kind, text = "f", struct.pack(">d", value).hex()
        else:
            kind, text = "s", _text(value)
        lines.append(f"m {_text(key)} {kind} {text}")
    return lines


def token_stream(doc: dict) -> str:
    config = meta_from_json(doc["config"])
    lines = [f"config {len(config)}", *_meta_lines(config.items())]
    for t in doc["tensors"]:
        # Pairs one at a time: a repeated key must reach the C program twice.
        meta = [next(iter(meta_from_json({k: v}).items())) for k, v in t["meta"]]
        lines.append(
            " ".join(
                [
                    "graft" if t.get("graft") else "tensor",
                    _text(t["checkpoint"]),
                    t["dtype"],
                    str(len(t["shape"])),
                    *map(str, t["shape"]),
                    _number(t["token_idx"]),
                    _number(t["layer"]),
                    "-" if t["stage"] is None else _text(t["stage"]),
                    _number(t["step"]),
                    _number(t.get("rank")),
                    *(_number(t.get(part)) for part in ("token_id", "shard_axis", "shard_index", "num_shards")),
                    "-" if t.get("shard_partial") is None else str(int(t["shard_partial"])),
                    str(len(meta)),
                ]
            )
        )
        lines += _meta_lines(meta)
        lines.append("data x" + t["data_hex"])
    return "\n".join(lines) + "\n"


def main(program: str, tensors: str) -> int:
    with open(tensors, encoding="utf-8") as f:
        stream = token_stream(json.load(f))
    return subprocess.run([program], input=stream.encode("ascii")).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
