"""Argument types shared by subcommands: argparse turns their errors into one-line usage errors."""

from __future__ import annotations

import argparse


def nonnegative(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not v >= 0:
        raise argparse.ArgumentTypeError(f"{text} must be >= 0")
    return v


def positive_float(text: str) -> float:
    v = nonnegative(text)
    if v == 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"{text} must be a finite number > 0")
    return v


def unit_interval(text: str) -> float:
    v = nonnegative(text)
    if v > 1:
        raise argparse.ArgumentTypeError(f"{text} must be between 0 and 1")
    return v


def nonnegative_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"{text} must be >= 0")
    return v


def positive_int(text: str) -> int:
    v = nonnegative_int(text)
    if v == 0:
        raise argparse.ArgumentTypeError(f"{text} must be >= 1")
    return v


def executor(text: str) -> tuple[str, str | None]:
    """`local`, `ray` (a Ray instance started here) or `ray:ADDRESS` (a running cluster): (kind, address)."""
    kind, _, address = text.partition(":")
    if kind not in ("local", "ray") or (kind == "local" and address):
        raise argparse.ArgumentTypeError(f"{text!r}: expected local, ray or ray:ADDRESS")
    return kind, address or None
