"""How often each signature is right and wrong, measured on random cases.

    python -m orchlog.diagnose.calibration [--cases 6000] [--seed 0]

Each case draws a realistic reference (activations with per-channel scales
and outlier channels, attention heads, masked softmax rows, SiLU outputs,
logits) over 1 to 8 tokens, makes "ours" from it with float32-level noise
(a different summation order) and one planted cause, and runs the whole
catalogue on the first token. Causes: none (a clean pair), each signature's
own bug, and bugs that no signature describes (a random error of 1% to
100%, a random linear map, tokens mixed, independent values, int8
quantization). A quarter of the cases are summaries (ten leading values and
stats). A claim is a false positive when the planted cause does not list
that kind; docs/diagnose.md records the figures and the test suite re-runs
a smaller sample.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable

import numpy as np

from orchlog.diagnose.case import Case, Pair, Reference, Side, Where
from orchlog.diagnose.catalogue import find_signatures
from orchlog.diagnose.finding import KINDS
from orchlog.records import record

Array = np.ndarray
Shape = tuple[int, ...]


@record(frozen=True)
class Planted:
    name: str
    allowed: frozenset[str]  # kinds that describe this cause rightly
    expected: str | None  # the kind that should be claimed (None: nothing should)


# -------------------------------------------------------------- references


def _activations(rng: np.random.Generator, t: int, n: int) -> tuple[Array, Shape]:
    scales = np.exp(rng.normal(0, 0.5, n))
    scales[rng.integers(0, n, 2)] *= 20  # outlier channels, as in real models
    return rng.standard_normal((t, n)) * scales, (n,)


def _heads(rng: np.random.Generator, t: int, n: int) -> tuple[Array, Shape]:
    d = int(rng.choice([16, 32, 64]))
    h = max(1, n // d)
    return rng.standard_normal((t, h * d)), (h, d)


def _probabilities(rng: np.random.Generator, t: int, n: int) -> tuple[Array, Shape]:
    heads, kv = 4, max(4, n // 4)
    s = rng.standard_normal((t, heads, kv)) * 2
    seen = rng.integers(1, kv, t)
    s = np.where(np.arange(kv)[None, None, :] <= seen[:, None, None], s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)).reshape(t, -1), (heads, kv)


def _silu(rng: np.random.Generator, t: int, n: int) -> tuple[Array, Shape]:
    x = rng.standard_normal((t, n)) * 2
    return x / (1 + np.exp(-x)), (n,)


def _logits(rng: np.random.Generator, t: int, n: int) -> tuple[Array, Shape]:
    return rng.standard_normal((t, n)) * 3, (n,)


# A reference of one kind: (values of t tokens by n, the shape of one token's tensor).
REFERENCES: dict[str, Callable[[np.random.Generator, int, int], tuple[Array, Shape]]] = {
    "activations": _activations,
    "heads": _heads,
    "probabilities": _probabilities,
    "silu": _silu,
    "logits": _logits,
}

# -------------------------------------------------------------- causes


def _f32(x: Array) -> Array:
    return x.astype(np.float32).astype(np.float64)


def clean_noise(rng: np.random.Generator, x: Array, relative_only: bool = False) -> Array:
    """What a correct engine differs by: float32 rounding of a different summation order (exact zeros, such
    as masked positions, stay zero; probabilities only ever err relative to their size)."""
    rms = float(np.sqrt(np.mean(np.square(x[np.isfinite(x)])))) or 1.0
    noisy = x * (1 + 3e-7 * rng.standard_normal(x.shape))
    if not relative_only:
        noisy = noisy + 1e-7 * rms * rng.standard_normal(x.shape)
    return _f32(np.where(x == 0, 0.0, noisy))


def _rope(x: Array, shape: Shape, positions: Array, theta: float = 1e4) -> Array:
    h, d = shape
    half = d // 2
    v = x.reshape(len(x), h, d)
    angles = positions[:, None, None] * theta ** (-np.arange(half) * 2 / d)[None, None, :]
    c, s = np.cos(angles), np.sin(angles)
    a, b = v[..., :half], v[..., half:]
    return np.concatenate([a * c - b * s, a * s + b * c], -1).reshape(len(x), -1)


def plant(rng: np.random.Generator, kind: str, R: Array, shape: Shape, ref_kind: str) -> Array | None:
    """Ours for a cause, or None when that cause does not apply to this reference."""
    t, n = R.shape
    if kind in ("none", "int8"):
        if kind == "int8":
            step = float(np.abs(R).max()) / 127
            return np.round(R / step) * step
        return np.copy(R)
    if kind == "scale":
        return R * float(rng.choice([2.0, 0.5, 1 / np.sqrt(64), 1.7, 0.9]))
    if kind == "per_token_scale":
        ms = np.mean(np.square(R), axis=1, keepdims=True)
        scaled: Array = R * np.sqrt(1 + float(rng.uniform(0.05, 0.5)) * ms.mean() / ms)
        return scaled
    if kind == "per_channel_scale":
        return R * (1 + 0.1 * rng.standard_normal(n))
    if kind == "offset":
        return R + 0.5 * float(np.sqrt(np.mean(np.square(R)))) * rng.standard_normal(n)
    if kind == "rotation_within_heads":
        if ref_kind != "heads" or shape[1] % 2:
            return None
        pos = np.arange(t, dtype=np.float64) + 1
        return _rope(R, shape, pos + (pos if rng.random() < 0.5 else 1.0))
    if kind == "permutation":
        if rng.random() < 0.5:
            return np.roll(R, int(rng.integers(1, n)), axis=1)
        half = n // 2
        return np.concatenate([R[:, half:], R[:, :half]], axis=1)
    if kind == "transpose":
        if len(shape) != 2 or min(shape) == 1:
            return None
        return np.stack([r.reshape(shape).T.ravel() for r in R])
    if kind == "equals_other_checkpoint":
        if t < 2:
            return None
        return np.roll(R, 1, axis=0)
    if kind == "localized":
        if len(shape) != 2 or shape[0] < 4:
            return None
        out: Array = R.reshape(t, *shape).copy()
        k = int(rng.integers(0, shape[0]))
        out[:, k] += rng.standard_normal(out[:, k].shape) * float(np.sqrt(np.mean(np.square(R))))
        return out.reshape(t, n)
    if kind == "support_change":
        if ref_kind != "probabilities":
            return None
        heads, kv = shape
        out = R.reshape(t, heads, kv).copy()
        for row in out.reshape(-1, kv):
            last = int(np.flatnonzero(row)[-1])
            if last + 1 < kv:
                row[last + 1] = row[: last + 1].mean()
                row /= row.sum()
        return out.reshape(t, n)
    if kind == "nonfinite_origin":
        out = R.copy()
        out[:, int(rng.integers(0, n))] = np.inf if rng.random() < 0.5 else np.nan
        return out
    if kind == "precision":
        if rng.random() < 0.5:
            return R.astype(np.float16).astype(np.float64)
        return ((R.astype(np.float32).view(np.uint32) + 0x8000) & 0xFFFF0000).view(np.float32).astype(np.float64)
    if kind == "softmax_temperature":
        if ref_kind != "probabilities":
            return None
        beta = float(rng.choice([2.0, 0.5, 4.0]))
        with np.errstate(divide="ignore"):
            q = np.where(R > 0, np.power(R, beta), 0.0).reshape(t, *shape)
        tempered: Array = q / q.sum(-1, keepdims=True)
        return tempered.reshape(t, n)
    scale = float(np.sqrt(np.mean(np.square(R[np.isfinite(R)]))))
    if kind == "random_error":
        return R + float(rng.choice([0.01, 0.1, 0.3, 1.0])) * scale * rng.standard_normal(R.shape)
    if kind == "linear_map":
        W = rng.standard_normal((n, n)) / np.sqrt(n)
        mapped: Array = R + 0.3 * R @ W.T
        return mapped
    if kind == "token_mix":
        return 0.8 * R + 0.2 * np.roll(R, 1, axis=0) if t >= 2 else None
    if kind == "independent":
        return rng.standard_normal(R.shape) * scale
    raise ValueError(kind)


CAUSES = [Planted("none", frozenset(), None)]
CAUSES += [Planted(k, frozenset({k}), k) for k in KINDS]
CAUSES += [Planted(k, frozenset(), None) for k in ("random_error", "linear_map", "token_mix", "independent", "int8")]
# Causes that more than one signature describes rightly.
_ALSO = {
    "scale": {"softmax_temperature"},  # logits scaled by c are a temperature
    "per_channel_scale": {"localized"},
    "permutation": {"transpose"},  # swapped halves are a reshape (2, n/2) transposed too
    "transpose": {"permutation"},
    "localized": {"per_channel_scale", "support_change"},  # the same slice at every token; noise where masked
    "support_change": {"localized"},
    "softmax_temperature": {"support_change"},
    "nonfinite_origin": {"localized"},
    "rotation_within_heads": set(),
    "equals_other_checkpoint": {"support_change"},  # another position's probabilities see one more or fewer
}
CAUSES = [dataclasses.replace(c, allowed=c.allowed | frozenset(_ALSO.get(c.name, ()))) for c in CAUSES]


# -------------------------------------------------------------- cases


def _side(x: Array, shape: Shape, summary: bool, leading: int = 10) -> Side:
    if not summary:
        return Side.of(x.reshape(shape))
    finite = x[np.isfinite(x)]
    stats = {
        "min": float(finite.min()) if finite.size else float("nan"),
        "max": float(finite.max()) if finite.size else float("nan"),
        "mean": float(finite.mean()) if finite.size else float("nan"),
        "rms": float(np.sqrt(np.mean(np.square(finite)))) if finite.size else float("nan"),
        "nan_count": int(np.isnan(x).sum()),
        "inf_count": int(np.isinf(x).sum()),
    }
    return Side.summary(x[:leading], x.size, shape, stats)


# Causes that only show across tokens are planted over 3 or 8 tokens.
ACROSS_TOKENS = {"per_token_scale", "per_channel_scale", "offset", "equals_other_checkpoint"}


def allowed_for(cause: Planted, ref_kind: str, summary: bool) -> tuple[frozenset[str], str | None]:
    """The kinds that describe a cause rightly on this reference, and the one expected."""
    allowed, expected = set(cause.allowed), cause.expected
    if ref_kind == "logits" and cause.name in ("scale", "per_token_scale"):
        allowed.add("softmax_temperature")  # scaled logits are a temperature
        expected = "softmax_temperature" if cause.name == "scale" else expected
    if summary and cause.name in ("support_change", "softmax_temperature"):
        allowed |= {"scale", "per_token_scale"}  # on the leading values a renormalised row is a factor
    return frozenset(allowed), expected


def make_case(rng: np.random.Generator, cause: Planted, summary: bool) -> tuple[Case, str] | None:
    ref_kind = str(rng.choice(list(REFERENCES)))
    t = int(rng.choice([3, 8] if cause.name in ACROSS_TOKENS else [1, 3, 8]))
    n = int(rng.choice([64, 256]))
    R, shape = REFERENCES[ref_kind](rng, t, n)
    R = _f32(R)
    Ours = plant(rng, cause.name, R, shape, ref_kind)
    if Ours is None:
        return None
    if cause.name not in ("precision", "int8"):
        Ours = clean_noise(rng, Ours, relative_only=ref_kind == "probabilities")
    if cause.name == "none" and np.array_equal(Ours, R):
        return None
    first = 1 if cause.name == "rotation_within_heads" and t > 1 else 0
    pairs = [
        Pair(Where("x", 0, None, k), _side(R[k], shape, summary), _side(Ours[k], shape, summary)) for k in range(t)
    ]
    others = _f32(rng.standard_normal((2, R.shape[1])) * float(np.sqrt(np.mean(np.square(R[np.isfinite(R)])))))
    pool = [Reference(p.where, p.ref, "other_token") for k, p in enumerate(pairs) if k != first]
    pool += [
        Reference(Where(f"y{k}", 0, None, first), _side(x, shape, summary), "earlier") for k, x in enumerate(others)
    ]
    case = Case(pairs[first], tokens=pairs, pool=pool, is_logits=ref_kind == "logits")
    return case, ref_kind


@record
class Tally:
    cases: dict[tuple[str, str], int] = dataclasses.field(default_factory=dict)  # (cause, basis) -> planted
    hits: dict[tuple[str, str], int] = dataclasses.field(default_factory=dict)  # ... and its kind claimed
    false: dict[tuple[str, str], int] = dataclasses.field(default_factory=dict)  # (kind, cause group) -> claims
    against: dict[tuple[str, str], int] = dataclasses.field(default_factory=dict)  # (kind, group) -> chances

    def group(self, cause: Planted) -> str:
        return "clean" if cause.name == "none" else "other_bug"

    def add(self, cause: Planted, kinds: set[str], ref_kind: str, summary: bool) -> None:
        allowed, expected = allowed_for(cause, ref_kind, summary)
        basis = "summary" if summary else "full"
        if expected is not None:
            self.cases[(cause.name, basis)] = self.cases.get((cause.name, basis), 0) + 1
            if expected in kinds:
                self.hits[(cause.name, basis)] = self.hits.get((cause.name, basis), 0) + 1
        g = self.group(cause)
        for kind in KINDS:
            if kind in allowed:
                continue
            self.against[(kind, g)] = self.against.get((kind, g), 0) + 1
            if kind in kinds:
                self.false[(kind, g)] = self.false.get((kind, g), 0) + 1

    def false_rate(self, kind: str, group: str) -> tuple[int, int]:
        return self.false.get((kind, group), 0), self.against.get((kind, group), 0)

    def recall(self, kind: str, basis: str = "full") -> tuple[int, int]:
        return self.hits.get((kind, basis), 0), self.cases.get((kind, basis), 0)


def measure(cases: int = 6000, seed: int = 0, summary_share: float = 0.25) -> Tally:
    """Run the catalogue on `cases` random cases, causes drawn in turn."""
    rng = np.random.default_rng(seed)
    tally = Tally()
    made = 0
    attempts = 0
    while made < cases and attempts < cases * 20:
        attempts += 1
        cause = CAUSES[attempts % len(CAUSES)]
        summary = bool(rng.random() < summary_share)
        built = make_case(rng, cause, summary)
        if built is None:
            continue
        case, ref_kind = built
        with np.errstate(all="ignore"):
            kinds = {f.kind for f in find_signatures(case)}
        tally.add(cause, kinds, ref_kind, summary)
        made += 1
    return tally


def table(t: Tally) -> str:
    lines = [
        f"{'kind':24} {'false, clean':>13} {'false, other bugs':>18} {'found, tensors':>15} {'found, summaries':>17}",
    ]
    for kind in KINDS:
        fc, nc = t.false_rate(kind, "clean")
        fo, no = t.false_rate(kind, "other_bug")
        h, n = t.recall(kind)
        hs, ns = t.recall(kind, "summary")
        lines.append(f"{kind:24} {f'{fc}/{nc}':>13} {f'{fo}/{no}':>18} {f'{h}/{n}':>15} {f'{hs}/{ns}':>17}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m orchlog.diagnose.calibration", description=__doc__)
    parser.add_argument("--cases", type=int, default=6000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(table(measure(args.cases, args.seed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
