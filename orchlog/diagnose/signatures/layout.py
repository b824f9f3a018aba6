"""Layout signatures: ours holds the reference's values in another order. `transpose`: the reference viewed
with its axes swapped (or reshaped and transposed), or a table read down a column instead of along a row;
`permutation`: any other rearrangement, named when it is a shift, a reversal, a block swap or the same
shuffle within every block (an interleave: the GPT-J against NEOX layout)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator

import numpy as np

from orchlog.diagnose.case import Case, Pair
from orchlog.diagnose.finding import Finding

TIGHT = 1e-3  # a layout explains the difference when it leaves at most 0.1% of its norm
MOVED = 1e-2  # and the difference is at least 1% of the reference's rms: a rearrangement moves values
MAX_VIEWS = 256
MAX_ROWS = 512  # rows matched by distance along one axis; longer axes are not tried


def rearranged(r: np.ndarray, o: np.ndarray) -> bool:
    """Whether ours holds the reference's values (to TIGHT) in another order, and they moved (MOVED)."""
    base = float(np.linalg.norm(o - r))
    # Values so large that the norm overflows say nothing about an order (inf <= inf would say they agree).
    if base == 0 or not math.isfinite(base) or base < MOVED * float(np.linalg.norm(r)):
        return False
    return float(np.linalg.norm(np.sort(o) - np.sort(r))) <= TIGHT * base


def _divisors(n: int) -> list[int]:
    small = [d for d in range(2, math.isqrt(n) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def _views(r: np.ndarray, shape: tuple[int, ...] | None) -> Iterator[tuple[str, np.ndarray]]:
    """(description, flat view) of the reference with its axes permuted, or reshaped and transposed."""
    dims = tuple(d for d in (shape or ()) if d != 1)
    if 2 <= len(dims) <= 4 and math.prod(dims) == r.size:
        arr = r.reshape(dims)
        for axes in itertools.permutations(range(len(dims))):
            if axes != tuple(range(len(dims))):
                yield f"axes {axes} of shape {dims}", arr.transpose(axes).ravel()
    for p in _divisors(r.size)[:MAX_VIEWS]:
        yield f"reshaped ({p}, {r.size // p}) and transposed", r.reshape(p, r.size // p).T.ravel()


def best_view(r: np.ndarray, o: np.ndarray, shape: tuple[int, ...] | None) -> tuple[str, float] | None:
    base = float(np.linalg.norm(o - r))
    if base == 0 or base < MOVED * float(np.linalg.norm(r)):
        return None
    best = None
    for what, view in _views(r, shape):
        gap = float(np.linalg.norm(o - view)) / base
        if best is None or gap < best[1]:
            best = (what, gap)
    return best if best is not None and best[1] <= TIGHT else None


def transpose(case: Case) -> Finding | None:
    """Whole tensors: ours equals a transposed view of the reference to 0.1% of the difference's norm.
    Across tokens: ours' values, looked up exactly among the reference's values of this checkpoint at every
    token (only values that occur once there, zeros left out), are found down one column of the table those
    rows form, at 3 or more places other than their own: a table read [dim][row] instead of [row][dim] (the
    transposed embedding). Confidence: 1 - the gap for a view; 1 - 2^-hits (at most 0.95) for a column read."""
    pair = case.pair
    if pair.full and pair.ref.values.size == pair.ours.values.size:
        found = best_view(pair.ref.values, pair.ours.values, pair.ref.shape)
        if found is not None:
            what, gap = found
            evidence = {"view": what, "gap": gap}
            message = f"ours is the reference {what} (to {gap:.2g} of the difference): a transposed layout"
            return Finding("transpose", 1.0 - gap, evidence, message)
    return _column_read(case)


def _column_read(case: Case) -> Finding | None:
    pairs = [p for p in case.token_pairs() if p.full]
    if len(pairs) < 2:
        return None
    R = np.stack([p.ref.values for p in pairs])
    flat = R.ravel()
    values, first, counts = np.unique(flat, return_index=True, return_counts=True)
    keep = (counts == 1) & (values != 0) & np.isfinite(values)
    values, where = values[keep], first[keep]
    hits_per_token = []
    for t, p in enumerate(pairs):
        o = p.ours.values
        pos = np.searchsorted(values, o)
        pos = np.minimum(pos, max(len(values) - 1, 0))
        found = (values[pos] == o) if len(values) else np.zeros(o.size, dtype=bool)
        d = np.flatnonzero(found)
        rows, cols = np.divmod(where[pos[d]], R.shape[1])
        elsewhere = ~((rows == t) & (cols == d))
        d, rows, cols = d[elsewhere], rows[elsewhere], cols[elsewhere]
        if len(d) >= 2:
            col_values, col_counts = np.unique(cols, return_counts=True)
            top = int(col_values[np.argmax(col_counts)])
            if col_counts.max() < 0.9 * len(d) or len(set(rows[cols == top].tolist())) < 2:
                return None
            hits_per_token.append((p.where.token_idx, top, int(col_counts.max())))
    hits = sum(h for _, _, h in hits_per_token)
    if hits < 3:
        return None
    evidence = {
        "hits": hits,
        "tokens_with_hits": len(hits_per_token),
        "columns": [c for _, c, _ in hits_per_token[:8]],
        "at_tokens": [t for t, _, _ in hits_per_token[:8]],
    }
    token, column, _ = hits_per_token[0]
    message = (
        f"ours' values at token {token} are the reference's values of column {column} at other tokens "
        f"({hits} values found, each token's in one column): a table read down a column instead of along "
        "a row (indexed [dim][row] instead of [row][dim]: transposed)"
    )
    return Finding("transpose", min(0.95, 1.0 - 2.0**-hits), evidence, message)


def _match_rows(r: np.ndarray, o: np.ndarray) -> np.ndarray | None:
    """For (m, k) arrays, the row of r closest to each row of o, when that is a bijection."""
    dist = (o * o).sum(1)[:, None] + (r * r).sum(1)[None, :] - 2.0 * o @ r.T
    perm = np.argmin(dist, axis=1)
    return perm if len(set(perm.tolist())) == len(perm) else None


def _flat_permutation(r: np.ndarray, o: np.ndarray) -> np.ndarray:
    perm = np.empty(r.size, dtype=np.int64)
    perm[np.argsort(o, kind="stable")] = np.argsort(r, kind="stable")
    return perm


def _within_blocks(perm: np.ndarray) -> tuple[int, np.ndarray] | None:
    """(s, tau) for the smallest block size s whose blocks are all shuffled alike by tau, else None."""
    n = len(perm)
    for s in [*_divisors(n), n]:
        inner = perm.reshape(-1, s) - np.arange(0, n, s)[:, None]
        if (inner >= 0).all() and (inner < s).all() and (inner == inner[0]).all():
            return s, inner[0]
    return None


def _named_shuffle(tau: np.ndarray, s: int) -> str | None:
    half = s // 2
    if s % 2:
        return None
    if np.array_equal(tau, np.r_[np.arange(0, s, 2), np.arange(1, s, 2)]):
        return "even elements then odd ones (interleaved pairs read as halves)"
    if np.array_equal(tau, np.ravel(np.column_stack([np.arange(half), np.arange(half, s)]))):
        return "halves interleaved (halves read as interleaved pairs)"
    if np.array_equal(tau, (np.arange(s) + half) % s):
        return "halves swapped"
    return None


def describe(perm: np.ndarray) -> str:
    """Plain words for a permutation p (ours[i] = ref[p[i]])."""
    n = len(perm)
    idx = np.arange(n)
    values, counts = np.unique((perm - idx) % n, return_counts=True)
    if counts.max() >= 0.95 * n:
        k = int(values[np.argmax(counts)])
        if 2 * k == n:
            return "halves swapped"
        k = k if k <= n // 2 else k - n
        return f"shifted by {k} (ours[i] = ref[i{'+' if k > 0 else '-'}{abs(k)}])"
    if np.array_equal(perm, idx[::-1]):
        return "reversed"
    within = _within_blocks(perm)
    if within is not None:
        s, tau = within
        named = _named_shuffle(tau, s)
        if named is not None:
            return named if s == n else f"{named} within every block of {s}"
    for s in reversed(_divisors(n)):  # blocks of size s moved whole
        block = perm.reshape(-1, s)
        if (block - block[:, :1] == np.arange(s)).all() and (block[:, 0] % s == 0).all():
            return f"blocks of {s} reordered: {(block[:, 0] // s).tolist()[:16]}"
    if within is not None and within[0] < n:
        return f"the same shuffle within every block of {within[0]}: {within[1][:16].tolist()}"
    return f"an unrecognised permutation (ours[0..7] = ref{perm[:8].tolist()})"


def permutation(case: Case) -> Finding | None:
    """ours holds the reference's values (sorted, they agree to 0.1% of the difference's norm, and the
    difference is at least 1% of the reference's rms) in another order that no transposed view explains.
    Whole tensors only. Tries permuting whole rows along each axis of the shape (up to 512 rows, matched by
    distance), then elements; names the pattern. Confidence: 1 - the gap, halved for an unrecognised order."""
    pair: Pair = case.pair
    if not pair.full or pair.ref.values.size != pair.ours.values.size:
        return None
    r, o = pair.ref.values, pair.ours.values
    if not (np.isfinite(r).all() and np.isfinite(o).all()) or not rearranged(r, o):
        return None
    if best_view(r, o, pair.ref.shape) is not None:
        return None  # a transposed view: `transpose` names it
    base = float(np.linalg.norm(o - r))
    dims = tuple(pair.ref.shape or (r.size,))
    if len(dims) >= 2:
        for axis, m in enumerate(dims):
            if m < 2 or m > MAX_ROWS:
                continue
            rr = np.moveaxis(r.reshape(dims), axis, 0).reshape(m, -1)
            oo = np.moveaxis(o.reshape(dims), axis, 0).reshape(m, -1)
            perm = _match_rows(rr, oo)
            if perm is not None and float(np.linalg.norm(oo - rr[perm])) <= TIGHT * base:
                gap = float(np.linalg.norm(oo - rr[perm])) / base
                what = describe(perm)
                evidence = {"axis": axis, "size": m, "order": perm[:16].tolist(), "gap": gap}
                message = f"ours is the reference with its slices along axis {axis} (of {m}) permuted: {what}"
                return Finding("permutation", 1.0 - gap, evidence, message)
    perm = _flat_permutation(r, o)
    gap = float(np.linalg.norm(o - r[perm])) / base
    what = describe(perm)
    confidence = (1.0 - gap) * (0.5 if what.startswith("an unrecognised") else 1.0)
    evidence = {"axis": "flat", "size": r.size, "order": perm[:16].tolist(), "gap": gap}
    return Finding("permutation", confidence, evidence, f"ours is the reference with its elements permuted: {what}")
