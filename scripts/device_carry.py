"""Prepare the folder scripts/device-figures.sh takes to the GPU machine, on a machine with network.

    .venv/bin/python scripts/device_carry.py .device-carry    # then carry .device-carry to the GPU machine

That machine has Python 3.12 with NumPy, PyArrow, msgpack and the build tools (CMake, ninja, pybind11),
but no network and neither orchlog's other dependencies nor Ray. Into DIR go:

- wheels/: orchlog's pure dependencies the machine lacks (blake3, orjson, shtab, termcolor) and Ray's
  (jsonschema and what it needs), for CPython 3.12 on manylinux x86-64;
- ray.tar.xz: Ray's wheel unpacked, without what a local cluster never loads (the Java jar, the
  dashboard's source maps, the Data, Train, Tune, Serve, RLlib and LLM libraries): 29 MB against the
  wheel's 79 MB, under the 64 MiB a call may carry.

The folder is ignored by git (.gitignore).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

WHEELS = (
    "blake3",
    "orjson",
    "shtab",
    "termcolor",
    "jsonschema",
    "jsonschema-specifications",
    "referencing",
    "rpds-py",
)
RAY = "ray>=2.9"
# Parts of Ray's wheel a `ray.cluster_utils.Cluster` running plain tasks never imports or starts.
RAY_UNUSED = ("ray/jars", "ray/rllib", "ray/tune", "ray/train", "ray/data", "ray/serve", "ray/llm")
PLATFORM = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")


def download(names: tuple[str, ...] | list[str], into: Path) -> None:
    """Binary wheels of `names` for CPython 3.12 on x86-64 Linux, without their dependencies."""
    platforms = [arg for p in PLATFORM for arg in ("--platform", p)]
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:"]
    cmd += ["--python-version", "3.12", "--implementation", "cp", *platforms, "-d", str(into), *names]
    subprocess.run(cmd, check=True)


def strip_ray(wheel: Path, out: Path) -> None:
    """Ray's wheel unpacked without RAY_UNUSED and the dashboard's source maps, as an xz tarball."""
    with tempfile.TemporaryDirectory() as tmp:
        with zipfile.ZipFile(wheel) as z:
            z.extractall(tmp)
            for info in z.infolist():  # zipfile drops the executable bits the raylet and GCS need
                mode = info.external_attr >> 16
                if mode:
                    (Path(tmp) / info.filename).chmod(mode & 0o777)
        for part in RAY_UNUSED:
            shutil.rmtree(Path(tmp) / part, ignore_errors=True)
        for source_map in Path(tmp, "ray/dashboard").rglob("*.map"):
            source_map.unlink()
        with tarfile.open(out, "w:xz", preset=6) as tar:
            for entry in sorted(Path(tmp).iterdir()):
                tar.add(entry, arcname=entry.name)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir", type=Path, help="the folder to fill (e.g. .device-carry)")
    args = p.parse_args(argv)
    wheels = args.dir / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    download(WHEELS, wheels)
    with tempfile.TemporaryDirectory() as tmp:
        download([RAY], Path(tmp))
        (ray_wheel,) = Path(tmp).glob("ray-*.whl")
        strip_ray(ray_wheel, args.dir / "ray.tar.xz")
    size = sum(f.stat().st_size for f in args.dir.rglob("*") if f.is_file())
    print(f"{args.dir}: {size / 2**20:.1f} MiB to carry")
    return 0


if __name__ == "__main__":
    sys.exit(main())
