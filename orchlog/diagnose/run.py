"""Diagnose pairs a compare found: take their neighbourhoods from what the walk kept (or read them back from
the traces), assemble each case, run the catalogue, and say where the error entered and how it grew."""

from __future__ import annotations

import math
import os
from collections.abc import Callable

import numpy as np

from orchlog.compare.pairview import PairView
from orchlog.diagnose.assemble import Assembler, NoiseAt
from orchlog.diagnose.case import Where
from orchlog.diagnose.catalogue import find_signatures
from orchlog.diagnose.diagnosis import Diagnosis
from orchlog.diagnose.extent import Extent
from orchlog.diagnose.keeper import Keeper
from orchlog.diagnose.layer_growth import layer_growth
from orchlog.diagnose.locality import locality
from orchlog.diagnose.neighbours import NotRereadable, Prepare, Target, gather, needed_tokens
from orchlog.diagnose.stats import against_noise
from orchlog.read.trace import Trace
from orchlog.records import record

THIN_NOTE = (
    "the records are summaries (leading values and stats): signatures that need whole tensors were not tried, "
    "and the others claim less; log this checkpoint in full mode (ORCH_LOG_MODE=full) to decide"
)


def _where(t: Target) -> Where:
    return Where(t.checkpoint, t.layer, t.stage, t.token_idx, t.step)


@record
class Walked:
    """What the compare's walk leaves the diagnosis: how records were keyed and prepared, which are logits,
    what it kept, and the noise. `kept` holds the records around every target when the run, or the start of
    it that holds them, was small enough to keep, else the traces are read again: `prepare` is what the
    compare did to each batch before aligning it (see `neighbours.gather`) and `extents` say where the
    records needed end, in memory or on disk. `noise_at` (the measured noise of
    three-way grading or a calibration) and `multiple` judge where the error entered against each record's
    noise, and the signatures against the pair's."""

    key: tuple[str, ...]
    prepare: Prepare | tuple[Prepare, Prepare]
    is_logits: Callable[[str | None], bool]
    extents: tuple[Extent, Extent] | None = None
    noise_at: NoiseAt | None = None
    multiple: float | None = None
    kept: Keeper | None = None


def diagnose_targets(
    trace_a: Trace, trace_b: Trace, targets: list[tuple[str, Target]], walked: Walked
) -> list[Diagnosis]:
    """One Diagnosis per (role, target), in order."""
    wanted = [t for _, t in targets]
    stop: tuple[int | None, int | None] = (None, None)
    if walked.extents is not None:
        tokens = needed_tokens(wanted)
        stop = (walked.extents[0].last(tokens), walked.extents[1].last(tokens))
    nb = walked.kept.neighbourhood(wanted, stop_after=stop) if walked.kept is not None else None
    if nb is None:
        if walked.kept is not None:
            walked.kept.let_go()
        try:
            nb = gather(trace_a, trace_b, wanted, walked.prepare, stop_after=stop)
        except NotRereadable as exc:
            note = (
                f"{exc} cannot be read a second time (a pipe, or not a file) and was too large to keep; "
                "write the trace to a file to diagnose it"
            )
            return [Diagnosis(_where(t), role, "none", notes=[note]) for role, t in targets]
    assembler = Assembler(nb, walked.key, walked.is_logits, walked.noise_at)
    out = []
    for role, t in targets:
        built = assembler.assemble(t)
        if built is None:
            note = "the pair was not found when the traces were read again (did they change?)"
            out.append(Diagnosis(_where(t), role, "none", notes=[note]))
            continue
        case = built.case
        ratio = built.output.ratio
        share = 1.0 / (ratio * ratio) if ratio > 0 and math.isfinite(ratio) else 0.0
        with np.errstate(all="ignore"), against_noise(share):
            findings = find_signatures(case)
        notes = [THIN_NOTE] if case.thin else []
        if nb.truncated:
            notes.append("the run is wide: only the first records around the divergence were read back")
        if len(case.token_pairs()) < 2:
            notes.append("the checkpoint is seen at one token only: signatures across tokens were not tried")
        out.append(
            Diagnosis(
                _where(t),
                role,
                "summary" if case.thin else "tensors",
                findings,
                locality(built.output, built.inputs, built.earlier, walked.multiple),
                layer_growth(built.layers, t.layer),
                notes,
            )
        )
    return out


def target_of(view: PairView) -> Target:
    """The target for a compare's PairView."""
    return Target(view.checkpoint, view.layer, view.stage, view.token_idx, view.step, view.rank)


def diagnose_views(
    trace_a: Trace, trace_b: Trace, first: PairView, worst: list[PairView], walked: Walked
) -> list[Diagnosis]:
    """The compare's hook: diagnose its first divergence and any of its worst pairs (PairViews).

    A failure inside the diagnosis is reported as a note on it, never as a failed compare; set
    ORCHLOG_DEBUG=1 to let it raise."""
    targets = [("first_divergence", target_of(first))]
    targets += [("worst", target_of(v)) for v in worst if v.failed and target_of(v) != targets[0][1]]
    try:
        return diagnose_targets(trace_a, trace_b, targets, walked)
    except Exception as exc:  # the compare's verdict stands without its diagnosis
        if os.environ.get("ORCHLOG_DEBUG"):
            raise
        note = f"the diagnosis failed ({type(exc).__name__}: {exc}); set ORCHLOG_DEBUG=1 for a traceback and report it"
        return [Diagnosis(_where(t), role, "none", notes=[note]) for role, t in targets]
