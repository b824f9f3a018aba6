"""What can be wrong with a pair besides its numbers: the pairing errors that fail the guardrail.

A pairing error means the two sides cannot be compared as they stand (they
cover different positions, saw different tokens, or a file is missing or
malformed), so the pair is neither a pass nor a measured failure. A side
whose run never happened (its directory, or any logits in it, is missing) is
MISSING_RUN: the pair is incomplete rather than broken, as a missing pair is.
"""

from __future__ import annotations

from orchlog.records import record

SPAN_MISMATCH = "SPAN_MISMATCH"  # the sides cover different token positions
TOKEN_MISMATCH = "TOKEN_MISMATCH"  # same position, different token id
SHAPE_MISMATCH = "SHAPE_MISMATCH"  # same position, logits of different lengths
METADATA_MISMATCH = "METADATA_MISMATCH"  # metadata.json contradicts the run directory or config.json
MISSING_FILE = "MISSING_FILE"  # a side ran but a file it needs (metadata.json beside legacy logits) is missing
MALFORMED_FILE = "MALFORMED_FILE"
MISSING_RUN = "MISSING_RUN"  # a side's run did not happen: its directory, or any logits in it, is missing
KINDS = (SPAN_MISMATCH, TOKEN_MISMATCH, SHAPE_MISMATCH, METADATA_MISMATCH, MISSING_FILE, MALFORMED_FILE, MISSING_RUN)

POSITIONS_SHOWN = 8  # positions named in a message before "... and N more" (all of them are in `positions`)


@record(frozen=True)
class PairingError:
    kind: str
    message: str  # says which side and what differs, with file:line where there is one
    positions: tuple[int, ...] = ()  # the token positions concerned, when the error is about positions

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


def positions_text(positions: list[int] | tuple[int, ...]) -> str:
    """`3, 4, 9` or `3, 4, ... and 120 more`, for messages."""
    shown = ", ".join(str(p) for p in positions[:POSITIONS_SHOWN])
    more = len(positions) - POSITIONS_SHOWN
    return f"{shown}, ... and {more} more" if more > 0 else shown
