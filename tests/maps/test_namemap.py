"""Name maps: patterns with {layer}, shipped maps by name, clear errors for bad files."""

from __future__ import annotations

import numpy as np
import pytest

from orchlog.errors import OrchlogError
from orchlog.maps.namemap import compile_pattern, load_maps, shipped_maps
from orchlog.read.batch import RecordBatch
from orchlog.read.trace import TraceRecord


def test_a_pattern_captures_the_layer_and_matches_whole_names_only():
    rx = compile_pattern("blk.{layer}.attn_norm")
    found = rx.fullmatch("blk.12.attn_norm")
    assert found is not None and found["layer"] == "12"
    assert rx.fullmatch("blkX12.attn_norm") is None and rx.fullmatch("blk.1.attn_norm.weight") is None
    found = compile_pattern("*.{layer}.q").fullmatch("model.layers.3.q")
    assert found is not None and found["layer"] == "3"


def test_three_engines_names_meet_on_one_canonical_name_and_layer():
    names = load_maps(["example"])
    for name in ("blk.3.attn_norm", "attn_norm-3", "model.layers.3.input_layernorm"):
        assert names.lookup(name) == ("attn_norm", 3, None), name
    assert names.lookup("lm_head") == ("result_output", None, None)
    assert names.lookup("something_else") is None
    assert "example" in shipped_maps()


def test_applying_a_map_renames_fills_layers_and_remembers_the_original():
    batch = RecordBatch.from_records([TraceRecord("Qcur-5"), TraceRecord("Qcur", layer=5), TraceRecord("other")])
    out = load_maps(["example"]).apply(batch)
    assert out.checkpoint.tolist() == ["Qcur", "Qcur", "other"]
    assert out.layer.tolist() == [5, 5, -1]
    assert out.renamed_from is not None
    assert out.renamed_from.tolist() == ["Qcur-5", None, None]


def test_a_map_file_by_path_with_regex_rules_and_layer_in_the_target(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text('[names]\n"layer_{layer}_output" = "l_out_{layer}"\n[regex]\n\'^h\\.(?P<layer>\\d+)$\' = "l_out"\n')
    names = load_maps([str(path)])
    assert names.lookup("layer_7_output") == ("l_out_7", 7, None)
    assert names.lookup("h.2") == ("l_out", 2, None)


def test_a_target_with_at_sets_the_stage_and_a_plain_one_keeps_it(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text('[names]\n"q_proj.{layer}" = "Qcur@add"\n"Qcur-{layer}" = "Qcur"\n"gone.{layer}" = "x@"\n')
    names = load_maps([str(path)])
    assert names.lookup("q_proj.3") == ("Qcur", 3, "add")
    assert names.lookup("q_proj.3", "anything") == ("Qcur", 3, "add")
    assert names.lookup("Qcur-3", "rope") == ("Qcur", 3, "rope")
    assert names.lookup("gone.1", "add") == ("x", 1, None)


def test_a_pattern_with_at_matches_the_stage_and_only_records_that_have_one(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text('[names]\n"o_proj.{layer}@input" = "kqv_out"\n"o_proj.{layer}" = "attn_out"\n')
    names = load_maps([str(path)])
    assert names.lookup("o_proj.2", "input") == ("kqv_out", 2, None)
    assert names.lookup("o_proj.2") == ("attn_out", 2, None)
    assert names.lookup("o_proj.2", "other") == ("attn_out", 2, "other")


def test_applying_a_map_with_stages_rewrites_the_stage_column(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text('[names]\n"q.{layer}" = "Qcur@add"\n"o.{layer}@input" = "kqv_out"\n')
    batch = RecordBatch.from_records(
        [TraceRecord("q.0"), TraceRecord("o.1", stage="input"), TraceRecord("o.1"), TraceRecord("z", stage="rope")]
    )
    out = load_maps([str(path)]).apply(batch)
    assert out.checkpoint.tolist() == ["Qcur", "kqv_out", "o.1", "z"]
    assert out.stage.tolist() == ["add", None, None, "rope"]
    assert out.layer.tolist() == [0, 1, -1, -1]
    assert out.renamed_from is not None
    assert out.renamed_from.tolist() == ["q.0", "o.1", None, None]


@pytest.mark.parametrize(
    "text, message",
    [
        ("[names\n", "not valid TOML"),
        ("[names]\n'x' = 3\n", "non-empty name"),
        ("[regex]\n'(' = 'x'\n", "not a valid pattern"),
        ("[colours]\n", "unknown section"),
    ],
)
def test_bad_map_files_are_clear_errors(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(OrchlogError, match=message):
        load_maps([str(path)])


def test_an_unknown_map_name_lists_the_shipped_ones():
    with pytest.raises(OrchlogError, match="--map no_such_map: .*shipped: .*example"):
        load_maps(["no_such_map"])


def test_a_table_target_views_the_tensor_and_can_keep_the_name(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text(
        '[names]\n"cache.{layer}@value" = { name = "cache_v", stage = "", slice = "0", transpose = [1, 2] }\n'
        '"q@rope" = { view = [{ reshape = [0, -1, 2] }, { permute = [0, 2, 1] }, { reshape = [0, -1] }] }\n'
        '"probs" = { name = "kq_soft_max", window = true }\n'
    )
    names = load_maps([str(path)])
    assert names.lookup("cache.3", "value") == ("cache_v", 3, None)
    assert names.lookup("q", "rope") == ("q", None, "rope")
    assert names.windows == ("kq_soft_max",)
    x = np.arange(2 * 6, dtype=np.float32).reshape(2, 6)
    raw = x.reshape(-1).data.cast("B")
    batch = RecordBatch.from_records(
        [TraceRecord("q", stage="rope", dtype="f32", shape=(2, 6), numel=12, values=x.reshape(-1), loader=lambda: raw)]
    )
    out = names.apply(batch)
    expected = x.reshape(2, 3, 2).transpose(0, 2, 1).reshape(2, 6)
    assert np.frombuffer(out.loader[0](), np.float32).tolist() == expected.reshape(-1).tolist()
    assert out.row_values(0).tolist() == expected.reshape(-1).tolist() and out.checkpoint[0] == "q"


@pytest.mark.parametrize(
    "target, message",
    [
        ('{ name = "x", rotate = 1 }', "unknown key"),
        ("{ window = true }", "needs the canonical name"),
        ("{ permute = [0], view = [{ permute = [0] }] }", "either as keys or as a view list"),
        ("{ view = [{ permute = [0], reshape = [1] }] }", "one-operation tables"),
        ('{ name = "x", dtype = "q4" }', "choose one of"),
    ],
)
def test_bad_table_targets_are_clear_errors(tmp_path, target, message):
    path = tmp_path / "bad.toml"
    path.write_text(f'[names]\n"a" = {target}\n')
    with pytest.raises(OrchlogError, match=message):
        load_maps([str(path)])


def test_each_side_can_have_its_own_map_and_the_shared_one_applies_to_both(tmp_path):
    from orchlog.compare import CompareOptions, compare
    from tests.tracegen import record, write_frames

    # The same raw name for two different points: a's `Qcur` is after the bias, b's before it.
    (tmp_path / "a.toml").write_text('[names]\n"Qcur" = "Qcur@add"\n"Qcur_mm" = "Qcur@mul_mat"\n')
    (tmp_path / "b.toml").write_text('[names]\n"Qcur" = "Qcur@mul_mat"\n"Qcur_biased" = "Qcur@add"\n')
    (tmp_path / "both.toml").write_text('[names]\n"attn_norm-{layer}" = "attn_norm"\n')
    x = np.ones(4, np.float32)
    a = write_frames(tmp_path / "a.bin", [record("Qcur_mm", x), record("Qcur", x + 1), record("attn_norm-0", x)])
    b = write_frames(tmp_path / "b.bin", [record("Qcur", x), record("Qcur_biased", x + 1), record("attn_norm-0", x)])
    opts = CompareOptions(maps=[str(tmp_path / "both.toml")], maps_a=[str(tmp_path / "a.toml")])
    opts.maps_b = [str(tmp_path / "b.toml")]
    report = compare(a, b, opts)
    assert report.status == "ok" and report.findings.pairs == 3 and not report.unmatched
    assert report.to_json()["maps_by_side"]["a"][0].endswith("a.toml")
