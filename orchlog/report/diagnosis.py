"""The diagnosis section of the compare report: text, Markdown and HTML."""

from __future__ import annotations

from typing import Any

from orchlog.diagnose.diagnosis import NO_SIGNATURE, Diagnosis
from orchlog.diagnose.finding import Finding
from orchlog.safe_text import markdown_text

_ROLE = {"first_divergence": "first divergence", "worst": "a worst offender"}
_BASIS = {"tensors": "whole tensors", "summary": "summaries: leading values and stats", "none": "not run"}


def _value(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, list):
        shown = ", ".join(_value(x) for x in v[:8])
        return f"[{shown}{', ...' if len(v) > 8 else ''}]"
    return str(v)


def evidence_text(f: Finding) -> str:
    return ", ".join(f"{k} {_value(v)}" for k, v in f.evidence.items())


def _context(d: Diagnosis) -> list[tuple[str, str]]:
    out = []
    if d.locality is not None:
        out.append(("where it started", d.locality.message))
    if d.growth is not None:
        out.append(("across layers", d.growth.message))
    return out


def diagnosis_text(diagnoses: list[Diagnosis], indent: str = "  ") -> list[str]:
    out: list[str] = []
    for d in diagnoses:
        out += ["", f"DIAGNOSIS of the {_ROLE.get(d.role, d.role)} ({d.where.label()}; {_BASIS[d.basis]}):"]
        for label, message in _context(d):
            out.append(f"{indent}{label}: {message}")
        if d.ran and not d.findings:
            out.append(f"{indent}{NO_SIGNATURE}")
        for n, f in enumerate(d.findings, 1):
            out.append(f"{indent}{n}. {f.kind} (confidence {f.confidence:.2f}): {f.message}")
            out.append(f"{indent}   evidence: {evidence_text(f)}")
        out += [f"{indent}note: {note}" for note in d.notes]
    return out


def diagnosis_markdown(diagnoses: list[Diagnosis]) -> list[str]:
    out: list[str] = []
    for d in diagnoses:
        where = markdown_text(d.where.label())  # names come from the traces: never raw Markdown
        out += ["", f"## Diagnosis of the {_ROLE.get(d.role, d.role)}: {where} ({_BASIS[d.basis]})", ""]
        out += [f"- {label}: {markdown_text(message)}" for label, message in _context(d)]
        if d.ran and not d.findings:
            out.append(f"- **{NO_SIGNATURE}**")
        if d.findings:
            out += ["", "| # | kind | confidence | what it means | evidence |", "|---:|---|---:|---|---|"]
            out += [
                f"| {n} | `{f.kind}` | {f.confidence:.2f} | {markdown_text(f.message)} | {markdown_text(evidence_text(f))} |"
                for n, f in enumerate(d.findings, 1)
            ]
        out += [f"- note: {markdown_text(note)}" for note in d.notes]
    return out


def diagnosis_html(diagnoses: list[Diagnosis]) -> list[str]:
    from html import escape  # here: the text report, which every compare prints, needs no HTML module

    out: list[str] = []
    for d in diagnoses:
        out.append(
            f"<h2>Diagnosis of the {escape(_ROLE.get(d.role, d.role))}: {escape(d.where.label())}</h2>"
            f"<p>Basis: {escape(_BASIS[d.basis])}.</p>"
        )
        if _context(d):
            out.append("<ul>" + "".join(f"<li>{escape(a)}: {escape(b)}</li>" for a, b in _context(d)) + "</ul>")
        if d.ran and not d.findings:
            out.append(f"<p><strong>{escape(NO_SIGNATURE)}</strong></p>")
        if d.findings:
            out.append(
                "<table><tr><th>#</th><th>kind</th><th>confidence</th><th>what it means</th><th>evidence</th></tr>"
            )
            out += [
                f"<tr><td class=num>{n}</td><td><code>{escape(f.kind)}</code></td><td class=num>{f.confidence:.2f}"
                f"</td><td>{escape(f.message)}</td><td><code>{escape(evidence_text(f))}</code></td></tr>"
                for n, f in enumerate(d.findings, 1)
            ]
            out.append("</table>")
        if d.notes:
            out.append("<ul>" + "".join(f"<li>note: {escape(n)}</li>" for n in d.notes) + "</ul>")
    return out
