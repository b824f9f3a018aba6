"""The signature catalogue: one small function per kind of bug, each `fn(case) -> Finding | None`.

Each function states in its docstring what it tests, when it claims and how
its confidence is set; docs/diagnose.md collects them with their measured
false-positive rates. `CATALOGUE` lists them in the order of `KINDS`.
"""

from __future__ import annotations

from collections.abc import Callable

from orchlog.diagnose.case import Case
from orchlog.diagnose.finding import KINDS, Finding
from orchlog.diagnose.signatures.elsewhere import equals_other_checkpoint
from orchlog.diagnose.signatures.factors import per_channel_scale, per_token_scale, scale, softmax_temperature
from orchlog.diagnose.signatures.layout import permutation, transpose
from orchlog.diagnose.signatures.localized import localized
from orchlog.diagnose.signatures.nonfinite import nonfinite_origin
from orchlog.diagnose.signatures.offset import offset
from orchlog.diagnose.signatures.precision import precision
from orchlog.diagnose.signatures.rotation import rotation_within_heads
from orchlog.diagnose.signatures.support import support_change

Signature = Callable[[Case], "Finding | None"]

CATALOGUE: dict[str, Signature] = {
    "nonfinite_origin": nonfinite_origin,
    "equals_other_checkpoint": equals_other_checkpoint,
    "transpose": transpose,
    "permutation": permutation,
    "offset": offset,
    "scale": scale,
    "per_token_scale": per_token_scale,
    "per_channel_scale": per_channel_scale,
    "softmax_temperature": softmax_temperature,
    "rotation_within_heads": rotation_within_heads,
    "support_change": support_change,
    "localized": localized,
    "precision": precision,
}
assert tuple(CATALOGUE) == KINDS, "the catalogue and KINDS must list the same kinds in the same order"

__all__ = ["CATALOGUE", "Signature"]
