"""open_trace: read any supported trace, file or directory, found by content."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from orchlog.errors import OrchlogError
from orchlog.read import formats
from orchlog.read.batch import RecordBatch
from orchlog.read.trace import Location, Trace, TraceRecord


def open_trace(path: str | os.PathLike[str]) -> Trace:
    """Open a trace file or a directory of trace files (read as one trace, files in name order)."""
    p = Path(path)
    if not p.exists():
        raise OrchlogError(f"{p} does not exist")
    if p.is_dir():
        return _open_directory(p)
    if not os.access(p, os.R_OK):
        raise OrchlogError(f"{p} is not readable (permission denied)")
    return formats.detect(p).open(p)


def _trace_files(root: Path) -> list[Path]:
    files: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        files.extend(Path(dirpath) / f for f in sorted(filenames) if not f.startswith("."))
    return files


def _open_directory(root: Path) -> Trace:
    found: list[tuple[Path, formats.Format | None, str]] = []
    for f in _trace_files(root):
        try:
            found.append((f, formats.detect(f), ""))
        except OrchlogError as exc:
            found.append((f, None, str(exc)))
    # Files a format reads along with its own (metadata.json beside logits) are not strays.
    companions = {(f.parent, name) for f, fmt, _ in found if fmt for name in fmt.companions}
    members = [fmt.open(f) for f, fmt, _ in found if fmt]
    if not members:
        raise OrchlogError(f"{root}: no trace files inside")

    def batches(trace: Trace) -> Iterator[RecordBatch]:
        done = 0
        for m in members:
            for batch in m.batches():
                trace.bytes_read = done + m.bytes_read
                yield batch
            done += m.size or 0
            trace.bytes_read = done
            trace.headers.extend(m.headers)
            trace.diagnostics.extend(m.diagnostics)

    kinds = sorted({m.format for m in members})
    trace = Trace(str(root), "+".join(kinds), batches=batches, size=sum(m.size or 0 for m in members))
    keys = {m.default_key for m in members}
    trace.default_key = keys.pop() if len(keys) == 1 else None
    for f, fmt, why in found:
        if fmt is None and (f.parent, f.name) not in companions:
            trace.report(Location(str(f)), f"not read: {why}")
    return trace


__all__ = ["open_trace", "Trace", "TraceRecord"]
