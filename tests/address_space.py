"""Cap a process's memory so that an allocation sized from a damaged count fails instead of taking the machine's.

    from tests.address_space import cap
    cap(1536 << 20)

RLIMIT_AS caps the address space. Under AddressSanitizer (scripts/test.sh's asan-python stage) it
cannot: the sanitizer's shadow memory alone reserves terabytes of address space, so the process would
not even start its allocator. There ASAN_OPTIONS' max_allocation_size_mb bounds each allocation
instead (one past it is a sanitizer report, which fails the stage), and it must be set, at most the cap.
"""

from __future__ import annotations

import os
import resource


def cap(limit: int) -> None:
    """Allocations sized past `limit` bytes fail: RLIMIT_AS, or under AddressSanitizer its own bound."""
    if not _under_address_sanitizer():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        return
    options = dict(item.split("=", 1) for item in os.environ.get("ASAN_OPTIONS", "").split(":") if "=" in item)
    bound = options.get("max_allocation_size_mb")
    if bound is None or not bound.isdigit() or int(bound) << 20 > limit:
        raise RuntimeError(
            f"under AddressSanitizer, ASAN_OPTIONS must set max_allocation_size_mb to at most {limit >> 20} "
            f"(RLIMIT_AS cannot be used there); it is {bound!r}"
        )


def _under_address_sanitizer() -> bool:
    """Whether the ASan runtime is mapped into this process (preloaded into an uninstrumented Python)."""
    with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
        return any("libasan" in line or "clang_rt.asan" in line for line in maps)
