"""`orchlog completion SHELL`: a tab-completion script for bash, zsh or tcsh.

The script is generated from the same argparse parsers the commands use
(by shtab), so every command, option and choice completes, and file
arguments complete as paths.
"""

from __future__ import annotations

import argparse
import sys

SHELLS = ("bash", "zsh", "tcsh")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "completion",
        help="print a shell completion script (bash, zsh, tcsh)",
        description="Print a tab-completion script for orchlog's commands and options.",
        epilog="example:\n"
        "  orchlog completion bash > ~/.local/share/bash-completion/completions/orchlog\n"
        '  orchlog completion zsh > "${fpath[1]}/_orchlog"',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("shell", choices=SHELLS, help="the shell to complete in")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    import shtab

    from orchlog.cli import build_parser

    sys.stdout.write(shtab.complete(build_parser(), shell=args.shell))
    return 0
