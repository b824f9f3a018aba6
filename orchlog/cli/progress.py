"""Progress for long commands: on a terminal only, silent when piped or --quiet.

Usage:
    with Progress("comparing", total=n, quiet=args.quiet) as p:
        for item in items:
            p.advance()
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """A single self-overwriting status line on stderr, redrawn at most 10 times a second."""

    def __init__(
        self, label: str, total: int | None = None, quiet: bool = False, stream: TextIO | None = None, unit: str = ""
    ) -> None:
        self.label = label
        self.total = total
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = not quiet and _is_terminal(self.stream)
        self.done = 0
        self._started = time.monotonic()
        self._last_draw = 0.0

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def advance(self, n: int = 1) -> None:
        self.done += n
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last_draw >= 0.1:
            self._last_draw = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        elapsed = now - self._started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        if self.total:
            pct = 100.0 * self.done / self.total
            text = f"{self.label}: {self.done:,}/{self.total:,}{self.unit} ({pct:.0f}%, {rate:,.0f}{self.unit}/s)"
        else:
            text = f"{self.label}: {self.done:,}{self.unit} ({rate:,.0f}{self.unit}/s)"
        self.stream.write("\r\x1b[2K" + text)
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self._last_draw:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
