"""How many times the noise a pair's error is: an interval for ‖a − b‖ / ‖a − c‖ from what the records hold.

Three-way grading compares the error of ours (b) against the reference (a)
with the noise, the difference between the reference and a second run
believed correct (c), at the same key. With whole tensors both norms are
exact and so is their ratio. With summaries each norm is known from the
sketches only within a band (orchlog/compare/measuring/bounds.py), and two ways bound
the ratio:

- **bands**: [e_lo / n_hi, e_hi / n_lo] from the two norms' own intervals,
  each holding with probability ≥ 1 − 1e-6: a factor of about 2.4 each way.
- **Pitman-Morgan**: both distances are measured from the same reference,
  so they share its noise and their sketches are correlated; the test of
  Pitman (1939) and Morgan (1939) for the ratio of two correlated variances
  uses exactly that. With x = a − b, y = a − c and the sketch rows Sx, Sy,
  ‖x‖ = k‖y‖ exactly when u = x − ky and v = x + ky are orthogonal, and
  then the correlation r of the 64 rows of Su and Sv has the law of the
  correlation of independent vectors (for Gaussian signs: r² ~ Beta(1/2,
  63/2)). Inverting |r| ≤ c over k gives the interval: the roots of a
  quadratic in k², whose product is (‖Sx‖/‖Sy‖)⁴, so the interval is
  centred on the plain estimate and shrinks to it as x and y line up. When
  the error is mostly the reference's own noise (a correct engine against a
  quantized reference), it is several times narrower than the bands.

The interval this module gives is the intersection of the two, with
probability ≥ 1 − 3e-6 of holding the true ratio (1e-6 for each norm's
band, 1e-6 for the test). benchmarks/noise_ratio_error.py measures the
test's coverage on the project's ±1 sketch for random and structured
differences, correlated and not (docs/noise.md has the figures).
"""

from __future__ import annotations

import functools

import numpy as np

from orchlog.distributions import beta_cdf
from orchlog.encoding import sketch as sketch_rule

ROWS = sketch_rule.ROWS
FAILURE_PROBABILITY = 1e-6  # of the Pitman-Morgan interval, two-sided
# The stored f32 rows differ from the exact sketch by rounding; the test is used only where that slack is
# this small a share of the rows' own size, and the interval is then widened by ten times that share.
MAX_SLACK = 1e-3


def _tail(c: float, m: int = ROWS) -> float:
    """P(|r| > c) for the correlation r of two independent Gaussian vectors of m entries (not centred), whose
    density is proportional to (1 - r²)^((m - 3) / 2) on [-1, 1]: I_{1-c²}((m - 1) / 2, 1 / 2), the tail of
    the t distribution with m - 1 degrees of freedom at c·sqrt((m - 1) / (1 - c²)). (A trapezoid rule over
    the density on 200,001 points, which this replaces, gave the critical correlation 3.5e-11 higher, in
    0.25 s of every compare with --noise; this takes 0.3 ms.)"""
    return beta_cdf(1.0 - c * c, (m - 1) / 2, 0.5)


@functools.cache
def critical_correlation(p: float = FAILURE_PROBABILITY, m: int = ROWS) -> float:
    """c with P(|r| > c) = p under independence (bisection on _tail)."""
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _tail(mid, m) > p else (lo, mid)
    return (lo + hi) / 2


def bands(e_lo: np.ndarray, e_hi: np.ndarray, n_lo: np.ndarray, n_hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """[e_lo / n_hi, e_hi / n_lo]: the ratio of two norms known within intervals (0/0 reads 0 at the low end)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        lo = np.where(e_lo > 0, e_lo / n_hi, 0.0)
        hi = np.where(e_hi > 0, e_hi / n_lo, 0.0)
    return np.nan_to_num(lo, nan=0.0, posinf=np.inf), np.where(np.isnan(hi), np.inf, hi)


def pitman_morgan(
    sx: np.ndarray, sy: np.ndarray, slack_x: np.ndarray, slack_y: np.ndarray, c: float | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lo, hi, usable): the interval of ‖x‖ / ‖y‖ from sketch rows sx, sy ([k, 64] each) whose rounding slack
    (root mean square per row, as bounds.sketch_l2 computes it) is slack_x, slack_y; `usable` where the rows
    are finite, not zero and the slack small enough (MAX_SLACK)."""
    c = critical_correlation() if c is None else c
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        x2, y2, p = (sx * sx).sum(axis=1), (sy * sy).sum(axis=1), (sx * sy).sum(axis=1)
        share = np.maximum(slack_x / np.sqrt(x2 / ROWS), slack_y / np.sqrt(y2 / ROWS))
        usable = np.isfinite(x2) & np.isfinite(y2) & np.isfinite(p) & (x2 > 0) & (y2 > 0) & (share <= MAX_SLACK)
        xy = x2 * y2
        c2 = c * c
        b = xy * (1 + c2) - 2 * c2 * p * p
        # (XY - P²) >= 0 by Cauchy-Schwarz; rounding can take it a hair below.
        root = 2 * c * np.sqrt(np.maximum(xy - p * p, 0.0) * np.maximum(xy - c2 * p * p, 0.0))
        denom = y2 * y2 * (1 - c2)
        s_lo, s_hi = (b - root) / denom, (b + root) / denom
        widen = 1 + 10 * np.where(np.isfinite(share), share, 0.0)
        lo = np.sqrt(np.maximum(s_lo, 0.0)) / widen
        hi = np.sqrt(np.maximum(s_hi, 0.0)) * widen
    return np.where(usable, lo, 0.0), np.where(usable, hi, np.inf), usable
