"""clang-format over the hand-written C and C++ files: scripts/test.sh's lint stage and the pre-commit hook.

    .venv/bin/python scripts/cpp_format.py               # check every tracked C/C++ file (the lint stage)
    .venv/bin/python scripts/cpp_format.py FILE...       # check those FILEs that are C/C++ (pre-commit)
    .venv/bin/python scripts/cpp_format.py --fix [FILE...]   # format them in place instead
    .venv/bin/python scripts/cpp_format.py --list [FILE...]  # print the files it would check

The files `orchlog codegen` writes are left out, whatever the caller passes: the codegen stage checks
them against the schema and templates instead, and formatting one by hand would make it stale. Their
list is the codegen's own (orchlog.codegen.generated_paths), so the lint stage and the hook cannot
disagree about which files are generated. clang-format is the lint extra's pinned one.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUFFIXES = (".c", ".h", ".cpp", ".hpp", ".cu", ".inc")


def checked(paths: list[str]) -> list[str]:
    """Those of `paths` (relative to the checkout) that are C or C++ and not generated."""
    from orchlog.codegen import generated_paths

    generated = set(generated_paths())
    return [p for p in paths if p.endswith(SUFFIXES) and Path(p).as_posix() not in generated]


def tracked() -> list[str]:
    done = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    return [p for p in done.stdout.decode().split("\0") if p]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="scripts/cpp_format.py",
        description="clang-format --dry-run -Werror over the hand-written C and C++ files (generated ones are "
        "checked by `orchlog codegen --check`).",
        epilog="example:\n  .venv/bin/python scripts/cpp_format.py --fix   # format every hand-written file",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("files", nargs="*", help="files relative to the checkout (default: every tracked file)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--fix", action="store_true", help="format the files in place")
    mode.add_argument("--list", action="store_true", help="print the files that would be checked")
    args = parser.parse_args(argv)
    files = checked(args.files or tracked())
    if args.list:
        print("\n".join(files))
        return 0
    if not files:
        return 0
    import clang_format

    executable = clang_format.get_executable("clang-format")
    command = [executable, "-i"] if args.fix else [executable, "--dry-run", "-Werror"]
    code = subprocess.call([*command, *files], cwd=ROOT)
    if code and not args.fix:
        print("clang-format: run `.venv/bin/python scripts/cpp_format.py --fix` to fix", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
