"""The tensor-parallel MLP against its unsharded twin, through `orchlog compare`: 2-way and 4-way runs
agree once their pieces are gathered (by the shard fields each record gives, or by shards.toml for
records that give none), and a bug in rank 1's shard is located at its checkpoint with its rank."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from examples.tensor_parallel.mlp import N_LAYER, N_TOKENS, Bug
from examples.tensor_parallel.traces import MAP, write_run

HOW = {"fields": (True, ()), "map": (False, ("--map-b", str(MAP)))}  # annotate, compare's extra arguments


def _compare(a, b, *extra) -> tuple[int, dict]:
    cmd = [sys.executable, "-m", "orchlog", "compare", str(a), str(b), "--format", "json", *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    return proc.returncode, json.loads(proc.stdout)


@pytest.fixture(scope="module")
def unsharded(tmp_path_factory):
    return write_run(tmp_path_factory.mktemp("mlp") / "unsharded.bin")


@pytest.mark.parametrize("how", list(HOW))
@pytest.mark.parametrize("ways", [2, 4])
def test_a_sharded_run_agrees_with_its_unsharded_twin_once_gathered(tmp_path, unsharded, ways, how):
    annotate, extra = HOW[how]
    code, report = _compare(unsharded, write_run(tmp_path / f"tp{ways}", ways, annotate=annotate), *extra)
    assert (code, report["status"]) == (0, "ok")
    assert report["counts"]["pairs"] == N_LAYER * N_TOKENS * 6  # ffn_norm, gate, up, swiglu, out, l_out
    assert report["counts"]["unmatched_a"] == report["counts"]["unmatched_b"] == 0


@pytest.mark.parametrize("how", list(HOW))
@pytest.mark.parametrize("ways", [2, 4])
def test_a_bug_in_rank_1s_shard_is_located_with_its_rank(tmp_path, unsharded, ways, how):
    annotate, extra = HOW[how]
    code, report = _compare(unsharded, write_run(tmp_path / f"tp{ways}", ways, Bug.RANK1_UP_SHARD, annotate), *extra)
    first = report["first_divergence"]
    assert (code, first["checkpoint"], first["layer"], first["token_idx"]) == (1, "ffn_up", 0, 0)
    assert first["shard_ranks"] == [1]
    shards = first["alignment"]["shards"]
    assert shards["ranks"] == list(range(ways)) and shards["side"] == "b"
    assert [x > 0 for x in shards["max_abs"]] == [r == 1 for r in range(ways)]


def test_without_fields_or_a_map_the_pieces_are_not_gathered_and_nothing_passes(tmp_path, unsharded):
    code, report = _compare(unsharded, write_run(tmp_path / "tp2", 2, annotate=False))
    assert code == 1 and report["status"] != "ok"


def test_a_wrong_partial_sum_is_found_but_not_pinned_on_a_rank(tmp_path, unsharded):
    out = write_run(tmp_path / "tp4", 4, Bug.RANK1_DOWN_SHARD)
    code, report = _compare(unsharded, out)
    first = report["first_divergence"]
    assert (code, first["checkpoint"], first["layer"]) == (1, "ffn_out", 0)
    assert first["shard_ranks"] is None and first["alignment"]["how"]["b"] == "sum of 4 partial sums (ranks 0-3)"
    text = subprocess.run(
        [sys.executable, "-m", "orchlog", "compare", str(unsharded), str(out)], capture_output=True, text=True
    ).stdout
    assert "b: sum of 4 partial sums (ranks 0-3)" in text and "the error lies in" not in text


def test_the_example_prints_the_report_and_exits_like_compare(capsys):
    from examples.tensor_parallel.__main__ import main

    assert main(["--ways", "4"]) == 0
    assert main(["--ways", "2", "--bug", "rank1_up_shard"]) == 1
    assert "ffn_up, layer 0, token 0, step 0, in the shard of rank 1" in capsys.readouterr().out
    assert main(["--ways", "2", "--map"]) == 0
    assert "--map-b" in capsys.readouterr().out
