"""Every graded pair of one run against the reference, kept as columns: the raw material of a graft report.

A graft report needs more than `compare`'s findings: for each pair, where it
sits in the run under test (its execution order there) and whether that
record was grafted, so that the stages between a graft point and a record
can be counted (local_error.py). The walk is `compare`'s --
the same sides, maps, windows, alignment, metrics and grading -- but keeps
a few scalars per pair (about 80 bytes) instead of a report.
"""

from __future__ import annotations

import os

import numpy as np

from orchlog.compare.grading.tiers import grade
from orchlog.compare.options import CompareOptions
from orchlog.compare.plan import WalkPlan
from orchlog.read.batch import NONE, RecordBatch
from orchlog.read.paths import open_trace
from orchlog.read.trace import Trace
from orchlog.records import record
from orchlog.tolerances.rules import Tolerances

_INT_COLUMNS = ("layer", "token_idx", "step", "order", "ref_order", "grafted", "tier", "rule")
_FLOAT_COLUMNS = ("severity", "value", "lo", "hi", "max_abs")
_TEXT_COLUMNS = ("checkpoint", "stage")


@record
class LocalPairs:
    """One row per pair: the reference's key (canonical names) and execution order, the run's execution order
    and graft marker (1 grafted, 0 not, -1 the record does not say), and the pair's grade and max |difference|."""

    path: str
    columns: dict[str, np.ndarray]
    unmatched_reference: int  # reference records without a partner in the run
    unmatched_run: int
    malformed: int  # lines or records either reader could not use

    def __len__(self) -> int:
        return len(self.columns["order"])

    @property
    def grafted(self) -> np.ndarray:
        marked: np.ndarray = self.columns["grafted"] == 1
        return marked


def _text(batch: RecordBatch, field: str, rows: np.ndarray) -> np.ndarray:
    out = np.empty(len(rows), dtype=object)
    out[:] = getattr(batch, field)[rows].values()
    return out


def _exec_order(batch: RecordBatch, rows: np.ndarray) -> np.ndarray:
    """The emitter's counter where the record has one, else its place in the file."""
    seq = batch.seq[rows]
    order: np.ndarray = np.where(seq >= 0, seq, batch.order[rows])
    return order


def _graft_marks(batch: RecordBatch, rows: np.ndarray) -> np.ndarray:
    # Traces written before the schema had the field have no such column: they say nothing.
    column = getattr(batch, "grafted", None)
    if column is None:
        return np.full(len(rows), NONE, dtype=np.int64)
    marks: np.ndarray = np.asarray(column)[rows].astype(np.int64)
    return marks


def walk(
    reference: Trace | str | os.PathLike[str],
    run: Trace | str | os.PathLike[str],
    options: CompareOptions | None = None,
    tolerances: Tolerances | None = None,
) -> LocalPairs:
    """Align `run` with `reference` as `orchlog compare` does and keep every pair's row."""
    opts = options or CompareOptions()
    trace_a = reference if isinstance(reference, Trace) else open_trace(reference)
    trace_b = run if isinstance(run, Trace) else open_trace(run)
    plan = WalkPlan.of(trace_a, trace_b, opts, tolerances)
    walk = plan.pairs(trace_a, trace_b)
    side_a, side_b = walk.sides
    parts: list[dict[str, np.ndarray]] = []
    for rnd, table in walk:
        g = grade(table, plan.tolerances)
        ia, ib = rnd.ia, rnd.ib
        parts.append(
            {
                "checkpoint": _text(rnd.a, "checkpoint", ia),
                "stage": _text(rnd.a, "stage", ia),
                "layer": rnd.a.layer[ia].astype(np.int64),
                "token_idx": rnd.a.token_idx[ia].astype(np.int64),
                "step": rnd.a.step[ia].astype(np.int64),
                "order": _exec_order(rnd.b, ib),
                "ref_order": _exec_order(rnd.a, ia),
                "grafted": _graft_marks(rnd.b, ib),
                "tier": g.tier.astype(np.int64),
                "rule": g.rule.astype(np.int64),
                "severity": g.severity,
                "value": g.value,
                "lo": g.lo if g.lo is not None else g.value,
                "hi": g.hi if g.hi is not None else g.value,
                "max_abs": table.m["max_abs"],
            }
        )
    columns = {
        name: np.concatenate([p[name] for p in parts])
        if parts
        else np.zeros(0, dtype=object if name in _TEXT_COLUMNS else np.float64 if name in _FLOAT_COLUMNS else np.int64)
        for name in (*_TEXT_COLUMNS, *_INT_COLUMNS, *_FLOAT_COLUMNS)
    }
    return LocalPairs(
        path=trace_b.path,
        columns=columns,
        unmatched_reference=len(walk.aligner.leftover_a) + len(side_a.held_out),
        unmatched_run=len(walk.aligner.leftover_b) + len(side_b.held_out),
        malformed=len(trace_a.diagnostics)
        + len(side_a.diagnostics)
        + len(trace_b.diagnostics)
        + len(side_b.diagnostics),
    )
