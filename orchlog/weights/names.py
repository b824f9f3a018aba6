"""Weight-name maps: which GGUF tensor is which HF parameter.

A map is TOML (shipped: orchlog/weights/maps/, chosen by name; any other is a path):

    description = "..."
    architectures = ["llama"]          # GGUF general.architecture values it is for
    qk_permuted = true                 # GGUF attn_q/attn_k hold HF's q_proj/k_proj with llama.cpp's row permutation
    [names]
    "blk.{layer}.attn_q.weight" = "model.layers.{layer}.self_attn.q_proj.weight"

`{layer}` captures a block index on either side. `choose_map` picks a map for two sources: none when both use
the same names, else the map of the GGUF side's architecture, else the shipped map that pairs the most names.
"""

from __future__ import annotations

import re

from orchlog.errors import OrchlogError
from orchlog.records import record
from orchlog.tolerances.tomlfile import load_named, shipped

MAPS = "orchlog.weights.maps"
_LAYER = re.compile(r"\{layer\}")


def _regex(pattern: str) -> re.Pattern[str]:
    parts = _LAYER.split(pattern)
    return re.compile(r"(?P<layer>\d+)".join(re.escape(p) for p in parts) if len(parts) > 1 else re.escape(pattern))


@record(frozen=True)
class NameMap:
    name: str
    source: str
    pairs: tuple[tuple[str, str], ...]  # (GGUF pattern, HF pattern)
    architectures: tuple[str, ...] = ()
    qk_permuted: bool = False

    def to_hf(self, gguf_name: str) -> str | None:
        return self._translate(gguf_name, 0)

    def to_gguf(self, hf_name: str) -> str | None:
        return self._translate(hf_name, 1)

    def _translate(self, name: str, side: int) -> str | None:
        for pair in self.pairs:
            m = _regex(pair[side]).fullmatch(name)
            if m:
                layer = m.groupdict().get("layer")
                return pair[1 - side].replace("{layer}", layer) if layer is not None else pair[1 - side]
        return None

    def is_qk(self, gguf_name: str) -> str | None:
        """'q' or 'k' when the GGUF tensor is a Q or K projection weight or bias, else None."""
        m = re.fullmatch(r"blk\.\d+\.attn_([qk])\.(weight|bias)", gguf_name)
        return m.group(1) if m else None


IDENTITY = NameMap("none", "same names on both sides", ())


def load_map(spec: str) -> NameMap:
    where, doc = load_named(spec, MAPS, "--map")
    names = doc.get("names")
    if not isinstance(names, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in names.items()):
        raise OrchlogError(f"{where}: [names] must map GGUF names to HF names (strings)")
    arches = doc.get("architectures", [])
    if not isinstance(arches, list) or not all(isinstance(a, str) for a in arches):
        raise OrchlogError(f"{where}: architectures must be a list of strings")
    return NameMap(spec, where, tuple(names.items()), tuple(arches), bool(doc.get("qk_permuted", False)))


def shipped_maps() -> list[NameMap]:
    return [load_map(name) for name in shipped(MAPS)]


def choose_map(names_a: list[str], names_b: list[str], gguf_arch: str | None, gguf_side: str | None) -> NameMap:
    """The map that pairs two sources' names (see the module's docstring)."""
    if len(set(names_a) & set(names_b)) >= 0.5 * min(len(names_a), len(names_b)) or gguf_side is None:
        return IDENTITY
    candidates = shipped_maps()
    for m in candidates:
        if gguf_arch in m.architectures:
            return m
    gguf_names, hf_names = (names_a, names_b) if gguf_side == "a" else (names_b, names_a)
    best = max(candidates, key=lambda m: len({m.to_hf(n) for n in gguf_names} & set(hf_names)), default=None)
    return best if best is not None else IDENTITY
