"""orchlog.compare: align two traces, measure and grade every pair, and name the first divergence.

    from orchlog.compare import CompareOptions, compare
    from orchlog.report import render_text
    report = compare("reference.jsonl", "ours.bin", CompareOptions(maps=["example"]))
    if not report:
        print(report.first.where())
    print(render_text(report))

The pipeline, one sub-package per step (docs/architecture.md follows one record through it):

    pairing/     what a side's records become (keys, sides, tokens) and which pairs up (align, rounds:
                 the walk over paired records); how a pair's tensors line up (window, aligned, tensors)
    measuring/   the figures of a pair (metrics, tensor_metrics, logits) and what summaries prove (bounds,
                 noise_ratio)
    grading/     tiers against the tolerances and the noise (tiers, noise), the walk's findings (divergence,
                 growth, coverage, partial) and the rerun that decides an undecided pair
    engine.py    walk, finish and compare; options.py the options; result.py and pairview.py the report as a
                 value (orchlog/report/ renders it); per_token.py --per-token; dump.py --dump-raw;
                 calibrate.py `orchlog calibrate`

Name maps, tensor views and shard layouts are orchlog.maps; tolerance files and presets orchlog.tolerances.
"""

from __future__ import annotations

from orchlog.compare.engine import alignment_key, compare, finish, walk
from orchlog.compare.grading.partial import PartialReport
from orchlog.compare.options import LOGITS_NAMES, CompareOptions
from orchlog.compare.pairing.keys import DEFAULT_KEY
from orchlog.compare.result import CompareReport

__all__ = [
    "CompareOptions",
    "CompareReport",
    "DEFAULT_KEY",
    "LOGITS_NAMES",
    "PartialReport",
    "alignment_key",
    "compare",
    "finish",
    "walk",
]
