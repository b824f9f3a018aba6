"""orchlog.runinfo: how two runs' headers differ, the weightiest difference first."""

from __future__ import annotations

import blake3

from orchlog.runinfo import differences, file_blake3


def _header(**config):
    return {"orchlog": 2, "config": config}


def test_the_weight_type_is_reported_first_in_words_a_user_reads():
    a = _header(**{"model.weights": "q8_0", "model.n_layer": 2, "run.kv_type": "f32", "prompt.tokens": "1,2"})
    b = _header(**{"model.weights": "f32", "model.n_layer": 3, "run.kv_type": "f16", "prompt.tokens": "1,2"})
    found = differences(a, b)
    assert [d.key for d in found] == ["model.weights", "run.kv_type", "model.n_layer"]
    assert found[0].line() == "the reference ran q8_0 weights, ours f32"
    assert found[2].line() == "model.n_layer: the reference's is 2, ours 3"


def test_only_keys_both_runs_carry_are_compared_and_engine_facts_are_not_differences():
    a = _header(**{"engine": "llama.cpp", "ggml.version": "0.25", "model.file": "m.gguf", "run.threads": 2})
    b = _header(**{"engine": "transformers", "torch.version": "2.13", "model.file": "hf", "run.threads": 8})
    assert differences(a, b) == []


def test_an_f32_epsilon_from_a_gguf_equals_the_same_epsilon_in_f64():
    eps_f32 = 9.999999974752427e-07  # 1e-6 as a GGUF keeps it
    assert differences(_header(**{"model.rms_norm_eps": eps_f32}), _header(**{"model.rms_norm_eps": 1e-6})) == []
    found = differences(_header(**{"model.rms_norm_eps": 1e-6}), _header(**{"model.rms_norm_eps": 1e-5}))
    assert [d.to_json()["key"] for d in found] == ["model.rms_norm_eps"]


def test_booleans_are_not_numbers_and_missing_headers_differ_in_nothing():
    assert [d.key for d in differences(_header(**{"prompt.add_bos": True}), _header(**{"prompt.add_bos": 1}))] == [
        "prompt.add_bos"
    ]
    assert differences(None, _header(a=1)) == [] and differences({"orchlog": 2}, _header(a=1)) == []


def test_the_blake3_of_files_is_b3sum_of_their_bytes_in_turn(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    one.write_bytes(b"abc" * 1000)
    two.write_bytes(b"xyz")
    assert file_blake3(one) == blake3.blake3(b"abc" * 1000).hexdigest()
    assert file_blake3(one, two) == blake3.blake3(b"abc" * 1000 + b"xyz").hexdigest()
