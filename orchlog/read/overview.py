"""What a trace holds: `orchlog show TRACE` as a value.

Counts are gathered batch by batch, so a long trace costs time, not memory.
"""

from __future__ import annotations

import collections
import dataclasses
from typing import Any

import numpy as np

from orchlog.read.batch import NONE
from orchlog.read.trace import Trace
from orchlog.records import record

# The JSON form's name and version (`orchlog show --format json`; schema/json/show.schema.json).
SHOW_VERSION = "orchlog-show/1"
LISTED = 40  # checkpoints printed before "... and N more"


def _span(values: set[int]) -> str:
    """{0,1,2,5} -> "0-2, 5"."""
    if not values:
        return "none"
    out: list[str] = []
    run: list[int] = []
    for v in sorted(values):
        if run and v == run[-1] + 1:
            run.append(v)
            continue
        if run:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [v]
    out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ", ".join(out)


@record
class TraceOverview:
    path: str
    format: str
    records: int
    with_data: int  # records whose whole tensor is at hand
    checkpoints: dict[str, int]  # name -> records, in order of first appearance
    layers: set[int]
    tokens: set[int]
    steps: set[int]
    ranks: set[int]
    dtypes: dict[str, int]
    headers: list[dict[str, Any]]
    problems: list[str]
    records_without_token: int = 0
    writing: list[tuple[str, int]] = dataclasses.field(default_factory=list)  # (file, pid): still being written

    def to_json(self) -> dict[str, Any]:
        return {
            "report": SHOW_VERSION,
            "path": self.path,
            "format": self.format,
            "records": self.records,
            "with_data": self.with_data,
            "checkpoints": self.checkpoints,
            "layers": sorted(self.layers),
            "tokens": sorted(self.tokens),
            "records_without_token": self.records_without_token,
            "steps": sorted(self.steps),
            "ranks": sorted(self.ranks),
            "dtypes": self.dtypes,
            "producers": [producer_text(h) for h in self.headers],
            "headers": self.headers,
            "problems": self.problems,
            "writing": [{"path": path, "pid": pid} for path, pid in self.writing],
        }

    def __str__(self) -> str:
        out = [f"{self.path}  [{self.format}]"]
        out += [f"  {note}" for note in _still_written(self.writing)]
        for h in self.headers[:4]:
            if isinstance(h.get("tool"), str):  # a dump of another tool, read as a trace (tool_common.tool_header)
                out.append(f"  tool: {h['tool']}, whose dump holds {h.get('holds', 'tensors')}")
                continue
            extra = ", ".join(f"{k} {h[k]}" for k in ("team", "model", "git_commit", "created") if h.get(k))
            out.append(f"  producer: {producer_text(h)}" + (f" ({extra})" if extra else ""))
        if len(self.headers) > 4:
            out.append(f"  ... and {len(self.headers) - 4} more headers")
        out.append(f"  records: {self.records} ({self.with_data} with the whole tensor)")
        without = f" (+{self.records_without_token} records without a token)" if self.records_without_token else ""
        out.append(f"  tokens: {_span(self.tokens)}{without}")
        out.append(f"  layers: {_span(self.layers)}")
        out.append(f"  steps: {_span(self.steps)}   ranks: {_span(self.ranks)}")
        out.append("  dtypes: " + (", ".join(f"{d} {n}" for d, n in self.dtypes.items()) or "none"))
        out.append(f"  checkpoints ({len(self.checkpoints)}):")
        for name, n in list(self.checkpoints.items())[:LISTED]:
            out.append(f"    {name}  x{n}")
        if len(self.checkpoints) > LISTED:
            out.append(f"    ... and {len(self.checkpoints) - LISTED} more")
        if self.problems:
            out.append(f"  problems while reading ({len(self.problems)}):")
            out += [f"    {p}" for p in self.problems[:LISTED]]
        return "\n".join(out) + "\n"


def _still_written(writing: list[tuple[str, int]]) -> list[str]:
    return [
        f"still being written: {path} (process {pid} holds its lock); shown is the part written so far"
        for path, pid in writing
    ]


def producer_text(h: dict[str, Any]) -> str:
    if isinstance(h.get("tool"), str):
        return f"{h['tool']} (another tool's dump, read by orchlog)"
    prod = h.get("producer")
    if isinstance(prod, dict):
        return f"{prod.get('name', '?')} {prod.get('version', '?')} ({prod.get('language', '?')})"
    return "unknown (no orchlog header)"


def overview(trace: Trace) -> TraceOverview:
    checkpoints: collections.Counter[str] = collections.Counter()
    dtypes: collections.Counter[str] = collections.Counter()
    layers, tokens, steps, ranks = set[int](), set[int](), set[int](), set[int]()
    records = with_data = no_token = 0
    for batch in trace.batches(tensors=False):  # what a trace holds is in its summaries
        records += len(batch)
        with_data += int(batch.has_data().sum())
        for name, n in batch.checkpoint.counts():  # a Counter keeps names in order of first appearance
            assert name is not None, "checkpoint is a required column"
            checkpoints[name] += n
        dtypes.update(d or "unknown" for d in batch.dtype.values())
        for target, col in ((layers, batch.layer), (tokens, batch.token_idx), (steps, batch.step), (ranks, batch.rank)):
            target.update(int(v) for v in np.unique(col) if v != NONE)
        no_token += int((batch.token_idx == NONE).sum())
    return TraceOverview(
        trace.path,
        trace.format,
        records,
        with_data,
        dict(checkpoints),
        layers,
        tokens,
        steps,
        ranks,
        dict(dtypes),
        list(trace.headers),
        [str(d) for d in trace.diagnostics],
        no_token,
        trace.writing,
    )
