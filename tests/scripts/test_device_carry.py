"""scripts/device_carry.py's slim Ray and scripts/device-figures.sh: what the carry drops is never
loaded by a local cluster's imports, the servers keep their executable bits, and the script parses."""

from __future__ import annotations

import stat
import subprocess
import sys
import tarfile
import zipfile

import pytest

from tests.scripts.script_modules import SCRIPTS, import_script


@pytest.fixture(scope="module")
def carry():
    return import_script("device_carry")


def test_a_local_cluster_loads_nothing_the_carry_drops(carry):
    pytest.importorskip("ray")
    dropped = [part.replace("/", ".") for part in carry.RAY_UNUSED]
    probe = (
        "import sys, ray, ray.cluster_utils, ray.util.state\n"
        f"print([m for m in sys.modules if any(m == d or m.startswith(d + '.') for d in {dropped!r})])"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"


def test_the_slim_ray_keeps_the_servers_executable_and_drops_the_rest(carry, tmp_path):
    wheel = tmp_path / "ray-0-cp312-cp312-manylinux2014_x86_64.whl"
    members = {
        "ray/__init__.py": 0o644,
        "ray/core/src/ray/raylet/raylet": 0o755,
        "ray/jars/ray_dist.jar": 0o644,
        "ray/data/__init__.py": 0o644,
        "ray/dashboard/client/build/static/js/main.js": 0o644,
        "ray/dashboard/client/build/static/js/main.js.map": 0o644,
    }
    with zipfile.ZipFile(wheel, "w") as z:
        for name, mode in members.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFREG | mode) << 16
            z.writestr(info, name)
    out = tmp_path / "ray.tar.xz"
    carry.strip_ray(wheel, out)
    with tarfile.open(out) as tar:
        kept = {m.name: m.mode for m in tar.getmembers() if m.isfile()}
    assert sorted(kept) == [
        "ray/__init__.py",
        "ray/core/src/ray/raylet/raylet",
        "ray/dashboard/client/build/static/js/main.js",
    ]
    assert kept["ray/core/src/ray/raylet/raylet"] & 0o111 == 0o111


def test_the_figures_script_is_valid_bash():
    subprocess.run(["bash", "-n", str(SCRIPTS / "device-figures.sh")], check=True)


def test_the_figures_script_without_an_output_folder_says_how_to_run_it():
    proc = subprocess.run(["bash", str(SCRIPTS / "device-figures.sh")], capture_output=True, text=True)
    assert proc.returncode != 0 and "usage: device-figures.sh OUT" in proc.stderr
