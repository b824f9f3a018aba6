"""Every emitter logs tests/crosslang/tensors.json to the very bytes the reference encoder gives.

The reference is orchlog/encoding (the executable FORMAT.md); headers differ
only in producer.language, and `created` is pinned with SOURCE_DATE_EPOCH,
so emitters that pass here (Rust, C++, Python, C) write files identical to
one another. The knob sets cover the rules of FORMAT.md "Header and env":
spaces and tabs around values, a blank selector, the selector's raw text in
the header, empty model and commit, text knobs that are not UTF-8, and a
selector meeting null keys. Stale files at the output paths are truncated.
"""

from __future__ import annotations

import json

import pytest

from orchlog import schema_gen
from tests.crosslang import producers
from tests.crosslang.reference import TENSORS, expected_files

KNOB_SETS: dict[str, dict[str, str | bytes]] = {
    "defaults": {},
    "all_values_rank_2_of_4_layers_0_1": {
        "ORCH_LOG_VALUES": "all",
        "ORCH_LOG_RANK": "2",
        "ORCH_LOG_WORLD_SIZE": "4",
        "ORCH_LOG_SELECT": "layer=0-1,checkpoint=*",
        "ORCH_LOG_MODEL": "qwen2.5-0.5b-f16.gguf",
        "ORCH_LOG_GIT_COMMIT": "abc123def",
    },
    "three_values_two_globs": {"ORCH_LOG_VALUES": "3", "ORCH_LOG_SELECT": "checkpoint=*_out, checkpoint=?cur"},
    "blank_select_empty_model_and_commit": {"ORCH_LOG_SELECT": " \t ", "ORCH_LOG_MODEL": "", "ORCH_LOG_GIT_COMMIT": ""},
    "spaces_and_tabs_around_knobs_select_text_kept_as_given": {
        "ORCH_LOG_SELECT": " layer = 0-1 ,\tcheckpoint=* ",
        "ORCH_LOG_VALUES": "\t3 ",
        "ORCH_LOG_RANK": " 1",
        "ORCH_LOG_WORLD_SIZE": "2\t",
    },
    "a_selector_never_matches_null_keys": {"ORCH_LOG_SELECT": "token=0-,step=0-"},
    "text_knobs_that_are_not_utf8": {
        "ORCH_LOG_TEAM": b"caf\xc3",
        "ORCH_LOG_MODEL": b"m\xff.gguf",
        "ORCH_LOG_SELECT": b"checkpoint=*\xe2\x82,checkpoint=attn_*",
    },
}


def first_difference(got: bytes, want: bytes) -> str:
    if b"\n" in want and want.endswith(b"\n"):
        for i, (g, w) in enumerate(zip(got.split(b"\n"), want.split(b"\n"))):
            if g != w:
                return f"line {i + 1}:\n got  {g[:400]!r}\n want {w[:400]!r}"
    offset = next((i for i, (g, w) in enumerate(zip(got, want)) if g != w), min(len(got), len(want)))
    return f"byte {offset} of {len(got)} (want {len(want)}): got {got[offset : offset + 32].hex()} want {want[offset : offset + 32].hex()}"


@pytest.mark.parametrize("mode", ["summary", "full", "both"])
@pytest.mark.parametrize("knob_set", list(KNOB_SETS))
@pytest.mark.parametrize("producer", producers.PRODUCERS, ids=str)
def test_each_emitter_writes_the_reference_bytes(producer, knob_set, mode, tmp_path):
    knobs = {
        "ORCH_LOG_FILE": str(tmp_path / "trace.out"),
        "ORCH_LOG_MODE": mode,
        "ORCH_LOG_TEAM": "crosslang",
        "SOURCE_DATE_EPOCH": "1767323045",
        **KNOB_SETS[knob_set],
    }
    expected = expected_files(json.loads(TENSORS.read_text(encoding="utf-8")), knobs, producer.language)
    for name in expected:  # a previous run's files: truncated when the run starts, not appended to
        (tmp_path / name).write_bytes(b"stale bytes of an earlier run\n" * 1000)
    written = producers.run(producer, TENSORS, knobs, tmp_path)
    assert sorted(written) == sorted(expected)
    for name, want in expected.items():
        assert written[name] == want, f"{producer} {name}: {first_difference(written[name], want)}"


def test_the_tensor_file_covers_every_dtype_and_the_edge_cases():
    doc = json.loads(TENSORS.read_text(encoding="utf-8"))
    tensors = doc["tensors"]
    assert {t["dtype"] for t in tensors} == {"f32", "f16", "bf16", "f64", "i8", "u8", "i32", "i64"}
    assert any(t["shape"] == [] for t in tensors) and any(0 in t["shape"] for t in tensors)
    keys = schema_gen.KEY_PARTS
    assert any(all(t[k] is None for k in keys) for t in tensors)
    assert any(all(t[k] is not None for k in keys) for t in tensors)
    ranks = [t["rank"] for t in tensors if t["rank"] is not None]
    assert 0 < len(ranks) < len(tensors)  # some records name their shard, the others take the run's rank
    meta_types = {type(v).__name__ for t in tensors for _, v in t["meta"]}
    assert meta_types == {"bool", "int", "str", "dict"}  # dict: a tagged f64
    assert any(len({k for k, _ in t["meta"]}) < len(t["meta"]) for t in tensors)  # a repeated meta key
    numbers = [t[k] for t in tensors for k in ("token_idx", "layer", "step", "rank") if t[k] is not None]
    assert min(numbers) < 0 and max(numbers) >= 2**63  # negative, and beyond i64


def test_every_emitter_takes_part():
    assert {p.language for p in producers.PRODUCERS} == {"rust", "cpp", "python", "c"}
