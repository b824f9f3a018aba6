"""`orchlog trace llama MODEL.gguf` and `orchlog trace hf MODEL_DIR`: a reference trace from a model file, with
no code to write."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any, Protocol

from orchlog.cli.argtypes import nonnegative_int, positive_int
from orchlog.errors import OrchlogError

EXAMPLES = """example:
  orchlog trace llama model.gguf --prompt "The capital of France is" -o llama.bin
  orchlog trace hf model-hf/ --prompt "The capital of France is" -o hf.bin
  orchlog compare llama.bin hf.bin

  orchlog trace llama model-q8_0.gguf --tokens 785,6722,315 --n-predict 16 --mode summary -o ref.jsonl
  orchlog trace llama model.gguf --prompt "Hi" --llama-cpp ~/llama.cpp/install --gpu-layers 99 -o llama.bin
  ORCH_LOG_AGAINST=llama.bin ./my_engine ...        # then: orchlog compare llama.bin ours.bin

Both commands tokenize the prompt with the model's own vocabulary (its BOS as the model adds it), run it
in one pass, then decode greedily (the largest logit) for --n-predict steps, one token a step, and log
every stage under llama.cpp's names, so that their traces compare with no options. The trace's header
says what made it (model, weight type, settings, versions, the prompt's ids): `orchlog compare` prints
where two runs' headers differ before its verdict.

exit codes: 0 the trace is written; 2 error (bad input, a build or the engine failed)"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "trace",
        help="run a model file through llama.cpp or transformers into a reference trace",
        description="Run a prompt through a reference engine with orchlog's adapter and write its trace.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    engines = p.add_subparsers(title="engines", metavar="ENGINE", parser_class=type(p))
    llama = engines.add_parser(
        "llama",
        help="a GGUF file through llama.cpp (built on first use, or --llama-cpp DIR)",
        description="Run a GGUF file through llama.cpp with orchlog's ggml adapter. llama.cpp is built on first "
        "use from the pinned source (the llama-cpp-python sdist on PyPI; minutes, once per user, cached under "
        "~/.cache/orchlog) unless --llama-cpp names your own install.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    llama.add_argument("model", metavar="MODEL.gguf", type=Path, help="the model file (f32, f16, q8_0, q4_k_m, ...)")
    _common(llama, "llama")
    llama.add_argument(
        "--llama-cpp",
        metavar="DIR",
        help="your own llama.cpp install prefix (`cmake --install build --prefix DIR`; CPU or CUDA build)",
    )
    llama.add_argument("--threads", type=positive_int, default=2, metavar="N", help="CPU threads (default 2)")
    llama.add_argument(
        "--gpu-layers", type=nonnegative_int, default=0, metavar="N", help="layers offloaded to a GPU build (default 0)"
    )
    llama.add_argument("--jobs", "-j", type=positive_int, default=2, metavar="N", help="build jobs (default 2)")
    llama.set_defaults(func=_run_llama)

    hf = engines.add_parser(
        "hf",
        help="a local transformers checkpoint (the torch extra)",
        description="Run a local transformers checkpoint (config.json, weights, tokenizer; nothing is downloaded) "
        "with orchlog.torch, its modules named as llama.cpp's by the shipped map of its model type.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    hf.add_argument("model", metavar="MODEL_DIR", type=Path, help="the checkpoint directory")
    _common(hf, "hf")
    hf.add_argument("--map", metavar="FILE|NAME", help="the name map (default: hf_<model type>, shipped)")
    hf.add_argument("--device", default="cpu", help="torch device (default cpu)")
    hf.set_defaults(func=_run_hf)


def _common(p: argparse.ArgumentParser, engine: str) -> None:
    prompt = p.add_mutually_exclusive_group(required=True)
    prompt.add_argument("--prompt", metavar="TEXT", help="the prompt, tokenized by the model's vocabulary")
    prompt.add_argument("--tokens", metavar="IDS", type=_ids, help="the prompt as token ids: 1,2,3")
    p.add_argument(
        "--n-predict", type=nonnegative_int, default=8, metavar="N", help="greedy decode steps after the prompt (8)"
    )
    p.add_argument(
        "--mode",
        choices=("full", "summary"),
        default="full",
        help="full: every tensor whole (binary stream; the default); summary: JSONL digests",
    )
    p.add_argument("--select", metavar="SELECTOR", help="only these records (ORCH_LOG_SELECT syntax)")
    p.add_argument(
        "--team", default=None, help=f"the trace's team label (default {'llama.cpp' if engine == 'llama' else 'hf'})"
    )
    p.add_argument(
        "--output", "-o", metavar="FILE", type=Path, help=f"the trace (default {engine}.bin, or .jsonl in summary mode)"
    )
    p.add_argument("--json", action="store_true", help="print what was run as one JSON object (for tools)")
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors")


def _ids(text: str) -> list[int]:
    try:
        ids = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected comma-separated token ids, e.g. 1,2,3") from None
    if not ids or min(ids) < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: token ids are integers >= 0")
    return ids


def _out(args: argparse.Namespace, engine: str) -> Path:
    if args.output is not None:
        return Path(args.output)
    return Path(f"{engine}.{'bin' if args.mode == 'full' else 'jsonl'}")


def _run_options(args: argparse.Namespace) -> dict[str, Any]:
    """What both engines' runs take alike: the prompt, the decode steps and how to log."""
    return {
        "text": args.prompt,
        "tokens": args.tokens,
        "n_predict": args.n_predict,
        "mode": args.mode,
        "select": args.select,
    }


def _run_llama(args: argparse.Namespace) -> int:
    from orchlog.llama.trace import trace_llama

    out = _out(args, "llama")
    _say(args, f"llama.cpp: running {args.model.name} ({_prompt_text(args)}, {args.n_predict} decode steps)")
    done = trace_llama(
        args.model,
        out,
        **_run_options(args),
        team=args.team or "llama.cpp",
        llama_cpp=args.llama_cpp,
        threads=args.threads,
        gpu_layers=args.gpu_layers,
        jobs=args.jobs,
        quiet=args.quiet,
    )
    other = f"orchlog trace hf MODEL_DIR {_prompt_option(args)} --n-predict {args.n_predict} -o hf.bin"
    nxt = [
        f"{other} && orchlog compare {shlex.quote(str(out))} hf.bin",
        f"ORCH_LOG_AGAINST={shlex.quote(str(out))} ORCH_LOG_FILE=ours.jsonl YOUR_ENGINE ... && "
        f"orchlog compare {shlex.quote(str(out))} ours.jsonl",
    ]
    return _report(args, "llama.cpp", done, nxt, {"llama_cpp": done.llama.origin})


def _run_hf(args: argparse.Namespace) -> int:
    try:
        from orchlog.torch.trace import trace_hf
    except ModuleNotFoundError as exc:
        raise OrchlogError(
            f"orchlog trace hf needs PyTorch and transformers: pip install 'orchlog[torch]' ({exc})"
        ) from None

    out = _out(args, "hf")
    _say(args, f"transformers: running {args.model} ({_prompt_text(args)}, {args.n_predict} decode steps)")
    done = trace_hf(
        args.model,
        out,
        **_run_options(args),
        team=args.team or "hf",
        map_name=args.map,
        device=args.device,
    )
    other = f"orchlog trace llama MODEL.gguf {_prompt_option(args)} --n-predict {args.n_predict} -o llama.bin"
    nxt = [f"{other} && orchlog compare llama.bin {shlex.quote(str(out))}"]
    return _report(args, "transformers", done, nxt, {"map": done.map_name, "records": done.records})


def _prompt_text(args: argparse.Namespace) -> str:
    return f"{len(args.tokens)} prompt tokens" if args.tokens is not None else "the prompt"


def _prompt_option(args: argparse.Namespace) -> str:
    if args.tokens is not None:
        return "--tokens " + ",".join(str(t) for t in args.tokens)
    return "--prompt " + shlex.quote(args.prompt)


def _say(args: argparse.Namespace, line: str) -> None:
    if not args.quiet and not args.json and sys.stderr.isatty():
        print(line, file=sys.stderr)


class _Traced(Protocol):
    """What both engines' runs say (orchlog.llama.trace.LlamaTrace, orchlog.torch.trace.HfTrace)."""

    @property
    def path(self) -> Path: ...
    @property
    def prompt(self) -> list[int]: ...
    @property
    def decode(self) -> list[int]: ...
    @property
    def prompt_pieces(self) -> list[str]: ...
    @property
    def decode_pieces(self) -> list[str]: ...
    @property
    def seconds(self) -> float: ...


def _report(args: argparse.Namespace, engine: str, done: _Traced, nxt: list[str], extra: dict[str, Any]) -> int:
    out, seconds = done.path, done.seconds
    size = out.stat().st_size if out.is_file() else 0
    if args.json:
        doc = {
            "trace": str(out),
            "engine": engine,
            "mode": args.mode,
            "bytes": size,
            "seconds": round(seconds, 3),
            "prompt": done.prompt,
            "decode": done.decode,
            "text": "".join(done.decode_pieces),
            "next": nxt,
            **extra,
        }
        print(json.dumps(doc, ensure_ascii=False))
        return 0
    if args.quiet:
        return 0
    print(f"trace: {out} ({args.mode}, {_size(size)}; {engine} ran in {seconds:.1f} s)")
    print(f"prompt: {len(done.prompt)} tokens {_shown(done.prompt, done.prompt_pieces)}")
    print(f"decoded: {len(done.decode)} tokens {_shown(done.decode, done.decode_pieces)}")
    print("next:")
    for line in nxt:
        print(f"  {line}")
    return 0


def _shown(ids: list[int], pieces: list[str], most: int = 24) -> str:
    items = [f"{i} {p!r}" if p else str(i) for i, p in zip(ids, pieces)]
    more = f", ... {len(items) - most} more" if len(items) > most else ""
    return "[" + ", ".join(items[:most]) + more + "]"


def _size(n: int) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000  # type: ignore[assignment]
    return f"{n} B"
