"""orchlog.compare: align two traces, measure and grade every pair, and name the first divergence.

    from orchlog.compare import CompareOptions, compare
    report = compare("reference.jsonl", "ours.bin", CompareOptions(maps=["example"]))
    if not report:
        print(report.first.where())

Modules, one job each: keys (alignment keys), namemap (--map files),
align (streaming matcher), tensor_metrics / logits / metrics (measuring),
tolerances / grading (verdicts), divergence (what the walk found),
result / render (the report), dump (--dump-raw), per_token (--per-token).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable

import numpy as np

from orchlog.compare.align import Aligner
from orchlog.compare.divergence import Findings
from orchlog.compare.dump import Dumper
from orchlog.compare.grading import grade
from orchlog.compare.keys import DEFAULT_KEY, Interner, key_matrix
from orchlog.compare.metrics import measure
from orchlog.compare.namemap import load_maps
from orchlog.compare.result import DIVERGED, NO_MATCH, OK, CompareReport, InputInfo, Malformed, Unmatched
from orchlog.compare.tolerances import load_tolerances
from orchlog.read.batch import NONE, RecordBatch
from orchlog.read.paths import open_trace
from orchlog.read.trace import Trace
from orchlog.strings import glob_matcher

LOGITS_NAMES = ("logits", "*logits*", "result_output", "lm_head", "output")


@dataclasses.dataclass
class CompareOptions:
    key: tuple[str, ...] | None = None  # None: the formats' own key when both share one, else DEFAULT_KEY
    maps: list[str] = dataclasses.field(default_factory=list)
    tolerances: str = "default"
    metric: str | None = None
    threshold: float | None = None
    cos_tol: float | None = None
    logits: tuple[str, ...] = LOGITS_NAMES  # globs over canonical names: which checkpoints are logits
    track_token: int | None = None
    top: int = 10
    detail: bool = False
    max_pairs: int | None = 1000
    dump_raw: str | None = None
    dump_all: bool = False
    heatmap: bool = False  # keep the worst error of every token and layer (the HTML report draws it)


def _as_trace(t: Trace | str | os.PathLike[str]) -> Trace:
    return t if isinstance(t, Trace) else open_trace(t)


def _producer(trace: Trace) -> tuple[str | None, str | None]:
    h = trace.header or {}
    prod = h.get("producer") if isinstance(h.get("producer"), dict) else None
    producer = f"{prod.get('language')} {prod.get('name')} {prod.get('version')}" if prod else None
    team = h.get("team")  # a header is input like any other: anything but text is no team
    return (team if isinstance(team, str) and team else None), producer


def _unmatched(side: str, batch: RecordBatch, key: tuple[str, ...]) -> list[Unmatched]:
    out = []
    for i in range(len(batch)):
        k = {}
        for field in key:
            v = getattr(batch, field)[i]
            if isinstance(v, np.integer):
                v = None if v == NONE else int(v)
            k[field] = v
        out.append(Unmatched(side, k, batch.renamed_from[i] or batch.checkpoint[i], str(batch.location(i))))
    return out


def compare(
    a: Trace | str | os.PathLike[str],
    b: Trace | str | os.PathLike[str],
    options: CompareOptions | None = None,
    progress: Callable[[float], None] | None = None,
) -> CompareReport:
    """Compare trace b (ours) against trace a (the reference)."""
    opts = options or CompareOptions()
    trace_a, trace_b = _as_trace(a), _as_trace(b)
    tolerances = load_tolerances(opts.tolerances).overridden(opts.metric, opts.threshold, opts.cos_tol)
    names = load_maps(opts.maps)
    key = opts.key or (
        trace_a.default_key if trace_a.default_key and trace_a.default_key == trace_b.default_key else DEFAULT_KEY
    )
    interner = Interner()
    is_logits = glob_matcher(opts.logits)
    findings = Findings(
        tolerances, top_n=opts.top, keep=None if opts.detail else opts.max_pairs, detail=opts.detail, heat=opts.heatmap
    )
    dumper = Dumper(opts.dump_raw) if opts.dump_raw else None
    aligner = Aligner(trace_a, trace_b, lambda batch: key_matrix(batch, key, interner), names.apply)
    for rnd in aligner:
        table = measure(rnd.a, rnd.b, rnd.ia, rnd.ib, is_logits, opts.track_token)
        grades = grade(table, tolerances)
        findings.add(table, grades)
        if dumper and opts.dump_all:
            for view in findings.take_failing_views(table, grades):
                dumper.dump(view)
        if progress:
            progress((trace_a.progress() + trace_b.progress()) / 2)
    token = findings.diverging_token()
    first = findings.first_divergence()
    if findings.failed:
        status = DIVERGED
    elif findings.pairs == 0:
        status = NO_MATCH
    else:
        status = OK
    decided_by = None
    if token is not None:
        state = findings.tokens[token]
        decided_by = ("logits" if state.logits_seen else "last_checkpoint") if state.decided_fail else "first_failure"
    if dumper and first is not None and not opts.dump_all:
        dumper.dump(first)
    infos = []
    for trace, rows in zip((trace_a, trace_b), aligner.rows_read):
        team, producer = _producer(trace)
        infos.append(InputInfo(trace.path, trace.format, rows, team, producer))
    malformed = [Malformed(side, d) for side, t in (("a", trace_a), ("b", trace_b)) for d in t.diagnostics]
    return CompareReport(
        status=status,
        inputs=(infos[0], infos[1]),
        key=tuple(key),
        maps=names.sources,
        tolerances=tolerances,
        findings=findings,
        diverging_token=token,
        decided_by=decided_by,
        first=first,
        growth=findings.growth(token) if token is not None else [],
        unmatched=_unmatched("a", aligner.leftover_a, key) + _unmatched("b", aligner.leftover_b, key),
        malformed=malformed,
        track_token=opts.track_token,
        dumped=dumper.written if dumper else [],
    )


__all__ = ["CompareOptions", "CompareReport", "DEFAULT_KEY", "compare"]
