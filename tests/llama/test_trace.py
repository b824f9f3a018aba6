"""`trace_llama` (orchlog trace llama) on the tiny Qwen2 with its byte-level vocabulary: the prompt tokenized by
the model's own vocabulary, greedy decoding, every graph tensor named as the adapter names it, and a header
that says what made the run; on any file type llama.cpp's quantizer writes."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

import orchlog
from orchlog.errors import OrchlogError
from orchlog.llama.build import LLAMA_CPP_COMMIT, ensure_llama_cpp
from orchlog.llama.trace import trace_llama
from orchlog.runinfo import file_blake3

pytestmark = pytest.mark.slow  # builds llama.cpp (cached) and the driver

PROMPT = "The quick brown fox, 12 dogs!"


@pytest.fixture(scope="module")
def traced(model_pair, tmp_path_factory):
    out = tmp_path_factory.mktemp("llama") / "llama.bin"
    return trace_llama(model_pair.gguf, out, text=PROMPT, n_predict=3, quiet=True)


def _records(path):
    trace = orchlog.open_trace(path)
    return trace, list(trace)


def test_the_prompt_is_tokenized_by_the_models_vocabulary_as_its_hf_tokenizer_does(traced, model_pair):
    from tokenizers import Tokenizer

    hf = Tokenizer.from_file(str(model_pair.hf / "tokenizer.json"))
    assert traced.prompt == hf.encode(PROMPT).ids
    assert "".join(traced.prompt_pieces) == PROMPT


def test_each_decode_step_feeds_the_largest_logit_of_the_step_before(traced):
    _, records = _records(traced.path)
    logits = {(r.step, r.token_idx): r for r in records if r.checkpoint == "result_output"}
    fed = traced.prompt + traced.decode
    for step, token in enumerate(traced.decode):
        last = len(traced.prompt) - 1 + step
        row = logits[step, last].tensor()
        assert int(np.argmax(row)) == token
    assert [r.token_id for r in records if r.checkpoint == "l_out" and r.layer == 0] == fed


def test_the_header_says_what_made_the_run(traced, model_pair):
    trace, _ = _records(traced.path)
    config = trace.header["config"]
    assert trace.header["model"] == model_pair.gguf.name
    assert config["model.blake3"] == file_blake3(model_pair.gguf)
    assert config["model.weights"] == "f32" and config["model.arch"] == "qwen2"
    assert (config["model.n_layer"], config["model.n_embd"], config["model.n_vocab"]) == (2, 64, 320)
    assert config["model.rope_freq_base"] == 1e6
    assert config["model.rms_norm_eps"] == float(np.float32(1e-6))
    assert config["prompt.tokens"] == ",".join(map(str, traced.prompt)) and config["prompt.add_bos"] is False
    assert (config["run.sampling"], config["run.n_predict"], config["run.kv_type"]) == ("greedy", 3, "f32")
    assert config["llama.cpp"] == f"pinned {LLAMA_CPP_COMMIT}" and config["engine"] == "llama.cpp"


def test_a_model_that_adds_bos_starts_the_prompt_with_it(tmp_path):
    from examples.qwen2_tiny.gguf_file import write_gguf
    from examples.qwen2_tiny.model_pair import config_for
    from examples.qwen2_tiny.vocab import byte_level_vocabulary
    from examples.qwen2_tiny.weights import make_weights

    vocabulary = byte_level_vocabulary(add_bos=True)
    config = config_for(vocabulary)
    gguf = write_gguf(tmp_path / "bos.gguf", make_weights(config), config, vocabulary)
    done = trace_llama(gguf, tmp_path / "bos.bin", text="Hi", n_predict=0, quiet=True)
    assert done.prompt == [vocabulary.end_of_text, ord("H"), ord("i")]


@pytest.mark.parametrize("kind", ["f16", "q8_0", "q4_k_m"])
def test_a_file_from_llama_cpps_own_quantizer_runs_and_names_its_weight_type(model_pair, kind, tmp_path):
    from examples.llama_cpp.run import build_programs

    quantized = tmp_path / f"tiny-{kind}.gguf"
    subprocess.run(
        [str(build_programs(quiet=True) / "quantize"), str(model_pair.gguf), str(quantized), kind],
        check=True,
        capture_output=True,
    )
    done = trace_llama(quantized, tmp_path / "q.jsonl", text=PROMPT, n_predict=1, mode="summary", quiet=True)
    trace, records = _records(done.path)
    assert trace.header["config"]["model.weights"] == kind
    weight_types = {r.meta.get("weight_type") for r in records if r.checkpoint == "ffn_up"}
    assert weight_types and weight_types != {"f32"}
    assert done.decode and all(r.stats.nan_count == 0 for r in records)


def test_the_users_own_install_prefix_builds_the_driver_and_says_so(model_pair, tmp_path):
    prefix = ensure_llama_cpp(quiet=True).prefix  # an install prefix, as `cmake --install` writes one
    done = trace_llama(
        model_pair.gguf,
        tmp_path / "own.jsonl",
        tokens=[1, 2, 3],
        n_predict=0,
        mode="summary",
        llama_cpp=prefix,
        quiet=True,
    )
    trace, records = _records(done.path)
    assert trace.header["config"]["llama.cpp"] == f"user {prefix.resolve()}"
    assert done.prompt == [1, 2, 3] and records


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"tokens": [1, 320]}, "token id 320 is beyond the vocabulary (320 ids)"),
        ({"text": ""}, "the prompt gives no tokens"),
    ],
)
def test_a_prompt_the_model_cannot_run_is_one_clear_error(model_pair, tmp_path, kwargs, message):
    with pytest.raises(OrchlogError, match=message.replace("(", r"\(").replace(")", r"\)")):
        trace_llama(model_pair.gguf, tmp_path / "x.bin", n_predict=0, quiet=True, **kwargs)


def test_a_text_prompt_for_a_model_without_a_vocabulary_says_to_give_ids(tmp_path):
    from examples.qwen2_tiny.make_model import make_tiny_model

    gguf = make_tiny_model(tmp_path / "ids-only.gguf")
    with pytest.raises(OrchlogError, match="has no vocabulary to tokenize a text with; give token ids"):
        trace_llama(gguf, tmp_path / "x.bin", text="Hi", n_predict=0, quiet=True)
    done = trace_llama(gguf, tmp_path / "x.bin", tokens=[0, 17], n_predict=1, quiet=True)
    assert done.prompt == [0, 17] and done.prompt_pieces == ["", ""]


def test_a_file_that_is_not_gguf_is_refused_before_anything_is_built(tmp_path):
    bogus = tmp_path / "model.gguf"
    bogus.write_bytes(b"PK\x03\x04 not a model")
    with pytest.raises(OrchlogError, match="not a GGUF file"):
        trace_llama(bogus, tmp_path / "x.bin", text="Hi")
