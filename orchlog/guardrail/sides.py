"""One side of a pair (the prefill run, say): its logits, read one token row at a time, and its metadata.json.

A side directory holds `logits.jsonl` or `logits.jsonl.gz` (legacy per-token
logits) with `metadata.json`, or, in their place, one orchlog trace (any
encoding, found by content) whose logits records carry every value; there
metadata.json is optional, since the trace's header describes the run.
Problems are collected as pairing errors, never raised: a guardrail reports
every broken file of a matrix in one go.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from orchlog.compare import LOGITS_NAMES
from orchlog.compare.pairing.tensors import flat_tensor
from orchlog.compare.pairing.tokens import token_id_of
from orchlog.errors import OrchlogError
from orchlog.guardrail.problems import MALFORMED_FILE, MISSING_FILE, MISSING_RUN, PairingError
from orchlog.read import fields, formats
from orchlog.read.batch import NONE, RecordBatch
from orchlog.read.paths import open_trace
from orchlog.read.trace import Trace
from orchlog.records import record
from orchlog.strings import glob_matcher

LOGITS_FILES = ("logits.jsonl", "logits.jsonl.gz")
METADATA_FILE = "metadata.json"
LEGACY_FORMAT = "legacy-logits"
_is_logits = glob_matcher(LOGITS_NAMES)


@record(frozen=True)
class TokenRow:
    token_idx: int
    token_id: int | None
    logits: np.ndarray
    location: str  # file:line (or @offset) of the row


@record(frozen=True)
class Span:
    """The token positions a side declares it covers (metadata.json `token_span`)."""

    start: int
    count: int

    def __str__(self) -> str:
        return f"start {self.start}, count {self.count}"


class Side:
    """One side directory of a run; problems found opening or reading it collect in `problems`."""

    def __init__(self, name: str, directory: Path) -> None:
        self.name = name
        self.dir = directory
        self.problems: list[PairingError] = []
        self.logits_path: Path | None = None
        self.metadata_path: Path | None = None
        self.metadata: dict[str, Any] | None = None
        self.span: Span | None = None
        self.rows_read = 0
        self._trace: Trace | None = None
        self._diagnostics_seen = 0
        if not directory.is_dir():
            self._problem(MISSING_RUN, f"{directory}/ is missing")
            return
        self._open_logits()
        self._read_metadata()

    @property
    def format(self) -> str | None:
        return None if self._trace is None else self._trace.format

    def _problem(self, kind: str, message: str) -> None:
        self.problems.append(PairingError(kind, f"{self.name}: {message}"))

    def _open_logits(self) -> None:
        named = [self.dir / f for f in LOGITS_FILES if (self.dir / f).is_file()]
        if len(named) > 1:
            self._problem(MALFORMED_FILE, f"{self.dir} holds both {' and '.join(LOGITS_FILES)}; keep the run's one")
            return
        candidates = named or self._trace_files()
        if not candidates:
            self._problem(MISSING_RUN, f"{self.dir}/{LOGITS_FILES[0]} (or .gz, or an orchlog trace) is missing")
            return
        if len(candidates) > 1:
            self._problem(
                MALFORMED_FILE,
                f"{self.dir} holds several traces ({', '.join(p.name for p in candidates)}); keep the run's one",
            )
            return
        self.logits_path = candidates[0]
        try:
            self._trace = open_trace(self.logits_path)
        except OrchlogError as exc:
            self._problem(MALFORMED_FILE, str(exc))

    def _trace_files(self) -> list[Path]:
        """Files of the directory that some trace format claims, found by content (metadata.json aside)."""
        found = []
        for f in sorted(self.dir.iterdir()):
            if f.is_file() and not f.name.startswith(".") and f.name != METADATA_FILE:
                try:
                    formats.detect(f)
                except OrchlogError:
                    continue
                found.append(f)
        return found

    def _read_metadata(self) -> None:
        path = self.dir / METADATA_FILE
        if not path.is_file():
            if self.format == LEGACY_FORMAT:  # an orchlog trace carries its own header; legacy logits need this file
                self._problem(MISSING_FILE, f"{path} is missing")
            return
        self.metadata_path = path
        try:
            # NaN and Infinity literals stay the strings they are, so that summary.json remains strict JSON.
            doc = json.loads(path.read_bytes(), parse_constant=str)
            if fields.depth(doc) > fields.MAX_HEADER_DEPTH:
                raise RecursionError
        except RecursionError:
            self._problem(MALFORMED_FILE, f"{path}: nested deeper than {fields.MAX_HEADER_DEPTH} levels")
            return
        except OSError as exc:
            self._problem(MALFORMED_FILE, f"{path}: cannot read ({exc.strerror or exc})")
            return
        except json.JSONDecodeError as exc:
            self._problem(MALFORMED_FILE, f"{path}:{exc.lineno}: malformed JSON ({exc.msg} at column {exc.colno})")
            return
        except UnicodeDecodeError:
            self._problem(MALFORMED_FILE, f"{path}: not UTF-8 text")
            return
        if not isinstance(doc, dict):
            self._problem(MALFORMED_FILE, f"{path}: must hold a JSON object")
            return
        self.metadata = doc
        if "token_span" in doc:
            self.span = self._span(doc["token_span"], path)

    def _span(self, value: Any, path: Path) -> Span | None:
        if isinstance(value, dict) and set(value) >= {"start", "count"}:
            start, count = value["start"], value["count"]
            if all(isinstance(v, int) and not isinstance(v, bool) for v in (start, count)) and start >= 0 and count > 0:
                return Span(start, count)
        self._problem(
            MALFORMED_FILE,
            f'{path}: token_span must be {{"start": N, "count": N}} with start >= 0 '
            f"and count >= 1, not {json.dumps(value)}",
        )
        return None

    def rows(self) -> Iterator[TokenRow]:
        """The side's logits, one token row at a time, in file order; what cannot be read is reported, not raised."""
        if self._trace is None:
            return
        try:
            for batch in self._trace.batches(rows=1):
                for i in range(len(batch)):
                    if _is_logits(batch.checkpoint[i]):
                        row = self._row(batch, i)
                        if row is not None:
                            self.rows_read += 1
                            yield row
                self._collect_diagnostics()
        except (OSError, EOFError, zlib.error) as exc:
            self._problem(MALFORMED_FILE, f"{self.logits_path}: unreadable after {self.rows_read} token rows ({exc})")
        self._collect_diagnostics()

    def _row(self, batch: RecordBatch, i: int) -> TokenRow | None:
        where = str(batch.location(i))
        if batch.token_idx[i] == NONE:
            self._problem(MALFORMED_FILE, f"{where}: logits without a token_idx; skipped")
            return None
        logits = flat_tensor(batch, i)
        if logits is None:
            self._problem(
                MALFORMED_FILE,
                f"{where}: holds {len(batch.row_values(i))} of {batch.numel[i]} logits "
                "(log every value: ORCH_LOG_VALUES=all or ORCH_LOG_MODE=full)",
            )
            return None
        return TokenRow(int(batch.token_idx[i]), token_id_of(batch, i), logits, where)

    def _collect_diagnostics(self) -> None:
        """Reader problems (malformed lines, cut-off files) become pairing errors; metadata.json has its own checks."""
        assert self._trace is not None, "called while the logits are read"
        new = self._trace.diagnostics[self._diagnostics_seen :]
        self._diagnostics_seen += len(new)
        for d in new:
            if Path(d.location.path).name != METADATA_FILE:
                self._problem(MALFORMED_FILE, str(d))
