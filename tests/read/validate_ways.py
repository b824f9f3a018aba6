"""`orchlog validate` two ways, to hold the batch checks to the record-by-record ones."""

from __future__ import annotations

from orchlog import open_trace
from orchlog.read import validate as validating
from orchlog.read.trace import Trace


def both_ways(path, monkeypatch, verify_hashes=False) -> tuple[validating.ValidationReport, ...]:
    """(validate as it runs, validate with every record made and checked on its own)."""
    fast = validating.validate(open_trace(path), verify_hashes)
    with monkeypatch.context() as m:
        m.setattr(Trace, "runs", lambda self, tensors=False: iter(self))  # the check as it was
        slow = validating.validate(open_trace(path), verify_hashes)
    return fast, slow
