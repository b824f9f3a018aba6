"""WeightsReport: what `orchlog weights` found, as a value; text, Markdown and JSON with stable keys."""

from __future__ import annotations

import dataclasses
from typing import Any

from orchlog.compare.grading import TIER_NAMES
from orchlog.compare.render import fmt
from orchlog.compare.result import number, rule_json
from orchlog.compare.tolerances import Tolerances
from orchlog.safe_text import for_terminal, markdown_code, markdown_text
from orchlog.weights.compare import AS_STORED, WeightRow
from orchlog.weights.tensors import WeightSource

REPORT_VERSION = "orchlog-weights/1"
OK, DIVERGED, NO_MATCH = "ok", "diverged", "no_match"


@dataclasses.dataclass
class Input:
    path: str
    format: str
    arch: str | None
    tensors: int

    @staticmethod
    def of(source: WeightSource) -> Input:
        return Input(source.path, source.format, source.arch, len(source.tensors))


@dataclasses.dataclass
class WeightsReport:
    inputs: tuple[Input, Input]
    map: str
    tolerances: Tolerances
    rows: list[WeightRow]
    only_a: list[str]
    only_b: list[str]

    @property
    def status(self) -> str:
        if not self.rows:
            return NO_MATCH
        return DIVERGED if any(r.failed for r in self.rows) else OK

    def __bool__(self) -> bool:
        return self.status == OK

    @property
    def exit_code(self) -> int:
        return 0 if self else 1

    def failing(self) -> list[WeightRow]:
        return [r for r in self.rows if r.failed]

    def counts(self) -> dict[str, int]:
        return {name: sum(1 for r in self.rows if r.tier == name) for name in TIER_NAMES}

    def relations(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.rows:
            out[r.relation] = out.get(r.relation, 0) + 1
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "report": REPORT_VERSION,
            "status": self.status,
            "inputs": {side: dataclasses.asdict(i) for side, i in zip("ab", self.inputs)},
            "map": self.map,
            "tolerances": {
                "source": self.tolerances.source,
                "rules": [rule_json(r) for r in self.tolerances.all_rules],
            },
            "counts": {
                "pairs": len(self.rows),
                "tiers": self.counts(),
                "relations": self.relations(),
                "only_a": len(self.only_a),
                "only_b": len(self.only_b),
            },
            "weights": [row_json(r) for r in self.rows],
            "only_in": {"a": self.only_a, "b": self.only_b},
        }

    def __str__(self) -> str:
        return render_text(self)

    def to_markdown(self) -> str:
        return render_markdown(self)


def row_json(r: WeightRow) -> dict[str, Any]:
    return {
        "names": {"a": r.name_a, "b": r.name_b},
        "shapes": {"a": list(r.shape_a), "b": list(r.shape_b)},
        "dtypes": {"a": r.dtype_a, "b": r.dtype_b},
        "layout": r.layout,
        "relation": r.relation,
        "relation_means": r.relation_means,
        "tier": r.tier,
        "metric": r.metric,
        "value": number(r.value),
        "rule": r.rule,
        "reason": r.reason,
        "metrics": {k: number(v) for k, v in r.metrics.items()},
        "signatures": [f.to_json() for f in r.signatures],
    }


def verdict(r: WeightRow) -> str:
    if r.relation != AS_STORED:
        return f"matches only {r.relation.replace('_', ' ')}: {r.relation_means} ({r.metric} {fmt(r.value)} that way)"
    text = f"{r.tier}: {r.metric} {fmt(r.value)} under rule {r.rule!r}"
    return f"{text}; {r.reason}" if r.reason else text


def _names(r: WeightRow) -> str:
    return r.name_a if r.name_a == r.name_b else f"{r.name_a} (b: {r.name_b})"


def _shown(text: str | None) -> str:
    """A name from a weight file (or its path) in the text report: on one line, every control character and
    bidi override as a visible escape, so that no name can forge a line or drive the terminal."""
    return for_terminal(str(text or "").replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t"))


def result_line(rep: WeightsReport) -> str:
    if rep.status == NO_MATCH:
        return "RESULT: no weight names paired up; check --map (exit 1)"
    bad = rep.failing()
    if not bad:
        return f"RESULT: ok, all {len(rep.rows)} weights match"
    moved = sum(1 for r in bad if r.relation != AS_STORED)
    extra = f" ({moved} match only transposed or permuted)" if moved else ""
    return f"RESULT: diverged: {len(bad)} of {len(rep.rows)} weights differ{extra}"


def render_text(rep: WeightsReport) -> str:
    out = ["=== orchlog weights ==="]
    for side, i in zip("ab", rep.inputs):
        arch = f", {_shown(i.arch)}" if i.arch else ""
        out.append(f"{side}: {_shown(i.path)}  [{i.format}{arch}, {i.tensors} tensors]")
    out.append(
        f"names: {_shown(rep.map)}; {len(rep.rows)} pairs, {len(rep.only_a)} only in a, {len(rep.only_b)} only in b"
    )
    out.append(f"tolerances: {rep.tolerances.source}")
    out += [f"  {rule.describe()}" for rule in rep.tolerances.all_rules]
    out += ["", "RESULTS:"]
    out += [f"  {name:<11} {c:>8}" for name, c in rep.counts().items() if name != "unknown" or c]
    permuted = [r for r in rep.rows if r.layout != AS_STORED]
    if permuted:
        out.append(
            f"  ({len(permuted)} Q/K weights compared after llama.cpp's row permutation, as its converter stores them)"
        )
    bad = rep.failing()
    if bad:
        out += ["", "DIFFERING WEIGHTS:"]
        for r in bad:
            out.append(f"  {_shown(_names(r))}  {r.dtype_a} {list(r.shape_a)} vs {r.dtype_b} {list(r.shape_b)}")
            out.append(f"    {verdict(r)}")
            if r.relation == AS_STORED:
                m = r.metrics
                out.append(
                    "    "
                    + "  ".join(
                        f"{k} {fmt(m[k])}" for k in ("max_abs", "mean_abs", "cosine", "rms_a", "rms_b") if k in m
                    )
                )
            for f in r.signatures[:2]:
                out.append(f"    looks like {f.kind} ({f.confidence:.2f}): {f.message}")
    for side, names in (("a", rep.only_a), ("b", rep.only_b)):
        if names:
            out += ["", f"ONLY IN {side}: {len(names)}"] + [f"  {_shown(n)}" for n in names[:20]]
            if len(names) > 20:
                out.append(f"  ... and {len(names) - 20} more (all of them in --format json)")
    out += ["", result_line(rep)]
    return "\n".join(out) + "\n"


def render_markdown(rep: WeightsReport) -> str:
    out = ["# orchlog weights", "", "| | path | format | arch | tensors |", "|---|---|---|---|---:|"]
    out += [
        f"| {s} | {markdown_code(i.path)} | {i.format} | {markdown_text(i.arch or '')} | {i.tensors} |"
        for s, i in zip("ab", rep.inputs)
    ]
    out += [
        "",
        f"Names: {markdown_text(rep.map)}. Tolerances: {markdown_text(rep.tolerances.source)}.",
        "",
        f"**{markdown_text(result_line(rep))}**",
        "",
    ]
    out += ["| tier | weights |", "|---|---:|"] + [f"| {n} | {c} |" for n, c in rep.counts().items()]
    bad = rep.failing()
    if bad:
        out += ["", "## Differing weights", "", "| weight | shapes | verdict |", "|---|---|---|"]
        out += [
            f"| {markdown_code(_names(r))} | {list(r.shape_a)} / {list(r.shape_b)} | {markdown_text(verdict(r))} |"
            for r in bad
        ]
    for side, names in (("a", rep.only_a), ("b", rep.only_b)):
        if names:
            out += ["", f"## Only in {side} ({len(names)})", ""] + [f"- {markdown_code(n)}" for n in names[:50]]
    return "\n".join(out) + "\n"
