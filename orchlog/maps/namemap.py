"""Name maps: let engines that name stages differently meet on one canonical name, layer and stage.

A map is a TOML file (shipped ones live in orchlog/maps/ and are chosen by
name, e.g. `--map hf_qwen2`; any other is a path):

    description = "llama.cpp and HF names for the same points"

    [names]                      # pattern = canonical name, tried in order
    "blk.{layer}.attn_norm" = "attn_norm"
    "attn_norm-{layer}" = "attn_norm"
    "model.layers.{layer}.input_layernorm" = "attn_norm"
    "model.layers.{layer}.self_attn.q_proj" = "Qcur@add"          # sets the stage too
    "model.layers.{layer}.self_attn.o_proj@input" = "kqv_out"     # matches name@stage
    "lm_head" = "result_output"

    [regex]                      # full-match regular expressions, for what patterns cannot say
    '^layers\\.(?P<layer>\\d+)\\.ffn_(?:out|down)$' = "ffn_out"

In a pattern `{layer}` captures a layer index (digits), `*` matches any
run of characters and everything else is literal. The captured index
becomes the record's layer when the record has none. A canonical name may
itself hold `{layer}`. Names that no pattern matches are left as they are.

Stages: a pattern holding `@` is tried on `name@stage`, and only for records
that have a stage; the stage it matched is replaced by the target's. A
target `name@stage` sets the record's stage (`name@` clears it); a plain
target keeps the record's stage, unless the pattern matched one.

A target may be a table that also says how to view the tensor before it is
compared (orchlog.maps.views; the operations apply in the order written,
or list them under `view` when one repeats) and whether the canonical
checkpoint is compared on the common window of two extents:

    "model.layers.{layer}.self_attn@probs" = { name = "kq_soft_max", stage = "", window = true }
    "past_key_values@value" = { name = "cache_v", stage = "", slice = "0", transpose = [1, 2] }
    "Qcur@rope" = { view = [{ reshape = [0, -1, 2] }, { permute = [0, 2, 1] }, { reshape = [0, -1] }] }

A table without `name` keeps the record's name. `[shards]` says how an
engine that does not annotate its records splits a canonical checkpoint
across tensor-parallel ranks (orchlog.maps.shards), and `[derived]`
computes canonical checkpoints from others (orchlog.maps.derived).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from orchlog.errors import OrchlogError
from orchlog.maps.derived import DerivedSpec, parse_derived
from orchlog.maps.shards import Dims, parse_dims
from orchlog.maps.views import OPS, View, ViewError, apply_view, parse_view
from orchlog.read.batch import NONE, RecordBatch
from orchlog.read.trace import Location
from orchlog.records import record
from orchlog.strings import Strings
from orchlog.tolerances.tomlfile import load_named, shipped

MAPS = "orchlog.maps"
_PLACEHOLDER = re.compile(r"\{layer\}|\*")


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """`blk.{layer}.attn_norm` -> a full-match regex with a `layer` group."""
    parts, pos, seen_layer = [], 0, False
    for m in _PLACEHOLDER.finditer(pattern):
        parts.append(re.escape(pattern[pos : m.start()]))
        if m[0] == "*":
            parts.append(".*?")
        elif seen_layer:
            parts.append(r"(?P=layer)")
        else:
            parts.append(r"(?P<layer>\d+)")
            seen_layer = True
        pos = m.end()
    parts.append(re.escape(pattern[pos:]))
    return re.compile("".join(parts))


STAGE_SEPARATOR = "@"


@record(frozen=True)
class NameRule:
    source: str  # the pattern as written, for messages
    regex: re.Pattern[str]
    target: str
    matches_stage: bool = False  # tried on "name@stage"
    sets_stage: bool = False  # the target says what the stage becomes
    target_stage: str | None = None
    view: View = View(())  # how the tensor is looked at before it is compared
    window: bool = False  # the canonical checkpoint is compared on the common window of two extents

    @staticmethod
    def of(source: str, regex: re.Pattern[str], target: str, view: View = View(()), window: bool = False) -> NameRule:
        name, sep, stage = target.partition(STAGE_SEPARATOR)
        return NameRule(source, regex, name, STAGE_SEPARATOR in source, bool(sep), stage or None, view, window)


class Mapped(NamedTuple):
    checkpoint: str
    layer: int | None  # captured by the pattern
    stage: str | None  # what the record's stage becomes


@record
class NameMap:
    """Ordered rules; the first that matches a name decides its canonical name, layer and stage."""

    rules: list[NameRule]
    sources: list[str]  # where the rules came from, for the report
    shards: list[tuple[str, Dims]] = dataclasses.field(default_factory=list)  # canonical glob -> layout
    derived: list[DerivedSpec] = dataclasses.field(default_factory=list)

    def __post_init__(self) -> None:
        self._cache: dict[tuple[str, str | None], tuple[Mapped, NameRule] | None] = {}
        self.uses_stages = any(rule.matches_stage or rule.sets_stage for rule in self.rules)
        self.problem: Callable[[Location, str], None] | None = None  # told of records a view cannot fit

    @property
    def windows(self) -> tuple[str, ...]:
        """Globs over canonical names that targets marked `window = true`."""
        return tuple(rule.target.replace("{layer}", "*") for rule in self.rules if rule.window and rule.target)

    def _match(self, name: str, stage: str | None) -> tuple[Mapped, NameRule] | None:
        key = (name, stage)
        if key in self._cache:
            return self._cache[key]
        found = None
        for rule in self.rules:
            if rule.matches_stage and stage is None:
                continue
            m = rule.regex.fullmatch(f"{name}{STAGE_SEPARATOR}{stage}" if rule.matches_stage else name)
            if m:
                layer = m.groupdict().get("layer")
                layer = None if layer is None else int(layer)
                target = rule.target or name
                target = target.replace("{layer}", str(layer)) if layer is not None else target
                new_stage = rule.target_stage if rule.sets_stage else None if rule.matches_stage else stage
                if not rule.target and not rule.sets_stage:  # a view alone: the record keeps its name and stage
                    new_stage = stage
                found = (Mapped(target, layer, new_stage), rule)
                break
        self._cache[key] = found
        return found

    def lookup(self, name: str, stage: str | None = None) -> Mapped | None:
        """What a record named `name` with `stage` becomes, or None when no rule matches."""
        found = self._match(name, stage)
        return None if found is None else found[0]

    def _distinct(self, batch: RecordBatch) -> tuple[list[tuple[str | None, str | None]], np.ndarray]:
        """The distinct (name, stage) pairs the rules must see, and each row's index into them."""
        names, stages = batch.checkpoint, batch.stage
        if not self.uses_stages:  # one lookup per distinct name; the last entry stands for a missing name
            keys: list[tuple[str | None, str | None]] = [(name, None) for name in [*names.table, None]]
            return keys, np.where(names.codes < 0, len(names.table), names.codes)
        width = len(stages.table) + 1
        pairs = (names.codes.astype(np.int64) + 1) * width + (stages.codes.astype(np.int64) + 1)
        distinct, inverse = np.unique(pairs, return_inverse=True)
        keys = []
        for pair in distinct.tolist():
            n, s = divmod(pair, width)
            keys.append((None if n == 0 else names.table[n - 1], None if s == 0 else stages.table[s - 1]))
        return keys, inverse.reshape(-1)

    def apply(self, batch: RecordBatch) -> RecordBatch:
        """The batch with mapped checkpoints (and stages) renamed, the original name kept in renamed_from,
        and layers filled in."""
        if not self.rules:
            return batch
        keys, inverse = self._distinct(batch)
        found = [self._match(name, stage) if name is not None else None for name, stage in keys]
        hits = [f[0] if f else None for f in found]
        if not any(hits):
            return batch

        def per_row(values: list[str | None]) -> Strings:
            distinct = Strings.from_values(values)
            return Strings(distinct.table, distinct.codes[inverse])

        checkpoint = per_row([hit.checkpoint if hit else name for hit, (name, _) in zip(hits, keys)])
        captured = np.array([hit.layer if hit and hit.layer is not None else NONE for hit in hits])[inverse]
        changed = [hit is not None and (hit.checkpoint, hit.stage) != key for hit, key in zip(hits, keys)]
        renamed = np.array(changed)[inverse]
        stage = batch.stage
        if self.uses_stages:
            stage = per_row([hit.stage if hit else s for hit, (_, s) in zip(hits, keys)])
        layer = np.where((batch.layer == NONE) & (captured != NONE), captured, batch.layer)
        # Keep the name each side wrote; a record renamed by an earlier map keeps its first name.
        assert batch.renamed_from is not None, "RecordBatch.__post_init__ fills it"
        both = Strings.concat([batch.renamed_from, batch.checkpoint])
        n = len(batch)
        first_rename = renamed & (batch.renamed_from.codes < 0)
        renamed_from = Strings(both.table, np.where(first_rename, both.codes[n:], both.codes[:n]))
        out = dataclasses.replace(batch, checkpoint=checkpoint, stage=stage, layer=layer, renamed_from=renamed_from)
        for k, f in enumerate(found):
            if f is not None and f[1].view:
                out = apply_view(out, np.flatnonzero(inverse == k), f[1].view, self._view_problem)
        return out

    def _view_problem(self, batch: RecordBatch, row: int, error: ViewError) -> None:
        if self.problem is not None:
            self.problem(batch.location(row), f"{batch.checkpoint[row]}: {error}; compared as written")


def shipped_maps() -> list[str]:
    return shipped(MAPS)


SECTIONS = ("description", "names", "regex", "shards", "derived")
_TABLE_KEYS = ("name", "stage", "view", "window", *OPS)


def _table_target(target: dict[str, Any], where: str) -> tuple[str, View, bool]:
    """A table target as (name@stage text, view, window)."""
    unknown = set(target) - set(_TABLE_KEYS)
    if unknown:
        raise OrchlogError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}; expected {', '.join(_TABLE_KEYS)}")
    name, stage = target.get("name", ""), target.get("stage")
    if not isinstance(name, str) or (stage is not None and not isinstance(stage, str)):
        raise OrchlogError(f"{where}: name and stage must be strings")
    if not isinstance(target.get("window", False), bool):
        raise OrchlogError(f"{where}: window must be true or false")
    ops = [(key, value) for key, value in target.items() if key in OPS]
    steps = target.get("view", [])
    if not isinstance(steps, list) or not all(isinstance(s, dict) and len(s) == 1 for s in steps):
        raise OrchlogError(f"{where}: view must be a list of one-operation tables, e.g. [{{ permute = [1, 0] }}]")
    if ops and steps:
        raise OrchlogError(f"{where}: give the operations either as keys or as a view list, not both")
    ops += [next(iter(s.items())) for s in steps]
    try:
        view = parse_view(ops)
    except OrchlogError as exc:
        raise OrchlogError(f"{where}: {exc}") from None
    text = name if stage is None else f"{name}{STAGE_SEPARATOR}{stage}"
    if not name and target.get("window"):
        raise OrchlogError(f"{where}: window = true needs the canonical name (name = ...) it applies to")
    if not name and not (view or stage is not None):
        raise OrchlogError(f"{where}: a table target needs a name, a stage or a view")
    return text, view, bool(target.get("window", False))


def _rules_from(doc: dict[str, Any], where: str) -> list[NameRule]:
    rules = []
    unknown = set(doc) - set(SECTIONS)
    if unknown:
        raise OrchlogError(
            f"{where}: unknown section(s) {', '.join(sorted(unknown))}; expected [names], [regex], [shards], [derived]"
        )
    for section, compile_ in (("names", compile_pattern), ("regex", re.compile)):
        table = doc.get(section, {})
        if not isinstance(table, dict):
            raise OrchlogError(f'{where}: [{section}] must be a table of pattern = "canonical name"')
        for pattern, target in table.items():
            view, window = View(()), False
            if isinstance(target, dict):
                target, view, window = _table_target(target, f"{where}: [{section}] {pattern!r}")
            elif not isinstance(target, str) or not target:
                raise OrchlogError(f"{where}: [{section}] {pattern!r} must map to a non-empty name")
            try:
                regex = compile_(pattern)
            except re.error as exc:
                raise OrchlogError(f"{where}: [{section}] {pattern!r} is not a valid pattern ({exc})") from None
            rules.append(NameRule.of(pattern, regex, target, view, window))
    return rules


def _shards_from(doc: dict[str, Any], where: str) -> list[tuple[str, Dims]]:
    table = doc.get("shards", {})
    if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
        raise OrchlogError(f'{where}: [shards] must be a table of canonical name = "dims", e.g. "ffn_up" = "f(tp)"')
    out = []
    for glob, dims in table.items():
        try:
            out.append((glob, parse_dims(dims)))
        except ValueError as exc:
            raise OrchlogError(f"{where}: [shards] {glob!r}: {exc}") from None
    return out


def load_maps(specs: list[str]) -> NameMap:
    """The rules of every map given (file paths or shipped names), in order."""
    rules, sources, shards, derived = [], [], [], []
    for spec in specs:
        where, doc = load_named(spec, MAPS, "--map")
        rules.extend(_rules_from(doc, where))
        shards.extend(_shards_from(doc, where))
        derived.extend(parse_derived(doc.get("derived", {}), where, _map_dir(spec)))
        sources.append(where)
    return NameMap(rules, sources, shards, derived)


def _map_dir(spec: str) -> Path | None:
    """Where a map's relative file names (derived weights) are found: beside the map file."""
    path = Path(spec)
    return path.resolve().parent if path.is_file() else None
