"""Introduced here or carried in: the diverging record's error against its inputs' error.

Errors are relative: rms(ours - ref) / rms(ref), so that stages of different sizes compare. A stage whose
inputs agree ten times better than its output introduced the error; otherwise it inherited it (and the
report says by how much it grew there).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from orchlog.diagnose.case import Pair
from orchlog.records import record

INTRODUCED = 10.0  # the output's relative error at least this many times the inputs': introduced here


@record(frozen=True)
class PairError:
    max_abs: float
    relative: float  # rms(ours - ref) / rms(ref)
    whole: bool  # from whole tensors (else leading values: lower bounds)
    noise: float = math.nan  # the measured noise there, relative as `relative` is (NaN: none measured)

    @property
    def ratio(self) -> float:
        """The error over the noise (NaN without a noise figure)."""
        if math.isnan(self.noise) or math.isnan(self.relative):
            return math.nan
        return self.relative / self.noise if self.noise > 0 else (math.inf if self.relative > 0 else 0.0)


def pair_error(p: Pair, noise: float | None = None) -> PairError:
    """`noise`: the l2 norm of the reference's measured noise at this record (three-way or calibrated)."""
    r, o = p.common()
    if not r.size:
        return PairError(math.nan, math.nan, False)
    d = o - r
    max_abs = float(np.abs(d).max())
    rms_r = float(np.sqrt(np.mean(np.square(r))))
    rms_d = float(np.sqrt(np.mean(np.square(d))))
    relative = rms_d / rms_r if rms_r > 0 else (math.inf if rms_d > 0 else 0.0)
    nonfinite = (p.ours.nonfinite() or 0) != (p.ref.nonfinite() or 0)
    norm = rms_r * math.sqrt(r.size)
    relative_noise = math.nan if noise is None or not p.full else (noise / norm if norm > 0 else math.inf)
    return PairError(math.inf if nonfinite else max_abs, math.inf if nonfinite else relative, p.full, relative_noise)


@record(frozen=True)
class Locality:
    verdict: str  # "introduced", "inherited" or "undecided"
    output: PairError
    inputs: list[tuple[str, PairError]]  # (label, error) of the stage's inputs
    earlier_worst: tuple[str, PairError] | None  # the worst of every earlier record at the token
    message: str

    def to_json(self) -> dict[str, Any]:
        def err(e: PairError) -> dict[str, Any]:
            out = {"max_abs": e.max_abs, "relative": e.relative, "whole": e.whole}
            return {**out, "noise_ratio": e.ratio} if not math.isnan(e.noise) else out

        return {
            "verdict": self.verdict,
            "output": err(self.output),
            "inputs": [{"record": label, **err(e)} for label, e in self.inputs],
            "earlier_worst": None
            if self.earlier_worst is None
            else {"record": self.earlier_worst[0], **err(self.earlier_worst[1])},
            "message": self.message,
        }


def locality(
    out: PairError,
    ins: list[tuple[str, PairError]],
    earlier: list[tuple[str, PairError]],
    multiple: float | None = None,
) -> Locality:
    """`out` and `ins`: the errors of the record and of its inputs; `earlier`: (label, error) of every earlier
    record at the token, for the report. With `multiple` and a noise figure on the record and every input,
    against the noise: introduced when every input is within `multiple` of its noise and the record beyond."""
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
    if multiple is not None and not math.isnan(out.ratio) and all(not math.isnan(e.ratio) for _, e in ins):
        return _against_noise(out, ins, worst, names, multiple)
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


def _against_noise(
    out: PairError, ins: list[tuple[str, PairError]], worst: tuple[str, PairError] | None, names: str, k: float
) -> Locality:
    """Locality of a stage whose inputs and output have measured noise: each is judged against its own."""
    in_ratio = max(e.ratio for _, e in ins)
    said = f"inputs at {in_ratio:.3g}x their noise ({names}), output at {out.ratio:.3g}x its noise"
    if in_ratio < k <= out.ratio:
        return Locality("introduced", out, ins, worst, f"{said}: introduced at this stage")
    if in_ratio >= k:
        return Locality("inherited", out, ins, worst, f"{said}: inherited (the inputs are already beyond theirs)")
    return Locality("undecided", out, ins, worst, f"{said}: within the noise on both sides")
