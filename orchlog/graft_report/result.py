"""GraftReport: each stage's local error (runs grafted from the reference) beside its end-to-end error.

    from orchlog.graft_report import graft_report
    from orchlog.report import render_text
    report = graft_report("llama.bin", ["grafted.bin"], plain="ours.bin")
    print(render_text(report))        # or render_markdown, render_html; report.to_json()
    report.largest                    # the StageRow with the largest local error, or None

What each record measures is in local_error.py; the JSON
keys and the worked example are in docs/graft.md.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable, Sequence
from typing import Any

from orchlog.compare import CompareOptions
from orchlog.graft_report.local_error import (
    GRAFTED_ONLY,
    INHERITED,
    INTRODUCED,
    INTRODUCED_SINCE,
    MISSING,
    NO_GRAFT_BEFORE,
    UNDECIDED,
    WITHIN,
    Measure,
    RunCoverage,
    StageRow,
    largest_local,
    per_layer,
    stage_label,
    stage_rows,
)
from orchlog.graft_report.pairs import LocalPairs, walk
from orchlog.numbers import json_number
from orchlog.read.trace import Trace
from orchlog.records import record
from orchlog.tolerances.rules import Tolerances, load_tolerances

REPORT_VERSION = "orchlog-graft/1"
# ok: every local measurement proven within tolerance; diverged: some stage's own error proven beyond it;
# undecided: none beyond, some not proven either way; no_graft: no run holds a grafted record;
# no_measurement: grafted records, but no record after one (everything grafted, or nothing paired).
OK, DIVERGED, UNDECIDED_STATUS, NO_GRAFT, NO_MEASUREMENT = "ok", "diverged", "undecided", "no_graft", "no_measurement"

VERDICT_TEXT = {
    INTRODUCED: "introduced here",
    INTRODUCED_SINCE: "introduced since {since}",
    UNDECIDED: "undecided: rerun both sides in full mode",
    INHERITED: "inherited: own error within tolerance, end to end not (accumulation)",
    WITHIN: "own error within tolerance",
    GRAFTED_ONLY: "grafted in every run: equals the reference by construction, not a measurement",
    NO_GRAFT_BEFORE: "no graft point before it in its token: not a local measurement",
    MISSING: "not in any grafted run",
}
_STATUS_TEXT = {
    OK: "every local measurement is proven within tolerance",
    DIVERGED: "a stage's own error is proven beyond tolerance",
    UNDECIDED_STATUS: "no local error is proven beyond tolerance, but some are not proven within it either",
    NO_GRAFT: "no run holds a grafted record: was it run with ORCH_GRAFT_FROM and ORCH_GRAFT_SELECT?",
    NO_MEASUREMENT: "no record follows a graft point: nothing measures a stage's own error "
    "(graft fewer checkpoints than are logged)",
}


def verdict_text(row: StageRow) -> str:
    since = stage_label(row.local.since) if row.local is not None else ""
    return VERDICT_TEXT[row.verdict].format(since=since)


@record
class GraftReport:
    reference: str
    grafted: list[str]
    plain: str | None
    tolerances: Tolerances
    rows: list[StageRow]
    coverage: list[RunCoverage]
    plain_coverage: RunCoverage | None

    @property
    def largest(self) -> StageRow | None:
        return largest_local(self.rows)

    @property
    def layers(self) -> list[StageRow]:
        return per_layer(self.rows)

    @property
    def status(self) -> str:
        if not any(c.grafted for c in self.coverage):
            return NO_GRAFT
        measured = [r.local.measure for r in self.rows if r.local is not None]
        if not measured:
            return NO_MEASUREMENT
        if any(m.tier == "fail" for m in measured):
            return DIVERGED
        if any(m.tier == UNDECIDED for m in measured):
            return UNDECIDED_STATUS
        return OK

    def __bool__(self) -> bool:
        return self.status == OK

    @property
    def exit_code(self) -> int:
        return 0 if self else 1

    def status_line(self) -> str:
        return f"{self.status}: {_STATUS_TEXT[self.status]}"

    def warnings(self) -> list[str]:
        out = []
        for c in self.coverage:
            if not c.grafted:
                out.append(f"{c.path}: no grafted record (it measures what a plain run does)")
            if c.unmatched_reference or c.unmatched_run or c.malformed:
                out.append(
                    f"{c.path}: {c.unmatched_reference} reference records without a partner, {c.unmatched_run} "
                    f"records without one in the reference, {c.malformed} malformed"
                )
        for r in self.rows:
            if r.grafted is not None and not r.grafted.proven_within:
                out.append(
                    f"{stage_label(r.stage)}: its grafted records are not proven equal to the reference within "
                    f"tolerance ({r.grafted.metric} {_num(r.grafted.value)}, {r.grafted.tier}): the graft did not "
                    "take as written (a narrower dtype in the engine, or another record under the same key)"
                )
        return out

    def largest_line(self) -> str:
        row = self.largest
        if row is None:
            return "largest local error: none measured"
        assert row.local is not None
        m = row.local.measure
        where = "right after" if row.local.hops == 0 else f"{row.local.hops} records after"
        return (
            f"largest local error: {stage_label(row.stage)}: {m.metric} {_num(m.value)} ({m.tier}, "
            f"{_num(m.severity)} x its threshold), {where} the graft point {stage_label(row.local.since)}"
        )

    def __str__(self) -> str:
        """The verdict in one line; orchlog.report renders the whole report as text, Markdown or HTML."""
        return self.status_line()

    def to_json(self) -> dict[str, Any]:
        largest = self.largest
        return {
            "report": REPORT_VERSION,
            "status": self.status,
            "inputs": {"reference": self.reference, "grafted": self.grafted, "plain": self.plain},
            "tolerances": self.tolerances.source,
            "largest_local": None if largest is None else stage_json(largest),
            "layers": [stage_json(r) for r in self.layers],
            "stages": [stage_json(r) for r in self.rows],
            "coverage": {
                "grafted": [dataclasses.asdict(c) for c in self.coverage],
                "plain": None if self.plain_coverage is None else dataclasses.asdict(self.plain_coverage),
            },
            "warnings": self.warnings(),
        }


def _num(v: float) -> str:
    return "n/a" if math.isnan(v) else f"{v:.3g}"


def measure_json(m: Measure | None) -> dict[str, Any] | None:
    if m is None:
        return None
    return {
        "pairs": m.pairs,
        "tier": m.tier,
        "metric": m.metric,
        "rule": m.rule,
        "value": json_number(m.value),
        "interval": [json_number(m.interval[0]), json_number(m.interval[1])],
        "severity": json_number(m.severity),
        "max_abs": json_number(m.max_abs),
    }


def _stage_key(stage: tuple[int, str, str]) -> dict[str, Any]:
    layer, checkpoint, name = stage
    return {"checkpoint": checkpoint, "layer": None if layer < 0 else layer, "stage": name or None}


def stage_json(r: StageRow) -> dict[str, Any]:
    local = None
    if r.local is not None:
        local = {
            **(measure_json(r.local.measure) or {}),
            "run": r.local.run,
            "hops": r.local.hops,
            "since": _stage_key(r.local.since),
        }
    return {
        **_stage_key(r.stage),
        "verdict": r.verdict,
        "local": local,
        "end_to_end": measure_json(r.end_to_end),
        "grafted": measure_json(r.grafted),
        "local_over_end_to_end": None if r.ratio is None else json_number(r.ratio),
    }


def _coverage_of(pairs: LocalPairs) -> RunCoverage:
    return RunCoverage(pairs.path, len(pairs), 0, 0, pairs.unmatched_reference, pairs.unmatched_run, pairs.malformed)


def graft_report(
    reference: Trace | str | os.PathLike[str],
    grafted: Sequence[Trace | str | os.PathLike[str]],
    plain: Trace | str | os.PathLike[str] | None = None,
    options: CompareOptions | None = None,
    progress: Callable[[], None] | None = None,
) -> GraftReport:
    """Local errors from `grafted` runs (each aligned with `reference` as `orchlog compare` would), beside the
    end-to-end errors of the `plain` run when given; `progress` is called after each run."""
    opts = options or CompareOptions()
    tolerances = load_tolerances(opts.tolerances).overridden(opts.metric, opts.threshold, opts.cos_tol)
    tick = progress or (lambda: None)
    runs = []
    for run in grafted:
        runs.append(walk(reference, run, opts, tolerances))
        tick()
    plain_pairs = walk(reference, plain, opts, tolerances) if plain is not None else None
    rows, coverage = stage_rows(runs, plain_pairs, tolerances)
    ref_path = reference.path if isinstance(reference, Trace) else os.fspath(reference)
    return GraftReport(
        reference=ref_path,
        grafted=[r.path for r in runs],
        plain=None if plain_pairs is None else plain_pairs.path,
        tolerances=tolerances,
        rows=rows,
        coverage=coverage,
        plain_coverage=None if plain_pairs is None else _coverage_of(plain_pairs),
    )
