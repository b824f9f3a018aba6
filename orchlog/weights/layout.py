"""Layouts a weight can be stored in, and the relations `orchlog weights` looks for when one does not match.

llama.cpp's converter (convert_hf_to_gguf.py; `LlamaModel.permute` in conversion/llama.py of the llama.cpp
that orchlog/llama builds) permutes the rows of Q and K for llama-family models: within each head,
the rows of the two RoPE halves are interleaved (ggml's RoPE for them turns adjacent pairs):

    permute(w, n_head) = w.reshape(n_head, 2, rows // n_head // 2, ...).swapaxes(1, 2).reshape(w.shape)

`llama_permute` does that (so an HF tensor can be compared with the GGUF one), `llama_unpermute` undoes it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np


def llama_permute(w: np.ndarray, n_head: int) -> np.ndarray:
    rows = w.shape[0]
    permuted: np.ndarray = w.reshape(n_head, 2, rows // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)
    return permuted


def llama_unpermute(w: np.ndarray, n_head: int) -> np.ndarray:
    rows = w.shape[0]
    unpermuted: np.ndarray = w.reshape(n_head, rows // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)
    return unpermuted


def can_permute(w: np.ndarray, n_head: int | None) -> bool:
    return n_head is not None and n_head > 0 and w.ndim >= 1 and w.shape[0] % (2 * n_head) == 0


def matched_rows(a: np.ndarray, b: np.ndarray, seed: int = 0) -> np.ndarray | None:
    """The row order p with b[p] == a (closely), when a's rows are b's rows in another order; None otherwise.

    Rows are matched by their projection on a random vector (sorted), then the match is checked by the caller;
    rows that are (nearly) equal to each other make the order ambiguous, which the check then rejects."""
    if a.ndim != 2 or a.shape != b.shape or a.shape[0] < 2:
        return None
    v = np.random.default_rng(seed).standard_normal(a.shape[1])
    pa, pb = a @ v, b @ v
    perm = np.empty(a.shape[0], dtype=np.int64)
    perm[np.argsort(pa, kind="stable")] = np.argsort(pb, kind="stable")
    return None if np.array_equal(perm, np.arange(a.shape[0])) else perm


def alternatives(
    a: np.ndarray, b: np.ndarray, n_head: int | None
) -> Iterator[tuple[str, str, Callable[[], np.ndarray]]]:
    """(relation, what it means, b seen that way) for the ways b might hold a's values: each is tried only when
    the weight does not match as stored."""
    if b.ndim == 2 and b.T.shape == a.shape:
        yield "transposed", "the other side holds its transpose ([in][out] against [out][in])", lambda: b.T
    if b.size == a.size and b.shape != a.shape and b.shape == tuple(reversed(a.shape)) and b.ndim == 2:
        yield (
            "reshaped",
            "the same bytes read with the dimensions reversed but not transposed (GGUF's ne order taken as NumPy's)",
            lambda: b.reshape(a.shape),
        )
    if n_head is not None and b.shape == a.shape and can_permute(b, n_head):
        heads = n_head
        yield (
            "qk_permuted",
            f"llama.cpp's Q/K row permutation ({n_head} heads) applied on one side only",
            lambda: llama_permute(b, heads),
        )
        yield (
            "qk_unpermuted",
            f"llama.cpp's Q/K row permutation ({n_head} heads) undone on one side only",
            lambda: llama_unpermute(b, heads),
        )
    perm = matched_rows(a, b) if b.shape == a.shape else None
    if perm is not None:
        moved = int((perm != np.arange(len(perm))).sum())
        yield "rows_permuted", f"the same rows in another order ({moved} rows moved)", lambda: b[perm]
