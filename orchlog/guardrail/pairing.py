"""Do the two sides of a pair belong together? Same token positions, same token ids, same vocabulary, and
metadata that agrees with the run directory and config.json.

`Pairing` walks both sides in step, a row from each at a time, and hands
out the rows that share a token position. When both files list their
positions in the same order (the usual case) each row finds its partner at
once, so one row per side is held; rows whose partner has not come yet
wait, and those left at the end cover positions the other side lacks.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from orchlog.guardrail.config import Matrix, axis_value
from orchlog.guardrail.problems import (
    MALFORMED_FILE,
    METADATA_MISMATCH,
    SHAPE_MISMATCH,
    SPAN_MISMATCH,
    TOKEN_MISMATCH,
    PairingError,
    positions_text,
)
from orchlog.guardrail.sides import Side, TokenRow


class Pairing:
    """Iterate for (reference row, test row) pairs; then `errors()` says what did not line up."""

    def __init__(self, a: Side, b: Side) -> None:
        self.sides = (a, b)
        self.token_mismatch: list[tuple[int, int | None, int | None]] = []
        self.shape_mismatch: list[tuple[int, int, int]] = []
        self._seen: tuple[dict[int, str], dict[int, str]] = ({}, {})  # position -> where it was read
        self._waiting: tuple[dict[int, TokenRow], dict[int, TokenRow]] = ({}, {})
        self._duplicates: list[PairingError] = []

    def __iter__(self) -> Iterator[tuple[TokenRow, TokenRow]]:
        streams = [iter(s.rows()) for s in self.sides]
        live = [True, True]
        while any(live):
            for k in (0, 1):
                if not live[k]:
                    continue
                row = next(streams[k], None)
                if row is None:
                    live[k] = False
                    continue
                pair = self._take(k, row)
                if pair is not None:
                    yield pair

    def _take(self, k: int, row: TokenRow) -> tuple[TokenRow, TokenRow] | None:
        seen, other = self._seen[k], self._waiting[1 - k]
        if row.token_idx in seen:
            self._duplicates.append(
                PairingError(
                    MALFORMED_FILE,
                    f"{self.sides[k].name}: {row.location}: token_idx {row.token_idx} again "
                    f"(first at {seen[row.token_idx]}); skipped",
                    (row.token_idx,),
                )
            )
            return None
        seen[row.token_idx] = row.location
        partner = other.pop(row.token_idx, None)
        if partner is None:
            self._waiting[k][row.token_idx] = row
            return None
        a, b = (row, partner) if k == 0 else (partner, row)
        self._check(a, b)
        return a, b

    def _check(self, a: TokenRow, b: TokenRow) -> None:
        if a.token_id is not None and b.token_id is not None and a.token_id != b.token_id:
            self.token_mismatch.append((a.token_idx, a.token_id, b.token_id))
        if a.logits.size != b.logits.size:
            self.shape_mismatch.append((a.token_idx, a.logits.size, b.logits.size))

    def errors(self) -> list[PairingError]:
        """What did not line up, once the walk is over."""
        a, b = self.sides
        out = list(self._duplicates)
        out += _span_errors(
            a, b, (len(self._seen[0]), len(self._seen[1])), (sorted(self._waiting[0]), sorted(self._waiting[1]))
        )
        if self.token_mismatch:
            where = "; ".join(f"position {t}: {a.name} {ia}, {b.name} {ib}" for t, ia, ib in self.token_mismatch[:8])
            more = len(self.token_mismatch) - 8
            out.append(
                PairingError(
                    TOKEN_MISMATCH,
                    f"token ids differ at {len(self.token_mismatch)} positions: "
                    f"{where}{f'; ... and {more} more' if more > 0 else ''}",
                    tuple(t for t, _, _ in self.token_mismatch),
                )
            )
        if self.shape_mismatch:
            t, na, nb = self.shape_mismatch[0]
            out.append(
                PairingError(
                    SHAPE_MISMATCH,
                    f"logits lengths differ at {len(self.shape_mismatch)} positions, "
                    f"first at position {t}: {a.name} {na}, {b.name} {nb}",
                    tuple(t for t, _, _ in self.shape_mismatch),
                )
            )
        return out


def _span_errors(a: Side, b: Side, counts: tuple[int, int], only: tuple[list[int], list[int]]) -> list[PairingError]:
    """Declared spans that differ, a side whose positions disagree with its own declared span, and positions
    only one side has (`counts`: distinct positions each side read; `only`: those left without a partner)."""
    out = []
    if a.span is not None and b.span is not None and a.span != b.span:
        out.append(PairingError(SPAN_MISMATCH, f"token_span differs: {a.name} ({a.span}), {b.name} ({b.span})"))
    for side, count in zip((a, b), counts):
        if side.span is not None and count and count != side.span.count:
            out.append(
                PairingError(
                    SPAN_MISMATCH,
                    f"{side.name}: metadata token_span declares {side.span.count} positions, its logits hold {count}",
                )
            )
    for side, positions, other_count in ((a, only[0], counts[1]), (b, only[1], counts[0])):
        if positions and other_count:
            out.append(
                PairingError(
                    SPAN_MISMATCH, f"positions only in {side.name}: {positions_text(positions)}", tuple(positions)
                )
            )
    return out


def metadata_errors(matrix: Matrix, values: dict[str, str], side: Side) -> list[PairingError]:
    """A side's metadata.json against its run directory (axis values, mode) and the values config.json expects."""
    meta = side.metadata
    if meta is None:
        return []
    expected: dict[str, Any] = {axis: value for axis, value in values.items()}
    if matrix.sides == ("prefill", "decode"):  # the seed's runners write the side's name as `mode`
        expected["mode"] = side.name
    out = []
    for key, want in expected.items():
        if key in meta and _as_axis(meta[key]) != want:
            out.append(
                PairingError(
                    METADATA_MISMATCH,
                    f"{side.name}: {side.metadata_path} says {key} {meta[key]!r} but the run directory says {want!r}",
                )
            )
    for key, want in matrix.metadata.items():
        if meta.get(key) != want:
            found = "lacks it" if key not in meta else f"says {meta[key]!r}"
            out.append(
                PairingError(
                    METADATA_MISMATCH,
                    f"{side.name}: {matrix.source} expects {key} {want!r}, {side.metadata_path} {found}",
                )
            )
    return out


def _as_axis(value: Any) -> str | None:
    try:
        return axis_value(value)
    except ValueError:
        return None
