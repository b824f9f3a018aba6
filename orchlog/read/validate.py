"""`orchlog validate TRACE` as a value: schema checks on every record, and hashes where the data is there.

Works on TraceRecords, so every format is checked the same way. The
orchlog formats (JSONL, binary stream, Parquet) must follow the schema
to the letter (header, seq counter, stats); the legacy formats get the
checks that make sense without a schema (dtype, shape against element
count, hash syntax, values against element count). `verify_hashes`
recomputes BLAKE3 over each record's data: the stored bytes when the
format has them, or the values when a record carries every one of them.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable
from typing import Any

import blake3 as _blake3
import numpy as np

from orchlog.encoding import dtypes as _dtypes
from orchlog.read import fields
from orchlog.read.trace import Trace, TraceRecord
from orchlog.read.validate_batch import F64_EPS, previous_seqs, suspect_rows
from orchlog.read.verify_batch import hash_verdicts
from orchlog.records import record
from orchlog.schema_gen import DTYPE_SIZES, SCHEMA_VERSION

# The JSON form's name and version (`orchlog validate --format json`; schema/json/validate.schema.json).
VALIDATE_VERSION = "orchlog-validate/1"

_HEX64 = re.compile(r"^[0-9a-f]{64}$")


@record(frozen=True)
class Problem:
    location: str
    message: str

    def __str__(self) -> str:
        return f"{self.location}: {self.message}"


@record
class ValidationReport:
    path: str
    format: str
    records: int
    hashes_checked: int
    hashes_requested: bool
    problems: list[Problem]
    writing: list[tuple[str, int]] = dataclasses.field(default_factory=list)  # (file, pid): still being written

    def __bool__(self) -> bool:
        return not self.problems

    @property
    def exit_code(self) -> int:
        return 0 if self else 1

    def __str__(self) -> str:
        hashes = (
            f"{self.hashes_checked} hashes verified"
            if self.hashes_requested
            else "hashes not verified (add --verify-hashes)"
        )
        head = f"{self.path} [{self.format}]: {self.records} records, {hashes}"
        notes = [
            f"note: still being written: {path} (process {pid} holds its lock); checked is the part written so far"
            for path, pid in self.writing
        ]
        if not self.problems:
            return "\n".join([head, *notes, "valid"]) + "\n"
        lines = [head, *notes, f"{len(self.problems)} problems:"] + [f"  {p}" for p in self.problems]
        return "\n".join(lines) + "\n"

    def to_json(self) -> dict[str, Any]:
        return {
            "report": VALIDATE_VERSION,
            "path": self.path,
            "format": self.format,
            "valid": not self.problems,
            "records": self.records,
            "hashes_checked": self.hashes_checked,
            "problems": [dataclasses.asdict(p) for p in self.problems],
            "writing": [{"path": path, "pid": pid} for path, pid in self.writing],
        }


def _is_orchlog(fmt: str) -> bool:
    return all(part.startswith("orchlog") for part in fmt.split("+"))


def _check_header(trace: Trace, problems: list[Problem]) -> None:
    if not trace.headers:
        problems.append(Problem(trace.path, "no run header (an orchlog file starts with one)"))
    for h in trace.headers:
        version = h.get("orchlog")
        if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version <= SCHEMA_VERSION:
            problems.append(
                Problem(trace.path, f"header says schema {version!r}; this orchlog reads 1 to {SCHEMA_VERSION}")
            )
        if not isinstance(h.get("producer"), dict):
            problems.append(Problem(trace.path, "header has no producer"))


def _check_stats(rec: TraceRecord, out: list[str]) -> None:
    s = rec.stats
    if s is None:
        out.append("no stats")
        return
    counted = s.nan_count + s.inf_count
    if rec.numel is not None and counted > rec.numel:
        out.append(f"stats count {counted} NaN/Inf in {rec.numel} elements")
    finite = None if rec.numel is None else rec.numel - counted
    fields = (s.min, s.max, s.mean, s.rms, s.abs_max)
    if finite == 0 and any(v is not None for v in fields):
        out.append("stats must be null when no element is finite")
    elif finite and any(v is None for v in fields):
        out.append("stats are null but some elements are finite")
    elif finite:
        assert s.min is not None and s.max is not None and s.mean is not None and s.rms is not None, "checked above"
        assert s.abs_max is not None, "all present: checked above"
        if not (math.isfinite(s.min) and math.isfinite(s.max) and math.isfinite(s.abs_max)):
            out.append(
                f"stats min {s.min}, max {s.max}, abs_max {s.abs_max}: not all finite, though over finite elements"
            )
        if s.min > s.max:
            out.append(f"stats min {s.min} > max {s.max}")
        if s.abs_max != max(abs(s.min), abs(s.max)):
            out.append(f"stats abs_max {s.abs_max} is not max(|min|, |max|)")
        if not s.rms >= 0:
            out.append(f"stats rms {s.rms} is negative")
        # The mean and rms are sums over up to numel elements, rounded at each step: allow what
        # that rounding can move them (a mean of ten 0.1s is not exactly 0.1).
        # In Python floats: a damaged record's infinite bounds then make NaN quietly (the check fails),
        # where NumPy scalars would print "invalid value encountered" on stderr.
        low, high, mean, rms = float(s.min), float(s.max), float(s.mean), float(s.rms)
        slack = 4 * F64_EPS * max(finite, 1) * float(s.abs_max)
        if not low - slack <= mean <= high + slack or not abs(mean) <= rms + slack:
            out.append(f"stats mean {s.mean} is outside [min, max] or above rms {s.rms}")
    if rec.values is not None and len(rec.values):
        values = rec.values
        finite_values = values[np.isfinite(values)]
        bounded = s.min is not None and s.max is not None
        if len(finite_values) and bounded and (finite_values.min() < s.min or finite_values.max() > s.max):
            out.append("leading values lie outside the stats' [min, max]")
        if int(np.isnan(values).sum()) > s.nan_count or int(np.isinf(values).sum()) > s.inf_count:
            out.append("leading values hold more NaN or Inf than the stats count")


def check_record(rec: TraceRecord, strict: bool, expected_values: int | None) -> list[str]:
    """What is wrong with one record (empty when nothing is)."""
    out = []
    for field in ("token_idx", "layer", "step", "seq"):
        v = getattr(rec, field)
        if v is not None and v < 0:
            out.append(f"{field} {v} is negative")
    if not 0 <= rec.rank < max(rec.world_size, 1) or rec.world_size < 1:
        out.append(f"rank {rec.rank} is outside world_size {rec.world_size}")
    if rec.dtype is not None and rec.dtype not in DTYPE_SIZES:
        out.append(f"unknown dtype {rec.dtype!r}")
    if rec.shape is not None:
        if any(d < 0 for d in rec.shape):
            out.append(f"shape {list(rec.shape)} has a negative dimension")
        elif rec.numel is not None and math.prod(rec.shape) != rec.numel:
            out.append(f"numel {rec.numel} is not the product of shape {list(rec.shape)}")
    n_values = 0 if rec.values is None else len(rec.values)
    if rec.numel is not None and n_values > rec.numel:
        out.append(f"{n_values} values for {rec.numel} elements")
    if expected_values is not None and rec.numel is not None:
        # A record written whole (its full_reason says why) keeps every value whatever the header's count.
        whole = expected_values < 0 or getattr(rec, "full_reason", None) is not None
        want = rec.numel if whole else min(expected_values, rec.numel)
        if n_values != want:
            out.append(f"{n_values} leading values, the header says {want}")
    if rec.blake3 is not None and not _HEX64.match(rec.blake3):
        out.append(f"blake3 {rec.blake3[:16]!r}... is not 64 lowercase hex digits")
    if strict:
        if rec.blake3 is None:
            out.append("no blake3")
        if rec.seq is None:
            out.append("no seq")
        _check_stats(rec, out)
    return out


def _bytes_from_values(rec: TraceRecord) -> bytes | None:
    """The tensor's bytes rebuilt from values that are all there, when that is exact."""
    if rec.values is None or rec.numel is None or len(rec.values) != rec.numel or rec.dtype not in DTYPE_SIZES:
        return None
    if not _dtypes.exact_in_f64(rec.values, rec.dtype).all():
        return None
    return _dtypes.from_f64(rec.values, rec.dtype).tobytes()


def _verify(rec: TraceRecord) -> tuple[bool, list[str]]:
    """(whether a hash was checked, problems): the frame's checksum when it has one, then BLAKE3, the
    leading values and the stats, each recomputed from the tensor's bytes."""
    out = []
    if rec.frame_check is not None:
        try:
            problem = rec.frame_check()
        except OSError as exc:
            problem = f"frame unreadable ({exc})"
        if problem:
            out.append(problem)
    try:
        raw = rec.raw_bytes() if rec.has_data else _bytes_from_values(rec)
    except OSError as exc:
        return False, out + [f"tensor unreadable ({exc})"]
    if raw is None:
        return False, out
    raw = memoryview(raw).cast("B")
    fits = fields.data_fits(raw.nbytes, rec.dtype, rec.numel, rec.shape)
    if rec.dtype in DTYPE_SIZES and rec.numel is not None and raw.nbytes != rec.numel * DTYPE_SIZES[rec.dtype]:
        out.append(f"{raw.nbytes} data bytes for {rec.numel} elements of {rec.dtype}")
    if rec.blake3 is None:
        return False, out + ["data but no blake3 to check it against"]
    if fits and rec.dtype is not None:  # data_fits holds only for a known dtype
        stats, sketch, digest = _digest(raw, rec.dtype)
    else:
        stats, sketch, digest = None, None, _blake3.blake3(raw).hexdigest()
    if digest != rec.blake3:
        out.append(f"blake3 of the data is {digest[:16]}..., the record says {rec.blake3[:16]}...")
    if rec.has_data and rec.values is not None and len(rec.values) and rec.dtype in DTYPE_SIZES and not out:
        head = _dtypes.to_f64(_dtypes.from_bytes(raw, rec.dtype)[: len(rec.values)], rec.dtype)
        if not np.array_equal(head, rec.values, equal_nan=True):
            out.append("leading values differ from the data")
    if stats is not None and rec.stats is not None:
        differ = [name for name, got in zip(_STAT_NAMES, stats) if not _same(got, getattr(rec.stats, name))]
        if differ:
            shown = ", ".join(
                f"{n} {getattr(rec.stats, n)!r} (the data gives {stats[_STAT_NAMES.index(n)]!r})" for n in differ
            )
            out.append(f"stats differ from the data: {shown}")
    if sketch is not None and rec.sketch is not None and not out:
        rows = np.asarray(rec.sketch, dtype=np.float64)  # f32 rows, as every reader gives them
        if rows.shape != sketch.shape or not np.array_equal(rows, sketch):
            changed = int(np.count_nonzero(rows != sketch)) if rows.shape == sketch.shape else len(rows)
            out.append(f"sketch differs from the data ({changed} of {len(sketch)} rows)")
    return True, out


_STAT_NAMES = ("min", "max", "mean", "rms", "abs_max", "nan_count", "inf_count")


def _digest(raw: memoryview, dtype: str) -> tuple[tuple[Any, ...], np.ndarray, str]:
    """The canonical stats, sketch (f32 rows as f64) and BLAKE3 of a tensor's bytes, by the emitters' own
    C++ core (FORMAT.md, Stats and Sketch)."""
    from orchlog import _native

    flat = np.frombuffer(raw, dtype=_dtypes.storage_dtype(dtype))
    digest = _native.DigestedTensor(flat, dtype).digest()
    sketch = np.asarray(digest["sketch"], dtype=np.float32).astype(np.float64)
    return tuple(digest["stats"]), sketch, str(digest["blake3"])


def _same(a: Any, b: Any) -> bool:
    """Stats agree when both are null or both the same number (NaN never is one: the rule excludes it)."""
    if a is None or b is None:
        return a is None and b is None
    return bool(a == b)


def validate(
    trace: Trace, verify_hashes: bool = False, progress: Callable[[float], None] | None = None
) -> ValidationReport:
    problems: list[Problem] = []
    strict = _is_orchlog(trace.format)
    records = checked = 0
    last_seq: dict[str, int] = {}

    def expected_values() -> int | None:  # the headers read so far: a second header makes it unknown
        expected = trace.headers[0].get("values") if strict and len(trace.headers) == 1 else None
        return expected if isinstance(expected, int) else None

    def check(rec: TraceRecord, prev: int | None) -> None:
        """Record `rec`'s problems; `prev`: the seq it must follow when known already, else from last_seq."""
        nonlocal checked
        where = str(rec.location) if rec.location else trace.path
        found = check_record(rec, strict, expected_values())
        if strict and rec.seq is not None and rec.location is not None:
            if prev is None:
                prev = last_seq.get(rec.location.path, -1)
                last_seq[rec.location.path] = rec.seq
            if rec.seq != prev + 1:
                found.append(f"seq {rec.seq} follows {prev} (records are missing or out of order)")
        if verify_hashes:
            did, more = _verify(rec)
            checked += did
            found += more
        problems.extend(Problem(where, m) for m in found)

    framed = trace.format == "orchlog-binary"  # every row is a frame with a checksum to verify
    for run in trace.runs(tensors=verify_hashes):
        if isinstance(run, TraceRecord):
            records += 1
            if progress and records % 1024 == 0:  # formats read record by record report as they go
                progress(trace.progress())
            check(run, None)
            continue
        records += len(run)
        suspects = suspect_rows(run, strict, expected_values())
        if strict:
            has, prev = previous_seqs(run, last_seq)
            suspects |= has & (run.seq != prev + 1)
        if verify_hashes:  # rows whose hashes the batch found right need no record; the rest are made and checked
            unsure, sound = hash_verdicts(run, framed)
            suspects |= unsure
            checked += int(np.count_nonzero(sound & ~suspects))
        for i in np.flatnonzero(suspects).tolist():
            check(run.record(i), int(prev[i]) if strict and has[i] else None)
        if progress:
            progress(trace.progress())
    if strict:
        _check_header(trace, problems)
    problems = [Problem(str(d.location), d.message) for d in trace.diagnostics] + problems
    return ValidationReport(trace.path, trace.format, records, checked, verify_hashes, problems, trace.writing)
