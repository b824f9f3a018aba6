"""The traces mutants are made from: every emitter's output, in every format orchlog reads.

`make_seeds(directory)` writes them and returns one `Seed` per trace: a file,
or a directory when the format needs a companion (legacy logits and their
metadata.json) or when the point is a directory of mixed formats. The Python
emitter (the C++ core), its Parquet run, `orchlog pack` and the legacy
formats are always made; the C++, C and Rust emitters' traces join when
`native=True` and their builds are at hand (the slow tier and the benchmark).
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import shutil
from pathlib import Path

import numpy as np

import orchlog
from orchlog.emit import api as emitter


@dataclasses.dataclass(frozen=True)
class Seed:
    name: str
    path: Path  # the trace: a file, or a directory
    kind: str  # how mutants are made: "jsonl", "frames", "parquet", "json" (pretty-printed), "logits-dir", "dir"


def _tensors(rng: np.random.Generator) -> list[tuple[str, np.ndarray, dict]]:
    """A small forward pass: a few checkpoints per token, several dtypes, one record with every value."""
    out: list[tuple[str, np.ndarray, dict]] = []
    for token in range(3):
        out.append(("embedding", rng.standard_normal(24).astype(np.float32), {"token_idx": token}))
        for layer in range(2):
            out.append(
                (
                    "attn_norm",
                    rng.standard_normal((2, 8)).astype(np.float32),
                    {"token_idx": token, "layer": layer, "stage": "norm", "step": 0},
                )
            )
        out.append(("ffn_out", rng.standard_normal(12).astype(np.float16), {"token_idx": token, "layer": 1}))
        out.append(("logits", rng.standard_normal(32).astype(np.float32), {"token_idx": token, "meta": {"k": 1}}))
    special = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1e-40, 3.5], dtype=np.float64)
    out.append(("special", special, {"token_idx": 3}))
    out.append(("ids", np.arange(6, dtype=np.int32), {"token_idx": 3, "stage": "ids"}))
    return out


def _python_emitter(directory: Path, rng: np.random.Generator, **configure) -> None:
    assert orchlog.configure(team="fuzz", **configure)
    for checkpoint, tensor, key in _tensors(rng):
        orchlog.log(checkpoint, tensor, **key)
    emitter.close()


def _gzip(src: Path, dst: Path) -> Path:
    dst.write_bytes(gzip.compress(src.read_bytes(), mtime=0))
    return dst


def _json_lines(path: Path, docs: list[dict]) -> Path:
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    return path


def _legacy(directory: Path, rng: np.random.Generator) -> list[Seed]:
    seeds = []
    checkpoint = [
        {"checkpoint": "embedding", "team": "llama.cpp", "token_idx": t, "dtype": "f32", "shape": "[8]",
         "values": [round(float(v), 4) for v in rng.standard_normal(8)]}
        for t in range(4)
    ]  # fmt: skip
    seeds.append(Seed("legacy-checkpoint", _json_lines(directory / "legacy_checkpoint.jsonl", checkpoint), "jsonl"))
    trace = [
        {"name": name, "shape": [1, 16], "dtype": "F32", "blake3": f"{i:02x}" * 32, "rms": 0.5 + i,
         "num_elements": 16, "seq": i // 2, "layer": i % 3 - 1, "stage": name}
        for i, name in enumerate(["attn_out", "ffn_out", "logits", "attn_out"])
    ]  # fmt: skip
    seeds.append(Seed("legacy-trace", _json_lines(directory / "legacy_trace.jsonl", trace), "jsonl"))
    pretty = directory / "legacy_pretty.trace"
    pretty.write_text(json.dumps(trace[0], indent=2))
    seeds.append(Seed("legacy-trace-pretty", pretty, "json"))
    logits = directory / "logits"
    logits.mkdir()
    rows = [
        {"token_idx": t, "token_id": 100 + t, "logits": [round(float(v), 3) for v in rng.standard_normal(16)]}
        for t in range(4)
    ]
    _gzip(_json_lines(directory / "logits.tmp", rows), logits / "logits.jsonl.gz")
    (directory / "logits.tmp").unlink()
    (logits / "metadata.json").write_text(json.dumps({"dtype": "f32", "seed": 0, "kv_aligned": 1, "mode": "prefill"}))
    seeds.append(Seed("legacy-logits", logits, "logits-dir"))
    return seeds


def _native_emitters(directory: Path) -> list[Seed]:
    """Traces from the Rust crate, the C++ macros and the C ABI (the cross-language producers), where they build."""
    from tests.crosslang.producers import PRODUCERS, launch

    tensors = Path(__file__).resolve().parent.parent / "crosslang" / "tensors.json"
    seeds = []
    for producer in PRODUCERS:
        if producer.language == "python":
            continue  # made above, through orchlog.configure
        out = directory / producer.language
        out.mkdir()
        knobs = {"ORCH_LOG_FILE": str(out / "trace.jsonl"), "ORCH_LOG_MODE": "both", "ORCH_LOG_VALUES": "4"}
        try:
            done = launch(producer, tensors, knobs, out)
        except BaseException:  # no compiler or cargo here (pytest.skip included): left out, as the docstring says
            continue
        if done.returncode == 0 and (out / "trace.jsonl").exists():
            seeds.append(Seed(f"{producer.language}-jsonl", out / "trace.jsonl", "jsonl"))
            seeds.append(Seed(f"{producer.language}-binary", out / "trace.jsonl.bin", "frames"))
    return seeds


def make_seeds(directory: Path, native: bool = False) -> list[Seed]:
    """Write every seed trace under `directory` (made if needed); deterministic apart from the run header's time."""
    from orchlog.parquet import pack

    directory.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("SOURCE_DATE_EPOCH", "1767225600")
    rng = np.random.default_rng(15)
    jsonl = directory / "python.jsonl"
    _python_emitter(directory, rng, path=str(jsonl), mode="both", values=4)
    frames = Path(f"{jsonl}.bin")
    every = directory / "python_all_values.jsonl"
    _python_emitter(directory, np.random.default_rng(16), path=str(every), values="all")
    parquet_run = directory / "python_run.parquet"
    _python_emitter(directory, np.random.default_rng(17), path=str(parquet_run), format="parquet")
    packed = directory / "packed.parquet"
    pack([frames], packed)
    seeds = [
        Seed("python-jsonl", jsonl, "jsonl"),
        Seed("python-jsonl-all-values", every, "jsonl"),
        Seed("python-binary", frames, "frames"),
        Seed("python-jsonl-gz", _gzip(jsonl, directory / "python.jsonl.gz"), "jsonl"),
        Seed("python-binary-gz", _gzip(frames, directory / "python.bin.gz"), "frames"),
        Seed("python-parquet-run", parquet_run, "parquet"),
        Seed("packed-parquet", packed, "parquet"),
    ]
    seeds += _legacy(directory, rng)
    mixed = directory / "mixed"
    mixed.mkdir()
    for src in (jsonl, frames, packed):
        shutil.copy(src, mixed / src.name)
    seeds.append(Seed("directory", mixed, "dir"))
    if native:
        seeds += _native_emitters(directory)
    return seeds


TOOLS = Path(__file__).resolve().parent.parent / "read" / "data" / "tools"
# Other tools' dumps (tests/read/data/tools, made by the tools themselves): how each is damaged.
TOOL_SEEDS = (
    ("hf-debugger", "hf-clean", "dir"),
    ("sglang-dumper", "sglang-clean", "dir"),
    ("sglang-tensor-dumper", "tensor-dumper-clean", "dir"),
    ("msprobe-tensor", "msprobe-tensor-clean", "dir"),
    ("msprobe-statistics", "msprobe-statistics-clean", "dir"),
    ("polygraphy", "polygraphy-clean.json", "polygraphy"),
    ("polygraphy-inputs", "polygraphy-inputs.json", "polygraphy"),
    ("llama-eval-callback", "llama-eval-callback-clean.txt", "text"),
    ("pytorch-twin", "pytorch-twin-clean.txt", "text"),
    ("llama-logits", "llamacpp-model.bin", "raw"),
    ("torchtitan-numerics", "numerics/torchtitan-clean.log", "text"),
    ("debugmode-hashes", "numerics/debugmode-hashes.txt", "text"),
)


def make_tool_seeds(directory: Path) -> list[Seed]:
    """The other tools' dumps as seeds, copied under `directory`, plus a vllm-neuron capture."""
    directory.mkdir(parents=True, exist_ok=True)
    seeds = []
    for name, source, kind in TOOL_SEEDS:
        src = TOOLS / source
        dst = directory / name
        if src.is_dir():
            shutil.copytree(src, dst)
        else:
            dst = dst.with_suffix("".join(src.suffixes[-1:]))
            shutil.copy(src, dst)
        seeds.append(Seed(name, dst, kind))
    neuron = directory / "vllm-neuron" / "prompt_ab12" / "step_0"
    neuron.mkdir(parents=True)
    shutil.copy(
        TOOLS
        / "msprobe-tensor-clean/step0/rank0/dump_tensor_data/Module.model.layers.1.mlp.down_proj.Linear.forward.0.output.0.pt",
        neuron / "model.layers.1.mlp.down_proj_rank0.pt",
    )
    seeds.append(Seed("vllm-neuron", directory / "vllm-neuron", "dir"))
    return seeds
