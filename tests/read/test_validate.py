"""validate(): schema checks per record, hash checks where the data is, any format."""

from __future__ import annotations

import json

import numpy as np

from orchlog.encoding import floats
from orchlog.read.paths import open_trace
from orchlog.read.trace import TraceRecord
from orchlog.read.validate import check_record, validate
from orchlog.schema_gen import Stats
from tests.compare.runs import run
from tests.tracegen import header, record, write_frames, write_json_lines, write_jsonl


def test_traces_written_by_the_reference_encoder_are_valid(tmp_path):
    for path in (
        write_jsonl(tmp_path / "t.jsonl", run()),
        write_frames(tmp_path / "t.bin", run()),
        write_jsonl(tmp_path / "all.jsonl", run(values=-1), header(values=-1)),
    ):
        report = validate(open_trace(path), verify_hashes=True)
        assert report, str(report)
    assert validate(open_trace(tmp_path / "all.jsonl"), verify_hashes=True).hashes_checked == len(run())


def _edit_line(path, lineno, change):
    lines = path.read_text().splitlines()
    doc = json.loads(lines[lineno - 1])
    change(doc)
    lines[lineno - 1] = json.dumps(doc)
    path.write_text("\n".join(lines) + "\n")


def test_schema_problems_are_reported_where_they_are(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", [record(f"c{i}", np.arange(4, dtype=np.float32), seq=i) for i in range(4)])
    _edit_line(path, 2, lambda d: d.update(numel=5))
    _edit_line(path, 3, lambda d: d["stats"].update(min=9.0))
    _edit_line(path, 4, lambda d: d.update(blake3="XYZ"))
    _edit_line(path, 5, lambda d: d.update(seq=7))
    problems = [str(p) for p in validate(open_trace(path)).problems]
    assert any(p.startswith(f"{path}:2: numel 5 is not the product") for p in problems)
    assert any(p.startswith(f"{path}:3: stats min 9.0 > max") for p in problems)
    assert any(p.startswith(f"{path}:4: blake3 'XYZ'") for p in problems)
    assert any(p.startswith(f"{path}:5: seq 7 follows 2") for p in problems)


def test_values_that_disagree_with_the_hash_are_caught_when_all_values_are_inline(tmp_path):
    path = write_jsonl(
        tmp_path / "t.jsonl", [record("x", np.arange(3, dtype=np.float32), values=-1)], header(values=-1)
    )
    _edit_line(path, 2, lambda d: d.update(values=[0, 1, 2.5]))
    report = validate(open_trace(path), verify_hashes=True)
    assert not report and any("blake3 of the data" in p.message for p in report.problems)


def test_i64_values_past_two_to_the_53_are_not_taken_for_the_tensors_bytes(tmp_path):
    """JSON numbers read as f64: i64's extremes come back rounded (its max as 2**63, past the type), so the
    bytes cannot be rebuilt from the values; a valid record must not be called damaged for it."""
    extremes = np.array([np.iinfo(np.int64).max, np.iinfo(np.int64).min, 2**53 + 1, -3], dtype=np.int64)
    small = np.array([2**53, -(2**53), 7, 0], dtype=np.int64)
    path = write_jsonl(
        tmp_path / "t.jsonl",
        [record("x", extremes, values=-1), record("y", small, values=-1, seq=1)],
        header(values=-1),
    )
    report = validate(open_trace(path), verify_hashes=True)
    assert report, str(report)
    assert report.hashes_checked == 1  # the small values' bytes, rebuilt exactly and hashed


def test_a_missing_header_is_a_problem_for_orchlog_files_only(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", run(tokens=1))
    path.write_text("".join(path.read_text().splitlines(keepends=True)[1:]))
    assert any("no run header" in p.message for p in validate(open_trace(path)).problems)
    legacy = write_json_lines(tmp_path / "l.jsonl", [{"token_idx": 0, "logits": [1.0]}])
    assert validate(open_trace(legacy))


def test_a_sketch_that_does_not_match_the_data_is_a_problem_when_hashes_are_verified(tmp_path):
    # With every value inline the tensor is rebuilt, and its sketch recomputed by the emitters' core.
    path = write_jsonl(tmp_path / "all.jsonl", run(values=-1), header(values=-1))

    def nudge_row_5(doc):
        rows = floats.from_hex_bits(doc["sketch"], 64, "f32")
        rows[5] += 0.25
        doc["sketch"] = floats.hex_bits(rows, "f32")

    _edit_line(path, 3, nudge_row_5)
    assert validate(open_trace(path))  # nothing to see without the data
    problems = [str(p) for p in validate(open_trace(path), verify_hashes=True).problems]
    assert problems == [f"{path}:3: sketch differs from the data (1 of 64 rows)"]


def test_infinite_stats_are_a_problem_reported_without_a_numpy_warning(recwarn):
    """A damaged record's stats may hold infinities (NumPy scalars, as a batch's rows give them): the mean's
    bounds check then meets inf - inf, which must fail the check, not print a RuntimeWarning."""
    inf = np.float64(np.inf)
    rec = TraceRecord(
        "x",
        dtype="f32",
        shape=(4,),
        numel=4,
        values=np.array([]),
        stats=Stats(inf, inf, np.float64(0.0), inf, inf, 0, 0),
    )
    problems = check_record(rec, True, None)
    assert any("outside [min, max]" in p for p in problems), problems
    assert any("not all finite" in p for p in problems), problems
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_stats_that_reach_infinity_are_a_problem_though_every_other_check_holds():
    """min, max and abs_max are over the finite elements (the schema): an infinite one is a damaged record,
    even where min <= mean <= max and the rest agree (infinite slack lets every bound through)."""
    inf = float("inf")
    rec = TraceRecord(
        "x", dtype="f32", shape=(4,), numel=4, values=np.array([]), stats=Stats(-inf, inf, 0.0, 1.0, inf, 0, 0)
    )
    assert check_record(rec, True, None) == [
        "no blake3",
        "no seq",
        "stats min -inf, max inf, abs_max inf: not all finite, though over finite elements",
    ]
