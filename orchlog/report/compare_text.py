"""The compare report for people: plain text for terminals and logs, Markdown for reviews and CI comments."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from orchlog.compare.grading import rerun
from orchlog.compare.grading.tiers import TIER_NAMES
from orchlog.compare.measuring.metrics import BASES, RELATIVE_COLUMNS
from orchlog.compare.pairview import PairView
from orchlog.compare.result import CompareReport
from orchlog.kernels import ERROR_COLUMNS
from orchlog.numbers import fmt, token_text
from orchlog.report.diagnosis import diagnosis_markdown, diagnosis_text
from orchlog.safe_text import markdown_code, markdown_text

_DECIDED = {
    "logits": "its logits fail or are undecided",
    "noise": "a pair of it fails beyond the noise, though its logits do not yet",
    "last_checkpoint": "its last checkpoint fails or is undecided",
    "first_failure": "no logits or last checkpoint fails or is undecided; first token with such a pair",
}
EVIDENCE = {
    "tensor": "whole tensors",
    "hash": "the hashes",
    "sketch": "the sketches, stats and leading values",
    "bounds": "the stats and leading values",
    "leading": "the leading values both sides carry (the rule of formats that hold only those: legacy checkpoint JSONL, llama.cpp's printout)",
}
SHOWN = 20  # unmatched records and malformed lines listed before "... and N more"
# The figures the text shows, in its order: the difference's, the relative ones, the logits'.
METRICS_SHOWN = (*ERROR_COLUMNS, *RELATIVE_COLUMNS, "kl", "top1_match", "rank_a", "rank_b", "nonfinite_mismatch")


def _figure(v: PairView) -> str:
    """The graded metric as its evidence proves it: a value, a bound or an interval."""
    lo, hi = v.interval
    if v.basis in ("tensor", "leading") or lo == hi:
        return f"{v.metric} {fmt(v.value)}"
    higher_is_better = v.metric in ("cosine", "top1_match")
    if v.tier == "undecided":
        return f"{v.metric} in [{fmt(lo)}, {fmt(hi)}]"
    if v.tier == "fail":
        return f"{v.metric} {'<=' if higher_is_better else '>='} {fmt(hi if higher_is_better else lo)}"
    return f"{v.metric} {'>=' if higher_is_better else '<='} {fmt(lo if higher_is_better else hi)}"


def noise_text(v: PairView) -> str:
    """The pair against the noise: `error / noise in [lo, hi]` (a point when exact) and the noise itself."""
    if v.noise_ratio is None:
        return ""
    lo, hi = v.noise_ratio
    ratio = f"{fmt(lo)}" if lo == hi else f"in [{fmt(lo)}, {fmt(hi)}]"
    return (
        f"error / noise {ratio} (noise: l2 {fmt(v.noise)} between the references; passes below {fmt(v.noise_multiple)})"
    )


def verdict_line(v: PairView) -> str:
    evidence = "" if v.basis == "tensor" else f"; evidence: {EVIDENCE.get(v.basis, v.basis)}"
    if v.by_noise:
        if v.tier == "undecided":
            return f"undecided: {noise_text(v)} holds the multiple{evidence}"
        if v.tier == "fail" and v.reason.endswith("x the noise"):
            return f"fail: {noise_text(v)}{evidence}"
        if v.tier != "fail":
            return f"{v.tier}: {noise_text(v)}{evidence}"
    if v.tier == "undecided":
        return f"undecided: {_figure(v)} holds the threshold of rule {v.rule!r}{evidence}"
    if v.tier == "fail" and v.basis == "hash":
        return f"fail: {v.reason}"
    text = f"{v.tier}: {_figure(v)} under rule {v.rule!r}{evidence}"
    return f"{text}; {v.reason}" if v.reason else text


RERUN_ROLES = {"a": "reference", "b": "ours     ", "noise": "each --noise reference"}
RERUN_WHAT = {"a": "a", "b": "b", "noise": "it"}


def rerun_lines(v: PairView, indent: str) -> list[str]:
    """How to decide an undecided pair: rerun that record on both sides (and the second references, when the
    noise graded it) in full mode, then compare again."""
    files = "the .bin files" if v.noise_ratio is not None else "the two .bin files"
    return [
        f"{indent}to decide it, rerun just this record in full mode on each side and compare {files}:",
        *(
            f"{indent}  {RERUN_ROLES[side]}: {env} <the command that wrote {RERUN_WHAT[side]}>"
            for side, env in rerun.commands(v.own_keys, v.noise_ratio is not None)
        ),
    ]


def metrics_line(v: PairView) -> str:
    """The figures measured exactly (the proven intervals of the others have a line of their own)."""
    return "  ".join(f"{k} {fmt(v.metrics[k])}" for k in METRICS_SHOWN if k in v.metrics and k not in v.bounds)


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
    if v.noise_ratio is not None and not v.by_noise:
        lines.append(f"{indent}  {noise_text(v)}")
    if v.bounds:
        lines.append(
            f"{indent}  proven: " + "  ".join(f"{m} in [{fmt(lo)}, {fmt(hi)}]" for m, (lo, hi) in v.bounds.items())
        )
    if v.hash == "differs":
        lines.append(
            f"{indent}  blake3 a {v.blake3[0]}  b {v.blake3[1]}; rms {fmt(v.metrics.get('rms_a'))} vs "
            f"{fmt(v.metrics.get('rms_b'))}; num_elements {fmt(v.numel[0])} vs {fmt(v.numel[1])}; basis {v.basis}"
        )
    elif v.hash:
        lines.append(f"{indent}  blake3 {v.hash}; basis {v.basis}")
    for kind in v.mismatches:
        if kind == "window" or (kind == "numel" and v.alignment and v.alignment.window):
            continue  # the alignment lines below say what was compared
        detail = {"dtype": v.dtypes, "shape": v.shapes}.get(kind)
        text = f"{detail[0]} vs {detail[1]}" if detail else "different element counts; the common prefix is compared"
        lines.append(f"{indent}  {kind} differs: {text}")
    lines += [f"{indent}  {line}" for line in alignment_lines(v)]
    lines.append(f"{indent}  a: {v.locations[0]}   b: {v.locations[1]}")
    lines += side_by_side(v, indent + "  ")
    return lines


def alignment_lines(v: PairView) -> list[str]:
    """How the pair's tensors were lined up (views, windows, gathered shards), one line each."""
    a = v.alignment
    if not a:
        return []
    lines = a.lines()
    if a.shards is not None:
        errors = ", ".join(f"{r}: {fmt(x)}" for r, x in zip(a.shards.ranks, a.shards.values(v.metric)))
        lines.append(f"{v.metric} by rank of {a.shards.side}'s shards: {errors}")
        if v.shard_ranks:
            lines.append(f"the error lies in the shard of rank {', '.join(map(str, v.shard_ranks))}")
    return lines


def token_lines(r: CompareReport) -> list[str]:
    t = r.tokens
    if t.mismatch is not None:
        return [
            f"TOKEN IDS: {t.mismatch.describe()}: the two runs were fed different prompts, so their numbers "
            "are not compared as a divergence. A side with a leading token more (a BOS) lines up with "
            "--token-offset N (b's position p is a's position p + N)."
        ]
    if t.positions:
        offset = f" (with --token-offset {t.offset})" if t.offset else ""
        return [f"Token ids: the same at all {t.positions} positions both traces give{offset}"]
    return []


def _listing(items: list[Any], show: Callable[[Any], str], limit: int = SHOWN) -> list[str]:
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
    out += coverage_lines(r)
    out.append(f"key: {', '.join(r.key)}" + (f"   maps: {', '.join(r.maps)}" if r.maps else ""))
    out.append(f"tolerances: {r.tolerances.source}")
    out += tolerance_lines(r)
    if r.noise is not None:
        out.append(r.noise.line())
    out += [f"RUNS DIFFER: {d.line()}" for d in r.runs]
    out += [f"NOTE: {note}" for note in r.notes]
    out.append("")
    basis = ", ".join(f"{n} {int(c)}" for n, c in zip(BASES, f.bases) if c)
    out.append(f"Pairs compared: {f.pairs}" + (f" ({basis})" if basis else ""))
    mism = ", ".join(f"{k} {c}" for k, c in f.mismatch_counts.items() if c)
    if mism:
        out.append(f"Mismatched pairs: {mism}")
    tokens = token_lines(r)
    if tokens:
        out += [""] + tokens
    out += ["", "RESULTS:"]
    out += [f"  {name:<11} {int(c):>8}" for name, c in zip(TIER_NAMES, f.counts)]
    if r.first is not None:
        how = _DECIDED[r.decided_by or "first_failure"]
        kind = "it FAILS" if r.first.failed else "it is UNDECIDED"
        out += [
            "",
            f"FIRST DIVERGENCE: {token_text(r.diverging_token)} ({how}); "
            f"the earliest record there not proven within tolerance ({kind}):",
        ]
        out += pair_block(r.first)
        if r.first.undecided:
            out += rerun_lines(r.first, "  ")
            if r.first_failure is not None:
                out += ["", "  first proven failure:"] + pair_block(r.first_failure, "    ")
        if len(r.growth) > 1:
            out += ["", f"  error by layer at {token_text(r.diverging_token)} (execution order):"]
            for g in r.growth:
                mark = "FAIL" if g.failed else g.worst_tier
                noise = "" if math.isnan(g.noise_ratio) else f"  error/noise {fmt(g.noise_ratio):>8}"
                out.append(
                    f"    {g.label:<24} {mark:<10} max_abs {fmt(g.max_abs):>12}  min cosine "
                    f"{fmt(g.min_cosine):>10}{noise}  ({g.failed}/{g.pairs} failing; worst {g.worst_checkpoint})"
                )
    if r.diagnosis:
        out += diagnosis_text(r.diagnosis)
    if f.worst and f.failed:
        out += ["", "WORST OFFENDERS:"]
        for n, v in enumerate(f.worst, 1):
            out.append(
                f"  {n}. {v.where()}: {v.metric}={fmt(v.value)} ({v.tier}, rule {v.rule})  "
                f"mean_abs={fmt(v.metrics.get('mean_abs'))} cosine={fmt(v.metrics.get('cosine'))}"
            )
    if f.undecided:
        out += [
            "",
            f"UNDECIDED: {f.undecided} pairs whose evidence can place them on either side of their threshold "
            "(not a pass: rerun in full mode, or log sketches, to decide them)",
        ]
        out += [f"  {v.where()}: {verdict_line(v)}" for v in f.undecided_examples]
        if f.undecided > len(f.undecided_examples):
            out.append(f"  ... and {f.undecided - len(f.undecided_examples)} more")
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


RULES_SHOWN = 12


def tolerance_lines(r: CompareReport) -> list[str]:
    """The rules (the first few of a long calibrated file), and what a calibrated file was learned from."""
    rules = r.tolerances.all_rules
    shown = rules if len(rules) <= RULES_SHOWN else [*rules[: RULES_SHOWN - 1], rules[-1]]
    lines = [f"  {rule.describe()}" for rule in shown]
    if len(rules) > RULES_SHOWN:
        lines.insert(RULES_SHOWN - 1, f"  ... and {len(rules) - RULES_SHOWN} more rules (all of them in --format json)")
    c = r.tolerances.calibration
    if c:
        pairs = "; ".join(" vs ".join(str(x) for x in p) for p in c.get("pairs", []))
        lines.append(f"  calibrated (headroom {c.get('headroom')}) from: {pairs}")
    return lines


def _key_text(key: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in key.items() if v is not None)


def coverage_lines(r: CompareReport) -> list[str]:
    """Coverage, stated before anything else, and its warnings."""
    if r.coverage is None:
        return []
    return [f"COVERAGE: {r.coverage.line()}"] + [f"WARNING: {w}" for w in r.coverage.warnings()]


def result_line(r: CompareReport) -> str:
    return f"RESULT: {r}"


def render_markdown(r: CompareReport) -> str:
    f = r.findings
    out = ["# orchlog compare", "", "| | path | format | records | team |", "|---|---|---|---|---|"]
    for side, info in zip("ab", r.inputs):
        out.append(
            f"| {side} | {markdown_code(info.path)} | {markdown_text(info.format)} | {info.records} | {markdown_text(info.team or '')} |"
        )
    out += [""] + [
        f"**{markdown_text(line)}**" if line.startswith("COVERAGE") else f"> {markdown_text(line)}"
        for line in coverage_lines(r)
    ]
    out += [
        "",
        f"Key: {markdown_code(', '.join(r.key))}. Tolerances: {markdown_text(r.tolerances.source)}.",
        *([f"Three-way: {markdown_text(r.noise.line())}."] if r.noise is not None else []),
        *(f"> **Runs differ:** {markdown_text(d.line())}" for d in r.runs),
        *(f"> **Note:** {markdown_text(note)}" for note in r.notes),
        "",
        f"**{markdown_text(result_line(r))}**",
        *(["", *(markdown_text(line) for line in token_lines(r))] if token_lines(r) else []),
        "",
        "| tier | pairs |",
        "|---|---:|",
    ]
    out += [f"| {n} | {int(c)} |" for n, c in zip(TIER_NAMES, f.counts)]
    if r.first is not None:
        v = r.first
        out += [
            "",
            f"## First divergence: {token_text(r.diverging_token)}, {markdown_text(v.where())} ({'fails' if v.failed else 'undecided'})",
            "",
            f"- {markdown_text(verdict_line(v))}",
            f"- {markdown_text(metrics_line(v))}",
            *([f"- {markdown_text(noise_text(v))}"] if v.noise_ratio is not None and not v.by_noise else []),
            f"- a: {markdown_code(v.locations[0])}, b: {markdown_code(v.locations[1])}",
            *(f"- {markdown_text(line)}" for line in alignment_lines(v)),
        ]
        if v.hash == "differs":
            out.append(
                f"- blake3 a `{v.blake3[0]}`, b `{v.blake3[1]}`; num_elements {fmt(v.numel[0])} vs {fmt(v.numel[1])}"
            )
        if v.undecided:
            out.append("- to decide it, rerun just this record in full mode on each side:")
            out += [
                f"  - {side if side != 'noise' else RERUN_ROLES[side]}: `{env} <the command that wrote {RERUN_WHAT[side]}>`"
                for side, env in rerun.commands(v.own_keys, v.noise_ratio is not None)
            ]
            if r.first_failure is not None:
                out.append(f"- first proven failure: {r.first_failure.where()}: {verdict_line(r.first_failure)}")
        if v.values[0] or v.values[1]:
            out += ["", "| i | a | b | abs diff |", "|---:|---:|---:|---:|"]
            for i, (a, b) in enumerate(zip(*v.values)):
                out.append(f"| {i} | {fmt(a)} | {fmt(b)} | {fmt(abs(a - b))} |")
        if len(r.growth) > 1:
            noisy = r.noise is not None
            out += [
                "",
                "| layer / checkpoint | worst tier | max_abs | min cosine |"
                + (" error / noise |" if noisy else "")
                + " failing |",
                "|---|---|---:|---:|" + ("---:|" if noisy else "") + "---:|",
            ]
            out += [
                f"| {markdown_text(g.label)} | {g.worst_tier} | {fmt(g.max_abs)} | {fmt(g.min_cosine)} | "
                + (f"{'-' if math.isnan(g.noise_ratio) else fmt(g.noise_ratio)} | " if noisy else "")
                + f"{g.failed}/{g.pairs} |"
                for g in r.growth
            ]
    if r.diagnosis:
        out += diagnosis_markdown(r.diagnosis)
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
        out += [f"- {m.side}: {markdown_code(str(m.diagnostic))}" for m in r.malformed[:SHOWN]]
    return "\n".join(out) + "\n"
