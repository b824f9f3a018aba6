"""Logits math, in one place for `orchlog compare`, `--per-token` and the equivalence guardrail.

Everything takes two 1-D logits vectors over the same vocabulary: `a` the
reference, `b` the engine under test. Softmax is taken in f64 after
subtracting the maximum, so huge logits neither overflow nor lose the
small probabilities KL depends on; exp and log are the C library's
(kernels.exp, math.log), so a KL has the same bits on every machine.
"""

from __future__ import annotations

import math

import numpy as np

from orchlog import kernels
from orchlog.compare.measuring.tensor_metrics import tensor_diff
from orchlog.records import record


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """log(softmax(x)) in f64, stable for any finite logits."""
    x = np.asarray(logits, dtype=np.float64)
    shifted = x - np.max(x)
    out: np.ndarray = shifted - math.log(float(np.sum(kernels.exp(shifted))))  # the sum is >= 1, or NaN
    return out


def kl_divergence(ref_logits: np.ndarray, test_logits: np.ndarray) -> float:
    """KL(P_ref || P_test) in nats: what is lost describing the reference's distribution with ours."""
    lp, lq = log_softmax(ref_logits), log_softmax(test_logits)
    p = kernels.exp(lp)
    return float(max(0.0, np.sum(p * (lp - lq))))


def top1(logits: np.ndarray) -> int:
    """The argmax (first one on ties; NaN never wins)."""
    x = np.asarray(logits, dtype=np.float64)
    return int(np.argmax(np.where(np.isnan(x), -np.inf, x)))


def rank_of(logits: np.ndarray, token_id: int) -> int:
    """1-based rank of a token: 1 + how many tokens score strictly higher (ties share the better rank)."""
    x = np.asarray(logits, dtype=np.float64)
    if not 0 <= token_id < x.size:
        raise ValueError(f"token {token_id} is outside the vocabulary of {x.size}")
    target = x[token_id]
    if math.isnan(target):
        return x.size
    return int(np.count_nonzero(x > target)) + 1


@record(frozen=True)
class LogitsDiff:
    cosine: float
    l2: float
    max_abs: float
    p99_abs: float
    top1_a: int
    top1_b: int
    kl: float
    rank_a: int | None = None  # of the tracked token
    rank_b: int | None = None

    @property
    def top1_match(self) -> bool:
        return self.top1_a == self.top1_b


@record(frozen=True)
class Agreement:
    """What only logits have: each side's top-1, KL from the reference, the tracked token's ranks."""

    top1_a: int
    top1_b: int
    kl: float  # NaN when either side holds NaN or Inf
    rank_a: int | None = None
    rank_b: int | None = None


def agreement(a: np.ndarray, b: np.ndarray, track_token: int | None = None) -> Agreement:
    """Top-1, KL and ranks for two logits vectors of the same length."""
    n = a.size
    if n == 0:
        return Agreement(-1, -1, math.nan)
    finite = bool(np.isfinite(a).all() and np.isfinite(b).all())
    ranks: tuple[int | None, int | None] = (None, None)
    if track_token is not None and 0 <= track_token < n:
        ranks = (rank_of(a, track_token), rank_of(b, track_token))
    return Agreement(top1(a), top1(b), kl_divergence(a, b) if finite else math.nan, *ranks)


def logits_diff(a: np.ndarray, b: np.ndarray, track_token: int | None = None) -> LogitsDiff:
    """Every logits metric for one position (over the common prefix when the vocabularies differ)."""
    n = min(a.size, b.size)
    a, b = np.asarray(a).reshape(-1)[:n], np.asarray(b).reshape(-1)[:n]
    d = tensor_diff(a, b)
    g = agreement(a, b, track_token)
    return LogitsDiff(d.cosine, d.l2, d.max_abs, d.p99_abs, g.top1_a, g.top1_b, g.kl, g.rank_a, g.rank_b)
