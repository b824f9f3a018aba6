"""The dims notation: how a rank's piece of a tensor relates to the whole, one token per axis.

Two spellings of SGLang's notation are read, the current one and the one
orchlog first copied, plus two layouts SGLang's cannot say:

    s h[tp]              axis 1 split across the tensor-parallel ranks (current SGLang)
    s h(tp)              the same (SGLang's older spelling)
    s h[tp:partial]      each rank holds a partial sum (older: h(tp,partial))
    (a*b)[tp]            a fused axis (a and b flattened into one), split across ranks
    s[cp:zigzag] h       split along another axis (cp, ep, sp, dp, ...): parsed, not gathered
    1                    an axis of length 1
    t h # tp:replicated  after `#`: every rank holds the whole tensor (dp:=GROUP is read and ignored)

    (q=896|k=128|v=128)[tp]
        a fused per-shard layout (nnsight PR #719): each rank's piece is its own share of every
        section, side by side ([q0 k0 v0] on rank 0), so that the ranks' pieces concatenated are
        [q0 k0 v0 | q1 k1 v1], not the whole [q | k | v]. The sizes are the sections' lengths in
        the whole tensor; gathering puts each section together across ranks, then the sections.
    (q=896|k=128/2|v=128/2)[tp], h[tp:groups=2]
        GQA with fewer KV heads than ranks: the section (or axis) is split into 2 parts, each held
        by world_size/2 consecutive ranks (ranks 0-1 hold KV head 0, ranks 2-3 head 1 of 4); a
        gather takes one copy of each part.

Qualifiers `zigzag`, `natural` and `sharded` are accepted as SGLang writes them; they change
nothing for tensor parallelism. Names are not checked against anything: they are the reader's
documentation of the axes.
"""

from __future__ import annotations

import re

from orchlog.records import record

AXES = (
    "tp",
    "cp",
    "ep",
    "sp",
    "dp",
    "etp",
    "edp",
    "attn_tp",
    "attn_dp",
    "moe_ep",
    "moe_tp",
    "moe_dp",
    "recompute_pseudo",
)
QUALIFIERS = ("zigzag", "natural", "partial", "sharded")
TOKEN_NAMES = ("t", "s")

_NAME = r"[A-Za-z_]\w*"
_NEW = re.compile(
    rf"^(?P<name>{_NAME}|\({_NAME}(?:\*{_NAME})+\)|\((?P<sections>[^()\[\]]+)\))(?:\[(?P<mods>[^\]]*)\])?$"
)
_OLD = re.compile(rf"^(?P<name>{_NAME})\((?P<mods>[^)]*)\)$")
_SECTION = re.compile(rf"^(?P<name>{_NAME})=(?P<size>\d{{1,12}})(?:/(?P<groups>\d{{1,6}}))?$")
_GROUPS = re.compile(r"^groups=(\d{1,6})$")


@record(frozen=True)
class Section:
    name: str
    size: int  # length in the whole tensor
    groups: int | None = None  # split into this many parts, each on world_size/groups ranks


@record(frozen=True)
class Dims:
    names: tuple[str, ...]
    split: int | None  # the axis split across tensor-parallel ranks
    partial: bool  # pieces are partial sums
    text: str
    replicated: bool = False  # every rank holds the whole tensor
    sections: tuple[Section, ...] = ()  # a fused per-shard layout along the split axis
    groups: int | None = None  # the split axis's parts, each held by world_size/groups ranks
    other: tuple[str, ...] = ()  # axes split along other parallelisms (cp, ep, ...), which orchlog does not gather

    @property
    def token_axis(self) -> int | None:
        return next((k for k, n in enumerate(self.names) if n in TOKEN_NAMES), None)


def _modifiers(text: str, where: str) -> list[tuple[str, list[str]]]:
    """`tp:partial, cp:zigzag+natural` -> [("tp", ["partial"]), ("cp", ["zigzag", "natural"])]."""
    out: list[tuple[str, list[str]]] = []
    for token in (t.strip() for t in text.split(",") if t.strip()):
        axis, _, quals = token.partition(":")
        axis = axis.strip()
        if axis not in AXES:
            raise ValueError(f"{where}: unknown axis {axis!r}; known: {', '.join(AXES)}")
        parsed = [q.strip() for q in quals.split("+") if q.strip()]
        for q in parsed:
            if q not in QUALIFIERS and not _GROUPS.match(q):
                raise ValueError(f"{where}: unknown qualifier {q!r}; known: {', '.join(QUALIFIERS)}, groups=N")
        if axis in {a for a, _ in out}:
            raise ValueError(f"{where}: axis {axis} is named twice")
        out.append((axis, parsed))
    return out


def _old_modifiers(text: str, where: str) -> list[tuple[str, list[str]]]:
    """The older spelling: `tp`, `tp,partial`, `cp,zigzag`: an axis, then its qualifiers."""
    parts = [x.strip() for x in text.split(",") if x.strip()]
    if parts == ["partial"]:  # `h(partial)`: orchlog's first notation took it as tensor parallelism
        parts = ["tp", "partial"]
    if not parts or parts[0] not in AXES:
        raise ValueError(f"{where}: unknown modifier(s) {text!r}; known: tp, partial")
    return _modifiers(f"{parts[0]}:{'+'.join(parts[1:])}" if parts[1:] else parts[0], where)


def _sections(text: str, where: str) -> tuple[Section, ...]:
    out = []
    for part in text.split("|"):
        m = _SECTION.match(part.strip())
        if m is None:
            raise ValueError(f"{where}: section {part.strip()!r} is not name=size or name=size/groups")
        groups = int(m["groups"]) if m["groups"] else None
        if int(m["size"]) == 0 or groups == 0:
            raise ValueError(f"{where}: section {part.strip()!r} has no length or no groups")
        out.append(Section(m["name"], int(m["size"]), groups))
    if len({s.name for s in out}) != len(out):
        raise ValueError(f"{where}: a section is named twice")
    return tuple(out)


def _comment(text: str, where: str) -> bool:
    """Whether the declarations after `#` say the tensor is replicated across tensor-parallel ranks."""
    replicated = False
    for token in text.split():
        if re.fullmatch(r"dp:=\w+", token):
            continue
        m = re.fullmatch(r"(\w+):replicated", token)
        if m is None or m[1] not in AXES:
            raise ValueError(f"{where}: {token!r} after # is neither dp:=GROUP nor AXIS:replicated")
        replicated = replicated or m[1] == "tp"
    return replicated


def parse(text: str) -> Dims:
    """A dims string as Dims; ValueError saying which token is wrong."""
    where = f"dims {text[:120]!r}"
    shape, _, comment = text.partition("#")
    replicated = _comment(comment, where)
    names: list[str] = []
    split, partial, groups = None, False, None
    sections: tuple[Section, ...] = ()
    other: list[str] = []
    for k, token in enumerate(shape.split()):
        if token == "1":
            names.append("1")
            continue
        old = _OLD.match(token)
        new = None if old else _NEW.match(token)
        if old is None and new is None:
            raise ValueError(
                f"{where}: {token!r} is not name, name[modifiers], (a*b)[modifiers] or (x=N|y=M)[modifiers]"
            )
        m = old or new
        assert m is not None
        mods = _old_modifiers(m["mods"], where) if old else _modifiers(m["mods"] or "", where)
        name = m["name"].strip("()")
        if new is not None and new["sections"]:
            token_sections = _sections(new["sections"], where)
            name = "|".join(s.name for s in token_sections)
        else:
            token_sections = ()
        for axis, quals in mods:
            if axis != "tp":
                other.append(f"{axis} on axis {k}")
                continue
            if "partial" in quals:
                partial = True
                continue
            if split is not None:
                raise ValueError(f"{where}: more than one axis is split across tensor-parallel ranks")
            split, sections = k, token_sections
            groups = next((int(g[1]) for q in quals if (g := _GROUPS.match(q))), None)
            if groups == 0:
                raise ValueError(f"{where}: groups=0")
        names.append(name)
    if not names:
        raise ValueError('dims must name the tensor\'s axes, e.g. "s h[tp]"')
    if len(set(n for n in names if n != "1")) != len([n for n in names if n != "1"]):
        raise ValueError(f"{where} names an axis twice")
    if partial and split is not None:
        raise ValueError(f"{where}: a piece is either split along an axis or a partial sum, not both")
    if replicated and (partial or split is not None):
        raise ValueError(f"{where}: declared replicated across tp, and also split or partial")
    return Dims(tuple(names), split, partial, text, replicated, sections, groups, tuple(other))


def plan(dims: Dims, piece_length: int, count: int) -> list[tuple[int, int, int]] | str:
    """How the whole tensor is made from the pieces along the split axis: (rank, start, stop) of each
    slice of a rank's piece, in the whole tensor's order; or why the pieces cannot make it."""
    if dims.replicated:
        return [(0, 0, piece_length)]
    parts = dims.sections or (Section("", piece_length * count, dims.groups),)
    if not dims.sections and dims.groups:
        parts = (Section("", piece_length * dims.groups, dims.groups),)
    out: list[tuple[int, int, int]] = []
    start = 0
    shares = []
    for s in parts:
        holders = s.groups or count
        if holders > count or count % holders or s.size % holders:
            return f"section {s.name or 'axis'} of {s.size} cannot be shared by {count} ranks in {holders} parts"
        shares.append((s, holders, s.size // holders))
    if sum(share for _, _, share in shares) != piece_length:
        return (
            f"the sections' shares add up to {sum(sh for _, _, sh in shares)} per rank, the pieces have {piece_length}"
        )
    for _s, holders, share in shares:
        for part in range(holders):
            out.append((part * (count // holders), start, start + share))
        start += share
    return out
