"""configure(format="parquet") builds its run from the env knobs and its arguments, as the other encodings do."""

from __future__ import annotations

import numpy as np
import pytest

import orchlog
from orchlog import schema_gen
from orchlog.emit import api as emitter
from orchlog.errors import OrchlogError
from orchlog.parquet import read

KNOBS = [k.name for k in schema_gen.KNOBS]


@pytest.fixture
def env(monkeypatch):
    for knob in KNOBS:
        monkeypatch.delenv(knob, raising=False)
    yield monkeypatch
    emitter.close()


def test_the_env_knobs_give_path_header_selector_and_values(env, tmp_path):
    for knob, value in {
        "ORCH_LOG_FILE": str(tmp_path / "run-{rank}.parquet"),
        "ORCH_LOG_TEAM": "ours",
        "ORCH_LOG_VALUES": " 3\t",
        "ORCH_LOG_SELECT": "layer=1-",
        "ORCH_LOG_RANK": "2",
        "ORCH_LOG_WORLD_SIZE": "4",
        "ORCH_LOG_MODEL": "",
        "ORCH_LOG_GIT_COMMIT": "abc",
        "ORCH_LOG_MODE": "summary",
        "SOURCE_DATE_EPOCH": "1767323045",
    }.items():
        env.setenv(knob, value)
    assert orchlog.configure(format="parquet", config={"seed": 7})
    assert emitter.stats().path == str(tmp_path / "run-2.parquet")
    for layer in range(3):
        orchlog.log("attn_norm", np.arange(5, dtype=np.float32) + layer, token_idx=0, layer=layer)
    emitter.close()
    trace = read(tmp_path / "run-2.parquet")
    recs = list(trace)
    assert trace.header == {
        "orchlog": orchlog.SCHEMA_VERSION,
        "producer": {"language": "python", "name": "orchlog", "version": orchlog.__version__},
        "team": "ours",
        "model": None,
        "git_commit": "abc",
        "created": "2026-01-02T03:04:05Z",
        "rank": 2,
        "world_size": 4,
        "values": 3,
        "select": "layer=1-",
        "config": {"seed": 7},
    }
    assert [
        (r.layer, r.seq, r.rank, r.world_size, r.team, None if r.values is None else len(r.values)) for r in recs
    ] == [
        (1, 0, 2, 4, "ours", 3),
        (2, 1, 2, 4, "ours", 3),
    ]


def test_arguments_override_the_knobs(env, tmp_path):
    env.setenv("ORCH_LOG_TEAM", "from-env")
    env.setenv("ORCH_LOG_SELECT", "layer=9")
    path = tmp_path / "t.parquet"
    assert orchlog.configure(format="parquet", path=str(path), team="given", select="", values="all")
    orchlog.log("x", np.arange(40, dtype=np.float32), layer=0)
    emitter.close()
    (rec,) = list(read(path))
    assert rec.values is not None
    assert (rec.team, len(rec.values)) == ("given", 40) and read(path).headers[0]["select"] is None


def test_the_next_configure_closes_the_parquet_file_and_logs_as_its_mode_says(env, tmp_path):
    assert orchlog.configure(format="parquet", path=str(tmp_path / "a.parquet"))
    orchlog.log("x", np.zeros(2, np.float32))
    assert orchlog.configure(path=str(tmp_path / "b.jsonl"))
    orchlog.log("y", np.zeros(2, np.float32))
    emitter.close()
    assert [r.checkpoint for r in read(tmp_path / "a.parquet")] == ["x"]
    assert [r.checkpoint for r in orchlog.open_trace(tmp_path / "b.jsonl")] == ["y"]


def test_without_a_path_logging_is_off(env):
    assert orchlog.configure(format="parquet") is False
    assert orchlog.log("x", np.zeros(2, np.float32)) is False


@pytest.mark.parametrize("options", [{"format": "csv"}, {"format": "parquet", "mode": "full"}])
def test_a_format_that_does_not_apply_is_refused_at_configure(env, options, tmp_path):
    with pytest.raises(OrchlogError, match="format"):
        orchlog.configure(path=str(tmp_path / "t"), **options)
