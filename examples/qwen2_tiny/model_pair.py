"""The tiny Qwen2 as a user meets a model: a GGUF file with its own tokenizer, and the HF directory of the
same weights (config.json, model.safetensors, tokenizer.json), both written here from random weights.

    python -m examples.qwen2_tiny.model_pair DIR [--seed N] [--add-bos] [--plant NAME]

writes DIR/tiny-qwen2.gguf and DIR/hf/. `--plant NAME` changes one weight of the HF copy only (element
[0, 0] of the GGUF tensor NAME, e.g. blk.1.ffn_up.weight, raised by 0.5): the bug a hunt must find at
that tensor's first use. `--add-bos` makes both tokenizers start a prompt with <|endoftext|>.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

import numpy as np

from examples.qwen2_tiny.config import TinyQwen2Config
from examples.qwen2_tiny.gguf_file import write_gguf
from examples.qwen2_tiny.vocab import END_OF_TEXT, QWEN2_SPLIT, Vocabulary, byte_level_vocabulary
from examples.qwen2_tiny.weights import DEFAULT_SEED, make_weights

GGUF_NAME = "tiny-qwen2.gguf"
HF_DIR = "hf"
PLANT_DELTA = 0.5  # a matrix element is ~N(0, 1/fan_in): a change of several standard deviations


@dataclasses.dataclass(frozen=True)
class ModelPair:
    gguf: Path
    hf: Path
    config: TinyQwen2Config
    vocabulary: Vocabulary


def config_for(vocabulary: Vocabulary) -> TinyQwen2Config:
    return TinyQwen2Config(n_vocab=vocabulary.n_vocab)


def make_model_pair(
    directory: str | Path, seed: int = DEFAULT_SEED, add_bos: bool = False, plant: str | None = None
) -> ModelPair:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    vocabulary = byte_level_vocabulary(add_bos)
    config = config_for(vocabulary)
    weights = make_weights(config, seed)
    gguf_path = write_gguf(directory / GGUF_NAME, weights, config, vocabulary)
    if plant is not None:
        if plant not in weights:
            raise KeyError(f"no tensor {plant!r} to plant a change in (one of {', '.join(weights)})")
        weights = dict(weights)
        changed = weights[plant].copy()
        changed.flat[0] += PLANT_DELTA
        weights[plant] = changed
    hf_dir = write_hf_dir(directory / HF_DIR, weights, config, vocabulary)
    return ModelPair(gguf_path, hf_dir, config, vocabulary)


def write_hf_dir(
    directory: Path, weights: dict[str, np.ndarray], config: TinyQwen2Config, vocabulary: Vocabulary
) -> Path:
    import torch
    from transformers import Qwen2ForCausalLM

    from examples.qwen2_tiny.hf_model import hf_config, hf_state_dict

    model = Qwen2ForCausalLM(hf_config(config))
    model.load_state_dict(hf_state_dict(weights, config, model), strict=True)
    model.config.bos_token_id = vocabulary.end_of_text
    model.config.eos_token_id = vocabulary.end_of_text
    with torch.no_grad():
        model.save_pretrained(directory)
    write_tokenizer(directory, vocabulary)
    return directory


def write_tokenizer(directory: Path, vocabulary: Vocabulary) -> None:
    """tokenizer.json (the `tokenizers` library's own serialisation) and tokenizer_config.json."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers, processors

    ids = vocabulary.ids()
    tokenizer = Tokenizer(models.BPE(vocab=ids, merges=list(vocabulary.merges), fuse_unk=False, byte_fallback=False))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens([AddedToken(END_OF_TEXT, special=True, normalized=False)])
    if vocabulary.add_bos:
        tokenizer.post_processor = processors.TemplateProcessing(
            single=f"{END_OF_TEXT} $A", special_tokens=[(END_OF_TEXT, vocabulary.end_of_text)]
        )
    tokenizer.save(str(directory / "tokenizer.json"))
    settings = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": END_OF_TEXT if vocabulary.add_bos else None,
        "eos_token": END_OF_TEXT,
        "add_bos_token": vocabulary.add_bos,
        "model_max_length": 64,
    }
    (directory / "tokenizer_config.json").write_text(json.dumps(settings, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m examples.qwen2_tiny.model_pair",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("directory", type=Path, help=f"where {GGUF_NAME} and {HF_DIR}/ are written")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"weights seed (default {DEFAULT_SEED})")
    parser.add_argument("--add-bos", action="store_true", help="prompts start with <|endoftext|> (both tokenizers)")
    parser.add_argument("--plant", metavar="NAME", help="change one weight of tensor NAME in the HF copy only")
    args = parser.parse_args(argv)
    try:
        pair = make_model_pair(args.directory, args.seed, args.add_bos, args.plant)
    except KeyError as exc:
        print(f"model_pair: error: {exc.args[0]}", file=sys.stderr)
        return 2
    print(pair.gguf)
    print(pair.hf)
    return 0


if __name__ == "__main__":
    sys.exit(main())
