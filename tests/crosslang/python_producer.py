"""Log every tensor of a cross-language tensor file (tests/crosslang/) with `orchlog.log` (`orchlog.graft` for a
tensor marked `"graft": true`).

The env knobs decide where and how; the file's `config` becomes the run
header's. Exits 1 when the emitter counted an error (a malformed knob, an
invalid selector, a record not written), as the other producers do.

    python -m tests.crosslang.python_producer tests/crosslang/tensors.json

A meta key that the file repeats reaches `orchlog.log` once, with its later
value: a Python dict cannot hold it twice, and later-wins is the format's rule.
"""

from __future__ import annotations

import json
import sys

import numpy as np

import orchlog
from orchlog import schema_gen
from orchlog.emit import api as emitter
from tests.vectors_io import meta_from_json


def log_tensor(tensor: dict) -> None:
    storage = schema_gen.DTYPE_NUMPY[tensor["dtype"]]  # bf16 travels as its bits
    array = np.frombuffer(bytearray.fromhex(tensor["data_hex"]), dtype=storage).reshape(tensor["shape"])
    token_idx, layer, stage, step = (tensor.get(part) for part in schema_gen.POSITIONAL_KEY_PARTS)
    (orchlog.graft if tensor.get("graft") else orchlog.log)(
        tensor["checkpoint"],
        array,
        token_idx,
        layer,
        stage,
        step,
        meta=meta_from_json(dict(tensor["meta"])),
        dtype="bf16" if tensor["dtype"] == "bf16" else None,
        **{
            part: tensor[part]
            for part in schema_gen.KEY_PARTS[len(schema_gen.POSITIONAL_KEY_PARTS) :]
            if part in tensor
        },
    )


def main(path: str) -> int:
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    orchlog.configure(config=meta_from_json(doc["config"]))  # every other setting from the env knobs
    for tensor in doc["tensors"]:
        log_tensor(tensor)
    emitter.close()
    return 0 if emitter.stats().errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
