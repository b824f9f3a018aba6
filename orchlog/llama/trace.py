"""`orchlog trace llama`: a GGUF run through llama.cpp on a prompt, every graph tensor into a trace.

The driver (run_tokens.cpp) tokenizes the prompt with the model's own vocabulary, runs the prompt in
one pass and decodes greedily, one token per step, with orchlog's ggml adapter installed; this module
builds it, gives it the ORCH_LOG_* knobs of the trace asked for and reads back what it ran.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from orchlog.errors import OrchlogError
from orchlog.llama.build import BuildError
from orchlog.llama.driver import LlamaCpp, build_driver, pinned_llama_cpp, user_llama_cpp
from orchlog.records import record
from orchlog.runinfo import file_blake3

GGUF_MAGIC = b"GGUF"
# The knobs a trace command sets itself; every other ORCH_LOG_* knob of the caller's passes through
# (ORCH_LOG_VALUES, ORCH_LOG_AGAINST, ORCH_LOG_ON_NONFINITE, ...).
OWN_KNOBS = ("ORCH_LOG_FILE", "ORCH_LOG_MODE", "ORCH_LOG_SELECT", "ORCH_LOG_TEAM")


@record(frozen=True)
class LlamaTrace:
    path: Path
    prompt: list[int]
    decode: list[int]
    prompt_pieces: list[str]
    decode_pieces: list[str]
    seconds: float  # the driver's run, without the build
    llama: LlamaCpp


def check_gguf(model: Path) -> None:
    if not model.is_file():
        raise OrchlogError(f"{model}: no such file")
    with open(model, "rb") as f:
        if f.read(4) != GGUF_MAGIC:
            raise OrchlogError(f"{model}: not a GGUF file (it does not start with 'GGUF')")


def locate_llama_cpp(llama_cpp: str | Path | None, jobs: int, quiet: bool) -> LlamaCpp:
    try:
        return user_llama_cpp(llama_cpp) if llama_cpp is not None else pinned_llama_cpp(jobs, quiet)
    except BuildError as exc:
        raise OrchlogError(str(exc)) from None


def trace_llama(
    model: str | Path,
    out: str | Path,
    *,
    text: str | None = None,
    tokens: Sequence[int] | None = None,
    n_predict: int = 8,
    mode: str = "full",
    select: str | None = None,
    team: str = "llama.cpp",
    llama_cpp: str | Path | None = None,
    threads: int = 2,
    gpu_layers: int = 0,
    jobs: int = 2,
    quiet: bool = False,
) -> LlamaTrace:
    """Runs `model` on the prompt (text, tokenized by the model's vocabulary, or token ids) and
    `n_predict` greedy decode steps, logging every graph tensor into `out` (`mode` full or summary)."""
    model = Path(model)
    check_gguf(model)
    if (text is None) == (tokens is None):
        raise OrchlogError("give the prompt as text or as token ids, not both")
    llama = locate_llama_cpp(llama_cpp, jobs, quiet)
    try:
        program = build_driver(llama, jobs)
    except BuildError as exc:
        raise OrchlogError(str(exc)) from None
    env = {k: v for k, v in os.environ.items() if k not in OWN_KNOBS}
    env.update(ORCH_LOG_FILE=str(out), ORCH_LOG_MODE=mode, ORCH_LOG_SELECT=select or "", ORCH_LOG_TEAM=team)
    with tempfile.TemporaryDirectory(prefix="orchlog-trace-") as tmp:
        info_path = Path(tmp) / "info.json"
        cmd = [str(program), str(model), "--n-predict", str(n_predict), "--info", str(info_path)]
        cmd += ["--text", text] if text is not None else ["--prompt", ",".join(str(int(t)) for t in tokens or ())]
        cmd += ["--threads", str(threads), "--gpu-layers", str(gpu_layers)]
        cmd += ["--config", f"model.blake3={file_blake3(model)}", "--config", f"llama.cpp={llama.origin}"]
        started = time.monotonic()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, errors="replace")
        seconds = time.monotonic() - started
        if proc.returncode != 0:
            raise OrchlogError(f"llama.cpp failed ({_exit_text(proc.returncode)}): {_cause(proc.stderr)}")
        info = json.loads(info_path.read_text(encoding="utf-8"))
    for line in proc.stderr.splitlines():  # the emitter's own warnings (a bad knob, a full disk)
        if line.startswith("orchlog:"):
            print(line, file=sys.stderr)
    return LlamaTrace(
        Path(out),
        info["prompt"],
        info["decode"],
        [_text(p) for p in info["prompt_pieces"]],
        [_text(p) for p in info["decode_pieces"]],
        seconds,
        llama,
    )


def _exit_text(code: int) -> str:
    return f"killed by signal {-code}" if code < 0 else f"exit {code}"


def _cause(stderr: str) -> str:
    """The line of the driver's stderr that says why: its own message, or llama.cpp's assertion or error
    (a crash may add a debugger's backtrace after it)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in lines:
        if line.startswith("run_tokens:") or "GGML_ASSERT" in line or "error" in line.lower():
            return line
    return lines[-1] if lines else "no message"


def _text(piece: str) -> str:
    """A piece as the driver wrote it (its bytes as code points below 256) decoded as UTF-8."""
    return piece.encode("latin-1").decode("utf-8", errors="replace")
