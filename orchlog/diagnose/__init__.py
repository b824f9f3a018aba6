"""orchlog.diagnose: from where two runs part to why: the bug's signature, and whether it started there.

    from orchlog.diagnose import Case, Pair, Side, Where, find_signatures
    findings = find_signatures(Case(Pair(Where("attn_norm", 0), Side.of(ref), Side.of(ours))))

Modules, one job each: case (what a diagnosis looks at), finding (what it
says), stats (the fits' shared statistics), signatures/ (the catalogue, one
function per kind), catalogue (run them all), calibration (their measured
error rates), locality (introduced here or inherited), growth (accumulation
or a jump across layers), extent, keeper and neighbours (the records around
a divergence: kept while the compare walks, or read back from the traces),
assemble (those records as a case), run (the compare's hook), diagnosis (the
diagnosis as a value; orchlog/report/diagnosis.py renders it).
docs/diagnose.md documents the kinds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchlog.lazy import lazy

if TYPE_CHECKING:
    from orchlog.diagnose.case import Case as Case
    from orchlog.diagnose.case import Pair as Pair
    from orchlog.diagnose.case import Reference as Reference
    from orchlog.diagnose.case import Side as Side
    from orchlog.diagnose.case import Where as Where
    from orchlog.diagnose.catalogue import find_signatures as find_signatures
    from orchlog.diagnose.finding import KINDS as KINDS
    from orchlog.diagnose.finding import Finding as Finding

# Imported on first use, so that the compare's walk can keep records for the diagnosis (keeper.py) without
# loading the catalogue.
_LAZY = {
    **dict.fromkeys(("Case", "Pair", "Reference", "Side", "Where"), "orchlog.diagnose.case"),
    **dict.fromkeys(("KINDS", "Finding"), "orchlog.diagnose.finding"),
    "find_signatures": "orchlog.diagnose.catalogue",
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy(__name__, _LAZY)
