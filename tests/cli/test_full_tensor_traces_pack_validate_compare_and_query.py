"""A full-mode run from the C++ and from the Python emitter, end to end through the CLI (issue 6's "done when").

Each emitter logs the same small forward pass (4 tokens x 3 layers, three
checkpoints per layer, logits per token) as a binary stream; `orchlog pack`
makes it Parquet, `orchlog validate --verify-hashes` re-hashes every tensor,
`orchlog show` describes it, `orchlog compare` finds nothing against the
other emitter's run (as a stream or packed) and names the one record an
injected difference changed (exit 1), and DuckDB answers a query the way
orchlog's own reader does. The Python emitter's direct Parquet
(`configure(format="parquet")`) compares equal too.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pytest

from orchlog.parquet import read
from tests.conftest import ROOT
from tests.crosslang import producers

TOKENS, LAYERS, HIDDEN, VOCAB = 4, 3, 256, 512
CHANGED = {"checkpoint": "ffn_out", "token_idx": 2, "layer": 1}  # the injected difference
EMITTERS = {p.language: p for p in producers.PRODUCERS if p.language in ("cpp", "python")}


def _forward_pass(changed: bool) -> dict:
    """The run as a cross-language tensor file; `changed` adds 0.5 to one tensor."""
    rng = np.random.default_rng(6)
    tensors = []

    def add(checkpoint, values, token, layer=None, dtype="f32"):
        if changed and (checkpoint, token, layer) == tuple(CHANGED.values()):
            values = values + np.float32(0.5)
        tensors.append(
            {
                "checkpoint": checkpoint,
                "token_idx": token,
                "layer": layer,
                "stage": None,
                "step": token,
                "dtype": dtype,
                "shape": [len(values)],
                "meta": [["seed", 6]],
                "data_hex": values.astype({"f32": "<f4", "f16": "<f2"}[dtype]).tobytes().hex(),
            }
        )

    for token in range(TOKENS):
        add("inp_embd", rng.standard_normal(HIDDEN).astype(np.float32), token)
        for layer in range(LAYERS):
            add("attn_norm", rng.standard_normal(HIDDEN).astype(np.float32) * (layer + 1), token, layer)
            add("Kcur", rng.standard_normal(HIDDEN // 4).astype(np.float16), token, layer, dtype="f16")
            add("ffn_out", rng.standard_normal(HIDDEN).astype(np.float32), token, layer)
        add("result_output", rng.standard_normal(VOCAB).astype(np.float32), token)
    return {"config": {"prompt_len": TOKENS}, "tensors": tensors}


def _orchlog(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "orchlog", *map(str, args)], capture_output=True, text=True, cwd=ROOT, timeout=300
    )


def _run(producer, doc: dict, out: Path, mode: str = "full") -> Path:
    out.mkdir()
    tensors = out / "tensors.json"
    tensors.write_text(json.dumps(doc))
    knobs = {
        "ORCH_LOG_FILE": str(out / "run.bin"),
        "ORCH_LOG_MODE": mode,
        "ORCH_LOG_TEAM": producer.language,
        "ORCH_LOG_VALUES": "8",
    }
    done = producers.launch(producer, tensors, knobs, out)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    return out / "run.bin"


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """Binary streams and their packed Parquet: the cpp and python runs, and the python run with the change."""
    base = tmp_path_factory.mktemp("runs")
    paths = {}
    for name, producer, changed in (
        ("cpp", EMITTERS["cpp"], False),
        ("python", EMITTERS["python"], False),
        ("changed", EMITTERS["python"], True),
    ):
        stream = _run(producer, _forward_pass(changed), base / name)
        packed = stream.with_suffix(".parquet")
        done = _orchlog("pack", "--quiet", stream, "-o", packed)
        assert done.returncode == 0, done.stderr
        paths[f"{name}.bin"], paths[f"{name}.parquet"] = stream, packed
    return paths


@pytest.mark.parametrize("emitter", sorted(EMITTERS))
def test_a_packed_run_validates_with_every_tensor_rehashed(runs, emitter):
    done = _orchlog("validate", "--verify-hashes", "--format", "json", runs[f"{emitter}.parquet"])
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert (report["valid"], report["records"], report["hashes_checked"], report["problems"]) == (
        True,
        TOKENS * (2 + 3 * LAYERS),
        TOKENS * (2 + 3 * LAYERS),
        [],
    )


@pytest.mark.parametrize("emitter", sorted(EMITTERS))
def test_show_describes_a_packed_run(runs, emitter):
    done = _orchlog("show", "--format", "json", runs[f"{emitter}.parquet"])
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert (shown["format"], shown["records"], shown["with_data"]) == (
        "orchlog-parquet",
        TOKENS * (2 + 3 * LAYERS),
        TOKENS * (2 + 3 * LAYERS),
    )
    assert shown["checkpoints"] == {"inp_embd": 4, "attn_norm": 12, "Kcur": 12, "ffn_out": 12, "result_output": 4}
    assert (shown["layers"], shown["tokens"], shown["dtypes"]) == (
        list(range(LAYERS)),
        list(range(TOKENS)),
        {"f32": 32, "f16": 12},
    )
    assert [h["producer"]["language"] for h in shown["headers"]] == [emitter] and shown["problems"] == []
    text = _orchlog("show", runs[f"{emitter}.parquet"])
    assert text.returncode == 0 and f"records: {TOKENS * (2 + 3 * LAYERS)}" in text.stdout


@pytest.mark.parametrize("other", ["python.bin", "python.parquet"])
@pytest.mark.parametrize("ours", ["cpp.parquet", "cpp.bin"])
def test_the_two_emitters_runs_compare_equal(runs, ours, other):
    done = _orchlog("compare", "--quiet", runs[ours], runs[other])
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("other", ["changed.bin", "changed.parquet"])
def test_compare_names_the_injected_difference_and_exits_1(runs, other):
    done = _orchlog("compare", "--quiet", "--format", "json", runs["cpp.parquet"], runs[other])
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    first = report["first_divergence"]
    assert {k: first[k] for k in CHANGED} == CHANGED
    assert first["metrics"]["max_abs"] == pytest.approx(0.5, rel=1e-6)
    assert report["counts"]["tiers"]["fail"] == 1


def test_the_python_emitters_direct_parquet_compares_equal_to_the_cpp_run(runs, tmp_path):
    tensors = tmp_path / "tensors.json"
    tensors.write_text(json.dumps(_forward_pass(False)))
    direct = tmp_path / "direct.parquet"
    code = (
        "import json, sys, orchlog; from tests.crosslang.python_producer import log_tensor\n"
        f"doc = json.load(open({str(tensors)!r}))\n"
        f"orchlog.configure(format='parquet', path={str(direct)!r}, team='python', values=8)\n"
        "[log_tensor(t) for t in doc['tensors']]\norchlog.close()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=120)
    assert _orchlog("validate", "--verify-hashes", direct).returncode == 0
    done = _orchlog("compare", "--quiet", runs["cpp.parquet"], direct)
    assert done.returncode == 0, done.stdout + done.stderr


def test_duckdb_answers_a_query_as_orchlogs_reader_does(runs):
    packed = runs["cpp.parquet"]
    rows = duckdb.execute(f"""
        SELECT layer, avg(rms) AS mean_rms, max(abs_max) AS abs_max, count(*) AS n
        FROM read_parquet('{packed}') WHERE checkpoint = 'attn_norm' GROUP BY layer ORDER BY layer
    """).fetchall()
    by_layer: dict[int | None, list] = {}
    for rec in read(packed, checkpoint="attn_norm"):
        by_layer.setdefault(rec.layer, []).append(rec)
    assert [r[0] for r in rows] == list(range(LAYERS))
    for layer, mean_rms, abs_max, n in rows:
        recs = by_layer[layer]
        assert n == len(recs) == TOKENS
        assert mean_rms == pytest.approx(np.mean([r.stats.rms for r in recs]), rel=1e-12)
        assert abs_max == max(float(np.abs(r.tensor()).max()) for r in recs)
