"""orchlog.guardrail: an equivalence guardrail over a matrix of paired runs (prefill vs decode, batch 1 vs 8, ...).

    orchlog guardrail artifacts/b3_67          # summary.json, metrics/, EQUIVALENCE_GUARDRAIL.md; exit 0/1/2

Modules, one job each: layout (run-directory patterns), config (the
matrix: config.json or the seed's defaults), sides (reading one side's
logits and metadata), problems and pairing (do the sides line up),
metrics (per-token and aggregated numbers), verdicts (thresholds, pair and
global verdicts), check (the run), result (the values), report (text,
Markdown, summary.json and the per-pair files).
"""

from orchlog.guardrail.check import GuardrailOptions, check_pair, guardrail
from orchlog.guardrail.result import GuardrailResult, PairResult
from orchlog.guardrail.verdicts import (
    EXPECTED_DRIFT,
    EXPECTED_DRIFT_ONLY,
    FAIL_EQUIV,
    FAIL_GUARDRAIL,
    INCOMPLETE,
    PAIRING_ERROR,
    PASS_EQUIV,
    PASS_GUARDRAIL,
    PASS_GUARDRAIL_LOCAL,
    Thresholds,
)

__all__ = [
    "guardrail",
    "check_pair",
    "GuardrailOptions",
    "GuardrailResult",
    "PairResult",
    "Thresholds",
    "PASS_EQUIV",
    "FAIL_EQUIV",
    "EXPECTED_DRIFT",
    "PAIRING_ERROR",
    "PASS_GUARDRAIL",
    "FAIL_GUARDRAIL",
    "INCOMPLETE",
    "PASS_GUARDRAIL_LOCAL",
    "EXPECTED_DRIFT_ONLY",
]
