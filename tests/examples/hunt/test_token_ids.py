"""Seed 004's BOS story end to end, with the token ids the emitters write themselves: the NumPy engine
(orchlog.log(..., token_id=...)) and llama.cpp (the ggml adapter, given the batch's ids by
run_tokens.cpp), each run once with a BOS before the prompt and once without. compare says the prompts
differ at position 0 instead of reporting a divergence, and --token-offset 1 lines the runs up, after
which what differs is real: RoPE turns the same tokens by different positions."""

from __future__ import annotations

import subprocess
import sys

import pytest

from examples.hunt.traces import llama_trace, numpy_trace
from examples.qwen2_tiny.scenario import DEFAULT_SCENARIO, Scenario
from orchlog.compare import CompareOptions, compare

pytestmark = pytest.mark.slow  # llama.cpp (built once, cached)

BOS = 1  # not among the scenario's ids
WITH_BOS = Scenario(prompt=(BOS, *DEFAULT_SCENARIO.prompt), decode=DEFAULT_SCENARIO.decode)


@pytest.fixture(scope="module")
def bos_traces(tiny_gguf, run_tokens_program, tmp_path_factory):
    """{engine: (with BOS, without)} for the NumPy engine and llama.cpp."""
    out = tmp_path_factory.mktemp("bos")
    return {
        "numpy": (
            numpy_trace(tiny_gguf, out / "numpy_bos.bin", scenario=WITH_BOS),
            numpy_trace(tiny_gguf, out / "numpy.bin"),
        ),
        "llama.cpp": (
            llama_trace(tiny_gguf, out / "llama_bos.bin", program=run_tokens_program, scenario=WITH_BOS),
            llama_trace(tiny_gguf, out / "llama.bin", program=run_tokens_program),
        ),
    }


def _cli(a, b, *extra) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "orchlog", "compare", str(a), str(b), *extra]
    return subprocess.run(cmd, capture_output=True, text=True)


@pytest.mark.parametrize(
    "a_engine, b_engine", [("numpy", "numpy"), ("llama.cpp", "llama.cpp"), ("llama.cpp", "numpy")], ids=str
)
def test_a_prepended_bos_is_named_as_the_first_position_where_the_prompts_differ(bos_traces, a_engine, b_engine):
    proc = _cli(bos_traces[a_engine][0], bos_traces[b_engine][1])
    assert proc.returncode == 1
    assert f"token ids differ at position 0 (a: {BOS}, b: {DEFAULT_SCENARIO.prompt[0]})" in proc.stdout
    assert "FIRST DIVERGENCE" not in proc.stdout


@pytest.mark.parametrize("engine", ["numpy", "llama.cpp"])
def test_token_offset_lines_the_runs_up_and_what_remains_is_a_real_difference(bos_traces, engine):
    a, b = bos_traces[engine]
    report = compare(a, b, CompareOptions(token_offset=1, detail=True, max_pairs=None))
    assert report.tokens.mismatch is None and report.tokens.positions == DEFAULT_SCENARIO.n_positions
    assert report.status == "diverged"
    # The same token at every aligned position: embedding, norm and projections agree, until RoPE,
    # which turns them by positions one apart.
    rows = [p for p in report.findings.kept_pairs() if p.token_idx is not None]
    first = min((p for p in rows if p.failed), key=lambda p: (p.token_idx, p.order))
    assert (first.token_idx, first.checkpoint, first.layer, first.stage) == (1, "Qcur", 0, "rope")
    assert {u.key["token_idx"] for u in report.unmatched_on("a") if u.key["token_idx"] is not None} == {0}  # BOS
    if engine == "numpy":  # every record has a position: the walk starts at the first common one
        assert report.diverging_token == 1
    else:  # llama.cpp's KV cache holds cells by position, which the offset cannot move: those differ first
        assert report.first is not None
        assert report.diverging_token == -1 and report.first.checkpoint.startswith("cache_")
    assert _cli(a, b, "--token-offset", "1").returncode == 1  # a real divergence now, not different prompts


def test_every_token_row_llama_cpp_logs_carries_the_id_of_its_token(bos_traces):
    import orchlog

    a, _ = bos_traces["llama.cpp"]
    ids = WITH_BOS.prompt + WITH_BOS.decode
    rows = [(r.token_idx, r.token_id) for r in orchlog.open_trace(a) if r.token_idx is not None]
    assert rows and all(token_id == ids[position] for position, token_id in rows)
    assert {position for position, _ in rows} == set(range(len(ids)))
