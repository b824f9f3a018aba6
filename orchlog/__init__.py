"""orchlog: find where two implementations of the same model stop agreeing.

The writing side (`log`, `configure`, `flush`, `close`, `stats`) lives in
orchlog.emit, the reading side (`open_trace`) in orchlog.read, the comparer
in orchlog.compare. They are imported on first use, so that `import orchlog`
(and every `orchlog --help`) costs next to nothing, and so that the code
generator (orchlog.codegen), which renders the tables they are built on,
never needs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchlog.lazy import lazy

if TYPE_CHECKING:  # what type checkers see of the names loaded on first use (else every one is Any)
    from orchlog.emit.api import close as close
    from orchlog.emit.api import configure as configure
    from orchlog.emit.api import flush as flush
    from orchlog.emit.api import graft as graft
    from orchlog.emit.api import log as log
    from orchlog.emit.api import stats as stats
    from orchlog.read.paths import open_trace as open_trace
    from orchlog.schema_gen import LIBRARY_VERSION
    from orchlog.schema_gen import SCHEMA_VERSION as SCHEMA_VERSION

    __version__ = LIBRARY_VERSION

_PUBLIC = {
    # The versions come from the generated tables, imported (dataclasses, typing) only when asked for.
    "__version__": "orchlog.schema_gen:LIBRARY_VERSION",
    "SCHEMA_VERSION": "orchlog.schema_gen:SCHEMA_VERSION",
    **dict.fromkeys(("close", "configure", "flush", "graft", "log", "stats"), "orchlog.emit.api"),
    "open_trace": "orchlog.read.paths",
}

__all__ = sorted(_PUBLIC)

__getattr__, __dir__ = lazy(__name__, _PUBLIC)
