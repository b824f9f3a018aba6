"""Calibration: learn what a correct engine may differ by, stage by stage, from pairs of runs known to be good.

`orchlog calibrate A B [A2 B2 ...] -o noise.toml` walks each pair as the
compare would (the same maps, windows and key) and measures every pair of
records on three scale-free figures: rel_l2 = ‖a − b‖ / ‖a‖ (the graded
one), the cosine distance 1 − cos(a, b), and rel_max = max|a − b| / max|a|.
Per checkpoint, stage and layer it keeps the largest of each over every
token, step and pair of runs: the envelope. The file it writes is a
tolerance file (orchlog/tolerances/rules.py) with one rule per checkpoint and stage:

  - metric rel_l2, a threshold per layer of `headroom` times that layer's
    envelope (`layers`), the envelope of records without a layer as
    `threshold`;
  - a growth model for layers the calibration never saw (a deeper model):
    the per-layer growth of the envelope, fitted to log(envelope) by least
    squares over the layers seen (at least 1), multiplies the last layer's
    threshold once per layer past it;
  - `observed`: the envelopes of all three figures, and how many pairs,
    tokens and steps they came from (for people; grading ignores it);

checkpoints it never saw fall to `[default]`: the largest threshold of all.
The file's `[calibration]` says what it was learned from; `--tolerances
noise.toml` grades with it, and the report names it.

Summaries calibrate too: a pair bounded by sketches contributes the middle of
its proven interval (whole tensors are exact), and the file says how many of
each it used.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from orchlog.compare.measuring.bounds import estimate
from orchlog.compare.measuring.metrics import HASH, TENSOR
from orchlog.compare.options import CompareOptions
from orchlog.compare.pairing.rounds import PairWalk
from orchlog.compare.plan import WalkPlan
from orchlog.read.batch import NONE
from orchlog.read.paths import open_trace
from orchlog.records import record
from orchlog.tolerances.tomlfile import dump_toml

DEFAULT_HEADROOM = 1.5
FIGURES = ("rel_l2", "cosine_distance", "rel_max")


@record
class Envelope:
    """The largest of each figure at one checkpoint, stage and layer, and what it was seen over."""

    figures: dict[str, float] = dataclasses.field(default_factory=lambda: dict.fromkeys(FIGURES, 0.0))
    pairs: int = 0
    tokens: set[int] = dataclasses.field(default_factory=set)
    steps: set[int] = dataclasses.field(default_factory=set)


@record
class Calibration:
    """Envelopes by (checkpoint, stage, layer), from `sources` (pairs of trace paths)."""

    sources: list[tuple[str, str]]
    envelopes: dict[tuple[str, str | None, int | None], Envelope]
    exact_pairs: int  # measured on whole tensors
    bounded_pairs: int  # the middle of an interval proven from summaries

    def add(self, other: Calibration) -> None:
        self.sources += other.sources
        self.exact_pairs += other.exact_pairs
        self.bounded_pairs += other.bounded_pairs
        for key, env in other.envelopes.items():
            mine = self.envelopes.setdefault(key, Envelope())
            mine.figures = {f: max(mine.figures[f], env.figures[f]) for f in FIGURES}
            mine.pairs += env.pairs
            mine.tokens |= env.tokens
            mine.steps |= env.steps


def learn(walk: PairWalk) -> Calibration:
    """The envelopes of one known-good pair of runs, from a walk over them (as a compare walks)."""
    a, b = walk.traces
    out = Calibration([(a.path, b.path)], {}, 0, 0)
    for _, t in walk:
        figures = {
            "rel_l2": estimate(t.lo["rel_l2"], t.hi["rel_l2"]),
            "cosine_distance": estimate(1 - t.hi["cosine"], 1 - t.lo["cosine"]),
            "rel_max": estimate(t.lo["rel_max"], t.hi["rel_max"]),
        }
        exact = (t.basis == TENSOR) | (t.basis == HASH)
        out.exact_pairs += int(exact.sum())
        out.bounded_pairs += int((~exact).sum())
        names, stages = t.a.checkpoint[t.ia].tolist(), t.a.stage[t.ia].tolist()
        layers, tokens, steps = t.a.layer[t.ia].tolist(), t.a.token_idx[t.ia].tolist(), t.a.step[t.ia].tolist()
        columns = {f: np.nan_to_num(v, nan=0.0).tolist() for f, v in figures.items()}
        for k in range(len(t)):
            where = (names[k] or "", stages[k], None if layers[k] == NONE else int(layers[k]))
            env = out.envelopes.setdefault(where, Envelope())
            for f in FIGURES:
                env.figures[f] = max(env.figures[f], columns[f][k])
            env.pairs += 1
            if tokens[k] != NONE:
                env.tokens.add(int(tokens[k]))
            if steps[k] != NONE:
                env.steps.add(int(steps[k]))
    return out


def _growth(by_layer: dict[int, float]) -> float:
    """exp of the least-squares slope of log(envelope) over the layers seen (positive envelopes), at least 1."""
    points = [(layer, math.log(v)) for layer, v in sorted(by_layer.items()) if v > 0]
    if len(points) < 2:
        return 1.0
    x, y = np.array(points).T
    slope = float(np.polyfit(x, y, 1)[0])
    return max(1.0, math.exp(slope))


def _up(x: float) -> float:
    """x rounded up to three significant digits: a threshold people can read, never below what was learned."""
    if not math.isfinite(x) or x <= 0:
        return x
    scale = 10.0 ** (math.floor(math.log10(x)) - 2)
    return math.ceil(x / scale * (1 - 1e-12)) * scale


def _glob_literal(name: str) -> str:
    """A glob matching `name` only."""
    return "".join(f"[{c}]" if c in "*?[]" else c for c in name)


def rules(calibration: Calibration, headroom: float = DEFAULT_HEADROOM) -> tuple[list[dict[str, Any]], float]:
    """The tolerance file's rules (one per checkpoint and stage) and its default threshold."""
    grouped: dict[tuple[str, str | None], dict[int | None, Envelope]] = {}
    for (name, stage, layer), env in calibration.envelopes.items():
        grouped.setdefault((name, stage), {})[layer] = env
    out, largest = [], 0.0
    for (name, stage), by_layer in sorted(grouped.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        layered = {layer: env for layer, env in by_layer.items() if layer is not None}
        rel = {layer: env.figures["rel_l2"] for layer, env in layered.items()}
        rule: dict[str, Any] = {
            "name": name if stage is None else f"{name} ({stage})",
            "match": [_glob_literal(name)],
            "stage": stage or "",
            "metric": "rel_l2",
        }
        loose = by_layer.get(None)
        everything = [*rel.values(), loose.figures["rel_l2"] if loose else 0.0]
        if layered:
            top = max(layered)
            # A layer the calibration did not see between others takes the larger of its neighbours' envelopes.
            filled = [rel[i] if i in rel else _neighbour(rel, i) for i in range(top + 1)]
            rule["layers"] = [_up(headroom * v) for v in filled]
            rule["growth"] = _up(_growth(rel))
        rule["threshold"] = _up(headroom * (loose.figures["rel_l2"] if loose else max(everything)))
        envs = list(by_layer.values())
        rule["observed"] = {
            **{f: _up(max(e.figures[f] for e in envs)) for f in FIGURES},
            "pairs": sum(e.pairs for e in envs),
            "tokens": len(set().union(*(e.tokens for e in envs))),
            "steps": len(set().union(*(e.steps for e in envs))),
        }
        largest = max(largest, _up(headroom * max(everything)))
        out.append(rule)
    return out, largest


def _neighbour(rel: dict[int, float], layer: int) -> float:
    """The larger envelope of the nearest layers seen below and above `layer`."""
    below, above = [i for i in rel if i < layer], [i for i in rel if i > layer]
    nearest = ([max(below)] if below else []) + ([min(above)] if above else [])
    return max((rel[i] for i in nearest), default=0.0)


def calibrate(learned: Sequence[Calibration]) -> Calibration:
    """Several pairs' envelopes as one: the largest of each figure at each place."""
    out = Calibration([], {}, 0, 0)
    for c in learned:
        out.add(c)
    return out


def calibrate_pairs(pairs: Sequence[tuple[str, str]], options: CompareOptions | None = None) -> Calibration:
    """The envelopes of known-good pairs of traces (paths), walked as `orchlog compare` with `options`
    (a CompareOptions: key, maps, windows, logits) would walk them."""
    opts = options or CompareOptions()
    # The tolerances only say which checkpoints are windowed here: never the preset of a quantized trace.
    opts = dataclasses.replace(opts, tolerances=opts.tolerances or "default")
    learned = []
    for path_a, path_b in pairs:
        a, b = open_trace(path_a), open_trace(path_b)
        learned.append(learn(WalkPlan.of(a, b, opts).pairs(a, b)))
    return calibrate(learned)


def tolerance_file(calibration: Calibration, headroom: float = DEFAULT_HEADROOM, created: str | None = None) -> str:
    """The calibration as a tolerance file (TOML) that `--tolerances` reads."""
    rule_list, largest = rules(calibration, headroom)
    doc: dict[str, Any] = {
        "description": f"noise envelopes calibrated from {len(calibration.sources)} known-good pair(s), "
        f"headroom {headroom:g}",
        "calibration": {
            "pairs": [list(p) for p in calibration.sources],
            "headroom": headroom,
            "figure": "rel_l2",
            "exact_pairs": calibration.exact_pairs,
            "bounded_pairs": calibration.bounded_pairs,
            **({"created": created} if created else {}),
        },
        "default": {"metric": "rel_l2", "threshold": largest},
        "rule": rule_list,
    }
    return dump_toml(
        doc,
        comments=(
            "orchlog calibrate: what a correct engine may differ by, per checkpoint, stage and layer.",
            "Each rule: rel_l2 = |a - b| / |a| fails at its layer's threshold (headroom x the largest seen);",
            "layers past the last seen grow by `growth` each; `observed` is what was measured (not graded).",
            "Grade with: orchlog compare REF OURS --tolerances THIS_FILE",
        ),
    )
