"""examples/cli.py: the command line the example programs share."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from examples import cli
from examples.numpy_engine.bugs import Bug


def _bug_parser():
    parser = cli.parser("examples.some_program", "what it does\n    python -m examples.some_program --bug X")
    cli.bugs_option(parser)
    return parser


def test_bugs_are_parsed_into_one_flag_and_none_by_default():
    parser = _bug_parser()
    assert parser.parse_args([]).bug is Bug.NONE
    assert parser.parse_args(["--bug", "no_qkv_bias,kq_unscaled"]).bug == Bug.NO_QKV_BIAS | Bug.KQ_UNSCALED


def test_an_unknown_bug_is_a_usage_error_that_names_the_known_ones(capsys):
    with pytest.raises(SystemExit) as exit_info:
        _bug_parser().parse_args(["--bug", "no_such_bug"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "argument --bug: unknown bug 'no_such_bug'; known: transposed_embedding," in err


def test_the_help_keeps_the_examples_lines(capsys):
    with pytest.raises(SystemExit):
        _bug_parser().parse_args(["--help"])
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m examples.some_program")
    assert "what it does\n    python -m examples.some_program --bug X\n" in out


def test_a_temporary_directory_is_removed_and_a_kept_one_made_and_left(tmp_path):
    with cli.directory(None) as temporary:
        assert temporary.is_dir()
    assert not temporary.exists()
    kept = tmp_path / "a" / "b"
    with cli.directory(kept) as directory:
        (directory / "trace.bin").write_bytes(b"x")
    assert directory == kept and (kept / "trace.bin").read_bytes() == b"x"


def test_the_closing_line_says_how_to_keep_the_traces_only_when_they_are_not_kept():
    assert cli.same_comparison("orchlog compare a b", kept=True) == "the same comparison: orchlog compare a b"
    assert cli.same_comparison("orchlog compare a b", kept=False).endswith("  (traces kept with --out DIR)")


def test_an_error_is_one_line_on_stderr_and_exit_code_2(capsys):
    assert cli.error("llama.cpp", RuntimeError("no such model")) == 2
    assert capsys.readouterr() == ("", "llama.cpp: error: no such model\n")


def test_model_and_out_are_paths():
    args = cli.model_and_out(cli.parser("examples.x", None), cli.LOGITS).parse_args(["m.gguf", "out.npy"])
    assert (args.model, args.out) == (Path("m.gguf"), Path("out.npy"))


def test_a_report_piped_into_a_reader_that_stops_early_ends_quietly():
    root = Path(__file__).resolve().parents[2]
    program = "from examples.cli import show; show('a line\\n' * 200_000, 'text'); print('after')"
    proc = subprocess.run(
        f"{shlex.quote(sys.executable)} -c {shlex.quote(program)} | head -1",
        shell=True,
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert proc.stdout == "a line\n"
    assert proc.stderr == ""
