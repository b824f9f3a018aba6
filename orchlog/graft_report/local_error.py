"""Each stage's own error, from runs grafted from the reference, beside the end-to-end error of a plain run.

Which record measures what. In a grafted run the engine's tensor at each
selected checkpoint was overwritten with the reference's before the engine
went on, and the record says so (`grafted`). So:
  - a grafted record holds the reference's values (rounded to the engine's
    dtype): it measures nothing about the engine. It checks that the graft
    took, and it is a graft point: what follows it starts from the reference.
  - a record that was not grafted, with a graft point before it in the same
    token's records (same token and step, in the run's execution order),
    measures the error made by the stages since that graft point: its
    *local* error. `hops` counts the records in between; 0 means the record
    directly follows a graft point, so when the grafted checkpoints are all
    of the stage's inputs, it is that stage's own error.
  - a record with no graft point before it in its token measures the same
    as a plain run: the error of everything before it. Not local.
orchlog does not know the engine's dataflow: a stage that also reads a
tensor that was not grafted (a residual stream, the KV cache of earlier
tokens) carries that tensor's error in its local error. Graft those too,
or read `since` and `hops`.

From several grafted runs (one per graft point, say), each stage's local
error comes from the run where it sits closest after a graft point (fewest
hops; of equals, the worse error). Nothing is called within tolerance
without proof: a stage's local error is graded as `compare` grades a pair
(pass, fail or undecided), a stage without a measurement says why, and the
largest local error is ranked by severity (the graded metric over its
threshold), so stages under different rules compare.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from orchlog.compare.grading.growth import run_starts
from orchlog.compare.grading.tiers import FAIL, TIER_NAMES, UNDECIDED_TIER
from orchlog.graft_report.pairs import LocalPairs
from orchlog.read.batch import NONE
from orchlog.records import record
from orchlog.tolerances.rules import Tolerances

Stage = tuple[int, str, str]  # (layer or -1, checkpoint, stage or "")

# Verdicts, from most to least telling.
INTRODUCED = "introduced"  # local error proven beyond tolerance right after a graft point
INTRODUCED_SINCE = "introduced_since"  # ... several records after one: somewhere in between
UNDECIDED = "undecided"  # the local error's evidence brackets the threshold
INHERITED = "inherited"  # local error proven within tolerance; end to end it is not: accumulation
WITHIN = "within"  # local error proven within tolerance (and end to end, when given)
GRAFTED_ONLY = "grafted"  # grafted in every run that has it: its value is the reference's by construction
NO_GRAFT_BEFORE = "no_graft_before"  # no graft point precedes it in its token: not a local measurement
MISSING = "missing"  # no record of it in any grafted run


@record(frozen=True)
class Measure:
    """The worst of a set of pairs (one stage's, over tokens and steps), graded as `compare` grades one."""

    pairs: int
    tier: str  # fail if any fails, else undecided if any is, else the worst pass tier
    severity: float  # of the worst pair: its graded metric over the threshold
    value: float  # the worst pair's graded metric (its proven side)
    interval: tuple[float, float]  # ... and the interval its evidence proves
    max_abs: float  # the largest max |difference| among the pairs (NaN where no pair had a measure)
    metric: str
    rule: str

    @property
    def proven_within(self) -> bool:
        return self.tier not in ("fail", UNDECIDED)


@record(frozen=True)
class LocalMeasure:
    measure: Measure
    run: int  # index into the grafted runs
    hops: int  # fewest records between a graft point and this stage's records
    since: Stage  # the graft point before the worst pair


@record(frozen=True)
class StageRow:
    stage: Stage
    order: int  # the reference's execution order of the stage's first record
    verdict: str
    local: LocalMeasure | None
    end_to_end: Measure | None
    grafted: Measure | None  # the stage's grafted records: how closely the graft took
    ratio: float | None  # local max_abs over end-to-end max_abs

    @property
    def layer(self) -> int | None:
        return None if self.stage[0] == NONE else self.stage[0]


@record(frozen=True)
class RunCoverage:
    path: str
    pairs: int
    grafted: int
    measured: int  # pairs that are local measurements
    unmatched_reference: int
    unmatched_run: int
    malformed: int


def stage_label(stage: Stage) -> str:
    layer, checkpoint, name = stage
    text = checkpoint + (f" ({name})" if name and name != checkpoint else "")
    return text if layer == NONE else f"{text} @ layer {layer}"


def _stage_keys(c: dict[str, np.ndarray]) -> list[Stage]:
    return [
        (int(layer), cp or "", st or "")
        for layer, cp, st in zip(c["layer"].tolist(), c["checkpoint"].tolist(), c["stage"].tolist())
    ]


def hops_since_graft(c: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """For each pair: how many records of its token (and step) lie between the last grafted one before it and
    itself, and that grafted pair's row; -1 for grafted pairs and for pairs with no graft point before them."""
    n = len(c["order"])
    hops, since = np.full(n, -1, dtype=np.int64), np.full(n, -1, dtype=np.int64)
    if not n:
        return hops, since
    by = np.lexsort((c["order"], c["step"], c["token_idx"]))
    starts = run_starts(c["token_idx"][by], c["step"][by])
    stream_start = np.repeat(starts, np.diff(np.r_[starts, n]))
    pos = np.arange(n)
    grafted = c["grafted"][by] == 1
    last = np.maximum.accumulate(np.where(grafted, pos, -1))
    local = ~grafted & (last >= stream_start)
    hops[by[local]] = (pos - last - 1)[local]
    since[by[local]] = by[last[local]]
    return hops, since


def _summary(c: dict[str, np.ndarray], rows: np.ndarray, tolerances: Tolerances) -> Measure:
    tiers = c["tier"][rows]
    if (tiers == FAIL).any():
        tier = FAIL
    elif (tiers == UNDECIDED_TIER).any():
        tier = UNDECIDED_TIER
    else:
        tier = int(tiers.max())
    severity = np.where(np.isnan(c["severity"][rows]), -np.inf, c["severity"][rows])
    worst = rows[int(np.argmax(severity))]
    rule = tolerances.all_rules[int(c["rule"][worst])]
    max_abs = c["max_abs"][rows]
    return Measure(
        pairs=len(rows),
        tier=TIER_NAMES[tier],
        severity=float(c["severity"][worst]),
        value=float(c["value"][worst]),
        interval=(float(c["lo"][worst]), float(c["hi"][worst])),
        max_abs=float(np.nanmax(max_abs)) if (~np.isnan(max_abs)).any() else math.nan,
        metric=rule.metric,
        rule=rule.name,
    )


def _rank(m: LocalMeasure) -> tuple[int, float]:
    """Fewest hops first, then the worse error."""
    sev = m.measure.severity
    return m.hops, -(sev if not math.isnan(sev) else -math.inf)


def _groups(stages: list[Stage]) -> dict[Stage, np.ndarray]:
    index: dict[Stage, list[int]] = {}
    for i, s in enumerate(stages):
        index.setdefault(s, []).append(i)
    return {s: np.asarray(rows, dtype=np.int64) for s, rows in index.items()}


def _verdict(local: LocalMeasure | None, plain: Measure | None, seen: bool, grafted_only: bool) -> str:
    if local is None:
        return GRAFTED_ONLY if grafted_only else NO_GRAFT_BEFORE if seen else MISSING
    m = local.measure
    if m.tier == "fail":
        return INTRODUCED if local.hops == 0 else INTRODUCED_SINCE
    if m.tier == UNDECIDED:
        return UNDECIDED
    if plain is not None and not plain.proven_within:
        return INHERITED
    return WITHIN


def stage_rows(
    runs: Sequence[LocalPairs], plain: LocalPairs | None, tolerances: Tolerances
) -> tuple[list[StageRow], list[RunCoverage]]:
    """One row per stage of the reference seen in any run, in execution order, and each grafted run's coverage."""
    best: dict[Stage, LocalMeasure] = {}
    grafted_at: dict[Stage, Measure] = {}
    seen: set[Stage] = set()
    measured_anywhere: set[Stage] = set()
    order: dict[Stage, int] = {}
    coverage = []
    for r, run in enumerate(runs):
        c = run.columns
        stages = _stage_keys(c)
        hops, since = hops_since_graft(c)
        grafted = run.grafted
        for stage, rows in _groups(stages).items():
            seen.add(stage)
            order[stage] = min(order.get(stage, 1 << 62), int(c["ref_order"][rows].min()))
            g_rows = rows[grafted[rows]]
            if len(g_rows) and (
                stage not in grafted_at or grafted_at[stage].severity < _summary(c, g_rows, tolerances).severity
            ):
                grafted_at[stage] = _summary(c, g_rows, tolerances)
            m_rows = rows[hops[rows] >= 0]
            if not len(m_rows):
                continue
            measured_anywhere.add(stage)
            fewest = int(hops[m_rows].min())
            m_rows = m_rows[hops[m_rows] == fewest]
            measure = _summary(c, m_rows, tolerances)
            worst = m_rows[int(np.argmax(np.where(np.isnan(c["severity"][m_rows]), -np.inf, c["severity"][m_rows])))]
            candidate = LocalMeasure(measure, r, fewest, stages[int(since[worst])])
            if stage not in best or _rank(candidate) < _rank(best[stage]):
                best[stage] = candidate
        coverage.append(
            RunCoverage(
                run.path,
                len(run),
                int(grafted.sum()),
                int((hops >= 0).sum()),
                run.unmatched_reference,
                run.unmatched_run,
                run.malformed,
            )
        )
    end_to_end: dict[Stage, Measure] = {}
    if plain is not None:
        c = plain.columns
        for stage, rows in _groups(_stage_keys(c)).items():
            end_to_end[stage] = _summary(c, rows, tolerances)
            order[stage] = min(order.get(stage, 1 << 62), int(c["ref_order"][rows].min()))
    rows_out = []
    for stage in sorted(order, key=lambda s: (order[s], s)):
        local, e2e = best.get(stage), end_to_end.get(stage)
        ratio = None
        if local is not None and e2e is not None and e2e.max_abs > 0 and not math.isnan(local.measure.max_abs):
            ratio = local.measure.max_abs / e2e.max_abs
        rows_out.append(
            StageRow(
                stage,
                order[stage],
                _verdict(local, e2e, stage in seen, stage in grafted_at and stage not in measured_anywhere),
                local,
                e2e,
                grafted_at.get(stage),
                ratio,
            )
        )
    return rows_out, coverage


def largest_local(rows: Sequence[StageRow]) -> StageRow | None:
    """The stage whose local error is the largest relative to its threshold (of equals, the earliest)."""
    measured = [r for r in rows if r.local is not None and not math.isnan(r.local.measure.severity)]
    if not measured:
        return None
    return max(measured, key=lambda r: (r.local.measure.severity, -r.order))  # type: ignore[union-attr]


def per_layer(rows: Sequence[StageRow]) -> list[StageRow]:
    """Per layer (and per stage outside the layers), the stage with the largest local error."""
    worst: dict[int | str, StageRow] = {}
    for r in rows:
        if r.local is None or math.isnan(r.local.measure.severity):
            continue
        slot: int | str = r.stage[0] if r.stage[0] != NONE else r.stage[1]
        if slot not in worst or r.local.measure.severity > worst[slot].local.measure.severity:  # type: ignore[union-attr]
            worst[slot] = r
    return sorted(worst.values(), key=lambda r: r.order)
