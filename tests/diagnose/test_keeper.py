"""The diagnosis takes its records from what the compare's walk kept, reading nothing a second time, and
reads the traces again only when the run was too large to keep."""

from __future__ import annotations

from typing import Any

from orchlog.compare import CompareOptions, compare
from orchlog.diagnose import neighbours
from orchlog.diagnose.keeper import Keeper
from orchlog.diagnose.neighbours import Target, gather
from orchlog.read.paths import open_trace
from tests.diagnose.runs import missing_bias_from_layer, traces


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


def test_past_its_bounds_the_keeper_lets_go_of_everything(tmp_path):
    a, b = traces(tmp_path, missing_bias_from_layer(1), tokens=12)
    by_rows = _kept(a, b, Keeper(max_rows=50))
    by_bytes = _kept(a, b, Keeper(max_bytes=1000))  # full-mode records: their tensor bytes are in memory
    for keeper in (by_rows, by_bytes):
        assert keeper.let_go and keeper.parts == ([], [])
        assert keeper.neighbourhood([Target("Qcur", 1, "add", 5, 0)]) is None


def test_a_compare_diagnoses_from_its_one_read_and_says_the_same_as_from_two(tmp_path, monkeypatch):
    a, b = traces(tmp_path, missing_bias_from_layer(1), tokens=8)
    reads = []
    second_read = neighbours.gather

    def counted(*args: Any, **kw: Any) -> Any:
        reads.append(1)
        return second_read(*args, **kw)

    monkeypatch.setattr("orchlog.diagnose.run.gather", counted)
    one = compare(a, b, CompareOptions())
    assert one.status == "diverged" and one.diagnosis[0].ran and reads == []
    monkeypatch.setattr("orchlog.diagnose.keeper.MAX_ROWS", 0)  # too large to keep: read again
    two = compare(a, b, CompareOptions())
    assert reads == [1]
    assert two.to_json()["diagnoses"] == one.to_json()["diagnoses"]
