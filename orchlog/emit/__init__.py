"""The writing side of the Python package: `orchlog.log` and `orchlog.configure`.

Modules, one job each: api (log, configure, flush, close, stats; records
are written by the C++ core, `orchlog._native`), parquet_run
(configure(format="parquet")), knobs (the run's settings: the generated knob
table walked by one rule per knob type, as every emitter parses it),
selector (ORCH_LOG_SELECT). The key parts and settings they take by name
are the schema's (orchlog/schema_gen.py).
"""
