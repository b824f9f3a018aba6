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

When that leaves fewer parts than asked (one rank, or ranks that meet) and
every file is Parquet, each group of ranks is split further into ranges of
token positions, since `token_idx` is in the key too: a part keeps the
records of its range and reads only the row groups whose statistics can
hold one (the cuts balance the bytes of the row groups across the ranges,
as their statistics place them). The statistics only save reading: which
records a part keeps is decided record by record, so a file without them is
split just as correctly, only read whole by every part.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np

from orchlog.compare import CompareOptions
from orchlog.errors import OrchlogError
from orchlog.maps.namemap import load_maps
from orchlog.maps.shards import says_layout
from orchlog.read import formats
from orchlog.read.batch import NONE
from orchlog.read.paths import directory_members, open_trace
from orchlog.records import record

_HIVE_RANK = re.compile(r"^rank=(\d+)$")
PARQUET = "orchlog-parquet"


@record(frozen=True)
class TokenRange:
    """Aligned token positions (token_idx moved by the side's token shift) from `lo` up to `hi`
    (excluded; None: no bound), and with `untokened` the records that have no token_idx."""

    lo: int | None
    hi: int | None
    untokened: bool

    def keeps(self, aligned: np.ndarray) -> np.ndarray:
        """Which of these aligned positions (NONE: no position) fall in the range."""
        has = np.not_equal(aligned, NONE)
        inside: np.ndarray = has.copy()
        if self.lo is not None:
            inside &= aligned >= self.lo
        if self.hi is not None:
            inside &= aligned < self.hi
        if self.untokened:
            inside |= ~has
        return inside


@record(frozen=True)
class PartSpec:
    """One part: the ranks it takes (None: every record), its token range (None: every record), and
    the files of each side it reads, with each file's place among its side's files."""

    ranks: frozenset[int] | None
    files_a: tuple[tuple[int, str], ...]
    files_b: tuple[tuple[int, str], ...]
    nbytes: int = 0
    tokens: TokenRange | None = None


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


def plan(
    a: str, b: str, key: tuple[str, ...], opts: CompareOptions, parts: int, by_rank: bool = True
) -> list[PartSpec]:
    """The parts of a compare of traces a and b: by rank where `by_rank` and the key allow, then by
    token range where that leaves fewer than `parts` and every file is Parquet."""
    files = {side: side_files(p) for side, p in (("a", a), ("b", b))}
    every = {side: tuple(enumerate(fs)) for side, fs in files.items()}
    total = sum(_size(f) for fs in files.values() for f in fs)
    groups = _rank_groups(files, key, opts, parts) if by_rank and parts > 1 else None
    if groups is None:
        out = [PartSpec(None, every["a"], every["b"], total)]
    else:
        out = []
        for k, (group, ranks) in enumerate(groups):
            chosen = {
                side: tuple(
                    (i, f)
                    for i, (f, rs) in enumerate(zip(files[side], ranks[side]))
                    if rs & group or (not rs and k == 0)
                )
                for side in files
            }
            nbytes = sum(_size(f) for fs in chosen.values() for _, f in fs)
            out.append(PartSpec(frozenset(group), chosen["a"], chosen["b"], nbytes))
    ways = parts // len(out)
    if ways < 2 or "token_idx" not in key or not all(_is_parquet(f) for fs in files.values() for f in fs):
        return out
    shift_a = max(-opts.token_offset, 0)
    return [
        dataclasses.replace(spec, tokens=r, nbytes=spec.nbytes // len(ranges))
        for spec in out
        for ranges in [token_ranges([f for _, f in spec.files_a], shift_a, ways)]
        for r in ranges
    ]


def _rank_groups(
    files: dict[str, list[str]], key: tuple[str, ...], opts: CompareOptions, parts: int
) -> list[tuple[set[int], dict[str, list[frozenset[int]]]]] | None:
    """Ranks dealt out to at most `parts` groups by bytes, with each file's ranks; None when records
    of different ranks can meet."""
    if not partitionable(key, opts):
        return None
    surveyed = {side: [file_ranks(f) for f in fs] for side, fs in files.items()}
    if None in surveyed["a"] or None in surveyed["b"]:  # a file's first records are tensor-parallel pieces
        return None
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
    return [(g, ranks) for g in groups]


def token_ranges(paths: list[str], shift: int, ways: int) -> list[TokenRange]:
    """`ways` ranges of aligned token positions that split the bytes of these Parquet files' row groups
    about evenly, as their token_idx statistics place them (each row group's bytes spread evenly over
    its positions); the first range also takes the records without a position. One range holding
    everything when no row group has statistics."""
    spans = [(lo + shift, hi + shift, nbytes) for p in paths for lo, hi, nbytes in _token_spans(p)]
    whole = [TokenRange(None, None, True)]
    if not spans:
        return whole
    first = min(lo for lo, _, _ in spans)
    last = max(hi for _, hi, _ in spans)
    if last - first > 1 << 24:  # positions that far apart are not a token count: leave it whole
        return whole
    density = np.zeros(last - first + 2)
    for lo, hi, nbytes in spans:
        density[lo - first] += nbytes / (hi - lo + 1)
        density[hi - first + 1] -= nbytes / (hi - lo + 1)
    weight = np.cumsum(np.cumsum(density[:-1]))  # bytes at positions first..last, accumulated
    cuts = sorted({first + int(np.searchsorted(weight, weight[-1] * j / ways, side="right")) for j in range(1, ways)})
    cuts = [c for c in cuts if first < c <= last]
    bounds: list[int | None] = [None, *cuts, None]
    return [TokenRange(lo, hi, i == 0) for i, (lo, hi) in enumerate(zip(bounds, bounds[1:]))]


def _token_spans(path: str) -> list[tuple[int, int, int]]:
    """(min, max, bytes) of token_idx in each row group of a Parquet file whose statistics say them."""
    import pyarrow.parquet as pq

    # pyarrow costs a third of a second to import: only when a Parquet file is planned.
    from orchlog.parquet.schema import COLUMN_OF

    try:
        meta = pq.ParquetFile(path).metadata
    except (OSError, ValueError):
        return []
    column = COLUMN_OF["token_idx"]
    names = [meta.schema.column(j).path for j in range(meta.num_columns)]
    if column not in names:
        return []
    j = names.index(column)
    out = []
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        stats = group.column(j).statistics
        if stats is not None and stats.has_min_max:
            out.append((int(stats.min), int(stats.max), int(group.total_byte_size)))
    return out


def _is_parquet(path: str) -> bool:
    try:
        return formats.detect(Path(path)).name == PARQUET
    except (OSError, OrchlogError):
        return False


def _size(path: str) -> int:
    try:
        return Path(path).stat().st_size
    except OSError:
        return 0
