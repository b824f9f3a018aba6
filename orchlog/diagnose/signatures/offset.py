"""`offset`: ours - ref is the same vector at every token (a bias missing, doubled or from elsewhere)."""

from __future__ import annotations

import numpy as np

from orchlog.diagnose.case import Case
from orchlog.diagnose.finding import THIN, Finding
from orchlog.diagnose.stats import EXPLAINED_CLAIM, energy


def offset(case: Case) -> Finding | None:
    """ours_t = ref_t + b for one vector b. Needs two tokens (three on a summary) whose references differ
    (their spread around their mean holds at least a tenth of the difference's energy: when every token's
    reference is alike, a constant difference says nothing). Held out: each token's difference is predicted
    by the mean of the others', so noise cannot fit itself; claims when that explains >= 90% of the
    difference. Confidence: the held-out explained share (x0.6 on a summary)."""
    pairs = case.token_pairs()
    if len(pairs) < (3 if case.thin else 2):
        return None
    rows = [p.linear() for p in pairs]
    n = min(r.size for r, _ in rows)
    if n < 2:
        return None
    R = np.stack([r[:n] for r, _ in rows])
    D = np.stack([o[:n] for _, o in rows]) - R
    total = energy(D)
    if total == 0:
        return None
    b = D.mean(axis=0)
    t = len(pairs)
    held_out = (D.sum(axis=0)[None, :] - D) / (t - 1)  # each token's b from the other tokens
    explained = 1.0 - energy(D - held_out) / total
    if explained < EXPLAINED_CLAIM or energy(R - R.mean(axis=0)) < 0.1 * total:
        return None
    ref_rms = float(np.sqrt(np.mean(np.square(R))))
    evidence = {
        "tokens": len(pairs),
        "explained": explained,
        "norm": float(np.linalg.norm(b)),
        "rms": float(np.sqrt(np.mean(np.square(b)))),
        "max_abs": float(np.abs(b).max()),
        "reference_rms": ref_rms,
        "leading": [float(x) for x in b[:8]],
        "values": n,
    }
    over = f"; over the {n} values each summary holds" if case.thin else ""
    message = (
        f"ours - reference is the same vector at every token ({len(pairs)} tokens{over}; norm {evidence['norm']:.4g}, "
        f"rms {evidence['rms']:.4g} against the reference's {ref_rms:.4g}): a bias missing, doubled or taken "
        "from elsewhere"
    )
    return Finding("offset", explained * (THIN if case.thin else 1.0), evidence, message)
