"""`support_change`: ours is non-zero where the reference is exactly zero, or zero where it is not (a mask
off by one, dropped or padded tokens)."""

from __future__ import annotations

from typing import Any

import numpy as np

from orchlog.diagnose.case import Case
from orchlog.diagnose.finding import Finding
from orchlog.diagnose.signatures.layout import rearranged
from orchlog.diagnose.stats import median, relative_energy

SHARE_CLAIM = 0.8
NEGLIGIBLE = 1e-6  # values below this fraction of a side's largest magnitude count as zero-ish (flushed denormals)
OUTSIDE_CLAIM = 1e-3
SUBSTANTIAL = 0.1


def _columns(mask: np.ndarray, shape: tuple[int, ...] | None) -> list[int] | None:
    """When the changed places sit at the same last-axis indices in every row that has any: those indices."""
    if not shape or len(shape) < 2:
        return None
    rows = mask.reshape(-1, shape[-1])
    hit = rows[rows.any(axis=1)]
    if len(hit) < 2 or not (hit == hit[0]).all():
        return None
    columns: list[int] = np.flatnonzero(hit[0]).tolist()
    return columns


def support_change(case: Case) -> Finding | None:
    """Places where one side is exactly zero and the other is not negligibly so (above 1e-6 of its largest
    magnitude, so flushed denormals do not count). Claims when those places hold >= 80% of the difference's
    energy (each element weighted by the noise it could carry, see `relative_energy`), the values there are (median) at least a tenth of the reference's median non-zero magnitude,
    and, where they are (90% or more of) all of the other side's zeros, the rest agrees to 0.1% of its rms (the support is all that changed,
    not noise poured over a sparse tensor). Whole tensors only. Confidence: that energy share."""
    pair = case.pair
    if not pair.full:
        return None
    r, o = pair.ref.values, pair.ours.values
    if r.size != o.size or not (np.isfinite(r).all() and np.isfinite(o).all()):
        return None
    d = o - r
    e = relative_energy(r, o)
    total = float(e.sum())
    if total == 0 or rearranged(r, o):
        return None  # (values moved rather than changed: a layout signature names that)
    extra = (r == 0) & (np.abs(o) > NEGLIGIBLE * np.abs(o).max())
    dropped = (o == 0) & (np.abs(r) > NEGLIGIBLE * np.abs(r).max())
    changed = extra | dropped
    if not changed.any():
        return None
    share = float(e[changed].sum()) / total
    if share < SHARE_CLAIM:
        return None
    # The values that appeared (or vanished) are of the size of the tensor's others: a position seen or
    # dropped, not a little noise where there was none.
    typical = median(np.abs(r[r != 0])) if (r != 0).any() else 0.0
    moved = np.abs(np.where(extra, o, r))[changed]
    if median(moved) < SUBSTANTIAL * typical:
        return None
    nearly_all = 0.9 * max(int(extra.any()) * int((r == 0).sum()), int(dropped.any()) * int((o == 0).sum()))
    if max(extra.sum(), dropped.sum()) >= nearly_all:
        rest = ~changed & (r != 0)
        scale = float(np.sqrt(np.mean(np.square(r[rest])))) if rest.any() else 0.0
        if not rest.any() or float(np.sqrt(np.mean(np.square(d[rest])))) > OUTSIDE_CLAIM * scale:
            return None
    shape = pair.ref.shape
    evidence: dict[str, Any] = {
        "nonzero_where_reference_zero": int(extra.sum()),
        "zero_where_reference_nonzero": int(dropped.sum()),
        "reference_zeros": int((r == 0).sum()),
        "share": share,
        "first_places": np.flatnonzero(changed)[:8].tolist(),
    }
    cols = _columns(changed, shape)
    where = ""
    if cols is not None:
        evidence["columns"] = cols[:16]
        where = f" at last-axis index {cols[:8]} of every row that changed"
    parts = []
    if extra.any():
        parts.append(f"non-zero at {int(extra.sum())} places where the reference is exactly zero")
    if dropped.any():
        parts.append(f"zero at {int(dropped.sum())} places where the reference is not")
    message = (
        f"ours is {' and '.join(parts)}{where} ({share:.1%} of the difference there): a mask or length off "
        "(one position more or fewer seen), dropped or padded tokens"
    )
    return Finding("support_change", share, evidence, message)
