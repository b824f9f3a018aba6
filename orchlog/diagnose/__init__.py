"""orchlog.diagnose: from where two runs part to why: the bug's signature, and whether it started there.

    from orchlog.diagnose import Case, Pair, Side, Where, find_signatures
    findings = find_signatures(Case(Pair(Where("attn_norm", 0), Side.of(ref), Side.of(ours))))

Modules, one job each: case (what a diagnosis looks at), finding (what it
says), stats (the fits' shared statistics), signatures/ (the catalogue, one
function per kind), catalogue (run them all), calibration (their measured
error rates), locality (introduced here or inherited), growth (accumulation
or a jump across layers), neighbours (the records around a divergence, read
back from the traces), report (the diagnosis as a value), render (text,
Markdown and HTML). docs/diagnose.md documents the kinds.
"""

from __future__ import annotations

from orchlog.diagnose.case import Case, Pair, Reference, Side, Where
from orchlog.diagnose.catalogue import find_signatures
from orchlog.diagnose.finding import KINDS, Finding

__all__ = ["KINDS", "Case", "Finding", "Pair", "Reference", "Side", "Where", "find_signatures"]
