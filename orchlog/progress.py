"""Progress for long commands: on a terminal only, silent when piped or --quiet.

Usage:
    with Progress("comparing", total=n_bytes, quiet=args.quiet, unit="B") as p:
        for chunk in chunks:
            p.advance(len(chunk))

The bar is tqdm's (counts in human units, rate and time left when the total
is known); it is imported only when a bar will be drawn, so that piped and
quiet runs start no faster or slower for it.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO


class Progress:
    """A self-overwriting status line on stderr, redrawn at most 10 times a second.

    Counts are shown with k/M/G suffixes and their unit (`unit="B"`: 16.0MB),
    the rate, and the time left when the total is known."""

    def __init__(
        self, label: str, total: int | None = None, quiet: bool = False, stream: TextIO | None = None, unit: str = ""
    ) -> None:
        self.done = 0
        self.total = total
        self._bar: Any = None
        stream = stream if stream is not None else sys.stderr
        if quiet or not _is_terminal(stream):
            return
        from tqdm import tqdm

        unit = unit.strip() or "it"
        unit = unit if unit == "B" else " " + unit  # 16.8MB, 12.5k records
        # tqdm's own fields in braces; the unit is put in beside the counts.
        counts = "{n_fmt}" + unit + "/{total_fmt}" + unit + " [{elapsed}<{remaining}, {rate_fmt}]"
        self._bar = tqdm(
            desc=label,
            total=total or None,
            file=stream,
            unit=unit,
            unit_scale=True,
            mininterval=0.1,
            leave=False,
            dynamic_ncols=True,
            bar_format="{l_bar}{bar}| " + counts if total else "{desc}: {n_fmt}" + unit + " [{elapsed}, {rate_fmt}]",
        )

    @property
    def enabled(self) -> bool:
        return self._bar is not None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self._bar is not None:
            self._bar.update(n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
