"""Running the guardrail over an artifact directory: find the runs, check each pair, give the verdict.

    from orchlog.guardrail import guardrail
    result = guardrail("artifacts/2026-02-07/b3_67")
    if not result:
        print(result.first_fail.label)

Pairs are checked one at a time, each streamed a token row per side at a
time, so memory follows one pair's rows, not the matrix; with `jobs` (or a
Ray executor) several pairs at once, each in its own process, and the
verdicts are the same.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from orchlog.errors import OrchlogError
from orchlog.guardrail.config import Matrix, load_matrix
from orchlog.guardrail.layout import Run
from orchlog.guardrail.metrics import TokenMetrics, aggregate
from orchlog.guardrail.pairing import Pairing, metadata_errors
from orchlog.guardrail.problems import MALFORMED_FILE, PairingError
from orchlog.guardrail.result import GuardrailResult, PairResult, SideInfo
from orchlog.guardrail.sides import Side
from orchlog.guardrail.verdicts import breaches, global_verdict, pair_verdict
from orchlog.records import record
from orchlog.scale.ordered_map import ordered_map


@record
class GuardrailOptions:
    config: str | os.PathLike[str] | None = None  # read the matrix from here instead of DIR/config.json
    thresholds: dict[str, float | None] = dataclasses.field(default_factory=dict)  # overrides, e.g. from flags
    jobs: int = 1  # pairs checked at once, each in a worker process
    executor: tuple[str, str | None] = ("local", None)  # ("ray", ADDRESS or None): pairs as Ray tasks


def guardrail(
    directory: str | os.PathLike[str],
    options: GuardrailOptions | None = None,
    progress: Callable[[PairResult], None] | None = None,
) -> GuardrailResult:
    """Check every pair of an artifact directory (runs/..., optional config.json) and give the global verdict."""
    options = options or GuardrailOptions()
    root = Path(directory)
    if not root.is_dir():
        raise OrchlogError(f"{root} is not a directory" if root.exists() else f"{root} does not exist")
    matrix = load_matrix(root, None if options.config is None else Path(options.config))
    if options.thresholds:
        matrix = dataclasses.replace(
            matrix, thresholds=matrix.thresholds.overridden(options.thresholds, "command line")
        )
    runs, ignored = matrix.pattern.discover(root)
    if not runs and matrix.declared is None:
        raise OrchlogError(
            f"{root}: no run directories like {root / matrix.pattern.text}/"
            f"{{{','.join(matrix.sides)}}}/ (and no config.json declaring the matrix)"
        )
    planned, missing = _plan(matrix, runs)
    pairs = []
    items = [(root, matrix, run, declared) for run, declared in planned]
    for pair in ordered_map(check_pair, items, options.jobs, options.executor):
        pairs.append(pair)
        if progress is not None:
            progress(pair)
    verdict = global_verdict(((p.must_match, p.verdict) for p in pairs), len(missing), matrix.declared is not None)
    return GuardrailResult(verdict, str(root), matrix, pairs, missing, ignored)


def check_pair(root: Path, matrix: Matrix, run: Run, declared: bool = True) -> PairResult:
    """One pair's verdict. Whatever its files hold, the answer is a PairResult: input that nothing
    foresaw becomes this pair's MALFORMED_FILE pairing error, never the end of the whole matrix."""
    try:
        return _check_pair(root, matrix, run, declared)
    except Exception as exc:  # the net under the readers' own reporting, as Trace has for files
        error = PairingError(
            MALFORMED_FILE,
            f"{root / run.path}: the pair could not be checked ({type(exc).__name__}: {str(exc)[:200]})",
        )
        info_a, info_b = (SideInfo(name, None, None, None) for name in matrix.sides)
        return PairResult(
            run,
            declared,
            matrix.requires_match(run.values),
            pair_verdict(True, [], [error]),
            [],
            [],
            [error],
            (info_a, info_b),
            matrix.pattern.metrics_path(run.values),
        )


def _check_pair(root: Path, matrix: Matrix, run: Run, declared: bool) -> PairResult:
    run_dir = root / run.path
    a, b = (Side(name, run_dir / name) for name in matrix.sides)
    pairing = Pairing(a, b)
    tokens = sorted((TokenMetrics.of(row_a, row_b) for row_a, row_b in pairing), key=lambda t: t.token_idx)
    errors = (
        a.problems
        + b.problems
        + pairing.errors()
        + metadata_errors(matrix, run.values, a)
        + metadata_errors(matrix, run.values, b)
    )
    must_match = matrix.requires_match(run.values)
    broken = breaches(aggregate(tokens), matrix.thresholds)
    return PairResult(
        run,
        declared,
        must_match,
        pair_verdict(must_match, broken, errors),
        tokens,
        broken,
        errors,
        (_info(a), _info(b)),
        matrix.pattern.metrics_path(run.values),
    )


def _info(side: Side) -> SideInfo:
    return SideInfo(side.name, None if side.logits_path is None else str(side.logits_path), side.format, side.metadata)


def _plan(matrix: Matrix, runs: list[Run]) -> tuple[list[tuple[Run, bool]], list[Run]]:
    """The runs present in matrix order, each with whether config.json declares it, and the declared runs missing.

    Matrix order: axes in the order run_dirs names them, the outer first; values in the order config.json lists
    them, then undeclared values in natural order (numbers by value)."""
    declared = matrix.declared or {}

    def order(run: Run) -> tuple[Any, ...]:
        key = []
        for axis in matrix.axes:
            listed = declared.get(axis, ())
            v = run.values[axis]
            key.append((0, listed.index(v), 0, "") if v in listed else (1, 0, *_natural_key(v)))
        return tuple(key)

    present = {tuple(r.values.values()) for r in runs}
    planned = [(r, all(r.values[a] in declared.get(a, ()) for a in matrix.axes)) for r in sorted(runs, key=order)]
    missing = []
    if matrix.declared is not None:
        for combo in itertools.product(*(declared[a] for a in matrix.axes)):
            if combo not in present:
                values = dict(zip(matrix.axes, combo))
                missing.append(Run(values, matrix.pattern.path(values)))
    return planned, missing


def _natural_key(value: str) -> tuple[int, Any]:
    try:
        return 0, int(value)
    except ValueError:
        return 1, value
