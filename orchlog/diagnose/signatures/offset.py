"""`offset`: ours - ref is the same vector at every token (a bias missing, doubled or from elsewhere)."""

from __future__ import annotations

import numpy as np

from orchlog.diagnose.case import Case
from orchlog.diagnose.finding import THIN, Finding
from orchlog.diagnose.stats import energy, explained_needed


def offset(case: Case) -> Finding | None:
    """ours_t = ref_t + b for one vector b. Needs two tokens (three on a summary) whose references differ
    (their spread around their mean holds at least a tenth of the difference's energy: when every token's
    reference is alike, a constant difference says nothing). Held out: each token's difference is predicted
    by the mean of the others', so noise cannot fit itself; claims when that explains >= 90% of the
    difference. Confidence: the held-out explained share (x0.6 on a summary)."""
    pairs = case.token_pairs()
    if len(pairs) < (3 if case.thin else 2):
        return None
    values = [p.common() for p in pairs]
    n = min(r.size for r, _ in values)
    # Sketches hold the relation too (the sketch of b is the same at every token), but only when every
    # pair has them, so that the columns line up; they help decide, never describe b (their rows are
    # signed sums, not elements).
    sketches = [(p.ref.sketch, p.ours.sketch) for p in pairs]
    rows = {s.size if s is not None else -1 for pair in sketches for s in pair}
    sketched = not case.pair.full and len(rows) == 1 and -1 not in rows
    R = np.stack([np.concatenate([r[:n], sa if sketched else r[:0]]) for (r, _), (sa, _) in zip(values, sketches)])
    ours = np.stack([np.concatenate([o[:n], sb if sketched else o[:0]]) for (_, o), (_, sb) in zip(values, sketches)])
    if R.shape[1] < 2 or n == 0:
        return None
    D = ours - R
    total = energy(D)
    if total == 0:
        return None
    b = D.mean(axis=0)
    t = len(pairs)
    held_out = (D.sum(axis=0)[None, :] - D) / (t - 1)  # each token's b from the other tokens
    explained = 1.0 - energy(D - held_out) / total
    if explained < explained_needed() or energy(R - R.mean(axis=0)) < 0.1 * total:
        return None
    shown, ref_shown = b[:n], R[:, :n]  # elements of b and of the reference, never sketch rows
    ref_rms = float(np.sqrt(np.mean(np.square(ref_shown))))
    evidence = {
        "tokens": len(pairs),
        "explained": explained,
        "norm": float(np.linalg.norm(shown)),
        "rms": float(np.sqrt(np.mean(np.square(shown)))),
        "max_abs": float(np.abs(shown).max()),
        "reference_rms": ref_rms,
        "leading": [float(x) for x in shown[:8]],
        "values": n,
        "sketch_rows": R.shape[1] - n,
    }
    with_sketch = " and their sketches" if sketched else ""
    over = f"; over the {n} values each summary holds{with_sketch}" if case.thin else ""
    message = (
        f"ours - reference is the same vector at every token ({len(pairs)} tokens{over}; norm {evidence['norm']:.4g}, "
        f"rms {evidence['rms']:.4g} against the reference's {ref_rms:.4g}): a bias missing, doubled or taken "
        "from elsewhere"
    )
    return Finding("offset", explained * (THIN if case.thin else 1.0), evidence, message)
