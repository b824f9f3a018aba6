"""JSONL summaries: records/s comparing two N-record traces, against what a first script would do.

The baseline is the script the seed spec's authors were about to write:
read both files line by line in step, `json.loads` each line, and loop
over the leading values in Python for max_abs, mean_abs and max_rel. It
is given the best case for it (both files in the same order, no key
matching, no report). orchlog runs the whole `compare`: alignment by key,
every metric, grading, first divergence, report. Both run in fresh
processes so that each one's peak RSS is its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.compare_measure import in_child
from benchmarks.compare_traces import write_jsonl_pair

BASELINE = """
import json
pairs = 0
with open(%(a)r) as fa, open(%(b)r) as fb:
    for la, lb in zip(fa, fb):
        ra, rb = json.loads(la), json.loads(lb)
        if "checkpoint" not in ra:
            continue
        max_abs = total = max_rel = 0.0
        for x, y in zip(ra["values"], rb["values"]):
            x, y = float(x), float(y)
            d = abs(x - y)
            max_abs = max(max_abs, d)
            total += d
            max_rel = max(max_rel, d / max(abs(x), 1e-8))
        pairs += 1
result = pairs
"""

ORCHLOG = """
from orchlog.compare import CompareOptions, compare
# The walk alone: the diagnosis of the first divergence is benchmarks/diagnose.py's.
report = compare(%(a)r, %(b)r, CompareOptions(diagnose=False))
result = report.findings.pairs
"""


def run(work: Path, records: int, repeat: int) -> dict[str, Any]:
    a, b = work / f"jsonl_{records}_a.jsonl", work / f"jsonl_{records}_b.jsonl"
    if not (a.exists() and b.exists()):
        write_jsonl_pair(a, b, records)
    paths = {"a": str(a), "b": str(b)}
    ours = in_child(ORCHLOG % paths, repeat)
    base = in_child(BASELINE % paths, repeat)
    assert ours["result"] == base["result"] == records, (ours["result"], base["result"])
    size = a.stat().st_size + b.stat().st_size
    return {
        "records": records,
        "trace_bytes": size,
        "orchlog_records_per_s": 2 * records / ours["seconds"],
        "baseline_records_per_s": 2 * records / base["seconds"],
        "orchlog_s": ours["seconds"],
        "baseline_s": base["seconds"],
        "speedup": base["seconds"] / ours["seconds"],
        "orchlog_cpu_s": ours["cpu_seconds"],
        "baseline_cpu_s": base["cpu_seconds"],
        "cpu_ratio": base["cpu_seconds"] / ours["cpu_seconds"],
        "orchlog_peak_rss": ours["peak_rss"],
        "baseline_peak_rss": base["peak_rss"],
    }
