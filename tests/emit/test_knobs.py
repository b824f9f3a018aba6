"""Env knob parsing and path substitution, checked against the shared env vectors."""

from __future__ import annotations

import pytest

from orchlog.emit import knobs
from orchlog.encoding.record import created_from_epoch
from tests.conftest import load_vectors

DOC = load_vectors("env.json")


@pytest.mark.parametrize("case", DOC["paths"], ids=lambda c: c["template"])
def test_path_templates_expand_rank_and_pid_only(case):
    assert knobs.expand_path(case["template"], case["rank"], case["pid"]) == case["path"]


@pytest.mark.parametrize("case", DOC["knobs"], ids=lambda c: f"{c['knob']}={c['raw']!r}")
def test_knobs_parse_or_fall_back_with_a_warning(case):
    parse = {
        "ORCH_LOG_VALUES": knobs.parse_values,
        "ORCH_LOG_MODE": knobs.parse_mode,
        "ORCH_LOG_RANK": lambda raw: knobs.parse_int("ORCH_LOG_RANK", raw, 0),
        "ORCH_LOG_WORLD_SIZE": lambda raw: knobs.parse_int("ORCH_LOG_WORLD_SIZE", raw, 1),
    }[case["knob"]]
    parsed = parse(case["raw"])
    assert parsed.value == case["value"]
    assert (parsed.warning is not None) == case["warning"]
    if parsed.warning:
        assert case["knob"] in parsed.warning


@pytest.mark.parametrize(
    "case", load_vectors("headers.json")["created_from_source_date_epoch"], ids=lambda c: repr(c["SOURCE_DATE_EPOCH"])
)
def test_source_date_epoch_pins_created_or_warns_and_means_now(case):
    parsed = knobs.parse_source_date_epoch(case["SOURCE_DATE_EPOCH"])
    created = None if parsed.value is None else created_from_epoch(parsed.value)
    assert created == case["created"]
    assert (parsed.warning is not None) == case["warning"]
