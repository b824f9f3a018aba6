"""kernels.map_window: a read-only mapping of a file's bytes that is unmapped, off the caller's thread, once
nothing refers to it; in a forked child, by the child itself."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import numpy as np
import pytest

from orchlog import kernels
from tests.forked import exit_code

if kernels.NATIVE:
    from orchlog import _kernels

pytestmark = pytest.mark.skipif(not kernels.NATIVE, reason="the native kernels are not built")


def _mappings_of(path: Path) -> int:
    """How many of this process's mappings are of `path` (/proc/self/maps)."""
    return sum(line.endswith(" " + str(path)) for line in Path("/proc/self/maps").read_text().splitlines())


@pytest.fixture
def data_file(tmp_path: Path) -> tuple[Path, bytes]:
    data = np.random.default_rng(0).integers(0, 256, 3 << 20, dtype=np.uint8).tobytes()
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    return path, data


def test_a_window_holds_the_files_bytes_read_only_at_any_offset(data_file):
    path, data = data_file
    with path.open("rb") as f:
        for offset, length in ((0, 1), (1, 4095), (4095, 2), (12345, 1 << 20), (len(data) - 7, 7)):
            window = kernels.map_window(f.fileno(), offset, length)
            assert window.dtype == np.uint8 and window.shape == (length,)
            assert window.tobytes() == data[offset : offset + length]
            assert not window.flags.writeable
            with pytest.raises(ValueError):
                window[0] = 1


def test_a_window_is_unmapped_once_nothing_refers_to_it(data_file):
    path, _ = data_file
    with path.open("rb") as f:
        window = kernels.map_window(f.fileno(), 100, 2 << 20)
        view = window.data[10:20]
        del window
        _kernels.unmapped()
        assert _mappings_of(path) == 1  # the view keeps it
        del view
        gc.collect()
        _kernels.unmapped()
        assert _mappings_of(path) == 0


def test_many_windows_dropped_at_once_are_all_unmapped(data_file):
    """More than the queue holds: the rest are unmapped by the thread that drops them."""
    path, data = data_file
    with path.open("rb") as f:
        windows = [kernels.map_window(f.fileno(), i, 4096) for i in range(600)]
        assert _mappings_of(path) == 600
        assert all(w[0] == data[i] for i, w in enumerate(windows))
        del windows
        _kernels.unmapped()
        assert _mappings_of(path) == 0


def test_at_most_72_mib_of_dropped_windows_wait_for_the_unmapping_thread(data_file):
    """While the thread is held (as a walk that keeps both cores busy holds it off), windows dropped wait
    only up to 72 MiB; the thread that drops one past that unmaps it itself."""
    path, _ = data_file
    size = path.stat().st_size  # 3 MiB
    with path.open("rb") as f:
        windows = [kernels.map_window(f.fileno(), 0, size) for _ in range(40)]  # 120 MiB
        _kernels.hold_unmapping(True)
        try:
            del windows
            assert _mappings_of(path) == 72 // 3  # the windows that fit under the bound wait
        finally:
            _kernels.hold_unmapping(False)
        _kernels.unmapped()
        assert _mappings_of(path) == 0


def test_what_cannot_be_mapped_raises_what_the_callers_catch(tmp_path, data_file):
    path, _ = data_file
    with path.open("rb") as f:
        with pytest.raises(ValueError):
            kernels.map_window(f.fileno(), 0, 0)
        with pytest.raises(ValueError):
            kernels.map_window(f.fileno(), -1, 10)
    with pytest.raises(OSError):
        kernels.map_window(-1, 0, 10)
    (tmp_path / "d").mkdir()
    fd = os.open(tmp_path / "d", os.O_RDONLY)
    try:
        with pytest.raises(OSError):
            kernels.map_window(fd, 0, 10)
    finally:
        os.close(fd)


def test_a_forked_child_unmaps_for_itself_and_the_parent_goes_on(data_file):
    path, data = data_file
    with path.open("rb") as f:
        first = kernels.map_window(f.fileno(), 0, 1 << 20)  # the unmapping thread exists before the fork
        del first
        kept = kernels.map_window(f.fileno(), 0, 1 << 20)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                window = kernels.map_window(f.fileno(), 5, 1 << 20)
                ok = window.tobytes() == data[5 : 5 + (1 << 20)]
                before = _mappings_of(path)
                del window
                _kernels.unmapped()  # no thread of its own: returns at once
                code = 0 if ok and _mappings_of(path) == before - 1 else 3
            finally:
                os._exit(code)
        assert exit_code(pid, "the forked child hung unmapping a window") == 0
        assert kept.tobytes() == data[: 1 << 20]
        del kept
        _kernels.unmapped()
        assert _mappings_of(path) == 0
