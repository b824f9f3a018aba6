"""Build orchlog/llama/run_tokens.cpp (the driver `orchlog trace llama` ships) against the cached llama.cpp and run
the scenario through it, logging its graph tensors through orchlog's ggml
adapter when asked.

    python -m examples.llama_cpp.run tiny-qwen2.gguf logits-llama.npy [--trace llama.bin]

The programs are built under the checkout's .cache/ (they are this
repository's source and compile the orchlog headers in); CMake rebuilds them
only when a source changes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from examples import cli
from examples.qwen2_tiny.scenario import DEFAULT_SCENARIO, Scenario
from orchlog.llama.build import (
    DEFAULT_JOBS,
    BuildError,
    LlamaCppBuild,
    build_cmake_project,
    build_key,
    ensure_llama_cpp,
)

SOURCE_DIR = Path(__file__).resolve().parent
REPO_ROOT = SOURCE_DIR.parent.parent


@dataclass(frozen=True)
class TraceSettings:
    """Where and how run_tokens logs its graph tensors (the ORCH_LOG_* knobs it is given)."""

    path: Path
    mode: str = "full"  # tensors in full: what `orchlog compare` measures exactly
    select: str = ""
    team: str = "llama.cpp"

    def env(self) -> dict[str, str]:
        return {
            "ORCH_LOG_FILE": str(self.path),
            "ORCH_LOG_MODE": self.mode,
            "ORCH_LOG_SELECT": self.select,
            "ORCH_LOG_TEAM": self.team,
        }


def _env_without_orchlog_knobs() -> dict[str, str]:
    """The caller's environment, minus ORCH_LOG_*: a run logs only when told to here."""
    return {k: v for k, v in os.environ.items() if not k.startswith("ORCH_LOG_")}


def build_programs(llama: LlamaCppBuild | None = None, jobs: int = DEFAULT_JOBS, quiet: bool = False) -> Path:
    """Builds run_tokens, log_graph and quantize; returns their directory."""
    llama = llama or ensure_llama_cpp(jobs=jobs, quiet=quiet)
    build_dir = REPO_ROOT / ".cache" / "examples" / f"llama_cpp-{build_key()}"
    return build_cmake_project(SOURCE_DIR, build_dir, {"CMAKE_PREFIX_PATH": str(llama.prefix)}, jobs)


def build_run_tokens(llama: LlamaCppBuild | None = None, jobs: int = DEFAULT_JOBS, quiet: bool = False) -> Path:
    return build_programs(llama, jobs, quiet) / "run_tokens"


def run_llama_cpp(
    gguf_path: str | Path,
    scenario: Scenario = DEFAULT_SCENARIO,
    program: Path | None = None,
    trace: TraceSettings | None = None,
    threads: int = 2,
) -> np.ndarray:
    """Logits as float32, shape (n_positions, n_vocab), row i = position i; with `trace`, the graph
    tensors are logged there too."""
    program = program or build_run_tokens()
    with tempfile.TemporaryDirectory() as tmp:
        logits_path = Path(tmp) / "logits.npy"
        cmd = [
            str(program),
            str(gguf_path),
            "--prompt",
            _ids(scenario.prompt),
            "--logits",
            str(logits_path),
            "--threads",
            str(threads),
        ]
        if scenario.decode:
            cmd += ["--decode", _ids(scenario.decode)]
        env = _env_without_orchlog_knobs() | (trace.env() if trace else {})
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            raise RuntimeError(f"run_tokens failed (exit {proc.returncode}):\n{proc.stderr}")
        logits: np.ndarray = np.load(logits_path)
        return logits


def _ids(tokens: tuple[int, ...]) -> str:
    return ",".join(str(t) for t in tokens)


def main(argv: list[str] | None = None) -> int:
    parser = cli.model_and_out(cli.parser("examples.llama_cpp.run", __doc__), cli.LOGITS)
    parser.add_argument("--trace", type=Path, help="also log every graph tensor there (orchlog binary stream)")
    args = parser.parse_args(argv)
    try:
        np.save(args.out, run_llama_cpp(args.model, trace=TraceSettings(args.trace) if args.trace else None))
    except (BuildError, RuntimeError) as exc:
        return cli.error("llama.cpp", exc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
