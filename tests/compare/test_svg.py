"""SVG helpers: log scales that survive zeros, NaN and infinities."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from orchlog.compare import svg


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
    heat = svg.heatmap(["r<1>"], ["0", "1"], [[None, 3.0]], "h & m", mark=(0, 1))
    for chart in (bars, heat, svg.tier_strip([("exact", 3), ("fail", 0)])):
        ET.fromstring(chart)
    assert "r&lt;1&gt;" in heat and "h &amp; m" in heat
