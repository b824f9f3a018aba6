"""Shard layouts beyond one split axis: a fused per-shard layout (each rank holds its share of every
section, [q0 k0 v0 | q1 k1 v1]), GQA with fewer KV heads than ranks (each head on several ranks) and
tensors replicated on every rank, gathered back into the tensor an unsharded run logs."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from orchlog.compare import CompareOptions, compare
from orchlog.maps.shards import Gatherer, parse_dims
from orchlog.read.batch import RecordBatch
from orchlog.read.trace import TraceRecord
from tests.tracegen import record, write_frames


def _loader(piece: np.ndarray) -> Callable[[], bytes]:
    return lambda: np.ascontiguousarray(piece).tobytes()


def _gather(dims: str, pieces: list[np.ndarray]) -> tuple[np.ndarray | None, list[str]]:
    problems: list[str] = []
    batch = RecordBatch.from_records(
        [
            TraceRecord(
                "qkv",
                token_idx=0,
                layer=0,
                rank=r,
                world_size=len(pieces),
                dtype="f32",
                shape=p.shape,
                numel=p.size,
                loader=_loader(p),
            )  # fmt: skip
            for r, p in enumerate(pieces)
        ]
    )
    out = Gatherer([("qkv", parse_dims(dims))], lambda _where, why: problems.append(why))(batch)
    if len(out) != 1:
        return None, problems
    return out.record(0).tensor(), problems


def _shards(section: np.ndarray, holders: int, ranks: int) -> list[np.ndarray]:
    """Each rank's share of one section split into `holders` parts, each part on ranks/holders ranks."""
    parts = np.split(section, holders, axis=-1)
    return [parts[r // (ranks // holders)] for r in range(ranks)]


@pytest.mark.parametrize("ranks", [1, 2, 4])
def test_a_fused_qkv_gathered_section_by_section_is_the_whole_tensor(ranks):
    rng = np.random.default_rng(ranks)
    q, k, v = (rng.standard_normal((3, n)).astype(np.float32) for n in (16, 8, 8))
    pieces = [np.concatenate([a, b, c], axis=-1) for a, b, c in zip(*(_shards(x, ranks, ranks) for x in (q, k, v)))]
    got, problems = _gather("t (q=16|k=8|v=8)[tp]", pieces)
    assert got is not None
    assert not problems and np.array_equal(got, np.concatenate([q, k, v], axis=-1))
    if ranks > 1:  # the naive concatenation is not it
        assert not np.array_equal(np.concatenate(pieces, axis=-1), got)


def test_gqa_with_fewer_kv_heads_than_ranks_takes_one_copy_of_each_head():
    rng = np.random.default_rng(7)
    q = rng.standard_normal((2, 16)).astype(np.float32)  # 4 query heads of 4
    k, v = (rng.standard_normal((2, 8)).astype(np.float32) for _ in range(2))  # 2 KV heads of 4, on 4 ranks
    pieces = [np.concatenate(s, axis=-1) for s in zip(_shards(q, 4, 4), _shards(k, 2, 4), _shards(v, 2, 4))]
    got, problems = _gather("t (q=16|k=8/2|v=8/2)[tp]", pieces)
    assert got is not None
    assert not problems and np.array_equal(got, np.concatenate([q, k, v], axis=-1))
    k_only, _ = _gather("t h[tp:groups=2]", _shards(k, 2, 4))
    assert k_only is not None
    assert np.array_equal(k_only, k)


def test_a_replicated_tensor_is_rank_0s_copy():
    whole = np.arange(12, dtype=np.float32).reshape(3, 4)
    got, problems = _gather("t h # tp:replicated", [whole, whole.copy()])
    assert got is not None
    assert not problems and np.array_equal(got, whole)


def test_sections_that_do_not_add_up_to_the_pieces_are_reported_and_not_gathered():
    got, problems = _gather("t (q=16|k=8|v=8)[tp]", [np.zeros((2, 10), np.float32)] * 2)
    assert got is None and "add up to 16 per rank, the pieces have 10" in problems[0]
    got, problems = _gather("t (q=16|k=8/3|v=8)[tp]", [np.zeros((2, 16), np.float32)] * 2)
    assert got is None and "cannot be shared by 2 ranks in 3 parts" in problems[0]


def test_a_split_along_another_parallelism_is_reported_not_gathered():
    got, problems = _gather("t[cp:zigzag] h # tp:replicated", [np.zeros((2, 4), np.float32)] * 2)
    assert got is None and "split it along cp on axis 0" in problems[0]


def test_a_fused_layout_in_a_map_compares_a_sharded_run_with_an_unsharded_one(tmp_path):
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((1, n)).astype(np.float32) for n in (8, 4, 4))
    whole = np.concatenate([q, k, v], axis=-1)
    pieces = [np.concatenate(s, axis=-1) for s in zip(*(_shards(x, 2, 2) for x in (q, k, v)))]
    a = write_frames(tmp_path / "a.bin", [record("qkv", whole[0], token_idx=0, layer=0, seq=0)])
    b = write_frames(
        tmp_path / "b.bin",
        [record("qkv", p[0], token_idx=0, layer=0, seq=0, rank=r, world_size=2) for r, p in enumerate(pieces)],
    )
    shards = tmp_path / "shards.toml"
    shards.write_text('[shards]\n"qkv" = "(q=8|k=4|v=4)[tp]"\n')
    report = compare(a, b, CompareOptions(maps_b=[str(shards)]))
    assert report and report.findings.pairs == 1
