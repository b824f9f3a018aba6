"""The plan: ranks from hive-style paths or first records, dealt out by bytes; one part when ranks meet."""

from __future__ import annotations

from orchlog.compare import CompareOptions
from orchlog.scale.plan import file_ranks, partitionable, plan
from tests.compare.runs import run
from tests.tracegen import write_frames, write_parquet

KEY = ("checkpoint", "layer", "stage", "token_idx", "step", "rank")


def test_a_hive_style_rank_directory_names_the_rank_without_reading_the_file(tmp_path):
    path = tmp_path / "rank=7" / "part-0.parquet"
    path.parent.mkdir()
    path.write_bytes(b"not even a trace")
    assert file_ranks(str(path)) == frozenset({7})


def test_a_file_says_its_ranks_by_its_first_records(tmp_path):
    path = write_parquet(tmp_path / "t.parquet", run(tokens=1, rank=2) + run(tokens=1, rank=5))
    assert file_ranks(str(path)) == frozenset({2, 5})


def test_ranks_are_dealt_out_by_bytes_and_each_file_read_where_its_ranks_go(tmp_path):
    for side in "ab":
        (tmp_path / side).mkdir()
        for rank, tokens in ((0, 8), (1, 1), (2, 1), (3, 6)):
            write_frames(tmp_path / side / f"r{rank}.bin", run(tokens=tokens, rank=rank))
    parts = plan(str(tmp_path / "a"), str(tmp_path / "b"), KEY, CompareOptions(), 2)
    ranks = [p.ranks for p in parts]
    assert None not in ranks
    assert sorted(sorted(r or ()) for r in ranks) == [[0], [1, 2, 3]]  # 8 tokens of records against 1 + 1 + 6
    for p in parts:
        assert [f.rsplit("/", 1)[1] for _, f in p.files_a] == [f"r{r}.bin" for r in sorted(p.ranks or ())]
    assert {i for p in parts for i, _ in p.files_b} == {0, 1, 2, 3}


def test_ranks_that_meet_in_the_key_or_in_a_shard_map_keep_the_work_in_one_part(tmp_path):
    assert partitionable(KEY, CompareOptions())
    assert not partitionable(("checkpoint", "token_idx"), CompareOptions())
    shards = tmp_path / "tp.toml"
    shards.write_text('[shards]\n"ffn_up" = "f(tp)"\n')
    assert not partitionable(KEY, CompareOptions(maps_b=[str(shards)]))
