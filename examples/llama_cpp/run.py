"""Build examples/llama_cpp/run_tokens.cpp against the cached llama.cpp and run
the scenario through it.

    python -m examples.llama_cpp.run tiny-qwen2.gguf logits-llama.npy [--graph-names names.tsv]

The program is built under the checkout's .cache/ (it is this repository's
source, and phase 2 compiles the orchlog headers into it); CMake rebuilds it
only when its source changes.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from examples.llama_cpp.build import DEFAULT_JOBS, BuildError, LlamaCppBuild, build_key, ensure_llama_cpp
from examples.qwen2_tiny.scenario import DEFAULT_SCENARIO, Scenario

SOURCE_DIR = Path(__file__).resolve().parent
REPO_ROOT = SOURCE_DIR.parent.parent


@dataclass(frozen=True)
class GraphTensor:
    """One tensor of a llama.cpp graph as the eval callback sees it."""

    step: int
    name: str
    op: str
    type: str
    ne: tuple[int, int, int, int]


def build_run_tokens(llama: LlamaCppBuild | None = None, jobs: int = DEFAULT_JOBS, quiet: bool = False) -> Path:
    llama = llama or ensure_llama_cpp(jobs=jobs, quiet=quiet)
    build_dir = REPO_ROOT / ".cache" / "examples" / f"llama_cpp-{build_key()}"
    for cmd in (
        ["cmake", "-S", str(SOURCE_DIR), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
         f"-DCMAKE_PREFIX_PATH={llama.prefix}"],
        ["cmake", "--build", str(build_dir), "--parallel", str(jobs)],
    ):
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise BuildError(f"`{' '.join(cmd[:2])} ...` failed:\n{proc.stdout}{proc.stderr}")
    return build_dir / "run_tokens"


def run_llama_cpp(gguf_path: str | Path, scenario: Scenario = DEFAULT_SCENARIO, program: Path | None = None,
                  graph_names: Path | None = None, threads: int = 2) -> np.ndarray:
    """Logits as float32, shape (n_positions, n_vocab), row i = position i."""
    program = program or build_run_tokens()
    with tempfile.TemporaryDirectory() as tmp:
        logits_path = Path(tmp) / "logits.npy"
        cmd = [str(program), str(gguf_path), "--prompt", _ids(scenario.prompt), "--logits", str(logits_path),
               "--threads", str(threads)]
        if scenario.decode:
            cmd += ["--decode", _ids(scenario.decode)]
        if graph_names:
            cmd += ["--graph-names", str(graph_names)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"run_tokens failed (exit {proc.returncode}):\n{proc.stderr}")
        return np.load(logits_path)


def read_graph_names(path: Path) -> list[GraphTensor]:
    tensors = []
    for line in path.read_text().splitlines():
        step, name, op, dtype, ne = line.split("\t")
        dims = tuple(int(n) for n in ne.split(","))
        tensors.append(GraphTensor(int(step), name, op, dtype, dims))  # type: ignore[arg-type]
    return tensors


def _ids(tokens: tuple[int, ...]) -> str:
    return ",".join(str(t) for t in tokens)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m examples.llama_cpp.run", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", type=Path, help="tiny Qwen2 GGUF (examples.qwen2_tiny.make_model)")
    parser.add_argument("out", type=Path, help="logits as .npy, (n_positions, n_vocab) float32")
    parser.add_argument("--graph-names", type=Path, help="also list the graph tensors per step (TSV)")
    args = parser.parse_args(argv)
    try:
        np.save(args.out, run_llama_cpp(args.model, graph_names=args.graph_names))
    except (BuildError, RuntimeError) as exc:
        print(f"llama.cpp: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
