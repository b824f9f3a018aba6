"""The compare report for people: plain text for terminals and logs, Markdown for reviews and CI comments."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from orchlog.compare.grading import TIER_NAMES
from orchlog.compare.metrics import BASES
from orchlog.compare.pairview import PairView
from orchlog.safe_text import markdown_code, markdown_text

if TYPE_CHECKING:
    from orchlog.compare.result import CompareReport

_DECIDED = {
    "logits": "its logits fail",
    "last_checkpoint": "its last checkpoint fails",
    "first_failure": "no logits or last checkpoint fails; first token with a failure",
}
SHOWN = 20  # unmatched records and malformed lines listed before "... and N more"
METRICS_SHOWN = (
    "max_abs",
    "mean_abs",
    "max_rel",
    "p99_abs",
    "rms_a",
    "rms_b",
    "rms_diff",
    "cosine",
    "l2",
    "kl",
    "top1_match",
    "rank_a",
    "rank_b",
    "nonfinite_mismatch",
)


def fmt(v: float | None) -> str:
    if v is None:
        return "-"
    if isinstance(v, float) and math.isnan(v):
        return "n/a"
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.6g}"


def token_text(tok: int | None) -> str:
    return "(no token)" if tok is None or tok < 0 else f"token {tok}"


def verdict_line(v: PairView) -> str:
    if v.tier == "unknown":
        if v.hash != "differs":
            return f"not measured: nothing on both sides gives {v.metric}"
        rms = f" (rms {fmt(v.metrics.get('rms_a'))} vs {fmt(v.metrics.get('rms_b'))})"
        return f"differs, magnitude unknown{rms if 'rms_a' in v.metrics else ''}"
    bound = " (at least: leading values and stats only)" if v.basis == "summary" and v.metric == "max_abs" else ""
    text = f"{v.tier}: {v.metric} {fmt(v.value)}{bound} under rule {v.rule!r}"
    return f"{text}; {v.reason}" if v.reason else text


def metrics_line(v: PairView) -> str:
    return "  ".join(f"{k} {fmt(v.metrics[k])}" for k in METRICS_SHOWN if k in v.metrics)


def side_by_side(v: PairView, indent: str) -> list[str]:
    va, vb = v.values
    if not va and not vb:
        return []
    lines = [f"{indent}first values:      a               b            |a-b|"]
    for i in range(max(len(va), len(vb))):
        a = va[i] if i < len(va) else None
        b = vb[i] if i < len(vb) else None
        diff = abs(a - b) if a is not None and b is not None else None
        lines.append(f"{indent}  [{i}] {fmt(a):>15} {fmt(b):>15} {fmt(diff):>15}")
    return lines


def pair_block(v: PairView, indent: str = "  ") -> list[str]:
    names = "" if v.names[0] == v.names[1] == v.checkpoint else f"  (a: {v.names[0]}, b: {v.names[1]})"
    lines = [f"{indent}{v.where()}{names}", f"{indent}  {verdict_line(v)}", f"{indent}  {metrics_line(v)}"]
    if v.hash:
        lines.append(f"{indent}  blake3 {v.hash}; basis {v.basis}")
    for kind in v.mismatches:
        detail = {"dtype": v.dtypes, "shape": v.shapes}.get(kind)
        text = f"{detail[0]} vs {detail[1]}" if detail else "different element counts; the common prefix is compared"
        lines.append(f"{indent}  {kind} differs: {text}")
    lines.append(f"{indent}  a: {v.locations[0]}   b: {v.locations[1]}")
    lines += side_by_side(v, indent + "  ")
    return lines


def _listing(items: list, show: Callable, limit: int = SHOWN) -> list[str]:
    lines = [show(x) for x in items[:limit]]
    if len(items) > limit:
        lines.append(f"  ... and {len(items) - limit} more (all of them in --format json)")
    return lines


def render_text(r: CompareReport) -> str:
    f = r.findings
    out = ["=== orchlog compare ==="]
    for side, info, role in zip("ab", r.inputs, ("reference", "ours")):
        team = f", team {info.team}" if info.team else ""
        out.append(f"{side} ({role}): {info.path}  [{info.format}, {info.records} records{team}]")
    out.append(f"key: {', '.join(r.key)}" + (f"   maps: {', '.join(r.maps)}" if r.maps else ""))
    out.append(f"tolerances: {r.tolerances.source}")
    out += [f"  {rule.describe()}" for rule in r.tolerances.all_rules]
    out.append("")
    basis = ", ".join(f"{n} {int(c)}" for n, c in zip(BASES, f.bases) if c)
    out.append(f"Pairs compared: {f.pairs}" + (f" ({basis})" if basis else ""))
    out.append(
        f"Unmatched: {len(r.unmatched_on('a'))} only in a, {len(r.unmatched_on('b'))} only in b"
        f"      Malformed input: {len(r.malformed)}"
    )
    mism = ", ".join(f"{k} {c}" for k, c in f.mismatch_counts.items() if c)
    if mism:
        out.append(f"Mismatched pairs: {mism}")
    out += ["", "RESULTS:"]
    out += [f"  {name:<11} {int(c):>8}" for name, c in zip(TIER_NAMES, f.counts) if name != "unknown" or c]
    if r.first is not None:
        how = _DECIDED[r.decided_by or "first_failure"]
        out += ["", f"FIRST DIVERGENCE: {token_text(r.diverging_token)} ({how}); earliest failing record there:"]
        out += pair_block(r.first)
        if len(r.growth) > 1:
            out += ["", f"  error by layer at {token_text(r.diverging_token)} (execution order):"]
            for g in r.growth:
                mark = "FAIL" if g.failed else g.worst_tier
                out.append(
                    f"    {g.label:<24} {mark:<10} max_abs {fmt(g.max_abs):>12}  min cosine "
                    f"{fmt(g.min_cosine):>10}  ({g.failed}/{g.pairs} failing; worst {g.worst_checkpoint})"
                )
    if f.worst and f.failed:
        out += ["", "WORST OFFENDERS:"]
        for n, v in enumerate(f.worst, 1):
            out.append(
                f"  {n}. {v.where()}: {v.metric}={fmt(v.value)} ({v.tier}, rule {v.rule})  "
                f"mean_abs={fmt(v.metrics.get('mean_abs'))} cosine={fmt(v.metrics.get('cosine'))}"
            )
    unknown = int(f.counts[TIER_NAMES.index("unknown")])
    if unknown:
        out += [
            "",
            f"NOT MEASURED: {unknown} pairs (no values or stats to compare, or hashes differ "
            "with no figure showing by how much)",
        ]
        out += [f"  {v.where()}: {verdict_line(v)}" for v in f.unknown_examples]
        if unknown > len(f.unknown_examples):
            out.append(f"  ... and {unknown - len(f.unknown_examples)} more")
    if r.track_token is not None and f.tracked:
        out += ["", f"TRACKED TOKEN {r.track_token} (rank in a -> rank in b):"]
        out += _listing(f.tracked, lambda t: f"  {token_text(t.token_idx)} {t.checkpoint}: {t.rank_a} -> {t.rank_b}")
    for side in "ab":
        items = r.unmatched_on(side)
        if items:
            out += ["", f"UNMATCHED (only in {side}): {len(items)}"]
            out += _listing(items, lambda u: f"  {_key_text(u.key)}  [{u.location}]")
    if r.malformed:
        out += ["", f"MALFORMED INPUT: {len(r.malformed)}"]
        out += _listing(r.malformed, lambda m: f"  {m.side}: {m.diagnostic}")
    if f.detail:
        out += ["", "DETAIL:"]
        for v in f.kept_pairs():
            out += [""] + pair_block(v)
    if r.dumped:
        out += ["", "DUMPED:"] + [f"  {p}" for p in r.dumped]
    out += ["", result_line(r)]
    return "\n".join(out) + "\n"


def _key_text(key: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in key.items() if v is not None)


def result_line(r: CompareReport) -> str:
    if r.status == "ok":
        return f"RESULT: ok, all {r.findings.pairs} pairs within tolerance"
    if r.status == "no_match":
        return "RESULT: no records matched; check --key and --map (exit 1)"
    where = r.first.where() if r.first else "?"
    return (
        f"RESULT: diverged: {r.findings.failed} pairs fail; "
        f"first divergence at {token_text(r.diverging_token)}: {where}"
    )


def render_markdown(r: CompareReport) -> str:
    f = r.findings
    out = ["# orchlog compare", "", "| | path | format | records | team |", "|---|---|---|---|---|"]
    for side, info in zip("ab", r.inputs):
        out.append(
            f"| {side} | {markdown_code(info.path)} | {markdown_text(info.format)} | {info.records} | {markdown_text(info.team or '')} |"
        )
    out += [
        "",
        f"Key: {markdown_code(', '.join(r.key))}. Tolerances: {markdown_text(r.tolerances.source)}.",
        "",
        f"**{markdown_text(result_line(r))}**",
        "",
        "| tier | pairs |",
        "|---|---:|",
    ]
    out += [f"| {n} | {int(c)} |" for n, c in zip(TIER_NAMES, f.counts)]
    if r.first is not None:
        v = r.first
        out += [
            "",
            f"## First divergence: {token_text(r.diverging_token)}, {markdown_text(v.where())}",
            "",
            f"- {markdown_text(verdict_line(v))}",
            f"- {markdown_text(metrics_line(v))}",
            f"- a: {markdown_code(v.locations[0])}, b: {markdown_code(v.locations[1])}",
        ]
        if v.values[0] or v.values[1]:
            out += ["", "| i | a | b | abs diff |", "|---:|---:|---:|---:|"]
            for i, (a, b) in enumerate(zip(*v.values)):
                out.append(f"| {i} | {fmt(a)} | {fmt(b)} | {fmt(abs(a - b))} |")
        if len(r.growth) > 1:
            out += [
                "",
                "| layer / checkpoint | worst tier | max_abs | min cosine | failing |",
                "|---|---|---:|---:|---:|",
            ]
            out += [
                f"| {markdown_text(g.label)} | {g.worst_tier} | {fmt(g.max_abs)} | {fmt(g.min_cosine)} | {g.failed}/{g.pairs} |"
                for g in r.growth
            ]
    if f.worst and f.failed:
        out += ["", "## Worst offenders", "", "| # | where | metric | value | tier |", "|---:|---|---|---:|---|"]
        out += [
            f"| {n} | {markdown_text(v.where())} | {v.metric} | {fmt(v.value)} | {v.tier} |"
            for n, v in enumerate(f.worst, 1)
        ]
    for side in "ab":
        items = r.unmatched_on(side)
        if items:
            out += ["", f"## Only in {side} ({len(items)})", ""]
            out += [f"- {markdown_text(_key_text(u.key))} ({markdown_code(u.location)})" for u in items[:SHOWN]]
    if r.malformed:
        out += ["", f"## Malformed input ({len(r.malformed)})", ""]
        out += [f"- {m.side}: {markdown_code(m.diagnostic)}" for m in r.malformed[:SHOWN]]
    return "\n".join(out) + "\n"
