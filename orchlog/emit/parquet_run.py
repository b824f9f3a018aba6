"""The Python emitter writing Parquet: what `orchlog.configure(format="parquet", path=...)` starts.

Each selected record becomes one row of `orchlog.parquet.open_writer`: the
tensor summarised by the C++ core (`_native.SummarizedTensor`: the same
stats and BLAKE3 as every emitter's records, about fifty times faster than
the reference NumPy code), its bytes copied once, straight into the row
group being gathered. The run header, the selector, the values count and
the key rules are those of the other encodings (schema/FORMAT.md), so the
rows equal what `orchlog pack` makes of a binary stream of the same calls.

Like every emitter it never raises into the host: a bad argument skips the
record (one warning per kind, every one counted); a failed write (OSError,
ValueError, an Arrow error) gives one warning, counts, and turns logging
off, at the moment the writer's thread meets it. A Ctrl-C is the host's and
goes through. Memory stays at a few row groups. Each row group is written
whole as soon as it is complete (orchlog/parquet/pieces.py); the file gets its
footer on `close`, on the next `configure`, or at interpreter exit, and a
process killed by SIGKILL or a full disk leaves a file whose complete row
groups orchlog still reads (`orchlog.flush()` writes the rows gathered so
far: what it acknowledged survives). A second process given the same path
warns and writes nothing.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from orchlog import _native, schema_gen
from orchlog.emit import knobs
from orchlog.emit import selector as _selector
from orchlog.encoding.record import (
    HeaderInput,
    check_meta,
    created_from_epoch,
    header_values,
    leading_values,
    numel,
)
from orchlog.encoding.text import to_text
from orchlog.parquet import open_writer
from orchlog.parquet.schema import MAX_TENSOR_BYTES

_WRITE_ERRORS = (OSError, ValueError, pa.ArrowException)
_LIMITS = {"token_idx": 2**63 - 1, "layer": 2**31 - 1, "step": 2**31 - 1}

# Problems warned about by Parquet runs since the process started; orchlog.stats()
# adds them to the C++ core's count.
problems = 0


def warn(message: str) -> None:
    """Count a problem and print one `orchlog: warning:` line in one write, control characters
    escaped, as the C++ core writes it."""
    global problems
    problems += 1
    line = "".join(c if 0x20 <= ord(c) != 0x7F else f"\\x{ord(c):02x}" for c in message)
    try:
        os.write(2, f"orchlog: warning: {line}\n".encode("utf-8", "replace"))
    except OSError:
        pass  # a closed stderr is not the host's problem


@dataclasses.dataclass(frozen=True)
class Settings:
    """A Parquet run's settings: the arguments of configure, each None taken from its env knob."""

    path: str  # {rank} and {pid} substituted; "" is logging off
    team: str
    values: int
    select: str | None  # the selector text as given; None: everything
    rank: int
    world_size: int
    model: str | None
    git_commit: str | None
    config: Mapping[str, Any]
    created: str


def resolve(
    *,
    path: str | None,
    team: str | None,
    values: int | None,
    select: str | None,
    rank: int | None,
    world_size: int | None,
    model: str | None,
    git_commit: str | None,
    config: Mapping[str, Any] | None,
) -> tuple[Settings, list[str]]:
    """Settings from the arguments and the env knobs, and the warnings for malformed knobs (FORMAT.md rules)."""
    warnings: list[str] = []

    def knob(given: Any, parsed: knobs.Parsed) -> Any:
        if given is not None:
            return given
        if parsed.warning:
            warnings.append(parsed.warning)
        return parsed.value

    env = os.environ.get
    rank = knob(rank, knobs.parse_int(schema_gen.ORCH_LOG_RANK, env(schema_gen.ORCH_LOG_RANK), 0))
    epoch = knobs.parse_source_date_epoch(env("SOURCE_DATE_EPOCH"))
    if epoch.warning:
        warnings.append(epoch.warning)
    template = path if path is not None else env(schema_gen.ORCH_LOG_FILE, "")
    return Settings(
        path=knobs.expand_path(template, rank, os.getpid()) if template else "",
        team=to_text(team if team is not None else env(schema_gen.ORCH_LOG_TEAM, "")),
        values=knob(values, knobs.parse_values(env(schema_gen.ORCH_LOG_VALUES))),
        select=select if select is not None else env(schema_gen.ORCH_LOG_SELECT),
        rank=rank,
        world_size=knob(
            world_size, knobs.parse_int(schema_gen.ORCH_LOG_WORLD_SIZE, env(schema_gen.ORCH_LOG_WORLD_SIZE), 1)
        ),
        model=(model if model is not None else env(schema_gen.ORCH_LOG_MODEL)) or None,
        git_commit=(git_commit if git_commit is not None else env(schema_gen.ORCH_LOG_GIT_COMMIT)) or None,
        config=dict(config or {}),
        created=created_from_epoch(epoch.value if epoch.value is not None else int(time.time())),
    ), warnings


class BadArgument(ValueError):
    """A call that cannot be logged (its record is skipped)."""


class ParquetRun:
    """One Parquet file being written by orchlog.log; thread-safe."""

    def __init__(self, settings: Settings, selector: _selector.Selector | None) -> None:
        self.settings = settings
        self.selector = selector
        self.records = 0
        self._warned_bad_call = False
        self._failed = False  # set by the writer's thread the moment a row group fails to reach the disk
        self._lock = threading.Lock()
        header = header_values(
            HeaderInput(
                language="python",
                created=settings.created,
                team=settings.team,
                model=settings.model,
                git_commit=settings.git_commit,
                rank=settings.rank,
                world_size=settings.world_size,
                values=settings.values,
                select=settings.select if selector is not None else None,
                config=dict(settings.config),
            )
        )
        self.writer: Any = open_writer(
            settings.path, headers=[header], values=settings.values, on_error=self._failed_in_background
        )

    @property
    def on(self) -> bool:
        return self.writer is not None

    def log(
        self,
        checkpoint: Any,
        array: Any,
        token_idx: Any,
        layer: Any,
        stage: Any,
        step: Any,
        meta: Any,
        dtype: str | None,
    ) -> bool:
        """One record when the selector takes it; whether it was written. Raises nothing but Ctrl-C."""
        if self.writer is None or self._failed:
            return False
        try:
            # Arguments are checked before the selector, as the C++ core's binding checks them.
            key = {
                "checkpoint": _text(checkpoint, "checkpoint"),
                "token_idx": _number(token_idx, "token_idx"),
                "layer": _number(layer, "layer"),
                "stage": None if stage is None else _text(stage, "stage"),
                "step": _number(step, "step"),
                "rank": self.settings.rank,
            }
            fields = {**key, "team": self.settings.team, "world_size": self.settings.world_size, "meta": _meta(meta)}
            tensor = _native.SummarizedTensor(array, dtype)
            if self.selector is not None and not self.selector.matches(key):
                return False
            if tensor.nbytes > MAX_TENSOR_BYTES:
                raise BadArgument(f"a tensor of {tensor.nbytes:,} bytes is more than one Parquet value holds")
            stats, digest = tensor.summarize()  # outside the lock: the costly part, GIL released
        except (BadArgument, ValueError, TypeError) as exc:
            self._skip(f"orchlog.log: {exc}")
            return False
        return self._append(fields, tensor, schema_gen.Stats(*stats), digest)

    def _append(self, fields: dict[str, Any], tensor: Any, stats: Any, digest: str) -> bool:
        with self._lock:
            if self.writer is None:
                return False
            try:
                room = self.writer.reserve(tensor.nbytes)  # in the row group being gathered
                tensor.copy_into(room)
                self.writer.append(
                    {
                        **fields,
                        "dtype": tensor.dtype,
                        "shape": list(tensor.shape),
                        "numel": numel(tensor.shape),
                        "values": leading_values(room, tensor.dtype, self.settings.values),
                        "stats": stats,
                        "blake3": digest,
                        "data": room,
                    },
                    assign_seq=True,
                    reserved=True,
                )
            except _WRITE_ERRORS as exc:
                self._fail(f"writing {self.settings.path} failed: {exc}")
                return False
            self.records += 1
            return True

    def flush(self) -> bool:
        with self._lock:
            if self.writer is None:
                return True
            try:
                self.writer.flush(wait=True)  # written, not only handed to the writer's thread
                return True
            except _WRITE_ERRORS as exc:
                self._fail(f"writing {self.settings.path} failed: {exc}")
                return False

    def close(self) -> None:
        """Write the gathered rows and the footer; a failure is warned about and counted, not raised."""
        with self._lock:
            writer, self.writer = self.writer, None
            if writer is None:
                return
            try:
                writer.close()
            except _WRITE_ERRORS as exc:
                if not self._failed:  # a failure already warned about is not news at close
                    warn(f"closing {self.settings.path} failed: {exc}")

    def _skip(self, message: str) -> None:
        """A record not written: counted every time, printed the first time."""
        global problems
        if self._warned_bad_call:
            problems += 1
        else:
            self._warned_bad_call = True
            warn(f"{message} (printed once)")

    def _failed_in_background(self, exc: BaseException) -> None:
        """The writer's thread could not write a row group: warn now, as the other emitters warn at the
        first failed write, and take no more records. The row groups written before stay readable."""
        if not self._failed:
            self._failed = True
            warn(f"writing {self.settings.path} failed: {exc}; logging is off from now on")

    def _fail(self, why: str) -> None:
        """The output failed (lock held): one warning, and logging is off until configure."""
        writer, self.writer = self.writer, None
        if not self._failed:
            self._failed = True
            warn(f"{why}; logging is off from now on ({self.records} records had been written)")
        try:
            writer.close()
        except BaseException:
            pass


def _text(value: Any, what: str) -> str:
    if not isinstance(value, (str, bytes)):
        raise BadArgument(f"{what} must be str or bytes, not {type(value).__name__}")
    return to_text(value)


def _number(value: Any, what: str) -> int | None:
    """A key number: None when absent, negative or beyond its field's type, as in every emitter."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadArgument(f"{what} must be an int or None, not {type(value).__name__}")
    return value if 0 <= value <= _LIMITS[what] else None


def _meta(meta: Any) -> dict[str, Any]:
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise BadArgument("meta must be a dict")
    check_meta(meta)
    return {to_text(k): to_text(v) if isinstance(v, str) else v for k, v in meta.items()}


def start(settings: Settings, warnings: list[str]) -> ParquetRun | None:
    """Warn about the malformed knobs, then open a Parquet run (None when logging stays off)."""
    for w in warnings:
        warn(w)
    if not settings.path:
        return None
    try:
        selector = _selector.parse(settings.select)
    except _selector.SelectorError as exc:
        warn(f"selector {settings.select!r} is invalid ({exc}); logging is off")
        return None
    try:
        return ParquetRun(settings, selector)
    except _WRITE_ERRORS as exc:
        warn(f"cannot open {settings.path}: {exc}; logging is off")
        return None
