"""The worst pairs listed: the same whatever rounds the traces arrive in."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from orchlog.compare import CompareOptions, compare
from orchlog.read.batch import RecordBatch
from orchlog.read.paths import open_trace
from tests.tracegen import record, write_frames


def _in_rounds_of(path, piece: int):
    """The trace, its batches cut into pieces of `piece` records: one round per piece."""
    trace = open_trace(path)
    whole = trace.batches

    def pieces(rows: int = 4096, values: int = 1 << 22, tensors: bool = True) -> Iterator[RecordBatch]:
        for batch in whole(rows, values, tensors):
            for start in range(0, len(batch), piece):
                yield batch.take(np.arange(start, min(start + piece, len(batch))))

    trace.batches = pieces  # type: ignore[method-assign]  # the trace read in smaller rounds
    return trace


def test_the_worst_pairs_over_many_small_rounds_are_those_of_one_round(tmp_path):
    # Zeros against a constant from a handful of values: whole groups of pairs share a severity exactly,
    # so the order of execution decides places in the list, and the file holds the records out of that
    # order (each keeps its seq), so a later round can bring an earlier pair.
    rng = np.random.default_rng(2)
    keys: list[tuple[int | None, int | None, str]] = [
        (tok, layer, name) for tok in range(12) for layer in range(4) for name in ("attn_norm", "Qcur", "l_out")
    ]
    offsets = rng.choice(np.array([0.0, 0.02, 0.05, 0.3], dtype=np.float32), size=len(keys))
    written = rng.permutation(len(keys))
    sides = []
    for name, scale in (("a", 0.0), ("b", 1.0)):
        records = [
            record(cp, np.full(16, scale * offsets[i], dtype=np.float32), token_idx=tok, layer=layer, seq=i)
            for i, (tok, layer, cp) in ((int(i), keys[i]) for i in written)
        ]
        sides.append(write_frames(tmp_path / f"{name}.bin", records))
    a, b = sides
    options = CompareOptions(top=10, diagnose=False)
    listed = [
        [(v.checkpoint, v.layer, v.token_idx, v.severity) for v in compare(trace_a, trace_b, options).findings.worst]
        for trace_a, trace_b in (
            (open_trace(a), open_trace(b)),
            (_in_rounds_of(a, 7), _in_rounds_of(b, 7)),
            (_in_rounds_of(a, 1), _in_rounds_of(b, 3)),
        )
    ]
    assert len(listed[0]) == 10 and len({s for *_, s in listed[0]}) < 10  # ties among the listed
    assert listed[1] == listed[0] and listed[2] == listed[0]
    execution = [keys.index((tok, layer, cp)) for cp, layer, tok, _ in listed[0]]
    severities = [s for *_, s in listed[0]]
    assert all(  # worst first; of equally bad pairs, the earliest
        (-severities[k], execution[k]) < (-severities[k + 1], execution[k + 1]) for k in range(9)
    )
