"""The matrix a guardrail checks, from DIR/config.json or, without one, the seed's layout.

Two shapes are read. The seed's (what prefill/decode runners already write):

    {"kv_aligned": [0, 1], "seeds": [0, 1, 2], "dtype": "bf16", "prompt_len": 512, "gen_len": 128}

and the general one, for any A/B matrix (batch size, dtype, kernels):

    {"run_dirs": "runs/{dtype}/seed_{seed}",          # where each run lives; {axis} placeholders
     "axes": {"dtype": ["f32", "bf16"], "seed": [0, 1]},  # the declared values, in matrix order
     "sides": ["batch_1", "batch_8"],                   # the two subdirectories compared; the first is the reference
     "must_match": {"dtype": ["f32"]},                  # a run must match when each named axis has a listed value
     "metadata": {"prompt_len": 512},                   # values every metadata.json must carry
     "thresholds": {"max_abs_diff": 1e-2}}

Anything not given takes the seed's default: run_dirs
`runs/kv_aligned_{kv_aligned}/seed_{seed}`, sides prefill/decode, must_match
kv_aligned=1. A typo must not silently loosen a guardrail, so unknown keys
are an error; `description` and keys starting with `_` are free for notes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from orchlog.errors import OrchlogError
from orchlog.guardrail.layout import DEFAULT_RUN_DIRS, RunPattern
from orchlog.guardrail.verdicts import Thresholds
from orchlog.records import record

CONFIG_FILE = "config.json"
DEFAULT_SIDES = ("prefill", "decode")
DEFAULT_MUST_MATCH = {"kv_aligned": ("1",)}
SEED_AXES = {"kv_aligned": "kv_aligned", "seeds": "seed"}  # the seed's config keys and the axis each declares
SEED_METADATA = ("dtype", "prompt_len", "gen_len")  # the seed's top-level keys that every run's metadata must match
_GENERAL = ("run_dirs", "axes", "sides", "must_match", "metadata", "thresholds")


def axis_value(value: Any) -> str:
    """An axis value as a directory name spells it (JSON true/false count as 1/0, as metadata writers mean them)."""
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, (int, str)) and str(value) and "/" not in str(value):
        return str(value)
    raise ValueError(f"{value!r} is not an axis value (an integer or a string that can name a directory)")


def natural(value: str) -> int | str:
    """An axis value for JSON: 3 rather than "3" when the directory name is an integer."""
    try:
        return int(value) if str(int(value)) == value else value
    except ValueError:
        return value


@record(frozen=True)
class Matrix:
    pattern: RunPattern
    declared: dict[str, tuple[str, ...]] | None  # axis -> declared values in matrix order; None without a config
    sides: tuple[str, str]
    must_match: dict[str, frozenset[str]]
    thresholds: Thresholds
    metadata: dict[str, Any]  # expected metadata.json values
    source: str | None  # the config file read, None for the defaults

    @property
    def axes(self) -> tuple[str, ...]:
        return self.pattern.axes

    def requires_match(self, values: dict[str, str]) -> bool:
        return all(values.get(axis) in allowed for axis, allowed in self.must_match.items())

    def must_match_text(self) -> str:
        return " and ".join(f"{axis} in {{{', '.join(sorted(v))}}}" for axis, v in self.must_match.items()) or "always"

    def to_json(self) -> dict[str, Any]:
        return {
            "config": self.source,
            "run_dirs": self.pattern.text,
            "axes": list(self.axes),
            "declared": None
            if self.declared is None
            else {a: [natural(x) for x in v] for a, v in self.declared.items()},
            "sides": list(self.sides),
            "must_match": {a: [natural(x) for x in sorted(v)] for a, v in self.must_match.items()},
            "metadata": self.metadata,
        }


def default_matrix(thresholds: Thresholds = Thresholds()) -> Matrix:
    return Matrix(
        RunPattern(DEFAULT_RUN_DIRS),
        None,
        DEFAULT_SIDES,
        {a: frozenset(v) for a, v in DEFAULT_MUST_MATCH.items()},
        thresholds,
        {},
        None,
    )


def load_matrix(directory: Path, config: Path | None = None) -> Matrix:
    """The matrix for an artifact directory: from `config` if given, else DIR/config.json, else the defaults."""
    path = config if config is not None else directory / CONFIG_FILE
    if config is None and not path.exists():
        return default_matrix()
    return parse_config(_read_json(path), str(path))


def _read_json(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise OrchlogError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise OrchlogError(f"{path}: not UTF-8 text") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise OrchlogError(f"{path}:{exc.lineno}: malformed JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise OrchlogError(f"{path}: nested too deeply to be a matrix") from None
    if not isinstance(doc, dict):
        raise OrchlogError(f"{path}: must hold a JSON object")
    return doc


def parse_config(doc: dict[str, Any], source: str) -> Matrix:
    known = set(_GENERAL) | set(SEED_AXES) | set(SEED_METADATA) | {"description"}
    unknown = sorted(k for k in doc if k not in known and not k.startswith("_"))
    if unknown:
        raise OrchlogError(
            f"{source}: unknown key {unknown[0]!r} (known: {', '.join(sorted(known))}; "
            "keys starting with _ are ignored)"
        )
    seed_keys = [k for k in SEED_AXES if k in doc]
    if seed_keys and "axes" in doc:
        raise OrchlogError(
            f"{source}: declare the axes either in 'axes' or with the seed's {'/'.join(SEED_AXES)} keys, not both"
        )
    try:
        pattern = RunPattern(_string(doc.get("run_dirs", DEFAULT_RUN_DIRS), "run_dirs", source))
    except OrchlogError as exc:
        raise OrchlogError(f"{source}: {exc}") from None
    declared = _declared_axes(doc, seed_keys, source)
    missing = [a for a in pattern.axes if a not in declared]
    extra = [a for a in declared if a not in pattern.axes]
    if missing:
        raise OrchlogError(f"{source}: declares no values for axis {missing[0]!r} of run_dirs {pattern.text!r}")
    if extra:
        raise OrchlogError(f"{source}: axis {extra[0]!r} is not in run_dirs {pattern.text!r}")
    declared = {a: declared[a] for a in pattern.axes}  # matrix order: the pattern's
    return Matrix(
        pattern=pattern,
        declared=declared,
        sides=_sides(doc.get("sides", list(DEFAULT_SIDES)), source),
        must_match=_must_match(doc, pattern, source),
        thresholds=Thresholds().overridden(
            _object(doc.get("thresholds", {}), "thresholds", source), f"{source}: thresholds"
        ),
        metadata={
            **{k: doc[k] for k in SEED_METADATA if k in doc},
            **_object(doc.get("metadata", {}), "metadata", source),
        },
        source=source,
    )


def _declared_axes(doc: dict[str, Any], seed_keys: list[str], source: str) -> dict[str, tuple[str, ...]]:
    if seed_keys:
        raw = {SEED_AXES[k]: doc[k] for k in seed_keys}
    else:
        raw = _object(doc.get("axes", {}), "axes", source)
    return {axis: _values(values, f"axis {axis!r}", source) for axis, values in raw.items()}


def _values(values: Any, what: str, source: str) -> tuple[str, ...]:
    items = values if isinstance(values, list) else [values]  # a single value is a one-value axis
    try:
        out = tuple(axis_value(v) for v in items)
    except ValueError as exc:
        raise OrchlogError(f"{source}: {what}: {exc}") from None
    if not out or len(set(out)) != len(out):
        raise OrchlogError(f"{source}: {what} must list one or more distinct values")
    return out


def _must_match(doc: dict[str, Any], pattern: RunPattern, source: str) -> dict[str, frozenset[str]]:
    if "must_match" not in doc:
        if any(a not in pattern.axes for a in DEFAULT_MUST_MATCH):
            raise OrchlogError(
                f"{source}: run_dirs {pattern.text!r} has no kv_aligned axis, so say which runs must "
                'match: "must_match": {AXIS: [VALUES]} ({} for all)'
            )
        return {a: frozenset(v) for a, v in DEFAULT_MUST_MATCH.items()}
    rule = _object(doc["must_match"], "must_match", source)
    unknown = [a for a in rule if a not in pattern.axes]
    if unknown:
        raise OrchlogError(f"{source}: must_match names axis {unknown[0]!r}, which run_dirs {pattern.text!r} lacks")
    return {axis: frozenset(_values(v, f"must_match {axis!r}", source)) for axis, v in rule.items()}


def _sides(value: Any, source: str) -> tuple[str, str]:
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not all(isinstance(s, str) and s for s in value)
        or value[0] == value[1]
        or any("/" in s or s in (".", "..") for s in value)
    ):
        raise OrchlogError(f'{source}: sides must name two different subdirectories, e.g. ["prefill", "decode"]')
    return value[0], value[1]


def _object(value: Any, key: str, source: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise OrchlogError(f"{source}: {key} must be a JSON object")
    return value


def _string(value: Any, key: str, source: str) -> str:
    if not isinstance(value, str):
        raise OrchlogError(f"{source}: {key} must be a string")
    return value
