"""`orchlog validate` over whole batches (orchlog/read/validate_batch.py) says exactly what the record-by-record
check says: on every seed trace of every format and on damaged copies of them, and, row by row, every record
check_record finds a problem in is among the batch's suspects whatever its fields hold."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from orchlog import open_trace
from orchlog.read import validate as validating
from orchlog.read.batch import RecordBatch
from orchlog.read.records import Location, TraceRecord
from orchlog.read.validate_batch import suspect_rows
from orchlog.schema_gen import Stats
from tests.fuzz.mutate import make_mutant
from tests.fuzz.seeds import make_seeds
from tests.read.validate_ways import both_ways

MUTANTS_PER_SEED = 12


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    return make_seeds(tmp_path_factory.mktemp("seeds"))


@pytest.mark.parametrize("verify_hashes", [False, True], ids=["schema", "hashes"])
@pytest.mark.parametrize("mutants", [MUTANTS_PER_SEED, pytest.param(200, marks=pytest.mark.slow)])
def test_every_seed_and_its_mutants_validate_to_the_same_report_either_way(
    seeds, tmp_path, monkeypatch, mutants, verify_hashes
):
    compared = problems = 0
    for seed in seeds:
        paths = [seed.path] + [make_mutant(seed, n, tmp_path).path for n in range(mutants)]
        for path in paths:
            try:
                fast, slow = both_ways(path, monkeypatch, verify_hashes)
            except Exception as exc:  # a mutant no reader opens: both ways alike, so nothing to compare
                assert type(exc).__name__ == "OrchlogError", exc
                continue
            assert str(fast) == str(slow), path
            assert fast.to_json() == slow.to_json(), path
            compared += 1
            problems += len(fast.problems)
    assert compared > len(seeds) * mutants // 2 and problems > 0  # damaged traces were among them


def test_the_binary_stream_is_read_a_window_at_a_time(seeds):
    binary = next(s for s in seeds if s.kind == "frames" and not s.path.name.endswith(".gz"))
    runs = [r for r in open_trace(binary.path).runs() if isinstance(r, RecordBatch)]
    assert sum(len(r) for r in runs) == len(list(open_trace(binary.path))) > 0  # every record in a window


def test_parquet_is_read_a_row_group_at_a_time_with_each_row_where_its_record_says(seeds):
    parquet = [s for s in seeds if s.kind == "parquet"]
    assert parquet
    for seed in parquet:
        runs = [r for r in open_trace(seed.path).runs() if isinstance(r, RecordBatch)]
        from_runs = [str(r.location(i)) for r in runs for i in range(len(r))]
        assert from_runs == [str(rec.location) for rec in open_trace(seed.path)], seed.name
        assert "#row" in from_runs[-1]


def test_no_row_of_a_sound_trace_is_a_suspect(seeds):
    """The masks are not everything at once: a valid trace's records are never looked at one by one."""
    sound = 0
    for seed in seeds:
        trace = open_trace(seed.path)
        if not validating.validate(open_trace(seed.path)) or not trace.format.startswith("orchlog"):
            continue
        batches = [run for run in trace.runs() if isinstance(run, RecordBatch)]
        if not batches:  # read record by record (a gzip binary stream): checked so
            continue
        expected = trace.headers[0].get("values") if len(trace.headers) == 1 else None
        assert not any(suspect_rows(b, True, expected).any() for b in batches), seed.name
        sound += 1
    assert sound >= 6  # JSONL (plain, every value, gzip), the binary stream, a directory of them, Parquet


# Fields a damaged or hand-written trace may carry, boundaries first.
_ints = st.one_of(st.none(), st.integers(-3, 3), st.integers(-(2**62), 2**62))
_floats = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, -0.0, 1.0, -1.0]))
_counts = st.one_of(st.integers(0, 3), st.integers(0, 2**40))


@st.composite
def _records(draw) -> TraceRecord:
    shape = draw(st.one_of(st.none(), st.lists(st.integers(-2, 5), max_size=3)))
    numel = draw(st.one_of(st.none(), st.integers(0, 12), st.just(math.prod(shape) if shape else 1)))
    values = np.array(draw(st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=6)), dtype=np.float64)
    stats = None
    if draw(st.booleans()):
        low, high = draw(_floats), draw(_floats)
        stats = Stats(
            min=low,
            max=high,
            mean=draw(st.one_of(_floats, st.just(low), st.just(high))),
            rms=draw(_floats),
            abs_max=draw(st.one_of(_floats, st.just(max(abs(low or 0), abs(high or 0))))),
            nan_count=draw(_counts),
            inf_count=draw(_counts),
        )
    digest = draw(st.sampled_from([None, "a" * 64, "A" * 64, "a" * 63, "g" * 64, "0123456789abcdef" * 4]))
    world = draw(st.one_of(st.integers(0, 4), st.just(1)))
    return TraceRecord(
        checkpoint="x",
        team="t",
        token_idx=draw(_ints),
        layer=draw(_ints),
        step=draw(_ints),
        seq=draw(st.one_of(st.none(), st.integers(-3, 10))),
        rank=draw(st.integers(-1, 4)),
        world_size=world,
        full_reason=draw(st.sampled_from([None, "values"])),
        dtype=draw(st.sampled_from([None, "f32", "bf16", "q8_0"])),
        shape=None if shape is None else tuple(shape),
        numel=numel,
        values=values,
        stats=stats,
        blake3=digest,
        location=Location("t.jsonl", line=1),
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    records=st.lists(_records(), min_size=1, max_size=8),
    strict=st.booleans(),
    expected=st.one_of(st.none(), st.integers(-1, 8)),
)
@example(  # infinite bounds with every other stats check holding: too rare a draw to count on
    records=[
        TraceRecord(
            "x",
            team="t",
            seq=0,
            dtype="f32",
            shape=(4,),
            numel=4,
            values=np.array([0.5]),
            stats=Stats(-math.inf, math.inf, 0.0, 1.0, math.inf, 0, 0),
            blake3="a" * 64,
            location=Location("t.jsonl", line=1),
        )
    ],
    strict=True,
    expected=None,
)
def test_a_record_check_record_finds_fault_with_is_always_a_suspect(records, strict, expected):
    batch = RecordBatch.from_records(records)
    suspects = suspect_rows(batch, strict, expected)
    for i in range(len(batch)):
        try:
            found = validating.check_record(batch.record(i), strict, expected)
        except TypeError:  # a record the check itself cannot take (a rank of None): looked at one by one too
            found = ["raised"]
        assert not found or suspects[i], (i, found, batch.record(i))
