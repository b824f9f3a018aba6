#!/usr/bin/env python3
"""Make the two bundled demo traces: a tiny Qwen2-style forward pass, logged twice.

    python examples/traces/make_demo_traces.py      # rewrites the two .jsonl files beside this script

`llama_reference.jsonl` is the reference: the model computed in float64 and
logged (as f32) at the points llama.cpp names in its graph. `engine_under_test.jsonl`
is an engine with two differences: it computes in float32 (harmless noise
around 1e-7) and, from layer 1 on, it forgets to add the Q/K/V projection
biases (Qwen2 has them; engines ported from Llama often do not) -- the bug in
seed story 004. `orchlog compare` should name token 0, layer 1, Qcur.

Both runs see the same tokens (teacher forcing): a 4-token prompt in one
prefill pass (step 0), then two decode steps with a KV cache. Records are
written with orchlog's reference encoder, so the files are byte-for-byte what
an orchlog emitter would write (ORCH_LOG_VALUES=10, summary mode).
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # run from a source checkout without installing

from orchlog.encoding.record import HeaderInput, RecordInput, encode_header, encode_record  # noqa: E402

VOCAB, HIDDEN, HEADS, KV_HEADS, FFN, LAYERS = 256, 64, 4, 2, 128, 4
HEAD_DIM = HIDDEN // HEADS
PROMPT = [17, 101, 33, 250]  # token ids
DECODED = [42, 7]  # what the reference generated; both runs are fed these
EPS, THETA = 1e-6, 10000.0


@dataclasses.dataclass
class Layer:
    attn_norm: np.ndarray
    wq: np.ndarray
    bq: np.ndarray
    wk: np.ndarray
    bk: np.ndarray
    wv: np.ndarray
    bv: np.ndarray
    wo: np.ndarray
    ffn_norm: np.ndarray
    w_gate: np.ndarray
    w_up: np.ndarray
    w_down: np.ndarray


def make_weights(seed: int = 7) -> tuple[np.ndarray, list[Layer], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)

    def w(*shape: int, scale: float = 1.0) -> np.ndarray:
        out: np.ndarray = rng.standard_normal(shape) * scale / np.sqrt(shape[-1])
        return out

    embed = rng.standard_normal((VOCAB, HIDDEN)) * 0.5
    kv = KV_HEADS * HEAD_DIM
    layers = [
        Layer(
            1 + 0.1 * rng.standard_normal(HIDDEN),
            w(HEADS * HEAD_DIM, HIDDEN),
            0.5 * rng.standard_normal(HIDDEN),  # q
            w(kv, HIDDEN),
            0.5 * rng.standard_normal(kv),  # k
            w(kv, HIDDEN),
            0.5 * rng.standard_normal(kv),  # v
            w(HIDDEN, HIDDEN),
            1 + 0.1 * rng.standard_normal(HIDDEN),
            w(FFN, HIDDEN),
            w(FFN, HIDDEN),
            w(HIDDEN, FFN),
        )
        for _ in range(LAYERS)
    ]
    return embed, layers, 1 + 0.1 * rng.standard_normal(HIDDEN), w(VOCAB, HIDDEN, scale=4.0)


def mm(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """x @ w.T in the operands' dtype, summed in float64: float32 BLAS kernels sum in an order that
    depends on the CPU (AVX2 against AVX-512), and the traces must be the same bytes on every machine."""
    out: np.ndarray = (x.astype(np.float64) @ w.T.astype(np.float64)).astype(np.result_type(x, w))
    return out


def rms_norm(x: np.ndarray, weight: np.ndarray) -> np.ndarray:
    out: np.ndarray = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + EPS) * weight
    return out


def rope(x: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """NeoX-style rotary embedding over the last axis of [tokens, heads, head_dim]."""
    half = HEAD_DIM // 2
    freqs = THETA ** (-np.arange(half) / half)
    angle = positions[:, None, None] * freqs[None, None, :]
    cos, sin = np.cos(angle), np.sin(angle)
    x1, x2 = x[..., :half], x[..., half:]
    return np.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)


class Engine:
    """One implementation: a dtype to compute in and whether Q/K/V biases are added from layer 1 on."""

    def __init__(self, dtype: type[np.floating[Any]], biases_after_layer0: bool, team: str, path: Path) -> None:
        self.dtype, self.biases_after_layer0 = dtype, biases_after_layer0
        embed, layers, out_norm, lm_head = make_weights()

        def cast(a: np.ndarray) -> np.ndarray:
            return a.astype(dtype)

        self.embed, self.out_norm, self.lm_head = cast(embed), cast(out_norm), cast(lm_head)
        self.layers = [Layer(*(cast(getattr(layer, f.name)) for f in dataclasses.fields(Layer))) for layer in layers]
        self.k_cache = [np.zeros((0, KV_HEADS, HEAD_DIM), dtype) for _ in range(LAYERS)]
        self.v_cache = [np.zeros((0, KV_HEADS, HEAD_DIM), dtype) for _ in range(LAYERS)]
        self.team, self.seq, self.step = team, 0, 0
        self.out = open(path, "wb")
        self.out.write(
            encode_header(
                HeaderInput(
                    language="python", created="2026-01-01T00:00:00Z", team=team, model="demo-qwen2-tiny", values=10
                )
            )[0]
        )

    def log(self, name: str, x: np.ndarray, positions: np.ndarray, layer: int | None = None) -> None:
        """One record per token position, as an engine logging per token would."""
        for row, pos in zip(np.asarray(x).reshape(len(positions), -1), positions):
            data = np.ascontiguousarray(row, dtype="<f4").tobytes()
            rec = RecordInput(
                checkpoint=name,
                dtype="f32",
                shape=(row.size,),
                data=data,
                team=self.team,
                token_idx=int(pos),
                layer=layer,
                step=self.step,
                seq=self.seq,
                values=10,
            )
            self.out.write(encode_record(rec).jsonl)
            self.seq += 1

    def forward(self, tokens: list[int]) -> np.ndarray:
        start = self.k_cache[0].shape[0]
        pos = np.arange(start, start + len(tokens))
        h = self.embed[tokens]
        self.log("inp_embd", h, pos)
        for i, L in enumerate(self.layers):
            add_bias = i == 0 or self.biases_after_layer0
            x = rms_norm(h, L.attn_norm)
            self.log("attn_norm", x, pos, i)
            q = mm(x, L.wq) + (L.bq if add_bias else 0)
            k = mm(x, L.wk) + (L.bk if add_bias else 0)
            v = mm(x, L.wv) + (L.bv if add_bias else 0)
            self.log("Qcur", q, pos, i)
            self.log("Kcur", k, pos, i)
            self.log("Vcur", v, pos, i)
            q = rope(q.reshape(len(tokens), HEADS, HEAD_DIM), pos)
            k = rope(k.reshape(len(tokens), KV_HEADS, HEAD_DIM), pos)
            self.k_cache[i] = np.concatenate([self.k_cache[i], k])
            self.v_cache[i] = np.concatenate([self.v_cache[i], v.reshape(len(tokens), KV_HEADS, HEAD_DIM)])
            keys = np.repeat(self.k_cache[i], HEADS // KV_HEADS, axis=1)  # grouped-query attention
            vals = np.repeat(self.v_cache[i], HEADS // KV_HEADS, axis=1)
            scores = np.einsum("thd,shd->hts", q, keys) / np.sqrt(HEAD_DIM)
            causal = pos[:, None] >= np.arange(keys.shape[0])[None, :]
            scores = np.where(causal[None], scores, -np.inf)
            probs = np.exp(scores - scores.max(axis=-1, keepdims=True))
            probs /= probs.sum(axis=-1, keepdims=True)
            attn = mm(np.einsum("hts,shd->thd", probs, vals).reshape(len(tokens), HIDDEN), L.wo)
            self.log("attn_out", attn, pos, i)
            h = h + attn
            x = rms_norm(h, L.ffn_norm)
            self.log("ffn_norm", x, pos, i)
            gate = mm(x, L.w_gate)
            ffn = mm((gate / (1 + np.exp(-gate))) * mm(x, L.w_up), L.w_down)
            self.log("ffn_out", ffn, pos, i)
            h = h + ffn
            self.log("l_out", h, pos, i)
        h = rms_norm(h, self.out_norm)
        self.log("result_norm", h, pos)
        logits = mm(h, self.lm_head)
        self.log("result_output", logits, pos)
        self.step += 1
        return logits

    def run(self) -> None:
        self.forward(PROMPT)
        for tok in DECODED:
            self.forward([tok])
        self.out.close()


def main() -> None:
    os.umask(0o022)
    Engine(np.float64, True, "llama.cpp", HERE / "llama_reference.jsonl").run()
    Engine(np.float32, False, "engine-under-test", HERE / "engine_under_test.jsonl").run()


if __name__ == "__main__":
    main()
