"""Multiplicative signatures: one factor (`scale`), one per token (`per_token_scale`), one per channel
(`per_channel_scale`), and a per-row slope between log-probabilities (`softmax_temperature`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from orchlog.diagnose.case import Case, Pair
from orchlog.diagnose.finding import THIN, Finding
from orchlog.diagnose.signatures.layout import rearranged
from orchlog.diagnose.stats import (
    claims,
    effective_count,
    energy,
    explained_needed,
    explained_p,
    median,
    nice_factor,
)
from orchlog.records import record

# A head size in a shape (n_head, head_dim) helps name a factor of sqrt(head_dim).
_MIN_VALUES = 3


@record(frozen=True)
class ScaleFit:
    factor: float
    explained: float  # share of |ours - ref|^2 that ours = factor * ref accounts for
    p: float  # chance of that under the noise null
    stderr: float
    n: int

    @property
    def claims(self) -> bool:
        return claims(self.explained, self.p)


def noise_scale(r: np.ndarray) -> np.ndarray:
    """How much float noise each element can carry: its own size, floored at a tenth of the rms (noise grows
    with the values, and values near zero still carry some)."""
    floor = 0.1 * float(np.sqrt(np.mean(np.square(r)))) if r.size else 0.0
    scale: np.ndarray = np.sqrt(np.square(r) + floor * floor)
    return scale


def fit_scale(r: np.ndarray, o: np.ndarray) -> ScaleFit | None:
    """Least-squares ours = c * ref, each element weighted by its noise scale; None when there is nothing
    to fit."""
    n = r.size
    if n < _MIN_VALUES or not r.any():
        return None
    s = noise_scale(r)
    rw, ow = r / s, o / s
    rr = float(np.dot(rw, rw))
    total = energy(ow - rw)
    if rr == 0 or total == 0:
        return None
    c = float(np.dot(ow, rw)) / rr
    resid = energy(ow - c * rw)
    explained = max(0.0, 1.0 - resid / total)
    p = explained_p(explained, 1, min(n, effective_count(ow - rw)))
    return ScaleFit(c, explained, p, math.sqrt(resid / max(n - 1, 1) / rr), n)


def token_fits(case: Case) -> list[tuple[Pair, ScaleFit]]:
    out = []
    for p in case.token_pairs():
        fit = fit_scale(*p.linear())
        if fit is not None:
            out.append((p, fit))
    return out


def factors_differ(fits: list[ScaleFit]) -> bool:
    """Whether per-token factors differ by more than their fits' uncertainty (and float32 rounding)."""
    cs = np.array([f.factor for f in fits])
    spread = float(cs.max() - cs.min())
    return spread > max(10 * max(f.stderr for f in fits), 1e-6 * median(np.abs(cs)))


def _head_dims(case: Case) -> tuple[int, ...]:
    shape = case.pair.ref.shape or ()
    return (shape[-1],) if len(shape) >= 2 else ()


def _rms_consistent(case: Case, c: float) -> bool | None:
    """On a summary: whether the whole tensors' rms agree with the factor (None when the stats are absent)."""
    sa, sb = case.pair.ref.stats or {}, case.pair.ours.stats or {}
    if "rms" not in sa or "rms" not in sb or not sa["rms"]:
        return None
    return abs(sb["rms"] / sa["rms"] / abs(c) - 1) < 0.01 if c else False


def scale(case: Case) -> Finding | None:
    """ours = c * ref. Claims when the single factor explains >= 90% of the difference's energy (elements
    weighted by their noise scale, see `noise_scale`) with noise-null p < 1e-6 (over the effective count of
    values the difference is spread over), unless other tokens show different factors (then it is `per_token_scale`). On a summary the
    whole-tensor rms must agree with c to 1%. Confidence: the explained share (x0.6 on a summary)."""
    if case.is_logits:
        return None  # logits scaled by c are a softmax temperature, which that signature names
    fit = fit_scale(*case.pair.linear())
    if fit is None or not fit.claims:
        return None
    claimed = [f for _, f in token_fits(case) if f.claims]
    if len(claimed) >= 2 and factors_differ(claimed):
        return None
    evidence: dict[str, Any] = {"factor": fit.factor, "explained": fit.explained, "values": fit.n}
    if case.thin:
        consistent = _rms_consistent(case, fit.factor)
        if consistent is False:
            return None
        evidence["rms_agrees"] = bool(consistent)
    if len(claimed) >= 2:
        evidence["tokens_with_this_factor"] = len(claimed)
    nice = nice_factor(fit.factor, _head_dims(case))
    if nice:
        evidence["factor_is"] = nice
    same = f", the same at {len(claimed)} tokens" if len(claimed) >= 2 else ""
    if len(case.token_pairs()) < 2:
        same = "; one token seen, so a per-token factor cannot be told from a constant"
        evidence["tokens_seen"] = 1
    message = f"ours = {fit.factor:.6g} x reference ({fit.explained:.1%} of the difference explained{same})"
    message += (
        f"; the factor is {nice}: a missing or extra constant (a 1/sqrt(d) scale, a factor 2)"
        if nice
        else (": a constant factor missing or extra (a scale, a temperature, a unit)")
    )
    return Finding("scale", fit.explained * (THIN if case.thin else 1.0), evidence, message)


def per_token_scale(case: Case) -> Finding | None:
    """ours_t = c_t * ref_t with factors that differ across tokens. Claims when at least two tokens (and 3/4
    of those that differ) fit a factor as `scale` would claim it, and the factors differ beyond their fits'
    uncertainty. With the reference's input at those tokens, (c_t^2 - 1) * mean(input_t^2) is the epsilon
    difference of an RMS norm; a consistent value (within 5%) is reported. Confidence: the worst explained share."""
    fits = token_fits(case)
    claimed = [(p, f) for p, f in fits if f.claims]
    if len(claimed) < 2 or len(claimed) < 0.75 * len(fits) or not factors_differ([f for _, f in claimed]):
        return None
    cs = np.array([f.factor for _, f in claimed])
    near_one = bool(np.all(np.abs(cs - 1) < 0.1))
    evidence: dict[str, Any] = {
        "tokens": len(claimed),
        "factor_min": float(cs.min()),
        "factor_max": float(cs.max()),
        "factor_median": median(cs),
        "explained_min": min(f.explained for _, f in claimed),
        "factors": [float(c) for c in cs[:16]],
    }
    message = (
        f"ours = c x reference with a different c at each token ({cs.min():.6g} to {cs.max():.6g} over "
        f"{len(claimed)} tokens)"
    )
    eps = _epsilon_difference(case, claimed)
    if eps is not None:
        evidence["epsilon_difference"] = eps
        message += (
            f"; (c^2 - 1) x mean(input^2) is {eps:.3g} at every token: an RMS-norm epsilon "
            f"{'smaller' if eps > 0 else 'larger'} by {abs(eps):.3g} in ours"
        )
    elif near_one:
        message += ": all near 1, an epsilon or normalisation difference"
    else:
        message += ": a normalisation done differently (or not at all)"
    confidence = evidence["explained_min"] * (THIN if case.thin else 1.0)
    return Finding("per_token_scale", confidence, evidence, message)


def _epsilon_difference(case: Case, claimed: list[tuple[Pair, ScaleFit]]) -> float | None:
    deltas = []
    for p, f in claimed:
        x = case.token_inputs.get(p.where.token_idx) if p.where.token_idx is not None else None
        if x is None or not x.full or not x.values.size:
            return None
        deltas.append((f.factor**2 - 1) * float(np.mean(np.square(x.values))))
    d = np.array(deltas)
    if len(d) < 2 or not (np.all(d > 0) or np.all(d < 0)) or np.std(d) > 0.05 * abs(np.mean(d)):
        return None
    return float(np.mean(d))


def per_channel_scale(case: Case) -> Finding | None:
    """ours_t[j] = g[j] * ref_t[j] with one vector g for every token, not a constant. Needs 3 tokens or more.
    Held out: each token is predicted from g fitted on the others (elements weighted by their noise scale),
    so noise cannot fit itself. Claims when the held-out prediction explains >= 90% of the difference and
    leaves at most a quarter of what one factor for everything, or one factor per token, leaves (fitted on
    all tokens). Confidence: the held-out explained share."""
    pairs = case.token_pairs()
    if len(pairs) < 3 or (case.pair.full and rearranged(case.pair.ref.values, case.pair.ours.values)):
        return None  # (values moved rather than scaled: a layout signature names that)
    rows = [p.common() for p in pairs]
    n = min(r.size for r, _ in rows)
    if n < _MIN_VALUES:
        return None
    R = np.stack([r[:n] for r, _ in rows])
    Ours = np.stack([o[:n] for _, o in rows])
    S = noise_scale(R)
    if not S.any():
        return None
    Rw, Dw = R / S, (Ours - R) / S
    num, den = np.einsum("tj,tj->j", Dw, Rw), np.einsum("tj,tj->j", Rw, Rw)
    rest = den[None, :] - Rw * Rw  # each channel's fit without token t
    known = rest > 1e-12 * max(float(den.max()), 1e-300)
    g_out = np.where(known, (num[None, :] - Dw * Rw) / np.where(known, rest, 1.0), 0.0)
    total = energy(Dw[known])
    if total == 0 or known.sum() < _MIN_VALUES:
        return None
    resid = energy((Dw - g_out * Rw)[known])
    explained = 1.0 - resid / total
    c_all = float(np.dot(Dw.ravel(), Rw.ravel()) / np.dot(Rw.ravel(), Rw.ravel()))
    c_tok = np.einsum("tj,tj->t", Dw, Rw) / np.maximum(np.einsum("tj,tj->t", Rw, Rw), 1e-300)
    simpler = min(energy((Dw - c_all * Rw)[known]), energy((Dw - c_tok[:, None] * Rw)[known]))
    if explained < explained_needed() or resid > 0.25 * simpler:
        return None
    live = den > 0
    g = 1.0 + num[live] / den[live]
    evidence = {
        "tokens": len(pairs),
        "channels": int(live.sum()),
        "explained": explained,
        "factor_mean": float(g.mean()),
        "factor_min": float(g.min()),
        "factor_max": float(g.max()),
        "factor_std": float(g.std()),
        "leading_factors": [float(x) for x in g[:8]],
    }
    message = (
        f"ours / reference is the same vector at every token ({len(pairs)} tokens, {int(live.sum())} channels; "
        f"factors {g.min():.4g} to {g.max():.4g}, mean {g.mean():.4g}): a per-channel weight missing, applied "
        "twice or taken from elsewhere (a norm weight)"
    )
    return Finding("per_channel_scale", explained * (THIN if case.thin else 1.0), evidence, message)


def _probability_rows(values: np.ndarray, shape: tuple[int, ...] | None) -> np.ndarray | None:
    if values.size < 4:
        return None
    rows = values.reshape(-1, shape[-1]) if shape and len(shape) >= 2 else values.reshape(1, -1)
    if not np.isfinite(rows).all() or rows.min() < -1e-6 or rows.max() > 1 + 1e-6:
        return None
    if np.abs(rows.sum(axis=1) - 1).max() > 1e-3:
        return None
    return rows


def _temperature_rows(case: Case) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(x, y) rows that softmax_temperature fits: for logits, the pair's rows as they are; for probabilities,
    the log of every row of the pair and of the same checkpoint at every other token held whole (a causal
    attention row at an early token has only a few cells; the same temperature holds in every head and at
    every token, so all of them are evidence), the cells both sides give a probability above 0."""
    xs: list[np.ndarray] = []
    ys: list[np.ndarray] = []
    pair = case.pair
    if case.is_logits:
        r, o = pair.common()
        shape = pair.ref.shape if pair.full and r.size == pair.ref.values.size else None
        if r.size < 4:
            return xs, ys
        x_rows = r.reshape(-1, shape[-1]) if shape and len(shape) >= 2 else r.reshape(1, -1)
        return list(x_rows), list(o.reshape(x_rows.shape))
    for p in case.tokens or [pair]:
        if not p.full or p.ref.values.size != p.ours.values.size:
            continue
        pr, po = _probability_rows(p.ref.values, p.ref.shape), _probability_rows(p.ours.values, p.ref.shape)
        if pr is None or po is None:
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            for x, y in zip(np.log(pr), np.log(po)):
                keep = np.isfinite(x) & np.isfinite(y)
                xs.append(x[keep])
                ys.append(y[keep])
    return xs, ys


def softmax_temperature(case: Case) -> Finding | None:
    """log(ours) = beta * log(ref) + a_row, one slope beta for every row (the last axis): softmax(beta * s)
    against softmax(s). Runs on probabilities (rows in [0, 1] summing to 1; every head at every token of the
    checkpoint held whole) and on logits (raw, where the relation is ours = beta * ref + a_row). Claims when
    one slope shared by all rows explains >= 90% of the log-difference beyond a per-row constant (of what
    the measured noise leaves, stats.explained_needed; noise-null p < 1e-6, one parameter) and the rows' own
    slopes agree with it (median deviation within 5%). Confidence: the explained share."""
    if not case.is_logits and not case.pair.full:
        return None
    xs, ys = _temperature_rows(case)
    rows = [(x - x.mean(), y - y.mean()) for x, y in zip(xs, ys) if x.size >= 2 and np.ptp(x) > 0]
    if not rows:
        return None
    sxx = sum(float(np.dot(xc, xc)) for xc, _ in rows)
    beta = sum(float(np.dot(xc, yc)) for xc, yc in rows) / sxx
    resid = sum(energy(yc - beta * xc) for xc, yc in rows)
    base = sum(energy(yc - xc) for xc, yc in rows)
    used = sum(xc.size - 1 for xc, _ in rows)  # each row's mean is its own parameter
    if base == 0:
        return None
    explained = max(0.0, 1.0 - resid / base)
    p = explained_p(explained, 1, used)
    b = np.array([float(np.dot(xc, yc) / np.dot(xc, xc)) for xc, yc in rows])
    spread = median(np.abs(b - beta))
    if not claims(explained, p) or spread > 0.05 * abs(beta) or abs(beta - 1) < 1e-6:
        return None
    nice = nice_factor(beta, _head_dims(case))
    evidence: dict[str, Any] = {"slope": beta, "rows": len(b), "slope_min": float(b.min()), "slope_max": float(b.max())}
    evidence["explained"] = explained
    if nice:
        evidence["slope_is"] = nice
    what = "logits" if case.is_logits else "log-probabilities"
    message = f"{what} of ours = {beta:.4g} x the reference's, row by row ({len(b)} rows): a softmax temperature"
    message += f"; the slope is {nice}: a 1/sqrt(d) scale missing or applied twice" if nice else ""
    return Finding("softmax_temperature", explained * (THIN if case.thin else 1.0), evidence, message)
