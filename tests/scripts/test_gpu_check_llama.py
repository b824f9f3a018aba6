"""scripts/gpu-check-llama.sh and the folder scripts/gpu_llama_carry.py prepares for it: the CUDA build
takes the pinned CPU build's flags, and the cut-down llama.cpp source still configures."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

from orchlog.llama.build import CMAKE_FLAGS
from tests.scripts.script_modules import import_script

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "gpu-check-llama.sh"


def _bash_array(name: str) -> tuple[str, ...]:
    """The words of the bash array `name=( ... )` in the script, as bash reads them."""
    body = re.search(rf"^{name}=\((.*?)^\)", SCRIPT.read_text(), re.S | re.M)
    assert body, f"no {name}=( ... ) in {SCRIPT}"
    return tuple(shlex.split(body[1], comments=True))


def test_the_cuda_build_takes_the_flags_of_the_pinned_cpu_build():
    # The script cannot import orchlog (the GPU machine has none installed): it keeps its own copy.
    assert _bash_array("LLAMA_FLAGS") == CMAKE_FLAGS


def test_the_script_is_valid_bash():
    subprocess.run(["bash", "-n", str(SCRIPT)], check=True)


def test_the_script_without_an_output_folder_says_how_to_run_it():
    proc = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.startswith("usage: scripts/gpu-check-llama.sh OUT")


@pytest.mark.slow  # unpacks the pinned llama.cpp source (cached) and configures it
def test_the_carrys_llama_cpp_subset_configures_as_the_library_build(tmp_path):
    copy_llama_cpp = import_script("gpu_llama_carry").copy_llama_cpp
    from orchlog.llama.build import vendored_source

    subset = tmp_path / "llama.cpp"
    copy_llama_cpp(vendored_source(), subset)
    assert not (subset / "ggml" / "src" / "ggml-vulkan").exists()
    assert (subset / "ggml" / "src" / "ggml-cuda" / "CMakeLists.txt").is_file()
    size = sum(f.stat().st_size for f in subset.rglob("*") if f.is_file())
    assert size < 30e6, f"{size / 1e6:.1f} MB: the device tool carries 64 MiB at most"
    proc = subprocess.run(
        ["cmake", "-S", str(subset), "-B", str(tmp_path / "build"), *CMAKE_FLAGS],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
