"""The Python emitter's graft over a corpus of references: the same protocol as the C++ and Rust harnesses.

    python -m tests.fuzz.graft_python PLAN REFERENCES

PLAN has one graft call a line (checkpoint, token_idx, layer (-1: none),
dtype, dimensions joined by commas; tab-separated), REFERENCES one reference
a line. For each reference the run is configured anew (logging to /dev/null,
every call selected), each call's array starts as bytes 0xA5 (GRAFT_MUTANTS_LOG,
when set, names the log file instead of /dev/null, written in full mode), and one line
is printed: a 0 or 1 per call (what orchlog.graft returned), a tab, and each
array's bytes after the call in hex, joined by commas. Last, on stderr, the
process's peak resident memory (VmHWM), where Linux tells it. orchlog.graft goes
through the C++ core (orchlog._native), as an engine's does.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

import orchlog
from orchlog.encoding.dtypes import storage_dtype


def main(plan_path: str, list_path: str) -> None:
    calls = []
    with open(plan_path, encoding="utf-8") as f:
        for line in f:
            name, token_text, layer_text, dtype_name, dims = line.rstrip("\n").split("\t")
            shape = tuple(int(d) for d in dims.split(",") if d)
            calls.append((name, int(token_text), int(layer_text), dtype_name, shape))
    with open(list_path, encoding="utf-8") as f:
        references = [line.rstrip("\n") for line in f]
    for reference in references:
        log = os.environ.get("GRAFT_MUTANTS_LOG", os.devnull)
        orchlog.configure(path=log, mode="full", team="mutants", graft_from=reference, graft_select="checkpoint=*")
        flags, tensors = [], []
        for checkpoint, token, layer, dtype, shape in calls:
            numel = int(np.prod(shape, dtype=np.int64))
            array = np.frombuffer(bytearray(b"\xa5" * numel * storage_dtype(dtype).itemsize), storage_dtype(dtype))
            array = array.reshape(shape)
            keys: dict[str, Any] = {"token_idx": None if token < 0 else token, "layer": None if layer < 0 else layer}
            grafted = orchlog.graft(checkpoint, array, dtype=dtype, **keys)
            flags.append("1" if grafted else "0")
            tensors.append(array.tobytes().hex())
        sys.stdout.write("".join(flags) + "\t" + ",".join(tensors) + "\n")
    orchlog.close()
    try:  # this process's own peak (VmHWM starts afresh at exec, unlike getrusage's maxrss)
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    sys.stderr.write(f"graft_mutants: peak {line}")
    except OSError:
        pass


if __name__ == "__main__":
    main(*sys.argv[1:3])
