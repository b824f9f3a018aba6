"""CompareOptions: everything a compare can be asked to do, with its defaults."""

from __future__ import annotations

import dataclasses

from orchlog.compare.grading.noise import DEFAULT_MULTIPLE
from orchlog.records import record

LOGITS_NAMES = ("logits", "*logits*", "result_output", "lm_head", "output")


@record
class CompareOptions:
    key: tuple[str, ...] | None = None  # None: the formats' own key when both share one, else DEFAULT_KEY
    maps: list[str] = dataclasses.field(default_factory=list)
    tolerances: str | None = None  # a file or shipped name; None: "default", or the preset of a quantized trace
    metric: str | None = None
    threshold: float | None = None
    cos_tol: float | None = None
    logits: tuple[str, ...] = LOGITS_NAMES  # globs over canonical names: which checkpoints are logits
    track_token: int | None = None
    top: int = 10
    detail: bool = False
    max_pairs: int | None = 1000
    dump_raw: str | None = None
    dump_all: bool = False
    heatmap: bool = False  # keep the worst error of every token and layer (the HTML report draws it)
    maps_a: list[str] = dataclasses.field(default_factory=list)  # maps for a only, tried before `maps`
    maps_b: list[str] = dataclasses.field(default_factory=list)
    windows: tuple[str, ...] = ()  # globs over canonical names compared on the common window of two extents
    token_offset: int = 0  # b's position p is a's position p + token_offset
    diagnose: bool = True  # name the first divergence's bug signature (orchlog.diagnose; reads the traces again)
    diagnose_worst: int = 0  # ... and that of this many of the worst offenders
    exact: bool = False  # any hash difference fails, in every format
    require_all: bool = False  # reference records without a partner, or malformed lines, fail the comparison
    allow_missing: tuple[str, ...] = ()  # globs over checkpoint names that require_all excuses
    noise: tuple[str, ...] = ()  # second references: their difference from a is the noise a pair is graded on
    noise_multiple: float = DEFAULT_MULTIPLE  # ... passing below this many times the noise
    maps_noise: list[str] = dataclasses.field(default_factory=list)  # maps for the second references only
