"""Which records each part of a partitioned compare takes, and which files it reads for them.

Parts split the alignment key's space by rank: every record of rank r, on
both sides, belongs to one part, so that every pair falls within one part
and the merged parts pair exactly what one process pairs. That needs `rank`
in the key and no tensor-parallel gathering (a `[shards]` map, or records that
say they are pieces with their shard fields, join ranks into one record);
otherwise the plan is one part holding everything. Shard fields can appear
in any record, so the parts notice them as they read, and the compare is
then walked again in one part (orchlog/scale/run.py).

Which ranks a file holds is read from the file, cheaply: a hive-style
`rank=N` directory in its path (a partitioned Parquet dataset), else the
ranks of its first batch of records. A file found later to hold other ranks
too is caught when the parts are merged (orchlog/scale/run.py), not dropped.
Ranks are dealt out to the parts by the bytes their files hold, largest
first; a file holding several ranks is read by every part that needs it.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from orchlog.compare import CompareOptions
from orchlog.compare.namemap import load_maps
from orchlog.compare.shards import says_layout
from orchlog.read.paths import directory_members, open_trace

_HIVE_RANK = re.compile(r"^rank=(\d+)$")


@dataclasses.dataclass(frozen=True)
class PartSpec:
    """One part: the ranks it takes (None: every record) and the files of each side it reads, with
    each file's place among its side's files."""

    ranks: frozenset[int] | None
    files_a: tuple[tuple[int, str], ...]
    files_b: tuple[tuple[int, str], ...]
    nbytes: int = 0


def side_files(path: str) -> list[str]:
    """The files a trace (file or directory) is read from, in the order it reads them."""
    p = Path(path)
    if not p.is_dir():
        return [str(p)]
    members, _ = directory_members(p)
    return [m.path for m in members]


def file_ranks(path: str) -> frozenset[int] | None:
    """The ranks a file holds, as far as its path or its first records say; None when its first records
    are tensor-parallel pieces (gathered across ranks)."""
    for part in Path(path).parts:
        m = _HIVE_RANK.match(part)
        if m:
            return frozenset([int(m.group(1))])
    trace = open_trace(path)
    first = next(iter(trace.batches()), None)
    if first is None:
        return frozenset()
    if says_layout(first).any():
        return None
    return frozenset(int(r) for r in set(first.rank.tolist()))


def partitionable(key: tuple[str, ...], opts: CompareOptions) -> bool:
    """Whether records of different ranks never meet: rank in the key, and no map gathers shards."""
    maps = (opts.maps_a + opts.maps, opts.maps_b + opts.maps)
    return "rank" in key and not any(load_maps(m).shards for m in maps)


def plan(a: str, b: str, key: tuple[str, ...], opts: CompareOptions, parts: int) -> list[PartSpec]:
    files = {side: side_files(p) for side, p in (("a", a), ("b", b))}
    every = {side: tuple(enumerate(fs)) for side, fs in files.items()}
    total = sum(_size(f) for fs in files.values() for f in fs)
    if parts <= 1 or not partitionable(key, opts):
        return [PartSpec(None, every["a"], every["b"], total)]
    surveyed = {side: [file_ranks(f) for f in fs] for side, fs in files.items()}
    if None in surveyed["a"] or None in surveyed["b"]:  # a file's first records are tensor-parallel pieces
        return [PartSpec(None, every["a"], every["b"], total)]
    ranks = {side: [rs or frozenset() for rs in found] for side, found in surveyed.items()}
    weight: dict[int, float] = {}
    for side, fs in files.items():
        for f, rs in zip(fs, ranks[side]):
            for r in rs:
                weight[r] = weight.get(r, 0.0) + _size(f) / len(rs)
    groups: list[set[int]] = [set() for _ in range(min(parts, len(weight)) or 1)]
    load = [0.0] * len(groups)
    for r in sorted(weight, key=lambda r: (-weight[r], r)):
        k = load.index(min(load))
        groups[k].add(r)
        load[k] += weight[r]
    out = []
    for k, group in enumerate(groups):
        chosen = {
            side: tuple(
                (i, f) for i, (f, rs) in enumerate(zip(files[side], ranks[side])) if rs & group or (not rs and k == 0)
            )
            for side in files
        }
        nbytes = sum(_size(f) for fs in chosen.values() for _, f in fs)
        out.append(PartSpec(frozenset(group), chosen["a"], chosen["b"], nbytes))
    return out


def _size(path: str) -> int:
    try:
        return Path(path).stat().st_size
    except OSError:
        return 0
