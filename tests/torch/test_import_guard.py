"""`import orchlog.torch` without PyTorch: one line that names the extra to install, and the rest of orchlog unharmed."""

from __future__ import annotations

import subprocess
import sys

from tests.absent import run_without


def test_importing_orchlog_torch_without_torch_says_which_extra_to_install():
    done = run_without(["torch"], "import orchlog.torch")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "ModuleNotFoundError: orchlog.torch needs PyTorch, which is not installed: pip install 'orchlog[torch]'"
    )


def test_the_error_names_torch_as_the_missing_module():
    done = run_without(
        ["torch"], "try:\n    import orchlog.torch\nexcept ModuleNotFoundError as exc:\n    print(exc.name)"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "torch\n"


def test_the_rest_of_orchlog_imports_without_torch():
    done = run_without(
        ["torch", "transformers"],
        "import sys, orchlog, orchlog.read, orchlog.compare, orchlog.parquet, orchlog.guardrail, orchlog.cli\n"
        "assert 'torch' not in sys.modules\n",
    )
    assert done.returncode == 0, done.stderr


def test_a_torch_that_is_installed_but_broken_keeps_its_own_error():
    broken = (
        "import importlib.abc, sys\n"
        "class Broken(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name == 'torch':\n"
        "            raise ImportError('libtorch_cpu.so: cannot open shared object file')\n"
        "sys.meta_path.insert(0, Broken())\n"
        "import orchlog.torch\n"
    )
    done = subprocess.run([sys.executable, "-c", broken], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == "ImportError: libtorch_cpu.so: cannot open shared object file"
