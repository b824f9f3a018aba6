"""The diagnosis takes its records from what the compare's walk kept, reading nothing a second time, and
reads the traces again only when the run, or the start of it that holds those records, was too large to
keep."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from orchlog.compare import CompareOptions, compare
from orchlog.diagnose import neighbours
from orchlog.diagnose.extent import Extent
from orchlog.diagnose.keeper import WHOLE, Keeper
from orchlog.diagnose.neighbours import Target, gather, needed_tokens
from orchlog.read.paths import open_trace
from tests.diagnose.runs import forward, missing_bias_from_layer, traces
from tests.tracegen import emit, record


def _kept(a, b, keeper):
    for side, path in enumerate((a, b)):
        for batch in open_trace(path).batches(rows=64):
            keeper.add(side, batch)
    return keeper


def _same(x, y):
    assert len(x) == len(y)
    for field in ("checkpoint", "layer", "stage", "token_idx", "step", "order"):
        assert list(getattr(x, field)) == list(getattr(y, field)), field


def test_what_the_walk_kept_gives_the_records_a_second_read_gives(tmp_path):
    a, b = traces(tmp_path, missing_bias_from_layer(1), tokens=12)
    targets = [Target("Qcur", 1, "add", 5, 0), Target("l_out", 2, None, 9, 0)]
    from_memory = _kept(a, b, Keeper()).neighbourhood(targets, window=3)
    from_disk = gather(open_trace(a), open_trace(b), targets, window=3)
    assert from_memory is not None and not from_memory.truncated
    _same(from_memory.a, from_disk.a)
    _same(from_memory.b, from_disk.b)
    capped = _kept(a, b, Keeper()).neighbourhood(targets, window=3, max_rows=10)
    assert capped is not None and capped.truncated and len(capped.a) == 10


def _walked(a, b, keeper, rows=16):
    """Each trace's batches to the keeper and to extents, as the compare's walk hands them."""
    extents = (Extent(), Extent())
    for side, path in enumerate((a, b)):
        for batch in open_trace(path).batches(rows=rows):
            keeper.add(side, batch)
            extents[side].add(batch)
    return keeper, extents


def _stops(extents, targets):
    return tuple(extent.last(needed_tokens(targets)) for extent in extents)


def test_past_its_bounds_the_keeper_holds_the_start_of_each_trace_and_serves_what_lies_within_it(tmp_path):
    a, b = traces(tmp_path, missing_bias_from_layer(1), tokens=40)  # 19 records a token, 760 a trace
    early, late = [Target("Qcur", 1, "add", 2, 0)], [Target("Qcur", 1, "add", 30, 0)]
    whole, _ = _walked(a, b, Keeper())
    half_the_bytes = (sum(whole.sizes[0]) + sum(whole.chunks[0].values())) // 2
    for keeper in (Keeper(max_rows=300), Keeper(max_bytes=half_the_bytes)):
        keeper, extents = _walked(a, b, keeper)
        assert all(reach is not None and 200 < reach < 500 for reach in keeper.reach), keeper.reach
        stop = _stops(extents, early)  # tokens 0-10 end near record 209
        from_memory = keeper.neighbourhood(early, stop_after=stop)
        from_disk = gather(open_trace(a), open_trace(b), early, stop_after=stop)
        assert from_memory is not None and not from_memory.truncated and len(from_memory.a) > 0
        _same(from_memory.a, from_disk.a)
        _same(from_memory.b, from_disk.b)
        assert keeper.neighbourhood(late, stop_after=_stops(extents, late)) is None  # tokens 22-38: past the start
        assert keeper.neighbourhood(early) is None  # where the records end unknown: the whole trace may hold some
        keeper.let_go()
        assert keeper.parts == ([], [])


def test_the_start_kept_past_the_bounds_is_the_first_batches_up_to_its_own_bound(tmp_path):
    a, b = traces(tmp_path, missing_bias_from_layer(1), tokens=40)
    batches = list(open_trace(a).batches(rows=16))  # the reader's batches: 72 rows each
    whole, _ = _walked(a, b, Keeper())
    keeper = Keeper(max_rows=300, prefix_bytes=sum(whole.sizes[0][:2]))  # columns of the first two batches
    keeper, extents = _walked(a, b, keeper)
    assert [len(part) for part in keeper.parts[0]] == [72, 72]
    assert keeper.reach[0] == int(batches[1].order.max()) == int(batches[2].order.min()) - 1
    near = [Target("Qcur", 1, "add", 2, 0)]  # with a window of 2: tokens 0-4, records 0-94
    stop = tuple(extent.last(needed_tokens(near, window=2)) for extent in extents)
    from_memory = keeper.neighbourhood(near, window=2, stop_after=stop)
    from_disk = gather(open_trace(a), open_trace(b), near, window=2, stop_after=stop)
    assert from_memory is not None
    _same(from_memory.a, from_disk.a)
    _same(from_memory.b, from_disk.b)
    assert keeper.neighbourhood(near, stop_after=_stops(extents, near)) is None  # a window of 8: to record 208


def test_a_side_that_holds_records_back_at_its_bound_vouches_for_none_of_its_start(tmp_path):
    a, b = traces(tmp_path, missing_bias_from_layer(1), tokens=40)
    held_a = Keeper(max_rows=300, holding=(lambda: True, lambda: False))
    keeper, extents = _walked(a, b, held_a)
    assert keeper.reach[0] == -1 and keeper.reach[1] > 200
    early = [Target("Qcur", 1, "add", 2, 0)]
    assert keeper.neighbourhood(early, stop_after=_stops(extents, early)) is None


def test_a_record_out_of_file_order_in_the_batch_refused_shortens_the_reach(tmp_path):
    """A batch may bring records from earlier in the file (gathered pieces, released late): the start kept
    reaches only to before the earliest record of the first batch it refused."""
    a, _ = traces(tmp_path, missing_bias_from_layer(1), tokens=40)
    first, second, third = list(open_trace(a).batches(rows=16))[:3]  # the reader's batches: 72 rows each
    keeper = Keeper(max_rows=len(first) + len(third))
    for batch in (first, third, second):  # the second refused: one batch too many
        keeper.add(0, batch)
    assert keeper.reach[0] == int(second.order.min()) - 1 == int(first.order.max())
    assert keeper.reach[1] is WHOLE


@pytest.fixture
def reads(monkeypatch):
    """Each second read of the traces (neighbours.gather) a compare's diagnosis makes, counted."""
    counted_reads: list[int] = []
    second_read = neighbours.gather

    def counted(*args: Any, **kw: Any) -> Any:
        counted_reads.append(1)
        return second_read(*args, **kw)

    monkeypatch.setattr("orchlog.diagnose.run.gather", counted)
    return counted_reads


def test_a_compare_diagnoses_from_its_one_read_and_says_the_same_as_from_two(tmp_path, monkeypatch, reads):
    a, b = traces(tmp_path, missing_bias_from_layer(1), tokens=8)
    one = compare(a, b, CompareOptions())
    assert one.status == "diverged" and one.diagnosis[0].ran and reads == []
    monkeypatch.setattr("orchlog.diagnose.keeper.MAX_ROWS", 0)  # too large to keep: read again
    two = compare(a, b, CompareOptions())
    assert reads == [1]
    assert two.to_json()["diagnoses"] == one.to_json()["diagnoses"]


def _emitted(path, run):
    """runs.write's trace through the C++ emitter: 9,500 records in a fraction of a second."""
    records = (record(name, v, stage=stage, layer=layer, token_idx=tok, step=0) for name, stage, layer, tok, v in run)
    return emit(path, records, mode="full")


def test_a_compare_past_the_keeper_s_bounds_diagnoses_an_early_divergence_from_the_start_it_kept(
    tmp_path, monkeypatch, reads
):
    # 19 records a token, 9,500 a trace, which the compare reads in two batches (6,144 and 3,356 records
    # here); it diverges at token 0, so the diagnosis needs tokens 0-8, which end at record 170.
    a = _emitted(tmp_path / "ref.bin", forward(tokens=500))
    b = _emitted(tmp_path / "ours.bin", forward(tokens=500, bug=missing_bias_from_layer(1)))
    whole = compare(a, b, CompareOptions())
    monkeypatch.setattr("orchlog.diagnose.keeper.MAX_ROWS", 8000)  # the first batch of each trace
    start_kept = compare(a, b, CompareOptions())
    assert reads == [] and start_kept.diagnosis[0].ran
    assert start_kept.to_json()["diagnoses"] == whole.to_json()["diagnoses"]
    monkeypatch.setattr("orchlog.diagnose.keeper.MAX_ROWS", 100)  # not even the first batch: read again
    read_again = compare(a, b, CompareOptions())
    assert reads == [1]
    assert read_again.to_json()["diagnoses"] == whole.to_json()["diagnoses"]


def test_whenever_the_kept_start_answers_it_answers_what_a_second_read_gives(tmp_path):
    """Random bounds, batch sizes and targets: the keeper either declines or gives exactly gather's records."""
    a, b = traces(tmp_path, missing_bias_from_layer(1), tokens=40)
    rng = np.random.default_rng(7)
    answered = 0
    for _ in range(25):
        keeper = Keeper(max_rows=int(rng.integers(50, 900)), prefix_bytes=int(rng.integers(0, 200_000)))
        keeper, extents = _walked(a, b, keeper, rows=int(rng.integers(4, 200)))
        window = int(rng.integers(0, 9))
        targets = [Target("Qcur", 1, "add", int(t), 0) for t in rng.integers(0, 40, size=int(rng.integers(1, 3)))]
        stop = tuple(extent.last(needed_tokens(targets, window=window)) for extent in extents)
        from_memory = keeper.neighbourhood(targets, window=window, stop_after=stop)
        if from_memory is None:
            continue
        answered += 1
        from_disk = gather(open_trace(a), open_trace(b), targets, window=window, stop_after=stop)
        _same(from_memory.a, from_disk.a)
        _same(from_memory.b, from_disk.b)
    assert answered >= 5  # the draw reaches both outcomes
