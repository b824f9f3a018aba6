"""orchlog: find where two implementations of the same model stop agreeing."""
from orchlog.emitter import configure, log
from orchlog.reader import open_trace
from orchlog.schema_gen import LIBRARY_VERSION as __version__
from orchlog.schema_gen import SCHEMA_VERSION

__all__ = ["SCHEMA_VERSION", "__version__", "configure", "log", "open_trace"]
