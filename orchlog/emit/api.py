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
JSONL or the binary stream (orchlog/emit/parquet_run.py): the same records,
one row each, with the full tensors.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from orchlog import _native, schema_gen
from orchlog import selector as _selector
from orchlog.emit import knobs
from orchlog.encoding.record import check_meta
from orchlog.errors import OrchlogError
from orchlog.records import record

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from orchlog.emit import parquet_run
    from orchlog.schema_gen import NamedKeyParts, RunSettings

FORMATS = ("parquet",)  # besides the default: JSONL and/or the binary stream, as the mode says

# The Parquet run that log() feeds, when configure(format="parquet") started one. The Parquet
# writer (and pyarrow with it) is imported only when a run asks for Parquet.
_parquet: parquet_run.ParquetRun | None = None

# The graft settings (graft_from, graft_select) the program last gave configure(); None until it calls
# configure. attach(graft_from=...) starts a run only when the program never did.
_configured_graft: tuple[str | None, str | None] | None = None

Scalar = bool | int | float | str
_NAMED_PARTS = frozenset(schema_gen.KEY_PARTS) - frozenset(schema_gen.POSITIONAL_KEY_PARTS)

# The C++ logger's state byte, read in place (detail/logger/entry.hpp): while logging is off, log() answers
# from it where a call into the extension cost 1.8x a no-op Python call. Any other state (not yet
# configured from the env, on, forked) takes the call, which settles it.
_STATE = _native.state_view()
_STATE_OFF = _native.STATE_OFF

# Whether the state byte was last seen off. Reading the byte (a memoryview item) costs 30 ns, half a no-op
# call (1.30-1.41x one in all); this flag costs nothing (0.97x). It only repeats what was read: the byte
# goes from off to on through configure() alone (a failed write, a stop, a fork only ever turn logging
# off, and the next call reads the byte), and configure() clears the flag before the run starts and reads
# the byte once it is settled.
_seen_off = False


def _note_state() -> bool:
    """Read the state byte into `_seen_off` (and return it). Read twice around the write, so that a
    configure() turning logging on in another thread meanwhile cannot leave the flag saying off."""
    global _seen_off
    _seen_off = _STATE[0] == _STATE_OFF
    if _seen_off and _STATE[0] != _STATE_OFF:
        _seen_off = False
    return _seen_off


def log(
    checkpoint: str | bytes,
    array: Any,
    token_idx: int | None = None,
    layer: int | None = None,
    stage: str | bytes | None = None,
    step: int | None = None,
    meta: Mapping[str, Scalar] | None = None,
    *,
    dtype: str | None = None,
    **named: Unpack[NamedKeyParts],
) -> bool:
    """Write one record of `array` at `checkpoint`; returns whether it was written.

    The key's first parts come by position (token_idx, layer, stage, step),
    the others by name (schema_gen.NamedKeyParts), e.g. rank=2 where one
    process logs several tensor-parallel shards (else the run's rank). Parts
    left as None (or negative) are null in the record. `dtype` reinterprets
    the elements, e.g. dtype="bf16" for a uint16 array of bfloat16 bits.
    Nothing is written while logging is off or when the selector
    (ORCH_LOG_SELECT) does not match.
    """
    if named and not named.keys() <= _NAMED_PARTS:  # what Python says of any unknown keyword
        unknown = ", ".join(sorted(named.keys() - _NAMED_PARTS))
        raise TypeError(
            f"log() got an unexpected keyword argument {unknown} (named key parts: {', '.join(_NAMED_PARTS)})"
        )
    # While logging is on, one read of the byte, as before the flag; the flag is noted when it reads off.
    if _parquet is None and (_seen_off or (_STATE[0] == _STATE_OFF and _note_state())):
        return False
    positional = (token_idx, layer, stage, step)  # schema_gen.POSITIONAL_KEY_PARTS
    parquet = _current_parquet()
    if parquet is not None:
        return parquet.log(checkpoint, array, positional, named, meta, dtype)
    logged: bool = _native.log(checkpoint, array, positional, named or None, meta, dtype)
    return logged


def graft(
    checkpoint: str | bytes,
    array: Any,
    token_idx: int | None = None,
    layer: int | None = None,
    stage: str | bytes | None = None,
    step: int | None = None,
    meta: Mapping[str, Scalar] | None = None,
    *,
    dtype: str | None = None,
    **named: Unpack[NamedKeyParts],
) -> bool:
    """Overwrite `array` from the reference run, then log it; returns whether it was overwritten.

    The same key and arguments as log(), on an array that must be writable and
    C-contiguous (anything with the buffer protocol: a NumPy array, a CPU torch
    tensor's .numpy()). When ORCH_GRAFT_SELECT accepts the key, the array is
    overwritten in place with the values of the matching record of
    ORCH_GRAFT_FROM (a full-mode binary stream; dtype converted among
    f32/f16/bf16/f64, shape checked) and the record is logged with `grafted`
    true. Otherwise, or when the reference holds no such record (one warning),
    it is exactly log(). Grafting needs a run that writes the binary stream or
    JSONL; a Parquet run (format="parquet") logs without grafting.
    """
    positional = (token_idx, layer, stage, step)  # schema_gen.POSITIONAL_KEY_PARTS
    if named and not named.keys() <= _NAMED_PARTS:
        unknown = ", ".join(sorted(named.keys() - _NAMED_PARTS))
        raise TypeError(
            f"graft() got an unexpected keyword argument {unknown} (named key parts: {', '.join(_NAMED_PARTS)})"
        )
    parquet = _current_parquet()
    if parquet is not None:
        parquet.log(checkpoint, array, positional, named, meta, dtype)
        return False
    return bool(_native.graft(checkpoint, array, positional, named or None, meta, dtype))


def configure(
    *,
    config: Mapping[str, Scalar] | None = None,
    format: str | None = None,
    **settings: Unpack[RunSettings],
) -> bool:
    """Start a new run, closing the previous one; returns whether logging is on.

    Each setting (schema_gen.RunSettings: one per env knob) left out or None
    comes from its env knob: path (ORCH_LOG_FILE, with {rank} and {pid}; ""
    turns logging off), team, values (a count or "all"), mode ("summary",
    "full", "both"), select (ORCH_LOG_SELECT syntax), rank, world_size,
    model, git_commit, created (SOURCE_DATE_EPOCH seconds). `config` is
    written into the run header. `format="parquet"` writes one Parquet file
    at the path (full tensors; `mode` does not apply).
    """
    global _configured_graft, _seen_off
    given = _checked(dict(settings))
    _check_config(config)
    if format is not None and format not in FORMATS:
        raise OrchlogError(f"format={format!r}: want one of {', '.join(FORMATS)} (or None for the mode's encodings)")
    if format is not None and given.get("mode") is not None:
        raise OrchlogError(f"mode={given['mode']!r} applies to JSONL and the binary stream, not to format={format!r}")
    _close_parquet()
    _configured_graft = (given.get("graft_from"), given.get("graft_select"))
    _seen_off = False  # until the run is settled, log() asks the state byte
    if format == "parquet":
        _native.close()
        _note_state()
        return _start_parquet(given, config)
    on = bool(_native.configure(given, None if config is None else dict(config)))
    _note_state()
    return on


def graft_from_reference(graft_from: str, graft_select: str | None) -> None:
    """Make sure the run grafts from `graft_from` under `graft_select`: starts it with them (every other
    setting from its env knob) when the program has not called configure; else the run it configured
    must already have them, since starting another would drop that run's own settings."""
    if _configured_graft is None:
        configure(graft_from=graft_from, graft_select=graft_select)
        return
    have_from, have_select = _configured_graft
    if have_from != graft_from or (graft_select is not None and graft_select != have_select):
        raise OrchlogError(
            f"graft_from={graft_from!r}: this run was started by orchlog.configure(graft_from={have_from!r}, "
            f"graft_select={have_select!r}); give graft_from and graft_select to configure, and graft=True here"
        )


def _checked(settings: dict[str, Any]) -> dict[str, Any]:
    """The settings given, checked against their knobs (`all` as -1); OrchlogError names the first bad one."""
    known = {k.setting: k for k in schema_gen.KNOBS}
    for name, value in settings.items():
        if name not in known:  # what Python says of any unknown keyword
            raise TypeError(f"configure() got an unexpected keyword argument {name!r} (settings: {', '.join(known)})")
        if value is None:
            continue
        why = knobs.check(known[name], value)
        if why is None and known[name].type == "selector":
            try:
                _selector.parse(value)
            except _selector.SelectorError as exc:
                why = str(exc)
        if why is not None:
            raise OrchlogError(f"{name}={value!r}: {why}")
        if value == "all" and known[name].type == "count_or_all":
            settings[name] = knobs.ALL_VALUES
    return settings


def _start_parquet(given: Mapping[str, Any], config: Mapping[str, Scalar] | None) -> bool:
    global _parquet
    # pyarrow costs a third of a second to import: only for a run that writes Parquet.
    from orchlog.emit import parquet_run

    settings, warnings = parquet_run.resolve(given, config)
    _parquet = parquet_run.start(settings, warnings)
    return _parquet is not None


def _current_parquet() -> parquet_run.ParquetRun | None:
    """The Parquet run this process writes: in a child forked from the process that started it, the child's
    own (a {pid} path) or none (parquet_run.after_fork)."""
    global _parquet
    parquet = _parquet
    if parquet is not None and parquet.pid != os.getpid():
        from orchlog.emit import parquet_run  # loaded already: this run writes Parquet

        parquet = _parquet = parquet_run.after_fork(parquet)
    return parquet


def _close_parquet() -> None:
    global _parquet
    parquet, _parquet = _parquet, None
    if parquet is not None and parquet.pid == os.getpid():  # a forked child's is its parent's: left alone
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
    parquet = _current_parquet()
    if parquet is not None:
        return parquet.flush()
    return bool(_native.flush())


def close() -> None:
    """End the run and close its files; logging stays off until `configure`."""
    _close_parquet()
    _native.close()
    _note_state()


@record(frozen=True)
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
    parquet = _current_parquet()
    if parquet is not None:
        return EmitterStats(
            enabled=parquet.on, records=parquet.records, errors=errors, path=parquet.settings.path, binary_path=None
        )
    return EmitterStats(**{**native, "errors": errors})
