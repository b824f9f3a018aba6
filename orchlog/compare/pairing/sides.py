"""What happens to one trace's records before they are aligned with the other's.

In order: names and views of the side's maps (--map-a/--map-b, then --map),
the token offset, the token ids noted, tensor-parallel pieces gathered, and
derived checkpoints added. Every stage works on a batch at a time; the
gathering and derivation hold records back until their partners arrive.
Problems (a view that does not fit a record, a missing rank, a derived
record without its parts) are diagnostics, listed with the trace's malformed
input; pieces that could not be gathered are `held_out`, listed as
unmatched: nothing is dropped.
"""

from __future__ import annotations

from orchlog.compare.pairing.tokens import TokenIds, shift_positions
from orchlog.maps.derived import Deriver
from orchlog.maps.namemap import NameMap
from orchlog.maps.shards import Gatherer
from orchlog.read.batch import RecordBatch
from orchlog.read.trace import Diagnostic, Location


class Side:
    def __init__(self, names: NameMap, token_shift: int = 0) -> None:
        self.names = names
        self.token_shift = token_shift
        self.diagnostics: list[Diagnostic] = []
        self.tokens = TokenIds()
        self.rows_in = 0  # records read from the trace, before gathering and derivation
        names.problem = self._problem
        self.gatherer = Gatherer(names.shards, self._problem)
        self.deriver = Deriver(names.derived, self._problem)

    def _problem(self, location: Location, message: str) -> None:
        self.diagnostics.append(Diagnostic(location, message))

    def __call__(self, batch: RecordBatch) -> RecordBatch:
        self.rows_in += len(batch)
        batch = shift_positions(self.names.apply(batch), self.token_shift)
        self.tokens.add(batch)
        return self.deriver(self.gatherer(batch))

    def flush(self) -> RecordBatch:
        self.gatherer.flush()
        return self.deriver.flush()

    @property
    def holding(self) -> bool:
        """Whether records read so far are held back (pieces, parts of a derived record): a later batch will
        carry records from earlier in the file."""
        return self.gatherer.holding or self.deriver.holding

    @property
    def held_out(self) -> RecordBatch:
        """Records set aside rather than aligned: tensor-parallel pieces that could not be gathered."""
        return RecordBatch.concat(self.gatherer.held_out) if self.gatherer.held_out else RecordBatch.empty()
