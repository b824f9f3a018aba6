"""--dump-raw: the two tensors of a pair as .npy files, named from the pair's key.

File names are built from the key fields with every character outside
[A-Za-z0-9._-] replaced, leading dots removed and a hash of the full key
appended, so a checkpoint named `../../x` stays inside the directory and two
keys that clean up alike still get two files. Arrays are saved with
allow_pickle=False: plain numbers only.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from orchlog.compare.pairview import PairView
from orchlog.errors import OrchlogError
from orchlog.read.trace import TraceRecord

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
MAX_STEM = 120


def safe_stem(view: PairView) -> str:
    key = view.key()
    parts = [str(key["checkpoint"])]
    for field, tag in (("layer", "L"), ("stage", "S"), ("token_idx", "t"), ("step", "step"), ("rank", "r")):
        if key[field] is not None:
            parts.append(f"{tag}{key[field]}")
    text = "_".join(parts)
    clean = _UNSAFE.sub("_", text).lstrip(".-_")[:MAX_STEM] or "pair"
    import hashlib  # here: OpenSSL's load costs every compare's start, and few compares dump

    digest = hashlib.blake2s(repr(sorted(key.items(), key=str)).encode(), digest_size=4).hexdigest()
    return f"{clean}.{digest}"


def tensor_for_dump(rec: TraceRecord) -> tuple[np.ndarray, bool]:
    """The whole tensor (shaped) when at hand, else the leading values; and whether it is whole."""
    try:
        full = rec.tensor()
    except OSError:  # bytes damaged on disk: what the summary holds is still worth saving
        full = None
    if full is not None:
        return full, True
    values = np.asarray(rec.values if rec.values is not None else [], dtype=np.float64)
    if rec.numel is not None and values.size == rec.numel:
        fits = rec.shape is not None and math.prod(rec.shape) == values.size
        return values.reshape(rec.shape if fits else (-1,)), True
    return values, False


class Dumper:
    def __init__(self, directory: str | Path) -> None:
        self.dir = Path(directory)
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OrchlogError(f"--dump-raw {directory}: cannot create the directory ({exc.strerror})") from None
        self.written: list[str] = []

    def dump(self, view: PairView, sides: tuple[str, str] = ("a", "b")) -> list[str]:
        if view.records is None:
            return []
        out = []
        stem = safe_stem(view)
        for rec, side in zip(view.records, sides):
            arr, whole = tensor_for_dump(rec)
            path = self.dir / f"{stem}.{side}{'' if whole else '.leading'}.npy"
            if path.resolve().parent != self.dir.resolve():  # belt and braces: the stem cannot hold a separator
                raise OrchlogError(f"refusing to write outside {self.dir}: {path}")
            np.save(path, np.ascontiguousarray(arr), allow_pickle=False)
            out.append(str(path))
        self.written.extend(out)
        return out
