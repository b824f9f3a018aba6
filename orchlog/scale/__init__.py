"""orchlog.scale: one compare split into parts that run apart (other processes, other machines) and merge.

    from orchlog.scale import compare_partitioned, local_runner
    report = compare_partitioned("ref/", "ours/", CompareOptions(), local_runner(), parts=4)

Modules, one job each: plan (which files and ranks each part takes, found
from the files themselves), part_trace (a trace that reads only a part's
files and records, numbering places per file), run (walk the parts, check
that every record was taken once, merge, finish), ray_runner (the parts as
Ray tasks, each on a node that holds its files). The merge itself is
orchlog/compare/grading/partial.py; nothing else knows a compare ran in parts.
"""

from __future__ import annotations

from orchlog.scale.run import compare_partitioned, local_runner, walk_part

__all__ = ["compare_partitioned", "local_runner", "walk_part"]
