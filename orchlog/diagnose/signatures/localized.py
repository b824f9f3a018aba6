"""`localized`: the difference sits in one slice (one head, one KV cell, one row, one run of elements)."""

from __future__ import annotations

import numpy as np

from orchlog.diagnose.case import Case
from orchlog.diagnose.finding import Finding
from orchlog.diagnose.signatures.layout import rearranged
from orchlog.diagnose.stats import P_CLAIM, explained_p, relative_energy

SHARE_CLAIM = 0.95
MAX_WINDOW = 1 / 8  # a run of elements counts as a slice up to an eighth of the tensor


def _shortest_window(e: np.ndarray, share: float) -> tuple[int, int]:
    """The shortest run [a, b) of e holding at least `share` of its sum."""
    c = np.r_[0.0, np.cumsum(e)]
    ends = np.arange(1, len(c))
    # For each end b, the latest start a with c[b] - c[a] >= share * total.
    starts = np.searchsorted(c, c[1:] - share * c[-1], side="right") - 1
    ok = starts >= 0
    if not ok.any():
        return 0, len(e)
    widths = np.where(ok, ends - starts, len(e) + 1)
    b = int(np.argmin(widths))
    return int(starts[b]), int(ends[b])


def localized(case: Case) -> Finding | None:
    """Weights each element's squared difference by its noise scale (the reference's value squared plus
    (0.1 rms)^2, the rms taken per element over tokens when three or more are at hand), then looks for one index along an axis of the shape, or one run of at most an eighth of
    the elements, holding >= 95% of it, with noise-null p < 1e-6 (Bonferroni over the indices or runs).
    Whole tensors only. Confidence: that share."""
    pair = case.pair
    if not pair.full or pair.ref.values.size != pair.ours.values.size:
        return None
    r, o = pair.ref.values, pair.ours.values
    if r.size < 4 or not (np.isfinite(r).all() and np.isfinite(o).all()) or rearranged(r, o):
        return None  # (values moved rather than changed: a layout signature names that)
    typical = case.typical()
    e = relative_energy(r, o, typical if typical is not None and typical.size == r.size else None)
    total = float(e.sum())
    if total == 0:
        return None
    n = r.size
    best = None
    dims = tuple(pair.ref.shape or (n,))
    if len(dims) >= 2 and int(np.prod(dims)) == n:
        arr = e.reshape(dims)
        for axis, m in enumerate(dims):
            if m < 2:
                continue
            per = np.moveaxis(arr, axis, 0).reshape(m, -1).sum(axis=1)
            k = int(np.argmax(per))
            share = float(per[k]) / total
            p = min(1.0, m * explained_p(share, n // m, n))
            if share >= SHARE_CLAIM and p < P_CLAIM and (best is None or p < best[0]):
                best = (p, share, {"axis": axis, "index": k, "axis_size": m})
    a, b = _shortest_window(e, SHARE_CLAIM)
    share = float(e[a:b].sum()) / total
    if b - a <= max(1, int(MAX_WINDOW * n)):
        p = min(1.0, n * explained_p(share, b - a, n))
        if p < P_CLAIM and (best is None or p < best[0]):
            best = (p, share, {"start": a, "stop": b})
    if best is None:
        return None
    _, share, where = best
    evidence = {**where, "share": share, "elements": n}
    if "axis" in where:
        place = f"index {where['index']} of axis {where['axis']} (of {where['axis_size']})"
    elif where["stop"] - where["start"] == 1:
        place = f"element {where['start']}"
    else:
        place = f"elements {where['start']} to {where['stop'] - 1}"
    message = (
        f"{share:.1%} of the difference is in {place}: one head, KV cell, row or block computed differently "
        "(a wrong index or offset, a stale cache entry, a race)"
    )
    return Finding("localized", share, evidence, message)
