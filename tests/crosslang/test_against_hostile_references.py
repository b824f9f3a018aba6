"""ORCH_LOG_AGAINST's binary reference is held to a graft reference's checks by every emitter: a frame that fails
its checksum ends the index there (the records before it are compared, none after), a FIFO is refused at once
without blocking, and a reference that is the run's own log file is left as it is while the run logs nothing.

The reference and the run are tests/crosslang/test_against.py's (tensors.json against a copy with some
tensors scaled): a damaged reference must make each emitter write exactly what it writes against the same
reference cut before the damaged frame, which is not what it writes against the sound one.
"""

from __future__ import annotations

import os

import pytest

from tests.crosslang import producers
from tests.crosslang.reference import TENSORS, expected_files
from tests.crosslang.test_against import DOC, SCALED, reference_doc
from tests.fuzz import graft_corpus

KNOBS = {"ORCH_LOG_TEAM": "crosslang", "SOURCE_DATE_EPOCH": "1767323045"}
# The last scaled record, at the earliest token: against the sound reference it is written whole.
DAMAGED = next(i for i, t in enumerate(DOC["tensors"]) if t["checkpoint"] == "注意力")


def _reference(path) -> list[bytes]:
    """A full-mode binary reference of reference_doc() at `path`; its frames (the header first)."""
    files = expected_files(reference_doc(), {**KNOBS, "ORCH_LOG_FILE": str(path), "ORCH_LOG_MODE": "full"}, "python")
    path.write_bytes(files[path.name])
    return graft_corpus.frames(path.read_bytes())


def _run(producer, tmp_path, name: str, **knobs: str) -> producers.Run:
    out_dir = tmp_path / name
    out_dir.mkdir()
    settings = {"ORCH_LOG_FILE": str(out_dir / "trace.out"), "ORCH_LOG_MODE": "summary", **knobs}
    return producers.launch(producer, TENSORS, {**KNOBS, "ORCH_LOG_AGAINST_CONTEXT": "0", **settings}, out_dir)


def _against(run: producers.Run) -> list[str]:
    return [w for w in run.warnings if "ORCH_LOG_AGAINST reference" in w]


@pytest.mark.parametrize("producer", producers.PRODUCERS, ids=str)
def test_a_frame_failing_its_checksum_ends_the_index_where_it_lies(producer, tmp_path):
    sound = tmp_path / "sound.trace"
    frames = _reference(sound)
    assert DOC["tensors"][DAMAGED]["checkpoint"] in SCALED and len(frames) == len(DOC["tensors"]) + 1
    victim = frames[1 + DAMAGED]
    data_at = victim.index(b"\xa4data") + len(b"\xa4data")
    first_byte = data_at + {0xC4: 2, 0xC5: 3, 0xC6: 5}[victim[data_at]]
    damaged_frame = victim[:first_byte] + bytes([victim[first_byte] ^ 0x04]) + victim[first_byte + 1 :]
    damaged, cut = tmp_path / "damaged.trace", tmp_path / "cut.trace"
    damaged.write_bytes(b"".join(frames[: 1 + DAMAGED] + [damaged_frame] + frames[2 + DAMAGED :]))
    cut.write_bytes(b"".join(frames[: 1 + DAMAGED]))
    at = len(cut.read_bytes())

    against_damaged = _run(producer, tmp_path, "damaged", ORCH_LOG_AGAINST=str(damaged))
    against_cut = _run(producer, tmp_path, "cut", ORCH_LOG_AGAINST=str(cut))
    against_sound = _run(producer, tmp_path, "sound", ORCH_LOG_AGAINST=str(sound))

    assert against_damaged.files == against_cut.files
    assert against_damaged.files != against_sound.files  # the damaged record was not compared
    assert b'"full_reason":"against"' in against_damaged.files["trace.out"]  # the records before it were
    assert _against(against_damaged) == [
        f"orchlog: warning: the ORCH_LOG_AGAINST reference '{damaged}' is unusable from byte {at} on: it fails its "
        "checksum (CRC-32C) (records before it are used)"
    ]
    assert against_damaged.returncode == 1, "an unusable part of the reference is an error counted"
    assert _against(against_cut) == [] and against_cut.returncode == 0, against_cut.stderr


@pytest.mark.parametrize("producer", producers.PRODUCERS, ids=str)
def test_a_fifo_is_refused_at_once_and_the_run_logs_as_without_it(producer, tmp_path):
    fifo = tmp_path / "reference.fifo"
    os.mkfifo(fifo)
    with_fifo = _run(producer, tmp_path, "fifo", ORCH_LOG_AGAINST=str(fifo))  # a hang is launch()'s timeout
    without = _run(producer, tmp_path, "without")
    assert with_fifo.files == without.files
    assert _against(with_fifo) == [
        f"orchlog: warning: the ORCH_LOG_AGAINST reference '{fifo}' is not a regular file; records are written as "
        "without it"
    ]


@pytest.mark.parametrize("producer", producers.PRODUCERS, ids=str)
def test_a_reference_named_as_the_log_file_survives_and_the_run_does_not_log(producer, tmp_path):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    reference = out_dir / "trace.out"
    _reference(reference)
    before = reference.read_bytes()
    knobs = {**KNOBS, "ORCH_LOG_FILE": str(reference), "ORCH_LOG_MODE": "full", "ORCH_LOG_AGAINST": str(reference)}
    run = producers.launch(producer, TENSORS, knobs, out_dir)
    assert run.files == {"trace.out": before}
    assert [w for w in run.warnings if "ORCH_LOG_FILE" in w] == [
        f"orchlog: warning: ORCH_LOG_FILE names the ORCH_LOG_AGAINST reference ({reference}): writing the run "
        "would empty it; logging is off and the file is left as it is"
    ]
    assert run.returncode == 1
