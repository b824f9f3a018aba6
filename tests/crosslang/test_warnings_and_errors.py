"""Every emitter handles a bad knob the same way: one `orchlog: warning:` line, one error counted, the same files.

A malformed knob falls back to its default, an invalid selector turns
logging off (no file at all), a malformed SOURCE_DATE_EPOCH makes `created`
the current time; each is warned about once and counted, so every producer
exits 1 (FORMAT.md, "Header and env").
"""

from __future__ import annotations

import calendar
import json
import time

import pytest

from tests.crosslang import producers
from tests.crosslang.reference import TENSORS, expected_files
from tests.crosslang.test_byte_identical import first_difference

PINNED = "1767323045"
DOC = json.loads(TENSORS.read_text(encoding="utf-8"))


def _knobs(tmp_path, mode: str, **extra: str) -> dict[str, str]:
    return {
        "ORCH_LOG_FILE": str(tmp_path / "trace.out"),
        "ORCH_LOG_MODE": mode,
        "ORCH_LOG_TEAM": "crosslang",
        "SOURCE_DATE_EPOCH": PINNED,
        **extra,
    }


def _assert_one_counted_warning(done: producers.Run, producer, *mentions: str) -> None:
    assert done.returncode == 1, f"{producer}: the warning was not counted as an error (exit {done.returncode})"
    assert len(done.warnings) == 1, f"{producer} wrote:\n{done.stderr}"
    assert done.warnings[0].startswith("orchlog: warning: ")
    assert all(m in done.warnings[0] for m in mentions), done.warnings[0]


@pytest.mark.parametrize(
    "knob, raw",
    [
        ("ORCH_LOG_VALUES", "lots"),
        ("ORCH_LOG_VALUES", "\u0663"),
        ("ORCH_LOG_RANK", "+1"),
        ("ORCH_LOG_MODE", "full\u3000"),
    ],
)
@pytest.mark.parametrize("producer", producers.PRODUCERS, ids=str)
def test_a_malformed_knob_warns_once_is_counted_and_falls_back_to_its_default(producer, knob, raw, tmp_path):
    knobs = _knobs(tmp_path, "both", **{knob: raw})
    done = producers.launch(producer, TENSORS, knobs, tmp_path)
    _assert_one_counted_warning(done, producer, knob)
    expected = expected_files(DOC, knobs, producer.language)  # the reference falls back the same way
    assert sorted(done.files) == sorted(expected)
    for name, want in expected.items():
        assert done.files[name] == want, f"{producer} {name}: {first_difference(done.files[name], want)}"


@pytest.mark.parametrize("select", ["layer=\u0663", "token=5\u00a0", "layer=3\n", "colour=red"])
@pytest.mark.parametrize("producer", producers.PRODUCERS, ids=str)
def test_an_invalid_selector_warns_once_is_counted_and_writes_no_file(producer, select, tmp_path):
    done = producers.launch(producer, TENSORS, _knobs(tmp_path, "both", ORCH_LOG_SELECT=select), tmp_path)
    _assert_one_counted_warning(done, producer)
    assert "\n" not in done.warnings[0]  # a newline in the knob is escaped, not printed
    assert done.files == {}


@pytest.mark.parametrize("epoch", ["+5", "-1", "253402300800", "1e9"])
@pytest.mark.parametrize("producer", producers.PRODUCERS, ids=str)
def test_a_malformed_source_date_epoch_warns_once_and_created_is_now(producer, epoch, tmp_path):
    before = int(time.time())
    knobs = _knobs(tmp_path, "both", SOURCE_DATE_EPOCH=epoch)
    done = producers.launch(producer, TENSORS, knobs, tmp_path)
    _assert_one_counted_warning(done, producer, "SOURCE_DATE_EPOCH")
    created = json.loads(done.files["trace.out"].split(b"\n")[0])["created"]  # both mode: JSONL at the path
    stamped = calendar.timegm(time.strptime(created, "%Y-%m-%dT%H:%M:%SZ"))
    assert before - 1 <= stamped <= time.time() + 1
    # Apart from `created`, the files are what a pinned run at that second writes.
    expected = expected_files(DOC, {**knobs, "SOURCE_DATE_EPOCH": str(stamped)}, producer.language)
    assert done.files == expected


@pytest.mark.parametrize("producer", producers.PRODUCERS, ids=str)
def test_without_a_file_nothing_is_written_and_a_bad_selector_goes_unreported(producer, tmp_path):
    knobs = {k: v for k, v in _knobs(tmp_path, "both", ORCH_LOG_SELECT="colour=red").items() if k != "ORCH_LOG_FILE"}
    done = producers.launch(producer, TENSORS, knobs, tmp_path)
    assert (done.returncode, done.stderr, done.files) == (0, "", {})
