#!/usr/bin/env python3
"""Measure `orchlog guardrail` on full-size logits: 128 positions × 151936 logits per side (Qwen's vocabulary).

    .venv/bin/python benchmarks/guardrail.py                   # 2 pairs (one must match, one drifts)
    .venv/bin/python benchmarks/guardrail.py --pairs 12 --json out.json

Each side is a gzipped logits.jsonl of bf16-rounded values, as prefill/decode
runners write them (about 230 MB of JSON per side). Pairs are checked one
after the other, so a 12-pair matrix takes 6 times as long as 2 pairs with
the same peak memory; the default keeps the run short. Two baselines run in
the same minute:

- parse floor: gunzip every side and orjson.loads each line, nothing else
  (the least any reader of this format must do);
- whole-file analyzer: what a first script does (the seed's analyzer):
  load both sides into arrays, then compute the same metrics with NumPy.

The tree is written once under --work (default .cache/bench) and reused.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.compare_measure import ROOT, in_child, load_average, machine
from examples.guardrail.artifacts import Pair, Tree

GUARDRAIL = """
from orchlog.guardrail import guardrail
r = guardrail(%r)
result = {"verdict": r.verdict, "pairs": len(r.pairs), "tokens": sum(len(p.tokens) for p in r.pairs)}
"""

PARSE_FLOOR = """
import gzip, orjson, pathlib
rows = 0
for f in sorted(pathlib.Path(%r).rglob("logits.jsonl.gz")):
    with gzip.open(f, "rb") as lines:
        for line in lines:
            orjson.loads(line)
            rows += 1
result = {"rows": rows}
"""

WHOLE_FILE = """
import gzip, orjson, pathlib
import numpy as np

def load(path):
    with gzip.open(path, "rb") as lines:
        rows = [orjson.loads(line) for line in lines]
    return {r["token_idx"]: np.array(r["logits"], dtype=np.float64) for r in rows}

def log_softmax(x):
    s = x - x.max()
    return s - np.log(np.exp(s).sum())

tokens = 0
for run in sorted(pathlib.Path(%r).glob("runs/kv_aligned_*/seed_*")):
    a, b = load(run / "prefill/logits.jsonl.gz"), load(run / "decode/logits.jsonl.gz")
    for t in sorted(a):
        x, y = a[t], b[t]
        d = np.abs(x - y)
        d.max(); np.percentile(d, 99)
        float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y)))
        int(np.argmax(x)) == int(np.argmax(y))
        lp, lq = log_softmax(x), log_softmax(y)
        float(np.sum(np.exp(lp) * (lp - lq)))
        tokens += 1
result = {"tokens": tokens}
"""


def make_tree(work: Path, tokens: int, vocab: int, pairs: int) -> tuple[Path, int]:
    """The artifact tree (made once) and its bytes of JSON before compression."""
    root = work / f"guardrail-{tokens}x{vocab}-{pairs}p"
    stamp = root / "json_bytes"
    if stamp.exists():
        return root, int(stamp.read_text())
    shutil.rmtree(root, ignore_errors=True)
    # Two distinct runs are written (a must-match copy and a drifting pair); the other seeds link to their files.
    source = Tree(work / f"guardrail-source-{tokens}x{vocab}", gen_len=tokens, vocab=vocab)
    sizes = source.root / "json_bytes.json"
    if not sizes.exists():
        shutil.rmtree(source.root, ignore_errors=True)
        written = {}
        for kv in (0, 1):
            run = source.write_pair(Pair({"kv_aligned": kv, "seed": 0}, drift=kv == 0, encodings=("jsonl", "jsonl")))
            for side in ("prefill", "decode"):
                plain = run / side / "logits.jsonl"
                written[f"{kv}/{side}"] = plain.stat().st_size
                with (
                    open(plain, "rb") as raw,
                    gzip.open(plain.with_suffix(".jsonl.gz"), "wb", compresslevel=1) as packed,
                ):
                    shutil.copyfileobj(raw, packed, 1 << 20)
                plain.unlink()
        sizes.write_text(json.dumps(written))
    json_bytes = {tuple(k.split("/")): v for k, v in json.loads(sizes.read_text()).items()}
    total = 0
    for i in range(pairs):
        kv, seed = i % 2, i // 2
        for side in ("prefill", "decode"):
            src = source.run_dir({"kv_aligned": kv, "seed": 0}) / side
            dst = root / f"runs/kv_aligned_{kv}/seed_{seed}/{side}"
            dst.mkdir(parents=True)
            os.link(src / "logits.jsonl.gz", dst / "logits.jsonl.gz")
            meta = json.loads((src / "metadata.json").read_text())
            (dst / "metadata.json").write_text(json.dumps({**meta, "seed": seed}))
            total += json_bytes[(str(kv), side)]
    stamp.write_text(str(total))
    return root, total


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tokens", type=int, default=128)
    p.add_argument("--vocab", type=int, default=151936)
    p.add_argument("--pairs", type=int, default=2, help="pairs in the matrix, half must match (default 2)")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--work", type=Path, default=ROOT / ".cache" / "bench")
    p.add_argument("--json", type=Path, help="also write the figures here")
    args = p.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    root, json_bytes = make_tree(args.work, args.tokens, args.vocab, args.pairs)
    out = {
        "machine": machine(),
        "load_average_at_start": load_average(),
        "tokens": args.tokens,
        "vocab": args.vocab,
        "pairs": args.pairs,
        "json_bytes": json_bytes,
        "gzip_bytes": sum(f.stat().st_size for f in root.rglob("logits.jsonl.gz")),
    }
    print(f"machine: {out['machine']}; load average {out['load_average_at_start']:.1f}")
    print(
        f"{args.pairs} pairs of {args.tokens} positions x {args.vocab} logits: {json_bytes / 1e6:,.0f} MB of JSON, "
        f"{out['gzip_bytes'] / 1e6:,.0f} MB gzipped"
    )
    rows = 2 * args.pairs * args.tokens
    for name, code in (("guardrail", GUARDRAIL), ("parse_floor", PARSE_FLOOR), ("whole_file", WHOLE_FILE)):
        r = in_child(code % str(root), args.repeat)
        out[name] = r
        print(
            f"  {name:<12} {r['seconds']:7.1f} s  ({r['seconds'] / args.pairs:.1f} s per pair, "
            f"{rows / r['seconds']:,.0f} rows/s, {json_bytes / r['seconds'] / 1e6:,.0f} MB/s of JSON; "
            f"CPU {r['cpu_seconds']:.1f} s)  peak RSS {r['peak_rss'] / 1e6:,.0f} MB  {r['result']}"
        )
    out["guardrail_vs_floor"] = out["parse_floor"]["seconds"] / out["guardrail"]["seconds"]
    out["guardrail_vs_whole_file"] = out["whole_file"]["seconds"] / out["guardrail"]["seconds"]
    print(
        f"  guardrail runs at {out['guardrail_vs_floor']:.2f}x the parse floor's speed and "
        f"{out['guardrail_vs_whole_file']:.2f}x the whole-file analyzer's"
    )
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
