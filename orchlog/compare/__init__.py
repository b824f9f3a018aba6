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

from typing import TYPE_CHECKING

from orchlog.lazy import lazy

if TYPE_CHECKING:
    from orchlog.compare.engine import alignment_key as alignment_key
    from orchlog.compare.engine import compare as compare
    from orchlog.compare.engine import finish as finish
    from orchlog.compare.engine import walk as walk
    from orchlog.compare.grading.partial import PartialReport as PartialReport
    from orchlog.compare.options import LOGITS_NAMES as LOGITS_NAMES
    from orchlog.compare.options import CompareOptions as CompareOptions
    from orchlog.compare.pairing.keys import DEFAULT_KEY as DEFAULT_KEY
    from orchlog.compare.result import CompareReport as CompareReport

# Imported on first use, so that importing one step of the pipeline (orchlog.compare.pairing.keys, say, from
# the diagnosis) does not run the engine, which imports the diagnosis.
_LAZY = {
    **dict.fromkeys(("alignment_key", "compare", "finish", "walk"), "orchlog.compare.engine"),
    **dict.fromkeys(("LOGITS_NAMES", "CompareOptions"), "orchlog.compare.options"),
    "PartialReport": "orchlog.compare.grading.partial",
    "DEFAULT_KEY": "orchlog.compare.pairing.keys",
    "CompareReport": "orchlog.compare.result",
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy(__name__, _LAZY)
