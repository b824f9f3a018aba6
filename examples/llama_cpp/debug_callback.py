"""Build and run examples/llama_cpp/debug_cb: llama.cpp's own tensor printer (common/debug.cpp, the callback of
llama-eval-callback and llama-debug) on token ids, against the cached llama.cpp library of build.py.

    python -m examples.llama_cpp.debug_callback MODEL.gguf OUT_DIR     # OUT_DIR/eval-callback.txt and the logits

The printer's sources come from the same pinned sdist as the library (its vendored tree is unpacked once
beside the build cache); the program is built under the checkout's .cache/.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from examples.qwen2_tiny.scenario import DEFAULT_SCENARIO
from orchlog.llama.build import (
    DEFAULT_JOBS,
    BuildError,
    build_cmake_project,
    build_key,
    ensure_llama_cpp,
    vendored_source,
)

SOURCE_DIR = Path(__file__).resolve().parent / "debug_cb"
REPO_ROOT = SOURCE_DIR.parent.parent.parent


def build(jobs: int = DEFAULT_JOBS, quiet: bool = True) -> Path:
    llama = ensure_llama_cpp(jobs=jobs, quiet=quiet)
    build_dir = REPO_ROOT / ".cache" / "examples" / f"llama_debug_cb-{build_key()}"
    defines = {"CMAKE_PREFIX_PATH": str(llama.prefix), "LLAMA_SRC": str(vendored_source(quiet))}
    return build_cmake_project(SOURCE_DIR, build_dir, defines, jobs) / "debug_callback"


def run(gguf: Path, out_dir: Path, name: str = "model", program: Path | None = None) -> Path:
    """Prints every graph tensor of the prompt pass into out_dir/eval-callback.txt (the tool's stdout) and
    saves the last token's logits as llama-debug --save-logits does; returns the text file."""
    program = program or build()
    out_dir.mkdir(parents=True, exist_ok=True)
    text = out_dir / "eval-callback.txt"
    prompt = ",".join(str(t) for t in DEFAULT_SCENARIO.prompt)
    with open(text, "wb") as out:
        cmd = [str(program), str(gguf), "--prompt", prompt, "--save-logits", str(out_dir), "--name", name]
        proc = subprocess.run(cmd, stdout=out, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        raise RuntimeError(f"debug_callback failed (exit {proc.returncode}):\n{proc.stderr.decode(errors='replace')}")
    return text


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m examples.llama_cpp.debug_callback", description=__doc__)
    p.add_argument("model", type=Path)
    p.add_argument("out", type=Path)
    args = p.parse_args(argv)
    try:
        print(run(args.model, args.out))
    except (BuildError, RuntimeError) as exc:
        print(f"llama.cpp: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
