"""The files the guardrail leaves behind, laid out as the seed lays them out (relative to the output
directory, the artifact directory unless told otherwise):

    summary.json                               verdict, per-pair verdicts and metrics, pairing errors,
                                               missing pairs, first fail
    metrics/kv_aligned_1/seed_0_metrics.json   one per pair: its summary entry plus every position's metrics
    EQUIVALENCE_GUARDRAIL.md                   the Markdown report
    EQUIVALENCE_GUARDRAIL.html                 the same as one page with each pair's metrics by position
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from orchlog.errors import OrchlogError
from orchlog.guardrail.result import PAIR_VERSION, GuardrailResult
from orchlog.report.guardrail_html import render_html
from orchlog.report.guardrail_text import SUMMARY_FILE, render_markdown

REPORT_FILE = "EQUIVALENCE_GUARDRAIL.md"
HTML_FILE = "EQUIVALENCE_GUARDRAIL.html"


def _dump(doc: Any) -> str:
    return json.dumps(doc, indent=1, allow_nan=False) + "\n"


def write_outputs(r: GuardrailResult, directory: str | Path) -> list[Path]:
    """Write summary.json, the per-pair metrics files and the Markdown and HTML reports; the paths written."""
    out = Path(directory)
    files: list[tuple[Path, str]] = [(out / SUMMARY_FILE, _dump(r.to_json()))]
    thresholds = r.matrix.thresholds.to_json()
    files += [
        (out / p.metrics_file, _dump({"report": PAIR_VERSION, "thresholds": thresholds, **p.to_json(per_token=True)}))
        for p in r.pairs
    ]
    files.append((out / REPORT_FILE, render_markdown(r)))
    files.append((out / HTML_FILE, render_html(r)))
    for path, text in files:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise OrchlogError(
                f"cannot write {path} ({exc.strerror or exc}); choose another place with --output-dir"
            ) from None
    return [path for path, _ in files]
