"""The compare report as one self-contained HTML page with charts (`--format html`).

Everything is inline (CSS and SVG), so the page can be attached to a CI run
or mailed around. The charts answer the two questions a divergence hunt
asks first: at the diverging token, how does the error grow layer by layer;
and across tokens, where does it start.
"""

from __future__ import annotations

import math
from html import escape
from typing import TYPE_CHECKING

from orchlog import __version__
from orchlog.compare import rerun, svg
from orchlog.compare.grading import TIER_NAMES
from orchlog.compare.growth import Growth, GrowthRow
from orchlog.compare.pairview import PairView
from orchlog.compare.render import (
    alignment_lines,
    coverage_lines,
    fmt,
    metrics_line,
    result_line,
    token_lines,
    token_text,
    verdict_line,
)

if TYPE_CHECKING:
    from orchlog.compare.result import CompareReport

MAX_COLUMNS = 240  # tokens drawn one per column; more are grouped, each group showing its worst

_CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1 .badge{font-size:.6em;padding:.15em .6em;border-radius:.4em;color:#fff;vertical-align:middle}
.ok{background:#2e7d32}.diverged{background:#d32f2f}.no_match{background:#757575}
.undecided{background:#7e57c2}.incomplete{background:#ef6c00}.warn{color:#b71c1c;font-weight:bold}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:.2em .6em;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums}code{background:#f4f4f4;padding:0 .2em}
.tier{display:inline-block;width:.8em;height:.8em;border-radius:.2em;margin-right:.3em}
figure{margin:1em 0}figcaption{color:#555;font-size:.9em}
"""


def _tier_chip(tier: str) -> str:
    return f'<span class="tier" style="background:{svg.TIER_COLORS.get(tier, "#999")}"></span>{escape(tier)}'


def _inputs(r: CompareReport) -> list[str]:
    out = ["<table><tr><th></th><th>path</th><th>format</th><th>records</th><th>team</th><th>producer</th></tr>"]
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
        f"<p>{_tier_chip(v.tier)}: {escape(verdict_line(v))}</p>",
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
            f"<li>{side}: <code>{escape(env)} &lt;the command that wrote {side}&gt;</code></li>"
            for side, env in rerun.commands(v.own_keys)
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


def _growth_chart(r: CompareReport) -> list[str]:
    if len(r.growth) < 2:
        return []
    rows = [(g.label, g.max_abs, "fail" if g.failed else g.worst_tier) for g in r.growth]
    rule = next((x for x in r.tolerances.all_rules if r.first is not None and x.name == r.first.rule), None)
    marks = [(f"fail threshold of rule {rule.name!r}", rule.threshold)] if rule and rule.metric == "max_abs" else []
    chart = svg.error_bars(rows, f"max_abs by layer at {token_text(r.diverging_token)} (execution order)", marks)
    return [
        f"<figure>{chart}<figcaption>Worst max_abs among each layer's pairs at the diverging token, coloured by "
        "its tier; the dashed line is the fail threshold of the first divergence's rule.</figcaption></figure>"
    ]


def _row_order(per_token: dict[int, list[GrowthRow]]) -> list[str]:
    """Labels in execution order: by their mean rank within the tokens that have them."""
    ranks: dict[str, list[int]] = {}
    for rows in per_token.values():
        for i, g in enumerate(rows):
            ranks.setdefault(g.label, []).append(i)
    return sorted(ranks, key=lambda label: sum(ranks[label]) / len(ranks[label]))


def heat_grid(
    heat: Growth, max_columns: int = MAX_COLUMNS
) -> tuple[list[str], list[str], list[list[float | None]], list[list[int]]]:
    """(row labels, column labels, worst max_abs per cell, tokens of each column) for the heatmap."""
    per_token = heat.tables()
    tokens = sorted(per_token)
    labels = _row_order(per_token)
    group = max(1, math.ceil(len(tokens) / max_columns))
    columns = [tokens[i : i + group] for i in range(0, len(tokens), group)]
    grid: list[list[float | None]] = [[None] * len(columns) for _ in labels]
    where = {label: i for i, label in enumerate(labels)}
    for c, toks in enumerate(columns):
        for t in toks:
            for g in per_token[t]:
                cell = grid[where[g.label]][c]
                grid[where[g.label]][c] = g.max_abs if cell is None or g.max_abs > cell else cell
    names = [("-" if t[0] < 0 else str(t[0])) if len(t) == 1 else f"{t[0]}-{t[-1]}" for t in columns]
    return labels, names, grid, columns


def _heatmap(r: CompareReport) -> list[str]:
    heat = r.findings.heat
    if heat is None or not heat.tokens():
        return []
    labels, names, grid, columns = heat_grid(heat)
    mark = None
    if r.first is not None and r.growth:
        label = next(
            (
                g.label
                for g in r.growth
                if g.first_order <= r.first.order
                and (g.layer == r.first.layer if r.first.layer is not None else g.label == r.first.checkpoint)
            ),
            None,
        )
        col = next((c for c, toks in enumerate(columns) if r.diverging_token in toks), None)
        if label in labels and col is not None:
            mark = (labels.index(label), col)
    chart = svg.heatmap(labels, names, grid, "worst max_abs per layer (rows) and token (columns)", mark)
    return [
        "<h2>Error by token and layer</h2>",
        f"<figure>{chart}<figcaption>Each cell is the worst max_abs among that layer's pairs at that token "
        "(log colour scale); the outlined cell is the first divergence. Columns are token positions"
        + (f", grouped {len(columns[0])} to a column" if len(columns[0]) > 1 else "")
        + ".</figcaption></figure>",
    ]


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


def _problems(r: CompareReport) -> list[str]:
    out = []
    for side in "ab":
        items = r.unmatched_on(side)
        if items:
            out.append(f"<h2>Only in {side} ({len(items)})</h2><ul>")
            out += [
                f"<li>{escape(', '.join(f'{k}={v}' for k, v in u.key.items() if v is not None))} "
                f"<code>{escape(u.location)}</code></li>"
                for u in items[:200]
            ]
            out.append("</ul>")
    if r.malformed:
        out.append(f"<h2>Malformed input ({len(r.malformed)})</h2><ul>")
        out += [f"<li>{m.side}: <code>{escape(str(m.diagnostic))}</code></li>" for m in r.malformed[:200]]
        out.append("</ul>")
    return out


def render_html(r: CompareReport) -> str:
    body = [
        f'<h1>orchlog compare <span class="badge {escape(r.status)}">{escape(r.status)}</span></h1>',
    ]
    body += [
        f'<p class="{"warn" if line.startswith("WARNING") else ""}">{escape(line)}</p>' for line in coverage_lines(r)
    ]
    body.append(f"<p><strong>{escape(result_line(r))}</strong></p>")
    body += [f"<p>{escape(line)}</p>" for line in token_lines(r)]
    body += _inputs(r) + _counts(r)
    if r.first is not None:
        kind = "fails" if r.first.failed else "undecided"
        body.append(
            f"<h2>First divergence: {escape(token_text(r.diverging_token))}, {escape(r.first.where())} ({kind})</h2>"
        )
        body += _pair(r.first)
        if r.first_failure is not None:
            body.append(f"<h3>First proven failure: {escape(r.first_failure.where())}</h3>")
            body += _pair(r.first_failure)
        body += _growth_chart(r)
    if r.diagnosis:
        from orchlog.diagnose.render import diagnosis_html

        body += diagnosis_html(r.diagnosis)
    body += _heatmap(r) + _worst(r) + _problems(r)
    body.append(f"<footer><p>orchlog {escape(__version__)}</p></footer>")
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>orchlog compare: {escape(r.status)}</title><style>{_CSS}</style></head><body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )
