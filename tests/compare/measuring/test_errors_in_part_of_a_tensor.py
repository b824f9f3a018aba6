"""Errors confined to part of a tensor, in summary mode: never passed, never reported later than they start.

A pretend engine logs 896-wide hidden states per layer and token. A bug
enters at a random (token, layer) and, from there on, changes one element by
0.5, scales one 64-wide head by a few percent, or offsets the tail of the
vector by twice the tolerance, at a random place. Without a sketch (what
summary records hold today) the report must name exactly that token and
layer, failing or undecided, and exit 1. With sketches (built here from the
reference encoder, as records will carry them) float noise of 1e-6 relative on
every element is proven within tolerance, and the first divergence stays put.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from orchlog.compare import compare
from orchlog.compare.grading.divergence import Findings
from orchlog.compare.grading.tiers import grade
from orchlog.compare.measuring.metrics import measure
from orchlog.encoding import sketch
from orchlog.read.batch import RecordBatch
from orchlog.read.paths import open_trace
from orchlog.strings import glob_matcher
from orchlog.tolerances.rules import load_tolerances
from tests.tracegen import record, write_jsonl

WIDTH, HEAD, LAYERS, TOKENS = 896, 64, 4, 3
CHECKPOINTS = ("attn_out", "l_out")
CASES = 24  # random placements per kind of error


def _clean(rng: np.random.Generator) -> list[tuple[str, int, int | None, np.ndarray]]:
    """(checkpoint, token, layer, tensor) in execution order: layers' checkpoints, then the logits."""
    out: list[tuple[str, int, int | None, np.ndarray]] = []
    for tok in range(TOKENS):
        for layer in range(LAYERS):
            for name in CHECKPOINTS:
                out.append((name, tok, layer, rng.standard_normal(WIDTH).astype(np.float32)))
        out.append(("logits", tok, None, (rng.standard_normal(1000) * 3).astype(np.float32)))
    return out


def _error(kind: str, rng: np.random.Generator, width: int) -> Callable[[np.ndarray], np.ndarray]:
    """The change a bug makes to a tensor, at a random place."""
    if kind == "one element":
        i = int(rng.integers(width))
        return lambda x: np.where(np.arange(width) == i, x + np.float32(0.5), x)
    if kind == "one head":
        start, scale = HEAD * int(rng.integers(width // HEAD)), np.float32(1 + rng.uniform(0.02, 0.05))
        return lambda x: np.where((np.arange(width) >= start) & (np.arange(width) < start + HEAD), x * scale, x)
    m = int(rng.integers(16, width // 2))
    return lambda x: np.where(np.arange(width) >= width - m, x + np.float32(0.02), x)


def _runs(kind: str, seed: int, noise: float = 0.0):
    """The reference, ours (noise everywhere, the bug from (token, layer) on), and where the bug starts."""
    rng = np.random.default_rng(seed)
    clean = _clean(rng)
    start = (int(rng.integers(TOKENS)), int(rng.integers(LAYERS)))
    bug = _error(kind, rng, WIDTH) if kind else None
    ours = []
    for name, tok, layer, x in clean:
        y = x
        if noise:
            y = (x.astype(np.float64) * (1 + noise * rng.standard_normal(x.size))).astype(np.float32)
        # From the bug on: later layers of its token, and (through the KV cache) those layers of later tokens.
        if bug is not None and layer is not None and tok >= start[0] and layer >= start[1]:
            y = bug(y)
        elif bug is not None and name == "logits" and tok >= start[0]:
            y = y + np.float32(2.0)
        ours.append((name, tok, layer, y.astype(np.float32)))
    return clean, ours, start


def _records(run):
    return [record(name, x, token_idx=tok, layer=layer, step=0, seq=i) for i, (name, tok, layer, x) in enumerate(run)]


KINDS = ("one element", "one head", "tail")


@pytest.mark.parametrize("kind", KINDS)
def test_without_a_sketch_the_true_first_token_and_layer_fail_or_are_undecided_and_exit_1(tmp_path, kind):
    tiers = []
    for seed in range(CASES):
        ref, ours, (token, layer) = _runs(kind, seed)
        a = write_jsonl(tmp_path / f"a{seed}.jsonl", _records(ref))
        b = write_jsonl(tmp_path / f"b{seed}.jsonl", _records(ours))
        report = compare(a, b)
        assert report.exit_code == 1 and report.diverging_token == token, seed
        assert report.first is not None
        assert (report.first.layer, report.first.checkpoint) == (layer, CHECKPOINTS[0]), seed
        assert report.first.tier in ("fail", "undecided")
        tiers.append(report.first.tier)
    # One element of 0.5 in 896 is often hidden from the stats; it is undecided then, never passed.
    assert set(tiers) <= {"fail", "undecided"}


def _batch(path, run, with_sketch: bool) -> RecordBatch:
    batch = RecordBatch.concat(list(open_trace(write_jsonl(path, _records(run))).batches()))
    if with_sketch:  # what the records carry (as the f32 rows the JSON's shortest digits stand for), recomputed
        want = np.array([sketch.compute(x.tobytes(), "f32") for *_, x in run], dtype=np.float32)
        assert np.array_equal(batch.sketch.astype(np.float32), want)
    else:  # as records written before the schema carried a sketch
        batch.sketch = np.full_like(batch.sketch, np.nan)
    return batch


def _grade(tmp_path, ref, ours, with_sketch: bool) -> Findings:
    """The compare pipeline on one round holding every pair, with the records' sketches or without them."""
    a, b = _batch(tmp_path / "a.jsonl", ref, with_sketch), _batch(tmp_path / "b.jsonl", ours, with_sketch)
    idx = np.arange(len(a))
    tolerances = load_tolerances("default")
    table = measure(a, b, idx, idx, glob_matcher(("logits",)))
    findings = Findings(tolerances)
    findings.add(table, grade(table, tolerances))
    return findings


def test_float_noise_on_every_element_passes_with_sketches_and_is_undecided_without(tmp_path):
    for seed in range(CASES):
        ref, ours, _ = _runs("", seed, noise=1e-6)
        with_sketch = _grade(tmp_path, ref, ours, True)
        assert with_sketch.failed == 0 and with_sketch.undecided == 0, seed
        assert with_sketch.bases[2] == len(ref)  # every pair decided by its sketches
        without = _grade(tmp_path, ref, ours, False)
        assert without.failed == 0 and without.undecided == len(ref) and without.first_divergence() is not None


@pytest.mark.parametrize("kind", KINDS)
def test_with_sketches_noise_passes_and_the_bug_is_still_found_where_it_starts(tmp_path, kind):
    decided = 0
    for seed in range(CASES):
        ref, ours, (token, layer) = _runs(kind, seed, noise=1e-6)
        f = _grade(tmp_path, ref, ours, True)
        first = f.first_divergence()
        assert first is not None
        assert f.diverging_token() == token and (first.layer, first.checkpoint) == (layer, CHECKPOINTS[0]), seed
        # Nothing before the bug is left undecided: the sketches prove the noise within tolerance.
        assert first.tier in ("fail", "undecided")
        decided += first.tier == "fail"
    if kind == "one element":
        assert decided == CASES  # 0.5 in 896 elements: the sketch's ‖d‖/√n lower bound clears 1e-2
