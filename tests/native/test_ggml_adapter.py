"""The ggml adapter (orchlog/ggml.hpp) on hand-made ggml tensors: names, stages,
token rows, views, dtypes, the selector's say over what is copied.

The program is compiled against the ggml of the cached llama.cpp build
(orchlog/llama/build.py), hence the slow tier.
"""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

import orchlog
from tests.native import build
from tests.native.host_processes import env

pytestmark = pytest.mark.slow  # builds llama.cpp once (cached)


def _ggml_program(source: str):
    """A program of tests/native/programs compiled against the cached llama.cpp build's ggml (and ggml's internal
    headers of the same source, for the stand-in device buffer of ggml_device_buffer.hpp)."""
    from orchlog.llama.build import ensure_llama_cpp, vendored_source

    prefix = ensure_llama_cpp(quiet=True).prefix
    lib = prefix / "lib"
    return build.build_cpp(
        build.PROGRAMS / source,
        f"-I{prefix / 'include'}",
        f"-I{vendored_source() / 'ggml' / 'src'}",
        libs=(f"-L{lib}", "-lggml-base", f"-Wl,-rpath,{lib}"),
        inputs=[build.PROGRAMS / "ggml_device_buffer.hpp"],
    )


@pytest.fixture(scope="module")
def graph_cases():
    return _ggml_program("ggml_graph_cases.cpp")


def run(program, tmp_path, select: str = "") -> tuple[dict[str, list[int]], list, str]:
    """(answers per tensor name, records, stderr) of one run in full mode."""
    trace = tmp_path / "graph.bin"
    knobs = env(ORCH_LOG_FILE=str(trace), ORCH_LOG_MODE="full", ORCH_LOG_SELECT=select)
    proc = subprocess.run([str(program)], env=knobs, capture_output=True, text=True, check=True)
    answers: dict[str, list[int]] = {}
    for line in proc.stdout.splitlines():
        name, wanted = line.split("\t")
        answers.setdefault(name, []).append(int(wanted))
    return answers, list(orchlog.open_trace(trace)), proc.stderr


@pytest.fixture(scope="module")
def everything(graph_cases, tmp_path_factory):
    return run(graph_cases, tmp_path_factory.mktemp("all"))


def records_of(records, checkpoint, stage=None):
    return [r for r in records if r.checkpoint == checkpoint and r.stage == stage]


def test_a_block_tensor_is_one_record_per_token_with_its_layer_and_step(everything):
    _, records, _ = everything
    norm = [r for r in records_of(records, "attn_norm") if r.step == 2]
    assert [(r.token_idx, r.layer, r.step) for r in norm] == [(5, 0, 2), (6, 0, 2), (7, 0, 2)]
    assert [r.shape for r in norm] == [(4,)] * 3
    np.testing.assert_array_equal(norm[1].tensor(), np.arange(104, 108, dtype=np.float32))


def test_each_token_row_carries_the_id_begin_step_was_given_for_its_token(everything):
    _, records, _ = everything
    norm = [r for r in records_of(records, "attn_norm") if r.step == 2]
    assert [(r.token_idx, r.token_id) for r in norm] == [(5, 11), (6, 22), (7, 33)]
    assert [r.token_id for r in records_of(records, "result_output")] == [33]  # the last token's row
    (cache,) = records_of(records, "cache_k_l0")
    assert cache.token_id is None


def test_in_a_one_token_step_the_kv_cache_and_what_is_made_of_it_have_no_token(everything):
    _, records, _ = everything
    (row,) = [r for r in records_of(records, "attn_norm") if r.step == 3]
    assert (row.token_idx, row.token_id, row.shape) == (8, 44, (4,))
    cells, by_head, cont = (
        records_of(records, name) for name in ("cache_k_l0 (view)", "cache_k_l0 (view) (permuted)", "k_cached")
    )
    assert [(r.token_idx, r.token_id, r.shape) for r in cells] == [(None, None, (4, 8))]
    assert [(r.token_idx, r.shape) for r in by_head] == [(None, (2, 4, 4))]
    assert [(r.token_idx, r.layer, r.shape) for r in cont] == [(None, 0, (2, 4, 4))]
    np.testing.assert_array_equal(cells[0].tensor(), np.arange(1000, 1032, dtype=np.float32).reshape(4, 8))


def test_a_name_outside_the_blocks_has_no_layer(everything):
    _, records, _ = everything
    first_graph = records_of(records, "embd")[:3]  # the program offers embd again at the end
    assert [(r.layer, r.token_idx) for r in first_graph] == [(None, 5), (None, 6), (None, 7)]


def test_a_reused_name_records_each_later_op_as_its_stage(everything):
    _, records, _ = everything
    stages = [r.stage for r in records if r.checkpoint == "Qcur" and r.token_idx == 5]
    assert stages == [None, "add", "reshape"]
    heads = records_of(records, "Qcur", "reshape")
    assert heads[2].shape == (2, 4)
    np.testing.assert_array_equal(heads[2].tensor(), np.arange(316, 324, dtype=np.float32).reshape(2, 4))


def test_a_permuted_view_is_gathered_into_the_same_rows_in_c_order(everything):
    _, records, _ = everything
    view = records_of(records, "Qcur (permuted)")
    heads = records_of(records, "Qcur", "reshape")
    assert [r.token_idx for r in view] == [5, 6, 7]
    for a, b in zip(view, heads):
        np.testing.assert_array_equal(a.tensor(), b.tensor())


def test_the_unnamed_projection_after_kqv_out_is_attn_out_and_other_unnamed_nodes_are_skipped(everything):
    answers, records, _ = everything
    attn_out = records_of(records, "attn_out")
    assert [(r.layer, r.token_idx) for r in attn_out] == [(1, 5), (1, 6), (1, 7)]
    named_later = records_of(records, "attn_out", "add")  # a model's own attn_out-1, after the projection
    assert [(r.layer, r.token_idx) for r in named_later] == [(1, 5), (1, 6), (1, 7)]
    assert answers["node_18"] == [0]
    assert not [r for r in records if r.checkpoint.startswith("node_")]


def test_half_precision_tensors_keep_their_dtype(everything):
    _, records, _ = everything
    half, brain = records_of(records, "half"), records_of(records, "brain")
    assert {r.dtype for r in half} == {"f16"} and {r.dtype for r in brain} == {"bf16"}
    np.testing.assert_array_equal(np.asarray(half[1].tensor(), dtype=np.float32), 0.5 * np.arange(4, 8))
    np.testing.assert_array_equal(np.asarray(brain[2].tensor(), dtype=np.float32), 0.25 * np.arange(8, 12))


def test_a_quantized_tensor_is_dequantized_to_f32_and_says_from_what(everything):
    _, records, _ = everything
    quant = records_of(records, "quant")
    assert [(r.dtype, r.shape, r.meta) for r in quant] == [("f32", (32,), {"dequantized_from": "q8_0"})] * 3
    expected = 0.125 * (np.arange(32, 64) % 17)
    np.testing.assert_allclose(quant[1].tensor(), expected, atol=np.abs(expected).max() / 127)


def test_a_type_orchlog_lacks_is_skipped_with_one_warning(everything):
    answers, records, stderr = everything
    assert answers["shorts-0"] == [0, 0]
    assert not records_of(records, "shorts")
    assert stderr.count("type i16") == 1


def test_rows_kept_for_the_last_tokens_only_get_the_last_positions(everything):
    _, records, _ = everything
    assert [r.token_idx for r in records_of(records, "result_output")] == [7]


def test_a_tensor_without_a_token_dimension_is_one_whole_record(everything):
    _, records, _ = everything
    (cache,) = records_of(records, "cache_k_l0")
    assert (cache.token_idx, cache.shape) == (None, (2, 5))


def test_a_second_graph_in_one_step_is_warned_about_once(everything):
    _, _, stderr = everything
    assert stderr.count("more than one graph") == 1


def test_the_selector_decides_what_the_scheduler_is_asked_to_copy(graph_cases, tmp_path):
    answers, records, _ = run(graph_cases, tmp_path, select="checkpoint=Qcur,token=6")
    assert answers["attn_norm-0"] == [0, 0] and answers["embd"] == [0, 0]
    assert answers["Qcur-0"] == [1, 1, 1]
    assert [(r.checkpoint, r.stage, r.token_idx) for r in records] == [
        ("Qcur", None, 6),
        ("Qcur", "add", 6),
        ("Qcur", "reshape", 6),
    ]


def test_with_logging_off_nothing_is_asked_for(graph_cases, tmp_path):
    proc = subprocess.run([str(graph_cases)], env=env(), capture_output=True, text=True, check=True)
    assert {line.split("\t")[1] for line in proc.stdout.splitlines()} == {"0"}
    assert proc.stderr == ""


@pytest.fixture(scope="module")
def graft_cases():
    return _ggml_program("ggml_graft_cases.cpp")


def _tensors_after(stdout: str) -> dict[str, list[float]]:
    """What each tensor held after the callback (the last offer under a name)."""
    out = {}
    for line in stdout.splitlines():
        name, _, values = line.split("\t")
        out[name] = [float(v) for v in values.split()]
    return out


# "device": the tensors live in a buffer that is not host memory and that only ggml_backend_tensor_get/set reach
# (ggml_device_buffer.hpp): the rows are grafted in the host copy and written back, with the same result.
@pytest.mark.parametrize("memory", ["host", "device"])
def test_rows_are_grafted_in_place_and_what_cannot_be_is_said_once(graft_cases, memory, tmp_path):
    reference = tmp_path / "ref.bin"
    knobs = env(ORCH_LOG_FILE=str(reference), ORCH_LOG_MODE="full")
    subprocess.run([str(graft_cases), "0", memory], env=knobs, capture_output=True, check=True)
    trace = tmp_path / "grafted.bin"
    select = "checkpoint=attn_norm,checkpoint=half,checkpoint=Qcur,token=1-"
    knobs = env(
        ORCH_LOG_FILE=str(trace), ORCH_LOG_MODE="full", ORCH_GRAFT_FROM=str(reference), ORCH_GRAFT_SELECT=select
    )
    proc = subprocess.run([str(graft_cases), "1000", memory], env=knobs, capture_output=True, text=True)

    after = _tensors_after(proc.stdout)
    # Tokens 1 and 2 of attn_norm and half took the reference's rows; token 0 and ffn_out kept their own.
    assert after["attn_norm-0"] == [1000, 1001, 1002, 1003, 4, 5, 6, 7, 8, 9, 10, 11]
    assert after["half-0"] == [1000, 1001, 1002, 1003, 4, 5, 6, 7, 8, 9, 10, 11]
    assert after["ffn_out-0"] == [1000 + i for i in range(12)]
    # The contiguous Qcur rows were grafted; its permuted view came afterwards and cannot be.
    assert after["Qcur-0"] == [1000, 1001, 1002, 1003] + list(range(4, 12))
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("orchlog: warning:")]
    assert len(warnings) == 1 and "non-contiguous view" in warnings[0], proc.stderr
    assert proc.returncode == 1  # the refused rows are counted as errors

    records = list(orchlog.open_trace(trace))
    marked = {(r.checkpoint, r.stage, r.token_idx) for r in records if r.grafted}
    assert marked == {(c, None, t) for c in ("attn_norm", "half", "Qcur") for t in (1, 2)}
    refused = [r for r in records if r.checkpoint == "Qcur" and r.stage == "permute"]
    assert [(r.token_idx, r.grafted) for r in refused] == [(0, False), (1, False), (2, False)]


def test_attention_rows_are_cut_to_the_cells_each_token_attends_to(everything):
    # kq over a KV cache padded to 16 cells; tokens at positions 5, 6, 7 attend to 6, 7 and 8 cells.
    _, records, _ = everything
    rows = records_of(records, "kq")
    assert [(r.token_idx, r.shape, r.meta["kv_cells"]) for r in rows] == [
        (5, (2, 6), "6 of 16"),
        (6, (2, 7), "7 of 16"),
        (7, (2, 8), "8 of 16"),
    ]
    t = 1  # each head's first cells, in C order: 3000 + 100 head + 20 token + cell
    expected = np.array([[3000 + 100 * h + 20 * t + c for c in range(7)] for h in range(2)], dtype=np.float32)
    np.testing.assert_array_equal(rows[t].tensor(), expected)


def test_kv_cache_views_are_cut_to_the_cells_in_use(everything):
    # A one-token step at position 2 over caches of 16 cells: 3 cells in use, in each layout the cache has.
    _, records, _ = everything
    names = ("cache_k_l1 (view)", "cache_k_l1 (view) (permuted)", "cache_v_l1 (view)", "cache_v_l1 (reshaped)")
    k, k_by_head, v, v_column = (records_of(records, name) for name in names)
    assert [(r.token_idx, r.shape, r.meta["kv_cells"]) for r in (*k, *k_by_head, *v, *v_column)] == [
        (None, (3, 4), "3 of 16"),
        (None, (2, 3, 2), "3 of 16"),
        (None, (2, 2, 3), "3 of 16"),
        (None, (4, 3), "3 of 16"),  # the column set_rows writes: the [channels, cells] it holds
    ]
    cell, head, dim = np.ogrid[:3, :2, :2]  # K: channel c of cell k at 4k + c; V: at 16c + k
    np.testing.assert_array_equal(k[0].tensor(), 2000 + np.arange(12, dtype=np.float32).reshape(3, 4))
    np.testing.assert_array_equal(k_by_head[0].tensor(), (2000 + 4 * cell + 2 * head + dim).transpose(1, 0, 2))
    np.testing.assert_array_equal(v[0].tensor(), (3000 + 16 * (2 * head + dim) + cell).transpose(2, 1, 0))
    np.testing.assert_array_equal(v_column[0].tensor(), 3000 + 16 * np.arange(4.0)[:, None] + np.arange(3.0))
    (k_column,) = records_of(records, "cache_k_l1 (reshaped)")
    assert k_column.shape == (64, 1) and "kv_cells" not in k_column.meta  # cells and channels interleaved: whole


def test_a_matrix_products_record_names_the_type_of_the_weights_it_read(everything):
    _, records, _ = everything
    assert {r.meta.get("weight_type") for r in records_of(records, "Qcur")} == {"f16"}
    assert {r.meta.get("weight_type") for r in records_of(records, "embd")} == {"f32"}  # the looked-up table
    assert all("weight_type" not in r.meta for r in records_of(records, "Qcur", "add"))  # not a product
    assert all("weight_type" not in r.meta for r in records_of(records, "kq"))  # of two activations
