"""The progress line: human units, rate and time left on a terminal; nothing when piped or quiet."""

from __future__ import annotations

import io

from orchlog.progress import Progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_bytes_are_shown_in_binary_units_with_a_rate_and_the_time_left():
    out = _Terminal()
    with Progress("comparing", total=64 * 2**20, stream=out, unit="B") as bar:
        bar.advance(16 * 2**20)
        bar._bar.refresh()  # draw now rather than after the redraw interval
        text = out.getvalue()
    assert "comparing" in text and "16.8MB/67.1MB" in text
    assert "B/s" in text and "<" in text  # tqdm's "elapsed<remaining"
    assert bar.done == 16 * 2**20


def test_nothing_is_written_when_the_stream_is_not_a_terminal():
    out = io.StringIO()
    with Progress("comparing", total=100, stream=out, unit="B") as bar:
        bar.advance(50)
    assert out.getvalue() == "" and bar.done == 50 and not bar.enabled


def test_quiet_writes_nothing_even_on_a_terminal():
    out = _Terminal()
    with Progress("packing", stream=out, unit="records", quiet=True) as bar:
        bar.advance(3)
    assert out.getvalue() == "" and bar.done == 3


def test_counts_without_a_total_use_decimal_suffixes():
    out = _Terminal()
    with Progress("packing", stream=out, unit="records") as bar:
        bar.advance(12_500)
        bar._bar.refresh()
        text = out.getvalue()
    assert "12.5k records" in text
