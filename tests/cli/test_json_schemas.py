"""Every JSON output names its kind and version (key `report`, "orchlog-<kind>/<major>") and validates
against its published JSON Schema in schema/json/; checked on real outputs of each command."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from examples.guardrail.artifacts import Tree
from tests.compare.runs import from_layer, run
from tests.guardrail.trees import write_matrix
from tests.report.pages import write_runs
from tests.tracegen import record, write_jsonl

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "schema" / "json"


def _schema(name: str) -> dict:
    schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def _valid(doc: dict, name: str) -> None:
    schema = _schema(name)
    jsonschema.Draft202012Validator(schema).validate(doc)
    assert doc["report"] == schema["properties"]["report"]["const"]


def _orchlog(*args: str, code: int | None = None) -> dict:
    proc = subprocess.run([sys.executable, "-m", "orchlog", *args], capture_output=True, text=True)
    assert proc.returncode in ((0, 1) if code is None else (code,)), proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    d = tmp_path_factory.mktemp("schemas")
    a = write_jsonl(d / "a.jsonl", run())
    b = write_jsonl(d / "b.jsonl", [*run(bug=from_layer(1, 1, "Qcur")), record("extra", np.ones(3, np.float32))])
    full = write_runs(d)
    return a, b, full


def test_compare_json_of_summaries_full_tensors_and_a_diagnosis_fits_its_schema(traces):
    a, b, (ref, ours) = traces
    _valid(_orchlog("compare", str(a), str(b), "--format", "json", "-q"), "compare")
    diagnosed = _orchlog("compare", str(ref), str(ours), "--format", "json", "-q", "--diagnose-worst", "2")
    assert diagnosed["diagnoses"] and diagnosed["diagnosis"]
    _valid(diagnosed, "compare")
    _valid(_orchlog("compare", str(a), str(a), "--format", "json", "-q", code=0), "compare")


def test_compare_json_graded_against_a_second_references_noise_fits_its_schema(traces):
    a, b, (ref, ours) = traces
    three_way = _orchlog("compare", str(ref), str(ours), "--noise", str(ref), "--format", "json", "-q", "--detail")
    assert three_way["noise"]["references"] == [str(ref)] and three_way["first_divergence"]["noise"]
    _valid(three_way, "compare")


def test_per_token_json_fits_its_schema(traces):
    a, b, _ = traces
    _valid(_orchlog("compare", str(a), str(b), "--per-token", "--format", "json", "-q"), "compare-per-token")


def test_show_and_validate_json_fit_their_schemas(traces, tmp_path):
    a, _, (ref, _) = traces
    for trace in (a, ref):
        _valid(_orchlog("show", str(trace), "--format", "json", code=0), "show")
        _valid(_orchlog("validate", str(trace), "--format", "json", "--verify-hashes", "-q", code=0), "validate")
    broken = tmp_path / "broken.jsonl"
    broken.write_text(a.read_text().replace('"checkpoint"', '"checkpointx"', 1) + "{not json\n")
    _valid(_orchlog("validate", str(broken), "--format", "json", "-q", code=1), "validate")


def test_guardrail_summary_and_per_pair_files_fit_their_schemas(tmp_path):
    tree = write_matrix(Tree(tmp_path / "artifacts"), {(1, 2): {"diverge_at": 1}})
    summary = _orchlog("guardrail", str(tree.root), "--format", "json", "-q")
    _valid(summary, "guardrail")
    assert summary == json.loads((tree.root / "summary.json").read_text())
    for pair in summary["pairs"]:
        _valid(json.loads((tree.root / pair["metrics_file"]).read_text()), "guardrail-pair")


def test_weights_json_fits_its_schema(tmp_path):
    np.savez(tmp_path / "a.npz", w=np.ones((4, 4), np.float32), only_a=np.zeros(2, np.float32))
    np.savez(tmp_path / "b.npz", w=np.full((4, 4), 1.1, np.float32))
    args = ("weights", str(tmp_path / "a.npz"), str(tmp_path / "b.npz"), "--map", "none", "--format", "json")
    _valid(_orchlog(*args), "weights")


def test_graft_report_json_matches_its_schema(tmp_path):
    from tests.graft_report.grafted_runs import write_run

    ref = write_run(tmp_path / "ref.bin", 2, 2)
    bug = {(1, "ffn_out"): 5e-3}
    grafted = write_run(tmp_path / "g.bin", 2, 2, bug, {"attn_out"})
    plain = write_run(tmp_path / "plain.bin", 2, 2, bug)
    doc = _orchlog(
        "graft-report", str(ref), str(grafted), "--plain", str(plain), "--threshold", "1e-3", "--format", "json"
    )
    _valid(doc, "graft")
    assert doc["largest_local"]["checkpoint"] == "ffn_out" and doc["largest_local"]["local"] is not None


def test_every_command_with_json_output_has_a_schema_of_its_version():
    """The versions the code writes are the versions the schemas declare, one schema each."""
    from orchlog.compare.per_token import PER_TOKEN_VERSION
    from orchlog.compare.result import REPORT_VERSION
    from orchlog.graft_report.result import REPORT_VERSION as GRAFT_VERSION
    from orchlog.guardrail.result import PAIR_VERSION, SUMMARY_VERSION
    from orchlog.read.overview import SHOW_VERSION
    from orchlog.read.validate import VALIDATE_VERSION
    from orchlog.weights.result import REPORT_VERSION as WEIGHTS_VERSION

    written = {
        REPORT_VERSION,
        PER_TOKEN_VERSION,
        SUMMARY_VERSION,
        PAIR_VERSION,
        SHOW_VERSION,
        VALIDATE_VERSION,
        WEIGHTS_VERSION,
        GRAFT_VERSION,
    }
    declared = {_schema(p.name.split(".")[0])["properties"]["report"]["const"] for p in SCHEMAS.glob("*.schema.json")}
    assert written == declared
    assert all(re.fullmatch(r"orchlog-[a-z-]+/\d+", v) for v in written)
    # Every command that offers JSON is one of those measured above.
    offering = {p.stem for p in (ROOT / "orchlog" / "cli").glob("*.py") if '"json"' in p.read_text(encoding="utf-8")}
    assert offering == {"compare", "graft_report", "guardrail", "show", "validate", "weights"}


def test_a_document_without_its_version_or_with_a_wrong_type_is_rejected(traces):
    a, _, _ = traces
    doc = _orchlog("show", str(a), "--format", "json", code=0)
    validator = jsonschema.Draft202012Validator(_schema("show"))
    assert validator.is_valid(doc)
    assert not validator.is_valid({k: v for k, v in doc.items() if k != "report"})
    assert not validator.is_valid({**doc, "report": "orchlog-show/2"})
    assert not validator.is_valid({**doc, "records": "42"})
