"""The compare engine: set up both sides, walk the paired records once, and make the report.

`walk` aligns, measures and grades every pair of two traces (or of parts of them, which orchlog.scale
merges); `finish` turns what a walk found into the CompareReport (verdict, coverage, diagnosis);
`compare` is the two in one process.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from orchlog.compare.dump import Dumper
from orchlog.compare.grading.coverage import coverage
from orchlog.compare.grading.divergence import Findings
from orchlog.compare.grading.noise import (
    NoiseSummary,
    NoiseTable,
    measure_noise,
    noise_at,
    noise_ratios,
)
from orchlog.compare.grading.partial import PartialReport, SideState, renumber
from orchlog.compare.grading.tiers import FLOOR_ULPS, grade
from orchlog.compare.options import CompareOptions
from orchlog.compare.pairing.tokens import TokenCheck
from orchlog.compare.plan import WalkPlan
from orchlog.compare.result import (
    DIVERGED,
    INCOMPLETE,
    NO_MATCH,
    OK,
    TOKENS_DIFFER,
    UNDECIDED,
    CompareReport,
    InputInfo,
    Malformed,
    Unmatched,
)
from orchlog.diagnose.extent import Extent
from orchlog.diagnose.keeper import Keeper
from orchlog.diagnose.run import Walked, diagnose_views
from orchlog.errors import OrchlogError
from orchlog.read.batch import NONE, RecordBatch
from orchlog.read.paths import open_trace
from orchlog.read.trace import Diagnostic, Trace
from orchlog.runinfo import differences
from orchlog.tolerances.presets import preset_for, weight_types
from orchlog.tolerances.rules import Tolerances


def _as_trace(t: Trace | str | os.PathLike[str]) -> Trace:
    return t if isinstance(t, Trace) else open_trace(t)


def _producer(trace: Trace) -> tuple[str | None, str | None]:
    h = trace.header or {}
    prod = h.get("producer") if isinstance(h.get("producer"), dict) else None
    producer = f"{prod.get('language')} {prod.get('name')} {prod.get('version')}" if prod else None
    team = h.get("team")  # a header is input like any other: anything but text is no team
    return (team if isinstance(team, str) and team else None), producer


def _unmatched(side: str, batch: RecordBatch, key: tuple[str, ...]) -> list[tuple[int, Unmatched]]:
    """Each record of the batch as an unmatched one, with its place in the trace."""
    out = []
    assert batch.renamed_from is not None, "RecordBatch.__post_init__ fills it"
    for i in range(len(batch)):
        k = {}
        for field in key:
            v = getattr(batch, field)[i]
            if isinstance(v, np.integer):
                v = None if v == NONE else int(v)
            k[field] = v
        name = batch.renamed_from[i] or batch.checkpoint[i]
        assert name is not None, "checkpoint is a required column"
        out.append((int(batch.order[i]), Unmatched(side, k, name, str(batch.location(i)))))
    return out


def alignment_key(trace_a: Trace, trace_b: Trace, opts: CompareOptions) -> tuple[str, ...]:
    """The fields records align on: the option, else the formats' own key when both share one, else DEFAULT_KEY."""
    return WalkPlan.of(trace_a, trace_b, opts).key


def noise_tables(trace_a: Trace, plan: WalkPlan, key: tuple[str, ...]) -> list[NoiseTable]:
    """The noise each second reference (opts.noise) shows against the reference, at every reference record."""
    tables = []
    for path in plan.opts.noise:
        # A fresh reader of the reference: the compare's own walk reads trace_a from its start afterwards.
        walk = plan.pairs(open_trace(trace_a.path), open_trace(path), plan.sides(plan.opts.maps_noise), key=key)
        tables.append(measure_noise(walk))
    return tables


def walk(
    a: Trace | str | os.PathLike[str],
    b: Trace | str | os.PathLike[str],
    options: CompareOptions | None = None,
    progress: Callable[[float], None] | None = None,
    key: tuple[str, ...] | None = None,
) -> PartialReport:
    """Align, measure and grade every pair of two traces (or of parts of them): the compare's walk, as a
    partial report. `key`: the alignment key settled for the whole traces (a part cannot tell)."""
    opts = options or CompareOptions()
    trace_a, trace_b = _as_trace(a), _as_trace(b)
    plan = WalkPlan.of(trace_a, trace_b, opts)
    key = key or plan.key
    tables = noise_tables(trace_a, plan, key) if opts.noise else []
    side_a, side_b = plan.sides()

    findings = Findings(
        plan.tolerances,
        top_n=opts.top,
        keep=None if opts.detail else opts.max_pairs,
        detail=opts.detail,
        heat=opts.heatmap,
    )
    dumper = Dumper(opts.dump_raw) if opts.dump_raw else None
    pairs = plan.pairs(trace_a, trace_b, (side_a, side_b), key=key)
    extents, kept = None, None
    if opts.diagnose:
        # The records the diagnosis looks at, kept as the walk reads them; and where each token's records end
        # in each file, so that a second read (when the run is too large to keep) can stop there.
        holding = (lambda: side_a.holding, lambda: side_b.holding)
        kept, extents = Keeper(holding=holding), (Extent(), Extent())
        pairs.watch(kept.add)
    for rnd, table in pairs:
        if extents is not None:
            extents[0].add(rnd.a)
            extents[1].add(rnd.b)
        ratios = noise_ratios(table, tables) if tables else None
        grades = grade(table, plan.tolerances, ratios, opts.noise_multiple)
        findings.add(table, grades)
        if dumper and opts.dump_all:
            for view in findings.take_failing_views(table, grades):
                dumper.dump(view)
        if progress:
            progress((trace_a.progress() + trace_b.progress()) / 2)
    states = []
    for name, trace, side, leftover in (
        ("a", trace_a, side_a, pairs.aligner.leftover_a),
        ("b", trace_b, side_b, pairs.aligner.leftover_b),
    ):
        state = SideState(
            rows_in=side.rows_in,
            tokens=side.tokens,
            unmatched=_unmatched(name, leftover, key),
            held_out=_unmatched(name, side.held_out, key),
            diagnostics=list(trace.diagnostics),
            side_diagnostics=list(side.diagnostics),
            files=dict(getattr(trace, "tallies", {})),
            sharded=getattr(trace, "sharded", False),
        )
        states.append(state)
    if extents is not None:
        states[0].extent, states[1].extent = extents[0]._last, extents[1]._last
    return PartialReport(findings, (states[0], states[1]), dumper.written if dumper else [], tables, kept)


def compare(
    a: Trace | str | os.PathLike[str],
    b: Trace | str | os.PathLike[str],
    options: CompareOptions | None = None,
    progress: Callable[[float], None] | None = None,
) -> CompareReport:
    """Compare trace b (ours) against trace a (the reference)."""
    opts = options or CompareOptions()
    trace_a, trace_b = _as_trace(a), _as_trace(b)
    return finish(walk(trace_a, trace_b, opts, progress), trace_a, trace_b, opts)


def _notes(trace_a: Trace, trace_b: Trace, opts: CompareOptions, tolerances: Tolerances) -> list[str]:
    """What the reader should know before the verdict: a quantized reference graded without its own noise."""
    quantized = preset_for(weight_types(trace_a) | weight_types(trace_b))
    if quantized is None or opts.noise:
        return []
    graded = (
        f"this compare graded against the {quantized[0]} preset, measured on another model (docs/noise.md)"
        if opts.tolerances is None
        else f"this compare graded against {tolerances.source}"
    )
    return [
        f"the traces' matrix products ran on {quantized[1]} weights: every stage differs from an exact computation "
        f"by its quantization noise, and {graded}. For this model's own noise, run the reference once more on "
        "the f32 file (or on the quantized file's weights widened to f32) and pass it with --noise, or learn it "
        "with `orchlog calibrate`. With no second run: graft each stage from the reference (ORCH_GRAFT_FROM, "
        "ORCH_GRAFT_SELECT) and `orchlog graft-report` gives each stage's local error against its other layers "
        "(docs/graft.md)."
    ]


def _noise_multiple(partial: PartialReport, tolerances: Tolerances, opts: CompareOptions) -> float | None:
    """How many times its noise a pair may differ by: three-way's multiple, a calibration's headroom."""
    if partial.noise:
        return opts.noise_multiple
    if tolerances.calibration:
        return float(tolerances.calibration.get("headroom", 1.0))
    return None


def finish(
    partial: PartialReport,
    trace_a: Trace,
    trace_b: Trace,
    opts: CompareOptions,
    strays: tuple[list[Diagnostic], list[Diagnostic]] = ([], []),
) -> CompareReport:
    """The report of a walk (or of merged parts of one): the verdict, coverage and diagnosis.

    `trace_a` and `trace_b` are the whole traces (opened, read only for the diagnosis); `strays`, for
    merged parts, what opening them reported (files in a directory that are no trace)."""
    renumber(partial)
    plan = WalkPlan.of(trace_a, trace_b, opts)
    key = plan.key
    findings = partial.findings
    side_a, side_b = partial.sides
    token = findings.diverging_token()
    first = findings.first_divergence()
    unmatched_a = [u for _, u in side_a.unmatched] + [u for _, u in side_a.held_out]
    unmatched_b = [u for _, u in side_b.unmatched] + [u for _, u in side_b.held_out]
    malformed = [
        Malformed(name, d)
        for name, side, lost in (("a", side_a, strays[0]), ("b", side_b, strays[1]))
        for d in [*lost, *side.diagnostics, *side.side_diagnostics]
    ]
    covered = coverage(
        findings.pairs,
        unmatched_a,
        len(unmatched_b),
        (
            len(strays[0]) + len(side_a.diagnostics) + len(side_a.side_diagnostics),
            len(strays[1]) + len(side_b.diagnostics) + len(side_b.side_diagnostics),
        ),
        opts.require_all,
        opts.allow_missing,
    )
    tokens = TokenCheck.between(side_a.tokens, side_b.tokens, opts.token_offset)
    if tokens.mismatch is not None:  # the prompts differ: what the numbers say next is not a divergence
        status, token, first = TOKENS_DIFFER, None, None
    elif findings.pairs == 0:
        status = NO_MATCH
    elif findings.failed:
        status = DIVERGED
    elif findings.undecided:
        status = UNDECIDED
    elif covered.failed:
        status = INCOMPLETE
    else:
        status = OK
    decided_by = None
    if token is not None and status in (DIVERGED, UNDECIDED):
        state = findings.tokens[token]
        if state.noise_fail and not (state.logits_suspect if state.logits_seen else state.last_suspect):
            decided_by = "noise"
        else:
            decided_by = (
                ("logits" if state.logits_seen else "last_checkpoint") if state.decided_suspect else "first_failure"
            )
    dumper = Dumper(opts.dump_raw) if opts.dump_raw else None
    dumped = list(partial.dumped)
    if dumper and first is not None and not opts.dump_all:
        if first.records is None:
            raise OrchlogError("--dump-raw of a partitioned compare: rerun the first divergence in one process")
        dumper.dump(first)
        dumped += dumper.written
    diagnosis = []
    names_a, names_b = plan.sides()
    if opts.diagnose and first is not None:
        extents = None
        if side_a.extent is not None and side_b.extent is not None:
            extents = (Extent(), Extent())
            extents[0]._last, extents[1]._last = side_a.extent, side_b.extent
        worst = findings.worst[: opts.diagnose_worst]
        # Fresh sides, made as the compare's were: the second read walks the traces from the start.
        fresh = plan.sides()
        diagnosis = diagnose_views(
            trace_a,
            trace_b,
            first,
            worst,
            Walked(
                tuple(key),
                fresh,
                plan.is_logits,
                extents,
                noise_at(partial.noise, plan.tolerances),
                _noise_multiple(partial, plan.tolerances, opts),
                partial.kept,
            ),
        )
    infos = []
    for trace, side in ((trace_a, side_a), (trace_b, side_b)):
        if side.files:  # merged parts: the header of the side's first file, as a directory reads it
            trace.headers = [t.header for _, t in sorted(side.files.items()) if t.header is not None][:1]
        team, producer = _producer(trace)
        infos.append(InputInfo(trace.path, trace.format, side.rows_in, team, producer))
    return CompareReport(
        status=status,
        inputs=(infos[0], infos[1]),
        key=tuple(key),
        maps=list(dict.fromkeys(names_a.names.sources + names_b.names.sources)),
        tolerances=plan.tolerances,
        findings=findings,
        diverging_token=token,
        decided_by=decided_by,
        first=first,
        growth=findings.growth(token) if token is not None else [],
        unmatched=unmatched_a + unmatched_b,
        malformed=malformed,
        track_token=opts.track_token,
        dumped=dumped,
        coverage=covered,
        first_failure=findings.first_failure() if first is not None and first.undecided else None,
        tokens=tokens,
        windows=tuple(opts.windows),
        maps_by_side=(names_a.names.sources, names_b.names.sources),
        diagnosis=diagnosis,
        notes=_notes(trace_a, trace_b, opts, plan.tolerances),
        runs=differences(trace_a.header, trace_b.header),
        noise=NoiseSummary(
            list(opts.noise),
            opts.noise_multiple,
            FLOOR_ULPS,
            findings.noise_pairs,
            findings.pairs - findings.noise_pairs,
        )
        if opts.noise
        else None,
    )
