"""The compare report as one self-contained HTML page with charts (`--format html`).

Everything is inline (CSS, SVG, a small script; see page.py), so the page
can be attached to a CI run or mailed around. The top of the page answers
the questions a divergence hunt asks first, in one screen: the verdict, and
the token x layer heatmap with the first divergence outlined (and a close-up
of the tokens around it). Below: the diverging pair, its error by layer and
by stage within its layer, the distribution of its error (when whole tensors
are at hand), the diagnosis, a sortable table of the failing pairs with CSV
export, and everything the text report says.
"""

from __future__ import annotations

from html import escape
from typing import Any

import numpy as np

from orchlog.compare.grading import rerun
from orchlog.compare.grading.growth import GrowthRow
from orchlog.compare.grading.tiers import TIER_NAMES
from orchlog.compare.pairview import PairView
from orchlog.compare.result import CompareReport
from orchlog.numbers import fmt, token_text
from orchlog.report import svg
from orchlog.report.compare_text import (
    RERUN_ROLES,
    RERUN_WHAT,
    alignment_lines,
    coverage_lines,
    metrics_line,
    result_line,
    token_lines,
    verdict_line,
)
from orchlog.report.diagnosis import diagnosis_html
from orchlog.report.error_shape import ErrorShape, error_shape
from orchlog.report.heatmap import HeatGrid, decode_start, heat_grid
from orchlog.report.page import csv_button, json_script, page

SHOWN = 200  # unmatched records and malformed lines listed before "... and N more"
CLOSE_UP = 24  # tokens either side of the diverging one in the close-up heatmap


def _tier_chip(tier: str, text: bool = True) -> str:
    chip = f'<span class="tier" style="background:{svg.TIER_COLORS.get(tier, "#999")}"></span>'
    return chip + (escape(tier) if text else "")


def _inputs(r: CompareReport) -> list[str]:
    out = [
        "<h2>Inputs</h2><table><tr><th></th><th>path</th><th>format</th><th>records</th><th>team</th>"
        "<th>producer</th></tr>"
    ]
    for side, info, role in zip("ab", r.inputs, ("reference", "ours")):
        out.append(
            f"<tr><td>{side} ({role})</td><td><code>{escape(info.path)}</code></td><td>{escape(info.format)}"
            f"</td><td class=num>{info.records}</td><td>{escape(info.team or '')}</td>"
            f"<td>{escape(info.producer or '')}</td></tr>"
        )
    out.append("</table>")
    maps = f" Maps: {escape(', '.join(r.maps))}." if r.maps else ""
    out.append(
        f"<p>Key: <code>{escape(', '.join(r.key))}</code>.{maps} Tolerances: {escape(r.tolerances.source)}:"
        "</p><ul>" + "".join(f"<li>{escape(rule.describe())}</li>" for rule in r.tolerances.all_rules) + "</ul>"
    )
    return out


def _counts(r: CompareReport) -> list[str]:
    f = r.findings
    counts = [(name, int(c)) for name, c in zip(TIER_NAMES, f.counts)]
    rows = "".join(f"<tr><td>{_tier_chip(n)}</td><td class=num>{c}</td></tr>" for n, c in counts)
    return [
        f"<h2>Pairs: {f.pairs}</h2>",
        svg.tier_strip(counts),
        f"<table>{rows}</table>",
        f"<p>Unmatched: {len(r.unmatched_on('a'))} only in a, {len(r.unmatched_on('b'))} only in b. "
        f"Malformed input: {len(r.malformed)}.</p>",
    ]


def _pair(v: PairView) -> list[str]:
    out = [
        f"<p>{_tier_chip(v.tier, text=False)}{escape(verdict_line(v))}</p>",
        f"<p><code>{escape(metrics_line(v))}</code></p>",
        f"<p>a: <code>{escape(v.locations[0])}</code> &nbsp; b: <code>{escape(v.locations[1])}</code></p>",
        *(f"<p>{escape(line)}</p>" for line in alignment_lines(v)),
    ]
    if v.hash == "differs":
        out.append(
            f"<p>blake3 a <code>{escape(str(v.blake3[0]))}</code>, b <code>{escape(str(v.blake3[1]))}</code>; "
            f"num_elements {fmt(v.numel[0])} vs {fmt(v.numel[1])}</p>"
        )
    if v.undecided:
        out.append("<p>To decide it, rerun just this record in full mode on each side:</p><ul>")
        out += [
            f"<li>{side if side != 'noise' else RERUN_ROLES[side]}: <code>{escape(env)} &lt;the command that wrote "
            f"{RERUN_WHAT[side]}&gt;</code></li>"
            for side, env in rerun.commands(v.own_keys, v.noise_ratio is not None)
        ]
        out.append("</ul>")
    va, vb = v.values
    if va or vb:
        out.append("<table><tr><th>i</th><th>a</th><th>b</th><th>|a-b|</th></tr>")
        for i, (a, b) in enumerate(zip(va, vb)):
            out.append(
                f"<tr><td class=num>{i}</td><td class=num>{fmt(a)}</td><td class=num>{fmt(b)}</td>"
                f"<td class=num>{fmt(abs(a - b))}</td></tr>"
            )
        out.append("</table>")
    return out


def _threshold_marks(r: CompareReport) -> list[tuple[str, float]]:
    """The first divergence's fail threshold, when its rule grades max_abs (the charts' quantity)."""
    rule = next((x for x in r.tolerances.all_rules if r.first is not None and x.name == r.first.rule), None)
    return [(f"fail threshold of rule {rule.name!r}", rule.threshold)] if rule and rule.metric == "max_abs" else []


def _bars(rows: list[GrowthRow], title: str, marks: list[tuple[str, float]]) -> str:
    return svg.error_bars([(g.label, g.max_abs, "fail" if g.failed else g.worst_tier) for g in rows], title, marks)


def _growth_charts(r: CompareReport) -> list[str]:
    charts = []
    marks = _threshold_marks(r)
    if len(r.growth) > 1:
        chart = _bars(r.growth, f"max_abs by layer at {token_text(r.diverging_token)} (execution order)", marks)
        charts.append(
            f"<figure>{chart}<figcaption>Worst max_abs among each layer's pairs at the diverging token, coloured by "
            "its tier; the dashed line is the fail threshold of the first divergence's rule.</figcaption></figure>"
        )
    stages = r.findings.stages
    if stages is not None and r.first is not None and r.first.layer is not None and r.diverging_token is not None:
        rows = [g for g in stages.table(r.diverging_token) if g.layer == r.first.layer]
        if rows:
            chart = _bars(rows, f"max_abs by stage in layer {r.first.layer} (execution order)", marks)
            charts.append(
                f'<figure id="stages">{chart}<figcaption>Each checkpoint of the diverging layer at the diverging '
                "token: where inside the layer the error enters.</figcaption></figure>"
            )
    return ['<div class="grid">' + "".join(charts) + "</div>"] if charts else []


def _error_shape(r: CompareReport) -> list[str]:
    if r.first is None:
        return []
    shape, why = error_shape(r.first)
    out = ["<h3>The error inside the tensor</h3>"]
    if shape is None:
        return out + [f"<p>Not drawn: {escape(why)}.</p>"]
    return out + _shape_charts(shape, _threshold_marks(r))


def _shape_charts(s: ErrorShape, marks: list[tuple[str, float]]) -> list[str]:
    charts = [
        f'<figure id="histogram">{svg.histogram(s.hist_edges, s.hist_counts, "histogram of |a-b|", marks)}'
        f"<figcaption>{s.numel} elements: {s.zeros} exactly equal, {s.nonfinite} with a NaN or Inf difference "
        "(neither drawn); log-spaced bins.</figcaption></figure>",
        f'<figure id="by-index">{svg.index_plot(s.index_max, s.index_group, "worst |a-b| by index", marks)}'
        f"<figcaption>Worst |a-b| per {s.index_group} consecutive elements (flat, C order).</figcaption></figure>",
    ]
    if s.heads is not None and s.head_axis is not None:
        heads, dim = s.head_axis
        grouped = -(-heads // len(s.heads))
        note = f"; {grouped} heads to a row" if grouped > 1 else ""
        charts.append(
            f'<figure id="by-head">{svg.value_grid(s.heads, "head", "index within head", "worst |a-b| per head")}'
            f"<figcaption>Attention tensor read as {heads} heads of {dim}{note}: the worst |a-b| of each (head, "
            "index) over the other axes. A RoPE mistake shows as a pattern along the index (the rotated pairs, "
            "their frequencies); a broken head as one row.</figcaption></figure>"
        )
    return ['<div class="grid">' + "".join(charts) + "</div>"]


def _numbers(values: np.ndarray) -> list[float | None]:
    """Cell values for the page's script: 4 digits, NaN as null, +-Inf as +-1e300 (the ends of the scale)."""
    flat = np.nan_to_num(values.ravel(), nan=np.nan, posinf=1e300, neginf=0.0)
    return [None if x != x else float(f"{x:.4g}") for x in flat.tolist()]


def _heat_data(grid: HeatGrid, title: str, mark: tuple[int, int] | None, decode: int | None) -> dict[str, Any]:
    return {
        "title": title,
        "labels": grid.labels,
        "first": grid.first_token,
        "last": grid.last_token,
        "sev": _numbers(grid.severity),
        "abs": _numbers(grid.max_abs),
        "state": grid.state.ravel().tolist(),
        "mark": list(mark) if mark is not None else None,
        "decode": decode,
    }


def _mark(r: CompareReport, grid: HeatGrid) -> tuple[int, int] | None:
    if r.first is None:
        return None
    want = f"layer {r.first.layer}" if r.first.layer is not None else r.first.checkpoint
    col = grid.column_of(r.diverging_token)
    if want not in grid.labels or col is None:
        return None
    return grid.labels.index(want), col


def _decode_column(r: CompareReport, grid: HeatGrid) -> int | None:
    start = decode_start(r.findings.token_steps)
    col = grid.column_of(start)
    return col if col else None  # a boundary at the first column marks nothing


def _heatmaps(r: CompareReport) -> list[str]:
    heat = r.findings.heat
    if heat is None or not heat.tokens():
        return []
    grid = heat_grid(heat)
    out = [
        "<h2>Error by token and layer</h2>",
        json_script("heat-all", _heat_data(grid, "all tokens", _mark(r, grid), _decode_column(r, grid))),
        '<figure><div class="heat" id="heatmap" data-source="heat-all"></div>',
        "<figcaption>Each cell: the worst error among that layer's pairs at those tokens, over the threshold of "
        "its rule (so one scale fits every rule: red from the threshold up); purple: some pair undecided, none "
        "failing (not proven either way, never a pass); the outlined cell is the first divergence. "
        f"{len(heat.tokens())} token positions"
        + (f", {grid.group} to a column here (the page merges more to fit its width)" if grid.group > 1 else "")
        + ".</figcaption></figure>",
    ]
    tok = r.diverging_token
    if tok is not None and tok >= 0 and grid.group > 1:
        near = heat_grid(heat, window=(tok - CLOSE_UP, tok + CLOSE_UP))
        out += [
            json_script("heat-near", _heat_data(near, f"tokens around {tok}", _mark(r, near), None)),
            '<figure><div class="heat" id="heatmap-near" data-source="heat-near"></div>',
            f"<figcaption>The {CLOSE_UP} tokens either side of the diverging token, one column each.</figcaption>"
            "</figure>",
        ]
    return out


_PAIR_COLUMNS = ("#", "checkpoint", "layer", "stage", "token", "step", "rank", "tier", "metric", "value", "rule")
_PAIR_METRICS = ("max_abs", "mean_abs", "cosine")


def _failing_table(r: CompareReport) -> list[str]:
    f = r.findings
    pairs = f.kept_pairs()
    if not pairs:
        return []
    suspect = f.failed + f.undecided
    listed = "every pair (--detail)" if f.detail else f"the first {len(pairs)} of {suspect} in execution order"
    if not f.detail and len(pairs) >= suspect:
        listed = f"all {len(pairs)}"
    more = "" if f.detail or len(pairs) >= suspect else " (--max-pairs N lists more; --format json has them)"
    head = "".join(f"<th>{c}</th>" for c in (*_PAIR_COLUMNS, *_PAIR_METRICS, "basis"))
    out = [
        f"<h2>Failing and undecided pairs: {listed}{more}</h2>",
        csv_button("pairs", "orchlog-pairs.csv"),
        f'<div class="scroll"><table id="pairs" class="sortable"><thead><tr>{head}</tr></thead><tbody>',
    ]
    for v in pairs:
        cells = [
            _num(v.order),
            f"<td>{escape(v.checkpoint)}</td>",
            _num(v.layer),
            f"<td>{escape(v.stage or '')}</td>",
            _num(v.token_idx),
            _num(v.step),
            _num(v.rank),
            f"<td>{_tier_chip(v.tier)}</td>",
            f"<td>{escape(v.metric)}</td>",
            _num(v.value),
            f"<td>{escape(v.rule)}</td>",
            *(_num(v.metrics.get(m)) for m in _PAIR_METRICS),
            f"<td>{escape(v.basis)}</td>",
        ]
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table></div>")
    return out


def _num(v: float | int | None) -> str:
    if v is None:
        return "<td class=num></td>"
    x = float(v)
    return f'<td class=num data-v="{x!r}">{fmt(x)}</td>'


def _worst(r: CompareReport) -> list[str]:
    f = r.findings
    if not (f.worst and f.failed):
        return []
    out = [
        "<h2>Worst offenders</h2><table><tr><th>#</th><th>where</th><th>metric</th><th>value</th><th>tier</th>"
        "<th>cosine</th></tr>"
    ]
    for n, v in enumerate(f.worst, 1):
        out.append(
            f"<tr><td class=num>{n}</td><td>{escape(v.where())}</td><td>{escape(v.metric)}</td>"
            f"<td class=num>{fmt(v.value)}</td><td>{_tier_chip(v.tier)}</td>"
            f"<td class=num>{fmt(v.metrics.get('cosine'))}</td></tr>"
        )
    out.append("</table>")
    return out


def _rest(total: int) -> list[str]:
    if total <= SHOWN:
        return []
    return [f"<li>... and {total - SHOWN} more (all of them in --format json)</li>"]


def _problems(r: CompareReport) -> list[str]:
    out = []
    for side in "ab":
        items = r.unmatched_on(side)
        if items:
            out.append(f"<h2>Only in {side} ({len(items)})</h2><ul>")
            out += [
                f"<li>{escape(', '.join(f'{k}={v}' for k, v in u.key.items() if v is not None))} "
                f"<code>{escape(u.location)}</code></li>"
                for u in items[:SHOWN]
            ]
            out += _rest(len(items)) + ["</ul>"]
    if r.malformed:
        out.append(f"<h2>Malformed input ({len(r.malformed)})</h2><ul>")
        out += [f"<li>{m.side}: <code>{escape(str(m.diagnostic))}</code></li>" for m in r.malformed[:SHOWN]]
        out += _rest(len(r.malformed)) + ["</ul>"]
    return out


def _first_heading(r: CompareReport) -> str:
    assert r.first is not None
    kind = "fails" if r.first.failed else "undecided"
    where = r.first.where()  # names the token when the pair has one
    if r.first.token_idx is None:
        where = f"{token_text(r.diverging_token)}, {where}"
    return f'<h2 id="first">First divergence: {escape(where)} ({kind})</h2>'


def render_html(r: CompareReport) -> str:
    body = [
        f'<h1>orchlog compare <span class="badge {escape(r.status)}">{escape(r.status)}</span></h1>',
        '<div class="summary">',
        *(
            f'<p class="{"warn" if line.startswith("WARNING") else ""}">{escape(line)}</p>'
            for line in coverage_lines(r)
        ),
        f"<p><strong>{escape(result_line(r))}</strong></p>",
        *(f"<p>{escape(line)}</p>" for line in token_lines(r)),
        "</div>",
    ]
    body += _heatmaps(r)
    if r.first is not None:
        body.append(_first_heading(r))
        body += _pair(r.first)
        if r.first_failure is not None:
            body.append(f"<h3>First proven failure: {escape(r.first_failure.where())}</h3>")
            body += _pair(r.first_failure)
        body += _growth_charts(r) + _error_shape(r)
    if r.diagnosis:
        body += diagnosis_html(r.diagnosis)
    body += _failing_table(r) + _counts(r) + _inputs(r) + _worst(r) + _problems(r)
    return page(f"orchlog compare: {r.status}", body)
