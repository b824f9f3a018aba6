"""The directory and members of a zip archive laid out as `torch.save` writes it, read with a few `pread`s.

A tool that dumps one tensor per file (SGLang's dumper, msprobe) leaves thousands of small archives,
and `zipfile` spends about as long on each one's directory as the pickle walk spends on its contents:
a `ZipInfo` per member, a dozen small reads and seeks. This reads the end of the file once, the
directory from it, and a member's local header and bytes from the same buffer when they lie in it;
`read_member` reads one member later (a tensor, when it is compared) where that directory placed it.

It is a fast path, not a second zip reader: it answers only for an archive with nothing unusual
(one disk, no comment, no extra field or comment in the directory, no encryption, stored members whose
local headers repeat the directory's name and flags, no member overlapping the next or the directory,
every CRC-32 right) and returns None for anything else, so that `zipfile` reads that archive and gives
the errors it always gave. Each refusal is one `zipfile` would raise at, or one it reads in a way
this module does not copy (an archive inside another file, zip64 fields in a member's extra).
"""

from __future__ import annotations

import os
import struct
import zipfile
import zlib
from collections.abc import Callable

from orchlog.records import record

TAIL = 64 << 10  # read from the end of the file at once: the whole of a one-tensor dump's archive

_END = struct.Struct("<4s4H2LH")  # signature, disk, directory's disk, entries here, entries, size, offset, comment
_LOCATOR = struct.Struct("<4sLQL")  # zip64 locator: signature, disk, zip64 end record's offset, disks
_END64 = struct.Struct("<4sQ2H2L4Q")  # signature, size, versions, disks, entries here, entries, size, offset
_CENTRAL = struct.Struct("<4s4B4HL2L5H2L")  # a directory entry, as zipfile's structCentralDir
_LOCAL = struct.Struct("<4s2B4HL2L2H")  # a member's local header, as zipfile's structFileHeader
_UNUSUAL_FLAGS = 0x1 | 0x20 | 0x40  # encrypted, compressed patch data, strong encryption
_UTF8_NAME = 0x800
_MAX_EXTRACT_VERSION = 63  # zipfile's: a member that needs more is refused
_NO_ZIP64 = 0xFFFF_FFFF  # a 32-bit field that defers to a zip64 extra field


@record(frozen=True)
class Entry:
    """A stored member, as the archive's central directory gives it."""

    name: str
    name_bytes: bytes
    flags: int
    header_offset: int
    size: int
    crc: int
    end: int  # where the next member's local header or the directory starts: the member must end by then


class Archive:
    """The end of a file read once: its directory's entries, and members read from it or with pread."""

    def __init__(self, fd: int, size: int, tail: bytes, entries: list[Entry]) -> None:
        self.fd, self.size, self.tail, self.entries = fd, size, tail, entries
        self.tail_start = size - len(tail)

    def read(self, entry: Entry) -> bytes | None:
        """A member's bytes, or None where its local header or CRC-32 is not what the directory says."""
        start = _data_start(self._bytes, entry.header_offset, entry.name_bytes, entry.flags)
        if start is None or start + entry.size > entry.end:
            return None
        raw = self._bytes(start, entry.size)
        if raw is None or zlib.crc32(raw) != entry.crc:
            return None
        return raw

    def _bytes(self, offset: int, n: int) -> bytes | None:
        if offset < 0 or offset + n > self.size:
            return None
        if offset >= self.tail_start:
            at = offset - self.tail_start
            return self.tail[at : at + n]
        raw = os.pread(self.fd, n, offset)
        return raw if len(raw) == n else None


def read_member(fd: int, header_offset: int, name: str, size: int, crc: int) -> bytes | None:
    """A stored member's bytes, read where a directory read earlier placed them, with the checks zipfile
    makes: every byte present (EOFError), the CRC-32 (BadZipFile). None where no local header names the
    member there (the archive changed since, or names it in another encoding): the caller asks zipfile."""
    start = _data_start(lambda offset, n: os.pread(fd, n, offset), header_offset, name.encode(), None)
    if start is None:
        return None
    raw = os.pread(fd, size, start)
    if len(raw) < size:
        raise EOFError(f"the archive ends {size - len(raw)} bytes into {name!r}")
    if zlib.crc32(raw) != crc:
        raise zipfile.BadZipFile(f"Bad CRC-32 for file {name!r}")
    return raw


def _data_start(
    read_at: Callable[[int, int], bytes | None], header_offset: int, name: bytes, flags: int | None
) -> int | None:
    """Where a member's bytes start, after its local header; None unless that header is there and names
    it (with the directory's flags, where given)."""
    head = read_at(header_offset, _LOCAL.size + len(name))
    if head is None or len(head) < _LOCAL.size + len(name):
        return None
    fields = _LOCAL.unpack_from(head)
    signature, local_flags, extra_len = fields[0], fields[3], int(fields[11])
    if signature != b"PK\x03\x04" or fields[10] != len(name) or head[_LOCAL.size :] != name:
        return None
    if flags is not None and local_flags != flags:
        return None
    return header_offset + _LOCAL.size + len(name) + extra_len


def open_stored(fd: int) -> Archive | None:
    """The archive in the file open on fd, or None where it is not laid out as the module says."""
    size = os.fstat(fd).st_size
    if size < _END.size:
        return None
    tail = os.pread(fd, min(size, TAIL), size - min(size, TAIL))
    if len(tail) != min(size, TAIL):
        return None
    tail_start = size - len(tail)
    end_at = len(tail) - _END.size
    signature, disk, cd_disk, here, count, cd_size, cd_offset, comment = _END.unpack_from(tail, end_at)
    if signature != b"PK\x05\x06" or comment or disk or cd_disk or here != count:
        return None
    directory_end = tail_start + end_at  # where the directory, or the zip64 end record, must end
    locator_at = end_at - _LOCATOR.size
    if locator_at >= 0 and tail[locator_at : locator_at + 4] == b"PK\x06\x07":
        _, locator_disk, _, disks = _LOCATOR.unpack_from(tail, locator_at)
        end64_at = locator_at - _END64.size
        if locator_disk or disks > 1 or end64_at < 0:
            return None
        fields = _END64.unpack_from(tail, end64_at)
        if fields[0] != b"PK\x06\x06" or fields[4] or fields[5] or fields[6] != fields[7]:
            return None
        count, cd_size, cd_offset = fields[7], fields[8], fields[9]
        directory_end = tail_start + end64_at
    if cd_offset + cd_size != directory_end or cd_offset < tail_start:
        return None  # an archive appended to other bytes, or a directory beyond what was read
    entries = _entries(tail, cd_offset - tail_start, cd_size, cd_offset)
    if entries is None or len(entries) != count:
        return None
    return Archive(fd, size, tail, entries)


def _entries(tail: bytes, at: int, cd_size: int, cd_offset: int) -> list[Entry] | None:
    found: list[tuple[str, bytes, int, int, int, int]] = []
    stop = at + cd_size
    while at < stop:
        if at + _CENTRAL.size > stop:
            return None
        fields = _CENTRAL.unpack_from(tail, at)
        flags, compress, crc, compressed, size = fields[5], fields[6], fields[9], fields[10], fields[11]
        name_len, extra_len, comment_len, header_offset = fields[12], fields[13], fields[14], fields[18]
        if fields[0] != b"PK\x01\x02" or fields[3] > _MAX_EXTRACT_VERSION or flags & _UNUSUAL_FLAGS:
            return None
        if extra_len or comment_len or compress != 0 or compressed != size:
            return None
        if _NO_ZIP64 in (size, header_offset) or header_offset >= cd_offset or at + _CENTRAL.size + name_len > stop:
            return None
        name_bytes = tail[at + _CENTRAL.size : at + _CENTRAL.size + name_len]
        try:
            name = name_bytes.decode("utf-8" if flags & _UTF8_NAME else "cp437")
        except UnicodeDecodeError:
            return None
        if "\x00" in name:
            return None  # zipfile cuts such a name at the NUL
        found.append((name, name_bytes, flags, header_offset, size, crc))
        at += _CENTRAL.size + name_len
    # Each member must end before the next local header (or the directory) begins: overlapping members
    # are how a zip bomb repeats bytes, and newer zipfile versions refuse them.
    offsets = {f[3] for f in found}
    if len(offsets) != len(found):
        return None
    starts = sorted(offsets | {cd_offset})
    following = {s: starts[i + 1] for i, s in enumerate(starts[:-1])}
    return [Entry(n, b, fl, off, sz, crc, following[off]) for n, b, fl, off, sz, crc in found]
