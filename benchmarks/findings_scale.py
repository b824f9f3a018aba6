#!/usr/bin/env python3
"""Is the compare's bookkeeping linear in the trace? Time per record at N and at 4N records, many tokens.

    .venv/bin/python benchmarks/findings_scale.py --records 200000

Two JSONL summary traces with one layer per token (10 records a token, so
that N records make N/10 tokens: what grows with the trace is the number of
tokens the findings keep, the case where forgetting tokens used to cost the
whole table every round). For each size, orchlog's whole walk (no diagnosis)
and the plain `json.loads` pairing loop of benchmarks/compare_jsonl.py, each
in a fresh process. Reported: each one's time per record at 4N over its
time per record at N (1.0: linear), and orchlog's peak RSS at both sizes.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.compare_jsonl import BASELINE, ORCHLOG
from benchmarks.compare_measure import ROOT, in_child, machine, uptime
from benchmarks.compare_traces import write_jsonl_pair


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--records", type=int, default=200_000)
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--work", type=Path, default=ROOT / ".cache" / "bench")
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    out: dict[str, Any] = {"machine": machine(), "uptime_at_start": uptime()}
    for n in (args.records, 4 * args.records):
        a, b = args.work / f"tokens_{n}_a.jsonl", args.work / f"tokens_{n}_b.jsonl"
        if not (a.exists() and b.exists()):
            write_jsonl_pair(a, b, n, layers=1, diverge_at=2.0)  # no divergence: no token is ever cut off
        paths = {"a": str(a), "b": str(b)}
        ours, base = in_child(ORCHLOG % paths, args.repeat), in_child(BASELINE % paths, args.repeat)
        out[str(n)] = {
            "orchlog_s": ours["seconds"],
            "baseline_s": base["seconds"],
            "orchlog_peak_rss": ours["peak_rss"],
        }
    small, large = out[str(args.records)], out[str(4 * args.records)]
    out["orchlog_per_record_4n_over_n"] = large["orchlog_s"] / (4 * small["orchlog_s"])
    out["baseline_per_record_4n_over_n"] = large["baseline_s"] / (4 * small["baseline_s"])
    out["uptime_at_end"] = uptime()
    print(json.dumps(out, indent=1))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
