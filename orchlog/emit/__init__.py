"""The writing side of the Python package: `orchlog.log` and `orchlog.configure`.

Modules, one job each: api (log, configure, flush, close, stats; records
are written by the C++ core, `orchlog._native`), parquet_run
(configure(format="parquet")), knobs (the ORCH_LOG_* env knobs as every
emitter parses them), selector (ORCH_LOG_SELECT).
"""
