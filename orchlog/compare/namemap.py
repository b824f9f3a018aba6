"""Name maps: let engines that name stages differently meet on one canonical name and layer.

A map is a TOML file (shipped ones live in orchlog/maps/ and are chosen by
name, e.g. `--map example`; any other is a path):

    description = "llama.cpp and HF names for the same points"

    [names]                      # pattern = canonical name, tried in order
    "blk.{layer}.attn_norm" = "attn_norm"
    "attn_norm-{layer}" = "attn_norm"
    "model.layers.{layer}.input_layernorm" = "attn_norm"
    "lm_head" = "result_output"

    [regex]                      # full-match regular expressions, for what patterns cannot say
    '^layers\\.(?P<layer>\\d+)\\.ffn_(?:out|down)$' = "ffn_out"

In a pattern `{layer}` captures a layer index (digits), `*` matches any
run of characters and everything else is literal. The captured index
becomes the record's layer when the record has none. A canonical name may
itself hold `{layer}`. Names that no pattern matches are left as they are.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Any

import numpy as np

from orchlog.batch import NONE, RecordBatch
from orchlog.compare.tomlfile import load_named, shipped
from orchlog.errors import OrchlogError
from orchlog.strings import Strings

MAPS = "orchlog.maps"
_PLACEHOLDER = re.compile(r"\{layer\}|\*")


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """`blk.{layer}.attn_norm` -> a full-match regex with a `layer` group."""
    parts, pos, seen_layer = [], 0, False
    for m in _PLACEHOLDER.finditer(pattern):
        parts.append(re.escape(pattern[pos:m.start()]))
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


@dataclasses.dataclass(frozen=True)
class NameRule:
    source: str  # the pattern as written, for messages
    regex: re.Pattern[str]
    target: str


@dataclasses.dataclass
class NameMap:
    """Ordered rules; the first that matches a name decides its canonical name and layer."""

    rules: list[NameRule]
    sources: list[str]  # where the rules came from, for the report

    def __post_init__(self) -> None:
        self._cache: dict[str, tuple[str, int | None] | None] = {}

    def lookup(self, name: str) -> tuple[str, int | None] | None:
        """(canonical name, captured layer or None), or None when no rule matches."""
        if name in self._cache:
            return self._cache[name]
        found = None
        for rule in self.rules:
            m = rule.regex.fullmatch(name)
            if m:
                layer = m.groupdict().get("layer")
                layer = None if layer is None else int(layer)
                target = rule.target.replace("{layer}", str(layer)) if layer is not None else rule.target
                found = (target, layer)
                break
        self._cache[name] = found
        return found

    def apply(self, batch: RecordBatch) -> RecordBatch:
        """The batch with mapped checkpoints renamed (the original kept in renamed_from) and layers filled in."""
        col = batch.checkpoint
        hits = [self.lookup(name) for name in col.table]  # once per distinct name
        if not any(hits):
            return batch
        target = [hit[0] if hit else name for hit, name in zip(hits, col.table)]
        captured = np.array([hit[1] if hit and hit[1] is not None else NONE for hit in hits] + [NONE])[col.codes]
        renamed = np.array([bool(hit) and hit[0] != name for hit, name in zip(hits, col.table)] + [False])[col.codes]
        layer = np.where((batch.layer == NONE) & (captured != NONE), captured, batch.layer)
        # Keep the name each side wrote; a record renamed by an earlier map keeps its first name.
        both = Strings.concat([batch.renamed_from, col])
        n = len(batch)
        first_rename = renamed & (batch.renamed_from.codes < 0)
        renamed_from = Strings(both.table, np.where(first_rename, both.codes[n:], both.codes[:n]))
        return dataclasses.replace(batch, checkpoint=Strings(target, col.codes), layer=layer, renamed_from=renamed_from)


def shipped_maps() -> list[str]:
    return shipped(MAPS)


def _rules_from(doc: dict[str, Any], where: str) -> list[NameRule]:
    rules = []
    unknown = set(doc) - {"description", "names", "regex"}
    if unknown:
        raise OrchlogError(f"{where}: unknown section(s) {', '.join(sorted(unknown))}; expected [names] and [regex]")
    for section, compile_ in (("names", compile_pattern), ("regex", re.compile)):
        table = doc.get(section, {})
        if not isinstance(table, dict):
            raise OrchlogError(f"{where}: [{section}] must be a table of pattern = \"canonical name\"")
        for pattern, target in table.items():
            if not isinstance(target, str) or not target:
                raise OrchlogError(f"{where}: [{section}] {pattern!r} must map to a non-empty name")
            try:
                regex = compile_(pattern)
            except re.error as exc:
                raise OrchlogError(f"{where}: [{section}] {pattern!r} is not a valid pattern ({exc})") from None
            rules.append(NameRule(pattern, regex, target))
    return rules


def load_maps(specs: list[str]) -> NameMap:
    """The rules of every map given (file paths or shipped names), in order."""
    rules, sources = [], []
    for spec in specs:
        where, doc = load_named(spec, MAPS, "--map")
        rules.extend(_rules_from(doc, where))
        sources.append(where)
    return NameMap(rules, sources)
