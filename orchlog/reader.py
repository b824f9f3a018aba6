"""open_trace: read any supported trace, file or directory, found by content."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

from orchlog import formats
from orchlog.errors import OrchlogError
from orchlog.trace import Trace, TraceRecord


def open_trace(path: str | os.PathLike[str]) -> Trace:
    """Open a trace file or a directory of trace files (read as one trace, files in name order)."""
    p = Path(path)
    if not p.exists():
        raise OrchlogError(f"{p} does not exist")
    if p.is_dir():
        return _open_directory(p)
    return formats.detect(p).open(p)


def _trace_files(root: Path) -> list[Path]:
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        files.extend(Path(dirpath) / f for f in sorted(filenames) if not f.startswith("."))
    return files


def _open_directory(root: Path) -> Trace:
    members: list[Trace] = []
    skipped: list[tuple[Path, str]] = []
    for f in _trace_files(root):
        try:
            members.append(formats.detect(f).open(f))
        except OrchlogError as exc:
            skipped.append((f, str(exc)))
    if not members:
        raise OrchlogError(f"{root}: no trace files inside")
    kinds = sorted({m.format for m in members})

    def records(trace: Trace) -> Iterator[TraceRecord]:
        for m in members:
            yield from m
            trace.headers.extend(m.headers)
            trace.diagnostics.extend(m.diagnostics)

    trace = Trace(str(root), "+".join(kinds), records)
    from orchlog.trace import Location

    for f, why in skipped:
        trace.report(Location(str(f)), f"not read: {why}")
    return trace
