"""Introduced here or carried in: the diverging record's error against its inputs' error.

Errors are relative: rms(ours - ref) / rms(ref), so that stages of different sizes compare. A stage whose
inputs agree ten times better than its output introduced the error; otherwise it inherited it (and the
report says by how much it grew there).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from orchlog.diagnose.case import Pair

INTRODUCED = 10.0  # the output's relative error at least this many times the inputs': introduced here


@dataclasses.dataclass(frozen=True)
class PairError:
    max_abs: float
    relative: float  # rms(ours - ref) / rms(ref)
    whole: bool  # from whole tensors (else leading values: lower bounds)


def pair_error(p: Pair) -> PairError:
    r, o = p.common()
    if not r.size:
        return PairError(math.nan, math.nan, False)
    d = o - r
    max_abs = float(np.abs(d).max())
    rms_r = float(np.sqrt(np.mean(np.square(r))))
    rms_d = float(np.sqrt(np.mean(np.square(d))))
    relative = rms_d / rms_r if rms_r > 0 else (math.inf if rms_d > 0 else 0.0)
    nonfinite = (p.ours.nonfinite() or 0) != (p.ref.nonfinite() or 0)
    return PairError(math.inf if nonfinite else max_abs, math.inf if nonfinite else relative, p.full)


@dataclasses.dataclass(frozen=True)
class Locality:
    verdict: str  # "introduced", "inherited" or "undecided"
    output: PairError
    inputs: list[tuple[str, PairError]]  # (label, error) of the stage's inputs
    earlier_worst: tuple[str, PairError] | None  # the worst of every earlier record at the token
    message: str

    def to_json(self) -> dict[str, Any]:
        def err(e: PairError) -> dict[str, Any]:
            return {"max_abs": e.max_abs, "relative": e.relative, "whole": e.whole}

        return {
            "verdict": self.verdict,
            "output": err(self.output),
            "inputs": [{"record": label, **err(e)} for label, e in self.inputs],
            "earlier_worst": None
            if self.earlier_worst is None
            else {"record": self.earlier_worst[0], **err(self.earlier_worst[1])},
            "message": self.message,
        }


def locality(pair: Pair, inputs: list[Pair], earlier: list[tuple[str, PairError]]) -> Locality:
    """`earlier`: (label, error) of every earlier record at the token, for the report."""
    out = pair_error(pair)
    ins = [(p.where.label(), pair_error(p)) for p in inputs]
    worst = max(earlier, key=lambda x: _key(x[1]), default=None)
    if not ins:
        msg = (
            "it is the first record of its token in both traces: the error entered here or before anything was "
            "logged (the inputs: token ids, weights, the cache)"
        )
        return Locality("undecided", out, ins, worst, msg)
    in_rel = max(e.relative for _, e in ins)
    in_max = max(e.max_abs for _, e in ins)
    thin = "" if out.whole and all(e.whole for _, e in ins) else " (leading values only)"
    names = ", ".join(label for label, _ in ins)
    if math.isnan(in_rel) or math.isnan(out.relative):
        msg = f"the inputs ({names}) or the output carry no comparable values: where the error entered cannot be told"
        return Locality("undecided", out, ins, worst, msg)
    if in_rel * INTRODUCED <= out.relative:
        msg = (
            f"inputs agree to {in_max:.3g} (relative {in_rel:.2g}; {names}), output differs by {out.max_abs:.3g} "
            f"(relative {out.relative:.2g}){thin}: introduced at this stage"
        )
        return Locality("introduced", out, ins, worst, msg)
    growth = out.relative / in_rel if in_rel > 0 else math.inf
    msg = (
        f"inputs already differ by {in_max:.3g} (relative {in_rel:.2g}; {names}), output by {out.max_abs:.3g} "
        f"(relative {out.relative:.2g}, x{growth:.3g}){thin}: inherited"
    )
    return Locality("inherited", out, ins, worst, msg)


def _key(e: PairError) -> float:
    return -1.0 if math.isnan(e.relative) else e.relative
