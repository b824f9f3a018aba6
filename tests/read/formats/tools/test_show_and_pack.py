"""`orchlog show` names the tool and what its dump holds; `orchlog pack` turns a dump into orchlog Parquet
that compares equal with it."""

from __future__ import annotations

import contextlib
import io

import pytest

from orchlog.cli import main


def _run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(argv))
    return code, out.getvalue()


@pytest.mark.parametrize(
    "dump, tool",
    [
        ("hf-clean", "hf-model-debugger"),
        ("msprobe-statistics-clean", "msprobe"),
        ("sglang-clean", "sglang-dumper"),
        ("polygraphy-clean.json", "polygraphy"),
        ("llama-eval-callback-clean.txt", "llama.cpp eval-callback"),
        ("numerics/torchtitan-clean.log", "torchtitan-numerics"),
    ],
)
def test_show_names_the_tool_and_what_its_dump_holds(tools, dump, tool):
    code, text = _run("show", str(tools / dump))
    assert code == 0 and f"  tool: {tool}, whose dump holds " in text and "problems" not in text


@pytest.mark.parametrize(
    "dump",
    ["hf-clean", "msprobe-tensor-clean", "sglang-clean", "polygraphy-clean.json", "llama-eval-callback-clean.txt"],
)
def test_pack_turns_a_dump_into_parquet_that_compares_equal_with_it(tools, tmp_path, dump):
    out = tmp_path / "dump.parquet"
    code, _ = _run("pack", str(tools / dump), "-o", str(out), "--quiet")
    assert code == 0 and out.exists()
    code, text = _run("compare", str(tools / dump), str(out), "--quiet")
    assert code == 0, text
