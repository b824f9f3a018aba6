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
    """A chart that scales to its container's width (up to its natural width, so its text stays readable)."""
    return (
        f'<svg class="chart" viewBox="0 0 {width} {height}" style="--w:{width}px" role="img" '
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


def _log_range(values: Sequence[float]) -> tuple[float, float]:
    """Whole decades around the finite positive values (1e-8..1 when there are none)."""
    pos = [v for v in values if v > 0 and math.isfinite(v)]
    if not pos:
        return FLOOR, 1.0
    lo, hi = math.floor(math.log10(min(pos))), math.ceil(math.log10(max(pos)))
    return 10.0**lo, 10.0 ** max(hi, lo + 1)


def _x_decades(body: list[str], lo: float, hi: float, left: float, plot: float, y0: float, y1: float) -> None:
    decades = _decades(lo, hi)
    step = max(1, math.ceil(len(decades) / 10))
    for d in decades[::step]:
        x = left + log_position(d, lo, hi) * plot
        body.append(f'<line x1="{x:.1f}" y1="{y0}" x2="{x:.1f}" y2="{y1}" stroke="#eee"/>')
        body.append(f'<text x="{x:.1f}" y="{y1 + 14}" text-anchor="middle" fill="#666">1e{round(math.log10(d))}</text>')


def histogram(
    edges: Sequence[float], counts: Sequence[int], title: str, marks: Sequence[tuple[str, float]] = ()
) -> str:
    """Counts per log-spaced bin (edges: len(counts) + 1), bars on a log x axis; marks are labelled lines."""
    left, plot, top, height_plot = 50, 560, 24, 150
    width, height = left + plot + 20, top + height_plot + 24
    lo, hi = _log_range([*edges, *(v for _, v in marks)])
    body = [f'<text x="{left}" y="14" font-weight="bold">{escape(title)}</text>']
    _x_decades(body, lo, hi, left, plot, top, top + height_plot)
    peak = max(counts, default=0) or 1
    for n, c in enumerate(counts):
        if not c:
            continue
        x0 = left + log_position(edges[n], lo, hi) * plot
        x1 = left + log_position(edges[n + 1], lo, hi) * plot
        h = max(1.0, height_plot * c / peak)
        body.append(
            f'<rect class="bin" x="{x0:.1f}" y="{top + height_plot - h:.1f}" width="{max(1.0, x1 - x0 - 0.5):.1f}" '
            f'height="{h:.1f}" fill="#5c6bc0"><title>{edges[n]:.3g} to {edges[n + 1]:.3g}: {c}</title></rect>'
        )
    body.append(f'<text x="{left - 4}" y="{top + 8}" text-anchor="end" fill="#666">{peak}</text>')
    for name, value in marks:
        x = left + log_position(value, lo, hi) * plot
        body.append(
            f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + height_plot}" stroke="#d32f2f" '
            f'stroke-dasharray="4,3"><title>{escape(name)} {value:g}</title></line>'
        )
    return _svg(width, height, body, title)


def index_plot(
    values: Sequence[float],
    group: int,
    title: str,
    marks: Sequence[tuple[str, float]] = (),
    start: int = 0,
    axis: str = "index",
) -> str:
    """The worst value per bin of `group` indices (the first being `start`), on a log y axis; marks are
    labelled horizontal lines."""
    left, plot, top, height_plot = 60, 560, 24, 150
    width, height = left + plot + 20, top + height_plot + 26
    finite = [v for v in values if math.isfinite(v)]
    lo, hi = _log_range([*finite, *(v for _, v in marks)])
    body = [f'<text x="{left}" y="14" font-weight="bold">{escape(title)}</text>']
    for d in _decades(lo, hi)[:: max(1, math.ceil(len(_decades(lo, hi)) / 6))]:
        y = top + height_plot * (1 - log_position(d, lo, hi))
        body.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot}" y2="{y:.1f}" stroke="#eee"/>')
        body.append(
            f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end" fill="#666">1e{round(math.log10(d))}</text>'
        )
    n = max(1, len(values))
    points = []
    for i, v in enumerate(values):
        y = top + height_plot * (1 - (1.0 if math.isinf(v) and v > 0 else log_position(v, lo, hi)))
        points.append(f"{left + plot * (i + 0.5) / n:.1f},{y:.1f}")
    body.append(
        f'<polyline class="series" fill="none" stroke="#3949ab" stroke-width="1.2" points="{" ".join(points)}"/>'
    )
    for name, value in marks:
        y = top + height_plot * (1 - log_position(value, lo, hi))
        body.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot}" y2="{y:.1f}" stroke="#d32f2f" stroke-dasharray="4,3">'
            f"<title>{escape(name)} {value:g}</title></line>"
        )
    last = start + len(values) * group - 1
    body.append(f'<text x="{left}" y="{height - 6}" fill="#666">{escape(axis)} {start}</text>')
    body.append(f'<text x="{left + plot}" y="{height - 6}" text-anchor="end" fill="#666">{last}</text>')
    return _svg(width, height, body, title)


def value_grid(grid: Sequence[Sequence[float]], row_name: str, col_name: str, title: str) -> str:
    """A small heatmap of values (rows x columns, log colour scale from the smallest positive to the largest)."""
    rows, cols = len(grid), max((len(r) for r in grid), default=0)
    left, top = 60, 24
    cell_w = max(2, min(12, 560 // max(1, cols)))
    cell_h = max(3, min(12, 240 // max(1, rows)))
    width, height = max(left + cell_w * cols + 20, 460), top + cell_h * rows + 40
    flat = [v for r in grid for v in r if math.isfinite(v)]
    lo, hi = _log_range(flat)
    body = [f'<text x="{left}" y="14" font-weight="bold">{escape(title)}</text>']
    for r, row in enumerate(grid):
        for c, v in enumerate(row):
            colour = "#400010" if math.isinf(v) and v > 0 else ramp_color(log_position(v, lo, hi))
            body.append(
                f'<rect x="{left + c * cell_w}" y="{top + r * cell_h}" width="{cell_w}" height="{cell_h}" '
                f'fill="{colour}"><title>{escape(row_name)} {r}, {escape(col_name)} {c}: {v:.3g}</title></rect>'
            )
    step = max(1, math.ceil(rows * 12 / max(1, rows * cell_h)))
    for r in range(0, rows, step):
        body.append(
            f'<text x="{left - 4}" y="{top + r * cell_h + cell_h - 1}" text-anchor="end" fill="#666">{r}</text>'
        )
    y = top + cell_h * rows + 14
    body.append(f'<text x="{left}" y="{y}" fill="#666">{escape(col_name)} 0</text>')
    body.append(f'<text x="{left + cell_w * cols}" y="{y}" text-anchor="end" fill="#666">{cols - 1}</text>')
    body.append(
        f'<text x="{left}" y="{y + 16}" fill="#666">{escape(row_name)} (rows); colour: log |a-b| from '
        f"{lo:.0e} (pale) to {hi:.0e} (dark)</text>"
    )
    return _svg(width, height, body, title)
