"""Legacy trace records: name/shape/dtype/blake3/rms/num_elements, one per line or one per .trace file."""

from __future__ import annotations

import json

from orchlog.read.paths import open_trace
from tests.tracegen import write_json_lines


def _doc(**kw):
    doc = {
        "name": "attn_out",
        "shape": [1, 2560],
        "dtype": "F32",
        "blake3": "ab" * 32,
        "rms": 0.9123,
        "num_elements": 2560,
    }
    doc.update(kw)
    return doc


def test_jsonl_records_map_seq_to_the_token_and_keep_negative_layers_in_meta(tmp_path):
    path = write_json_lines(
        tmp_path / "rust.jsonl",
        [_doc(seq=3, layer=6, stage="attn_out"), _doc(name="logits", seq=3, layer=-1, stage="logits")],
    )
    trace = open_trace(path)
    a, b = list(trace)
    assert trace.format == "legacy-trace" and trace.default_key == ("token_idx", "layer", "stage")
    assert a.stats is not None
    assert (a.token_idx, a.layer, a.stage, a.dtype, a.numel, a.stats.rms) == (3, 6, "attn_out", "f32", 2560, 0.9123)
    assert b.layer is None and b.meta == {"legacy_layer": -1}


def test_a_directory_of_pretty_printed_trace_files_reads_as_one_trace(tmp_path):
    for i in range(3):
        (tmp_path / f"t{i}.trace").write_text(json.dumps(_doc(name=f"q_proj_{i}", layer=i), indent=2))
    trace = open_trace(tmp_path)
    assert [r.layer for r in trace] == [0, 1, 2]
    assert trace.default_key == ("token_idx", "layer", "stage") and not trace.diagnostics


def test_records_without_a_stage_use_their_name(tmp_path):
    (rec,) = open_trace(write_json_lines(tmp_path / "t.jsonl", [_doc()]))
    assert rec.stage == "attn_out"
