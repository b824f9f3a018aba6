"""The guardrail as one self-contained HTML page: the verdict, the pairs in a sortable table, and for each
pair its metrics position by position (max_abs, 1 - cosine, KL) against the thresholds.

Each series is drawn from the pair's per-position numbers, binned to at most
INDEX_BINS points (each bin showing its worst), so a long generation costs
a fixed amount per pair.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from html import escape

from orchlog.guardrail.metrics import TokenMetrics
from orchlog.guardrail.result import GuardrailResult, PairResult
from orchlog.numbers import fmt
from orchlog.report import svg
from orchlog.report.guardrail_text import COLUMNS, first_fail_text, matrix_lines, missing_run_lines, pairing_error_lines
from orchlog.report.page import csv_button, page

INDEX_BINS = 400
# chart: (title, the per-position value, the threshold it is drawn against and how to turn that into the value)
_SERIES: tuple[tuple[str, Callable[[TokenMetrics], float], str, Callable[[float], float]], ...] = (
    ("max |a-b|", lambda t: t.max_abs_diff, "max_abs_diff", lambda b: b),
    ("1 - cosine", lambda t: 1.0 - t.cos_sim, "cos_sim_mean", lambda b: 1.0 - b),
    ("KL(a || b)", lambda t: t.kl, "kl_max", lambda b: b),
)


def _binned(values: list[float]) -> tuple[list[float], int]:
    group = max(1, math.ceil(len(values) / INDEX_BINS))
    out = []
    for i in range(0, len(values), group):
        chunk = [math.inf if v != v else v for v in values[i : i + group]]  # NaN: the worst there is
        out.append(max(chunk))
    return out, group


def _pair_charts(r: GuardrailResult, p: PairResult) -> list[str]:
    if not p.tokens:
        return [f"<p>{escape(p.label)}: no position was compared.</p>"]
    bounds = {name: bound for name, _, bound in r.matrix.thresholds.active()}
    start = p.tokens[0].token_idx
    charts = []
    for title, value, bound_name, as_value in _SERIES:
        values, group = _binned([value(t) for t in p.tokens])
        marks = [(bound_name, as_value(bounds[bound_name]))] if bound_name in bounds and p.must_match else []
        if marks and not marks[0][1] > 0:
            marks = []
        charts.append(svg.index_plot(values, group, f"{title} by position", marks, start, "token"))
    first = p.first_fail()
    at = "" if first is None or first.get("token_idx") is None else f"; first failing token {first['token_idx']}"
    return [
        f'<section class="pair" id="pair-{escape(p.label)}"><h3>{escape(p.label)}: '
        f'<span class="verdict {escape(p.verdict)}">{escape(p.verdict)}</span>{escape(at)}</h3>',
        '<div class="grid">' + "".join(f"<figure>{c}</figure>" for c in charts) + "</div></section>",
    ]


def _table(r: GuardrailResult) -> list[str]:
    head = "".join(
        f"<th>{c}</th>" for c in ("pair", "must match", "verdict", "tokens", *COLUMNS, "first failing token")
    )
    out = [
        csv_button("pairs", "orchlog-guardrail.csv"),
        f'<div class="scroll"><table id="pairs" class="sortable"><thead><tr>{head}</tr></thead><tbody>',
    ]
    for p in r.pairs:
        agg = p.aggregates
        ff = p.first_fail()
        tok = "" if ff is None or ff["token_idx"] is None else str(ff["token_idx"])
        cells = [
            f'<td><a href="#pair-{escape(p.label)}">{escape(p.label)}</a>{"" if p.declared else " (not declared)"}</td>',
            f"<td>{'yes' if p.must_match else 'no'}</td>",
            f'<td><span class="verdict {escape(p.verdict)}">{escape(p.verdict)}</span></td>',
            f"<td class=num>{len(p.tokens)}</td>",
            *(f'<td class=num data-v="{float(agg[c])!r}">{fmt(agg[c])}</td>' for c in COLUMNS),
            f"<td class=num>{tok}</td>",
        ]
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table></div>")
    return out


def _listing(title: str, items: list[str]) -> list[str]:
    if not items:
        return []
    return [f"<h2>{escape(title)} ({len(items)})</h2><ul>"] + [f"<li>{escape(x)}</li>" for x in items] + ["</ul>"]


def render_html(r: GuardrailResult) -> str:
    body = [
        f'<h1>orchlog guardrail <span class="badge {escape(r.verdict)}">{escape(r.verdict)}</span></h1>',
        f'<div class="summary"><p><strong>{escape(r.meaning)}</strong></p>',
        *(f"<p>{escape(line)}</p>" for line in matrix_lines(r)),
    ]
    first = r.first_fail
    if first is not None:
        body.append(f'<p class="warn">First fail: {escape(first_fail_text(first))}</p>')
    body.append("</div><h2>Pairs</h2>")
    body += _table(r)
    body.append("<h2>Per position</h2>")
    ordered = ([first] if first is not None else []) + [p for p in r.pairs if p is not first]
    for p in ordered:
        body += _pair_charts(r, p)
    body += _listing("Pairing errors", pairing_error_lines(r)) + _listing("Missing runs", missing_run_lines(r))
    body += _listing("Missing pairs", [f"{run.label()} ({run.path})" for run in r.missing])
    body += _listing("Ignored directories", r.ignored)
    return page(f"orchlog guardrail: {r.verdict}", body)
