"""docs/agents.md says what tools read: the JSON keys of `orchlog trace ... --json` and of `orchlog compare
--format json`, and the exit codes. Both commands are run and held to the page."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tests.compare.runs import from_layer, run
from tests.conftest import ROOT
from tests.tracegen import write_jsonl

PAGE = (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")


def _documented_keys(table: str) -> set[str]:
    """The keys the table after `<!-- keys: TABLE -->` lists in its first column (several per row allowed)."""
    start = PAGE.index(f"<!-- keys: {table} -->")
    rows = PAGE[start:].split("\n\n", 1)[0].splitlines()[3:]
    return {key for row in rows for key in re.findall(r"`([a-z_]+)`", row.split("|")[1])}


def _orchlog(*args):
    return subprocess.run([sys.executable, "-m", "orchlog", *map(str, args)], capture_output=True, text=True)


def test_compare_json_has_every_documented_key_and_the_documented_exit_codes(tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", run())
    b = write_jsonl(tmp_path / "b.jsonl", run(bug=from_layer(1, 1, "ffn_out")))
    same = _orchlog("compare", a, a, "--format", "json")
    differ = _orchlog("compare", a, b, "--format", "json")
    broken = _orchlog("compare", a, tmp_path / "absent.jsonl", "--format", "json")
    assert (same.returncode, differ.returncode, broken.returncode) == (0, 1, 2)
    assert broken.stderr.startswith("orchlog: error:") and len(broken.stderr.splitlines()) == 1
    report = json.loads(differ.stdout)
    assert _documented_keys("compare") <= set(report)
    first = report["first_divergence"]
    assert {"checkpoint", "layer", "stage", "token_idx", "step", "tier", "metrics", "rerun"} <= set(first)


@pytest.mark.slow  # builds llama.cpp (cached)
def test_trace_json_has_exactly_the_documented_keys(model_pair, tmp_path):
    done = _orchlog(
        "trace", "llama", model_pair.gguf, "--tokens", "1,2", "--n-predict", "1", "--json", "-o", tmp_path / "r.bin"
    )
    assert done.returncode == 0, done.stderr
    keys = set(json.loads(done.stdout))
    documented = _documented_keys("trace llama")
    assert keys <= documented and documented - keys == {"map", "records"}  # the hf command's own
    hf = _orchlog(
        "trace", "hf", model_pair.hf, "--tokens", "1,2", "--n-predict", "1", "--json", "-o", tmp_path / "h.bin"
    )
    assert hf.returncode == 0, hf.stderr
    assert set(json.loads(hf.stdout)) == documented - {"llama_cpp"}
    bad = _orchlog("trace", "llama", tmp_path / "absent.gguf", "--prompt", "x", "--json")
    assert bad.returncode == 2 and bad.stderr.startswith("orchlog: error:") and bad.stdout == ""
