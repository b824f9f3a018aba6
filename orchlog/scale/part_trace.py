"""A trace that reads some of a trace's files and keeps the records of some ranks and token positions:
one part's input.

Places are numbered per file (`file index << ORDER_BITS | place in the
file`, see orchlog/compare/grading/partial.py), and each file's tally (records in
the file, records kept, its header) travels with the partial report, so
that the merge can number places as the whole trace does and check that
every record was taken by exactly one part. A Parquet file read for a token
range skips the row groups whose statistics rule the range out; its places
are then the rows' numbers in the file, and its tally counts every row of
the file, read or skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from orchlog.compare.grading.partial import ORDER_BITS, FileTally
from orchlog.maps.shards import says_layout
from orchlog.read import formats
from orchlog.read.batch import NONE, RecordBatch
from orchlog.read.trace import Trace, chunks

if TYPE_CHECKING:
    import pyarrow.dataset as ds

    from orchlog.scale.plan import TokenRange


class PartTrace(Trace):
    def __init__(
        self,
        root: str,
        files: tuple[tuple[int, str], ...],
        ranks: frozenset[int] | None,
        tokens: TokenRange | None = None,
        shift: int = 0,
    ) -> None:
        self._tokens, self._shift = tokens, shift
        self._rows: dict[str, int] = {}  # Parquet files read for a token range: every row they hold
        self.rows_read = 0  # records read, before the part kept its own (row groups skipped are not read)
        members = [(index, self._open(f)) for index, f in files]
        super().__init__(root, "+".join(sorted({m.format for _, m in members})) or "none", size=0)
        self.size = sum(m.size or 0 for _, m in members)
        self._members = members
        self._ranks = None if ranks is None else np.array(sorted(ranks), dtype=np.int64)
        self.tallies = {index: FileTally(m.path) for index, m in members}
        # Whether a record says it is a tensor-parallel piece: pieces of several ranks are gathered into one
        # record, so a split by rank would keep them apart (orchlog/scale/run.py then walks in one part).
        self.sharded = False
        keys = {m.default_key for _, m in members}
        self.default_key = keys.pop() if len(keys) == 1 else None

    def _open(self, path: str) -> Trace:
        fmt = formats.detect(Path(path))
        rows = _prunable_rows(path) if self._tokens is not None and fmt.name == "orchlog-parquet" else None
        if rows is None:  # read whole, kept record by record (a damaged footer too: the reader recovers it)
            return fmt.open(Path(path))
        from orchlog.parquet.reading import read  # pyarrow: only for a Parquet part

        self._rows[path] = rows
        return read(path, filter=self._pushed())

    def _pushed(self) -> ds.Expression | None:
        """The token range on the raw token_idx column, for the Parquet reader to test row groups with."""
        import pyarrow.dataset as ds

        from orchlog.parquet.schema import COLUMN_OF  # pyarrow: only for a Parquet part

        assert self._tokens is not None
        column = ds.field(COLUMN_OF["token_idx"])
        lo, hi = self._tokens.lo, self._tokens.hi
        terms = ([column >= lo - self._shift] if lo is not None else []) + (
            [column < hi - self._shift] if hi is not None else []
        )
        if not terms:
            return None
        inside = terms[0] if len(terms) == 1 else terms[0] & terms[1]
        return inside | column.is_null() if self._tokens.untokened else inside

    def _member_batches(self, m: Trace, rows: int, values: int, tensors: bool) -> Iterator[RecordBatch]:
        """A member's batches with places in its file: the rows' numbers where a Parquet filter skipped some."""
        if m.path not in self._rows:
            yield from m.batches(rows, values, tensors)
            return
        for chunk in chunks(iter(m), rows, values):
            batch = RecordBatch.from_records(chunk)
            batch.order = np.array([r.location.row if r.location else NONE for r in chunk], dtype=np.int64)
            yield batch

    def batches(self, rows: int = 4096, values: int = 1 << 22, tensors: bool = True) -> Iterator[RecordBatch]:
        done = 0
        for index, m in self._members:
            tally = self.tallies[index]
            pruned = m.path in self._rows
            if pruned:
                tally.rows = self._rows[m.path]
            for batch in self._member_batches(m, rows, values, tensors):
                self.bytes_read = done + m.bytes_read
                tally.rows += 0 if pruned else len(batch)
                self.rows_read += len(batch)
                self.sharded = self.sharded or bool(says_layout(batch).any())
                batch.order = (index << ORDER_BITS) + batch.order
                keep = np.ones(len(batch), dtype=bool)
                if self._ranks is not None:
                    keep &= np.isin(batch.rank, self._ranks)
                if self._tokens is not None:
                    raw = batch.token_idx  # moved by the shift as the walk moves it (compare.tokens.shift_positions)
                    keep &= self._tokens.keeps(np.where(raw == NONE, NONE, raw + self._shift))
                if not keep.all():
                    batch = batch.take(np.flatnonzero(keep))
                tally.kept += len(batch)
                if len(batch):
                    yield batch
            done += m.size or 0
            self.bytes_read = done
            tally.header = m.header
            self.headers.extend(m.headers)
            self.diagnostics.extend(m.diagnostics)


def _prunable_rows(path: str) -> int | None:
    """Every row of a Parquet file, read or not, as its footer says, when its row groups can be skipped by
    token_idx (the file holds that column); None otherwise, or when the footer cannot be read."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from orchlog.parquet.schema import COLUMN_OF  # pyarrow: only for a Parquet part

    try:
        footer = pq.ParquetFile(path)
        if COLUMN_OF["token_idx"] not in footer.schema_arrow.names:
            return None
        return int(footer.metadata.num_rows)
    except (OSError, pa.ArrowException):
        return None
