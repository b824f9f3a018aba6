"""Prepare the folder scripts/gpu-check-llama.sh takes to a CUDA machine, on a machine without one.

    .venv/bin/python scripts/gpu_llama_carry.py .gpu-carry     # then carry .gpu-carry to the GPU machine
    .venv/bin/python scripts/gpu_llama_carry.py .gpu-carry --check OUT  # the graft run it brought back

The GPU machine has no network and no orchlog installed, so everything it needs that is not in the
checkout is made here, into DIR:

- llama.cpp/: the pinned llama.cpp source (orchlog/llama/build.py's vendored tree) cut to what a
  library build with the CPU and CUDA backends configures and compiles: no docs, models, tools,
  tests, examples, nor the other ggml backends' sources (19 MB of the tree's 176 MB).
- model.gguf: the tiny random-weight Qwen2 the tests run (examples/qwen2_tiny).
- tokens: the scenario's prompt and decode ids, the graft selection, the model's BLAKE3 and the
  llama.cpp commit, one `key value` a line.
- cpu-full.bin: the reference, run_tokens on the pinned CPU build with the same tokens, in full mode:
  what the GPU run grafts from, and what `orchlog compare` measures the GPU traces against.
- cpu-logits.npy: that run's logits (n_positions, n_vocab), float32.

The folder is ignored by git (.gitignore): it goes to the GPU machine beside the checkout and is never
committed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # examples/ is not installed: run from any directory

import orchlog  # noqa: E402
from examples.qwen2_tiny.make_model import make_tiny_model  # noqa: E402
from examples.qwen2_tiny.scenario import DEFAULT_SCENARIO  # noqa: E402
from orchlog.llama.build import LLAMA_CPP_COMMIT, vendored_source  # noqa: E402
from orchlog.llama.driver import build_driver, pinned_llama_cpp  # noqa: E402
from orchlog.read.records import TraceRecord  # noqa: E402
from orchlog.runinfo import file_blake3  # noqa: E402

# What a library-only build of llama.cpp with GGML_CUDA=ON reads, relative to the vendored tree.
LLAMA_CPP_PARTS = (
    "CMakeLists.txt",
    "LICENSE",
    "cmake",
    "include",
    "src",
    "vendor",
    "ggml/CMakeLists.txt",
    "ggml/cmake",
    "ggml/include",
)
GGML_SRC_KEPT_DIRS = ("ggml-cpu", "ggml-cuda")  # of ggml/src's backend folders; its plain files are all kept

# One row of one checkpoint on a CUDA-resident layer: token 3's attn_norm in layer 1 of the prompt pass.
GRAFT_SELECT = "checkpoint=attn_norm,layer=1,token=3,step=0"


def copy_llama_cpp(source: Path, destination: Path) -> None:
    for part in LLAMA_CPP_PARTS:
        src, dst = source / part, destination / part
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst)
        else:
            shutil.copy2(src, dst)
    ggml_src = source / "ggml" / "src"
    (destination / "ggml" / "src").mkdir()
    for entry in ggml_src.iterdir():
        if entry.is_file():
            shutil.copy2(entry, destination / "ggml" / "src" / entry.name)
        elif entry.name in GGML_SRC_KEPT_DIRS:
            shutil.copytree(entry, destination / "ggml" / "src" / entry.name)


def run_tokens(program: Path, model: Path, trace: Path, logits: Path, **knobs: str) -> None:
    """The scenario through run_tokens on the CPU, every graph tensor into `trace` in full mode, as the
    GPU script runs it (`knobs`: more ORCH_* settings, such as a graft's)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORCH_LOG_", "ORCH_GRAFT_"))}
    env.update(ORCH_LOG_FILE=str(trace), ORCH_LOG_MODE="full", ORCH_LOG_TEAM="llama.cpp-cpu", **knobs)
    prompt, decode = (",".join(map(str, ids)) for ids in (DEFAULT_SCENARIO.prompt, DEFAULT_SCENARIO.decode))
    config = [f"model.blake3={file_blake3(model)}", f"llama.cpp=pinned {LLAMA_CPP_COMMIT} CPU"]
    subprocess.run(
        [str(program), str(model), "--prompt", prompt, "--decode", decode, "--threads", "2", "--logits", str(logits)]
        + [arg for item in config for arg in ("--config", item)],
        env=env,
        check=True,
    )


def _key(record: TraceRecord) -> tuple[object, ...]:
    return (record.checkpoint, record.layer, record.stage, record.token_idx, record.step)


def check_graft(carry: Path, out: Path) -> list[str]:
    """What the GPU machine's graft run shows, as lines; a line starting with FAIL is a failure.

    The graft run must hold exactly one grafted record, under the carry's selector, bit-identical to the
    CPU reference's; every record it wrote before that one must equal the plain GPU run's (the run is the
    plain run until the graft); the records after it at the grafted token are counted where they moved."""
    reference = {_key(r): r.blake3 for r in orchlog.open_trace(carry / "cpu-full.bin")}
    plain = {_key(r): r.blake3 for r in orchlog.open_trace(out / "gpu-full.bin")}
    grafted_run = list(orchlog.open_trace(out / "gpu-graft.bin"))
    grafted = [i for i, r in enumerate(grafted_run) if r.grafted]
    if len(grafted) != 1:
        return [f"FAIL the graft run holds {len(grafted)} grafted records, not 1"]
    at = grafted[0]
    row = grafted_run[at]
    lines = [f"the grafted record: {row.checkpoint} layer={row.layer} token_idx={row.token_idx} step={row.step}"]
    wanted = dict(part.split("=") for part in GRAFT_SELECT.split(","))
    where = (row.checkpoint, str(row.layer), str(row.token_idx), str(row.step))
    if where != (wanted["checkpoint"], wanted["layer"], wanted["token"], wanted["step"]):
        lines.append(f"FAIL it is not the one {GRAFT_SELECT} selects")
    same = row.blake3 == reference.get(_key(row))
    lines.append(f"{'ok  ' if same else 'FAIL'} it holds the CPU reference's row bit for bit")
    lines.append(
        f"info the GPU's own row {'equals' if plain.get(_key(row)) == row.blake3 else 'differs from'} the CPU's"
    )
    before = [r for r in grafted_run[:at] if plain.get(_key(r)) != r.blake3]
    lines.append(
        f"{'ok  ' if not before else 'FAIL'} the {at} records before it equal the plain GPU run's"
        + (f" ({len(before)} differ, the first {before[0].checkpoint} layer={before[0].layer})" if before else "")
    )
    later = [r for r in grafted_run[at + 1 :] if r.token_idx == row.token_idx and r.step == row.step]
    moved = sum(plain.get(_key(r)) != r.blake3 for r in later)
    lines.append(f"info {moved} of the {len(later)} later records of token {row.token_idx} moved from the plain run's")
    return lines


def size_of(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="scripts/gpu_llama_carry.py",
        description="Write the folder scripts/gpu-check-llama.sh needs on a CUDA machine.",
        epilog="example: .venv/bin/python scripts/gpu_llama_carry.py .gpu-carry\n"
        "         .venv/bin/python scripts/gpu_llama_carry.py .gpu-carry --check gpu-llama-out",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "directory", type=Path, help="folder to write (one written before is replaced; any other is refused)"
    )
    parser.add_argument("--jobs", "-j", type=int, default=2, help="compile jobs for the CPU build (default 2)")
    parser.add_argument(
        "--check",
        type=Path,
        metavar="OUT",
        help="instead: check the graft run in OUT (what gpu-check-llama.sh wrote) against the folder",
    )
    args = parser.parse_args(argv)
    directory: Path = args.directory
    if args.check:
        missing = [name for name in ("gpu-full.bin", "gpu-graft.bin") if not (args.check / name).is_file()]
        if missing or not (directory / "cpu-full.bin").is_file():
            print(
                f"gpu_llama_carry: error: {args.check} has no {' or '.join(missing)}"
                if missing
                else f"gpu_llama_carry: error: {directory} has no cpu-full.bin",
                file=sys.stderr,
            )
            return 2
        lines = check_graft(directory, args.check)
        print("\n".join(lines))
        return 1 if any(line.startswith("FAIL") for line in lines) else 0
    if directory.exists() and not (directory / "tokens").is_file():
        print(
            f"gpu_llama_carry: error: {directory} exists and is no carry folder written before: not replacing it",
            file=sys.stderr,
        )
        return 2
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    copy_llama_cpp(vendored_source(quiet=False), directory / "llama.cpp")
    make_tiny_model(directory / "model.gguf")
    (directory / "tokens").write_text(
        f"prompt {','.join(map(str, DEFAULT_SCENARIO.prompt))}\n"
        f"decode {','.join(map(str, DEFAULT_SCENARIO.decode))}\n"
        f"graft {GRAFT_SELECT}\n"
        f"model.blake3 {file_blake3(directory / 'model.gguf')}\n"
        f"llama.cpp {LLAMA_CPP_COMMIT}\n"
    )
    program = build_driver(pinned_llama_cpp(args.jobs, quiet=True), args.jobs)
    run_tokens(program, directory / "model.gguf", directory / "cpu-full.bin", directory / "cpu-logits.npy")
    print(f"{directory}: {size_of(directory) / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
