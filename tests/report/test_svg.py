"""SVG helpers: log scales that survive zeros, NaN and infinities."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from orchlog.report import svg
from tests.markup import attribute


def test_log_position_clamps_and_orders():
    assert svg.log_position(0.0) == 0.0 and svg.log_position(math.nan) == 0.0 and svg.log_position(-1) == 0.0
    assert svg.log_position(math.inf) == 1.0 and svg.log_position(1e9) == 1.0
    assert 0 < svg.log_position(1e-5) < svg.log_position(1e-3) < svg.log_position(1.0) < 1


def test_ramp_runs_from_light_to_dark():
    def lightness(c):
        return sum(int(c[i : i + 2], 16) for i in (1, 3, 5))

    shades = [lightness(svg.ramp_color(t / 10)) for t in range(11)]
    assert shades == sorted(shades, reverse=True)


def test_charts_are_well_formed_with_awkward_values():
    bars = svg.error_bars(
        [("a", 0.0, "exact"), ("b", math.nan, "unknown"), ("c", math.inf, "fail")], "t", [("threshold", 1e-2)]
    )
    hist = svg.histogram([1e-6, 1e-3, 1.0], [4, 0], "h & m", [("x", 1e-2)])
    empty = svg.histogram([], [], "nothing differs")
    index = svg.index_plot([0.0, math.nan, math.inf, 1e-3], 2, "by <index>", [("threshold", 1e-2)])
    grid = svg.value_grid([[0.0, math.inf], [1e-3, math.nan]], "head", "i", "g")
    for chart in (bars, hist, empty, index, grid, svg.tier_strip([("exact", 3), ("fail", 0)])):
        ET.fromstring(chart)
    assert "h &amp; m" in hist and "by &lt;index&gt;" in index


def test_histogram_bars_are_as_tall_as_their_counts():
    chart = ET.fromstring(svg.histogram([1e-4, 1e-3, 1e-2, 1e-1], [10, 0, 5], "h"))
    heights = [float(attribute(r, "height")) for r in chart.iter("rect") if r.get("class") == "bin"]
    assert len(heights) == 2 and heights[0] == 2 * heights[1]
