"""The reading side: open any trace, file or directory, and walk its records.

    trace = orchlog.open_trace("ours.bin")
    for batch in trace.batches():      # RecordBatch: many records as columns
        ...

Modules, one job each: paths (open_trace: files and directories, format
found by content), formats/ (one reader per encoding, legacy ones
included), trace (TraceRecord, Trace, Diagnostic), batch (RecordBatch),
prefetch (read ahead on a worker thread), validate (`orchlog validate`),
overview (`orchlog show`).
"""
