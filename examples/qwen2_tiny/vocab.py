"""A real byte-level BPE vocabulary for the tiny Qwen2, made here (no hub): the 256 bytes as GPT-2
writes them, merges learned from a short fixed text, and one special token, `<|endoftext|>`.

The same vocabulary goes into the GGUF (`tokenizer.ggml.model = "gpt2"`, pre-tokenizer `qwen2`, which
llama.cpp tokenizes with) and into the HF directory's `tokenizer.json` (the `tokenizers` library's BPE
with Qwen2's split pattern and byte-level mapping), so that both engines turn a prompt into the same
ids by their own code. Ids: byte b is id b; merge m is id 256 + m; `<|endoftext|>` is the last id.

The merges are learned by plain BPE over the words of TEXT (the most frequent adjacent pair first,
ties broken by the pair's text), with words split on spaces as GPT-2 does (a space starts a word).
How words were split when learning does not matter for agreement: both tokenizers apply the same
merges to the same pre-tokenized words at run time.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from functools import cache

# Qwen2's pre-tokenizer split pattern (its tokenizer.json), which llama.cpp's "qwen2" pre-type implements.
QWEN2_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
END_OF_TEXT = "<|endoftext|>"
N_MERGES = 63  # 256 bytes + 63 merges + 1 special token = 320 ids

TEXT = (
    "The quick brown fox jumps over the lazy dog. The dog sleeps in the sun, and the fox runs "
    "into the woods. Where does the first difference between two engines appear? In the layer "
    "that computes it, at the token that shows it, in the stage that made it. The reference runs "
    "the same model on the same tokens; the engine under test should agree with it to the last "
    "bit that the arithmetic allows. When it does not, the trace says where."
)


@cache
def byte_symbols() -> tuple[str, ...]:
    """GPT-2's printable stand-in for each byte (`bytes_to_unicode`): symbol b is byte b."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    symbols = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in symbols:
            symbols[b] = chr(256 + extra)
            extra += 1
    return tuple(symbols[b] for b in range(256))


@dataclasses.dataclass(frozen=True)
class Vocabulary:
    tokens: tuple[str, ...]  # by id, in byte-level symbols
    merges: tuple[tuple[str, str], ...]  # in rank order
    end_of_text: int  # the id of <|endoftext|>: end of generation, and BOS when the model adds one
    add_bos: bool  # whether a prompt starts with end_of_text (llama's habit; Qwen2 adds none)

    @property
    def n_vocab(self) -> int:
        return len(self.tokens)

    def ids(self) -> dict[str, int]:
        return {token: i for i, token in enumerate(self.tokens)}


def _words(text: str) -> list[str]:
    """Words as GPT-2 splits them, a leading space kept, in byte-level symbols."""
    symbols = byte_symbols()
    return ["".join(symbols[b] for b in word.encode()) for word in re.findall(r" ?[^ ]+", text)]


def learn_merges(text: str = TEXT, n_merges: int = N_MERGES) -> tuple[tuple[str, str], ...]:
    words = Counter(tuple(word) for word in _words(text))
    merges: list[tuple[str, str]] = []
    while len(merges) < n_merges:
        pairs: Counter[tuple[str, str]] = Counter()
        for word, count in words.items():
            for pair in zip(word, word[1:]):
                pairs[pair] += count
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        merges.append(best)
        merged: Counter[tuple[str, ...]] = Counter()
        for word, count in words.items():
            out: list[str] = []
            i = 0
            while i < len(word):
                if i + 1 < len(word) and (word[i], word[i + 1]) == best:
                    out.append(word[i] + word[i + 1])
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            merged[tuple(out)] += count
        words = merged
    return tuple(merges)


def byte_level_vocabulary(add_bos: bool = False) -> Vocabulary:
    merges = learn_merges()
    tokens = (*byte_symbols(), *(a + b for a, b in merges), END_OF_TEXT)
    if len(set(tokens)) != len(tokens):
        raise ValueError("two merges make the same token")  # not the case for TEXT; kept as a guard
    return Vocabulary(tokens=tokens, merges=merges, end_of_text=len(tokens) - 1, add_bos=add_bos)
