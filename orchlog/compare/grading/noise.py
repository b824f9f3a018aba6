"""The noise a correct engine may show, measured from a second reference run, and each pair's error against it.

`orchlog compare REF OURS --noise REF2`: REF2 is another run believed
correct (llama.cpp on the f32 file beside the Q8_0 one the reference ran,
HF in f32 beside bf16, another backend). Its difference from REF at a key,
‖REF − REF2‖, is the noise there: how far a correct run may sit from the
reference at that checkpoint, layer, stage, token and step. Each pair of
REF and OURS is then graded on its error relative to that noise
(grading.py, "three-way"), with the ratio's interval from
orchlog/compare/measuring/noise_ratio.py.

The noise is measured by a walk over REF and REF2 first, before the
compare's own walk: records are paired and measured exactly as the compare
pairs and measures REF with OURS (the same maps on REF, REF2's own maps,
windows, semantics), and for each REF record that found a partner the table
keeps ‖REF − REF2‖'s interval (a point with whole tensors) and REF2's
sketch, keyed by the REF record's place in its trace, which the compare's
walk meets again. Memory: about 300 bytes a REF record with sketches, 24
without.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from orchlog import kernels
from orchlog.compare.measuring import bounds, noise_ratio
from orchlog.compare.measuring.metrics import HASH, SKETCH, TENSOR, PairTable
from orchlog.compare.pairing.rounds import PairWalk
from orchlog.records import record
from orchlog.tolerances.rules import Tolerances

DEFAULT_MULTIPLE = 1.25  # a pair passes when its error is proven below this many times the noise (docs/noise.md)


@record
class NoiseSummary:
    """What a three-way compare graded against, for the report."""

    references: list[str]  # the second references' paths
    multiple: float
    floor_ulps: float
    pairs: int  # pairs graded against the noise
    without: int  # pairs that no second reference had a record for (graded by their rule alone)

    def line(self) -> str:
        refs = ", ".join(self.references)
        return (
            f"noise: {refs}; a pair passes when its error is proven below {self.multiple:g}x the noise (or "
            f"{self.floor_ulps:g} epsilons of its coarser dtype where the noise is smaller); {self.pairs} pairs "
            "graded so" + (f", {self.without} without a noise record (graded by their rule)" if self.without else "")
        )

    def to_json(self) -> dict[str, object]:
        return {
            "references": self.references,
            "multiple": self.multiple,
            "floor_ulps": self.floor_ulps,
            "pairs": self.pairs,
            "without": self.without,
        }


@record
class NoiseTable:
    """‖REF − REF2‖ at every REF record that REF2 has a partner for, by the REF record's place in its trace."""

    source: str  # REF2's path, as given
    order: np.ndarray  # int64, sorted: the REF records' places
    lo: np.ndarray  # ‖REF − REF2‖: the interval the evidence proves
    hi: np.ndarray
    exact: np.ndarray  # bool: measured on whole tensors (or equal hashes)
    sketch: np.ndarray  # float64 [n, 64]: REF2's sketch where the pair was bounded by sketches alone, else NaN
    rms: np.ndarray  # REF2's whole-tensor rms (the sketch's rounding slack depends on it)
    reference_records: int  # REF records read
    unmatched: int  # REF2 records without a partner in REF

    def __len__(self) -> int:
        return len(self.order)

    def find(self, places: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(row in this table, found) for REF records at `places`."""
        idx = np.minimum(np.searchsorted(self.order, places), max(len(self.order) - 1, 0))
        found = (self.order[idx] == places) if len(self.order) else np.zeros(len(places), dtype=bool)
        return idx, found


def measure_noise(walk: PairWalk) -> NoiseTable:
    """‖REF − REF2‖ at each REF record, from a walk over REF and REF2 (as a compare walks REF and OURS)."""
    parts: list[tuple[np.ndarray, ...]] = []
    for rnd, t in walk:
        exact = (t.basis == TENSOR) | (t.basis == HASH)
        sketched = _plainly_sketched(t)
        rows = bounds.sketches(rnd.b, rnd.ib)
        if rows is None:
            rows = np.full((len(t), noise_ratio.ROWS), np.nan)
        rows[~sketched] = np.nan
        parts.append((rnd.a.order[rnd.ia], t.lo["l2"], t.hi["l2"], exact, rows, rnd.b.stats[rnd.ib, 3]))
    if parts:
        order, lo, hi, exact, rows, rms = (np.concatenate(column) for column in zip(*parts))
    else:
        order, lo, hi, rms = (np.zeros(0) for _ in range(4))
        exact, rows = np.zeros(0, dtype=bool), np.zeros((0, noise_ratio.ROWS))
    by_place = np.argsort(order, kind="stable")
    return NoiseTable(
        source=walk.traces[1].path,
        order=np.asarray(order, dtype=np.int64)[by_place],
        lo=lo[by_place],
        hi=hi[by_place],
        exact=exact[by_place],
        sketch=rows[by_place],
        rms=rms[by_place],
        reference_records=walk.sides[0].rows_in,
        unmatched=len(walk.aligner.leftover_b),
    )


def _plainly_sketched(t: PairTable) -> np.ndarray:
    """Pairs bounded by their sketches as written: not lined up by a window, view or gather, whose sketch
    would not be the compared tensor's."""
    plain: np.ndarray = (t.basis == SKETCH) & kernels.is_none(t.alignment)
    return plain


@record
class NoiseRatios:
    """Per pair of a round: the noise ‖REF − REF2‖ (the largest over the second references) and the proven
    interval of error / noise; NaN where no second reference has the pair."""

    noise: np.ndarray
    lo: np.ndarray
    hi: np.ndarray

    @property
    def known(self) -> np.ndarray:
        known: np.ndarray = ~np.isnan(self.noise)
        return known


def noise_ratios(t: PairTable, tables: Sequence[NoiseTable]) -> NoiseRatios:
    """The error of each pair of a round against the noise of every table that has its REF record.

    Against several second references the noise is the largest of theirs, so error / max(noise) lies below
    each reference's upper end and above the smallest lower end."""
    n = len(t)
    noise, lo, hi = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    places = t.a.order[t.ia]
    e_lo, e_hi = t.lo["l2"], t.hi["l2"]
    rows_ab: tuple[np.ndarray, np.ndarray] | None = None  # the pairs' sketch rows, read once when needed
    for table in tables:
        idx, found = table.find(places)
        if not found.any():
            continue
        n_lo, n_hi = np.where(found, table.lo[idx], np.nan), np.where(found, table.hi[idx], np.nan)
        r_lo, r_hi = noise_ratio.bands(e_lo, e_hi, n_lo, n_hi)
        pm = found & _plainly_sketched(t) & ~np.isnan(table.sketch[idx, 0])
        if pm.any():
            rows_ab = rows_ab or _sketch_rows(t)
            rows = np.flatnonzero(pm)
            p_lo, p_hi = _pitman_morgan(t, rows, *rows_ab, table.sketch[idx[rows]], table.rms[idx[rows]])
            r_lo[rows], r_hi[rows] = np.fmax(r_lo[rows], p_lo), np.fmin(r_hi[rows], p_hi)
        first = found & np.isnan(noise)
        with np.errstate(invalid="ignore"):
            level = np.where(np.isfinite(n_hi), np.sqrt(n_lo * n_hi), n_lo)  # the estimate: exact, or mid-band
        noise = np.where(first, level, np.where(found, np.fmax(noise, level), noise))
        lo = np.where(first, r_lo, np.where(found, np.fmin(lo, r_lo), lo))
        hi = np.where(first, r_hi, np.where(found, np.fmin(hi, r_hi), hi))
    return NoiseRatios(noise, lo, hi)


def _sketch_rows(t: PairTable) -> tuple[np.ndarray, np.ndarray]:
    nan = np.full((len(t), noise_ratio.ROWS), np.nan)
    sa, sb = bounds.sketches(t.a, t.ia), bounds.sketches(t.b, t.ib)
    return (nan if sa is None else sa), (nan if sb is None else sb)


def _pitman_morgan(
    t: PairTable, rows: np.ndarray, sa: np.ndarray, sb: np.ndarray, sc: np.ndarray, rms_c: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The Pitman-Morgan interval of error / noise for pairs `rows` whose three sketches are at hand."""
    a_rows, b_rows = sa[rows], sb[rows]
    n = t.a.numel[t.ia[rows]].astype(np.float64)
    rms_a, rms_b = t.a.stats[t.ia[rows], 3], t.b.stats[t.ib[rows], 3]
    every = np.arange(len(rows))
    sums_x = kernels.sketch_sums(a_rows, every, b_rows, every)
    sums_y = kernels.sketch_sums(a_rows, every, sc, every)
    slack_x = bounds.row_slack(sums_x[:, 1], sums_x[:, 2], n, rms_a, rms_b)
    slack_y = bounds.row_slack(sums_y[:, 1], sums_y[:, 2], n, rms_a, rms_c)
    lo, hi, _ = noise_ratio.pitman_morgan(a_rows - b_rows, a_rows - sc, slack_x, slack_y)
    return lo, hi


def noise_at(tables: Sequence[NoiseTable], tolerances: Tolerances) -> Callable[[int, Any, float], float | None] | None:
    """The measured noise at a reference record, for the diagnosis: from the second references' tables by the
    record's place (the largest, each the middle of its proven interval), else from a calibrated tolerance
    file's envelope at the record's checkpoint, stage and layer (its threshold over its headroom, times the
    reference's norm there); None when neither measured any."""
    calibrated = tolerances.calibration
    if not tables and not calibrated:
        return None
    headroom = float(calibrated.get("headroom", 1.0)) if calibrated else 1.0

    def at(place: int, where: Any, norm: float) -> float | None:
        if tables:
            levels = []
            for table in tables:
                idx, found = table.find(np.array([place], dtype=np.int64))
                if found[0]:
                    levels.append(float(bounds.estimate(table.lo[idx], table.hi[idx])[0]))
            return max(levels) if levels else None
        rule = tolerances.rule_for(where.checkpoint, where.stage)
        if rule.metric != "rel_l2":
            return None
        layer = np.array([-1 if where.layer is None else where.layer], dtype=np.int64)
        return float(rule.threshold_at(layer)[0]) / headroom * norm

    return at
