"""The graft report for people: text, Markdown and a plain HTML page, one table per layer and stage."""

from __future__ import annotations

import math
from html import escape

from orchlog.graft_report.local_error import Measure, StageRow, stage_label
from orchlog.graft_report.result import GraftReport, verdict_text
from orchlog.safe_text import markdown_text

HEADER = ("stage", "local", "tier", "hops", "since", "end to end", "tier", "local/e2e", "verdict")


def _num(v: float | None) -> str:
    if v is None:
        return "-"
    return "n/a" if math.isnan(v) else f"{v:.3g}"


def _value(m: Measure | None) -> str:
    """The graded metric; an interval where the evidence only brackets it."""
    if m is None:
        return "-"
    lo, hi = m.interval
    if not (math.isnan(lo) or math.isnan(hi)) and lo != hi:
        return f"[{_num(lo)}, {_num(hi)}]"
    return _num(m.value)


def cells(r: StageRow) -> list[str]:
    local = r.local
    return [
        stage_label(r.stage),
        _value(local.measure if local else None),
        local.measure.tier if local else "-",
        str(local.hops) if local else "-",
        stage_label(local.since) if local else "-",
        _value(r.end_to_end),
        r.end_to_end.tier if r.end_to_end else "-",
        _num(r.ratio),
        verdict_text(r),
    ]


def _metric_note(r: GraftReport) -> str:
    metrics = sorted({m.metric for row in r.rows for m in (row.local and row.local.measure, row.end_to_end) if m})
    return f"figures: {', '.join(metrics) or 'none'} (each stage's worst pair over tokens and steps)"


def _heading(r: GraftReport) -> list[str]:
    lines = [f"reference   {r.reference}"]
    for path, c in zip(r.grafted, r.coverage):
        lines.append(f"grafted     {path}  ({c.pairs} pairs: {c.grafted} grafted, {c.measured} local measurements)")
    if r.plain is not None:
        lines.append(f"plain       {r.plain}")
    lines.append(f"tolerances  {r.tolerances.source}")
    return lines


def render_text(r: GraftReport) -> str:
    out = ["orchlog graft report: each stage's own error, with its inputs grafted from the reference", ""]
    out += _heading(r)
    out += ["", f"status: {r.status_line()}", r.largest_line()]
    if r.layers:
        out += ["", "per layer, the stage with the largest local error:"]
        for row in r.layers:
            m = row.local.measure  # type: ignore[union-attr]
            out.append(f"  {stage_label(row.stage):32} {m.metric} {_value(m):>22}  {m.tier}")
    table = [list(HEADER)] + [cells(row) for row in r.rows]
    widths = [max(len(row[k]) for row in table) for k in range(len(HEADER) - 1)]
    out += ["", _metric_note(r)]
    for line in table:
        out.append("  ".join(c.ljust(w) for c, w in zip(line, widths)) + "  " + line[-1])
    for w in r.warnings():
        out.append(f"warning: {w}")
    return "\n".join(out) + "\n"


def render_markdown(r: GraftReport) -> str:
    out = ["## orchlog graft report", ""]
    out += [f"- {markdown_text(line)}" for line in _heading(r)]
    out += ["", f"**{markdown_text(r.status_line())}**", "", markdown_text(r.largest_line()), ""]
    out += [markdown_text(_metric_note(r)), ""]
    out.append("| " + " | ".join(HEADER) + " |")
    out.append("|" + "---|" * len(HEADER))
    for row in r.rows:
        out.append("| " + " | ".join(markdown_text(c).replace("|", "\\|") for c in cells(row)) + " |")
    warnings = r.warnings()
    if warnings:
        out += ["", *(f"- warning: {markdown_text(w)}" for w in warnings)]
    return "\n".join(out) + "\n"


_STYLE = (
    "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{padding:2px 8px;"
    "border-bottom:1px solid #ddd;text-align:left}td.fail{color:#b00}td.undecided{color:#a60}"
)


def render_html(r: GraftReport) -> str:
    out = [
        "<!doctype html><html><head><meta charset=utf-8><title>orchlog graft report</title>",
        f"<style>{_STYLE}</style></head><body><h1>orchlog graft report</h1>",
        "<ul>" + "".join(f"<li><code>{escape(line)}</code></li>" for line in _heading(r)) + "</ul>",
        f"<p><b>{escape(r.status_line())}</b></p><p>{escape(r.largest_line())}</p>",
        f"<p>{escape(_metric_note(r))}</p><table><tr>" + "".join(f"<th>{escape(h)}</th>" for h in HEADER) + "</tr>",
    ]
    for row in r.rows:
        tiers = (2, 6)
        out.append(
            "<tr>"
            + "".join(
                f'<td class="{escape(c)}">{escape(c)}</td>' if k in tiers else f"<td>{escape(c)}</td>"
                for k, c in enumerate(cells(row))
            )
            + "</tr>"
        )
    out.append("</table>")
    warnings = r.warnings()
    if warnings:
        out.append("<ul>" + "".join(f"<li>warning: {escape(w)}</li>" for w in warnings) + "</ul>")
    out.append("</body></html>\n")
    return "\n".join(out)
