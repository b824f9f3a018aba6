"""`orchlog codegen`: regenerate (or --check) the files made from the schema."""

from __future__ import annotations

import argparse

from orchlog.errors import OrchlogError

# What the codegen extra installs (pyyaml, jinja2), by the names they are imported under.
CODEGEN_MODULES = ("yaml", "jinja2")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "codegen",
        help="regenerate the C++/Rust/Python schema tables and vectors from the schema",
        description="Regenerate every file made from schema/orchlog.schema.yaml (run in a source checkout).",
        epilog="example:\n  orchlog codegen --check    # exit 1 and name the command when files are stale",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 when a generated file is stale")
    p.add_argument("--diff", action="store_true", help="with --check, print what differs")
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    p.add_argument("--root", help="checkout to read the schema from and write into (default: this one)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    argv = [flag for flag, on in (("--check", args.check), ("--diff", args.diff), ("--quiet", args.quiet)) if on]
    if args.root:
        argv += ["--root", args.root]
    try:
        from orchlog.codegen import main

        return main(argv)
    except ModuleNotFoundError as exc:
        if exc.name not in CODEGEN_MODULES:
            raise
        raise OrchlogError(
            f"orchlog codegen needs {exc.name}, which is not installed: pip install 'orchlog[codegen]'"
        ) from None
