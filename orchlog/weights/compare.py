"""Compare two sets of model weights by name, with compare's metrics, tolerance files and tiers.

Pairs come from the name map (`names.choose_map`); the HF side of a Q or K projection is permuted as
llama.cpp's converter does when the map says so. Each pair is measured as stored; one that fails is tried
again under each `layout.alternatives` relation, and a relation under which it passes is reported (the
weight matches only transposed, or permuted); one that fails under every relation gets the signatures the
diagnosis catalogue finds in it (a scaled, shifted, rounded or partly overwritten tensor).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np

from orchlog.compare.grading.tiers import TIER_NAMES, grade
from orchlog.compare.measuring import bounds
from orchlog.compare.measuring.metrics import COLUMNS, TENSOR, PairTable
from orchlog.compare.measuring.tensor_metrics import tensor_diff
from orchlog.diagnose import Case, Finding, Pair, Side, Where, find_signatures
from orchlog.read.batch import RecordBatch
from orchlog.read.trace import TraceRecord
from orchlog.records import record
from orchlog.tolerances.rules import Tolerances
from orchlog.weights import layout
from orchlog.weights.names import IDENTITY, NameMap, choose_map, load_map
from orchlog.weights.tensors import WeightSource

AS_STORED = "as_stored"
DEFAULT_TOLERANCES = "weights"


@record
class WeightsOptions:
    map: str = "auto"  # "auto", "none", a shipped map's name or a path
    tolerances: str = DEFAULT_TOLERANCES
    metric: str | None = None
    threshold: float | None = None
    cos_tol: float | None = None


@record
class WeightRow:
    name_a: str
    name_b: str
    shape_a: tuple[int, ...]
    shape_b: tuple[int, ...]
    dtype_a: str
    dtype_b: str
    layout: str  # how b was brought into a's layout before comparing: "as_stored" or "llama_qk_permuted"
    relation: str  # "as_stored", or the alternative under which it matches ("transposed", ...)
    relation_means: str
    tier: str
    metric: str
    value: float
    rule: str
    reason: str
    metrics: dict[str, float]
    signatures: list[Finding] = dataclasses.field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.tier == "fail" or self.relation != AS_STORED


@record
class Grade:
    tier: str
    value: float
    rule: str
    reason: str


def grade_metrics(name: str, metrics: dict[str, float], tolerances: Tolerances, shape_differs: bool) -> Grade:
    """One pair's tier under the rule for its name, through compare's grading."""
    batch = RecordBatch.from_records([TraceRecord(checkpoint=name)])
    idx = np.zeros(1, dtype=np.int64)
    no = np.zeros(1, dtype=bool)
    table = PairTable(
        batch,
        batch,
        idx,
        idx,
        {c: np.array([metrics.get(c, math.nan)], dtype=np.float64) for c in COLUMNS},
        np.full(1, TENSOR, dtype=np.int8),
        np.full(1, -1, dtype=np.int8),
        no,
        np.array([shape_differs]),
        np.array([metrics.get("n", 0) == 0 and shape_differs]),
        no,
    )
    proven = bounds.exact({c: table.m[c] for c in bounds.BOUNDED}, 1)  # whole tensors: the figures are exact
    table.lo, table.hi = proven.lo, proven.hi
    g = grade(table, tolerances)
    return Grade(TIER_NAMES[int(g.tier[0])], float(g.value[0]), tolerances.all_rules[int(g.rule[0])].name, g.reason[0])


def _against_quantization(
    g: Grade,
    a: np.ndarray,
    b: np.ndarray,
    quantized: tuple[np.ndarray | None, np.ndarray | None],
    to_a: Callable[[np.ndarray], np.ndarray],
    info: tuple[str, str],
    metrics: dict[str, float],
) -> Grade:
    """The pair graded against the quantization bound of its quantized side(s): within it at every element
    passes (whatever a fixed tolerance says), beyond it at one element fails; `metrics` gets the largest
    |a - b| / bound as `quant_ratio`."""
    bound_a, bound_b = quantized
    allowed = (0.0 if bound_a is None else bound_a) + (0.0 if bound_b is None else to_a(bound_b))
    with np.errstate(divide="ignore", invalid="ignore"):
        diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
        ratio = np.where(diff == 0, 0.0, diff / allowed)
    beyond = ~(ratio <= 1.0)  # NaN counts as beyond
    worst = float(np.nanmax(np.where(np.isnan(ratio), np.inf, ratio))) if ratio.size else 0.0
    metrics["quant_ratio"] = worst
    kind = info[0] if bound_a is not None else info[1]
    said = f"max |a - b| / its {kind} quantization bound = {worst:.3g}"
    if not beyond.any():
        tier = g.tier if g.tier != "fail" else "acceptable"
        return Grade(tier, worst, f"{kind} quantization", f"within its quantization ({said})")
    return Grade(
        "fail",
        worst,
        f"{kind} quantization",
        f"beyond its quantization at {int(beyond.sum())} of {beyond.size} elements ({said})",
    )


def _metrics(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    if a.size != b.size:
        return {"n": 0.0, "max_abs": math.inf}
    d = tensor_diff(a.reshape(-1), b.reshape(-1))
    return {f.name: float(getattr(d, f.name)) for f in dataclasses.fields(d)}


@record
class Plan:
    """How two sources' names pair up, and which side holds GGUF names and layouts."""

    name_map: NameMap
    gguf_side: str | None  # "a", "b" or None

    def gguf_name(self, name_a: str, name_b: str) -> str:
        return name_b if self.gguf_side == "b" else name_a

    def pairs(self, a: WeightSource, b: WeightSource) -> tuple[list[tuple[str, str]], list[str], list[str]]:
        """(pairs, only in a, only in b), in a's order."""
        if not self.name_map.pairs:
            pairs = [(n, n) for n in a.tensors if n in b.tensors]
        else:
            translate = self.name_map.to_gguf if self.gguf_side == "b" else self.name_map.to_hf
            pairs = [(n, other) for n in a.tensors if (other := translate(n)) is not None and other in b.tensors]
        taken_a, taken_b = {p[0] for p in pairs}, {p[1] for p in pairs}
        return pairs, [n for n in a.tensors if n not in taken_a], [n for n in b.tensors if n not in taken_b]

    def expected(
        self, role: str | None, n_head: int | None, arr_b: np.ndarray
    ) -> tuple[str, Callable[[np.ndarray], np.ndarray]] | None:
        """(layout name, function bringing b into a's layout) when the map says GGUF permutes this Q or K
        tensor: the HF side permuted as the converter does, or the GGUF side un-permuted; else None."""
        if n_head is None or not (self.name_map.qk_permuted and role and layout.can_permute(arr_b, n_head)):
            return None
        heads = n_head
        if self.gguf_side == "b":
            return "llama_qk_permuted", lambda x: layout.llama_unpermute(x, heads)
        return "llama_qk_permuted", lambda x: layout.llama_permute(x, heads)


def plan_for(a: WeightSource, b: WeightSource, spec: str) -> Plan:
    gguf_side = (
        "a" if a.format == "gguf" and b.format != "gguf" else "b" if b.format == "gguf" and a.format != "gguf" else None
    )
    if spec == "auto":
        arch = (a if gguf_side == "a" else b).arch if gguf_side else None
        return Plan(choose_map(list(a.tensors), list(b.tensors), arch, gguf_side), gguf_side)
    return Plan(IDENTITY if spec == "none" else load_map(spec), gguf_side or "a")


def heads_for(role: str | None, a: WeightSource, b: WeightSource) -> int | None:
    """The head count that shapes a Q ('q': n_head) or K ('k': n_head_kv) tensor, from either side's metadata."""
    if role is None:
        return None
    heads = [s.n_head if role == "q" else s.n_head_kv for s in (a, b)]
    return next((int(h) for h in heads if h), None)


def compare_pair(
    name_a: str,
    name_b: str,
    arr_a: np.ndarray,
    arr_b: np.ndarray,
    info: tuple[str, str],
    tolerances: Tolerances,
    expected: tuple[str, Callable[[np.ndarray], np.ndarray]] | None,
    n_head: int | None,
    quantized: tuple[np.ndarray | None, np.ndarray | None] = (None, None),
) -> WeightRow:
    """Measure one pair as stored (after the expected layout), then under the alternatives if it fails.
    `quantized`: each side's quantization bound per element (quant_bound.py), when it has one: then the
    bound, not the tolerance, decides the pair as stored."""
    layout_name, to_a = expected or (AS_STORED, lambda x: x)
    b_view = to_a(arr_b)
    metrics = _metrics(arr_a, b_view)
    g = grade_metrics(name_a, metrics, tolerances, arr_a.shape != b_view.shape)
    if arr_a.shape != b_view.shape:  # an engine reading it by its shape gets other numbers
        g = dataclasses.replace(g, tier="fail", reason="shapes differ")
    elif quantized[0] is not None or quantized[1] is not None:
        g = _against_quantization(g, arr_a, b_view, quantized, to_a, info, metrics)
    row = WeightRow(
        name_a,
        name_b,
        tuple(arr_a.shape),
        tuple(arr_b.shape),
        info[0],
        info[1],
        layout_name,
        AS_STORED,
        "",
        g.tier,
        tolerances.rule_for(name_a).metric,
        g.value,
        g.rule,
        g.reason,
        metrics,
    )
    if g.tier != "fail":
        return row
    for relation, means, view in layout.alternatives(arr_a, b_view, n_head):
        seen = view()
        alt = _metrics(arr_a, seen)
        ga = grade_metrics(name_a, alt, tolerances, arr_a.shape != seen.shape)
        if ga.tier != "fail" and seen.shape == arr_a.shape:
            return dataclasses.replace(row, relation=relation, relation_means=means, metrics=alt, value=ga.value)
    if arr_a.shape == b_view.shape or arr_a.size == b_view.size:
        pair = Pair(Where(name_a), Side.of(arr_a), Side.of(b_view.reshape(arr_a.shape)))
        with np.errstate(all="ignore"):
            row.signatures = find_signatures(Case(pair))
    return row
