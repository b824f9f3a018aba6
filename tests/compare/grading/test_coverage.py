"""Coverage is part of the verdict: stated first in every format, a warning when reference records went
unpaired, and with --require-all a failure that names the first missing record."""

from __future__ import annotations

import json
import subprocess
import sys

from orchlog.compare import CompareOptions, compare
from orchlog.report import render_text
from tests.compare.runs import run
from tests.tracegen import name_of, write_jsonl

FORMATS = ("text", "md", "json", "html")


def _orchlog(*args):
    return subprocess.run([sys.executable, "-m", "orchlog", *map(str, args)], capture_output=True, text=True)


def _truncated(tmp_path, keep: int = 20):
    """ours stops after `keep` records: a crash, a full disk, a run cut short."""
    full = run()
    return write_jsonl(tmp_path / "ref.jsonl", full), write_jsonl(tmp_path / "ours.jsonl", full[:keep])


def test_a_truncated_trace_with_require_all_exits_1_and_names_the_first_missing_record(tmp_path):
    ref, ours = _truncated(tmp_path)
    missing = run()[20]
    proc = _orchlog("compare", ref, ours, "--require-all")
    assert proc.returncode == 1, proc.stdout
    where = f"ref.jsonl:{20 + 2}"  # the header is line 1
    assert proc.stdout.splitlines()[-1] == (
        f"RESULT: incomplete (--require-all): {len(run()) - 20} reference records unpaired; first missing: "
        f"{name_of(missing)} at "
        f"{tmp_path / where} (exit 1)"
    )


def test_without_require_all_missing_partners_are_a_warning_in_every_format(tmp_path):
    ref, ours = _truncated(tmp_path)
    for fmt in FORMATS:
        proc = _orchlog("compare", ref, ours, "--format", fmt)
        assert proc.returncode == 0, (fmt, proc.stdout)  # the pairs that exist all agree
        text = proc.stdout
        assert f"{len(run()) - 20} reference records have no partner in ours" in text, fmt
        assert "pass --require-all to fail on it" in text, fmt
        if fmt == "json":
            doc = json.loads(text)
            assert doc["coverage"]["only_in_reference"] == len(run()) - 20 and doc["status"] == "ok"
        else:
            assert text.index("COVERAGE: 20 pairs") < text.index("RESULT"), fmt  # coverage comes first


def test_allow_missing_excuses_the_checkpoints_it_names(tmp_path):
    full = run()
    ref = write_jsonl(tmp_path / "ref.jsonl", full)
    ours = write_jsonl(tmp_path / "ours.jsonl", [r for r in full if r.checkpoint != "Qcur"])
    assert not compare(ref, ours, CompareOptions(require_all=True))
    report = compare(ref, ours, CompareOptions(require_all=True, allow_missing=("Q*",)))
    assert report.coverage is not None
    assert report.status == "ok" and report.coverage.allowed == report.coverage.only_in_reference > 0
    assert _orchlog("compare", ref, ours, "--allow-missing", "Q*").returncode == 2  # needs --require-all


def test_a_malformed_line_fails_require_all(tmp_path):
    ref = write_jsonl(tmp_path / "ref.jsonl", run())
    ours = write_jsonl(tmp_path / "ours.jsonl", run())
    with open(ours, "ab") as f:
        f.write(b"{broken\n")
    assert compare(ref, ours).status == "ok"
    report = compare(ref, ours, CompareOptions(require_all=True))
    assert report.coverage is not None
    assert report.status == "incomplete" and report.exit_code == 1 and report.coverage.malformed == (0, 1)
    assert (
        render_text(report)
        .rstrip()
        .endswith("RESULT: incomplete (--require-all): 1 malformed lines or records (exit 1)")
    )
