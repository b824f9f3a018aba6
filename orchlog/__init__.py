"""orchlog: find where two implementations of the same model stop agreeing.

The writing side (`log`, `configure`, `flush`, `close`, `stats`) lives in
orchlog.emit, the reading side (`open_trace`) in orchlog.read, the comparer
in orchlog.compare. They are imported on first use, so that `import orchlog`
(and every `orchlog --help`) costs next to nothing, and so that the code
generator (orchlog.codegen), which renders the tables they are built on,
never needs them.
"""

from __future__ import annotations

from orchlog.lazy import lazy

_PUBLIC = {
    # The versions come from the generated tables, imported (dataclasses, typing) only when asked for.
    "__version__": "orchlog.schema_gen:LIBRARY_VERSION",
    "SCHEMA_VERSION": "orchlog.schema_gen:SCHEMA_VERSION",
    **dict.fromkeys(("close", "configure", "flush", "graft", "log", "stats"), "orchlog.emit.api"),
    "open_trace": "orchlog.read.paths",
}

__all__ = sorted(_PUBLIC)

__getattr__, __dir__ = lazy(__name__, _PUBLIC)
