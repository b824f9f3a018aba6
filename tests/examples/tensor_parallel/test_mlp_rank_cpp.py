"""examples/tensor_parallel/mlp_rank.cpp: a C++ engine's ranks, one process each, say their shard layout
per call (ORCH_LOG_KEY with with_shard_axis / with_shard_partial) and take rank and world size from
ORCH_LOG_RANK and ORCH_LOG_WORLD_SIZE. 2-way and 4-way runs agree with the unsharded run once
gathered, with no map; a bug in rank 1's shard is located with its rank."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.native import build
from tests.native.host_processes import env

SOURCE = Path(__file__).resolve().parents[3] / "examples" / "tensor_parallel" / "mlp_rank.cpp"


@pytest.fixture(scope="module")
def program():
    return build.build_cpp(SOURCE, "-DORCH_LOGGING")


def _run(program, out: Path, ways: int, *args: str) -> Path:
    """Every rank of a `ways`-way run, each its own process; the trace (a directory for several ranks)."""
    for rank in range(ways):
        path = out / "rank{rank}.bin" if ways > 1 else out
        knobs = env(
            ORCH_LOG_FILE=str(path), ORCH_LOG_MODE="full", ORCH_LOG_RANK=str(rank), ORCH_LOG_WORLD_SIZE=str(ways)
        )
        subprocess.run([str(program), *args], env=knobs, check=True)
    return out


def _compare(a: Path, b: Path) -> tuple[int, dict]:
    cmd = [sys.executable, "-m", "orchlog", "compare", str(a), str(b), "--format", "json"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    return proc.returncode, json.loads(proc.stdout)


@pytest.fixture(scope="module")
def whole(program, tmp_path_factory):
    return _run(program, tmp_path_factory.mktemp("mlp_rank") / "whole.bin", 1)


@pytest.mark.parametrize("ways", [2, 4])
def test_the_ranks_agree_with_the_unsharded_run_once_gathered_by_their_fields(program, whole, tmp_path, ways):
    sharded = tmp_path / f"tp{ways}"
    sharded.mkdir()
    code, report = _compare(whole, _run(program, sharded, ways))
    assert (code, report["status"]) == (0, "ok")
    assert report["counts"]["pairs"] == 3 * 4  # 3 tokens: ffn_inp, ffn_up, ffn_act, ffn_out
    assert report["counts"]["unmatched_a"] == report["counts"]["unmatched_b"] == 0


@pytest.mark.parametrize("ways", [2, 4])
def test_a_bug_in_rank_1s_shard_is_located_with_its_rank(program, whole, tmp_path, ways):
    sharded = tmp_path / f"tp{ways}"
    sharded.mkdir()
    code, report = _compare(whole, _run(program, sharded, ways, "--bug"))
    first = report["first_divergence"]
    assert (code, first["checkpoint"], first["token_idx"], first["shard_ranks"]) == (1, "ffn_up", 0, [1])


def test_the_records_carry_the_layout_the_calls_gave(program, tmp_path):
    import orchlog

    sharded = tmp_path / "tp2"
    sharded.mkdir()
    _run(program, sharded, 2)
    rank1 = [r for r in orchlog.open_trace(sharded / "rank1.bin") if r.token_idx == 0]
    layout = {r.checkpoint: (r.rank, r.shard_axis, r.shard_index, r.num_shards, r.shard_partial) for r in rank1}
    assert layout == {
        "ffn_up": (1, 0, None, 2, None),
        "ffn_act": (1, 0, None, 2, None),
        "ffn_out": (1, None, None, 2, True),
    }
