"""A function over independent items, in parallel, results in the items' order: guardrail's pairs.

Each item's result is whole by itself (a pair's verdict), so the merge is
putting them back in order. `jobs` worker processes on this machine, or
Ray tasks (`executor` ("ray", ADDRESS or None)), one CPU each.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def ordered_map(
    fn: Callable[..., T],
    items: Sequence[tuple[Any, ...]],
    jobs: int = 1,
    executor: tuple[str, str | None] = ("local", None),
) -> Iterator[T]:
    """fn(*item) for every item, yielded in order as each becomes available."""
    if executor[0] == "ray":
        from orchlog.scale.ray_runner import connect  # Ray takes seconds to import: only when asked for

        ray = connect(executor[1])
        task = ray.remote(num_cpus=1, max_retries=1)(fn)
        futures = [task.remote(*item) for item in items]
        for future in futures:
            yield ray.get(future)
        return
    if jobs <= 1 or len(items) <= 1:
        for item in items:
            yield fn(*item)
        return
    # Fresh interpreters: a forked copy of a process with reader threads could inherit a held lock.
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield from pool.map(fn, *zip(*items))
