"""The native kernels and their NumPy twins give the same answers."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from orchlog import kernels
from tests.conftest import VECTORS

pytestmark = pytest.mark.skipif(not kernels.NATIVE, reason="orchlog._kernels is not built")

SIZES = [1, 7, 1023, 1024, 1025, 3 * (1 << 21) + 5]  # around the block size and the per-thread split


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", SIZES)
def test_diff_sums_native_matches_numpy(dtype, n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n).astype(dtype)
    b = (a + rng.standard_normal(n) * 1e-3).astype(dtype)
    native, twin = kernels.diff_sums(a, b), kernels.diff_sums(a, b, native=False)
    assert native.n == twin.n == n and native.all_finite and twin.all_finite
    for field in ("max_abs", "max_rel", "min_a", "max_a", "min_b", "max_b"):
        assert getattr(native, field) == pytest.approx(getattr(twin, field), rel=1e-6), field
    for field in ("sum_abs", "sum_d2", "sum_a2", "sum_b2"):  # blocked f32 sums: a few ulps of the total
        assert getattr(native, field) == pytest.approx(getattr(twin, field), rel=2e-5), field


def test_diff_sums_flags_any_non_finite_element():
    a = np.ones(5000, dtype=np.float32)
    for bad in (np.nan, np.inf, -np.inf):
        b = a.copy()
        b[4321] = bad
        assert not kernels.diff_sums(a, b).all_finite
        assert not kernels.diff_sums(b, a, native=False).all_finite


def test_diff_sums_uses_the_common_prefix():
    a, b = np.arange(10, dtype=np.float32), np.arange(4, dtype=np.float32) + 1
    assert kernels.diff_sums(a, b).n == 4
    assert kernels.diff_sums(a, b).max_abs == 1.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("q", [0.0, 0.5, 0.99, 1.0])
@pytest.mark.parametrize("n", [100_003, 1_000_003])  # below and above the size where a sample brackets the rank
def test_quantile_is_exact_nearest_rank(dtype, q, n):
    rng = np.random.default_rng(3)
    a = rng.standard_normal(n).astype(dtype)
    b = (a + rng.standard_normal(a.size) * rng.choice([1e-6, 1e-2, 10.0], a.size)).astype(dtype)
    want = np.percentile(np.abs(a - b), q * 100, method="inverted_cdf")
    assert kernels.abs_diff_quantile(a, b, q) == want
    assert kernels.abs_diff_quantile(a, b, q, native=False) == want


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_quantile_is_exact_at_every_small_size_and_in_any_order(dtype):
    # Below the bracketing size the rank is bounded by the maxima of sets dealt by position: sizes
    # around the set count, ties, and differences sorted ascending (the last set always wins) are its
    # hard cases.
    rng = np.random.default_rng(5)
    for n in [1, 2, 31, 32, 33, 99, 100, 101, 896, 1000, 3201, 6400, 6401, 20_000, 32_767]:
        for layout in ("random", "ascending", "ties"):
            a = rng.standard_normal(n).astype(dtype)
            d = np.abs(rng.standard_normal(n))
            d = np.sort(d) if layout == "ascending" else np.round(d, 1) if layout == "ties" else d
            b = (a + d).astype(dtype)
            for q in (0.0, 0.5, 0.99, 1.0):
                want = np.percentile(np.abs(a - b), q * 100, method="inverted_cdf")
                assert kernels.abs_diff_quantile(a, b, q) == want, (n, layout, q)


@pytest.mark.parametrize("n", [50_000, 2_000_000])
def test_quantile_handles_many_equal_differences(n):
    a = np.zeros(n, dtype=np.float32)
    b = np.where(np.arange(n) % 100 == 0, 3.0, 0.5).astype(np.float32)
    assert kernels.abs_diff_quantile(a, b, 0.99) == 0.5
    assert kernels.abs_diff_quantile(a, b, 0.995) == 3.0


def test_quantile_stays_exact_when_the_sample_misleads():
    # Every element the strided sample looks at agrees; all the others differ. The bracket read
    # off the sample misses the rank, and the answer must still be exact.
    n = 1 << 21
    a = np.zeros(n, dtype=np.float32)
    b = np.linspace(1.0, 2.0, n, dtype=np.float32)
    b[:: n >> 16] = 0.0
    want = np.percentile(np.abs(a - b), 99, method="inverted_cdf")
    assert kernels.abs_diff_quantile(a, b, 0.99) == want


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1000, 40_000, 1 << 20, 2 * (1 << 21) + 4099])  # one read from 32,768; two workers
def test_sums_with_their_rank_are_the_sums_alone_and_the_exact_rank(dtype, n):
    # Large pairs take their rank in the same read as the sums: a stretch of the sums, then the bracket
    # pass over it. The sums must be bit for bit those of the sums alone, the rank the selection's.
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n).astype(dtype)
    b = (a + rng.standard_normal(n) * rng.choice([1e-6, 1e-3, 1.0], n)).astype(dtype)
    k = int(np.ceil(0.99 * n)) - 1
    assert kernels._native is not None
    both = kernels._native.pair_metrics(a, b, k)
    assert both.pop("rank_value") == kernels._native.abs_diff_select(a, b, k) == np.partition(np.abs(a - b), k)[k]
    assert both == kernels._native.pair_metrics(a, b)
    sums, q = kernels.diff_sums_and_quantile(a, b, 0.99)
    twin, q_twin = kernels.diff_sums_and_quantile(a, b, 0.99, native=False)
    assert q == q_twin == np.partition(np.abs(a - b), k)[k] and sums.all_finite and twin.all_finite
    assert sums == kernels.diff_sums(a, b)


@pytest.mark.parametrize("where", ["in the sample", "between samples"])
def test_a_non_finite_pair_has_its_sums_and_no_rank(where):
    n = 1 << 20
    a = np.random.default_rng(2).standard_normal(n).astype(np.float32)
    b = a + np.float32(1e-3)
    b[0 if where == "in the sample" else 63 * 1024 + 100] = np.nan  # the sample reads runs of 64 from the start
    assert kernels._native is not None
    both = kernels._native.pair_metrics(a, b, n // 2)
    assert np.isnan(both.pop("rank_value")) and not both["all_finite"]
    np.testing.assert_equal(both, kernels._native.pair_metrics(a, b))  # NaN sums equal too
    assert np.isnan(kernels.diff_sums_and_quantile(a, b, 0.99)[1])


def _columns(buf: bytes, first_line: int) -> dict[str, Any]:
    cols = kernels.parse_orchlog_jsonl(buf, first_line)
    assert cols is not None, "orchlog._kernels is not built"
    return cols


def _isas() -> list[str]:
    """The bracket pass's kernels this CPU runs (portable always)."""
    if kernels._native is None:
        return []
    one = np.zeros(1 << 16, dtype=np.float32)
    found = []
    for isa in ("portable", "avx2", "avx512"):
        try:
            kernels._native.abs_diff_select(one, one, 0, isa=isa)
        except ValueError:
            continue
        found.append(isa)
    return found


@pytest.mark.parametrize("isa", _isas())
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_bracket_kernel_selects_exactly(isa, dtype):
    # Lengths that leave a tail after the last whole vector, ranks from the median up, hits at the
    # very start and end of the arrays, and a bracket that holds more than can be gathered
    # (two adjacent values, half the elements each: the radix passes take over).
    assert kernels._native is not None
    rng = np.random.default_rng(11)
    for n in (7, 64, 896, 1_000, 3_201, 32_768, 100_003, 1 << 20, 4_194_319):  # small ones gather with it too
        a = rng.standard_normal(n).astype(dtype)
        b = (a + rng.standard_normal(n) * 1e-3).astype(dtype)
        b[:5], b[-5:] = a[:5] + 7, a[-5:] + 7
        ad = np.abs(a - b)
        for q in (0.5, 0.9, 0.99, 0.999999):
            k = max(0, int(np.ceil(q * n)) - 1)
            assert kernels._native.abs_diff_select(a, b, k, isa=isa) == np.partition(ad, k)[k], (n, q)
    n = 3_000_001
    a = np.zeros(n, dtype=dtype)
    b = np.where(rng.random(n) < 0.5, dtype(0.5), np.nextafter(dtype(0.5), dtype(1))).astype(dtype)
    k = n // 2
    assert kernels._native.abs_diff_select(a, b, k, isa=isa) == np.partition(np.abs(a - b), k)[k]


def test_an_unknown_or_unsupported_kernel_is_a_clear_error():
    if kernels._native is None:
        pytest.skip("the native kernels are not built")
    one = np.zeros(4, dtype=np.float32)
    with pytest.raises(ValueError, match="want best, portable"):
        kernels._native.abs_diff_select(one, one, 0, isa="sse9")


def _vector_lines() -> bytes:
    cases = json.loads((VECTORS / "records.json").read_text(encoding="utf-8"))["cases"]
    return b"".join(c["expected"]["jsonl"].encode() + b"\n" for c in cases)


def test_native_jsonl_parser_takes_every_canonical_vector_line():
    buf = _vector_lines()
    cols = _columns(buf, 1)
    assert cols["n"] == buf.count(b"\n") and len(cols["other"]) == 0
    assert cols["line"].tolist() == list(range(1, cols["n"] + 1))


def test_native_jsonl_parser_hands_back_what_it_does_not_recognise():
    canonical = _vector_lines().split(b"\n")[0]
    spaced = json.dumps(json.loads(canonical)).encode()  # same record, ", " and ": " separators
    buf = b"\n".join([b'{"orchlog":1}', canonical, spaced, b"  ", b'{"checkpoint": broken', canonical]) + b"\n"
    cols = _columns(buf, 10)
    assert cols["line"].tolist() == [11, 15]
    other = cols["other"].reshape(-1, 3)
    assert other[:, 0].tolist() == [10, 12, 14]
    assert [buf[s:e] for _, s, e in other] == [b'{"orchlog":1}', spaced, b'{"checkpoint": broken']


@pytest.mark.parametrize("absent", [("sketch", "grafted"), ("rank", "world_size", "seq", "num_shards"), ("layer",)])
def test_native_jsonl_parser_takes_lines_without_later_fields_as_the_python_reader_does(absent, tmp_path):
    # Records written before schema 2 have no sketch or grafted; other writers leave out defaults.
    from orchlog.read.formats.orchlog_jsonl import batch_from_columns, parse_line
    from orchlog.read.trace import Trace

    lines = []
    for line in _vector_lines().splitlines():
        doc = json.loads(line)
        for name in absent:
            doc.pop(name, None)
        lines.append(json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode())
    cols = _columns(b"\n".join(lines) + b"\n", 1)
    assert cols["n"] == len(lines) and len(cols["other"]) == 0
    trace = Trace(str(tmp_path / "t.jsonl"), "orchlog-jsonl")
    fast = list(batch_from_columns(cols, trace.path, trace).records())
    slow = [parse_line(trace, line, i + 1) for i, line in enumerate(lines)]
    for a, b in zip(fast, slow):
        assert a is not None and b is not None
        if "sketch" in absent:
            assert a.sketch is None
        else:
            assert a.sketch is not None and b.sketch is not None and np.array_equal(a.sketch, b.sketch)
        for name in ("checkpoint", "layer", "rank", "world_size", "seq", "num_shards", "grafted", "blake3"):
            assert getattr(a, name) == getattr(b, name), name


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_native_number_parsing_matches_python_for_random_bit_patterns(dtype):
    from orchlog.encoding.record import encode_record
    from tests.tracegen import record

    width = np.dtype(dtype).itemsize
    bits = np.random.default_rng(11).integers(0, 2 ** (8 * width) - 1, 20_000, dtype=np.uint64, endpoint=True)
    values = bits.astype(np.uint32 if width == 4 else np.uint64).view(dtype)
    values = values[np.isfinite(values)]
    line = encode_record(record("x", values, values=-1)).jsonl
    cols = _columns(line, 1)
    assert cols["n"] == 1
    want = np.array(json.loads(line)["values"], dtype=np.float64)  # Python's float(): correctly rounded
    np.testing.assert_array_equal(cols["values"], want)
    np.testing.assert_array_equal(np.signbit(cols["values"]), np.signbit(want))


def test_native_number_parsing_matches_python_for_every_digit_count():
    # Fraction digits are read eight at a time, and the last fewer than eight as one word: every count
    # of them, after integer parts of every length, with the following byte any of JSON's.
    from orchlog.encoding.record import encode_record
    from tests.tracegen import record

    rng = np.random.default_rng(12)
    texts = []
    for int_digits in range(0, 8):
        for frac_digits in range(0, 19):
            whole = "".join(rng.choice(list("0123456789"), int_digits)) or "0"
            whole = whole.lstrip("0") or "0"
            frac = "".join(rng.choice(list("0123456789"), frac_digits))
            sign = "-" if rng.random() < 0.5 else ""
            exp = rng.choice(["", "e-5", "E+3", "e12"])
            texts.append(f"{sign}{whole}{'.' + frac if frac else ''}{exp}")
    line = encode_record(record("x", np.ones(len(texts), np.float32), values=-1)).jsonl
    head, _, rest = line.partition(b'"values":[')
    line = head + b'"values":[' + ",".join(texts).encode() + b"]" + rest.partition(b"]")[2]
    cols = _columns(line, 1)
    assert cols["n"] == 1, cols["other"]
    want = np.array([float(t) for t in texts])
    np.testing.assert_array_equal(cols["values"], want)


def _ragged(rng, lengths):
    off = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=off[1:])
    values = rng.standard_normal(off[-1])
    specials = rng.random(off[-1])
    values[specials < 0.02] = np.nan
    values[(specials >= 0.02) & (specials < 0.03)] = np.inf
    return values, off


def test_prefix_diffs_native_matches_numpy_on_ragged_rows_with_nan_and_inf():
    rng = np.random.default_rng(8)
    la, lb = rng.integers(0, 300, 500), rng.integers(0, 300, 400)
    va, oa = _ragged(rng, la)
    vb, ob = _ragged(rng, lb)
    vb[: min(vb.size, va.size) // 2] = va[: min(vb.size, va.size) // 2]  # some equal stretches, NaN on both sides
    ia, ib = rng.integers(0, 500, 2000), rng.integers(0, 400, 2000)
    native = kernels.prefix_diffs(va, oa, ia, vb, ob, ib)
    twin = kernels.prefix_diffs(va, oa, ia, vb, ob, ib, native=False)
    assert native.shape == (2000, len(kernels.PREFIX_COLUMNS))
    np.testing.assert_allclose(native, twin, rtol=1e-12, atol=1e-12, equal_nan=True)  # summation order differs


def test_prefix_diffs_takes_the_exact_nearest_rank_p99():
    x = np.arange(150, dtype=np.float64)
    row = kernels.prefix_diffs(x, np.array([0, 150]), np.array([0]), np.zeros(150), np.array([0, 150]), np.array([0]))
    p99 = row[0, kernels.PREFIX_COLUMNS.index("p99_abs")]
    assert p99 == np.percentile(x, 99, method="inverted_cdf") == 148.0


def test_crc32c_matches_the_reference_at_lengths_around_the_three_stream_blocks():
    # Long buffers are checksummed on three streams of 256 bytes joined by shift tables; the lengths
    # around multiples of 768 and the continuation from a CRC so far are where that could go wrong.
    rng = np.random.default_rng(21)
    data = rng.integers(0, 256, 5000, dtype=np.uint8).tobytes()
    for n in (*range(760, 776), 1535, 1536, 1537, 2311, 2304, 4999):
        assert kernels.crc32c(data[:n]) == kernels.crc32c(data[:n], native=False), n
        head = kernels.crc32c(data[:13])
        assert kernels.crc32c(data[13:n], head) == kernels.crc32c(data[:n], native=False), n


def test_sketch_sums_native_matches_numpy():
    rng = np.random.default_rng(13)
    sa, sb = rng.standard_normal((50, 64)), rng.standard_normal((40, 64))
    sa[3, 7] = np.nan  # a record without a sketch reads as NaN rows
    ia, ib = rng.integers(0, 50, 300), rng.integers(0, 40, 300)
    native = kernels.sketch_sums(sa, ia, sb, ib)
    twin = kernels.sketch_sums(sa, ia, sb, ib, native=False)
    assert native.shape == (300, 3)
    np.testing.assert_allclose(native, twin, rtol=1e-13, equal_nan=True)  # summation order differs
    assert np.isnan(native[ia == 3]).all()
    with pytest.raises(IndexError):
        kernels.sketch_sums(sa, np.array([50]), sb, np.array([0]))


def test_is_none_finds_none_by_identity_in_any_object_column():
    column = np.empty(40, dtype=object)
    column[::3] = [{"token_id": 1}] * len(column[::3])
    column[1], column[2], column[4] = 0, np.zeros(3), False  # falsy, and one that compares elementwise
    column[5], column[7] = float("nan"), ""
    for view in (column, column[::2], column[3:9], column[:0], column[::-1]):
        expected = [item is None for item in view]
        assert kernels.is_none(view).tolist() == expected
        assert kernels.is_none(view, native=False).tolist() == expected
