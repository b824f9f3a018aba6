"""`orchlog trace hf`: a local transformers checkpoint run on a prompt into a trace named as llama.cpp's.

The model, its config and its tokenizer are read from the directory alone (no network: the hub is
switched off for the run). The shipped name map of the model's type (orchlog/maps/hf_<type>.toml)
says which modules are logged and under which names, so the trace meets `orchlog trace llama`'s with
no options; the prompt is tokenized by the checkpoint's own tokenizer (its special tokens as it adds
them), then decoded greedily with the KV cache, one step per token, as the llama.cpp driver does.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from orchlog.errors import OrchlogError
from orchlog.maps.namemap import STAGE_SEPARATOR, NameMap, load_maps, shipped_maps
from orchlog.records import record
from orchlog.runinfo import file_blake3
from orchlog.schema_gen import Scalar

# The stages of a map's sources that say what to hook: an output (none), an input, the attention
# probabilities. Others (the KV cache's key and value) are views a writer cannot apply.
_INPUT, _PROBS = "input", "probs"


@record(frozen=True)
class HfTrace:
    path: Path
    prompt: list[int]
    decode: list[int]
    prompt_pieces: list[str]
    decode_pieces: list[str]
    records: int
    seconds: float
    map_name: str


def hooked_modules(names: NameMap) -> tuple[list[str], list[str], list[str]]:
    """(outputs, inputs, attention) module globs from the map's HF paths."""
    outputs: list[str] = []
    inputs: list[str] = []
    probs: list[str] = []
    for rule in names.rules:
        path, _, stage = rule.source.partition(STAGE_SEPARATOR)
        if not path.startswith("model") and path != "lm_head":
            continue  # a rule over the other engine's names
        glob = path.replace("{layer}", "*")
        {"": outputs, _INPUT: inputs, _PROBS: probs}.get(stage, []).append(glob)
    return outputs, inputs, probs


def map_for(model_type: str, given: str | None) -> str:
    if given is not None:
        return given
    name = f"hf_{model_type}"
    if name not in shipped_maps():
        raise OrchlogError(
            f"no shipped name map for model type {model_type!r} (orchlog/maps/hf_*.toml); give --map FILE"
        )
    return name


def trace_hf(
    model_dir: str | Path,
    out: str | Path,
    *,
    text: str | None = None,
    tokens: Sequence[int] | None = None,
    n_predict: int = 8,
    mode: str = "full",
    select: str | None = None,
    team: str = "hf",
    map_name: str | None = None,
    device: str = "cpu",
    on_step: Callable[[int], None] | None = None,
) -> HfTrace:
    """Runs the checkpoint in `model_dir` on the prompt (text, tokenized by its tokenizer, or token ids)
    and `n_predict` greedy decode steps, logging the map's modules into `out`."""
    directory = Path(model_dir)
    if not (directory / "config.json").is_file():
        raise OrchlogError(f"{model_dir}: not a transformers checkpoint directory (no config.json)")
    if (text is None) == (tokens is None):
        raise OrchlogError("give the prompt as text or as token ids, not both")
    try:
        model_type = json.loads((directory / "config.json").read_text(encoding="utf-8")).get("model_type")
    except (OSError, ValueError, AttributeError) as exc:
        raise OrchlogError(f"{model_dir}/config.json cannot be read: {exc}") from None
    map_name = map_for(str(model_type), map_name)  # before transformers is asked: it knows fewer types than maps
    # Nothing from the hub: the directory is the whole model.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    import torch
    import transformers

    import orchlog.torch

    # The library's own progress bars and advice would mix with the command's output.
    library_logging: Any = transformers.utils.logging
    library_logging.disable_progress_bar()
    library_logging.set_verbosity_error()
    config = transformers.AutoConfig.from_pretrained(directory, local_files_only=True)
    names = load_maps([map_name])
    outputs, inputs, probs = hooked_modules(names)
    tokenizer: Any = None
    if text is not None or tokens is None:
        tokenizer = transformers.AutoTokenizer.from_pretrained(directory, local_files_only=True)
    prompt = list(tokens) if tokens is not None else list(tokenizer(text)["input_ids"])
    if not prompt:
        raise OrchlogError("the prompt gives no tokens")
    model: Any = transformers.AutoModelForCausalLM.from_pretrained(
        directory, local_files_only=True, attn_implementation="eager", dtype="auto"
    )
    model = model.to(device).eval()
    vocab = int(model.get_output_embeddings().weight.shape[0])
    if max(prompt) >= vocab:
        raise OrchlogError(f"token id {max(prompt)} is beyond the vocabulary ({vocab} ids)")

    started = time.monotonic()
    orchlog.configure(
        path=str(out),
        mode=mode,
        select=select,
        team=team,
        model=directory.resolve().name,
        config=run_config(directory, config, model, tokenizer, prompt, text, n_predict, device),
    )
    decoded: list[int] = []
    try:
        with (
            torch.no_grad(),
            orchlog.torch.attach(model, outputs, inputs=inputs, attention=probs, names=map_name) as hooks,
        ):
            out_ids = torch.tensor([prompt], device=device)
            cache = None
            for step in range(n_predict + 1):
                result = model(input_ids=out_ids, past_key_values=cache, use_cache=True)
                cache = result.past_key_values
                if on_step is not None:
                    on_step(step)
                if step == n_predict:
                    break
                # The largest logit, the lowest id of a tie: the llama.cpp driver's rule.
                next_id = int(torch.argmax(result.logits[0, -1].float()).item())
                decoded.append(next_id)
                out_ids = torch.tensor([[next_id]], device=device)
            records = hooks.records
    finally:
        orchlog.close()
    return HfTrace(
        Path(out),
        prompt,
        decoded,
        _pieces(tokenizer, prompt),
        _pieces(tokenizer, decoded),
        records,
        time.monotonic() - started,
        map_name,
    )


def _pieces(tokenizer: Any, ids: list[int]) -> list[str]:
    if tokenizer is None:
        return [""] * len(ids)
    return [tokenizer.decode([i]) for i in ids]


def run_config(
    directory: Path,
    config: Any,
    model: Any,
    tokenizer: Any,
    prompt: list[int],
    text: str | None,
    n_predict: int,
    device: str,
) -> dict[str, Scalar]:
    """The header's account of the run, under the keys the llama.cpp driver writes (docs/trace.md)."""
    import torch
    import transformers

    dtype = next(model.parameters()).dtype
    weights_hash = _weights_blake3(directory)
    rope = getattr(config, "rope_parameters", None) or {}
    theta = rope.get("rope_theta", getattr(config, "rope_theta", None)) if isinstance(rope, dict) else None
    out: dict[str, Scalar] = {
        "engine": "transformers",
        "transformers.version": transformers.__version__,
        "torch.version": torch.__version__,
        "model.file": directory.resolve().name,
        "model.arch": str(config.model_type),
        "model.weights": {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}.get(dtype, str(dtype)),
        "model.n_layer": int(config.num_hidden_layers),
        "model.n_embd": int(config.hidden_size),
        "model.n_head": int(config.num_attention_heads),
        "model.n_head_kv": int(getattr(config, "num_key_value_heads", config.num_attention_heads)),
        "model.n_vocab": int(config.vocab_size),
        "run.attention": str(getattr(config, "_attn_implementation", "eager")),
        "run.device": device,
        "run.sampling": "greedy",
        "run.n_predict": n_predict,
        "prompt.tokens": ",".join(str(t) for t in prompt),
    }
    if weights_hash is not None:
        out["hf.weights_blake3"] = weights_hash
    if theta is not None:
        out["model.rope_freq_base"] = float(theta)
    if getattr(config, "rms_norm_eps", None) is not None:
        out["model.rms_norm_eps"] = float(config.rms_norm_eps)
    if text is not None:
        out["prompt.text"] = text
    if tokenizer is not None:
        bos = tokenizer.bos_token_id
        out["prompt.add_bos"] = bos is not None and text is not None and prompt[0] == bos
    return out


def _weights_blake3(directory: Path) -> str | None:
    """BLAKE3 over the weight files (*.safetensors, else *.bin) in name order, each file's bytes in turn."""
    files = sorted(directory.glob("*.safetensors")) or sorted(directory.glob("*.bin"))
    if not files:
        return None
    return file_blake3(*files)
