"""WalkPlan: what every walk over two traces derives from CompareOptions, set up in one place.

The key records align on, the tolerances (asked for, else the default or the
preset of a quantized trace), which checkpoints are logits and which are
compared on a common window, and each side's maps and token shift. The
compare's walk, its noise table, `orchlog calibrate`, `--per-token`,
graft-report and the diagnosis all walk pairs made by `WalkPlan.pairs`, so
a record pairs up the same way in each of them.
"""

from __future__ import annotations

from collections.abc import Callable

from orchlog.compare.options import CompareOptions
from orchlog.compare.pairing.keys import DEFAULT_KEY
from orchlog.compare.pairing.rounds import PairWalk
from orchlog.compare.pairing.sides import Side
from orchlog.maps.namemap import load_maps
from orchlog.read.batch import RecordBatch
from orchlog.read.trace import Trace
from orchlog.records import record
from orchlog.strings import glob_matcher
from orchlog.tolerances.presets import preset_for, weight_types
from orchlog.tolerances.rules import Tolerances, load_tolerances


def pick_tolerances(trace_a: Trace, trace_b: Trace, spec: str | None) -> Tolerances:
    """The tolerances asked for; without a choice, the default, or the preset measured for the coarsest weight
    type the traces' matrix products say they ran on (orchlog/tolerances/presets.py), named in the report."""
    if spec is not None:
        return load_tolerances(spec)
    picked = preset_for(weight_types(trace_a) | weight_types(trace_b))
    if picked is None:
        return load_tolerances("default")
    preset, weights = picked
    tolerances = load_tolerances(preset)
    tolerances.source += f" (picked: the traces' matrix products ran on {weights} weights; --tolerances overrides)"
    return tolerances


@record
class WalkPlan:
    opts: CompareOptions
    key: tuple[str, ...]
    tolerances: Tolerances
    is_logits: Callable[[str | None], bool]

    @staticmethod
    def of(trace_a: Trace, trace_b: Trace, opts: CompareOptions, tolerances: Tolerances | None = None) -> WalkPlan:
        """The plan for these traces: the option's key, else the formats' own key when both share one, else
        DEFAULT_KEY; `tolerances` when given, else those the options pick (with their overrides)."""
        key = opts.key or (
            trace_a.default_key if trace_a.default_key and trace_a.default_key == trace_b.default_key else DEFAULT_KEY
        )
        if tolerances is None:
            tolerances = pick_tolerances(trace_a, trace_b, opts.tolerances).overridden(
                opts.metric, opts.threshold, opts.cos_tol
            )
        return WalkPlan(opts, tuple(key), tolerances, glob_matcher(opts.logits))

    def sides(self, maps_b: list[str] | None = None) -> tuple[Side, Side]:
        """Fresh sides (a walk consumes its sides' state): the reference's maps, and b's, or `maps_b` for a
        second reference."""
        o = self.opts
        return (
            Side(load_maps(o.maps_a + o.maps), token_shift=max(-o.token_offset, 0)),
            Side(load_maps((o.maps_b if maps_b is None else maps_b) + o.maps), token_shift=max(o.token_offset, 0)),
        )

    def windows(self, side_a: Side, side_b: Side) -> Callable[[str | None], bool]:
        """Which canonical checkpoints may be compared on the common window of two extents."""
        windowed = glob_matcher(self.opts.windows + side_a.names.windows + side_b.names.windows)
        rule_for = self.tolerances.rule_for
        return lambda name: windowed(name) or rule_for(name or "").window

    def pairs(
        self,
        trace_a: Trace,
        trace_b: Trace,
        sides: tuple[Side, Side] | None = None,
        keep: Callable[[RecordBatch], RecordBatch] | None = None,
        key: tuple[str, ...] | None = None,
    ) -> PairWalk:
        """The walk over the two traces' paired records, as the compare walks them. `sides`: fresh ones from
        `sides()` by default; `keep`: what of each prepared batch is aligned at all (--per-token: the logits);
        `key`: the key settled for whole traces, when these are parts of them."""
        side_a, side_b = sides or self.sides()
        o = self.opts
        return PairWalk(
            trace_a,
            trace_b,
            key or self.key,
            side_a,
            side_b,
            self.is_logits,
            self.windows(side_a, side_b),
            o.track_token,
            o.exact,
            keep,
        )
