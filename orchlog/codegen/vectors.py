"""Build the conformance vectors in schema/vectors/ from the reference encoding.

The record cases are data, in record_cases.yaml (its head lists what a case
holds); the other files' inputs are the tables below. Tensor data is made by
a fixed splitmix64 stream (not NumPy's generators, whose streams may change
between releases), so the files are reproduced byte for byte on any machine.
Every emitter's tests read these same files.

Everything here follows the schema it is given (the one codegen has just
loaded), never the generated Python tables, which may be a schema behind:
a field added to the schema is in the next vectors, with its example value
in the case that sets every field.
"""

from __future__ import annotations

import functools
import math
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from orchlog import selector
from orchlog.codegen.schema import Schema, SchemaError
from orchlog.emit import knobs
from orchlog.encoding import dtypes, floats
from orchlog.encoding.record import ALL_VALUES, created_from_epoch, encode_header, encode_record, field_default

_MASK = (1 << 64) - 1


class SplitMix64:
    """A tiny, fully specified PRNG: the same numbers in every language and NumPy version."""

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def uniform(self) -> float:
        return (self.next() >> 11) * 2.0**-53

    def activations(self, n: int) -> list[float]:
        """Roughly normal values (sum of four uniforms), like hidden states."""
        return [(sum(self.uniform() for _ in range(4)) - 2.0) * 1.7 for _ in range(n)]


def _f32(values: list[float]) -> bytes:
    return np.asarray(values, dtype="<f4").tobytes()


def _f64(values: list[float]) -> bytes:
    return np.asarray(values, dtype="<f8").tobytes()


def _f16(values: list[float]) -> bytes:
    return np.asarray(values, dtype="<f2").tobytes()


def _bf16(values: list[float]) -> bytes:
    """Round-to-nearest-even f32 -> bf16 (NaN handled by callers with bits)."""
    bits = np.asarray(values, dtype="<f4").view("<u4").astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype("<u2").tobytes()


def _ints(values: list[int], dtype: str) -> bytes:
    return np.asarray(values, dtype=dtypes.storage_dtype(dtype)).tobytes()


Input = dict[str, Any]

CASES_PATH = Path(__file__).with_name("record_cases.yaml")
_FLOATS: dict[str, Callable[[list[float]], bytes]] = {"f32": _f32, "f64": _f64, "f16": _f16, "bf16": _bf16}
_BIT_WIDTHS = {"f32": "<u4", "f64": "<u8", "f16": "<u2", "bf16": "<u2"}
_DATA_FORMS = "a list of numbers, {activations: N} (and seed: S), {bits: [...]} or {ramp: N, modulo: M}"
_NOT_INPUT = ("name", "why", "schema_examples", "data", "checkpoint_hex")


@functools.cache
def _case_file() -> dict[str, Any]:
    doc: dict[str, Any] = _positive_nans(yaml.safe_load(CASES_PATH.read_text(encoding="utf-8")))
    return doc


def _positive_nans(node: Any) -> Any:
    """Every .nan as math.nan, the quiet NaN with its sign bit clear: PyYAML makes it as -inf/inf,
    whose sign bit x86 sets, and the bits of a NaN are part of the vectors."""
    if isinstance(node, float) and math.isnan(node):
        return math.nan
    if isinstance(node, list):
        return [_positive_nans(v) for v in node]
    if isinstance(node, dict):
        return {k: _positive_nans(v) for k, v in node.items()}
    return node


def f32_specials() -> list[int]:
    """The f32 bit patterns every emitter must keep exactly (NaN payloads, ±0, subnormals, extremes)."""
    return list(_case_file()["f32_specials"])


def _record_cases(schema: Schema) -> list[tuple[str, str, Input]]:
    """record_cases.yaml's cases as the encoder's inputs: (name, why, fields); data drawn in file order."""
    doc = _case_file()
    stream = SplitMix64(doc["stream"])
    identity = {f.name: f for f in schema.fields_from("run", "key", "writer", "call")}
    known = {*_NOT_INPUT, "checkpoint", "dtype", "shape", "values", "meta", *identity}
    cases = []
    for case in doc["cases"]:
        name = case.get("name")

        def bad(message: str, name: Any = name) -> SchemaError:
            return SchemaError(f"{CASES_PATH.name}: case {name}: {message}")

        if set(case) - known:
            raise bad(f"unknown keys {sorted(set(case) - known)}; a case has {sorted(known)}")
        missing = {"name", "why", "dtype", "shape", "data"} - set(case)
        if missing or ("checkpoint" in case) == ("checkpoint_hex" in case):
            raise bad(f"needs {sorted(missing) or ''} and one of checkpoint and checkpoint_hex")
        if case["dtype"] not in {d.name for d in schema.dtypes}:
            raise bad(f"dtype {case['dtype']!r} is not one of the schema's {[d.name for d in schema.dtypes]}")
        given: Input = {}
        if case.get("schema_examples"):
            given.update({n: f.example for n, f in identity.items() if n not in case and f.example is not None})
        given.update({k: v for k, v in case.items() if k not in _NOT_INPUT})
        if "checkpoint_hex" in case:
            given["checkpoint"] = bytes.fromhex(case["checkpoint_hex"])
        given["shape"] = tuple(case["shape"])
        if given.get("values") == "all":
            given["values"] = ALL_VALUES
        given["data"] = _case_data(case["data"], case["dtype"], stream, bad)
        size = math.prod(given["shape"]) * dtypes.storage_dtype(case["dtype"]).itemsize
        if len(given["data"]) != size:
            raise bad(f"{len(given['data'])} bytes of data for shape {list(given['shape'])}, not {size}")
        cases.append((name, case["why"], given))
    return cases


def _case_data(spec: Any, dtype: str, stream: SplitMix64, bad: Callable[[str], SchemaError]) -> bytes:
    """A case's `data` as the tensor's bytes (the forms are listed at the top of record_cases.yaml)."""
    if isinstance(spec, list):
        return _numbers(spec, dtype, bad)
    form = set(spec) if isinstance(spec, dict) else None
    if form in ({"activations"}, {"activations", "seed"}):
        rng = SplitMix64(spec["seed"]) if "seed" in spec else stream
        return _numbers(rng.activations(spec["activations"]), dtype, bad)
    if form == {"bits"} and dtype in _BIT_WIDTHS:
        return np.asarray(spec["bits"], dtype=_BIT_WIDTHS[dtype]).tobytes()
    if form == {"ramp", "modulo"}:
        return _numbers([i % spec["modulo"] for i in range(spec["ramp"])], dtype, bad)
    raise bad(f"data is {spec!r}; expected {_DATA_FORMS}")


def _numbers(values: list[Any], dtype: str, bad: Callable[[str], SchemaError]) -> bytes:
    kinds = (int, float) if dtype in _FLOATS else (int,)
    wrong = [v for v in values if isinstance(v, bool) or not isinstance(v, kinds)]
    if wrong:  # YAML reads 1e21 (no dot) as text
        raise bad(f"{wrong[0]!r} is not a {dtype} element")
    return _FLOATS[dtype](values) if dtype in _FLOATS else _ints(values, dtype)


def _record_input_json(schema: Schema, given: Input) -> dict[str, Any]:
    """A case's input as the vector files hold it: every field an emitter is given, defaults filled in."""
    doc: dict[str, Any] = {}
    checkpoint = given["checkpoint"]
    if isinstance(checkpoint, bytes):
        doc["checkpoint_hex"] = checkpoint.hex()
    else:
        doc["checkpoint"] = checkpoint
    for f in schema.fields_from("run", "key", "writer", "call"):
        doc[f.name] = given.get(f.name, field_default(f, schema))
    doc.update(
        dtype=given["dtype"],
        shape=list(given["shape"]),
        values=given.get("values", knobs.default_value(schema.knob("values"))),
        meta={k: _meta_json(v) for k, v in given.get("meta", {}).items()},
        data_hex=given["data"].hex(),
    )
    return doc


def _meta_json(v: Any) -> Any:
    """Meta inputs as JSON: non-finite floats are tagged so they stay floats."""
    if isinstance(v, float) and not math.isfinite(v):
        return {"f64": "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")}
    if isinstance(v, float):
        return {"f64": floats.format_float(v, "f64")}
    return v


def records(schema: Schema, mark: str) -> dict[str, Any]:
    cases = []
    for name, why, given in _record_cases(schema):
        enc = encode_record(given, schema)
        cases.append(
            {
                "name": name,
                "why": why,
                "input": _record_input_json(schema, given),
                "expected": {
                    "blake3": enc.blake3,
                    "jsonl": enc.jsonl.decode("utf-8").rstrip("\n"),
                    "frame_hex": enc.frame.hex(),
                },
            }
        )
    return {
        "$comment": mark,
        "_comment": (
            "Each case is one record: `input` is what an emitter is given (data_hex: the raw little-endian "
            "tensor bytes; values: how many leading values to keep, -1 for all; meta floats are tagged "
            '{"f64": text} so that integral floats and non-finite values keep their type; checkpoint_hex, '
            "where present, is a byte-string name that is not valid UTF-8, for emitters that take bytes). "
            "`expected` holds the exact JSONL line (without its newline), the exact msgpack frame and the "
            "BLAKE3 of the data. Tensor data comes from a splitmix64 stream (orchlog/codegen/vectors.py) "
            "shaped like activations; special values are given as bit patterns."
        ),
        "schema_version": schema.version,
        "cases": cases,
    }


def _header_settings(schema: Schema) -> list[Any]:
    """The header's settings an emitter is given, those without a default first (as HeaderInput has them)."""
    fields = [f for f in schema.header if f.source == "setting" and f.type != "meta"]
    return sorted(fields, key=lambda f: f.nullable or schema.knob(f.name).default is not None)


def _header_input(schema: Schema, **given: Any) -> dict[str, Any]:
    doc = {"language": given["language"]}
    for f in _header_settings(schema):
        doc[f.name] = given.get(f.name, None if f.nullable else knobs.default_value(schema.knob(f.name)))
    doc["config"] = given.get("config", {})
    return doc


def headers(schema: Schema, mark: str) -> dict[str, Any]:
    inputs = [
        ("minimal", _header_input(schema, language="cpp", created="2026-01-02T03:04:05Z")),
        (
            "full",
            _header_input(
                schema,
                language="rust",
                created="1970-01-01T00:00:00Z",
                team="worker-orcd",
                model="qwen2.5-0.5b-f16.gguf",
                git_commit="abc123def",
                rank=3,
                world_size=4,
                values=ALL_VALUES,
                select="layer=0-3,token=5",
                config={"dtype": "bf16", "prompt_len": 512, "kv_aligned": True, "temp": 0.5},
            ),
        ),
        (
            "unicode",
            _header_input(
                schema, language="python", created="2026-11-21T00:00:00Z", team="équipe ✓", model="模型", values=0
            ),
        ),
    ]
    cases = []
    for name, h in inputs:
        line, frame = encode_header(h, schema)
        doc = {**h, "config": {k: _meta_json(v) for k, v in h["config"].items()}}
        cases.append(
            {"name": name, "input": doc, "expected": {"jsonl": line.decode().rstrip("\n"), "frame_hex": frame.hex()}}
        )
    return {
        "$comment": mark,
        "_comment": (
            "Run headers: `input` holds what the emitter knows at start-up; `expected` the exact first line / first "
            "frame. `created_from_source_date_epoch`: the header's `created` for a SOURCE_DATE_EPOCH value, null "
            "where it must be the current time, and whether the value is malformed (one warning)."
        ),
        "created_from_source_date_epoch": [_created_case(schema, raw) for raw in SOURCE_DATE_EPOCHS],
        "cases": cases,
    }


# ASCII digits only, surrounding spaces and tabs ignored, at most the last second of year 9999.
SOURCE_DATE_EPOCHS = [
    "0",
    "1767323045",
    " 1767323045\t",
    "253402300799",
    "",
    "253402300800",
    "-1",
    "+5",
    "1e9",
    "soon",
    "\u0661\u0662",
    "\u00a01767323045",
    "1767323045\n",
]


def _created_case(schema: Schema, raw: str) -> dict[str, Any]:
    parsed = knobs.parse(schema.knob("created"), raw)
    created = None if parsed.value is None else created_from_epoch(parsed.value)
    return {"SOURCE_DATE_EPOCH": raw, "created": created, "warning": parsed.warning is not None}


def _float_cases() -> dict[str, list[list[str]]]:
    rng = SplitMix64(0xF10A7)
    f32_bits = (
        f32_specials()
        + [
            0x3F800000,
            0xBF800000,
            0x4B800000,
            0x4B7FFFFF,
            0x3E99999A,
            0x5F800000,
            0x1E3CE508,
            0x358637BD,
            0x3727C5AC,
            0x49742400,
            0x60AD78EC,
            0x60AD78EB,
            0x4E6E6B28,
            0x2EDBE6FF,
        ]
        + [rng.next() & 0xFFFFFFFF for _ in range(200)]
    )
    f64_bits = [
        0x7FF8000000000000,
        0xFFF0000000000000,
        0x8000000000000000,
        0x0000000000000001,
        0x7FEFFFFFFFFFFFFF,
        0x3FF0000000000000,
        0x444B1AE4D6E2EF50,
        0x4415AF1D78B58C40,
        0x3E7AD7F29ABCAF48,
        0x3EB0C6F7A0B5ED8D,
        0x3FB999999999999A,
        0x3FD5555555555555,
        0x44B52D02C7E14AF6,
        0x3CD203AF9EE75616,
    ] + [rng.next() for _ in range(200)]
    f16_bits = [0x7E00, 0x7C00, 0xFC00, 0x8000, 0x7BFF, 0x0001, 0x03FF, 0x0400, 0x3C00, 0x3555, 0x2E66] + [
        rng.next() & 0xFFFF for _ in range(100)
    ]
    bf16_bits = [0x7FC0, 0x7F80, 0xFF80, 0x8000, 0x7F7F, 0x0001, 0x3F80, 0x3DCD] + [
        rng.next() & 0xFFFF for _ in range(100)
    ]

    def fmt32(bits: int) -> str:
        return floats.format_float(struct.unpack("<f", struct.pack("<I", bits))[0], "f32")

    def fmt64(bits: int) -> str:
        return floats.format_float(struct.unpack("<d", struct.pack("<Q", bits))[0], "f64")

    def fmt_half(bits: int, dtype: str) -> str:
        return floats.format_float(
            float(dtypes.widen(np.asarray([bits], dtype="<u2").view("<f2" if dtype == "f16" else "<u2"), dtype)[0]),
            "f32",
        )

    return {
        "f32": [[f"{b:08x}", fmt32(b)] for b in f32_bits],
        "f64": [[f"{b:016x}", fmt64(b)] for b in f64_bits],
        "f16": [[f"{b:04x}", fmt_half(b, "f16")] for b in f16_bits],
        "bf16": [[f"{b:04x}", fmt_half(b, "bf16")] for b in bf16_bits],
    }


def floats_doc(schema: Schema, mark: str) -> dict[str, Any]:
    return {
        "$comment": mark,
        "_comment": (
            "Canonical number text: for each dtype, pairs of [bit pattern in hex, exact JSON token]. The token is "
            "ECMAScript Number::toString of the shortest round-trip digits in f32 (f32, f16, bf16 widened "
            'exactly) or f64, with -0.0 for negative zero and the strings "NaN", "Infinity", "-Infinity". '
            "Random patterns come from splitmix64 seeded 0xF10A7."
        ),
        **_float_cases(),
    }


def selector_doc(schema: Schema, mark: str) -> dict[str, Any]:
    keys: list[dict[str, Any]] = [
        {"checkpoint": "attn_norm", "layer": 0, "token_idx": 5, "step": 0, "rank": 0, "stage": None},
        {"checkpoint": "attn_norm", "layer": 3, "token_idx": 5, "step": 1, "rank": 1, "stage": "mul_mat"},
        {"checkpoint": "attn_out", "layer": 4, "token_idx": 6, "step": 0, "rank": 0, "stage": "rope"},
        {"checkpoint": "logits", "layer": None, "token_idx": 5, "step": 2, "rank": 0, "stage": None},
        {"checkpoint": "ffn_out", "layer": 12, "token_idx": None, "step": None, "rank": 3, "stage": None},
        {"checkpoint": "注意力", "layer": 1, "token_idx": 0, "step": 0, "rank": 0, "stage": "ü"},
    ]
    texts = [
        "",
        "layer=0-3",
        "layer=3",
        "layer=4-",
        "layer=0,layer=12",
        "token=5",
        "token=5,checkpoint=attn_*",
        "checkpoint=attn_*",
        "checkpoint=*_out",
        "checkpoint=logit?",
        "checkpoint=??",
        "stage=rope",
        "stage=?",
        "step=0",
        "rank=1-3",
        " layer = 0-3 , step = 0 ",
        "layer=0-3,token=5,checkpoint=attn_*,step=0",
        "checkpoint=*",
        "checkpoint=attn_norm,checkpoint=logits",
        # Only spaces and tabs are whitespace: any other character, U+00A0 or \x1c (which Python's
        # str.strip would drop) or a newline, is part of the glob and matches nothing here.
        "\tlayer=0-3 ,\tstep=0\t",
        "checkpoint=attn_norm\u00a0",
        "checkpoint=\u3000attn_*",
        "checkpoint=attn_norm\x1c",
        "checkpoint=attn_norm\n",
        "\t",
    ]
    valid = []
    for text in texts:
        sel = selector.parse(text, schema)
        valid.append({"selector": text, "matches": [True if sel is None else sel.matches(k) for k in keys]})
    invalid = [
        "layer",
        "layer=",
        "layer=a",
        "layer=3-1",
        "layer=-1",
        "layer=1-2-3",
        "colour=red",
        "=3",
        "token=5,",
        "layer=0x3",
        "checkpoint=",
        # Digits are ASCII 0-9 (not Arabic-Indic or fullwidth ones, which Python's \d takes), no sign;
        # whitespace is space and tab only.
        "layer=\u0663",
        "layer=\uff13",
        "layer=1-\u0663",
        "layer=+3",
        "token=5\u00a0",
        "layer\u3000=3",
        "layer=3\n",
        "step=\u00a00",
        "\u00a0",
    ]
    for text in invalid:
        try:
            selector.parse(text, schema)
        except selector.SelectorError:
            continue
        raise AssertionError(f"selector {text!r} should be invalid")
    return {
        "$comment": mark,
        "_comment": (
            "Selector semantics: each valid selector lists, for each record key in `keys`, whether it matches. "
            "An empty selector (or one of spaces and tabs only) selects everything. Each invalid selector must be "
            "rejected (logging off, one warning, counted as an error). Digits are ASCII 0-9; the whitespace ignored "
            "around clauses, keys and specs is space and tab only."
        ),
        "keys": keys,
        "valid": valid,
        "invalid": invalid,
    }


# Raw values each knob of a type is tried with (None: unset); an enum's come from its choices.
KNOB_CASES: dict[str, list[str | None]] = {
    "count_or_all": [
        None,
        "",
        "10",
        "0",
        "3",
        "all",
        " 7 ",
        "-3",
        "abc",
        "ALL",
        "1e3",
        "99999999999",
        "\t7\t",
        "+7",
        "\u0663",
        "\uff17",
        "\u00a07",
        "7\n",
    ],
    "int": [None, "0", "1", "7", "-1", "x", " 3\t", "\uff13", "+3"],
    "bool": [None, "0", "1", " 1\t", "true", "2", "\uff11"],
}


def _enum_cases(choices: tuple[str, ...]) -> list[str | None]:
    """Each choice, one in capitals, a stranger, one between spaces and tabs and one before U+3000."""
    return [None, *choices, choices[1].upper(), "binary", f"\t{choices[-1]} ", f"{choices[1]}\u3000"]


def env_doc(schema: Schema, mark: str) -> dict[str, Any]:
    paths = [
        ("trace.jsonl", 0, 1234),
        ("trace-{rank}.jsonl", 3, 1234),
        ("/tmp/{pid}/r{rank}-{rank}.bin", 2, 99),
        ("{rank", 1, 5),
        ("{RANK}-{Pid}", 1, 5),
        ("ünï-{rank}", 0, 7),
    ]
    cases = []
    for k in schema.env:
        for raw in _enum_cases(k.choices) if k.type == "enum" else KNOB_CASES.get(k.type, ()):
            p = knobs.parse(k, raw)
            cases.append({"knob": k.name, "raw": raw, "value": p.value, "warning": p.warning})
    return {
        "$comment": mark,
        "_comment": (
            "Env knob parsing. `paths`: ORCH_LOG_FILE templates with rank and pid, and the path to open "
            "(only `{rank}` and `{pid}` are replaced). `knobs`: a raw value (null: unset) and the value an "
            "emitter must use, and the warning it must print (once, counted as an error; null: none) because "
            "the value was malformed. Numbers are ASCII digits 0-9 without a sign; only spaces and tabs around a "
            "value are ignored. `defaults`: each knob's default."
        ),
        "both_mode_suffix": schema.encodings["msgpack"]["both_mode_suffix"],
        "defaults": {k.name: k.default for k in schema.env if k.default is not None},
        "paths": [{"template": t, "rank": r, "pid": p, "path": knobs.expand_path(t, r, p)} for t, r, p in paths],
        "knobs": cases,
    }


FILES: dict[str, Callable[[Schema, str], dict[str, Any]]] = {
    "records.json": records,
    "headers.json": headers,
    "floats.json": floats_doc,
    "selector.json": selector_doc,
    "env.json": env_doc,
}
