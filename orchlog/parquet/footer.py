"""A Parquet footer read and checked in Python, before pyarrow touches it.

pyarrow builds a column chunk's metadata when Python first asks for it, and
some footers that decode fine make that C++ code throw where nothing catches
the exception: the process aborts (SIGABRT), whatever Python does around the
call. A single flipped bit does it: a chunk whose type no longer matches its
schema column ("Unencoded byte array data bytes does not support FLOAT"), a
level histogram of the wrong length. So orchlog reads the footer itself
(Thrift compact protocol, the few structures it needs), checks what pyarrow's
constructors would throw on, and never asks pyarrow for column chunk metadata:
the row counts and null counts it needs come from here. A footer that fails
the checks is a damaged file, reported as such.

Every count in the footer is checked against the bytes left before it is
used, and nesting is capped, so a damaged footer costs what its bytes cost.
"""

from __future__ import annotations

import functools
import os
import struct
from typing import Any, BinaryIO, Literal, overload

from orchlog.records import record

MAGIC = b"PAR1"
MAX_FOOTER = 256 << 20
_MAX_DEPTH = 16
# Parquet physical types and the byte width of their statistics (None: variable)
_WIDTHS = {0: 1, 1: 4, 2: 8, 3: 12, 4: 4, 5: 8, 6: None, 7: None}
BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY = 6, 7
_CODECS = range(0, 8)
_ENCODINGS = range(0, 10)
_OPTIONAL, _REPEATED = 1, 2


class FooterError(ValueError):
    """The footer cannot be read, or holds what would crash a reader."""


@record(frozen=True)
class Leaf:
    path: tuple[str, ...]
    type: int
    type_length: int | None
    max_def: int
    max_rep: int


@record(frozen=True)
class Chunk:
    path: tuple[str, ...]
    null_count: int | None  # from the chunk's statistics, when recorded
    start: int  # first byte of the chunk's pages in the file
    end: int  # one past the last


@record(frozen=True)
class RowGroup:
    num_rows: int
    chunks: tuple[Chunk, ...]


@record(frozen=True)
class Footer:
    leaves: tuple[Leaf, ...]
    row_groups: tuple[RowGroup, ...]
    key_values: dict[bytes, bytes]
    start: int  # where the footer's Thrift bytes begin in the file

    def null_count(self, row_group: int, column: str) -> int | None:
        for chunk in self.row_groups[row_group].chunks:
            if chunk.path == (column,):
                return chunk.null_count
        return None


# ------------------------------------------------------------ Thrift compact protocol


class _List(list[Any]):
    """A Thrift list, with the wire type of its elements."""

    elem = 0


_BOOL, _I16, _I32, _I64, _BINARY, _LIST, _STRUCT = 1, 4, 5, 6, 8, 9, 12


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise FooterError("the footer ends early")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def varint(self) -> int:
        shift = out = 0
        while True:
            b = self.byte()
            out |= (b & 0x7F) << shift
            if not b & 0x80:
                return out
            shift += 7
            if shift > 63:
                raise FooterError("a varint longer than 64 bits")

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def binary(self) -> bytes:
        n = self.varint()
        if n > len(self.data) - self.pos:
            raise FooterError(f"a string of {n} bytes where {len(self.data) - self.pos} are left")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def value(self, kind: int, depth: int) -> Any:
        if depth > _MAX_DEPTH:
            raise FooterError("structures nested too deeply")
        if kind in (1, 2):
            return kind == 1
        if kind == 3:
            return struct.unpack("b", bytes([self.byte()]))[0]
        if kind in (4, 5, 6):
            return self.zigzag()
        if kind == 7:
            if len(self.data) - self.pos < 8:
                raise FooterError("the footer ends early")
            self.pos += 8
            return struct.unpack("<d", self.data[self.pos - 8 : self.pos])[0]
        if kind == 8:
            return self.binary()
        if kind in (9, 10):
            head = self.byte()
            size, elem = head >> 4, head & 0x0F
            if size == 15:
                size = self.varint()
            self._room(size)
            out = _List(
                [self.byte() == 1 for _ in range(size)]  # booleans in a list take one byte each
                if elem in (1, 2)
                else [self.value(elem, depth + 1) for _ in range(size)]
            )
            out.elem = elem
            return out
        if kind == 11:
            size = self.varint()
            if size == 0:
                return {}
            self._room(2 * size)
            types = self.byte()
            return {self.value(types >> 4, depth + 1): self.value(types & 0x0F, depth + 1) for _ in range(size)}
        if kind == 12:
            return self.struct(depth + 1)
        raise FooterError(f"Thrift type {kind} is not one a footer holds")

    def _room(self, items: int) -> None:
        if items > len(self.data) - self.pos:
            raise FooterError(f"a list of {items} items where {len(self.data) - self.pos} bytes are left")

    def struct(self, depth: int = 0) -> dict[int, tuple[int, Any]]:
        """Field id -> (wire type, value): Thrift's generated readers skip a field whose wire type
        is not the one its definition says, and so must we, to see the footer as pyarrow sees it."""
        fields: dict[int, tuple[int, Any]] = {}
        last = 0
        while True:
            head = self.byte()
            if head == 0:
                return fields
            delta, kind = head >> 4, head & 0x0F
            fid = last + delta if delta else self.zigzag()
            fields[fid] = (_BOOL if kind == 2 else kind, self.value(kind, depth))
            last = fid


def _get(doc: dict[int, tuple[int, Any]], fid: int, kind: int, elem: int | None = None) -> Any:
    """A field's value when present with the wire type it must have, else None (as Thrift skips it)."""
    wire, value = doc.get(fid, (None, None))
    if wire != kind:
        return None
    if elem is not None and value and value.elem != elem:
        raise FooterError(f"a list of Thrift type {value.elem} where {elem} belongs")
    return value


# ------------------------------------------------------------ reading and checking


def read_footer(f: BinaryIO, size: int | None = None) -> Footer:
    """The footer of the Parquet file open in f; FooterError when it is missing or damaged."""
    if size is None:
        size = os.fstat(f.fileno()).st_size
    start, length = _footer_ending_at(f, size)
    f.seek(start)
    return parse_footer(f.read(length), start, size)


def _footer_ending_at(f: BinaryIO, end: int) -> tuple[int, int]:
    """(start, length) of the footer whose length and closing PAR1 end at byte `end`."""
    if end < 12:
        raise FooterError("too short to be a Parquet file")
    f.seek(end - 8)
    tail = f.read(8)
    if tail[4:] != MAGIC:
        raise FooterError("no footer: the file does not end with PAR1 (a writer stopped before closing it?)")
    length = struct.unpack("<I", tail[:4])[0]
    if length > end - 12 or length > MAX_FOOTER:
        raise FooterError(f"the footer claims {length} bytes of the {end} before it")
    return end - 8 - length, length


@functools.lru_cache(maxsize=8)
def parse_footer(data: bytes, start: int, file_size: int) -> Footer:
    """A footer's Thrift bytes, found at `start` in a file of `file_size` bytes, parsed and checked; kept for
    the next reader of the same bytes (every compare's weight-type peek opens a trace before its walk opens
    it again, and decoding is Python: 40-60 ms for 12 row groups of 32 columns)."""
    return checked(decode(data), start)


def decode(data: bytes) -> dict[int, tuple[int, Any]]:
    """A footer's Thrift bytes as field id -> (wire type, value), nested alike."""
    try:
        return _Reader(data).struct()
    except RecursionError:
        raise FooterError("structures nested too deeply") from None


def checked(meta: dict[int, tuple[int, Any]], start: int) -> Footer:
    """What orchlog uses of a decoded footer found at `start`, after the checks pyarrow would throw on."""
    leaves = _leaves(_list(meta, 2, _STRUCT, "schema"))
    groups = _list(meta, 4, _STRUCT, "row_groups")
    row_groups = tuple(_row_group(rg, leaves, start, i) for i, rg in enumerate(groups))
    key_values = {}
    for kv in _list(meta, 5, _STRUCT, "key_value_metadata", required=False):
        key = _get(kv, 1, _BINARY)
        if key is None:
            raise FooterError("a key-value pair without a key")
        key_values[key] = _get(kv, 2, _BINARY) or b""
    return Footer(leaves, row_groups, key_values, start)


# ------------------------------------------------------------ writing Thrift back


def encode(fields: dict[int, tuple[int, Any]]) -> bytes:
    """A decoded struct as Thrift compact bytes again (fields in id order)."""
    out = bytearray()
    _encode_struct(out, fields)
    return bytes(out)


def _varint(out: bytearray, n: int) -> None:
    while True:
        if n < 0x80:
            out.append(n)
            return
        out.append((n & 0x7F) | 0x80)
        n >>= 7


def _zigzag(out: bytearray, n: int) -> None:
    _varint(out, (n << 1) ^ (n >> 63))


def _encode_struct(out: bytearray, fields: dict[int, tuple[int, Any]]) -> None:
    last = 0
    for fid in sorted(fields):
        kind, value = fields[fid]
        wire = (1 if value else 2) if kind == _BOOL else kind
        if 0 < fid - last <= 15:
            out.append((fid - last) << 4 | wire)
        else:
            out.append(wire)
            _zigzag(out, fid)
        last = fid
        if kind != _BOOL:
            _encode_value(out, kind, value)
    out.append(0)


def _encode_value(out: bytearray, kind: int, value: Any) -> None:
    if kind == 3:
        out += struct.pack("b", value)
    elif kind in (_I16, _I32, _I64):
        _zigzag(out, value)
    elif kind == 7:
        out += struct.pack("<d", value)
    elif kind == _BINARY:
        _varint(out, len(value))
        out += value
    elif kind in (_LIST, 10):
        elem = value.elem
        if len(value) < 15:
            out.append(len(value) << 4 | elem)
        else:
            out.append(0xF0 | elem)
            _varint(out, len(value))
        for item in value:
            if elem in (1, 2):
                out.append(1 if item else 2)
            else:
                _encode_value(out, elem, item)
    elif kind == 11:
        _varint(out, len(value))
        if value:
            raise FooterError("maps are not written back")  # no footer structure orchlog reads holds one
    elif kind == _STRUCT:
        _encode_struct(out, value)
    else:
        raise FooterError(f"Thrift type {kind} is not written back")


# ------------------------------------------------------------ files made of pieces

# A Parquet file that a process writes row group by row group, safe against a crash:
# each row group is written as a small Parquet file of its own (a "piece": PAR1, the row
# group, a footer whose offsets count from the piece's start, its length, PAR1), appended
# to the file; closing the writer appends one footer for every row group with offsets
# counted from the file's start, which makes the whole a standard Parquet file. A file
# whose writer was killed or ran out of disk lacks that last footer; its pieces are found
# again from the end (each ends with its footer), and `assemble` gives the footer it
# would have had, for the row groups written whole.

# Offsets a footer holds: RowGroup.file_offset; ColumnChunk.file_offset, offset_index_offset,
# column_index_offset; ColumnMetaData.data_page_offset, index_page_offset,
# dictionary_page_offset, bloom_filter_offset.
_ROW_GROUP_OFFSETS = (5,)
# In every piece's own footer, not in the footer over them all: a file whose last footer has it
# is a file whose writer never closed it (its last footer is a piece's, its offsets the piece's).
PIECE_KEY = b"orchlog.piece"
_CHUNK_OFFSETS = (2, 4, 6)
_COLUMN_OFFSETS = (9, 10, 11, 14)


def _shifted(fields: dict[int, tuple[int, Any]], ids: tuple[int, ...], delta: int) -> dict[int, tuple[int, Any]]:
    out = dict(fields)
    for fid in ids:
        if fid in out and out[fid][0] == _I64:
            out[fid] = (_I64, out[fid][1] + delta)
    return out


def shift_row_group(rg: dict[int, tuple[int, Any]], delta: int) -> dict[int, tuple[int, Any]]:
    """A decoded row group with every file offset moved by delta."""
    out = _shifted(rg, _ROW_GROUP_OFFSETS, delta)
    chunks = _List()
    chunks.elem = _STRUCT
    for chunk in out[1][1]:
        moved = _shifted(chunk, _CHUNK_OFFSETS, delta)
        if 3 in moved:
            moved[3] = (_STRUCT, _shifted(moved[3][1], _COLUMN_OFFSETS, delta))
        chunks.append(moved)
    out[1] = (_LIST, chunks)
    return out


def assemble(pieces: list[tuple[int, dict[int, tuple[int, Any]]]], extra: dict[str, str] | None = None) -> bytes:
    """One footer (Thrift bytes) for pieces given as (offset of the piece in the file, its decoded
    footer): row groups in order with offsets from the file's start, the last piece's key-value
    metadata (the newest run headers) and `extra`'s, the first one's schema."""
    if not pieces:
        raise FooterError("no pieces")
    merged = dict(pieces[0][1])
    groups = _List()
    groups.elem = _STRUCT
    rows = 0
    for start, meta in pieces:
        for rg in _get(meta, 4, _LIST) or []:
            groups.append(shift_row_group(rg, start))
            rows += _get(rg, 3, _I64) or 0
    merged[3] = (_I64, rows)
    merged[4] = (_LIST, groups)
    if 5 in pieces[-1][1]:
        kind, pairs = pieces[-1][1][5]
        kept = _List(kv for kv in pairs if _get(kv, 1, _BINARY) != PIECE_KEY)
        kept.elem = pairs.elem
        merged[5] = (kind, kept)
    if extra:
        pairs = merged[5][1] if 5 in merged else _List()
        pairs.elem = _STRUCT
        pairs.extend({1: (_BINARY, k.encode()), 2: (_BINARY, v.encode())} for k, v in extra.items())
        merged[5] = (_LIST, pairs)
    return encode(merged)


def find_pieces(f: BinaryIO, size: int) -> tuple[list[tuple[int, dict[int, tuple[int, Any]]]], int]:
    """The whole pieces of a file written piece by piece, found from the last one back to the first,
    and where the last one ends; the bytes after it (a piece cut short) are left out. FooterError
    when the file is not made of pieces."""
    pieces: list[tuple[int, dict[int, tuple[int, Any]]]] = []
    last = end = _last_piece_end(f, size)
    while end > 0:
        start, meta = _piece_ending_at(f, end)
        pieces.append((start, meta))
        end = start
    pieces.reverse()
    return pieces, last


def _last_piece_end(f: BinaryIO, size: int) -> int:
    """Where the last whole piece ends: the last PAR1 that closes a footer of a piece starting at a PAR1."""
    pos = size
    window = 1 << 16
    while pos > 0:
        lo = max(0, pos - window)
        f.seek(lo)
        block = f.read(pos - lo + len(MAGIC) - 1)
        at = block.rfind(MAGIC)
        while at != -1:
            end = lo + at + len(MAGIC)
            try:
                _piece_ending_at(f, end)
                return end
            except FooterError:
                at = block.rfind(MAGIC, 0, at)
        pos = lo
    raise FooterError("no whole row group: the file holds no complete piece")


def _piece_ending_at(f: BinaryIO, end: int) -> tuple[int, dict[int, tuple[int, Any]]]:
    """(start, decoded footer) of the piece whose closing PAR1 ends at `end`."""
    footer_start, length = _footer_ending_at(f, end)
    f.seek(footer_start)
    meta = decode(f.read(length))
    footer = checked(meta, footer_start)
    # The piece's own offsets count from its start, so its row groups' pages end where its footer begins.
    body_end = max((c.end for rg in footer.row_groups for c in rg.chunks), default=len(MAGIC))
    start = footer_start - body_end
    if start < 0:
        raise FooterError("a piece reaching before the file's start")
    f.seek(start)
    if f.read(len(MAGIC)) != MAGIC:
        raise FooterError("a piece that does not start with PAR1")
    return start, meta


def _list(doc: dict[int, Any], fid: int, elem: int, name: str, required: bool = True) -> list[Any]:
    value: _List | None = _get(doc, fid, _LIST, elem)
    if value is None:
        if not required:
            return []
        raise FooterError(f"{name} is missing")
    return value


@overload
def _int(doc: dict[int, Any], fid: int, name: str, kind: int = _I32, required: Literal[True] = True) -> int: ...
@overload
def _int(doc: dict[int, Any], fid: int, name: str, kind: int = _I32, *, required: bool) -> int | None: ...
def _int(doc: dict[int, Any], fid: int, name: str, kind: int = _I32, required: bool = True) -> int | None:
    value: int | None = _get(doc, fid, kind)
    if value is None and required:
        raise FooterError(f"{name} is missing")
    return value


def _leaves(schema: list[Any]) -> tuple[Leaf, ...]:
    """The schema's leaf columns with their paths and levels, walking the flattened tree."""
    if not schema:
        raise FooterError("the schema is empty")
    leaves: list[Leaf] = []
    # (children left to read, path, max_def, max_rep) for each open group
    stack: list[tuple[int, tuple[str, ...], int, int]] = []
    root_children = _int(schema[0], 5, "the root's child count")
    if root_children < 0:
        raise FooterError("the root has a negative child count")
    stack.append((root_children, (), 0, 0))
    for element in schema[1:]:
        while stack and stack[-1][0] == 0:
            stack.pop()
        if not stack:
            raise FooterError("the schema lists more columns than its groups hold")
        left, path, max_def, max_rep = stack.pop()
        stack.append((left - 1, path, max_def, max_rep))
        name = _get(element, 4, _BINARY)
        if name is None:
            raise FooterError("a schema column without a name")
        repetition = _int(element, 3, "a repetition type", required=False) or 0
        here = (
            path + (name.decode("utf-8", "replace"),),
            max_def + (repetition in (_OPTIONAL, _REPEATED)),
            max_rep + (repetition == _REPEATED),
        )
        children = _int(element, 5, "a child count", required=False)
        if children:
            if children < 0:
                raise FooterError("a negative child count")
            stack.append((children, *here))
            continue
        kind = _int(element, 1, "a column's type")
        if kind not in _WIDTHS:
            raise FooterError(f"column {'.'.join(here[0])} has physical type {kind}")
        length = _int(element, 2, "a type length", required=False)
        if kind == FIXED_LEN_BYTE_ARRAY and (length is None or length < 0):
            raise FooterError(f"column {'.'.join(here[0])} has no valid fixed length")
        leaves.append(Leaf(here[0], kind, length, here[1], here[2]))
    if any(left for left, *_ in stack):
        raise FooterError("the schema holds fewer columns than its groups declare")
    if not leaves:
        raise FooterError("the schema has no columns")
    return tuple(leaves)


def _row_group(rg: dict[int, Any], leaves: tuple[Leaf, ...], footer_start: int, index: int) -> RowGroup:
    num_rows = _int(rg, 3, f"row group {index}'s row count", _I64)
    if num_rows < 0:
        raise FooterError(f"row group {index} has {num_rows} rows")
    columns = _list(rg, 1, _STRUCT, f"row group {index}'s columns")
    if len(columns) != len(leaves):
        raise FooterError(f"row group {index} has {len(columns)} columns, the schema {len(leaves)}")
    return RowGroup(num_rows, tuple(_chunk(c, leaf, footer_start, index) for c, leaf in zip(columns, leaves)))


def _chunk(chunk: dict[int, Any], leaf: Leaf, footer_start: int, rg: int) -> Chunk:
    where = f"row group {rg}, column {'.'.join(leaf.path)}"
    meta = _get(chunk, 3, _STRUCT)
    if meta is None:
        raise FooterError(f"{where}: no column metadata")
    kind = _int(meta, 1, f"{where}: the type")
    if kind != leaf.type:
        raise FooterError(f"{where}: the chunk's type {kind} is not the schema's {leaf.type}")
    path = _list(meta, 3, _BINARY, f"{where}: the path")
    if tuple(p.decode("utf-8", "replace") for p in path) != leaf.path:
        raise FooterError(f"{where}: the chunk's path is not the schema's")
    codec = _int(meta, 4, f"{where}: the codec")
    if codec not in _CODECS:
        raise FooterError(f"{where}: unknown codec {codec}")
    if any(e not in _ENCODINGS for e in _list(meta, 2, _I32, f"{where}: the encodings")):
        raise FooterError(f"{where}: an unknown encoding")
    sizes = [_int(meta, k, f"{where}: field {k}", _I64) for k in (5, 6, 7, 9)]
    offsets = [_int(meta, k, f"{where}: field {k}", _I64, required=False) for k in (10, 11)]
    if any(v < 0 for v in sizes) or any(v is not None and v < 0 for v in offsets):
        raise FooterError(f"{where}: a negative size or offset")
    first = min(v for v in (sizes[3], offsets[1]) if v is not None and v > 0) if sizes[3] > 0 else sizes[3]
    end = first + sizes[2]
    if end > footer_start:
        raise FooterError(f"{where}: pages reach past the footer")
    null_count = _statistics(_get(meta, 12, _STRUCT), leaf, where)
    _size_statistics(_get(meta, 16, _STRUCT), leaf, where)
    return Chunk(leaf.path, null_count, first, end)


def _statistics(stats: Any, leaf: Leaf, where: str) -> int | None:
    if stats is None:
        return None
    width = leaf.type_length if leaf.type == FIXED_LEN_BYTE_ARRAY else _WIDTHS[leaf.type]
    for fid in (1, 2, 5, 6):  # max, min, max_value, min_value
        value = _get(stats, fid, _BINARY)
        if value is not None and width is not None and len(value) != width:
            raise FooterError(f"{where}: a statistic of the wrong size")
    null_count = _int(stats, 3, f"{where}: the null count", _I64, required=False)
    if null_count is not None and null_count < 0:
        raise FooterError(f"{where}: a negative null count")
    return null_count


def _size_statistics(sizes: Any, leaf: Leaf, where: str) -> None:
    if sizes is None:
        return
    if _get(sizes, 1, _I64) is not None and leaf.type != BYTE_ARRAY:
        raise FooterError(f"{where}: byte-array sizes for a column of type {leaf.type}")
    for fid, levels in ((2, leaf.max_rep), (3, leaf.max_def)):
        histogram = _get(sizes, fid, _LIST, _I64)
        if histogram is not None and len(histogram) not in (0, levels + 1):
            raise FooterError(f"{where}: a level histogram of the wrong length")
