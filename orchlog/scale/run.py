"""A compare in parts: plan, walk every part (here, in other processes, or on a Ray cluster), merge, finish."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from orchlog.compare import CompareOptions, CompareReport, PartialReport, alignment_key, finish, walk
from orchlog.compare.grading.partial import merge_all
from orchlog.errors import OrchlogError
from orchlog.read.paths import open_trace
from orchlog.scale.part_trace import PartTrace
from orchlog.scale.plan import PartSpec, plan

# Walks the parts (PartSpecs, with the options and the key settled for the whole traces), in any order.
Runner = Callable[[Sequence[PartSpec], str, str, CompareOptions, tuple[str, ...]], list[PartialReport]]


def walk_part(spec: PartSpec, a: str, b: str, opts: CompareOptions, key: tuple[str, ...]) -> PartialReport:
    """One part's walk, ready to leave the process."""
    shift_a, shift_b = max(-opts.token_offset, 0), max(opts.token_offset, 0)  # as the walk's sides take them
    return walk(
        PartTrace(a, spec.files_a, spec.ranks, spec.tokens, shift_a),
        PartTrace(b, spec.files_b, spec.ranks, spec.tokens, shift_b),
        opts,
        key=key,
    ).shippable()


def local_runner() -> Runner:
    """Every part in this process, one after the other (tests; the merge's reference)."""

    def run(
        specs: Sequence[PartSpec], a: str, b: str, opts: CompareOptions, key: tuple[str, ...]
    ) -> list[PartialReport]:
        return [walk_part(s, a, b, opts, key) for s in specs]

    return run


def compare_partitioned(a: str, b: str, options: CompareOptions | None, runner: Runner, parts: int) -> CompareReport:
    """The report `orchlog.compare.compare(a, b, options)` writes, from `parts` parts walked by `runner`."""
    opts = options or CompareOptions()
    if opts.dump_raw:
        raise OrchlogError("--dump-raw needs the tensors in this process: compare without --executor")
    trace_a, trace_b = open_trace(a), open_trace(b)
    strays = (list(trace_a.diagnostics), list(trace_b.diagnostics))
    key = alignment_key(trace_a, trace_b, opts)
    specs = plan(str(a), str(b), key, opts, parts)
    merged = merge_all(runner(specs, str(a), str(b), opts, key))
    if any(s.ranks is not None for s in specs) and any(side.sharded for side in merged.sides):
        # Records that say they are tensor-parallel pieces are gathered across ranks: walk again with the
        # ranks together (token ranges still apart: the pieces of one tensor share its token).
        specs = plan(str(a), str(b), key, opts, parts, by_rank=False)
        merged = merge_all(runner(specs, str(a), str(b), opts, key))
    for side in merged.sides:
        for tally in side.files.values():
            if tally.kept != tally.rows:
                raise OrchlogError(
                    f"{tally.path}: holds records of ranks its path or first records did not show "
                    f"({tally.rows - tally.kept} of {tally.rows} taken by no part); compare it without --executor"
                )
    return finish(merged, trace_a, trace_b, opts, strays)
