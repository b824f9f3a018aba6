"""A compare split into parts by rank writes byte for byte the report of one process."""

from __future__ import annotations

import json

import pytest

from orchlog.compare import CompareOptions, compare
from orchlog.errors import OrchlogError
from orchlog.scale import compare_partitioned, local_runner
from tests.compare.runs import run
from tests.scale.rank_traces import rank_trace_pair
from tests.tracegen import name_of, write_frames


def _json(report) -> str:
    return json.dumps(report.to_json(), indent=1, allow_nan=False)


@pytest.mark.parametrize("seed", range(8))
def test_the_partitioned_report_is_the_one_process_report(tmp_path, seed):
    a, b = rank_trace_pair(tmp_path, seed)
    opts = CompareOptions(diagnose=seed % 4 == 0, top=4, max_pairs=6, detail=seed % 4 == 1)
    whole = _json(compare(a, b, opts))
    for parts in (2, 3, 5):
        assert _json(compare_partitioned(str(a), str(b), opts, local_runner(), parts)) == whole


def test_without_rank_in_the_key_the_work_is_one_part_and_the_report_the_same(tmp_path):
    a, b = rank_trace_pair(tmp_path, 2)
    opts = CompareOptions(key=("checkpoint", "layer", "token_idx", "rank"), diagnose=False)
    assert _json(compare_partitioned(str(a), str(b), opts, local_runner(), 3)) == _json(compare(a, b, opts))
    opts = CompareOptions(key=("checkpoint", "layer", "token_idx"), diagnose=False)
    assert _json(compare_partitioned(str(a), str(b), opts, local_runner(), 3)) == _json(compare(a, b, opts))


def test_a_file_with_ranks_its_path_did_not_show_is_an_error_not_a_loss(tmp_path):
    for side in "ab":
        for rank in (0, 1):
            (tmp_path / side / f"rank={rank}").mkdir(parents=True)
        # A hive-style dataset whose rank=0 file also holds records of rank 3.
        write_frames(tmp_path / side / "rank=0" / "part.bin", run(tokens=2, layers=1, rank=0) + run(tokens=1, rank=3))
        write_frames(tmp_path / side / "rank=1" / "part.bin", run(tokens=2, layers=1, rank=1))
    with pytest.raises(
        OrchlogError, match=r"rank=0/part.bin: holds records of ranks its path or first records did not show"
    ):
        compare_partitioned(str(tmp_path / "a"), str(tmp_path / "b"), CompareOptions(), local_runner(), 2)


def test_dumping_tensors_is_refused_with_a_partitioned_compare(tmp_path):
    a, b = rank_trace_pair(tmp_path, 0)
    with pytest.raises(OrchlogError, match="--dump-raw"):
        compare_partitioned(str(a), str(b), CompareOptions(dump_raw=str(tmp_path / "d")), local_runner(), 2)


def test_records_that_say_they_are_shards_are_gathered_across_ranks_as_one_process_does(tmp_path):
    # Hive-style paths name each file's rank, so the plan splits by rank without reading a record; the
    # parts then find records that say they are pieces of one tensor, and the walk is made in one part.
    for side in "ab":
        for rank in (0, 1):
            d = tmp_path / side / f"rank={rank}"
            d.mkdir(parents=True)
            plain = run(tokens=2, layers=1, rank=rank, world_size=2)
            pieces = run(tokens=2, layers=1, rank=rank, world_size=2, shard_axis=0, num_shards=2)
            for r in pieces:
                r.checkpoint = f"tp_{name_of(r)}"
            write_frames(d / "part.bin", plain + pieces)
    opts = CompareOptions(diagnose=False, detail=True)
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    whole = compare(a, b, opts)
    assert "gathered" in _json(whole), "the case gathers pieces"
    assert _json(compare_partitioned(a, b, opts, local_runner(), 2)) == _json(whole)
