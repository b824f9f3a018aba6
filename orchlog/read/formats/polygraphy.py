"""Polygraphy's RunResults JSON (`polygraphy run --save-outputs`) and its inputs JSON (`--save-inputs`).

    {"lst": [[runner_name, [{"outputs": {NAME: {"values": {"array": "<base64 of np.save>",
                                                           "polygraphy_class": "ndarray"},
                                                "polygraphy_class": "LazyArray"}},
                             "runtime": 0.01, "runner_name": "...", "polygraphy_class": "IterationResult"},
                            ...]]],
     "polygraphy_class": "RunResults"}

Each output of each iteration is a record: checkpoint = the output's name,
step = the iteration, the runner in the record's meta (`runner`). A file
of several runners is several traces in one: orchlog reads the first and
reports the others as left out (save each runner's outputs to its own file,
or compare the file with itself through Polygraphy). The arrays are the whole
file's bulk, so the JSON is read with its long strings left on disk
(orchlog.read.json_spans) and each array is decoded only when compared:
base64 (or, in files of old Polygraphy versions, latin-1 text) of an
`np.save` file, loaded with `allow_pickle=False`. Legacy markers
(`"__polygraphy_encoded_ndarray": "polygraphy_serialized_json_type"`) are
read like the current ones; any other `polygraphy_class` (a torch Tensor,
which is a pickle) is refused.
"""

from __future__ import annotations

import base64
import binascii
import io
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from orchlog import bus_error
from orchlog.read.formats import is_gzip, open_binary, register_records
from orchlog.read.formats.tool_common import ArrayLoader, layer_of, open_file, tool_header
from orchlog.read.json_spans import JSONSpanError, Span, parse
from orchlog.read.trace import Location, Trace, TraceRecord
from orchlog.schema_gen import DTYPE_SIZES

CLASS = "polygraphy_class"
LEGACY_PREFIX = "__polygraphy_encoded_"
LEGACY_MARKER = "polygraphy_serialized_json_type"
KNOWN = ("ndarray", "LazyArray", "LazyNumpyArray", "IterationResult", "RunResults")
# numpy's dtypes -> orchlog's (bool as u8; others are converted to f64 when loaded)
NUMPY_DTYPES = {
    "float32": "f32", "float64": "f64", "float16": "f16", "int8": "i8", "uint8": "u8", "bool": "u8",
    "int32": "i32", "int64": "i64",
}  # fmt: skip
NPY_MAGIC_B64 = b"k05VTVBZ"  # base64 of "\x93NUMPY"
_SNIFF = re.compile(rb'"(?:polygraphy_class|__polygraphy_encoded_\w+)"\s*:|"array"\s*:\s*"k05VTVBZ')
MAX_ARRAY_HEADER = 1 << 16


def _sniff(path: Path, head: bytes) -> bool:
    body = head.lstrip()
    return body[:1] in (b"{", b"[") and _SNIFF.search(head) is not None


def _class_of(d: dict[str, Any]) -> str | None:
    """The Polygraphy class a dict encodes (current or legacy marker), None for a plain dict."""
    cls = d.get(CLASS)
    if isinstance(cls, str):
        return cls
    for key, value in d.items():
        if isinstance(key, str) and key.startswith(LEGACY_PREFIX) and value == LEGACY_MARKER:
            return key[len(LEGACY_PREFIX) :]
    return None


class Refused(ValueError):
    pass


def _array(d: Any) -> Any:
    """The ndarray dict inside a LazyArray (or the ndarray dict itself)."""
    if not isinstance(d, dict):
        raise ValueError("an output is not an encoded array")
    cls = _class_of(d)
    if cls in ("LazyArray", "LazyNumpyArray"):
        return _array(d.get("values"))
    if cls not in (None, "ndarray"):
        raise Refused(f"an output of class {str(cls)[:40]!r}, which orchlog does not read (only ndarray, LazyArray)")
    if "array" not in d:
        raise ValueError("an encoded array without its data")
    return d["array"]


def _npy_bytes(value: Any) -> bytes:
    """The np.save bytes of an encoded array: base64, or the older latin-1 text."""
    raw = (
        value.bytes_ascii()
        if isinstance(value, Span)
        else value.encode("utf-8", "replace")
        if isinstance(value, str)
        else None
    )
    if raw is None:
        raise ValueError("an array's data is not a string")
    try:
        return base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        text = value.text() if isinstance(value, Span) else value
        try:
            return text.encode("latin-1")
        except UnicodeEncodeError:
            raise ValueError("an array's data is neither base64 nor latin-1 text") from None


def _npy_header(data: bytes) -> tuple[np.dtype[Any], tuple[int, ...], bool, int]:
    """(dtype, shape, fortran order, where the array's bytes start) from an .npy header, read by NumPy's
    own header parser without loading the array."""
    f = io.BytesIO(data[: MAX_ARRAY_HEADER + 16])
    try:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f, max_header_size=MAX_ARRAY_HEADER)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f, max_header_size=MAX_ARRAY_HEADER)
        else:
            raise ValueError(f"an .npy version {version} array")
    except Exception as exc:  # NumPy parses the header text with Python's tokenizer: any of its errors
        raise ValueError(f"not an .npy header ({type(exc).__name__}: {str(exc)[:80]})") from None
    if dtype.hasobject:
        raise Refused("an array of Python objects (a pickle); not read")
    if len(shape) > 64 or any(d < 0 for d in shape):
        raise ValueError(f"an array of shape {shape!r:.80}")
    return dtype, tuple(int(d) for d in shape), bool(fortran), f.tell()


def _load(value: Any) -> np.ndarray:
    """The array, from exactly the bytes its header declares: nothing larger than the blob is allocated."""
    data = _npy_bytes(value)
    dtype, shape, fortran, start = _npy_header(data)
    need = math.prod(shape) * dtype.itemsize
    if len(data) - start != need:
        raise ValueError(f"the array's header declares {need} bytes, its data holds {len(data) - start}")
    arr = np.frombuffer(data, dtype=dtype, offset=start).reshape(shape, order="F" if fortran else "C")
    out = (
        arr.astype(np.float64) if NUMPY_DTYPES.get(arr.dtype.name) is None else arr.astype(arr.dtype.newbyteorder("<"))
    )
    return np.ascontiguousarray(out.astype(np.uint8) if arr.dtype == np.bool_ else out)


def _head_bytes(value: Any) -> bytes:
    """The first bytes of an encoded array, enough for its .npy header, without decoding all of it."""
    if isinstance(value, Span) and not value.escaped:
        prefix = Span(value.buf, value.start, min(value.end, value.start + (MAX_ARRAY_HEADER + 16) // 3 * 4), False)
        try:
            return base64.b64decode(prefix.bytes_ascii(), validate=True)
        except (binascii.Error, ValueError):
            pass
    return _npy_bytes(value)


def _record(name: str, value: Any, where: Location, **keys: Any) -> TraceRecord:
    np_dtype, shape, _, _ = _npy_header(_head_bytes(value))
    dtype = NUMPY_DTYPES.get(np_dtype.name, "f64")
    numel = math.prod(shape)

    return TraceRecord(
        checkpoint=name,
        # ONNX value names carry the module's scope: /model/layers.1/mlp/down_proj/MatMul_output_0 is in layer 1
        layer=layer_of(name.replace("/", ".").strip(".")),
        dtype=dtype,
        shape=shape,
        numel=numel,
        location=where,
        loader=ArrayLoader(lambda: _load(value), numel * DTYPE_SIZES[dtype]),
        **keys,
    )


def _document(trace: Trace) -> Any:
    path = Path(trace.path)
    if is_gzip(path):  # a gzipped file is read into memory: there is no file to leave the strings in
        with open_binary(path) as f:
            buf: Any = f.read()
    else:
        with open_file(path) as f:
            buf = bus_error.map_whole(f) if (trace.size or 0) > 0 else b""
    return parse(buf)


def _iterations(trace: Trace, doc: Any, where: Location) -> Iterator[tuple[str | None, int, dict[str, Any]]]:
    """(runner, iteration, {name: encoded array}) of a RunResults or an inputs list."""
    if isinstance(doc, list):  # --save-inputs: one {name: array} per iteration
        for k, item in enumerate(doc):
            if isinstance(item, dict):
                yield None, k, item
        return
    cls = _class_of(doc) if isinstance(doc, dict) else None
    if cls != "RunResults":
        raise Refused(f"a JSON document of class {str(cls)[:40]!r}, not RunResults")
    runners = doc.get("lst")
    if not isinstance(runners, list):
        raise ValueError("RunResults without its list of runners")
    for r, entry in enumerate(runners):
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], list)):
            trace.report(where, f"runner {r} is not [name, iterations]; skipped")
            continue
        runner = entry[0] if isinstance(entry[0], str) else f"runner{r}"
        if r > 0:
            trace.report(
                where,
                f"runner {runner!r} left out: this file holds several runners; orchlog reads the first ({_first(runners)!r})",
            )
            continue
        for k, it in enumerate(entry[1]):
            if not isinstance(it, dict) or _class_of(it) not in ("IterationResult", None):
                trace.report(where, f"iteration {k} of {runner!r} is not an IterationResult; skipped")
                continue
            outputs = it.get("outputs")
            if isinstance(outputs, dict):
                yield runner, k, outputs


def _first(runners: list[Any]) -> str:
    first = runners[0] if runners else None
    return first[0] if isinstance(first, list) and first and isinstance(first[0], str) else "runner0"


def _records(trace: Trace) -> Iterator[TraceRecord]:
    where = Location(trace.path)
    try:
        doc = _document(trace)
    except (JSONSpanError, ValueError, OSError) as exc:
        trace.report(where, f"not read: {exc}", fatal=True)
        return
    trace.bytes_read = trace.size or 0
    try:
        iterations = list(_iterations(trace, doc, where))
    except (Refused, ValueError) as exc:
        trace.report(where, f"not read: {exc}", fatal=True)
        return
    inputs = isinstance(doc, list)
    runner = next((r for r, _, _ in iterations if r), None)
    trace.headers.append(
        tool_header(
            "polygraphy",
            "full input arrays, per iteration" if inputs else "full output arrays of one runner, per iteration",
            runner=runner,
        )
    )
    for runner_name, step, arrays in iterations:
        for name, encoded in arrays.items():
            if name == CLASS or (isinstance(name, str) and name.startswith(LEGACY_PREFIX)):
                continue
            try:
                yield _record(
                    str(name),
                    _array(encoded),
                    where,
                    step=step,
                    stage="input" if inputs else None,
                    meta={"runner": runner_name} if runner_name else {},
                )
            except (Refused, ValueError, TypeError, JSONSpanError) as exc:
                trace.report(where, f"{str(name)[:80]!r} of iteration {step}: {exc}; skipped")


register_records("polygraphy", _sniff, _records, priority=24)
