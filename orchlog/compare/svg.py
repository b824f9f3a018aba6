"""Small inline SVG charts for the HTML report: no plotting library, no external files.

Errors span many orders of magnitude (1e-7 float noise next to a broken
layer at 3.0), so every scale here is logarithmic; values at or below the
floor sit on the floor, non-finite ones are drawn apart and labelled.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

TIER_COLORS = {
    "exact": "#2e7d32",
    "close": "#7cb342",
    "acceptable": "#c0ca33",
    "warning": "#fb8c00",
    "fail": "#d32f2f",
    "undecided": "#7e57c2",
}
# Sequential colours for the heatmap, low to high (light yellow to dark red).
_RAMP = ((255, 255, 217), (254, 217, 118), (253, 141, 60), (227, 26, 28), (128, 0, 38))
FLOOR, CEIL = 1e-8, 1e2


def log_position(value: float, lo: float = FLOOR, hi: float = CEIL) -> float:
    """Where value sits between lo and hi on a log scale, clamped to [0, 1]."""
    if not value > lo:  # zero, negative and NaN all sit on the floor
        return 0.0
    if math.isinf(value):
        return 1.0
    return min(1.0, (math.log10(value) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)))


def ramp_color(t: float) -> str:
    """The heatmap colour at position t in [0, 1]."""
    t = min(max(t, 0.0), 1.0) * (len(_RAMP) - 1)
    i = min(int(t), len(_RAMP) - 2)
    f = t - i
    r, g, b = (round(a + (c - a) * f) for a, c in zip(_RAMP[i], _RAMP[i + 1]))
    return f"#{r:02x}{g:02x}{b:02x}"


def _svg(width: int, height: int, body: list[str], label: str) -> str:
    return (
        f'<svg viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="{escape(label)}" font-family="sans-serif" font-size="11">' + "".join(body) + "</svg>"
    )


def _decades(lo: float, hi: float) -> list[float]:
    return [10.0**e for e in range(round(math.log10(lo)), round(math.log10(hi)) + 1)]


def error_bars(rows: Sequence[tuple[str, float, str]], title: str, marks: Sequence[tuple[str, float]] = ()) -> str:
    """Horizontal log-scale bars: (label, value, tier) per row, coloured by tier; marks are labelled vertical lines."""
    left, right, bar, gap, top = 150, 20, 14, 4, 28
    plot = 420
    height = top + len(rows) * (bar + gap) + 24
    width = left + plot + right
    body = [f'<text x="{left}" y="14" font-weight="bold">{escape(title)}</text>']
    for d in _decades(FLOOR, CEIL):
        x = left + log_position(d) * plot
        body.append(f'<line x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{height - 20}" stroke="#eee"/>')
        body.append(
            f'<text x="{x:.1f}" y="{height - 6}" text-anchor="middle" fill="#666">1e{round(math.log10(d))}</text>'
        )
    for name, value in marks:
        x = left + log_position(value) * plot
        body.append(
            f'<line x1="{x:.1f}" y1="{top - 6}" x2="{x:.1f}" y2="{height - 20}" stroke="#555" '
            f'stroke-dasharray="3,3"><title>{escape(name)} {value:g}</title></line>'
        )
    for i, (label, value, tier) in enumerate(rows):
        y = top + i * (bar + gap)
        w = max(1.0, log_position(value) * plot)
        text = "NaN" if value != value else f"{value:.3g}"
        body.append(f'<text x="{left - 6}" y="{y + bar - 3}" text-anchor="end">{escape(label)}</text>')
        body.append(
            f'<rect class="bar" x="{left}" y="{y}" width="{w:.1f}" height="{bar}" '
            f'fill="{TIER_COLORS.get(tier, "#9e9e9e")}" data-value="{text}">'
            f"<title>{escape(label)}: {text} ({escape(tier)})</title></rect>"
        )
        body.append(f'<text x="{left + w + 4:.1f}" y="{y + bar - 3}" fill="#333">{text}</text>')
    return _svg(width, height, body, title)


def heatmap(
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    values: Sequence[Sequence[float | None]],
    title: str,
    mark: tuple[int, int] | None = None,
) -> str:
    """Cells coloured by log10 of their value; None cells are empty; `mark` (row, col) is outlined."""
    left, top, cell_w, cell_h = 150, 40, max(6, min(28, 640 // max(1, len(col_labels)))), 14
    # Wide enough for the title and the legend even when there are few columns.
    width = max(left + cell_w * len(col_labels) + 20, left + 300, left + 7 * len(title))
    height = top + cell_h * len(row_labels) + 46
    body = [f'<text x="{left}" y="14" font-weight="bold">{escape(title)}</text>']
    step = max(1, math.ceil(len(col_labels) * 28 / max(1, cell_w * len(col_labels))))
    for c, label in enumerate(col_labels):
        if c % step == 0:
            body.append(
                f'<text x="{left + c * cell_w + cell_w / 2:.1f}" y="{top - 6}" text-anchor="middle" '
                f'fill="#666">{escape(label)}</text>'
            )
    for r, label in enumerate(row_labels):
        y = top + r * cell_h
        body.append(f'<text x="{left - 6}" y="{y + cell_h - 3}" text-anchor="end">{escape(label)}</text>')
        for c, value in enumerate(values[r]):
            if value is None:
                continue
            text = "NaN" if value != value else f"{value:.3g}"
            body.append(
                f'<rect class="cell" x="{left + c * cell_w}" y="{y}" width="{cell_w}" height="{cell_h}" '
                f'fill="{ramp_color(log_position(value))}" data-value="{text}">'
                f"<title>{escape(label)}, {escape(col_labels[c])}: {text}</title></rect>"
            )
    if mark is not None:
        r, c = mark
        body.append(
            f'<rect class="mark" x="{left + c * cell_w}" y="{top + r * cell_h}" width="{cell_w}" '
            f'height="{cell_h}" fill="none" stroke="#000" stroke-width="2"/>'
        )
    legend_y = top + cell_h * len(row_labels) + 14
    for i in range(11):
        body.append(f'<rect x="{left + i * 24}" y="{legend_y}" width="24" height="10" fill="{ramp_color(i / 10)}"/>')
    body.append(f'<text x="{left}" y="{legend_y + 24}" fill="#666">{FLOOR:g} or less</text>')
    body.append(
        f'<text x="{left + 264}" y="{legend_y + 24}" text-anchor="end" fill="#666">{CEIL:g} or more (log scale)</text>'
    )
    return _svg(width, height, body, title)


def tier_strip(counts: Sequence[tuple[str, int]]) -> str:
    """One stacked bar of pair counts per tier."""
    total = sum(c for _, c in counts) or 1
    width, x = 600, 0.0
    body = []
    for tier, c in counts:
        if not c:
            continue
        w = width * c / total
        body.append(
            f'<rect x="{x:.1f}" y="0" width="{w:.1f}" height="18" fill="{TIER_COLORS.get(tier, "#999")}">'
            f"<title>{escape(tier)}: {c}</title></rect>"
        )
        x += w
    return _svg(width, 18, body, "pairs per tier")
