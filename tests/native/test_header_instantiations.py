"""The header-only logger compiles its sketch kernel once per element reader and instruction set, whatever the
size class of the tensor: every translation unit that logs compiles the kernels it instantiates, and a kernel
instantiated once per caller (one hook type per BLAKE3 strategy) tripled their number and added a third to
the compile time of every such TU (docs/cpp.md, "Compile time")."""

from __future__ import annotations

import collections
import re
import shutil
import subprocess

import pytest

from tests.native import host_processes

# The element readers sketch_kernel.inc's with_widen hands the kernel on a little-endian host: f32 and bf16
# as vectors, f64, f16 and the integers one element at a time.
ELEMENT_READERS = 5
KERNEL = re.compile(r"orchlog::detail::sketch::(portable|avx2|avx512)::run<true,")


@pytest.mark.skipif(shutil.which("nm") is None, reason="needs binutils' nm")
def test_a_program_that_logs_holds_one_sketch_kernel_per_element_reader_and_instruction_set():
    program = host_processes.cpp_host()[0]  # tests/native/programs/log_loop.cpp, built once for the suite
    symbols = subprocess.run(["nm", "-C", program], check=True, capture_output=True, text=True).stdout
    kernels: dict[str, set[str]] = collections.defaultdict(set)
    for line in symbols.splitlines():
        name = line.split(" ", 2)[-1]
        found = KERNEL.search(name)
        if found:
            kernels[found.group(1)].add(re.sub(r" \[clone [^]]*\]$", "", name))  # GCC's clones are one kernel
    counts = {isa: len(names) for isa, names in kernels.items()}
    assert set(counts) >= {"portable"}, counts  # the one path every build has
    assert all(1 <= n <= ELEMENT_READERS for n in counts.values()), counts
