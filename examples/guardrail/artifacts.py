"""Synthetic artifact trees for `orchlog guardrail`: what prefill/decode (or any A/B) runners write, with the
faults a guardrail must catch.

    tree = Tree(root)                                     # the seed's layout: runs/kv_aligned_{K}/seed_{N}/
    tree.write_config(kv_aligned=[0, 1], seeds=[0, 1])    # config.json declaring the matrix
    tree.write_pair(Pair({"kv_aligned": 1, "seed": 0}))                 # exact copies: must match, and do
    tree.write_pair(Pair({"kv_aligned": 0, "seed": 0}, drift=True))     # bf16-like noise: documented drift
    tree.write_pair(Pair({"kv_aligned": 1, "seed": 1}, diverge_at=2))   # a regression from position 2 on

Logits are seeded by the pair's axis values and rounded to bf16, as an
engine computing in bf16 would write them. The reference side (first of
`sides`) always holds the clean logits; every fault is put into the test
side, so a test knows exactly which side and position must be reported.
Nothing depends on the clock: the same calls write the same bytes.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from orchlog.encoding.record import (
    ALL_VALUES,
    HeaderInput,
    RecordInput,
    encode_header,
    encode_record,
    header_values,
    record_values,
)

TIMESTAMP = "2026-02-07T20:00:00Z"
GIT_COMMIT = "0a1b2c3d"
ENCODINGS = ("jsonl", "jsonl.gz", "orchlog-jsonl", "orchlog-bin", "orchlog-parquet")
DRIFT_SIGMA = 2.0**-8  # relative noise of about one bf16 step: what a different summation order leaves behind
DIVERGENCE = 0.25  # moved up or down, alternately, at every logit of a diverging position: far beyond any threshold


def bf16(x: np.ndarray) -> np.ndarray:
    """Round float32 to the nearest bfloat16 (ties to even), kept as float32."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32)


def _rng(*parts: Any) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(parts).encode()))


@dataclasses.dataclass
class Pair:
    """One run of the matrix, and what (if anything) is wrong with its test side."""

    values: dict[str, int | str]  # the run's axis values, e.g. {"kv_aligned": 1, "seed": 0}
    drift: bool = False  # bf16-like noise on the test side (a pair allowed to drift)
    diverge_at: int | None = None  # the test side's logits part ways from this position (0-based, in the span) on
    encodings: tuple[str, str] = ("jsonl.gz", "jsonl.gz")  # per side, one of ENCODINGS
    span_shift: int = 0  # the test side covers positions this much later (SPAN_MISMATCH)
    token_id_changed_at: int | None = None  # the test side logs another token id here (TOKEN_MISMATCH)
    malformed_at: int | None = None  # the test side's line for this position is cut short (MALFORMED_FILE)
    missing: str | None = None  # "logits", "metadata" or "side": what the test side lacks (a run or a file)
    metadata: dict[str, Any] = dataclasses.field(default_factory=dict)  # test side metadata.json overrides


@dataclasses.dataclass
class Tree:
    root: Path
    run_dirs: str = "runs/kv_aligned_{kv_aligned}/seed_{seed}"
    sides: tuple[str, str] = ("prefill", "decode")
    prompt_len: int = 16
    gen_len: int = 4  # token positions per side: prompt_len, ..., prompt_len + gen_len - 1
    vocab: int = 64
    dtype: str = "bf16"

    def write_config(self, **matrix: Any) -> Path:
        """config.json: the seed's keys (kv_aligned=, seeds=) or the general ones (axes=, must_match=, ...);
        dtype, prompt_len and gen_len are added in the seed's shape unless given."""
        doc = dict(matrix)
        if "axes" not in doc:
            doc = {"dtype": self.dtype, "prompt_len": self.prompt_len, "gen_len": self.gen_len, **matrix}
        return _write(self.root / "config.json", json.dumps(doc, indent=2) + "\n")

    def run_dir(self, values: dict[str, Any]) -> Path:
        path = self.run_dirs
        for axis, value in values.items():
            path = path.replace("{" + axis + "}", str(value))
        return self.root / path

    def write_pair(self, pair: Pair) -> Path:
        run = self.run_dir(pair.values)
        # One sequence both sides see; a shifted test side sees a later stretch of it.
        n, shift = self.gen_len, pair.span_shift
        positions = np.arange(self.prompt_len, self.prompt_len + n + shift)
        token_ids = _rng("ids", sorted(pair.values.items())).integers(0, self.vocab, n + shift)
        logits = bf16(_rng("logits", sorted(pair.values.items())).standard_normal((n + shift, self.vocab)) * 4)
        self._write_side(run / self.sides[0], pair, positions[:n], token_ids[:n], logits[:n], pair.encodings[0], {})
        if pair.missing == "side":
            return run
        positions, token_ids, test = positions[shift:], token_ids[shift:], logits[shift:]
        if pair.drift:
            noise = _rng("drift", sorted(pair.values.items())).standard_normal(test.shape) * DRIFT_SIGMA
            test = bf16(test * (1 + noise))
        if pair.diverge_at is not None:
            test = test.copy()
            # Alternating signs, so the distribution changes too (a uniform shift would leave softmax as it is).
            test[pair.diverge_at :] += DIVERGENCE * np.where(np.arange(self.vocab) % 2, 1, -1).astype(np.float32)
        test_ids = token_ids.copy()
        if pair.token_id_changed_at is not None:
            test_ids[pair.token_id_changed_at] = (test_ids[pair.token_id_changed_at] + 1) % self.vocab
        self._write_side(
            run / self.sides[1], pair, positions, test_ids, test, pair.encodings[1], pair.metadata, test_side=True
        )
        return run

    def _metadata(self, pair: Pair, side: str, start: int) -> dict[str, Any]:
        return {
            "dtype": self.dtype,
            "prompt_len": self.prompt_len,
            "gen_len": self.gen_len,
            **pair.values,
            "mode": side,
            "timestamp": TIMESTAMP,
            "git_commit": GIT_COMMIT,
            "token_span": {"start": start, "count": self.gen_len},
        }

    def _write_side(
        self,
        directory: Path,
        pair: Pair,
        positions: np.ndarray,
        token_ids: np.ndarray,
        logits: np.ndarray,
        encoding: str,
        overrides: dict[str, Any],
        test_side: bool = False,
    ) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        fault = pair if test_side else Pair(pair.values)
        if fault.missing != "metadata":
            meta = {**self._metadata(pair, directory.name, int(positions[0])), **overrides}
            _write(directory / "metadata.json", json.dumps(meta, indent=2) + "\n")
        if fault.missing == "logits":
            return
        rows = [(int(t), int(i), row) for t, i, row in zip(positions, token_ids, logits)]
        if encoding in ("jsonl", "jsonl.gz"):
            # orjson: ten times faster than json for a 151936-wide row, and as valid (shortest round-trip floats).
            lines = [
                orjson.dumps({"token_idx": t, "token_id": i, "logits": row.astype(np.float64).tolist()}) + b"\n"
                for t, i, row in rows
            ]
            if fault.malformed_at is not None:
                lines[fault.malformed_at] = lines[fault.malformed_at][:40] + b"\n"
            data = b"".join(lines)
            name = f"logits.{encoding}"
            (directory / name).write_bytes(gzip.compress(data, mtime=0) if encoding.endswith(".gz") else data)
        elif encoding.startswith("orchlog-") and encoding in ENCODINGS:
            _write_orchlog(directory, rows, encoding[len("orchlog-") :])
        else:
            raise ValueError(f"encoding {encoding!r} is not one of {', '.join(ENCODINGS)}")


def _write_orchlog(directory: Path, rows: list[tuple[int, int, np.ndarray]], kind: str) -> None:
    """An orchlog trace of the logits, every value kept, as an engine logging with ORCH_LOG_VALUES=all writes it
    (`kind` jsonl or bin), or as `orchlog pack` leaves it (parquet)."""
    head = HeaderInput(language="python", created=TIMESTAMP, git_commit=GIT_COMMIT, values=ALL_VALUES)
    records = [
        RecordInput(
            checkpoint="logits",
            dtype="f32",
            shape=row.shape,
            data=row.astype("<f4").tobytes(),
            token_idx=t,
            seq=seq,
            values=ALL_VALUES,
            token_id=i,
        )
        for seq, (t, i, row) in enumerate(rows)
    ]
    if kind == "parquet":
        from orchlog.parquet import Writer

        with Writer(directory / "trace.parquet", headers=[header_values(head)]) as w:
            for r in records:
                w.append(record_values(r))
        return
    jsonl = kind == "jsonl"
    out = [encode_header(head)[0 if jsonl else 1]]
    out += [encode_record(r).jsonl if jsonl else encode_record(r).frame for r in records]
    (directory / ("trace.jsonl" if jsonl else "trace.bin")).write_bytes(b"".join(out))


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
