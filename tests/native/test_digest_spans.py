"""_native.digest_spans: many tensors of one buffer digested at once, each exactly as DigestedTensor digests it."""

from __future__ import annotations

import numpy as np
import pytest

from orchlog import _native
from orchlog.encoding import dtypes
from orchlog.schema_gen import DTYPE_SIZES


def _spans(rng: np.random.Generator) -> tuple[np.ndarray, list[tuple[int, int, str]]]:
    """A buffer of random bytes (NaN and inf among the f16 at least) and spans of every dtype in it, at odd
    starts, an empty one of each."""
    window = rng.integers(0, 256, 1 << 16, dtype=np.uint8)
    spans, at = [], 1
    for dtype, size in sorted(DTYPE_SIZES.items()):
        for numel in (0, 1, 7, 300):
            spans.append((at, numel * size, dtype))
            at += numel * size + 3
    return window, spans


def test_every_span_digests_as_its_tensor_alone():
    window, spans = _spans(np.random.default_rng(0))
    starts = np.array([s for s, _, _ in spans], dtype=np.int64)
    lengths = np.array([n for _, n, _ in spans], dtype=np.int64)
    names = [d for _, _, d in spans]
    got = _native.digest_spans([window] * len(spans), starts, lengths, names)
    m = len(spans)
    stats = np.frombuffer(got["stats"], dtype=np.float64).reshape(m, -1)
    sketch = np.frombuffer(got["sketch"], dtype=np.float32).reshape(m, -1)
    hashes = np.frombuffer(got["blake3"], dtype="S64")
    for k, (start, nbytes, dtype) in enumerate(spans):
        flat = dtypes.from_bytes(window[start : start + nbytes].tobytes(), dtype)
        alone = _native.DigestedTensor(flat, dtype).digest()
        assert hashes[k].decode() == alone["blake3"], (dtype, nbytes)
        want = np.array([np.nan if v is None else v for v in alone["stats"]])
        np.testing.assert_array_equal(stats[k], want, err_msg=f"{dtype} {nbytes}")
        np.testing.assert_array_equal(sketch[k], np.asarray(alone["sketch"], dtype=np.float32))


def test_many_megabytes_digest_on_several_threads_as_one_span_at_a_time():
    """Spans of 4 MiB and more are cut into runs of about equal bytes, one thread each: every row comes back
    in its place, as the span digested alone gives it (uneven sizes, so the cuts fall inside the list)."""
    rng = np.random.default_rng(3)
    window = rng.standard_normal(5 << 20, dtype=np.float32).view(np.uint8)
    lengths = rng.integers(0, 32 << 10, 700) // 4 * 4
    lengths[350] = 6 << 20  # one span of a third of the bytes
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    assert starts[-1] + lengths[-1] <= window.nbytes
    names = ["f32"] * len(lengths)
    together = _native.digest_spans([window] * len(names), starts, lengths.astype(np.int64), names)
    for field, rows in together.items():
        width = len(rows) // len(names)
        for k in range(len(names)):
            alone = _native.digest_spans([window], starts[k : k + 1], lengths[k : k + 1].astype(np.int64), ["f32"])
            assert rows[k * width : (k + 1) * width] == alone[field], (field, k)


def test_rows_of_several_buffers_are_each_read_from_their_own():
    a, b = np.arange(16, dtype=np.float32), -np.arange(16, dtype=np.float32)
    got = _native.digest_spans(
        [a.view(np.uint8), b.view(np.uint8), a.view(np.uint8)],
        np.array([0, 0, 8], dtype=np.int64),
        np.array([64, 64, 16], dtype=np.int64),
        ["f32", "f32", "f32"],
    )
    hashes = [h.decode() for h in np.frombuffer(got["blake3"], dtype="S64")]
    assert hashes == [_native.DigestedTensor(x, "f32").digest()["blake3"] for x in (a, b, a[2:6])]


@pytest.mark.parametrize(
    ("start", "length", "dtype", "words"),
    [
        (60, 8, "f32", "not whole elements inside its buffer"),
        (-1, 4, "f32", "not whole elements inside its buffer"),
        (0, 6, "f32", "not whole elements inside its buffer"),
        (0, 4, "q4_k", "unknown dtype"),
    ],
)
def test_a_span_outside_its_buffer_or_of_no_known_dtype_is_refused(start, length, dtype, words):
    window = np.zeros(64, dtype=np.uint8)
    with pytest.raises(ValueError, match=words):
        _native.digest_spans([window], np.array([start], dtype=np.int64), np.array([length], dtype=np.int64), [dtype])


def test_offsets_that_are_not_int64_are_refused():
    with pytest.raises(ValueError, match="contiguous int64"):
        _native.digest_spans([b"abcd"], np.array([0], dtype=np.int32), np.array([4], dtype=np.int64), ["f32"])
