"""Every emitter grafts the cross-language tensors to the very bytes the reference encoder gives.

A reference run (full mode, written by the reference encoder) holds other
values for the tensors of tensors.json, some in another float dtype; a
grafting run calls graft for most of them. What each emitter must write
follows from the rules of docs/cpp.md "Grafting", computed here with NumPy:
selected by ORCH_GRAFT_SELECT, matched by key and occurrence, the same shape,
floats converted with round-to-nearest-even (f64 to f16 or bf16 through f32,
as the C++ logger does), integers only from their own dtype; anything else is
left alone, with one warning per kind and an error counted (so every producer
exits 1).
"""

from __future__ import annotations

import copy
import json
from collections import Counter

import numpy as np
import pytest

from orchlog import schema_gen, selector
from orchlog.emit import knobs as knob_parsers
from tests.crosslang import producers
from tests.crosslang.reference import TENSORS, expected_files, key_part
from tests.crosslang.test_byte_identical import first_difference

DOC = json.loads(TENSORS.read_text(encoding="utf-8"))
SELECT = "layer=0-"  # tensors outside the blocks (layer null) are graft calls that are not selected
PLAIN_LOGS = {"token_ids", "positions"}  # log calls in the grafting run
OTHER_DTYPE = {"f32": "f64", "f16": "f32", "bf16": "f64", "f64": "bf16"}  # the reference's dtype, every other tensor
WRONG_SHAPE, WRONG_DTYPE, MISSING = "scale", "mask", "pixels"
CALLED_TWICE = ("attn_norm", "Qcur")  # the reference holds attn_norm twice (other values), Qcur once


def _bf16_bits(values: np.ndarray) -> np.ndarray:
    """f32 -> bf16 bits, round to nearest even (finite values)."""
    bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def _floats(dtype: str, data: bytes) -> np.ndarray:
    if dtype == "bf16":
        return (np.frombuffer(data, np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return np.frombuffer(data, schema_gen.DTYPE_NUMPY[dtype]).astype(np.float64)


def _as_dtype(values: np.ndarray, dtype: str) -> bytes:
    """f64 values as `dtype`'s bytes; to f16 and bf16 through f32."""
    if dtype == "bf16":
        return _bf16_bits(values.astype(np.float32)).tobytes()
    if dtype == "f16":
        return values.astype(np.float32).astype(np.float16).tobytes()
    return values.astype(schema_gen.DTYPE_NUMPY[dtype]).tobytes()


def _random_data(rng: np.random.Generator, dtype: str, numel: int) -> bytes:
    if dtype in OTHER_DTYPE:
        return _as_dtype(rng.standard_normal(numel) * 100, dtype)
    info = np.iinfo(schema_gen.DTYPE_NUMPY[dtype])
    return rng.integers(info.min, info.max, numel, endpoint=True, dtype=schema_gen.DTYPE_NUMPY[dtype]).tobytes()


def reference_doc(seed: int) -> dict:
    """Other values for every tensor of DOC (attn_norm twice), some in another dtype, three unusable."""
    rng = np.random.default_rng(seed)
    tensors = []
    for i, t in enumerate(DOC["tensors"] + [t for t in DOC["tensors"] if t["checkpoint"] == CALLED_TWICE[0]]):
        if t["checkpoint"] == MISSING:
            continue
        ref = dict(t)
        ref["dtype"] = OTHER_DTYPE.get(t["dtype"], t["dtype"]) if i % 2 else t["dtype"]
        ref["dtype"] = "u8" if t["checkpoint"] == WRONG_DTYPE else ref["dtype"]
        ref["shape"] = [1] if t["checkpoint"] == WRONG_SHAPE else t["shape"]
        ref["data_hex"] = _random_data(rng, ref["dtype"], int(np.prod(ref["shape"]))).hex()
        tensors.append(ref)
    return {**DOC, "tensors": tensors}


def grafting_doc() -> dict:
    tensors = [dict(t, graft=t["checkpoint"] not in PLAIN_LOGS) for t in DOC["tensors"]]
    tensors += [dict(t, graft=True) for t in DOC["tensors"] if t["checkpoint"] in CALLED_TWICE]
    return {**DOC, "tensors": tensors}


def expected_graft(doc: dict, ref: dict, knobs: dict) -> dict:
    """`doc` as the grafting run must log it: each graft that takes, its data replaced and marked."""
    settings, _ = knob_parsers.resolve({}, knobs)
    chosen = selector.parse(knobs["ORCH_GRAFT_SELECT"])

    def key_of(t: dict) -> dict:
        parts = {f.name: key_part(f, t.get(f.name)) for f in schema_gen.RECORD_FIELDS if f.source == "key"}
        return {"checkpoint": t["checkpoint"], **knob_parsers.record_identity(parts, settings)}

    def lookup(key: dict) -> tuple:
        return (key["checkpoint"], *(key[part] for part in schema_gen.KEY_PARTS))

    by_key: dict[tuple, list[dict]] = {}
    for t in ref["tensors"]:
        by_key.setdefault(lookup(key_of(t)), []).append(t)
    calls: Counter[tuple] = Counter()
    out = copy.deepcopy(doc)
    for t in out["tensors"]:
        key = key_of(t)
        assert chosen is not None
        if not (t.pop("graft") and chosen.matches(key)):
            continue
        occurrence = calls[lookup(key)]
        calls[lookup(key)] += 1
        found = by_key.get(lookup(key), [])
        if occurrence >= len(found):
            continue
        r = found[occurrence]
        floats = {r["dtype"], t["dtype"]} <= OTHER_DTYPE.keys()
        if r["shape"] != t["shape"] or not (r["dtype"] == t["dtype"] or floats):
            continue
        data = bytes.fromhex(r["data_hex"])
        t["data_hex"] = (data if r["dtype"] == t["dtype"] else _as_dtype(_floats(r["dtype"], data), t["dtype"])).hex()
        t["grafted"] = True
    return out


@pytest.mark.parametrize("mode", ["summary", "full"])
@pytest.mark.parametrize("producer", producers.PRODUCERS, ids=str)
def test_each_emitter_grafts_to_the_reference_bytes(producer, mode, tmp_path):
    knobs = {"ORCH_LOG_TEAM": "crosslang", "SOURCE_DATE_EPOCH": "1767323045", "ORCH_LOG_WORLD_SIZE": "2"}
    ref = reference_doc(seed=14)
    ref_path = tmp_path / "ref.bin"
    ref_path.write_bytes(
        expected_files(ref, {**knobs, "ORCH_LOG_FILE": str(ref_path), "ORCH_LOG_MODE": "full"}, "python")["ref.bin"]
    )
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    knobs |= {
        "ORCH_LOG_FILE": str(out_dir / "trace.out"),
        "ORCH_LOG_MODE": mode,
        "ORCH_GRAFT_FROM": str(ref_path),
        "ORCH_GRAFT_SELECT": SELECT,
    }
    doc = grafting_doc()
    doc_path = tmp_path / "tensors.json"
    doc_path.write_text(json.dumps(doc), encoding="utf-8")
    want_doc = expected_graft(doc, ref, knobs)
    grafted = [t["checkpoint"] for t in want_doc["tensors"] if t.get("grafted")]
    assert len(grafted) >= 10 and grafted.count("attn_norm") == 2 and "empty" in grafted  # the case is not vacuous

    done = producers.launch(producer, doc_path, knobs, out_dir)

    expected = expected_files(want_doc, knobs, producer.language)
    assert sorted(done.files) == sorted(expected)
    for name, want in expected.items():
        assert done.files[name] == want, f"{producer} {name}: {first_difference(done.files[name], want)}"
    # A wrong shape and a wrong dtype are one kind, a missing record (pixels; Qcur's second call) another.
    assert done.returncode == 1, done.stderr
    assert len(done.warnings) == 2, done.stderr
    assert "the reference record is u8 [6], the tensor i8 [6]" in done.stderr  # mask comes before scale
    assert "(call 1 under this key): the reference holds no such record" in done.stderr
