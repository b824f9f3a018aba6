"""Benchmark of orchlog's ggml adapter on llama.cpp's decode step.

    .venv/bin/python benchmarks/ggml_adapter.py                  # the tiny Qwen2 of examples/, ~10 s
    .venv/bin/python benchmarks/ggml_adapter.py --wide           # Qwen2-0.5B-wide layers (4 of them), ~1 min
    .venv/bin/python benchmarks/ggml_adapter.py --model X.gguf   # any other model

Runs benchmarks/ggml_decode_step.cpp (built against the cached llama.cpp of
orchlog/llama/build.py) and prints, for each configuration, the time of
one decode step and its ratio to the uninstrumented step measured in the
same process: the adapter installed with logging off, a selector matching
nothing, summary mode for every tensor, full mode for every tensor. The
table is Markdown, ready for docs/llama-cpp.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.compare_measure import machine  # noqa: E402
from examples.qwen2_tiny.config import TinyQwen2Config  # noqa: E402
from examples.qwen2_tiny.gguf_file import write_gguf  # noqa: E402
from examples.qwen2_tiny.make_model import make_tiny_model  # noqa: E402
from examples.qwen2_tiny.weights import make_weights  # noqa: E402
from orchlog.llama.build import ensure_llama_cpp  # noqa: E402

SOURCE = ROOT / "benchmarks" / "ggml_decode_step.cpp"
# Qwen2-0.5B's layer width (n_embd 896, n_ff 4864, 14 heads, 2 KV heads), four
# layers and a small vocabulary: a decode step with real matrix sizes, random weights.
WIDE = TinyQwen2Config(n_vocab=4096, n_embd=896, n_layer=4, n_head=14, n_head_kv=2, n_ff=4864)


def build() -> Path:
    prefix = ensure_llama_cpp().prefix
    out = ROOT / ".cache" / "bench" / "ggml_decode_step"
    out.parent.mkdir(parents=True, exist_ok=True)
    lib = prefix / "lib"
    include = [f"-I{d}" for d in (ROOT / "native/cpp/include", prefix / "include", ROOT / "orchlog/llama")]
    subprocess.run(
        [
            "g++",
            "-std=c++17",
            "-O2",
            *include,
            str(SOURCE),
            "-o",
            str(out),
            f"-L{lib}",
            "-lllama",
            "-lggml",
            "-lggml-base",
            f"-Wl,-rpath,{lib}",
            "-pthread",
        ],
        check=True,
    )
    return out


def table(result: dict[str, Any]) -> str:
    base = result["configs"][0]
    lines = [
        "| configuration | records per step | decode step (wall) | ratio | CPU time | ratio |",
        "|---|---|---|---|---|---|",
    ]
    for c in result["configs"]:
        lines.append(
            f"| {c['name']} | {c['records_per_step']} | {c['wall_us']:.0f} µs | "
            f"{c['wall_us'] / base['wall_us']:.2f}× | {c['cpu_us']:.0f} µs | "
            f"{c['cpu_us'] / base['cpu_us']:.2f}× |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, help="GGUF to run (default: the tiny Qwen2 of examples/)")
    parser.add_argument("--wide", action="store_true", help="run a random model with Qwen2-0.5B's layer width")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the figures there")
    args = parser.parse_args(argv)
    program = build()
    with tempfile.TemporaryDirectory() as tmp:
        if args.model:
            model, label = args.model, str(args.model)
        elif args.wide:
            model = write_gguf(Path(tmp) / "wide.gguf", make_weights(WIDE), WIDE)
            label = (
                f"wide Qwen2 (n_embd {WIDE.n_embd}, n_ff {WIDE.n_ff}, {WIDE.n_head}/{WIDE.n_head_kv} heads, "
                f"{WIDE.n_layer} layers, vocabulary {WIDE.n_vocab})"
            )
        else:
            model, label = make_tiny_model(Path(tmp) / "tiny-qwen2.gguf"), "tiny Qwen2"
        proc = subprocess.run(
            [
                str(program),
                str(model),
                tmp,
                "--steps",
                str(args.steps),
                "--repeats",
                str(args.repeats),
                "--threads",
                str(args.threads),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
    result = json.loads(proc.stdout) | {"machine": machine(), "model": label}
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    print(
        f"{result['model']}, {args.threads} thread(s), best of {args.repeats} x {args.steps} decode steps; "
        f"{result['machine']}"
    )
    print(table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
