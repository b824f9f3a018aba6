"""`equals_other_checkpoint`: ours equals the reference's value somewhere else in the run: at an earlier
stage (a skipped op, a missing residual), a later one (an op applied twice), another token (an off-by-one
position) or another layer (a layer skipped or repeated)."""

from __future__ import annotations

import math

import numpy as np

from orchlog.diagnose.case import Case, Reference, Side
from orchlog.diagnose.finding import THIN, Finding
from orchlog.diagnose.stats import noise_share

CLOSE = 0.01  # ours is within 1% of the divergence's size from the other value
SUMMARY_REL = 1e-5  # leading values and stats agreeing this closely (relative) on a summary

_CAUSES = {
    "earlier": "the ops between them were skipped (a missing residual add, bias, norm or projection)",
    "later": "ours ran ahead: an op applied twice or in the wrong order",
    "other_token": "ours reads another position (an off-by-one position or token, a shifted cache)",
    "other_layer": "a layer skipped, repeated or its weights taken from another layer",
}


def _full_gap(o: np.ndarray, base: float, ref: np.ndarray, candidate: np.ndarray) -> float | None:
    if candidate.size != o.size or not np.isfinite(candidate).all():
        return None
    if float(np.linalg.norm(candidate - ref)) <= 0.1 * base:
        return None  # the candidate is the reference's own value again (a view, a copy)
    return float(np.linalg.norm(o - candidate)) / base


def _summary_match(ours: Side, ref: Side, other: Side) -> bool:
    """On summaries: the same hash, or leading values and stats that agree to SUMMARY_REL (and differ from
    the reference's own)."""
    if ours.blake3 and other.blake3 and ours.dtype == other.dtype:
        return ours.blake3 == other.blake3 and other.blake3 != ref.blake3
    n = min(ours.values.size, other.values.size)
    if n < 4:
        return False
    a, b = ours.values[:n], other.values[:n]
    scale = max(float(np.abs(b).max()), 1e-30)
    if float(np.abs(a - b).max()) > SUMMARY_REL * scale:
        return False
    sa, sb = ours.stats or {}, other.stats or {}
    shared = [k for k in ("min", "max", "mean", "rms") if k in sa and k in sb]
    return len(shared) >= 2 and all(abs(sa[k] - sb[k]) <= SUMMARY_REL * max(abs(sb[k]), 1e-30) for k in shared)


def equals_other_checkpoint(case: Case) -> Finding | None:
    """Looks through the reference's other records (same token: every stage; same checkpoint: other tokens
    and layers) for one that ours equals: within 1% of the divergence's size (|ours - other| <= 0.01 x
    |ours - ref|), skipping values equal to the reference's own; against a noisy reference, within what its
    measured noise accounts for of the divergence (sqrt of stats.noise_share: ours computed the other value
    itself, noise and all). On summaries: an equal hash, or leading values and stats agreeing to 1e-5.
    Confidence: 1 - that ratio; 0.6 on a summary."""
    pair = case.pair
    best: tuple[float, Reference] | None = None
    close = max(CLOSE, math.sqrt(noise_share()))
    if pair.full:
        r, o = pair.ref.values, pair.ours.values
        base = float(np.linalg.norm(o - r))
        if base == 0 or not np.isfinite(base):
            return None
        for cand in case.pool:
            side = cand.side()
            if not side.full:
                continue
            gap = _full_gap(o, base, r, side.values)
            if gap is not None and gap <= close and (best is None or gap < best[0]):
                best = (gap, cand)
        confidence = None if best is None else 1.0 - best[0]
    else:
        matches = [c for c in case.pool if _summary_match(pair.ours, pair.ref, c.side())]
        if matches:
            best = (0.0, matches[0])
        confidence = THIN if best is not None else None
    if best is None or confidence is None:
        return None
    gap, other = best
    evidence = {
        "checkpoint": other.where.checkpoint,
        "layer": other.where.layer,
        "stage": other.where.stage,
        "token_idx": other.where.token_idx,
        "relation": other.relation,
        "gap": gap,
    }
    message = f"ours equals the reference's {other.where.label()} (to {gap:.2g} of the divergence): "
    if other.relation == "other_token" and other.where.token_idx is not None and pair.where.token_idx is not None:
        shift = pair.where.token_idx - other.where.token_idx
        evidence["token_shift"] = shift
        message += f"ours is {abs(shift)} position(s) {'behind' if shift > 0 else 'ahead'}; " + _CAUSES["other_token"]
    else:
        message += _CAUSES[other.relation]
    return Finding("equals_other_checkpoint", confidence, evidence, message)
