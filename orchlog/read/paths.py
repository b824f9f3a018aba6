"""open_trace: read any supported trace, file or directory, found by content."""

from __future__ import annotations

import fnmatch
import itertools
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from orchlog.errors import OrchlogError
from orchlog.read import formats
from orchlog.read.batch import RecordBatch, coalesced
from orchlog.read.files import regular_files
from orchlog.read.trace import BATCH_VALUES, Diagnostic, Location, Trace, TraceRecord, chunks


def open_trace(path: str | os.PathLike[str]) -> Trace:
    """Open a trace file or a directory of trace files (read as one trace, files in name order).

    Anything else (a FIFO, a device, a socket) is an OrchlogError, found without blocking."""
    p = Path(path)
    if not p.exists():
        raise OrchlogError(f"{p} does not exist")
    if p.is_dir():
        return _open_directory(p)
    if not os.access(p, os.R_OK):
        raise OrchlogError(f"{p} is not readable (permission denied)")
    return formats.detect(p).open(p)


def open_first(path: str | os.PathLike[str]) -> Trace:
    """What a look at a trace's start reads: the file itself, or a directory's first trace file (the
    records of many files would be gathered into its first batch)."""
    p = Path(path)
    if p.is_dir():
        return directory_members(p)[0][0]
    return open_trace(p)


def directory_members(root: Path) -> tuple[list[Trace], list[Diagnostic]]:
    """The trace files of a directory, opened, in the order a directory trace reads them, and what is
    said about every other file there (why it is not read)."""
    found: list[tuple[Path, formats.Format | None, str]] = []
    regular, skipped = regular_files(root)
    for f in regular:
        try:
            found.append((f, formats.detect(f), ""))
        except OrchlogError as exc:
            found.append((f, None, str(exc)))
    # Files a format reads along with its own (metadata.json beside logits, the safetensors beside a debugger
    # tree) are neither strays nor traces of their own: globs relative to the directory of the file that
    # claims them, never claiming that file itself.
    claimers = [(g, fmt.companions) for g, fmt, _ in found if fmt is not None and fmt.companions]
    claimed = {f for f, _, _ in found if _claimed_by_another(f, claimers)}
    members = []
    for i, (f, fmt, _) in enumerate(found):
        if fmt is not None and f not in claimed:
            try:
                members.append(fmt.open(f))
            except OrchlogError as exc:  # one unreadable file (a Parquet file without footer) is that file's problem
                found[i] = (f, None, str(exc))
    if not members:
        reasons = [why for _, fmt, why in found if fmt is None]
        raise OrchlogError(f"{root}: no trace files inside" + (f" (first: {reasons[0]})" if reasons else ""))
    strays = [
        Diagnostic(Location(str(f)), f"not read: {why}") for f, fmt, why in found if fmt is None and f not in claimed
    ]
    strays += [Diagnostic(Location(str(f)), f"not read: {why}") for f, why in skipped]
    return members, strays


def _claimed_by_another(f: Path, claimers: list[tuple[Path, tuple[str, ...]]]) -> bool:
    """Whether a companion glob of another file's format names f (relative to that file's directory)."""
    for g, companions in claimers:
        if g == f:
            continue
        try:
            rel = f.relative_to(g.parent).as_posix()
        except ValueError:
            continue
        if any(fnmatch.fnmatchcase(rel, pattern) for pattern in companions):
            return True
    return False


def _open_directory(root: Path) -> Trace:
    members, strays = directory_members(root)

    def batches(trace: Trace, rows: int, tensors: bool) -> Iterator[RecordBatch]:
        return coalesced(_members_batches(trace, members, rows, tensors), rows, BATCH_VALUES)

    kinds = sorted({m.format for m in members})
    trace = Trace(str(root), "+".join(kinds), batches=batches, size=sum(m.size or 0 for m in members))
    keys = {m.default_key for m in members}
    trace.default_key = keys.pop() if len(keys) == 1 else None
    trace.first_file = members[0].path
    trace.diagnostics.extend(strays)
    return trace


def _members_batches(trace: Trace, members: list[Trace], rows: int, tensors: bool) -> Iterator[RecordBatch]:
    """The members' batches in turn. A tool that writes a file per tensor (SGLang's dumper, msprobe) gives a
    record or a batch per file, and a batch costs each of its consumers a round: the records of consecutive
    files read record by record are chunked together as one file's would be (the caller merges small
    batches, `coalesced`)."""
    read = 0

    def finished(m: Trace) -> None:
        nonlocal read
        read += m.size or 0
        trace.bytes_read = read
        # A tool that writes a file per tensor (SGLang's dumper) gives each the same header: kept once.
        trace.headers.extend(h for h in m.headers if "tool" not in h or h not in trace.headers)
        trace.diagnostics.extend(m.diagnostics)

    def records(run: Iterable[Trace]) -> Iterator[TraceRecord]:
        for m in run:
            yield from m
            finished(m)

    for by_records, run in itertools.groupby(members, key=lambda m: m.reads_records):
        if by_records:
            yield from (RecordBatch.from_records(chunk) for chunk in chunks(records(run), rows, BATCH_VALUES))
            continue
        for m in run:
            for batch in m.batches(rows=rows, tensors=tensors):
                trace.bytes_read = read + m.bytes_read
                yield batch
            finished(m)


__all__ = ["open_trace", "Trace", "TraceRecord"]
