"""Parquet traces split by token range: the same report as one process, row groups outside a part's range
left unread, and ranges that balance the bytes their statistics show."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from orchlog import open_trace
from orchlog.compare import CompareOptions, compare
from orchlog.scale import compare_partitioned, local_runner
from orchlog.scale.part_trace import PartTrace
from orchlog.scale.plan import TokenRange, plan, token_ranges
from tests.compare.runs import CHECKPOINTS, from_layer, run
from tests.tracegen import header, record, write_parquet

KEY = ("checkpoint", "layer", "stage", "token_idx", "step", "rank")


def _json(report) -> str:
    return json.dumps(report.to_json(), indent=1, allow_nan=False)


def _pair(tmp_path, seed: int, tokens: int = 12, offset: int = 0):
    """One rank's Parquet trace per side, small row groups; b has a bug from a random token on, records
    without a token (a cache) in both, maybe a record missing, and with `offset` one more leading token."""
    rng = random.Random(seed)
    bug = from_layer(rng.randrange(tokens), rng.randrange(3), rng.choice(CHECKPOINTS), rng.choice([0.5, 1e-3]))
    paths = []
    for side in "ab":
        recs = run(tokens=tokens, layers=3, bug=bug if side == "b" else None, values=rng.choice([10, -1]))
        if side == "b" and offset:
            for r in recs:
                assert r.token_idx is not None
                r.token_idx += offset
            recs = run(tokens=1, layers=3) + recs  # the extra leading token (BOS) the reference lacks
        recs += [record("kv_cache", np.full(8, float(i)), layer=i) for i in range(3)]
        if side == "b" and rng.random() < 0.5:
            del recs[rng.randrange(len(recs))]
        path = tmp_path / f"{side}.parquet"
        write_parquet(path, recs, header(team=f"team-{side}"), row_group_bytes=rng.choice([2_000, 6_000]))
        paths.append(str(path))
    return paths


@pytest.mark.parametrize("seed", range(6))
def test_a_compare_split_by_token_range_writes_the_one_process_report(tmp_path, seed):
    a, b = _pair(tmp_path, seed)
    opts = CompareOptions(diagnose=seed % 3 == 0, top=4, max_pairs=6, detail=seed % 2 == 1)
    whole = _json(compare(a, b, opts))
    for parts in (2, 3, 5):
        specs = plan(a, b, KEY, opts, parts)
        assert len(specs) == parts and all(s.tokens is not None for s in specs)
        assert _json(compare_partitioned(a, b, opts, local_runner(), parts)) == whole


def test_token_ranges_follow_the_token_offset(tmp_path):
    a, b = _pair(tmp_path, 1, offset=1)  # b has a leading token more
    opts = CompareOptions(token_offset=-1, diagnose=False, detail=True)
    whole = _json(compare(a, b, opts))
    assert _json(compare_partitioned(a, b, opts, local_runner(), 3)) == whole


def test_a_part_reads_only_the_row_groups_its_range_can_hold(tmp_path):
    a, _ = _pair(tmp_path, 0, tokens=40)
    total = sum(1 for _ in open_trace(a))
    ranges = token_ranges([a], 0, 4)
    assert len(ranges) == 4 and [r.untokened for r in ranges] == [True, False, False, False]
    read, kept = [], 0
    for r in ranges:
        trace = PartTrace(a, ((0, a),), None, r)
        kept += sum(len(batch) for batch in trace.batches())
        assert trace.tallies[0].rows == total  # the file's every row, for the merge's check
        read.append(trace.rows_read)
    assert kept == total  # every record kept by exactly one range
    assert max(read) < 0.5 * total and sum(read) < 1.3 * total, read  # the rest was never read


def test_cuts_balance_the_bytes_the_statistics_show(tmp_path):
    a, _ = _pair(tmp_path, 0, tokens=40)
    ranges = token_ranges([a], 0, 4)
    sizes = [sum(1 for b in PartTrace(a, ((0, a),), None, r).batches() for _ in range(len(b))) for r in ranges]
    assert max(sizes) <= 1.6 * min(sizes), sizes


def test_no_statistics_and_other_formats_keep_one_range(tmp_path):
    assert token_ranges([str(tmp_path / "missing.parquet")], 0, 4) == [TokenRange(None, None, True)]


def test_a_dataset_partitioned_by_token_directory_is_split_as_correctly(tmp_path):
    # token_idx only in the hive path, not in the files: no statistics to cut by, so the plan keeps one
    # part, and a part given a range anyway reads every file and keeps its own records.
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from orchlog.parquet.schema import COLUMN_OF

    paths = _pair(tmp_path, 3, tokens=6)
    column = COLUMN_OF["token_idx"]
    for side, path in zip("ab", paths):
        table = pq.read_table(path)
        metadata = pq.ParquetFile(path).schema_arrow.metadata
        for token in pc.unique(table.column(column)).to_pylist():
            if token is None:
                continue
            part = table.filter(pc.equal(table.column(column), token)).drop_columns([column])
            out = tmp_path / side / f"token_idx={token}" / "part.parquet"
            out.parent.mkdir(parents=True)
            pq.write_table(part.replace_schema_metadata(metadata), out)
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    opts = CompareOptions(diagnose=False, detail=True)
    whole = compare(a, b, opts)
    assert whole.findings.pairs > 0
    assert len(plan(a, b, KEY, opts, 3)) == 1
    assert _json(compare_partitioned(a, b, opts, local_runner(), 3)) == _json(whole)
    kept = 0
    for r in (TokenRange(None, 2, True), TokenRange(2, 4, False), TokenRange(4, None, False)):
        files = tuple(enumerate(sorted(str(f) for f in (tmp_path / "a").rglob("*.parquet"))))
        kept += sum(len(batch) for batch in PartTrace(a, files, None, r).batches())
    assert kept == sum(1 for _ in open_trace(a))
