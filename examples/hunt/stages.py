"""How closely each stage agrees: the largest |difference| per canonical
(checkpoint, stage) over every token and step, from a compare report. The
figures in docs/llama-cpp.md come from `python -m examples.hunt --stages`."""

from __future__ import annotations

from examples.hunt.run import Hunt
from orchlog.compare import CompareReport, compare

Stage = tuple[str, str | None]


def stage_agreement(report: CompareReport) -> dict[Stage, float]:
    """max_abs per (checkpoint, stage), in execution order; the report must hold every pair (detail)."""
    worst: dict[Stage, float] = {}
    for pair in report.findings.kept_pairs():
        key = (pair.checkpoint, pair.stage)
        worst[key] = max(worst.get(key, 0.0), pair.metrics["max_abs"])
    return worst


def stage_table(hunts: dict[str, Hunt]) -> str:
    """One row per stage, one column per engine compared with llama.cpp."""
    columns = {
        engine: stage_agreement(compare(h.reference, h.ours, h.options(detail=True))) for engine, h in hunts.items()
    }
    stages = list(dict.fromkeys(stage for figures in columns.values() for stage in figures))
    lines = [
        "max |difference| from llama.cpp, over all tokens and steps",
        f"{'stage':20}" + "".join(f"{engine:>12}" for engine in columns),
    ]
    for checkpoint, stage in stages:
        label = checkpoint + (f" ({stage})" if stage else "")
        lines.append(
            f"{label:20}"
            + "".join(
                f"{figures[(checkpoint, stage)]:12.2e}" if (checkpoint, stage) in figures else f"{'-':>12}"
                for figures in columns.values()
            )
        )
    return "\n".join(lines)
