"""The statistics the signatures share: how much of a difference a model explains, and how unlikely
that would be if the difference were only noise.

Under the null "the difference is isotropic noise", the fraction of its
energy that a k-parameter linear model absorbs out of n numbers follows
Beta(k/2, (n-k)/2); `explained_p` is that distribution's upper tail at the
observed fraction. Signatures claim a fit only when it explains most of the
difference AND that p-value is tiny, so a clean pair (float noise only) and
a small sample claim nothing.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Iterator

import numpy as np

from orchlog.distributions import beta_cdf

# A signature claims only when the noise null would give its fit with less than this probability.
P_CLAIM = 1e-6
# ... and when its model explains at least this share of the difference's energy (of what the measured noise
# leaves: explained_needed).
EXPLAINED_CLAIM = 0.9
# The largest share of a difference's energy the reference's own noise is taken to hold: that of a pair at the
# default multiple of three-way grading (1 / 1.25²); a pair any closer to its noise is no divergence.
MAX_NOISE_SHARE = 0.64
_NOISE_SHARE: contextvars.ContextVar[float] = contextvars.ContextVar("noise_share", default=0.0)


@contextlib.contextmanager
def against_noise(share: float) -> Iterator[None]:
    """Signatures fitted inside this block claim against a difference of which `share` of the energy is the
    reference's measured noise (three-way grading or a calibration): a bug at 1.8x the noise holds only 70%
    of it, and its pattern is asked to explain 90% of that 70%, not of the whole."""
    token = _NOISE_SHARE.set(min(max(share, 0.0), MAX_NOISE_SHARE) if math.isfinite(share) else 0.0)
    try:
        yield
    finally:
        _NOISE_SHARE.reset(token)


def noise_share() -> float:
    """The share of the diverging difference's energy that is the reference's measured noise (0: none)."""
    return _NOISE_SHARE.get()


def explained_needed() -> float:
    """The share of a difference's energy a signature's model must explain: EXPLAINED_CLAIM of what the
    measured noise leaves (all of it without a noise figure)."""
    return EXPLAINED_CLAIM * (1.0 - noise_share())


def explained_p(fraction: float, k: float, n: float) -> float:
    """P(a k-parameter fit absorbs at least `fraction` of n numbers of isotropic noise)."""
    if n <= k:
        return 1.0
    return beta_cdf(1.0 - fraction, (n - k) / 2.0, k / 2.0)


def at_most_p(fraction: float, k: float, n: float) -> float:
    """P(a k-dimensional share of n numbers of isotropic noise holds at most `fraction` of its energy)."""
    if n <= k:
        return 1.0
    return beta_cdf(fraction, k / 2.0, (n - k) / 2.0)


def claims(explained: float, p: float) -> bool:
    return explained >= explained_needed() and p < P_CLAIM


def energy(x: np.ndarray) -> float:
    return float(np.dot(x.ravel(), x.ravel()))


def effective_count(d: np.ndarray) -> float:
    """How many numbers the energy of d is really spread over: (sum d^2)^2 / sum d^4, from 1 (one value
    holds it all) to len(d) (all alike); about len(d) / 3 for Gaussian noise. The noise null uses this
    rather than len(d), so that two outlier channels do not pass for 4096 independent witnesses."""
    sq = np.square(d.ravel())
    s2 = float(sq.sum())
    s4 = float(np.dot(sq, sq))
    return s2 * s2 / s4 if s4 > 0 else 0.0


def nice_factor(c: float, head_dims: tuple[int, ...] = ()) -> str | None:
    """Names c when c or 1/c is (to 0.1%) a power of two or the square root of a head size."""
    if not math.isfinite(c) or c == 0:
        return None
    candidates: list[tuple[float, str]] = []
    for d in dict.fromkeys((*head_dims, 64, 128, 256, 96, 80, 32, 16)):
        candidates.append((math.sqrt(d), f"sqrt({d})"))
    for k in range(1, 9):
        candidates.append((2.0**k, f"2^{k}" if k > 1 else "2"))
    for value, name in candidates:
        if abs(abs(c) / value - 1) < 1e-3:
            return ("-" if c < 0 else "") + name
        if abs(abs(c) * value - 1) < 1e-3:
            return ("-" if c < 0 else "") + f"1/{name}"
    if abs(c + 1) < 1e-3:
        return "-1"
    return None


def median(x: np.ndarray) -> float:
    """np.median of an array, flattened (NaN when it holds a NaN), without the import of numpy.ma that
    np.median and np.quantile make on first use (8 ms of every compare that diagnoses)."""
    flat = np.ravel(x)
    if not flat.size or np.isnan(flat).any():
        return float("nan")
    half = (flat.size - 1) // 2
    middle = np.partition(flat, [half, flat.size // 2])[half : flat.size // 2 + 1]
    return float(np.mean(middle))  # as np.median: the mean of the one or two middle values


def quantile(x: np.ndarray, q: float) -> float:
    """np.quantile(x, q) of an array, flattened, by its default (linear) method, with the same rounding;
    NaN when it holds a NaN. Without numpy.ma (see `median`)."""
    flat = np.ravel(x)
    if not flat.size or np.isnan(flat).any():
        return float("nan")
    at = q * (flat.size - 1)
    lo = int(math.floor(at))
    hi = min(lo + 1, flat.size - 1)
    part = np.partition(flat, [lo, hi])
    a, b, t = part[lo], part[hi], at - lo  # in the array's own precision, as numpy's lerp
    return float(b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t)


def relative_energy(r: np.ndarray, o: np.ndarray, typical: np.ndarray | None = None) -> np.ndarray:
    """Each element's squared difference against the noise it could carry there (its reference value, floored
    at a tenth of the rms, or of that element's rms over tokens when `typical` gives it, and at least of the
    median element's): an outlier
    channel's float noise does not outweigh a real change elsewhere."""
    if typical is None:
        floor = 0.1 * float(np.sqrt(np.mean(np.square(r))))
    else:  # elements that are zero at every token (masked) get the median element's floor
        floor = 0.1 * np.maximum(typical, median(typical))
    floor = np.maximum(floor, 1e-30)
    relative: np.ndarray = np.square(o - r) / (np.square(r) + np.square(floor))
    return relative
