"""The guardrail report for people: text for terminals and logs, Markdown for reviews."""

from __future__ import annotations

from orchlog.guardrail.problems import MISSING_RUN
from orchlog.guardrail.result import GuardrailResult, PairResult
from orchlog.numbers import fmt
from orchlog.safe_text import markdown_code, markdown_text

SUMMARY_FILE = "summary.json"  # where the text's listings send a reader for everything (guardrail_files.py)
SHOWN = 20  # pairing errors listed in text and Markdown before "... and N more" (summary.json has all)
COLUMNS = ("max_abs_diff", "p99_abs_diff", "top1_agreement", "cos_sim_mean", "kl_max")


def matrix_lines(r: GuardrailResult) -> list[str]:
    m = r.matrix
    if m.declared is None:
        declared = "not declared (no config.json): completeness not checked"
    else:
        declared = ", ".join(f"{axis} {{{', '.join(values)}}}" for axis, values in m.declared.items())
        declared += f" (from {m.source})"
    bounds = ", ".join(f"{name} {'<=' if d == 'max' else '>='} {bound:g}" for name, d, bound in m.thresholds.active())
    return [
        f"runs: {m.pattern.text}; matrix: {declared}",
        f"pairs: {m.sides[0]} (reference) vs {m.sides[1]}; must match when {m.must_match_text()}",
        f"thresholds: {bounds or 'none'}",
    ]


def first_fail_text(p: PairResult) -> str:
    ff = p.first_fail() or {}
    at = "" if ff.get("token_idx") is None else f" at token {ff['token_idx']}"
    tid = "" if ff.get("token_id") is None else f" (token id {ff['token_id']})"
    return f"{p.label} ({p.verdict}){at}{tid}: {'; '.join(ff.get('reasons', []))}"


def _listing(items: list[str], indent: str = "  ") -> list[str]:
    lines = [indent + s for s in items[:SHOWN]]
    if len(items) > SHOWN:
        lines.append(f"{indent}... and {len(items) - SHOWN} more (all of them in {SUMMARY_FILE})")
    return lines


def pairing_error_lines(r: GuardrailResult) -> list[str]:
    return [f"{p.label}: {e}" for p in r.pairs for e in p.pairing_errors if e.kind != MISSING_RUN]


def missing_run_lines(r: GuardrailResult) -> list[str]:
    """Sides that never ran: their pairs are incomplete, not broken."""
    return [f"{p.label}: {e.message}" for p in r.pairs for e in p.pairing_errors if e.kind == MISSING_RUN]


def verdict_line(r: GuardrailResult) -> str:
    return f"VERDICT: {r}"


def render_text(r: GuardrailResult) -> str:
    out = [f"=== orchlog guardrail: {r.directory} ==="] + matrix_lines(r) + [""]
    width = max([len("pair")] + [len(p.label) for p in r.pairs])
    out.append(
        f"{'pair':<{width}}  {'must match':<10}  {'verdict':<14}  {'tokens':>6}  "
        + "  ".join(f"{c:>{max(len(c), 11)}}" for c in COLUMNS)
    )
    for p in r.pairs:
        agg = p.aggregates
        undeclared = "" if p.declared else "  (not in config.json)"
        out.append(
            f"{p.label:<{width}}  {'yes' if p.must_match else 'no':<10}  {p.verdict:<14}  {len(p.tokens):>6}  "
            + "  ".join(f"{fmt(agg[c]):>{max(len(c), 11)}}" for c in COLUMNS)
            + undeclared
        )
    first = r.first_fail
    if first is not None:
        out += ["", f"FIRST FAIL: {first_fail_text(first)}"]
    errors = pairing_error_lines(r)
    if errors:
        out += ["", f"PAIRING ERRORS: {len(errors)}"] + _listing(errors)
    runs = missing_run_lines(r)
    if runs:
        out += ["", f"MISSING RUNS (a side never ran; its pair is INCOMPLETE): {len(runs)}"] + _listing(runs)
    if r.missing:
        out += ["", f"MISSING PAIRS (declared in {r.matrix.source}, not found): {len(r.missing)}"]
        out += _listing([f"{run.label()}  ({run.path})" for run in r.missing])
    if r.ignored:
        out += ["", f"IGNORED (directories that do not fit {r.matrix.pattern.text}): {len(r.ignored)}"]
        out += _listing(r.ignored)
    out += ["", verdict_line(r)]
    return "\n".join(out) + "\n"


def render_markdown(r: GuardrailResult) -> str:
    out = ["# Equivalence guardrail", "", f"**{r.verdict}**: {r.meaning}.", ""]
    out += [f"- {markdown_text(line)}" for line in matrix_lines(r)]
    out += [
        "",
        "| pair | must match | verdict | tokens | " + " | ".join(COLUMNS) + " | first failing token |",
        "|---|---|---|---:|" + "---:|" * len(COLUMNS) + "---:|",
    ]
    for p in r.pairs:
        agg = p.aggregates
        ff = p.first_fail()
        tok = "" if ff is None or ff["token_idx"] is None else str(ff["token_idx"])
        out.append(
            f"| {markdown_text(p.label)}{'' if p.declared else ' (not declared)'} | {'yes' if p.must_match else 'no'} | "
            f"{p.verdict} | {len(p.tokens)} | " + " | ".join(fmt(agg[c]) for c in COLUMNS) + f" | {tok} |"
        )
    first = r.first_fail
    if first is not None:
        out += [
            "",
            "## First fail",
            "",
            markdown_text(first_fail_text(first)),
            "",
            f"Per-position metrics: {markdown_code(first.metrics_file)}.",
        ]
    errors = pairing_error_lines(r)
    if errors:
        out += ["", f"## Pairing errors ({len(errors)})", ""] + _listing([markdown_text(e) for e in errors], "- ")
    runs = missing_run_lines(r)
    if runs:
        out += ["", f"## Missing runs ({len(runs)})", ""] + _listing([markdown_text(x) for x in runs], "- ")
    if r.missing:
        out += ["", f"## Missing pairs ({len(r.missing)})", ""] + _listing(
            [f"{markdown_text(m.label())} ({markdown_code(m.path)})" for m in r.missing], "- "
        )
    if r.ignored:
        out += ["", f"## Ignored directories ({len(r.ignored)})", ""] + _listing(
            [markdown_code(d) for d in r.ignored], "- "
        )
    if r.matrix.declared is None:
        out += ["", "> Without config.json the matrix's completeness is not checked: a local verdict, not a full one."]
    return "\n".join(out) + "\n"
