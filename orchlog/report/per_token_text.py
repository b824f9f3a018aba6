"""The per-token logits report (`orchlog compare --per-token`) for people: text and Markdown."""

from __future__ import annotations

from orchlog.compare.per_token import PerTokenReport, Position
from orchlog.numbers import fmt


def _line(r: PerTokenReport, p: Position) -> str:
    d = p.diff
    ranks = f" rank={d.rank_a}->{d.rank_b}" if d.rank_a is not None else ""
    partial = " (leading values only)" if p.partial else ""
    sizes = f" sizes {p.sizes[0]} vs {p.sizes[1]} (common prefix compared)" if p.size_mismatch else ""
    label = {"fail": "FAIL", "undecided": "??  ", "ok": "ok  "}[p.verdict(r.cos_tol)]
    return (
        f"{label} t={'-' if p.token_idx is None else p.token_idx} "
        f"cosine={d.cosine:.6f} l2={fmt(d.l2)} max_abs={fmt(d.max_abs)} "
        f"top1={'match' if d.top1_match else 'differ'} kl={fmt(d.kl)}{ranks}{partial}{sizes}"
    )


def render_text(r: PerTokenReport) -> str:
    out = [f"per-token logits parity: a={r.paths[0]} b={r.paths[1]} (cos-tol {r.cos_tol:g})"]
    first = r.first_divergence
    for p in r.positions:
        out.append(_line(r, p))
        if p is first:
            out.append(f"     ^ first divergence at token {p.token_idx}")
    if r.unmatched != (0, 0):
        out.append(f"positions only in a: {r.unmatched[0]}, only in b: {r.unmatched[1]}")
    out += [f"malformed input ({side}): {d}" for side, d in r.malformed]
    out.append(f"max absolute diff: {fmt(r.max_absolute_diff)}")
    out.append(f"RESULT: {r}")
    return "\n".join(out) + "\n"


def render_markdown(r: PerTokenReport) -> str:
    rows = ["| token | cosine | l2 | max_abs | top1 | kl |", "|---:|---:|---:|---:|---|---:|"]
    rows += [
        f"| {p.token_idx} | {p.diff.cosine:.6f} | {fmt(p.diff.l2)} | {fmt(p.diff.max_abs)} | "
        f"{'match' if p.diff.top1_match else 'differ'} | {fmt(p.diff.kl)} |"
        for p in r.positions
    ]
    first = r.first_divergence
    head = f"**first divergence at token {first.token_idx}**" if first else "**all positions within tolerance**"
    return "\n".join(["# orchlog compare --per-token", "", head, "", *rows]) + "\n"
