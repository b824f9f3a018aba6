"""Grading: each pair passes (in a tier), fails, or is undecided, under the rule for its checkpoint.

Grading is three-valued on partial evidence. Each metric of a pair comes as
the interval its evidence proves (metrics.PairTable.lo/hi; a point when the
tensors or equal hashes were at hand). Under a rule with threshold T on a
metric where lower is better:
  pass       the upper end is below T: proven within tolerance; its tier
             (exact, close, acceptable, warning) comes from that upper end
  fail       the lower end is at or beyond T: proven out of tolerance
  undecided  the interval holds T: the evidence cannot tell (never a pass)
and the mirror image for cosine and top1_match. A rule's cos_tol is one more
condition of the same kind. A pair also fails when its sizes differ, when
one side has NaN/Inf where the other does not, and when its hashes differ
under a format that decides on them (semantics.py). With --exact only
bit-identical tensors pass: equal hashes, or whole tensors without a
difference; a difference anywhere fails; anything else is undecided.

Three-way (`--noise REF2`, noise.py): where a second reference measured the
noise at a pair's key, the pair is graded on its error's l2 norm against the
larger of `multiple` times the noise and a floor (a few units of roundoff of
the coarser dtype, relative to the reference's norm; a rule's `noise_floor`
sets its own): it passes when the error is proven below either, fails when
it is proven beyond both, and is undecided otherwise. The rule's own metric
and threshold do not take part (a loose absolute threshold would pass pairs
many times their noise); the failures that are not a matter of degree
(sizes, NaN/Inf, a deciding hash) fail as before.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from orchlog.compare.grading.noise import DEFAULT_MULTIPLE, NoiseRatios
from orchlog.compare.measuring.metrics import HASH, TENSOR, PairTable
from orchlog.records import record
from orchlog.tolerances.rules import TIERS, UNDECIDED, Rule, Tolerances

TIER_NAMES = TIERS + (UNDECIDED,)
FAIL, UNDECIDED_TIER = TIER_NAMES.index("fail"), TIER_NAMES.index(UNDECIDED)
WARNING = TIER_NAMES.index("warning")


@record
class Grades:
    tier: np.ndarray  # int8 index into TIER_NAMES
    severity: np.ndarray  # float64: 1.0 at the threshold, above 1 beyond it; ranks pairs across rules
    value: np.ndarray  # the graded metric's value (its proven side when it is an interval)
    rule: np.ndarray  # int index into tolerances.all_rules
    reason: np.ndarray  # object: why a failing pair fails, beyond its metric ("" otherwise)
    lo: np.ndarray  # the graded metric's proven interval
    hi: np.ndarray
    # Three-way: the noise (‖REF − REF2‖), the proven interval of error / noise, and whether the noise decided
    # the pair (passed it beyond the rule, or failed it with the rule); NaN / False without a second reference.
    noise: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))
    ratio_lo: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))
    ratio_hi: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))
    by_noise: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=bool))
    # Failing beyond a measured noise: a second reference's (three-way), or a calibrated rule's envelope.
    beyond_noise: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=bool))
    multiple: float = DEFAULT_MULTIPLE  # three-way: a pair passes below this many times the noise

    def __post_init__(self) -> None:
        n = len(self.tier)
        for name in ("noise", "ratio_lo", "ratio_hi"):
            if len(getattr(self, name)) != n:
                setattr(self, name, np.full(n, np.nan))
        if len(self.by_noise) != n:
            self.by_noise = np.zeros(n, dtype=bool)
        if len(self.beyond_noise) != n:
            self.beyond_noise = np.zeros(n, dtype=bool)

    def take(self, rows: np.ndarray) -> Grades:
        """The grades of pairs `rows` only."""
        arrays = {f.name: getattr(self, f.name)[rows] for f in dataclasses.fields(self) if f.name != "multiple"}
        return Grades(**arrays, multiple=self.multiple)

    @property
    def failed(self) -> np.ndarray:
        failed: np.ndarray = self.tier == FAIL
        return failed

    @property
    def undecided(self) -> np.ndarray:
        undecided: np.ndarray = self.tier == UNDECIDED_TIER
        return undecided

    @property
    def suspect(self) -> np.ndarray:
        """Pairs not proven within tolerance: failing or undecided."""
        suspect: np.ndarray = self.failed | self.undecided
        return suspect


def _ratio(x: np.ndarray, room: float | np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out: np.ndarray = np.where(room > 0, x / np.where(room > 0, room, 1.0), np.where(x > 0, np.inf, 0.0))
    return out


def _grade_rows(rule: Rule, t: PairTable, rows: np.ndarray) -> tuple[np.ndarray, ...]:
    lo, hi = t.lo[rule.metric][rows], t.hi[rule.metric][rows]
    threshold = rule.threshold_at(t.a.layer[t.ia[rows]])
    if rule.metric == "rel_l2":  # a relative threshold never goes below the dtypes' roundoff (the noise floor)
        threshold = np.maximum(threshold, dtype_floor(t, rows))
    with np.errstate(invalid="ignore", divide="ignore"):
        if rule.higher_is_better:
            fails, passes = hi < threshold, lo >= threshold
            room = 1.0 - threshold
            bad_lo, bad_hi = 1.0 - hi, 1.0 - lo  # how far from perfect, at best and at worst
            value = hi
        else:
            fails, passes = lo >= threshold, hi < threshold
            room = threshold
            bad_lo, bad_hi = lo, hi
            value = lo
        severity = np.where(passes, _ratio(bad_hi, room), _ratio(bad_lo, room))
        tier = np.searchsorted(np.asarray(rule.bounds), bad_hi, side="right").astype(np.int8)
        tier = np.minimum(tier, WARNING).astype(np.int8)
        reason = np.full(len(rows), "", dtype=object)
        unsaid = np.ones(len(rows), dtype=bool)  # rows whose reason is still "" (a mask: no string compares)
        if rule.cos_tol is not None:
            c_lo, c_hi = t.lo["cosine"][rows], t.hi["cosine"][rows]
            low = c_hi < rule.cos_tol
            fails |= low
            passes &= c_lo >= rule.cos_tol
            reason[low] = f"cosine < {rule.cos_tol:g}"
            unsaid &= ~low
            severity = np.fmax(severity, np.where(low, _ratio(1.0 - c_hi, 1.0 - rule.cos_tol), 0.0))
    hash_differs = t.semantics.hash_decides & (t.hash_state[rows] == 0)
    hard = np.zeros(len(rows), dtype=bool)  # failures no noise excuses
    for flag, why in (
        # A window not allowed also leaves the sizes differing: say the more telling of the two.
        (t.window_refused[rows], "shapes differ (compared on their common window; --window allows it)"),
        (t.numel_mismatch[rows], "sizes differ"),
        (t.m["nonfinite_mismatch"][rows] > 0, "NaN/Inf where the other side is finite"),
        (hash_differs, t.semantics.hash_reason),
    ):
        fails |= flag
        hard |= flag
        reason[flag & unsaid] = why
        unsaid &= ~flag
        severity = np.where(flag, np.fmax(severity, np.inf), severity)
    tier = np.where(fails, FAIL, np.where(passes, tier, UNDECIDED_TIER)).astype(np.int8)
    return tier, severity, value, reason, lo, hi, hard


def _exact_rows(t: PairTable, rows: np.ndarray) -> tuple[np.ndarray, ...]:
    """--exact: equal hashes or identical whole tensors pass; any proven difference fails."""
    hashes = t.hash_state[rows]
    lo, hi = t.lo["max_abs"][rows], t.hi["max_abs"][rows]
    whole = t.basis[rows] == TENSOR
    identical = (hashes == 1) | (whole & (hi == 0) & (t.m["nonfinite_mismatch"][rows] == 0) & (hashes != 0))
    differs = (
        (hashes == 0)
        | (lo > 0)
        | t.numel_mismatch[rows]
        | t.dtype_mismatch[rows]
        | (t.m["nonfinite_mismatch"][rows] > 0)
    )
    tier = np.where(differs, FAIL, np.where(identical, 0, UNDECIDED_TIER)).astype(np.int8)
    reason = np.where(hashes == 0, t.semantics.hash_reason, np.where(differs, "differs (--exact)", "")).astype(object)
    severity = np.where(differs, np.inf, 0.0)
    return tier, severity, lo, reason, lo, hi, np.zeros(len(rows), dtype=bool)


# Machine epsilon of each dtype: a pair's floor is a few of the coarser side's (integers are exact).
EPSILON = {"f64": 2.0**-52, "f32": 2.0**-23, "f16": 2.0**-10, "bf16": 2.0**-7}
FLOOR_ULPS = 4.0  # the floor, in units of that epsilon, relative to the reference's norm (docs/noise.md) ...
# ... and never below what a summary's f32 sketch rows can prove (their rounding: orchlog/compare/measuring/bounds.py).
FLOOR_LEAST = 16 * 2.0**-23
# Norms of whole tensors are summed in f32 blocks, then f64: a figure "measured exactly" may be off by this
# relative amount, so a pair that close to its threshold stays undecided rather than fall on the wrong side.
MEASURED = 1e-5


def dtype_floor(t: PairTable, rows: np.ndarray) -> np.ndarray:
    """Per pair, FLOOR_ULPS machine epsilons of the coarser of the two dtypes (f32 where unknown), at least
    FLOOR_LEAST: the relative l2 error no noise figure or relative threshold can ask a pair to beat."""
    eps = [
        np.asarray(batch.dtype[idx].per_row(lambda d: EPSILON.get(d or "f32", 0.0), dtype=np.float64))
        for batch, idx in ((t.a, t.ia[rows]), (t.b, t.ib[rows]))
    ]
    out: np.ndarray = np.maximum(FLOOR_ULPS * np.maximum(eps[0], eps[1]), FLOOR_LEAST)
    return out


def noise_floor(t: PairTable, rows: np.ndarray, rules: list[Rule], rule_idx: np.ndarray) -> np.ndarray:
    """Per pair, the relative l2 error allowed however small the noise: the rule's `noise_floor`, else
    dtype_floor."""
    floor = dtype_floor(t, rows)
    said = np.array([rules[r].noise_floor if rules[r].noise_floor is not None else np.nan for r in rule_idx])
    out: np.ndarray = np.where(np.isnan(said), floor, said)
    return out


def _with_noise(
    g: Grades, t: PairTable, rows: np.ndarray, hard: np.ndarray, ratios: NoiseRatios, floor: np.ndarray, k: float
) -> None:
    """Three-way grading of `rows` (those with a noise figure): the error's l2 norm against the larger of k times
    the noise and the floor (relative to the reference's norm)."""
    lo, hi = ratios.lo[rows] * (1 - MEASURED), ratios.hi[rows] * (1 + MEASURED)
    e_lo, e_hi = t.lo["l2"][rows] * (1 - MEASURED), t.hi["l2"][rows] * (1 + MEASURED)
    with np.errstate(invalid="ignore"):
        # Whole tensors: the elements compared (a window's); else the record's size, which its stats cover.
        n = np.where(t.basis[rows] == TENSOR, t.m["n"][rows], t.a.numel[t.ia[rows]].astype(np.float64))
        norm_a = t.m["rms_a"][rows] * np.sqrt(n)
        floor_abs = np.where(np.isfinite(norm_a), floor * norm_a, 0.0)
    g.noise[rows], g.ratio_lo[rows], g.ratio_hi[rows] = ratios.noise[rows], lo, hi
    floor_passes, floor_fails = e_hi <= floor_abs, e_lo > floor_abs
    noise_passes, noise_fails = hi < k, lo >= k
    passes = ~hard & (floor_passes | noise_passes)
    fails = hard | (floor_fails & noise_fails)
    # A pass within half the multiple is "close", else "acceptable"; under the floor alone, "exact".
    tier = np.where(floor_passes, 0, np.where(hi <= k / 2, TIERS.index("close"), TIERS.index("acceptable")))
    g.tier[rows] = np.where(fails, FAIL, np.where(passes, tier, UNDECIDED_TIER)).astype(np.int8)
    with np.errstate(invalid="ignore", divide="ignore"):
        noise_severity = np.where(noise_passes, hi, lo) / k
        floor_severity = np.where(floor_passes, e_hi, e_lo) / floor_abs
    g.by_noise[rows] = ~hard
    g.beyond_noise[rows] = fails & ~hard
    g.severity[rows] = np.where(hard, g.severity[rows], np.fmin(noise_severity, floor_severity))
    g.value[rows] = np.where(hard, g.value[rows], np.where(noise_passes, hi, lo))
    g.reason[rows] = np.where(fails & ~hard, [f"{x:.3g}x the noise" for x in lo.tolist()], g.reason[rows]).astype(
        object
    )


def grade(
    t: PairTable, tolerances: Tolerances, ratios: NoiseRatios | None = None, multiple: float = DEFAULT_MULTIPLE
) -> Grades:
    """Every pair of a round graded under its rule; with `ratios` (noise.noise_ratios), three-way where a second
    reference measured the noise."""
    n = len(t)
    rule_idx = tolerances.rule_indices(t.a.checkpoint[t.ia], t.a.stage[t.ia])
    g = Grades(
        np.zeros(n, dtype=np.int8),
        np.zeros(n),
        np.full(n, np.nan),
        rule_idx,
        np.full(n, "", dtype=object),
        np.full(n, np.nan),
        np.full(n, np.nan),
        multiple=multiple,
    )
    hard = np.zeros(n, dtype=bool)
    for r, rule in enumerate(tolerances.all_rules):
        rows = np.flatnonzero(rule_idx == r)
        if len(rows):
            graded = _exact_rows(t, rows) if t.semantics.exact else _grade_rows(rule, t, rows)
            g.tier[rows], g.severity[rows], g.value[rows], g.reason[rows], g.lo[rows], g.hi[rows], hard[rows] = graded
    settled = (t.basis == HASH) & (t.hash_state == 1)
    g.tier[settled], g.severity[settled] = 0, 0.0
    if tolerances.calibration is not None:  # a calibrated rule's threshold is its stage's measured noise
        g.beyond_noise = (g.tier == FAIL) & ~hard
    if ratios is not None and not t.semantics.exact:
        g.noise[ratios.known] = ratios.noise[ratios.known]  # equal hashes too: they are exact, and had noise
        rows = np.flatnonzero(ratios.known & ~settled)
        if len(rows):
            floor = noise_floor(t, rows, tolerances.all_rules, rule_idx[rows])
            _with_noise(g, t, rows, hard[rows], ratios, floor, multiple)
    return g
