"""Three-way grading never passes a pair whose error exceeds the stated multiple of the noise (or its floor),
and never fails one within it: random tensors, noise levels, error levels and correlations between the
error and the noise, written by the emitter as summaries and as whole tensors."""

from __future__ import annotations

import numpy as np
import pytest

from orchlog.compare import CompareOptions, compare
from orchlog.compare.grading.noise import DEFAULT_MULTIPLE
from orchlog.compare.grading.tiers import EPSILON, FLOOR_LEAST, FLOOR_ULPS, MEASURED
from tests import tracegen
from tests.tracegen import record

SIZES = (7, 64, 300, 896, 2048)


def _case(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(a, b, c): the reference, ours and the second reference, f32, with error / noise anywhere from 0.05 to
    20, sometimes exactly at the multiple, the error partly the noise itself (a correct engine against a noisy
    reference shares the reference's own noise) or a structured difference (one spike, one head scaled)."""
    a = rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 2)
    scale = np.linalg.norm(a) * 10.0 ** rng.uniform(-5, -0.5)
    noise = rng.standard_normal(n)
    noise *= scale / np.linalg.norm(noise)
    kind = rng.integers(0, 4)
    if kind == 0:  # unrelated to the noise
        error = rng.standard_normal(n)
    elif kind == 1:  # partly the noise itself
        share = rng.uniform(0, 1)
        error = share * noise / scale + (1 - share) * rng.standard_normal(n) / np.sqrt(n)
    elif kind == 2:  # one spike
        error = np.zeros(n)
        error[rng.integers(0, n)] = 1.0
    else:  # a run of elements scaled
        start = rng.integers(0, n)
        error = np.zeros(n)
        error[start : start + 64] = a[start : start + 64]
    ratio = DEFAULT_MULTIPLE if rng.random() < 0.15 else 10.0 ** rng.uniform(-1.3, 1.3)
    error *= ratio * scale / max(np.linalg.norm(error), 1e-300)
    if rng.random() < 0.1:  # the references agree exactly here: the floor alone decides
        noise = np.zeros(n)
    f32 = np.float32
    return a.astype(f32), (a + error).astype(f32), (a + noise).astype(f32)


def _traces(tmp_path, mode: str, seed: int, count: int = 60):
    rng = np.random.default_rng(seed)
    sides: dict[str, list] = {"a": [], "b": [], "c": []}
    truth = {}
    for k in range(count):
        a, b, c = _case(rng, int(rng.choice(SIZES)))
        for side, array in zip("abc", (a, b, c)):
            sides[side].append(record(f"x{k}", array, token_idx=0))
        a64, b64, c64 = (x.astype(np.float64) for x in (a, b, c))
        truth[f"x{k}"] = (np.linalg.norm(a64 - b64), np.linalg.norm(a64 - c64), np.linalg.norm(a64))
    paths = [tracegen.emit(tmp_path / f"{side}-{mode}", sides[side], mode=mode) for side in "abc"]
    return paths, truth


@pytest.mark.parametrize("mode", ["summary", "full"])
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_pass_is_within_the_multiple_of_the_noise_and_a_failure_beyond_it(tmp_path, mode, seed):
    _check(tmp_path, mode, seed)


@pytest.mark.parametrize("mode", ["summary", "full"])
@pytest.mark.parametrize("seed", range(100, 140))
def test_the_same_over_many_more_draws(tmp_path, mode, seed):
    _check(tmp_path, mode, seed, count=200)


def _check(tmp_path, mode: str, seed: int, count: int = 60) -> None:
    (a, b, c), truth = _traces(tmp_path, mode, seed, count)
    report = compare(a, b, CompareOptions(noise=(str(c),), detail=True, max_pairs=None, diagnose=False))
    floor = max(FLOOR_ULPS * EPSILON["f32"], FLOOR_LEAST)
    seen = {"pass": 0, "fail": 0, "undecided": 0}
    for v in report.findings.kept_pairs():
        error, noise, norm = truth[v.checkpoint]
        allowed = max(DEFAULT_MULTIPLE * noise, floor * norm)
        kind = "fail" if v.failed else "undecided" if v.undecided else "pass"
        seen[kind] += 1
        if kind == "pass":
            assert error <= allowed * (1 + 1e-9), (v.checkpoint, v.noise_ratio, error, noise)
        if kind == "fail":
            assert error > allowed * (1 - 1e-9), (v.checkpoint, v.noise_ratio, error, noise)
        if mode == "full":  # whole tensors decide every pair but those within their rounding of the threshold
            assert kind != "undecided" or abs(error / allowed - 1) < 3 * MEASURED, (v.checkpoint, error / allowed)
    assert seen["pass"] and seen["fail"] and sum(seen.values()) == len(truth)


def test_the_noise_of_several_references_is_the_largest(tmp_path):
    rng = np.random.default_rng(9)
    a = rng.standard_normal(896).astype(np.float32)
    quiet, loud = (
        a + np.float32(1e-3) * rng.standard_normal(896).astype(np.float32),
        a + np.float32(1e-1) * rng.standard_normal(896).astype(np.float32),
    )
    b = a + np.float32(3e-2) * rng.standard_normal(896).astype(np.float32)  # 30x the quiet noise, 0.3x the loud
    paths = [
        tracegen.emit(tmp_path / f"{n}.bin", [record("x", x, token_idx=0)], mode="full")
        for n, x in zip(("a", "b", "q", "l"), (a, b, quiet, loud))
    ]
    alone = compare(paths[0], paths[1], CompareOptions(noise=(str(paths[2]),), diagnose=False))
    both = compare(paths[0], paths[1], CompareOptions(noise=(str(paths[2]), str(paths[3])), diagnose=False))
    assert alone.status == "diverged" and both.status == "ok"
