"""The records around a divergence: for each target pair, every record of its token and step (its inputs,
the stage before and after it, every layer of its checkpoint), and the records of the tokens within
`WINDOW` positions of it at its layer, the layer before and outside the layers (the same checkpoint at
other tokens, and those tokens' inputs).

They come from what the compare's walk kept (keeper.py) when it could keep it all; otherwise the two
traces are read once more (`gather`), stopping where the walk's extents say the needed tokens end.
Tensors stay on disk until a signature loads them. At most `MAX_ROWS` records per side are taken; the
rest of a very wide run is left out and said so. Traces that cannot be read twice (a pipe) and were too
large to keep are not diagnosed.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

import numpy as np

from orchlog.read.batch import NONE, RecordBatch
from orchlog.read.paths import open_trace
from orchlog.read.trace import Trace
from orchlog.records import record

T = TypeVar("T")

WINDOW = 8
MAX_ROWS = 50_000
READ_ROWS = 512


@record(frozen=True)
class Target:
    """A pair to diagnose, by its canonical key (after the name maps)."""

    checkpoint: str
    layer: int | None
    stage: str | None
    token_idx: int | None
    step: int | None
    rank: int = 0


@record
class Neighbourhood:
    a: RecordBatch  # the reference's records kept
    b: RecordBatch  # ours
    truncated: bool = False


class NotRereadable(Exception):
    """A trace that cannot be read a second time (a pipe)."""


def rereadable(trace: Trace) -> bool:
    try:
        mode = os.stat(trace.path).st_mode
    except OSError:
        return False
    return stat.S_ISREG(mode) or stat.S_ISDIR(mode)


def _as_int(v: int | None) -> int:
    return NONE if v is None else int(v)


def select(batch: RecordBatch, targets: list[Target], window: int = WINDOW) -> np.ndarray:
    """Rows of a (renamed) batch that some target needs."""
    keep = np.zeros(len(batch), dtype=bool)
    for t in targets:
        if t.token_idx is None:
            same = batch.token_idx == NONE
            if t.step is not None:
                same &= batch.step == t.step
            keep |= same & (batch.rank == t.rank)
            continue
        tok = t.token_idx
        at_token = (batch.token_idx == tok) & (batch.rank == t.rank)
        if t.step is not None:
            at_token &= (batch.step == t.step) | (batch.step == NONE)
        near = (np.abs(batch.token_idx - tok) <= window) & (batch.token_idx != NONE) & (batch.rank == t.rank)
        if t.layer is not None:
            near &= np.isin(batch.layer, [t.layer, t.layer - 1, NONE])
        keep |= at_token | near
    return np.flatnonzero(keep)


def needed_tokens(targets: list[Target], window: int = WINDOW) -> set[int | None]:
    out: set[int | None] = set()
    for t in targets:
        out |= {None} if t.token_idx is None else set(range(max(t.token_idx - window, 0), t.token_idx + window + 1))
    return out


def select_from(
    batches: Iterable[RecordBatch], targets: list[Target], window: int = WINDOW, max_rows: int = MAX_ROWS
) -> tuple[RecordBatch, bool]:
    """The rows of one side's batches (in order) that the targets need, at most `max_rows`; and whether
    some were left out."""
    parts: list[RecordBatch] = []
    held, cut = 0, False
    for batch in batches:
        rows = select(batch, targets, window)
        if not len(rows):
            continue
        if held + len(rows) > max_rows:
            rows, cut = rows[: max(max_rows - held, 0)], True
        parts.append(batch.take(rows))
        held += len(rows)
        if held >= max_rows:
            break
    return (RecordBatch.concat(parts) if parts else RecordBatch.empty()), cut


Prepare = Callable[[RecordBatch], RecordBatch]


def _identity(batch: RecordBatch) -> RecordBatch:
    return batch


def _batches(trace: Trace, prepare: Prepare, stop: int | None) -> Iterator[RecordBatch]:
    """The trace's batches as the compare saw them (`prepare`: its maps, offsets, gathering), up to `stop`.

    A `prepare` that holds records back (gathering shards, deriving checkpoints) has a `flush()` that
    hands them over at the end, as in the compare's walk."""
    # Small batches, so that the read can stop soon after the last record it needs.
    for batch in open_trace(trace.path).batches(rows=READ_ROWS):
        if stop is not None and len(batch) and int(batch.order[0]) > stop:
            break
        yield prepare(batch)
        if stop is not None and len(batch) and int(batch.order[-1]) >= stop:
            break  # asking for the next batch would read (a window of 16 MiB) past the last record needed
    flush = getattr(prepare, "flush", None)
    if flush is not None:
        yield flush()


def gather(
    trace_a: Trace,
    trace_b: Trace,
    targets: list[Target],
    prepare: Prepare | tuple[Prepare, Prepare] = _identity,
    window: int = WINDOW,
    max_rows: int = MAX_ROWS,
    stop_after: tuple[int | None, int | None] = (None, None),
) -> Neighbourhood:
    """Read both traces again and keep the records the targets need, each batch first through `prepare`
    (one for both traces, or one per trace: fresh ones, configured as the compare's were).

    `stop_after` (per trace, a file-order position: see `extent.Extent`) ends a trace's reading once no
    record the targets need can follow; None reads it to the end."""
    for trace in (trace_a, trace_b):
        if not rereadable(trace):
            raise NotRereadable(trace.path)
    prepares = prepare if isinstance(prepare, tuple) else (prepare, prepare)

    def keep(trace: Trace, side_prepare: Prepare, stop: int | None) -> tuple[RecordBatch, bool]:
        return select_from(_batches(trace, side_prepare, stop), targets, window, max_rows)

    job_a, job_b = zip((trace_a, trace_b), prepares, stop_after)
    if prepares[0] is prepares[1] and prepares[0] is not _identity:  # one stateful prepare: one trace at a time
        (a, cut_a), (b, cut_b) = keep(*job_a), keep(*job_b)
    else:  # both traces at once: the parsers release the GIL, so the second read takes about half as long
        (a, cut_a), (b, cut_b) = _both(lambda: keep(*job_a), lambda: keep(*job_b))
    return Neighbourhood(a, b, cut_a or cut_b)


def _both(first: Callable[[], T], second: Callable[[], T]) -> tuple[T, T]:
    """first() on this thread while second() runs on another; an exception of either is raised here once both
    have ended. (A thread of its own rather than concurrent.futures, whose import, with the logging it
    brings, took 4 ms of a diverging compare.)"""
    ended: list[tuple[Any, BaseException | None]] = []

    def run() -> None:
        try:
            ended.append((second(), None))
        except BaseException as exc:
            ended.append((None, exc))

    thread = threading.Thread(target=run, name="orchlog-diagnose", daemon=True)
    thread.start()
    try:
        a = first()
    finally:
        thread.join()
    b, exc = ended[0]
    if exc is not None:
        raise exc
    return a, b
