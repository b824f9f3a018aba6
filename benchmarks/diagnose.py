#!/usr/bin/env python3
"""What the diagnosis adds to a compare: the same compare with and without it, in fresh processes.

    .venv/bin/python benchmarks/diagnose.py [--tokens 64] [--layers 8] [--width 4096] [--repeat 3]
    .venv/bin/python benchmarks/diagnose.py --pair .cache/bench/jsonl_1000000_a.jsonl .cache/bench/jsonl_1000000_b.jsonl

Two binary-stream traces (full tensors) of a pretend model: per token, an embedding and per layer six
records of `width` floats; ours differs from layer `layers // 2` on at every token (a missing bias), so
the first divergence is at token 0 in the middle of the stack and the compare walks every record. The
figures: the diagnosis' own time within the run with it (timed inside that run, so the machine's load
cannot tilt it), the ratio of wall times (best of --repeat each, alternating), and both peak RSS.
`--pair A B` measures the same on two traces of your own instead (any format).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.compare_measure import ROOT, in_child, load_average, machine
from orchlog.encoding.record import HeaderInput, RecordInput, encode_header, encode_record

STAGES = (("attn_norm", None), ("Qcur", None), ("Qcur", "add"), ("attn_out", None), ("ffn_inp", None), ("l_out", None))


def write(path: Path, tokens: int, layers: int, width: int, buggy: bool) -> Path:
    rng = np.random.default_rng(0)
    bias = rng.standard_normal(width).astype(np.float32)
    header = HeaderInput(language="python", created="2026-01-01T00:00:00Z")
    seq = 0
    with open(path, "wb") as f:
        f.write(encode_header(header)[1])
        for tok in range(tokens):
            for layer in [None, *range(layers)]:
                for name, stage in [("embd", None)] if layer is None else STAGES:
                    values = rng.standard_normal(width).astype(np.float32)
                    if buggy and layer is not None and layer >= layers // 2:
                        values = values - bias
                    rec = RecordInput(
                        checkpoint=name,
                        dtype="f32",
                        shape=(width,),
                        data=values.tobytes(),
                        stage=stage,
                        layer=layer,
                        token_idx=tok,
                        step=0,
                        seq=seq,
                    )
                    f.write(encode_record(rec).frame)
                    seq += 1
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--width", type=int, default=4096)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--work", type=Path, default=ROOT / ".cache" / "bench" / "diagnose")
    parser.add_argument("--pair", type=Path, nargs=2, metavar=("A", "B"), help="two traces to compare instead")
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    if args.pair:
        a, b = args.pair
    else:
        tag = f"{args.tokens}x{args.layers}x{args.width}"
        a, b = args.work / f"ref-{tag}.bin", args.work / f"ours-{tag}.bin"
        if not (a.exists() and b.exists()):
            write(a, args.tokens, args.layers, args.width, False)
            write(b, args.tokens, args.layers, args.width, True)
    # The diagnosis' own share is timed inside the same run, so the machine's load cannot tilt it.
    code = (
        "import time\n"
        "import orchlog.diagnose.run as run\n"
        "from orchlog.compare import CompareOptions, compare\n"
        "spent = [0.0]\n"
        "inner = run.diagnose_views\n"
        "def timed(*a, **k):\n"
        "    t = time.perf_counter(); out = inner(*a, **k); spent[0] += time.perf_counter() - t; return out\n"
        "run.diagnose_views = timed\n"
        f"r = compare({str(a)!r}, {str(b)!r}, CompareOptions(diagnose={{}}))\n"
        "result = {'kinds': [f.kind for d in r.diagnosis for f in d.findings], 'diagnosis_s': spent[0]}\n"
    )
    runs: dict[str, list[dict[str, Any]]] = {"without": [], "with": []}
    for _ in range(args.repeat):  # alternate, so both see the same load
        runs["without"].append(in_child(code.replace("{}", "False")))
        runs["with"].append(in_child(code.replace("{}", "True")))
    best = {k: min(v, key=lambda r: r["seconds"]) for k, v in runs.items()}
    size = a.stat().st_size + b.stat().st_size
    print(f"machine: {machine()}, load average {load_average():.2f}")
    shape = (
        f"{a} and {b}"
        if args.pair
        else f"{args.tokens} tokens x {args.layers} layers x 6 records of {args.width} floats"
    )
    print(f"traces: {shape}, {size / 1e6:,.0f} MB in all")
    for k in ("without", "with"):
        r = best[k]
        print(f"  compare {k:<8} diagnosis: {r['seconds']:.2f} s  peak RSS {r['peak_rss'] / 1e6:,.0f} MB")
    w = best["with"]
    share = w["result"]["diagnosis_s"] / w["seconds"]
    print(
        f"  the diagnosis itself: {w['result']['diagnosis_s']:.2f} s, {share:.0%} of that run "
        f"(found {w['result']['kinds']}); wall-time ratio {w['seconds'] / best['without']['seconds']:.2f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
