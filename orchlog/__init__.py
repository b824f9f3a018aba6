"""orchlog: find where two implementations of the same model stop agreeing.

The writing side (`log`, `configure`, `flush`, `close`, `stats`) lives in
orchlog.emit, the reading side (`open_trace`) in orchlog.read, the comparer
in orchlog.compare.
"""

from orchlog.emit.api import close, configure, flush, log, stats
from orchlog.read.paths import open_trace
from orchlog.schema_gen import LIBRARY_VERSION as __version__
from orchlog.schema_gen import SCHEMA_VERSION

__all__ = ["SCHEMA_VERSION", "__version__", "close", "configure", "flush", "log", "open_trace", "stats"]
