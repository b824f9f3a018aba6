"""A graft reference that is a FIFO, claims gigabytes, is the run's own log file or predates checksums: every
emitter (C++, Rust, Python through the C++ core) refuses it with one warning, at once, in bounded memory, and
leaves both the engine's tensors and the file alone.

The harnesses are tests/fuzz/graft_corpus.py's (plain builds here: peak memory is measured per process).
"""

from __future__ import annotations

import os
import re
import subprocess
import time

import msgpack
import numpy as np
import pytest

from tests.cargo import rust_example
from tests.fuzz import graft_corpus
from tests.native import build

LANGUAGES = ["cpp", "rust", "python"]
# A graft holds its record's tensor bytes (which must equal the engine tensor's size), a 64 KiB read
# buffer and at most 64 KiB per text: the harness's peak memory on a hostile reference may exceed
# its peak on the sound one by this much at most.
MEMORY_MARGIN = 16 << 20


def _command(language: str) -> list[str]:
    if language == "cpp":
        return [str(build.program("graft_mutants.cpp"))]
    if language == "rust":
        return [str(rust_example("graft_mutants"))]
    return graft_corpus.python_harness()


def _run(language: str, plan, references, work, env=None, timeout=60) -> tuple[list[str], str, int, float]:
    """(lines, stderr, peak resident bytes, seconds) of one harness run; a run past `timeout` is a hang."""
    plan_file, list_file = work / "plan.tsv", work / "references.txt"
    plan_file.write_text("".join(c.line() + "\n" for c in plan), encoding="utf-8")
    list_file.write_text("".join(f"{p}\n" for p in references), encoding="utf-8")
    out_file, err_file = work / "harness.out", work / "harness.err"
    command = _command(language)  # built (a C++ harness after a header changed) before the clock starts
    started = time.monotonic()
    with open(out_file, "wb") as out, open(err_file, "wb") as err:
        proc = subprocess.Popen(
            [*command, str(plan_file), str(list_file)],
            stdout=out,
            stderr=err,
            env={**os.environ, **(env or {})},
        )
    # Reaped here rather than by Popen, for the process's own resource usage (its peak memory).
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - started > timeout:
            proc.kill()
            os.wait4(proc.pid, 0)
            pytest.fail(f"{language}: no answer in {timeout} s (a hang)")
        time.sleep(0.02)
    proc.returncode = os.waitstatus_to_exitcode(status)
    stderr = err_file.read_text(encoding="utf-8", errors="replace")
    assert proc.returncode == 0, stderr
    # The harness's own peak: a forked child's getrusage counts the pages of the process it was forked from.
    peak = re.search(r"graft_mutants: peak VmHWM:\s+(\d+) kB", stderr)
    rss = int(peak.group(1)) * 1024 if peak else usage.ru_maxrss * 1024
    return out_file.read_text(encoding="utf-8").splitlines(), stderr, rss, time.monotonic() - started


@pytest.fixture(scope="module")
def sound(tmp_path_factory):
    work = tmp_path_factory.mktemp("sound")
    reference = work / "reference.bin"
    return reference, graft_corpus.write_reference(reference)


def _untouched(line: str, plan) -> bool:
    parsed = graft_corpus.parse(line)
    if parsed is None:  # "off": the emitter did not graft at all
        return False
    flags, tensors = parsed
    return flags == "0" * len(plan) and all(
        t == bytes([graft_corpus.SENTINEL]) * c.nbytes for t, c in zip(tensors, plan)
    )


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_fifo_is_refused_at_once_without_blocking(language, sound, tmp_path):
    _, plan = sound
    fifo = tmp_path / "reference.fifo"
    os.mkfifo(fifo)
    lines, err, _, seconds = _run(language, plan, [fifo], tmp_path, timeout=30)
    assert _untouched(lines[0], plan)
    assert f"the graft reference '{fifo}' is not a regular file" in err
    assert seconds < 20


def _sparse(path, head: bytes, size: int):
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(size)
    return path


def _claims(sound_reference, tmp_path, claim: int) -> dict[str, object]:
    """Sparse references of about `claim` bytes whose first record claims a text, a tensor or an array that long."""
    header, record = graft_corpus.frames(sound_reference.read_bytes())[:2]
    size = len(header) + len(record) + claim
    name_at = record.index(b"\xaacheckpoint") + len(b"\xaacheckpoint")
    data_at = record.index(b"\xa4data") + len(b"\xa4data")
    values_at = record.index(b"\xa6values") + len(b"\xa6values")
    length = (claim - 1).to_bytes(4, "big")
    return {
        "text": _sparse(tmp_path / "text.bin", header + record[:name_at] + b"\xdb" + length, size),
        "tensor": _sparse(tmp_path / "tensor.bin", header + record[:data_at] + b"\xc6" + length, size),
        "array": _sparse(tmp_path / "array.bin", header + record[:values_at] + b"\xdd" + length, size),
    }


def _memory_and_time(language, sound, tmp_path, claim: int):
    reference, plan = sound
    _, _, base, _ = _run(language, plan, [reference], tmp_path)
    for what, path in _claims(reference, tmp_path, claim).items():
        lines, err, peak, seconds = _run(language, plan, [path], tmp_path, timeout=900)
        assert _untouched(lines[0], plan), what
        assert f"the graft reference '{path}' is unusable from byte" in err, (what, err)
        assert peak - base < MEMORY_MARGIN, f"{what}: {peak / 2**20:.0f} MiB against {base / 2**20:.0f} MiB"
        yield what, seconds


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_reference_claiming_64_mib_costs_no_more_memory_than_a_sound_one(language, sound, tmp_path):
    for what, seconds in _memory_and_time(language, sound, tmp_path, claim=64 << 20):
        if what == "text":
            assert seconds < 10, "a text past the limit is refused before anything is read"


@pytest.mark.slow
@pytest.mark.parametrize("language", LANGUAGES)
def test_a_reference_claiming_three_gigabytes_costs_no_more_memory_than_a_sound_one(language, sound, tmp_path):
    list(_memory_and_time(language, sound, tmp_path, claim=3 << 30))


def _long_values(count: int) -> bytes:
    """An array32 of `count` items: runs of one-byte values (fixints, nil, false, true) of every length up to
    a few thousand, each broken by a longer value (an int, a float, a text, a nested array)."""
    rng = np.random.default_rng(31)
    one_byte = np.array([0x00, 0x01, 0x7F, 0xE0, 0xFF, 0xC0, 0xC2, 0xC3], dtype=np.uint8)
    longer = [b"\xcc\x80", b"\xca\x3f\x80\x00\x00", b"\xa3abc", b"\x92\x01\xc3", b"\xcd\x01\x00", b"\xd0\x80"]
    body, items = [], 0
    while items < count:
        run = min(int(rng.integers(0, 4000)), count - items)
        body.append(rng.choice(one_byte, run).tobytes())
        items += run
        if items < count:
            body.append(longer[int(rng.integers(len(longer)))])
            items += 1
    return b"\xdd" + count.to_bytes(4, "big") + b"".join(body)


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_record_whose_skipped_values_are_a_long_array_of_small_values_is_read_past_exactly(language, sound, tmp_path):
    """Each record's leading `values` (which a graft skips) replaced by 200,000 items across the readers' 64 KiB
    buffers, the frames resealed: the readers pass runs of one-byte values a buffer at a time, and must land
    on the frame's next key, so the graft is the sound reference's, call for call."""
    reference, plan = sound
    parts = graft_corpus.frames(reference.read_bytes())
    records = []
    for frame in parts[1:]:
        at = frame.index(b"\xa6values") + len(b"\xa6values")
        unpacker = msgpack.Unpacker()
        unpacker.feed(frame[at:])
        unpacker.skip()
        records.append(graft_corpus.reseal(frame[:at] + _long_values(200_000) + frame[at + unpacker.tell() :]))
    long = tmp_path / "long.bin"
    long.write_bytes(b"".join([parts[0], *records]))
    want, _, _, _ = _run(language, plan, [reference], tmp_path)
    got, err, _, _ = _run(language, plan, [long], tmp_path)
    assert "unusable" not in err
    assert got == want


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("name", ["same path", "hard link"])
def test_a_reference_named_as_the_log_file_survives_and_the_run_does_not_log(language, name, sound, tmp_path):
    reference, plan = sound
    copy = tmp_path / "reference.bin"
    copy.write_bytes(reference.read_bytes())
    log = copy if name == "same path" else tmp_path / "linked.bin"
    if log != copy:
        os.link(copy, log)
    lines, err, _, _ = _run(language, plan, [copy], tmp_path, env={"GRAFT_MUTANTS_LOG": str(log)})
    assert copy.read_bytes() == reference.read_bytes()
    assert _untouched(lines[0], plan)
    assert [line for line in err.splitlines() if "ORCH_LOG_FILE" in line] == [
        f"orchlog: warning: ORCH_LOG_FILE names the graft reference ({log}): writing the run would empty it; "
        "logging is off and the file is left as it is"
    ]


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_schema_1_reference_is_refused_for_want_of_checksums(language, sound, tmp_path):
    reference, plan = sound
    old = tmp_path / "schema1.bin"
    old.write_bytes(b"".join(graft_corpus.forged_schema_1(graft_corpus.frames(reference.read_bytes()))))
    lines, err, _, _ = _run(language, plan, [old], tmp_path)
    assert _untouched(lines[0], plan)
    assert f"the graft reference '{old}' is schema 1: its frames carry no checksum" in err
