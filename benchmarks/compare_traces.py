"""Large traces for the benchmarks, written fast but in the exact canonical layout.

JSONL: a model with `layers` blocks of CHECKPOINTS per token, logits last,
`records` lines in all. Every number is formatted by orchlog's canonical
float printer: values come from a pool of pre-printed f32 numbers and
stats and sketches from pools of pre-printed tuples, so writing a million lines
costs string joins, not a million float printings. The reference run
draws from pool A; the engine run from pool B, which is pool A plus noise
of about 1e-4, and from `diverge_at` (a fraction of the tokens) on, pool C
(noise of 0.5) from layer `layers // 3` on.

Binary stream: full tensors written with the reference encoder.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from orchlog import kernels
from orchlog.encoding.floats import format_float, hex_bits
from orchlog.encoding.record import HeaderInput, RecordInput, encode_header, encode_record
from orchlog.parquet import pack

CHECKPOINTS = ("attn_norm", "Qcur", "Kcur", "Vcur", "attn_out", "ffn_norm", "ffn_out", "l_out")
POOL = 1 << 16
VALUES = 10
HIDDEN, VOCAB = 896, 151936


def _header(team: str, values: int = VALUES) -> HeaderInput:
    return HeaderInput(language="python", created="2026-01-01T00:00:00Z", team=team, model="bench", values=values)


class _Pools:
    def __init__(self, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        base = rng.standard_normal(POOL).astype(np.float32)
        noisy = (base + rng.standard_normal(POOL).astype(np.float32) * 1e-4).astype(np.float32)
        broken = (base + rng.standard_normal(POOL).astype(np.float32) * 0.5).astype(np.float32)
        self.values = [[format_float(float(v), "f32") for v in arr] for arr in (base, noisy, broken)]
        stats = []
        for scale in (0.0, 1e-4, 0.5):
            s = rng.standard_normal((4096, 3)) * 0.01 * (scale > 0)
            lo, hi = -3.0 - np.abs(s[:, 0]) * 100 * scale, 3.0 + np.abs(s[:, 1]) * 100 * scale
            mean, rms = 0.01 + s[:, 2] * scale, 1.0 + np.abs(s[:, 2]) * scale
            stats.append(
                [
                    '"stats":{{"min":{},"max":{},"mean":{},"rms":{},"abs_max":{},"nan_count":0,"inf_count":0}}'.format(
                        *tuple(format_float(float(x), "f64") for x in (a, b, m, r, max(-a, b)))
                    )
                    for a, b, m, r in zip(lo, hi, mean, rms)
                ]
            )
        self.stats = stats
        self.hashes = [os.urandom(32).hex() for _ in range(3 * 4096)]
        # Sketches as the emitters write them (64 f32 rows); the engine's rows differ from the
        # reference's by what a whole-tensor difference of the pool's noise would give (sum of
        # squared row differences about ||a-b||^2 over HIDDEN elements).
        rows = rng.standard_normal((4096, 64)) * np.sqrt(HIDDEN / 64)
        self.sketches = [
            [
                f'"sketch":"{hex_bits(row.astype(np.float32).tolist(), "f32")}"'
                for row in rows + rng.standard_normal(rows.shape) * noise * np.sqrt(HIDDEN / 64)
            ]
            for noise in (0.0, 1e-4, 0.5)
        ]


def write_jsonl_pair(
    path_a: Path, path_b: Path, records: int, layers: int = 32, diverge_at: float = 0.75, seed: int = 0
) -> None:
    """Two canonical JSONL traces of `records` records each (the reference, and an engine that diverges)."""
    pools = _Pools(seed)
    rng = np.random.default_rng(seed + 1)
    per_token = 2 + layers * len(CHECKPOINTS)
    tokens = -(-records // per_token)
    bad_token, bad_layer = int(tokens * diverge_at), layers // 3
    picks = rng.integers(0, POOL, size=(records, VALUES))
    stat_picks = rng.integers(0, 4096, size=records)
    with open(path_a, "w", encoding="utf-8") as fa, open(path_b, "w", encoding="utf-8") as fb:
        fa.write(encode_header(_header("llama.cpp"))[0].decode())
        fb.write(encode_header(_header("engine"))[0].decode())
        seq = 0
        for tok in range(tokens):
            names = (
                [("inp_embd", None)]
                + [(c, layer) for layer in range(layers) for c in CHECKPOINTS]
                + [("result_output", None)]
            )
            for name, layer in names:
                if seq == records:
                    break
                numel = VOCAB if name == "result_output" else HIDDEN
                broken = tok >= bad_token and (layer is None and name != "inp_embd" or (layer or 0) >= bad_layer)
                head = (
                    f'{{"checkpoint":"{name}","team":"%s","token_idx":{tok},"layer":'
                    f'{"null" if layer is None else layer},"stage":null,"step":{tok},"rank":0,"token_id":null,'
                    '"shard_axis":null,"shard_index":null,"num_shards":1,"shard_partial":null,"world_size":1,'
                    f'"seq":{seq},"dtype":"f32","shape":[{numel}],"numel":{numel},"values":['
                )
                idx = picks[seq]
                for f, team, pool in ((fa, "llama.cpp", 0), (fb, "engine", 2 if broken else 1)):
                    vals = pools.values[pool]
                    f.write(
                        head % team
                        + ",".join([vals[i] for i in idx])
                        + "],"
                        + pools.stats[pool][stat_picks[seq]]
                        + ","
                        + pools.sketches[pool][stat_picks[seq]]
                        + f',"blake3":"{pools.hashes[pool * 4096 + stat_picks[seq]]}","meta":{{}},"grafted":false,'
                        + '"full_reason":null}\n'
                    )
                seq += 1
            if seq == records:
                break
    _check_layout(path_a)


def _check_layout(path: Path) -> None:
    """The lines are written by hand for speed; a schema change that this writer missed would send every
    line to the reader's slow path and measure that instead: refuse it."""
    with open(path, "rb") as f:
        f.readline()
        line = f.readline()
    cols = kernels.parse_orchlog_jsonl(line, 2)
    if cols is None or cols["n"] != 1:
        raise SystemExit(
            f"{path}: the benchmark's JSONL lines no longer have the schema's layout; update write_jsonl_pair"
        )


def write_frames_pair(path_a: Path, path_b: Path, records: int, numel: int, seed: int = 0) -> None:
    """Two binary-stream traces with `records` full f32 tensors of `numel` elements; b is a plus noise."""
    rng = np.random.default_rng(seed)
    with open(path_a, "wb") as fa, open(path_b, "wb") as fb:
        fa.write(encode_header(_header("llama.cpp"))[1])
        fb.write(encode_header(_header("engine"))[1])
        for i in range(records):
            a = rng.standard_normal(numel, dtype=np.float32)
            b = a + rng.standard_normal(numel, dtype=np.float32) * np.float32(1e-3)
            for f, arr in ((fa, a), (fb, b)):
                f.write(
                    encode_record(
                        RecordInput(
                            checkpoint="l_out",
                            dtype="f32",
                            shape=(numel,),
                            data=arr.tobytes(),
                            layer=i,
                            token_idx=0,
                            seq=i,
                            team="bench",
                        )
                    ).frame
                )


def write_parquet_pair(path_a: Path, path_b: Path, records: int, numel: int, seed: int = 0) -> None:
    """The traces of write_frames_pair, packed into Parquet (the default codec and row groups)."""
    stream_a, stream_b = path_a.with_name(path_a.name + ".bin"), path_b.with_name(path_b.name + ".bin")
    write_frames_pair(stream_a, stream_b, records, numel, seed)
    for stream, path in ((stream_a, path_a), (stream_b, path_b)):
        pack([stream], path)
        stream.unlink()


def write_rows_pair(path_a: Path, path_b: Path, records: int, hidden: int = HIDDEN, layers: int = 24) -> None:
    """Two full-mode binary streams of `records` hidden-state rows (f32[hidden]) each, as an engine logs them:
    per token, every checkpoint of every layer. b is a plus noise of about 1e-3. Written by the C++ core
    through orchlog.log, so the frames are exactly what emitters write."""
    import orchlog

    rng = np.random.default_rng(0)
    pool = rng.standard_normal((4096, hidden), dtype=np.float32)
    noise = (rng.standard_normal((4096, hidden), dtype=np.float32) * np.float32(1e-3)).astype(np.float32)
    keys = [(layer, name) for layer in range(layers) for name in CHECKPOINTS]
    for path, team, delta in ((path_a, "llama.cpp", None), (path_b, "engine", noise)):
        orchlog.configure(path=str(path), team=team, mode="full")
        for i in range(records):
            row = pool[i % 4096] if delta is None else pool[i % 4096] + delta[(i * 7) % 4096]
            layer, name = keys[i % len(keys)]
            orchlog.log(name, row, token_idx=i // len(keys), layer=layer, step=0)
        orchlog.close()
