"""The weights report for people: text for terminals and logs, Markdown for reviews."""

from __future__ import annotations

from orchlog.numbers import fmt
from orchlog.safe_text import for_terminal, markdown_code, markdown_text
from orchlog.weights.compare import AS_STORED, WeightRow
from orchlog.weights.result import WeightsReport


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
    return f"RESULT: {rep}"


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
