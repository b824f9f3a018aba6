"""`orchlog codegen` without the codegen extra: one line naming the extra, not an internal error."""

from __future__ import annotations

import pytest

from tests.absent import run_without

RUN_CLI = "import sys\nfrom orchlog.cli import main\nsys.exit(main(sys.argv[1:]))"


@pytest.mark.parametrize("module", ["jinja2", "yaml"])
def test_codegen_without_its_extra_names_the_extra_in_one_line(module):
    done = run_without([module], RUN_CLI, "codegen", "--check")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"orchlog: error: orchlog codegen needs {module}, which is not installed: pip install 'orchlog[codegen]'"
    ]
