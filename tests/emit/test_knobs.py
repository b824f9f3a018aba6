"""Env knob parsing and path substitution, checked against the shared env vectors."""

from __future__ import annotations

import pytest

from orchlog import schema_gen
from orchlog.emit import knobs
from orchlog.encoding.record import created_from_epoch
from tests.conftest import load_vectors

DOC = load_vectors("env.json")


@pytest.mark.parametrize("case", DOC["paths"], ids=lambda c: c["template"])
def test_path_templates_expand_rank_and_pid_only(case):
    assert knobs.expand_path(case["template"], case["rank"], case["pid"]) == case["path"]


def _knob(name: str) -> schema_gen.KnobSpec:
    return next(k for k in schema_gen.KNOBS if k.name == name)


@pytest.mark.parametrize("case", DOC["knobs"], ids=lambda c: f"{c['knob']}={c['raw']!r}")
def test_knobs_parse_or_fall_back_with_the_warning_every_emitter_prints(case):
    parsed = knobs.parse(_knob(case["knob"]), case["raw"])
    assert parsed.value == case["value"]
    assert parsed.warning == case["warning"]


def test_every_knob_of_a_parsed_type_has_vectors():
    tried = {c["knob"] for c in DOC["knobs"]}
    assert {k.name for k in schema_gen.KNOBS if k.type in ("int", "count_or_all", "enum", "bool")} <= tried


@pytest.mark.parametrize(
    "case", load_vectors("headers.json")["created_from_source_date_epoch"], ids=lambda c: repr(c["SOURCE_DATE_EPOCH"])
)
def test_source_date_epoch_pins_created_or_warns_and_means_now(case):
    parsed = knobs.parse(knobs.knob("created"), case["SOURCE_DATE_EPOCH"])
    created = None if parsed.value is None else created_from_epoch(parsed.value)
    assert created == case["created"]
    assert (parsed.warning is not None) == case["warning"]


def test_resolving_takes_arguments_over_knobs_and_reads_blank_text_as_unset():
    environ = {"ORCH_LOG_RANK": "3", "ORCH_LOG_TEAM": "env", "ORCH_LOG_SELECT": " \t", "ORCH_LOG_MODEL": ""}
    settings, warnings = knobs.resolve({"team": "given", "created": 0}, environ)
    assert (settings["team"], settings["rank"], settings["world_size"]) == ("given", 3, 1)
    assert (settings["select"], settings["model"], settings["created"]) == (None, None, "1970-01-01T00:00:00Z")
    assert warnings == []


def test_a_value_given_in_code_is_checked_against_its_knob():
    assert knobs.check(knobs.knob("rank"), -1) == "want an integer >= 0"
    assert knobs.check(knobs.knob("values"), "all") is None
    assert knobs.check(knobs.knob("mode"), "binary") == "want one of summary, full, both"
    assert knobs.check(knobs.knob("team"), 3) == "want a string"
