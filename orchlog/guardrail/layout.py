"""Where the runs of a matrix live: a directory pattern such as `runs/kv_aligned_{kv_aligned}/seed_{seed}`.

Each `{axis}` placeholder names an axis of the matrix; a run directory's
path gives that run's value on every axis. The same pattern turns values
into a path (to find a declared run), a path into values (to discover
runs when nothing is declared), and a run into its metrics file.
"""

from __future__ import annotations

import re
from pathlib import Path

from orchlog.errors import OrchlogError
from orchlog.records import record

DEFAULT_RUN_DIRS = "runs/kv_aligned_{kv_aligned}/seed_{seed}"
METRICS_DIR = "metrics"
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_AXIS_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@record(frozen=True)
class Run:
    """One run directory of the matrix: its value on each axis (as written in the path) and where it is."""

    values: dict[str, str]
    path: str  # relative to the artifact directory, '/'-separated

    def label(self) -> str:
        return " ".join(f"{axis}={value}" for axis, value in self.values.items()) or self.path


class RunPattern:
    """A run-directory pattern, relative to the artifact directory; each axis appears once."""

    def __init__(self, text: str) -> None:
        self.text = text
        parts = text.strip("/").split("/")
        if not text.strip("/") or text.startswith("/") or any(p in ("", ".", "..") for p in parts):
            raise OrchlogError(f"run directory pattern {text!r} must be a relative path like {DEFAULT_RUN_DIRS!r}")
        self.parts = parts
        self.axes: tuple[str, ...] = tuple(m[1] for part in parts for m in _PLACEHOLDER.finditer(part))
        bad = [a for a in self.axes if not _AXIS_NAME.fullmatch(a)]
        if bad:
            raise OrchlogError(
                f"run directory pattern {text!r}: {{{bad[0]}}} is not an axis name (letters, digits and _)"
            )
        twice = sorted({a for a in self.axes if self.axes.count(a) > 1})
        if twice:
            raise OrchlogError(f"run directory pattern {text!r} names axis {twice[0]!r} more than once")
        self._regexes = [_part_regex(p) for p in parts]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RunPattern) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"RunPattern({self.text!r})"

    def path(self, values: dict[str, str]) -> str:
        return "/".join(_PLACEHOLDER.sub(lambda m: values[m[1]], p) for p in self.parts)

    def metrics_path(self, values: dict[str, str]) -> str:
        """`metrics/kv_aligned_1/seed_0_metrics.json` for `runs/kv_aligned_1/seed_0`, as the seed lays them out:
        the run's path without a leading `runs/`, under `metrics/`, with `_metrics.json` appended."""
        rel = self.path(values)
        if rel.startswith("runs/") and rel != "runs/":
            rel = rel[len("runs/") :]
        return f"{METRICS_DIR}/{rel}_metrics.json"

    def discover(self, root: Path) -> tuple[list[Run], list[str]]:
        """The run directories under root that fit the pattern, and the directories at an axis level that do not."""
        level: list[tuple[Path, str, dict[str, str]]] = [(root, "", {})]
        ignored: list[str] = []
        for part, regex in zip(self.parts, self._regexes):
            nxt = []
            for directory, rel, values in level:
                if regex is None:
                    if (directory / part).is_dir():
                        nxt.append((directory / part, _join(rel, part), values))
                    continue
                for child in _subdirectories(directory):
                    if directory == root and child.name == METRICS_DIR:
                        continue  # what an earlier guardrail wrote here, not a run
                    m = regex.fullmatch(child.name)
                    if m is None:
                        ignored.append(_join(rel, child.name))
                    else:
                        nxt.append((child, _join(rel, child.name), {**values, **m.groupdict()}))
            level = nxt
        runs = [Run({a: values[a] for a in self.axes}, rel) for _, rel, values in level]
        return runs, ignored


def _part_regex(part: str) -> re.Pattern[str] | None:
    """None for a literal directory name; else a regex whose named groups are the part's axes."""
    if not _PLACEHOLDER.search(part):
        return None
    pieces, last = [], 0
    for m in _PLACEHOLDER.finditer(part):
        pieces.append(re.escape(part[last : m.start()]))
        pieces.append(f"(?P<{m[1]}>[^/]+?)")
        last = m.end()
    pieces.append(re.escape(part[last:]))
    return re.compile("".join(pieces))


def _subdirectories(directory: Path) -> list[Path]:
    try:
        return sorted(p for p in directory.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return []


def _join(rel: str, name: str) -> str:
    return f"{rel}/{name}" if rel else name
