"""Tensor-parallel shards: dims annotations, and pieces gathered (concatenated along the split axis or
summed) into the tensor an unsharded run logs, whatever the shape, axis and number of ranks."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from orchlog.compare import CompareOptions, compare
from orchlog.maps.shards import Gatherer, parse_dims
from orchlog.read.batch import NONE, RecordBatch
from orchlog.read.trace import TraceRecord
from tests.tracegen import record, write_frames, write_jsonl


def test_dims_name_the_axes_and_mark_the_split_one_or_partial_sums():
    d = parse_dims("b s h(tp) d")
    assert d.names == ("b", "s", "h", "d") and d.split == 2 and not d.partial
    assert parse_dims("h(tp,partial)").partial and parse_dims("h(tp,partial)").split is None


@pytest.mark.parametrize(
    "text, message",
    [
        ("s h", "no axis is marked"),
        ("s(tp) h(tp)", "more than one axis"),
        ("s h(xx)", "unknown modifier"),
        ("s h[xx]", "unknown axis"),
        ("s h[tp:diagonal]", "unknown qualifier"),
        ("s[cp:zigzag] h", "no axis is marked"),
        ("h h(tp)", "names an axis twice"),
        ("s(tp) h(partial)", "either split"),
        ("h{tp}", "is not name"),
        ("(q=4|k)[tp]", "is not name=size"),
        ("h[tp] # tp:replicated", "replicated across tp, and also split"),
    ],
)
def test_bad_dims_are_clear_errors(text, message):
    with pytest.raises(ValueError, match=message):
        parse_dims(text)


def _pieces(whole: np.ndarray, ways: int, axis: int | None, name="x"):
    """Each rank's record of `whole`: a slice along `axis`, or (axis None) a random split into partial sums."""
    rng = np.random.default_rng(ways)
    if axis is None:
        parts = [rng.standard_normal(whole.shape).astype(np.float32) for _ in range(ways - 1)]
        parts.append(whole - np.sum(parts, axis=0, dtype=np.float32))
    else:
        parts = np.array_split(whole, ways, axis=axis)
    return [
        record(name, np.ascontiguousarray(p), token_idx=0, layer=1, seq=0, rank=r, world_size=ways)
        for r, p in enumerate(parts)
    ]


@pytest.mark.parametrize("seed", range(25))
def test_random_pieces_gather_into_the_whole_tensor(tmp_path, seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(d) for d in rng.integers(2, 6, size=rng.integers(1, 4)))
    ways = int(rng.integers(2, 5))
    axis = None if rng.random() < 0.3 else int(rng.integers(0, len(shape)))
    shape = tuple(d * ways if k == axis else d for k, d in enumerate(shape))
    whole = rng.standard_normal(shape).astype(np.float32)
    names = [f"d{k}" for k in range(len(shape))]
    names[axis if axis is not None else 0] += "(tp,partial)" if axis is None else "(tp)"
    shards = tmp_path / "shards.toml"
    shards.write_text(f'[shards]\n"x" = "{" ".join(names)}"\n')
    a = write_frames(tmp_path / "a.bin", [record("x", whole, token_idx=0, layer=1, seq=0)])
    b = write_frames(tmp_path / "b.bin", _pieces(whole, ways, axis)[::-1])  # any order of ranks
    report = compare(a, b, CompareOptions(maps_b=[str(shards)], detail=True))
    pair = report.findings.kept_pairs()[0]
    assert report.status == "ok" and report.findings.pairs == 1 and not report.unmatched
    assert pair.metrics["max_abs"] <= (1e-5 if axis is None else 0.0)


def test_summaries_of_pieces_gather_their_leading_values_and_stats(tmp_path):
    whole = np.arange(24, dtype=np.float32)
    shards = tmp_path / "shards.toml"
    shards.write_text('[shards]\n"x" = "f(tp)"\n')
    a = write_jsonl(tmp_path / "a.jsonl", [record("x", whole, token_idx=0, layer=1, seq=0, values=10)])
    b = write_jsonl(tmp_path / "b.jsonl", _pieces(whole, 3, 0))
    report = compare(a, b, CompareOptions(maps_b=[str(shards)], detail=True))
    pair = report.findings.kept_pairs()[0]
    assert pair.basis == "bounds" and report.status == "undecided"  # leading values and stats prove no pass
    assert pair.values[1] == [0, 1, 2, 3, 4, 5, 6, 7] and pair.metrics["rms_b"] == pytest.approx(pair.metrics["rms_a"])


def test_a_missing_rank_is_reported_and_its_pieces_are_left_unmatched(tmp_path):
    whole = np.arange(12, dtype=np.float32)
    shards = tmp_path / "shards.toml"
    shards.write_text('[shards]\n"x" = "f(tp)"\n')
    a = write_frames(tmp_path / "a.bin", [record("x", whole, token_idx=0, layer=1, seq=0)])
    b = write_frames(tmp_path / "b.bin", [p for p in _pieces(whole, 3, 0) if p.rank != 1])
    report = compare(a, b, CompareOptions(maps_b=[str(shards)]))
    assert report.findings.pairs == 0 and len(report.unmatched_on("b")) == 2 and len(report.unmatched_on("a")) == 1
    assert any("ranks [0, 2] of 3; missing [1]" in m.diagnostic.message for m in report.malformed)


def test_dims_that_do_not_fit_a_record_are_reported_and_it_is_not_gathered():
    problems = []
    gatherer = Gatherer([("x", parse_dims("s f(tp)"))], lambda where, why: problems.append(why))
    batch = RecordBatch.from_records(
        [TraceRecord("x", shape=(2,), numel=2, rank=r, world_size=2, dtype="f32") for r in range(2)]
    )
    out = gatherer(batch)
    assert len(out) == 2 and gatherer.gathered == 0 and "name 2 axes" in problems[0]


@pytest.mark.parametrize("seed", range(20))
def test_the_leading_values_of_random_pieces_are_a_true_prefix_of_the_whole(seed):
    rng = np.random.default_rng(100 + seed)
    ways = int(rng.integers(2, 4))
    shape = [int(d) for d in rng.integers(1, 5, size=rng.integers(1, 4))]
    axis = int(rng.integers(0, len(shape)))
    shape[axis] *= ways
    whole = rng.standard_normal(shape)
    pieces = np.split(whole, ways, axis=axis)
    records = [
        TraceRecord(
            "x",
            dtype="f32",
            shape=p.shape,
            numel=p.size,
            rank=r,
            world_size=ways,
            values=p.reshape(-1)[: int(rng.integers(0, p.size + 1))],
        )
        for r, p in enumerate(pieces)
    ]
    names = " ".join(f"d{k}(tp)" if k == axis else f"d{k}" for k in range(len(shape)))
    out = Gatherer([("x", parse_dims(names))], lambda *p: None)(RecordBatch.from_records(records))
    assert len(out) == 1 and out.shape_of(0) == whole.shape
    got = out.row_values(0)
    assert np.array_equal(got, whole.reshape(-1)[: len(got)])
    if all(r.values is not None and len(r.values) == r.numel for r in records):
        assert len(got) == whole.size


def _said(whole: np.ndarray, ways: int, axis: int | None, **extra):
    """The pieces of `whole` as an emitter writes them when each call gives its layout (no map needed)."""
    layout = {"shard_partial": True} if axis is None else {"shard_axis": axis}
    return [
        dataclasses.replace(p, world_size=ways, num_shards=ways, **layout, **extra)
        for p in _pieces(whole, ways, axis, name="x")
    ]


@pytest.mark.parametrize("seed", range(25))
def test_random_pieces_that_say_their_layout_gather_without_a_map(tmp_path, seed):
    rng = np.random.default_rng(500 + seed)
    shape = tuple(int(d) for d in rng.integers(2, 6, size=rng.integers(1, 4)))
    ways = int(rng.integers(2, 5))
    axis = None if rng.random() < 0.3 else int(rng.integers(0, len(shape)))
    shape = tuple(d * ways if k == axis else d for k, d in enumerate(shape))
    whole = rng.standard_normal(shape).astype(np.float32)
    pieces = _said(whole, ways, axis)
    write = write_frames if seed % 2 else write_jsonl  # full tensors, or summaries of them
    a = write(tmp_path / "a.x", [record("x", whole, token_idx=0, layer=1, seq=0, values=-1)])
    b = write(tmp_path / "b.x", [dataclasses.replace(p, values=-1) for p in pieces[::-1]])
    report = compare(a, b, CompareOptions(detail=True))
    assert report.status == "ok" and report.findings.pairs == 1 and not report.unmatched
    assert report.findings.kept_pairs()[0].metrics["max_abs"] <= (1e-5 if axis is None else 0.0)


def test_a_records_fields_win_over_the_maps_dims(tmp_path):
    whole = np.arange(12, dtype=np.float32).reshape(3, 4)
    shards = tmp_path / "shards.toml"
    shards.write_text('[shards]\n"x" = "a(tp) b"\n')  # says axis 0; the records say axis 1
    a = write_frames(tmp_path / "a.bin", [record("x", whole, token_idx=0, layer=1, seq=0)])
    b = write_frames(tmp_path / "b.bin", _said(whole, 2, 1))
    report = compare(a, b, CompareOptions(maps_b=[str(shards)]))
    assert report.status == "ok" and report.findings.pairs == 1
    whole_said = [dataclasses.replace(p, shard_partial=False) for p in _pieces(whole, 2, 0, name="x")]
    c = write_frames(tmp_path / "c.bin", [dataclasses.replace(p, world_size=2) for p in whole_said])
    report = compare(a, c, CompareOptions(maps_b=[str(shards)]))  # "I am whole": the map is not applied
    assert report.status == "diverged" and len(report.unmatched_on("b")) == 1  # rank 0's half met the whole


def test_a_shard_index_left_null_is_the_records_rank_and_one_given_is_taken():
    rows = [TraceRecord("y", shape=(2,), numel=2, dtype="f32", values=np.array([r, r])) for r in range(2)]
    said = [dataclasses.replace(r, rank=k, world_size=2, shard_axis=0, num_shards=2) for k, r in enumerate(rows)]
    out = Gatherer([], lambda *p: None)(RecordBatch.from_records(said))
    assert len(out) == 1 and out.row_values(0).tolist() == [0, 0, 1, 1]
    assert (out.shard_axis[0], out.num_shards[0], out.rank[0]) == (NONE, 1, 0)  # the whole tensor says so
    # One process drives both shards (rank 0 for both records) and names each shard itself.
    swapped = [dataclasses.replace(r, rank=0, shard_index=1 - k) for k, r in enumerate(said)]
    out = Gatherer([], lambda *p: None)(RecordBatch.from_records(swapped))
    assert len(out) == 1 and out.row_values(0).tolist() == [1, 1, 0, 0]


@pytest.mark.parametrize(
    "fields, problem",
    [
        ({"shard_axis": 0, "shard_partial": True}, "both shard_axis 0 and shard_partial true"),
        ({"shard_axis": 0, "shard_index": 5}, "shard 5 of 2 shards"),
    ],
)
def test_a_layout_that_cannot_be_is_reported_and_the_record_left_alone(fields, problem):
    problems = []
    rows = [
        TraceRecord("y", shape=(2,), numel=2, dtype="f32", rank=r, world_size=2, num_shards=2, **fields)
        for r in range(2)
    ]
    out = Gatherer([], lambda where, why: problems.append(why))(RecordBatch.from_records(rows))
    assert len(out) == 2 and problem in problems[0]


def test_records_that_say_nothing_are_no_pieces_without_a_map():
    rows = [TraceRecord("y", shape=(2,), numel=2, dtype="f32", rank=r, world_size=2, num_shards=2) for r in range(2)]
    gatherer = Gatherer([], lambda *p: None)
    assert len(gatherer(RecordBatch.from_records(rows))) == 2 and gatherer.gathered == 0
