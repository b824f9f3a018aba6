"""orchlog.report: every result of orchlog for people, as text, Markdown or one HTML page.

    from orchlog.report import render, render_text
    report = orchlog.compare("ref.bin", "ours.bin")
    print(report)                     # the verdict in one line
    print(render_text(report))        # the whole report; render(report, "md" | "html" | "json")

Results (compare's CompareReport and PerTokenReport, graft-report's GraftReport,
the guardrail's GuardrailResult, weights' WeightsReport) are plain values that
never import this package; each module here renders one of them:

    compare_text, compare_html   compare: text and Markdown; the page (heatmap.py, error_shape.py)
    per_token_text               compare --per-token
    diagnosis                    the diagnosis's lines within compare's report
    graft                        graft-report: text, Markdown and a page
    guardrail_text, guardrail_html, guardrail_files   the guardrail and the files it leaves behind
    weights_text                 orchlog weights
    page, svg                    what every page is built of: the frame, inline charts, CSV export

Numbers are written through orchlog/numbers.py, the same in every report.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from typing import Any

from orchlog.errors import OrchlogError

FORMATS = ("text", "md", "html", "json")

Renderer = Callable[[Any], str]
# For each kind of result (its class, by module and name), the renderer of each format it has, as
# "module:function" under orchlog.report (JSON is the result's own to_json()). Named, not imported:
# a command imports the one renderer it uses (`orchlog compare` never loads the guardrail's pages).
_RENDERERS: dict[str, dict[str, str]] = {
    "orchlog.compare.result.CompareReport": {
        "text": "compare_text:render_text",
        "md": "compare_text:render_markdown",
        "html": "compare_html:render_html",
    },
    "orchlog.compare.per_token.PerTokenReport": {
        "text": "per_token_text:render_text",
        "md": "per_token_text:render_markdown",
    },
    "orchlog.graft_report.result.GraftReport": {
        "text": "graft:render_text",
        "md": "graft:render_markdown",
        "html": "graft:render_html",
    },
    "orchlog.guardrail.result.GuardrailResult": {
        "text": "guardrail_text:render_text",
        "md": "guardrail_text:render_markdown",
        "html": "guardrail_html:render_html",
    },
    "orchlog.weights.result.WeightsReport": {
        "text": "weights_text:render_text",
        "md": "weights_text:render_markdown",
    },
}


def formats_of(result: Any) -> tuple[str, ...]:
    """The formats `render` writes this result in."""
    return (*_renderers(result), "json")


def _renderers(result: Any) -> dict[str, str]:
    for kind in type(result).__mro__:
        renderers = _RENDERERS.get(f"{kind.__module__}.{kind.__qualname__}")
        if renderers is not None:
            return renderers
    raise TypeError(f"orchlog.report renders no {type(result).__name__}")


def _renderer(name: str) -> Renderer:
    module, function = name.split(":")
    renderer: Renderer = getattr(importlib.import_module(f"orchlog.report.{module}"), function)
    return renderer


def render(result: Any, fmt: str = "text") -> str:
    """`result` in `fmt` (text, md, html or json); OrchlogError for a format this kind of result lacks."""
    if fmt == "json":
        return json.dumps(result.to_json(), indent=1, allow_nan=False) + "\n"
    name = _renderers(result).get(fmt)
    if name is None:
        offered = ", ".join(formats_of(result))
        raise OrchlogError(f"--format {fmt}: a {type(result).__name__} has no {fmt} form; use {offered}")
    return _renderer(name)(result)


def render_text(result: Any) -> str:
    """The whole report as plain text, for terminals and logs."""
    return render(result, "text")


def render_markdown(result: Any) -> str:
    """The report as Markdown, for reviews and CI comments."""
    return render(result, "md")


def render_html(result: Any) -> str:
    """The report as one self-contained HTML page."""
    return render(result, "html")


__all__ = ["FORMATS", "formats_of", "render", "render_html", "render_markdown", "render_text"]
