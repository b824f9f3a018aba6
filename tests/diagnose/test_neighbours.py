"""The records kept around a divergence when the traces are read again."""

from __future__ import annotations

import dataclasses
import threading

import numpy as np
import pytest

from orchlog.diagnose.neighbours import Target, gather, select
from orchlog.read.batch import RecordBatch
from orchlog.read.paths import open_trace
from tests.diagnose.runs import forward, missing_bias_from_layer, traces, write


def test_the_token_and_the_nearby_tokens_at_its_layers_are_kept(tmp_path):
    path = write(tmp_path / "ref.bin", forward(tokens=40, layers=4))
    batch = next(open_trace(path).batches(rows=1 << 20))
    rows = select(batch, [Target("Qcur", 2, "add", 20, 0)], window=3)
    kept = batch.take(rows)
    at_token = kept.token_idx == 20
    assert at_token.sum() == 1 + 4 * 6  # every record of token 20
    others = kept.layer[~at_token]
    assert set(kept.token_idx[~at_token].tolist()) == {17, 18, 19, 21, 22, 23}
    assert set(others.tolist()) <= {1, 2, -1}  # the layer before, the layer, and records outside the layers


def test_both_traces_are_read_again_and_a_row_cap_is_said(tmp_path):
    a, b = traces(tmp_path, missing_bias_from_layer(1), tokens=10)
    target = Target("Qcur", 1, "add", 5, 0)
    nb = gather(open_trace(a), open_trace(b), [target], window=2)
    assert len(nb.a) == len(nb.b) and not nb.truncated
    capped = gather(open_trace(a), open_trace(b), [target], window=2, max_rows=10)
    assert capped.truncated and len(capped.a) == 10


def test_records_without_a_token_are_kept_for_a_target_without_one(tmp_path):
    path = write(tmp_path / "ref.bin", forward(tokens=2, layers=1))
    batch = next(open_trace(path).batches())
    assert len(select(batch, [Target("embd", None, None, None, 0)])) == int(np.sum(batch.token_idx == -1))


def test_each_trace_gets_its_own_preparation_and_held_back_records_are_flushed(tmp_path):
    a, b = traces(tmp_path, missing_bias_from_layer(1), tokens=3)

    class Renaming:
        """A stand-in for the compare's per-trace preparation that holds one record back until the end."""

        def __init__(self, name):
            self.name, self.held = name, []

        def __call__(self, batch):
            batch = dataclasses.replace(batch, checkpoint=batch.checkpoint.map(lambda s: f"{self.name}:{s}"))
            self.held.append(batch.take([0]))
            return batch.take(np.arange(1, len(batch)))

        def flush(self):
            return RecordBatch.concat(self.held)

    target = Target("b:Qcur", 1, "add", 1, 0)
    nb = gather(
        open_trace(a), open_trace(b), [Target("a:embd", None, None, 0, 0), target], (Renaming("a"), Renaming("b"))
    )
    assert set(nb.a.checkpoint.tolist()) <= {
        f"a:{n}" for n in ("embd", "attn_norm", "Qcur", "attn_out", "ffn_inp", "l_out")
    }
    assert "a:embd" in nb.a.checkpoint.tolist()  # the first record, held back and flushed
    assert set(nb.b.checkpoint.tolist()) <= {
        f"b:{n}" for n in ("embd", "attn_norm", "Qcur", "attn_out", "ffn_inp", "l_out")
    }


def test_two_preparations_read_both_traces_at_once_and_one_shared_reads_them_in_turn(tmp_path):
    import threading

    a, b = traces(tmp_path, missing_bias_from_layer(1), tokens=6)
    target = Target("Qcur", 1, "add", 3, 0)

    class Watching:
        """Notes which threads it runs in, and how many traces it is inside at once."""

        def __init__(self, shared: dict, patience: float):
            self.shared, self.patience = shared, patience

        def __call__(self, batch):
            with self.shared["lock"]:
                self.shared["inside"] += 1
                self.shared["most"] = max(self.shared["most"], self.shared["inside"])
                self.shared["threads"].add(threading.get_ident())
                if self.shared["inside"] == 2:
                    self.shared["both"].set()
            self.shared["both"].wait(self.patience)  # until the other trace's read is inside too, or patience ends
            with self.shared["lock"]:
                self.shared["inside"] -= 1
            return batch

    def state():
        return {"lock": threading.Lock(), "inside": 0, "most": 0, "threads": set(), "both": threading.Event()}

    plain = gather(open_trace(a), open_trace(b), [target], window=2)
    two = state()
    apart = gather(open_trace(a), open_trace(b), [target], (Watching(two, 10.0), Watching(two, 10.0)), window=2)
    assert two["most"] == 2 and len(two["threads"]) == 2  # one thread per trace, reading at the same time
    one = state()
    shared = Watching(one, 0.05)
    in_turn = gather(open_trace(a), open_trace(b), [target], shared, window=2)
    assert one["most"] == 1  # a single (possibly stateful) preparation never runs twice at once
    for nb in (apart, in_turn):
        assert nb.a.offset.tolist() == plain.a.offset.tolist() and nb.b.offset.tolist() == plain.b.offset.tolist()


def test_a_second_read_stops_with_the_batch_that_holds_its_last_needed_record(tmp_path, monkeypatch):
    """The batch after it would only be read (a window, up to 16 MiB) to learn that it is not needed."""
    import orchlog.diagnose.neighbours as neighbours

    a, b = traces(tmp_path, missing_bias_from_layer(1), tokens=40)
    drawn: list[list[int]] = []

    def counting_open(path):
        trace = open_trace(path)
        read = trace.batches

        def batches(rows):
            seen: list[int] = []
            drawn.append(seen)
            for batch in read(rows=rows):
                seen.append(int(batch.order[-1]))
                yield batch

        trace.batches = batches  # type: ignore[method-assign,assignment]
        return trace

    monkeypatch.setattr(neighbours, "open_trace", counting_open)
    monkeypatch.setattr(neighbours, "READ_ROWS", 1)
    target = Target("Qcur", 1, "add", 3, 0)
    whole = gather(open_trace(a), open_trace(b), [target], window=1)
    ends = drawn[0]
    assert len(ends) > 2, "the trace reads in several batches"
    stop = ends[1] - 1  # a record inside the second batch
    drawn.clear()
    cut = gather(open_trace(a), open_trace(b), [target], window=1, stop_after=(stop, stop))
    assert [len(seen) for seen in drawn] == [2, 2]
    assert cut.a.offset.tolist() == [o for o, k in zip(whole.a.offset.tolist(), whole.a.order.tolist()) if k <= stop]


def test_an_error_in_either_trace_s_read_reaches_the_caller_once_both_reads_have_ended(tmp_path):
    a, b = traces(tmp_path, missing_bias_from_layer(1), tokens=6)
    target = Target("Qcur", 1, "add", 3, 0)

    class Broken(Exception):
        pass

    def broken(batch):
        raise Broken("a preparation failed")

    for prepares in ((broken, lambda batch: batch), (lambda batch: batch, broken)):
        with pytest.raises(Broken):
            gather(open_trace(a), open_trace(b), [target], prepares, window=2)
        assert not [t for t in threading.enumerate() if t.name == "orchlog-diagnose"]  # no read left running
