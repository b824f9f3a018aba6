"""The record vectors are made from orchlog/codegen/record_cases.yaml: a case is added as data, a bad one is named."""

from __future__ import annotations

import pytest
import yaml

from orchlog.codegen import main, vectors
from orchlog.codegen import schema as schema_mod
from orchlog.codegen.generate import GENERATED_MARK


@pytest.fixture()
def cases_file(tmp_path, monkeypatch):
    """A copy of record_cases.yaml that the generator reads instead; returns a function that writes it."""
    path = tmp_path / "record_cases.yaml"
    original = vectors.CASES_PATH.read_text(encoding="utf-8")
    monkeypatch.setattr(vectors, "CASES_PATH", path)
    vectors._case_file.cache_clear()

    def write(extra_cases: str = "", replace: tuple[str, str] | None = None) -> None:
        text = original if replace is None else original.replace(*replace)
        path.write_text(text + extra_cases, encoding="utf-8")
        vectors._case_file.cache_clear()

    yield write
    vectors._case_file.cache_clear()


def _records() -> list[dict]:
    return vectors.records(schema_mod.load(), GENERATED_MARK)["cases"]


def test_the_vectors_hold_the_files_cases_in_its_order(record_vectors):
    cases = yaml.safe_load(vectors.CASES_PATH.read_text(encoding="utf-8"))["cases"]
    assert [(c["name"], c["why"]) for c in cases] == [(v["name"], v["why"]) for v in record_vectors]


def test_a_case_appended_to_the_file_is_a_new_vector_and_the_others_stay_as_they_were(cases_file, record_vectors):
    cases_file(
        "\n  - name: added_f16\n    why: Added as data.\n    checkpoint: added\n    dtype: f16\n    shape: [3]\n"
        "    data: [1.0, -2.0, .nan]\n    layer: 4\n    values: all\n"
        "  - name: added_from_the_stream\n    why: Drawn after every other case.\n    checkpoint: drawn\n"
        "    dtype: f32\n    shape: [2]\n    data: {activations: 2}\n"
    )
    made = _records()
    assert made[: len(record_vectors)] == record_vectors
    added, drawn = made[len(record_vectors) :]
    assert added["name"] == "added_f16" and added["why"] == "Added as data."
    # 1.0, -2.0 and the quiet NaN with its sign bit clear, little-endian f16
    assert added["input"]["data_hex"] == "003c00c0007e"
    assert added["input"]["layer"] == 4 and added["input"]["values"] == -1
    assert '"layer":4' in added["expected"]["jsonl"]
    assert len(bytes.fromhex(drawn["input"]["data_hex"])) == 8


_BROKEN = "\n  - name: broken\n    why: Bad.\n    checkpoint: x\n    dtype: f64\n    shape: [1]\n"


@pytest.mark.parametrize(
    ("case", "says"),
    [
        ("    data: [1e21]\n", "'1e21' is not a f64 element"),
        ("    data: [1.0, 2.0]\n", "16 bytes of data for shape [1], not 8"),
        ("    data: {bits: [1], ramp: 2}\n", "expected a list of numbers"),
        ("    data: [1.0]\n    colour: red\n", "unknown keys ['colour']"),
    ],
)
def test_a_bad_case_is_refused_naming_the_case_and_what_is_wrong(cases_file, case, says):
    cases_file(_BROKEN + case)
    with pytest.raises(schema_mod.SchemaError) as refused:
        vectors._record_cases(schema_mod.load())
    assert str(refused.value).startswith("record_cases.yaml: case broken: ") and says in str(refused.value)


def test_codegen_says_so_in_one_line(cases_file, capsys):
    cases_file(_BROKEN + "    data: [1e21]\n")
    assert main(["--check", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err == "orchlog codegen: error: record_cases.yaml: case broken: '1e21' is not a f64 element\n"


def test_the_shared_stream_is_drawn_in_case_order(cases_file, record_vectors):
    # Dropping the first case that draws from the stream changes the data of every later one that does.
    cases_file(
        replace=(
            "    data: {activations: 12}\n",
            "    data: [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]\n",
        )
    )
    made = {c["name"]: c["input"]["data_hex"] for c in _records()}
    before = {c["name"]: c["input"]["data_hex"] for c in record_vectors}
    assert made["f32_all_fields"] == before["f32_all_fields"]
    assert made["f32_2d_default_values"] != before["f32_2d_default_values"]
    assert made["i8_extremes"] == before["i8_extremes"]
