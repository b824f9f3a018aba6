"""`rotation_within_heads`: every head keeps its length, its direction differs (RoPE's variant, pairing,
position or theta). RoPE turns pairs of elements: NEOX style pairs i with i + d/2 within each head of size d,
GPT-J style pairs 2i with 2i + 1; a rotation keeps each pair's length."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from orchlog.diagnose.case import Case, Pair
from orchlog.diagnose.finding import Finding
from orchlog.diagnose.signatures.layout import rearranged
from orchlog.diagnose.stats import P_CLAIM, at_most_p, energy
from orchlog.records import record

HEAD_DIMS = (128, 64, 256, 96, 80, 32, 16, 160, 112, 48)
PAIRINGS = {"neox": "pairs (i, i + d/2)", "gptj": "pairs (2i, 2i + 1)"}
RADIAL_CLAIM = 0.02  # claims when lengths account for at most 2% of the difference's energy
NOISE = 1e-5  # tokens whose relative difference is below this agree (float32 rounding)
MAX_SHIFT = 32  # extra rotations of pair 0 named as whole positions: -32..32 (unambiguous mod 2 pi at 0.005 rad)


def _pairs(x: np.ndarray, head_dim: int, pairing: str) -> tuple[np.ndarray, np.ndarray]:
    h = x.reshape(-1, head_dim)
    if pairing == "neox":
        return h[:, : head_dim // 2], h[:, head_dim // 2 :]
    return h[:, 0::2], h[:, 1::2]


@record(frozen=True)
class _Fit:
    head_dim: int
    pairing: str | None  # None: per-head lengths kept, no pairing's lengths kept
    radial: float  # share of the difference's energy in lengths
    p: float


def _candidates(pair: Pair) -> list[int]:
    shape, n = pair.ref.shape or (), pair.ref.values.size
    if len(shape) >= 2 and shape[-1] % 2 == 0 and shape[-1] >= 2:
        return [shape[-1]]
    return [d for d in HEAD_DIMS if d <= n and n % d == 0]


def _best_fit(r: np.ndarray, o: np.ndarray, dims: list[int]) -> _Fit | None:
    total = energy(o - r)
    if total == 0 or not dims:
        return None
    tries = len(dims) * (len(PAIRINGS) + 1)
    best: _Fit | None = None
    for d in dims:
        for pairing in PAIRINGS:
            ar, br = _pairs(r, d, pairing)
            ao, bo = _pairs(o, d, pairing)
            lr, lo = np.hypot(ar, br), np.hypot(ao, bo)
            live = int(((lr > 0) | (lo > 0)).sum())  # pairs that are zero on both sides witness nothing
            radial = energy(lo - lr) / total
            fit = _Fit(d, pairing, radial, min(1.0, tries * at_most_p(radial, live, 2 * live)))
            if best is None or fit.p < best.p:
                best = fit
        heads = r.size // d
        radial = energy(np.linalg.norm(o.reshape(heads, d), axis=1) - np.linalg.norm(r.reshape(heads, d), axis=1))
        fit = _Fit(d, None, radial / total, min(1.0, tries * at_most_p(radial / total, heads, r.size)))
        if best is None or fit.p < best.p:
            best = fit
    return best


def extra_turn(r: np.ndarray, o: np.ndarray, head_dim: int, pairing: str) -> float | None:
    """How far ours' first pair is turned past the reference's, in radians (the same in every head), or None."""
    ar, br = _pairs(r, head_dim, pairing)
    ao, bo = _pairs(o, head_dim, pairing)
    turn = np.exp(1j * (np.angle(ao[:, 0] + 1j * bo[:, 0]) - np.angle(ar[:, 0] + 1j * br[:, 0])))
    mean = turn.mean()
    return float(np.angle(mean)) if abs(mean) > 0.99 else None


def whole_positions(turn: float) -> int | None:
    """The first pair turns by one radian per position (theta^0 = 1 in every RoPE variant): the whole number
    of positions `turn` is, modulo 2 pi, within 0.005 rad; None when none is."""
    for m in sorted(range(-MAX_SHIFT, MAX_SHIFT + 1), key=abs):
        if abs(math.remainder(turn - m, 2 * math.pi)) < 0.005:
            return m
    return None


def rotation_within_heads(case: Case) -> Finding | None:
    """Tries head sizes (the record's last dimension, else common ones dividing its size) and both pairings;
    claims when lengths (of pairs, or of whole heads) hold <= 2% of the difference's energy with noise-null
    p < 1e-6 (Bonferroni over the tries). Then names how far the first pair turned, in whole positions, at
    every token it can: equal to the position (RoPE applied twice), constant (a position offset), or neither.
    Whole tensors only. Confidence: 1 - the radial share."""
    pair = case.pair
    if not pair.full:
        return None
    r, o = pair.common()
    if r.size != pair.ref.values.size or rearranged(r, o):
        return None  # the same values in another order: a permutation, which keeps lengths too
    fit = _best_fit(r, o, _candidates(pair))
    if fit is None or fit.radial > RADIAL_CLAIM or fit.p >= P_CLAIM:
        return None
    cos = float(np.dot(r, o) / (np.linalg.norm(r) * np.linalg.norm(o))) if r.any() and o.any() else 0.0
    evidence: dict[str, Any] = {"head_dim": fit.head_dim, "pairing": fit.pairing or "none", "length_share": fit.radial}
    evidence["cosine"] = cos
    if fit.pairing is None:
        message = (
            f"every head of {fit.head_dim} keeps its length but no RoPE pairing keeps its pairs' lengths "
            f"(cosine {cos:.4g}): rotated with another pairing (NEOX against GPT-J layout)"
        )
        return Finding("rotation_within_heads", 1.0 - fit.radial, evidence, message)
    message = (
        f"{PAIRINGS[fit.pairing]} keep their lengths within every head of {fit.head_dim}, directions differ "
        f"(cosine {cos:.4g}): a {fit.pairing.upper()}-style rotation by another angle"
    )
    shifts = _shifts(case, fit)
    if shifts:
        evidence["extra_positions"] = [m for _, m in shifts]
        evidence["at_tokens"] = [t for t, _ in shifts]
        message += _shift_story(shifts)
    else:
        message += " (RoPE at another position, with another theta or applied twice)"
    return Finding("rotation_within_heads", 1.0 - fit.radial, evidence, message)


def _shifts(case: Case, fit: _Fit) -> list[tuple[int, int]]:
    """(token, extra whole positions) at the tokens that differ beyond float noise by a turn of whole positions."""
    out = []
    for p in case.tokens or [case.pair]:
        if not p.full or p.where.token_idx is None or p.ref.values.size != case.pair.ref.values.size:
            continue
        r, o = p.common()
        if r.size != p.ref.values.size or np.linalg.norm(o - r) <= NOISE * np.linalg.norm(r):
            continue
        turn = extra_turn(r, o, fit.head_dim, fit.pairing or "neox")
        m = whole_positions(turn) if turn is not None else None
        if m is not None:
            out.append((p.where.token_idx, m))
    return out


def _shift_story(shifts: list[tuple[int, int]]) -> str:
    tokens, ms = [t for t, _ in shifts], [m for _, m in shifts]
    listed = ", ".join(f"{m:+d} at token {t}" for t, m in shifts[:6])
    if len(shifts) >= 2 and tokens == ms:
        return f"; the extra turn equals the position ({listed}): RoPE applied twice"
    if len(shifts) >= 2 and tokens == [-m for m in ms]:
        return f"; the extra turn undoes the position ({listed}): RoPE not applied in ours"
    if len(set(ms)) == 1 and len(shifts) >= 2:
        span = f"tokens {tokens[0]} to {tokens[-1]}" if tokens == list(range(tokens[0], tokens[-1] + 1)) else "tokens"
        return f"; {ms[0]:+d} position(s) at each of the {len(shifts)} {span} that differ: a position offset"
    if len(shifts) == 1:
        m, t = ms[0], tokens[0]
        twice = f", or RoPE applied twice (at position {t})" if m == t else ""
        return f"; {m:+d} position(s) at token {t}: a position offset{twice}"
    return f"; extra positions {listed}"
