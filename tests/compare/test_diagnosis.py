"""The compare report's diagnosis section: text, Markdown, HTML and the JSON keys."""

from __future__ import annotations

import json
import subprocess
import sys

from orchlog.compare import CompareOptions, compare
from orchlog.report import render_html, render_markdown, render_text
from tests.diagnose.runs import missing_bias_from_layer, traces


def _report(tmp_path, **kw):
    a, b = traces(tmp_path, missing_bias_from_layer(1))
    return compare(a, b, CompareOptions(threshold=1e-3, **kw))


def test_the_json_lists_the_first_divergences_findings_and_each_diagnosis(tmp_path):
    doc = json.loads(json.dumps(_report(tmp_path).to_json(), allow_nan=False))
    kinds = [f["kind"] for f in doc["diagnosis"]]
    assert "offset" in kinds
    assert set(doc["diagnosis"][0]) == {"kind", "confidence", "evidence", "message"}
    (first,) = doc["diagnoses"]
    assert first["role"] == "first_divergence" and first["basis"] == "tensors" and not first["no_known_signature"]
    assert first["where"] == {"checkpoint": "Qcur", "layer": 1, "stage": "add", "token_idx": 0, "step": 0}
    assert first["locality"]["verdict"] == "introduced" and first["layer_growth"]["verdict"] == "jump"


def test_text_markdown_and_html_carry_the_section(tmp_path):
    report = _report(tmp_path)
    text = render_text(report)
    assert "DIAGNOSIS of the first divergence (Qcur@add, layer 1, token 0; whole tensors):" in text
    assert "where it started:" in text and ". offset (confidence" in text and "from exact agreement" in text
    assert "## Diagnosis of the first divergence" in render_markdown(report)
    assert "<h2>Diagnosis of the first divergence" in render_html(report)


def test_no_diagnosis_when_asked_not_to_or_when_nothing_diverges(tmp_path):
    assert _report(tmp_path, diagnose=False).diagnosis == []
    a, b = traces(tmp_path, lambda name, stage, layer, tok, values, seen: values)
    clean = compare(a, b)
    assert clean.status == "ok" and clean.diagnosis == [] and clean.to_json()["diagnosis"] == []


def test_a_divergence_with_no_signature_says_so_plainly(tmp_path):
    def scramble(name, stage, layer, tok, values, seen):
        if name == "attn_out" and layer == 1:
            return values + (1 + tok) * (1 + layer) * (values**2 - 0.5)  # nothing in the catalogue
        return values

    a, b = traces(tmp_path, scramble)
    report = compare(a, b, CompareOptions(threshold=1e-3))
    assert report.diagnosis[0].findings == []
    assert "no known signature" in render_text(report)
    assert report.to_json()["diagnoses"][0]["no_known_signature"] is True


def test_the_cli_flags_turn_it_off_and_add_the_worst(tmp_path):
    a, b = traces(tmp_path, missing_bias_from_layer(0))
    run = lambda *extra: json.loads(  # noqa: E731
        subprocess.run(
            [
                sys.executable,
                "-m",
                "orchlog",
                "compare",
                str(a),
                str(b),
                "--threshold",
                "1e-3",
                "--format",
                "json",
                *extra,
            ],
            capture_output=True,
            text=True,
        ).stdout
    )
    assert run("--no-diagnose")["diagnoses"] == []
    roles = [d["role"] for d in run("--diagnose-worst", "3")["diagnoses"]]
    assert roles[0] == "first_divergence" and "worst" in roles
