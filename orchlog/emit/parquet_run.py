"""The Python emitter writing Parquet: what `orchlog.configure(format="parquet", path=...)` starts.

Each selected record becomes one row of `orchlog.parquet.open_writer`: the
tensor summarised by the C++ core (`_native.DigestedTensor`: the same
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
warns and writes nothing, and so does a child forked from the process that
writes (a DataLoader worker, a multiprocessing pool): the child never touches
the parent's file, and with {pid} in the path writes a run of its own
(`after_fork`).
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from orchlog import _native, schema_gen
from orchlog import selector as _selector
from orchlog.emit import knobs
from orchlog.encoding.record import check_meta, field_default, header_values, leading_values, numel
from orchlog.encoding.text import to_text
from orchlog.parquet import open_writer
from orchlog.parquet.schema import MAX_TENSOR_BYTES
from orchlog.records import record

_WRITE_ERRORS = (OSError, ValueError, pa.ArrowException)
_KEY_PARTS = tuple(f for f in schema_gen.RECORD_FIELDS if f.source == "key")
# What a log call writes in the fields a graft call sets (`grafted`: false).
_LOG_CALL_FIELDS = {f.name: field_default(f) for f in schema_gen.RECORD_FIELDS if f.source == "call"}
_HEADER_SETTINGS = tuple(f.name for f in schema_gen.HEADER_FIELDS if f.source == "setting")

# Problems warned about by Parquet runs since the process started; orchlog.stats()
# adds them to the C++ core's count.
problems = 0


def warn(message: str) -> None:
    """Count a problem and print one warning line in one write, control characters
    escaped, as the C++ core writes it (schema `warnings`)."""
    global problems
    problems += 1
    line = "".join(c if 0x20 <= ord(c) != 0x7F else f"\\x{ord(c):02x}" for c in message)
    try:
        os.write(2, f"{schema_gen.WARNING_PREFIX}{line}\n".encode("utf-8", "replace"))
    except OSError:
        pass  # a closed stderr is not the host's problem


@record(frozen=True)
class Settings:
    """A Parquet run's settings: every knob's (the argument of configure, else its env knob), and the path."""

    knobs: Mapping[str, Any]  # setting -> value, as orchlog.emit.knobs.resolve gives them
    path: str  # the path setting with {rank} and {pid} substituted; "" is logging off
    config: Mapping[str, Any]


def resolve(given: Mapping[str, Any], config: Mapping[str, Any] | None) -> tuple[Settings, list[str]]:
    """Settings from the arguments and the env knobs, and the warnings for malformed knobs (FORMAT.md rules)."""
    values, warnings = knobs.resolve(given, os.environ)
    template = values["path"] or ""
    path = knobs.expand_path(template, values["rank"], os.getpid()) if template else ""
    return Settings(values, path, dict(config or {})), warnings


class BadArgument(ValueError):
    """A call that cannot be logged (its record is skipped)."""


class ParquetRun:
    """One Parquet file being written by orchlog.log; thread-safe."""

    def __init__(self, settings: Settings, selector: _selector.Selector | None) -> None:
        self.settings = settings
        self.selector = selector
        self.pid = os.getpid()  # the process that writes the file: a forked child is another
        self.records = 0
        self._warned_bad_call = False
        self._failed = False  # set by the writer's thread the moment a row group fails to reach the disk
        self._lock = threading.Lock()
        header = {"language": "python", **{name: settings.knobs.get(name) for name in _HEADER_SETTINGS}}
        header["config"] = dict(settings.config)
        self.writer: Any = open_writer(
            settings.path,
            headers=[header_values(header)],
            values=settings.knobs["values"],
            on_error=self._failed_in_background,
        )

    @property
    def on(self) -> bool:
        return self.writer is not None

    def log(
        self,
        checkpoint: Any,
        array: Any,
        positional: tuple[Any, ...],
        named: Mapping[str, Any],
        meta: Any,
        dtype: str | None,
    ) -> bool:
        """One record when the selector takes it; whether it was written. Raises nothing but Ctrl-C."""
        if self.writer is None:
            return False
        if self._failed:  # the writer's thread failed (and warned): logging goes off here, in the host's thread
            with self._lock:
                if self.writer is not None:
                    self._fail("writing failed")
            return False
        try:
            # Arguments are checked before the selector, as the C++ core's binding checks them.
            key = {"checkpoint": _text(checkpoint, "checkpoint"), **self._key(positional, named)}
            fields = {**key, **_LOG_CALL_FIELDS, "meta": _meta(meta)}
            tensor = _native.DigestedTensor(array, dtype)
            if self.selector is not None and not self.selector.matches(key):
                return False
            if tensor.nbytes > MAX_TENSOR_BYTES:
                raise BadArgument(f"a tensor of {tensor.nbytes:,} bytes is more than one Parquet value holds")
            digest = tensor.digest()  # outside the lock: the costly part, GIL released
        except (BadArgument, ValueError, TypeError) as exc:
            self._skip(f"orchlog.log: {exc}")
            return False
        digest["stats"] = schema_gen.Stats(*digest["stats"])
        return self._append({**fields, **digest}, tensor)

    def _key(self, positional: tuple[Any, ...], named: Mapping[str, Any]) -> dict[str, Any]:
        """The key parts (given by position or by name, checked) and the run's fields."""
        unknown = set(named) - {f.name for f in _KEY_PARTS}
        if unknown:
            raise BadArgument(f"unknown key part {sorted(unknown)} (known: {', '.join(f.name for f in _KEY_PARTS)})")
        parts = {
            f.name: _part(f, named.get(f.name, positional[i] if i < len(positional) else None))
            for i, f in enumerate(_KEY_PARTS)
        }
        identity = knobs.record_identity(parts, self.settings.knobs)
        return {k: to_text(v) if isinstance(v, str) else v for k, v in identity.items()}

    def _append(self, fields: dict[str, Any], tensor: Any) -> bool:
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
                        "values": leading_values(room, tensor.dtype, self.settings.knobs["values"]),
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


def _part(f: Any, value: Any) -> Any:
    """A key part as every emitter writes it: None when absent, or (numbers) below the part's least value (0
    unless the schema says more) or beyond its type."""
    if value is None:
        return None
    if f.type == "str":
        return _text(value, f.name)
    if f.type == "bool":
        if not isinstance(value, bool):
            raise BadArgument(f"{f.name} must be a bool or None, not {type(value).__name__}")
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadArgument(f"{f.name} must be an int or None, not {type(value).__name__}")
    return value if (f.min or 0) <= value <= f.int_max else None


def _meta(meta: Any) -> dict[str, Any]:
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise BadArgument("meta must be a dict")
    check_meta(meta)
    return {to_text(k): to_text(v) if isinstance(v, str) else v for k, v in meta.items()}


def after_fork(run: ParquetRun) -> ParquetRun | None:
    """In a child forked from `run`'s process: a run of the child's own when the path has {pid}, else None
    with one warning. The parent's writer is dropped untouched (its file, its thread and its locks are the
    parent's; orchlog.parquet.writer forgets its close at exit in the child)."""
    run.writer = None
    template = run.settings.knobs["path"] or ""
    if "{pid}" not in template:
        warn(
            f"this process (pid {os.getpid()}) was forked from pid {run.pid}, which writes {run.settings.path}; it "
            "writes nothing there (put {pid} in ORCH_LOG_FILE to give each process its own file); logging is off"
        )
        return None
    path = knobs.expand_path(template, run.settings.knobs["rank"], os.getpid())
    return start(dataclasses.replace(run.settings, path=path), [])


def start(settings: Settings, warnings: list[str]) -> ParquetRun | None:
    """Warn about the malformed knobs, then open a Parquet run (None when logging stays off)."""
    for w in warnings:
        warn(w)
    if not settings.path:
        return None
    try:
        selector = _selector.parse(settings.knobs["select"])
    except _selector.SelectorError as exc:
        warn(f"selector {settings.knobs['select']!r} is invalid ({exc}); logging is off")
        return None
    try:
        return ParquetRun(settings, selector)
    except _WRITE_ERRORS as exc:
        warn(f"cannot open {settings.path}: {exc}; logging is off")
        return None
