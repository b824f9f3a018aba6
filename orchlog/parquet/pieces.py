"""A Parquet file written row group by row group so that a crash or a full disk loses only the row group in flight.

Each row group is compressed into a small Parquet file of its own in memory
(a piece) and appended to the output with plain writes; closing appends one
footer over every piece's row group (orchlog/parquet/footer.py), which makes
the file a standard Parquet file that any reader opens. A file whose writer
was killed, or whose disk filled up, ends without that footer: orchlog's
reader finds the pieces again from the end and reads every whole row group.

Like the C++ and Rust sinks, the file is opened without blocking (a FIFO with
no reader is an error) and a regular file is claimed with an exclusive flock
before it is emptied, so a second process given the same path refuses
instead of overwriting the first one's rows. Nothing here seeks, so FIFOs
and pipes work too.
"""

from __future__ import annotations

import fcntl
import os
import stat
import struct
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from orchlog.parquet.footer import MAGIC, PIECE_KEY, assemble, decode


class PieceFile:
    """The output file; write_piece and close raise OSError when the disk does."""

    def __init__(self, path: str | os.PathLike[str], schema: pa.Schema, options: dict[str, Any]) -> None:
        self.path = os.fspath(path)
        self.options = options
        self.pieces: list[
            tuple[int, dict[int, tuple[int, Any]]]
        ] = []  # (offset in the file, decoded footer) of every piece written whole
        self.size = 0
        self._fd = _claim(self.path)
        try:
            self.write_piece(None, schema)  # the schema and run headers are on disk from the start
        except BaseException:
            os.close(self._fd)
            raise

    def write_piece(self, table: pa.Table | None, schema: pa.Schema) -> None:
        """One row group (or, for None, none: a piece that carries the schema and headers) appended whole."""
        buffer = pa.BufferOutputStream()
        writer = pq.ParquetWriter(buffer, schema, **self.options)
        try:
            if table is not None:
                writer.write_table(table, row_group_size=max(1, table.num_rows))
            # In this piece's footer only, not in the Arrow schema it stores (which tables read back carry).
            writer.add_key_value_metadata({PIECE_KEY: b"1"})
        finally:
            writer.close()
        piece = buffer.getvalue()
        length = struct.unpack("<I", piece[-8:-4])[0]
        meta = decode(piece[-8 - length : -8].to_pybytes())
        self._append(memoryview(piece))
        self.pieces.append((self.size, meta))
        self.size += piece.size

    def _append(self, data: memoryview) -> None:
        done = 0
        try:
            while done < len(data):
                done += os.write(self._fd, data[done:])
        except OSError:
            # Leave the file ending with its last whole piece (which frees the space the cut
            # piece took on a full disk), for the reader and for close's footer.
            try:
                if stat.S_ISREG(os.fstat(self._fd).st_mode):
                    os.ftruncate(self._fd, self.size)
            except OSError:
                pass
            raise

    def close(self, extra: dict[str, str] | None = None) -> None:
        """Append the footer over every piece written whole (with `extra` key-value metadata), then close;
        OSError when that fails (the pieces stay readable)."""
        try:
            footer = assemble(self.pieces, extra)
            self._append(memoryview(footer + struct.pack("<I", len(footer)) + MAGIC))
        finally:
            os.close(self._fd)


def _claim(path: str) -> int:
    """The path opened for writing, without blocking; a regular file locked and emptied."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NONBLOCK, 0o644)
    try:
        os.set_blocking(fd, True)
        if stat.S_ISREG(os.fstat(fd).st_mode):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise OSError(
                    f"{path} is being written by another process; not writing to it "
                    "(put {pid} or {rank} in the path to give each process its own file)"
                ) from None
            except OSError:
                pass  # a file system without locks: unclaimed but usable, as in the C++ sink
            os.ftruncate(fd, 0)
    except BaseException:
        os.close(fd)
        raise
    return fd
