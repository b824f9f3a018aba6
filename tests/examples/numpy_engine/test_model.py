"""Loading the GGUF: hyperparameters from the qwen2 keys, and the epsilon bug."""

from __future__ import annotations

import gguf
import numpy as np
import pytest

from examples.numpy_engine.bugs import Bug
from examples.numpy_engine.model import load_model
from examples.qwen2_tiny.config import TINY
from examples.qwen2_tiny.weights import make_weights


def test_hyperparameters_come_from_the_qwen2_keys(tiny_gguf):
    hp = load_model(tiny_gguf).hparams
    assert (hp.n_vocab, hp.n_embd, hp.n_layer, hp.n_head, hp.n_head_kv, hp.n_ff) == (256, 64, 2, 4, 2, 128)
    assert hp.head_dim == TINY.head_dim
    assert hp.rope_theta == TINY.rope_theta
    assert np.float32(hp.rms_norm_eps) == np.float32(TINY.rms_norm_eps)


def test_the_wrong_epsilon_key_silently_reads_zero(tiny_gguf):
    assert load_model(tiny_gguf, Bug.EPS_FROM_WRONG_KEY).hparams.rms_norm_eps == 0.0


def test_weights_are_the_ones_written(tiny_gguf):
    weights = load_model(tiny_gguf).weights
    assert np.array_equal(weights["blk.1.ffn_up.weight"], make_weights()["blk.1.ffn_up.weight"])


def test_a_missing_required_key_is_an_error_not_a_default(tmp_path):
    path = tmp_path / "not-qwen2.gguf"
    writer = gguf.GGUFWriter(str(path), arch="qwen2")
    writer.add_tensor("token_embd.weight", np.zeros((4, 2), np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(KeyError, match="layer_norm_rms_epsilon"):
        load_model(path)
