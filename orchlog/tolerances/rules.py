"""Tolerances: which metric decides a checkpoint, where it fails, and the quality tiers below that.

A tolerance file is TOML (the shipped one is orchlog/tolerances/default.toml;
`--tolerances NAME` picks a shipped file, anything else is a path):

    [default]                       # checkpoints no rule matches
    metric = "max_abs"
    threshold = 1e-2                # fails at or beyond this

    [[rule]]                        # tried in order; the first match wins
    name = "logits"
    match = ["logits", "result_output", "lm_head"]   # globs over canonical checkpoint names
    metric = "max_abs"
    threshold = 1.0
    cos_tol = 0.999                 # optional: also fail when cosine < cos_tol
    tiers = [1e-5, 1e-3, 1e-1, 1.0] # optional: exact / close / acceptable / warning bounds
    window = true                   # optional: same-rank tensors of different extents are compared
                                    # on their common window (orchlog.compare.pairing.window) and graded as usual
    noise_floor = 1e-6              # optional, three-way (--noise): the relative l2 error allowed however
                                    # small the noise (default: 16 units of roundoff of the coarser dtype)
    stage = "add"                   # optional: only records of this stage ("" for those without one)
    layers = [0.02, 0.025]          # optional: the threshold of layer 0, 1, ... (threshold: records without a layer)
    growth = 1.05                   # optional: each layer past the last of `layers` multiplies it by this
    observed = {...}                # optional, ignored: what `orchlog calibrate` measured (for people)

Metrics where lower is better fail at `value >= threshold`; cosine and
top1_match fail at `value < threshold`. Tiers grade how close a pair is:
exact, close, acceptable, warning by the rule's bounds, and fail when the
pair fails its threshold (a pair within its threshold is never below warning);
a pair whose evidence can place it on either side is undecided (grading.py).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from orchlog.errors import OrchlogError
from orchlog.records import record
from orchlog.strings import Strings, glob_matcher
from orchlog.tolerances.tomlfile import load_named, shipped

TOLERANCES = "orchlog.tolerances"
TIERS = ("exact", "close", "acceptable", "warning", "fail")
UNDECIDED = "undecided"  # the evidence brackets the threshold: neither proven within nor beyond
LOWER_IS_BETTER = ("max_abs", "mean_abs", "max_rel", "p99_abs", "rms_diff", "l2", "kl", "rel_l2", "rel_max")
HIGHER_IS_BETTER = ("cosine", "top1_match")
METRICS = LOWER_IS_BETTER + HIGHER_IS_BETTER
# Tier bounds per metric; for cosine and top1_match they bound 1 - value.
DEFAULT_TIERS = {
    **{m: (1e-5, 1e-3, 1e-1, 1.0) for m in ("max_abs", "mean_abs", "max_rel", "p99_abs", "rms_diff", "l2")},
    **{m: (1e-7, 1e-5, 1e-3, 1e-2) for m in ("rel_l2", "rel_max")},
    "kl": (1e-6, 1e-4, 1e-2, 1e-1),
    "cosine": (1e-7, 1e-5, 1e-3, 1e-2),
    "top1_match": (0.5, 0.5, 0.5, 0.5),
}


@record(frozen=True)
class Rule:
    name: str
    patterns: tuple[str, ...]
    metric: str = "max_abs"
    threshold: float = 1.0
    cos_tol: float | None = None
    tiers: tuple[float, float, float, float] | None = None
    window: bool = False  # compare same-rank tensors of different extents on their common window
    noise_floor: float | None = None  # three-way: relative l2 error allowed however small the noise
    stage: str | None = None  # only records of this stage ("" : records without one); None: any
    layers: tuple[float, ...] | None = None  # the threshold of layer 0, 1, ... (`threshold`: records without one)
    growth: float = 1.0  # each layer past the last in `layers` multiplies its threshold by this

    def threshold_at(self, layer: np.ndarray) -> np.ndarray:
        """The threshold of records of these layers (NONE: no layer): `layers` by layer, grown past its end."""
        out = np.full(len(layer), self.threshold)
        if self.layers:
            per = np.asarray(self.layers)
            known = layer >= 0
            inside = known & (layer < len(per))
            out[inside] = per[layer[inside]]
            past = known & ~inside
            out[past] = per[-1] * self.growth ** (layer[past] - len(per) + 1).astype(np.float64)
        return out

    @property
    def bounds(self) -> tuple[float, ...]:
        return self.tiers or DEFAULT_TIERS[self.metric]

    @property
    def higher_is_better(self) -> bool:
        return self.metric in HIGHER_IS_BETTER

    def describe(self) -> str:
        op = "<" if self.higher_is_better else ">="
        extra = f", cosine < {self.cos_tol:g}" if self.cos_tol is not None else ""
        said = self.stage is None or self.name.endswith(f"({self.stage})") or (not self.stage and "(" not in self.name)
        where = "" if said else f" (stage {self.stage or 'none'})"
        if self.layers:
            first, last = self.layers[0], self.layers[-1]
            grown = f", x{self.growth:g} a layer after" if self.growth != 1.0 else ""
            return (
                f"{self.name}{where}: fail at {self.metric} {op} {first:g} (layer 0) .. {last:g} (layer "
                f"{len(self.layers) - 1}){grown}; {self.threshold:g} without a layer{extra}"
            )
        return f"{self.name}{where}: fail at {self.metric} {op} {self.threshold:g}{extra}"


@record
class Tolerances:
    rules: list[Rule]
    default: Rule
    source: str
    calibration: dict[str, Any] | None = None  # a calibrated file's [calibration]: what it was learned from

    def __post_init__(self) -> None:
        self._cache: dict[tuple[str, str | None], int] = {}
        self._matchers = [glob_matcher(r.patterns) for r in self.rules]
        self.by_stage = any(r.stage is not None for r in self.rules)

    @property
    def all_rules(self) -> list[Rule]:
        """Rules in order, the default last; `index_for` indexes this list."""
        return [*self.rules, self.default]

    def index_for(self, checkpoint: str, stage: str | None = None) -> int:
        """The first rule matching the checkpoint (and, for rules that name one, the stage); the default last."""
        key = (checkpoint, stage if self.by_stage else None)
        hit = self._cache.get(key)
        if hit is None:
            hit = next(
                (
                    i
                    for i, (rule, matches) in enumerate(zip(self.rules, self._matchers))
                    if matches(checkpoint) and (rule.stage is None or rule.stage == (stage or ""))
                ),
                len(self.rules),
            )
            self._cache[key] = hit
        return hit

    def rule_for(self, checkpoint: str, stage: str | None = None) -> Rule:
        return self.all_rules[self.index_for(checkpoint, stage)]

    def rule_indices(self, checkpoints: Strings, stages: Strings) -> np.ndarray:
        """index_for of every row (checkpoint and stage columns of a batch's rows)."""
        names = checkpoints.per_row(lambda name: self.index_for(name or ""), dtype=np.int64)
        if not self.by_stage:
            return names
        pairs = np.stack([checkpoints.codes, stages.codes], axis=1)
        unique, inverse = np.unique(pairs, axis=0, return_inverse=True)
        first = np.zeros(len(unique), dtype=np.int64)
        first[inverse.ravel()] = np.arange(len(pairs))
        found = [self.index_for(checkpoints[int(i)] or "", stages[int(i)]) for i in first.tolist()]
        out: np.ndarray = np.asarray(found, dtype=np.int64)[inverse.ravel()]
        return out

    def overridden(
        self, metric: str | None = None, threshold: float | None = None, cos_tol: float | None = None
    ) -> Tolerances:
        """Command-line overrides applied to every rule."""
        if metric is not None and metric not in METRICS:
            raise OrchlogError(f"--metric {metric}: choose one of {', '.join(METRICS)}")
        changes: dict[str, Any] = {}
        if metric is not None:
            changes.update(metric=metric, tiers=None)
        if threshold is not None:
            changes["threshold"] = threshold
        if cos_tol is not None:
            changes["cos_tol"] = cos_tol
        if not changes:
            return self

        def edit(r: Rule) -> Rule:
            return dataclasses.replace(r, **changes)

        return Tolerances(
            [edit(r) for r in self.rules], edit(self.default), self.source + " (with overrides)", self.calibration
        )


def _rule(doc: dict[str, Any], where: str, name: str, patterns: tuple[str, ...]) -> Rule:
    unknown = set(doc) - {
        "name",
        "match",
        "metric",
        "threshold",
        "cos_tol",
        "tiers",
        "window",
        "noise_floor",
        "stage",
        "layers",
        "growth",
        "observed",
    }
    if unknown:
        raise OrchlogError(f"{where}: rule {name!r} has unknown key(s) {', '.join(sorted(unknown))}")
    metric = doc.get("metric", "max_abs")
    if metric not in METRICS:
        raise OrchlogError(f"{where}: rule {name!r}: metric {metric!r} is not one of {', '.join(METRICS)}")
    tiers = doc.get("tiers")
    if tiers is not None and (
        not isinstance(tiers, list)
        or len(tiers) != 4
        or not all(isinstance(t, (int, float)) for t in tiers)
        or list(tiers) != sorted(tiers)
    ):
        raise OrchlogError(
            f"{where}: rule {name!r}: tiers must be 4 increasing numbers (exact, close, acceptable, warning)"
        )
    try:
        threshold = float(doc.get("threshold", 1.0))
        cos_tol = None if doc.get("cos_tol") is None else float(doc["cos_tol"])
        noise_floor = None if doc.get("noise_floor") is None else float(doc["noise_floor"])
    except (TypeError, ValueError):
        raise OrchlogError(f"{where}: rule {name!r}: threshold, cos_tol and noise_floor must be numbers") from None
    if not isinstance(doc.get("window", False), bool):
        raise OrchlogError(f"{where}: rule {name!r}: window must be true or false")
    bounds = None if tiers is None else (float(tiers[0]), float(tiers[1]), float(tiers[2]), float(tiers[3]))
    stage = doc.get("stage")
    if stage is not None and not isinstance(stage, str):
        raise OrchlogError(f'{where}: rule {name!r}: stage must be a string ("" for records without one)')
    layers = doc.get("layers")
    if layers is not None and (
        not isinstance(layers, list) or not layers or not all(isinstance(x, (int, float)) and x >= 0 for x in layers)
    ):
        raise OrchlogError(f"{where}: rule {name!r}: layers must be a list of thresholds, one per layer from 0")
    growth = doc.get("growth", 1.0)
    if not isinstance(growth, (int, float)) or not growth > 0:
        raise OrchlogError(f"{where}: rule {name!r}: growth must be a number > 0")
    return Rule(
        name,
        patterns,
        metric,
        threshold,
        cos_tol,
        bounds,
        bool(doc.get("window", False)),
        noise_floor,
        stage,
        None if layers is None else tuple(float(x) for x in layers),
        float(growth),
    )


def parse_tolerances(doc: dict[str, Any], where: str) -> Tolerances:
    unknown = set(doc) - {"default", "rule", "description", "calibration"}
    if unknown:
        raise OrchlogError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}; expected [default] and [[rule]]")
    default = _rule(doc.get("default", {}), where, "default", ("*",))
    rules = []
    for i, raw in enumerate(doc.get("rule", [])):
        name = str(raw.get("name", f"rule {i + 1}"))
        match = raw.get("match")
        patterns = (match,) if isinstance(match, str) else tuple(match or ())
        if not patterns or not all(isinstance(p, str) for p in patterns):
            raise OrchlogError(f"{where}: rule {name!r} needs match = a glob or a list of globs")
        rules.append(_rule(raw, where, name, patterns))
    calibration = doc.get("calibration")
    if calibration is not None and not isinstance(calibration, dict):
        raise OrchlogError(f"{where}: [calibration] must be a table")
    return Tolerances(rules, default, where, calibration)


def shipped_tolerances() -> list[str]:
    return shipped(TOLERANCES)


def load_tolerances(spec: str | None = "default") -> Tolerances:
    """A tolerance file by path, or a shipped one by name (None: the default)."""
    where, doc = load_named(spec or "default", TOLERANCES, "--tolerances")
    return parse_tolerances(doc, where)
