"""The Python emitter: `orchlog.log` and `orchlog.configure`.

The records are written by the same C++ core as the ORCH_LOG macros
(`orchlog._native`), so a Python engine and a C++ engine produce
byte-identical lines for the same tensor and key.

    import orchlog
    orchlog.configure(path="ours.jsonl", team="my-engine")   # or set ORCH_LOG_FILE etc.
    orchlog.log("attn_norm", hidden, token_idx=5, layer=3)

`log` accepts NumPy arrays and anything with the buffer protocol or
`__dlpack__` (torch CPU tensors, bf16 included) without copying; a
non-contiguous array is made contiguous for hashing. Like every emitter it
never raises into the engine: a bad argument or a failed write prints one
warning on stderr and counts an error (see `stats()`); a failed write also
turns logging off. `configure`, on the other hand, is set-up code and rejects
bad settings with an OrchlogError.

`configure(format="parquet", path=...)` writes a Parquet trace instead of
JSONL or the binary stream (orchlog/parquet_run.py): the same records,
one row each, with the full tensors.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from orchlog import _native, schema_gen
from orchlog.emit import selector as _selector
from orchlog.encoding.record import check_meta
from orchlog.errors import OrchlogError

FORMATS = ("parquet",)  # besides the default: JSONL and/or the binary stream, as the mode says

# The Parquet run that log() feeds, when configure(format="parquet") started one.
if TYPE_CHECKING:
    from orchlog.emit import parquet_run

# The Parquet writer (and pyarrow with it) is imported only when a run asks for Parquet.
_parquet: parquet_run.ParquetRun | None = None

Scalar = bool | int | float | str

_I32_MAX = 2**31 - 1


def log(
    checkpoint: str | bytes,
    array: Any,
    token_idx: int | None = None,
    layer: int | None = None,
    stage: str | None = None,
    step: int | None = None,
    meta: Mapping[str, Scalar] | None = None,
    *,
    dtype: str | None = None,
) -> bool:
    """Write one record of `array` at `checkpoint`; returns whether it was written.

    Key fields left as None (or negative) are null in the record. `dtype`
    reinterprets the elements, e.g. dtype="bf16" for a uint16 array of
    bfloat16 bits. Nothing is written while logging is off or when the
    selector (ORCH_LOG_SELECT) does not match.
    """
    parquet = _parquet
    if parquet is not None:
        return parquet.log(checkpoint, array, token_idx, layer, stage, step, meta, dtype)
    written: bool = _native.log(checkpoint, array, token_idx, layer, stage, step, meta, dtype)
    return written


def configure(
    *,
    path: str | None = None,
    team: str | None = None,
    values: int | str | None = None,
    mode: str | None = None,
    select: str | None = None,
    rank: int | None = None,
    world_size: int | None = None,
    model: str | None = None,
    git_commit: str | None = None,
    config: Mapping[str, Scalar] | None = None,
    format: str | None = None,
) -> bool:
    """Start a new run, closing the previous one; returns whether logging is on.

    Each option left as None comes from its env knob: path (ORCH_LOG_FILE,
    with {rank} and {pid}; "" turns logging off), team, values (a count or
    "all"), mode ("summary", "full", "both"), select (ORCH_LOG_SELECT
    syntax), rank, world_size, model, git_commit. `config` is written into
    the run header. `format="parquet"` writes one Parquet file at the path
    (full tensors; `mode` does not apply).
    """
    if values is not None:
        if values == "all":
            values = -1
        elif isinstance(values, bool) or not isinstance(values, int) or not 0 <= values <= _I32_MAX:
            raise OrchlogError(f"values={values!r}: want a non-negative count or 'all'")
    if mode is not None and mode not in schema_gen.MODES:
        raise OrchlogError(f"mode={mode!r}: want one of {', '.join(schema_gen.MODES)}")
    if select is not None:
        try:
            _selector.parse(select)
        except _selector.SelectorError as exc:
            raise OrchlogError(f"select={select!r}: {exc}") from None
    for name, value, minimum in (("rank", rank, 0), ("world_size", world_size, 1)):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= _I32_MAX
        ):
            raise OrchlogError(f"{name}={value!r}: want an integer >= {minimum}")
    for name, text in (("path", path), ("team", team), ("model", model), ("git_commit", git_commit)):
        if text is not None and not isinstance(text, str):
            raise OrchlogError(f"{name}={text!r}: want a string")
    _check_config(config)
    if format is not None and format not in FORMATS:
        raise OrchlogError(f"format={format!r}: want one of {', '.join(FORMATS)} (or None for the mode's encodings)")
    if format is not None and mode is not None:
        raise OrchlogError(f"mode={mode!r} applies to JSONL and the binary stream, not to format={format!r}")
    _close_parquet()
    if format == "parquet":
        _native.close()
        return _start_parquet(
            path=path,
            team=team,
            values=values,
            select=select,
            rank=rank,
            world_size=world_size,
            model=model,
            git_commit=git_commit,
            config=config,
        )
    return bool(
        _native.configure(
            path,
            team,
            values,
            mode,
            select,
            rank,
            world_size,
            model,
            git_commit,
            None if config is None else dict(config),
        )
    )


def _start_parquet(**options: Any) -> bool:
    global _parquet
    from orchlog.emit import parquet_run

    settings, warnings = parquet_run.resolve(**options)
    _parquet = parquet_run.start(settings, warnings)
    return _parquet is not None


def _close_parquet() -> None:
    global _parquet
    parquet, _parquet = _parquet, None
    if parquet is not None:
        parquet.close()


def _check_config(config: Mapping[str, Scalar] | None) -> None:
    try:
        check_meta(config or {})
    except ValueError as exc:
        raise OrchlogError(f"config: {exc}") from None


def flush() -> bool:
    """Records are in the kernel once `log` returns; this also puts them on disk.

    In a Parquet run, the rows gathered so far are written as a row group.
    """
    parquet = _parquet
    if parquet is not None:
        return parquet.flush()
    return bool(_native.flush())


def close() -> None:
    """End the run and close its files; logging stays off until `configure`."""
    _close_parquet()
    _native.close()


@dataclasses.dataclass(frozen=True)
class EmitterStats:
    enabled: bool
    records: int  # written in the current run
    errors: int  # problems warned about since the process started: bad knobs, records not written, failed writes
    path: str | None
    binary_path: str | None  # the binary stream in `both` mode


def stats() -> EmitterStats:
    """Where the emitter stands: on or off, records written, errors counted."""
    native = _native.status()
    parquet_run = sys.modules.get("orchlog.emit.parquet_run")  # never imported: no Parquet run, no problems
    errors = native["errors"] + (parquet_run.problems if parquet_run is not None else 0)
    parquet = _parquet
    if parquet is not None:
        return EmitterStats(
            enabled=parquet.on, records=parquet.records, errors=errors, path=parquet.settings.path, binary_path=None
        )
    return EmitterStats(**{**native, "errors": errors})
