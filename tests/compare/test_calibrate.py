"""Calibration: envelopes learned from known-good pairs become a tolerance file that passes what is within them,
fails what is beyond, grows past the layers it saw, and says what it was learned from."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from orchlog.compare import CompareOptions, compare
from orchlog.compare.calibrate import DEFAULT_HEADROOM, calibrate_pairs, rules, tolerance_file
from orchlog.tolerances.rules import load_tolerances
from tests import tracegen
from tests.tracegen import record

LAYERS = 4
# The relative noise of a correct run at each layer: it grows with depth, as a quantized reference's does.
NOISE = (0.01, 0.015, 0.02, 0.03)


def _run(rng: np.random.Generator, layers: int, relative: tuple[float, ...] | None, tokens: int = 3):
    """(reference, other) records: `h` at each layer and token, the other off by `relative[layer]` of its norm."""
    ref, other = [], []
    for token in range(tokens):
        for layer in range(layers):
            a = rng.standard_normal(512).astype(np.float32)
            d = rng.standard_normal(512)
            scale = 0.0 if relative is None else relative[layer] * np.linalg.norm(a) / np.linalg.norm(d)
            b = (a + scale * d).astype(np.float32)
            ref.append(record("h", a, token_idx=token, layer=layer))
            other.append(record("h", b, token_idx=token, layer=layer))
        logits = rng.standard_normal(64).astype(np.float32)
        ref.append(record("logits", logits, token_idx=token))
        other.append(record("logits", logits, token_idx=token))
    return ref, other


def _pair(tmp_path, name: str, rng, layers: int = LAYERS, relative=NOISE, mode: str = "full") -> tuple[str, str]:
    ref, other = _run(rng, layers, relative)
    a, b = (
        str(tracegen.emit(tmp_path / f"{name}-{side}", recs, mode=mode)) for side, recs in (("a", ref), ("b", other))
    )
    return a, b


def test_the_envelope_of_each_layer_is_the_largest_difference_seen_times_the_headroom(tmp_path):
    calibration = calibrate_pairs([_pair(tmp_path, "p", np.random.default_rng(1))])
    (h, logits), largest = rules(calibration)
    assert h["match"] == ["h"] and h["metric"] == "rel_l2"
    np.testing.assert_allclose(h["layers"], [DEFAULT_HEADROOM * x for x in NOISE], rtol=2e-2)  # rounded up
    assert all(t >= DEFAULT_HEADROOM * x for t, x in zip(h["layers"], NOISE))  # never below what was seen
    assert 1.2 < h["growth"] < 1.5  # 0.01 -> 0.03 over three layers: about x1.4 a layer
    assert logits["threshold"] == 0.0 and largest == max(h["layers"])
    assert h["observed"]["pairs"] == 3 * LAYERS and h["observed"]["tokens"] == 3


def test_several_pairs_keep_the_largest_of_each(tmp_path):
    rng = np.random.default_rng(2)
    louder = tuple(2 * x for x in NOISE)
    both = calibrate_pairs([_pair(tmp_path, "p", rng), _pair(tmp_path, "q", rng, relative=louder)])
    (h, _), _ = rules(both)
    np.testing.assert_allclose(h["layers"], [DEFAULT_HEADROOM * x for x in louder], rtol=2e-2)
    assert len(both.sources) == 2


def test_the_file_grades_within_the_envelope_as_passing_and_beyond_it_as_failing(tmp_path):
    rng = np.random.default_rng(3)
    noise = tmp_path / "noise.toml"
    noise.write_text(tolerance_file(calibrate_pairs([_pair(tmp_path, "cal", rng)])))
    options = CompareOptions(tolerances=str(noise), diagnose=False)
    within = _pair(tmp_path, "within", rng, relative=tuple(0.8 * x for x in NOISE))
    assert compare(*within, options).status == "ok"
    beyond = tuple(x if layer != 2 else 2.5 * x for layer, x in enumerate(NOISE))  # layer 2 alone, 2.5x its noise
    report = compare(*_pair(tmp_path, "beyond", rng, relative=beyond), options)
    assert report.first is not None
    assert report.status == "diverged" and (report.first.layer, report.first.token_idx) == (2, 0)
    assert report.decided_by == "noise"  # beyond its stage's measured noise, though the logits agree


def test_layers_deeper_than_the_calibration_grow_by_its_growth(tmp_path):
    rng = np.random.default_rng(4)
    tolerances = tmp_path / "noise.toml"
    tolerances.write_text(tolerance_file(calibrate_pairs([_pair(tmp_path, "cal", rng)])))
    rule = load_tolerances(str(tolerances)).rule_for("h", None)
    deeper = rule.threshold_at(np.array([3, 4, 6, -1]))
    assert deeper[1] == pytest.approx(deeper[0] * rule.growth) and deeper[2] == pytest.approx(
        deeper[0] * rule.growth**3
    )
    assert deeper[3] == rule.threshold


def test_summaries_calibrate_too_and_the_file_says_what_it_was_learned_from(tmp_path):
    rng = np.random.default_rng(5)
    pair = _pair(tmp_path, "s", rng, mode="summary")
    calibration = calibrate_pairs([pair])
    assert calibration.bounded_pairs > 0 and calibration.exact_pairs == 3  # the equal logits: by their hashes
    text = tolerance_file(calibration, headroom=2.0)
    tolerances = tmp_path / "noise.toml"
    tolerances.write_text(text)
    loaded = load_tolerances(str(tolerances))
    assert loaded.calibration is not None
    assert loaded.calibration["pairs"] == [list(pair)] and loaded.calibration["headroom"] == 2.0


def test_the_command_writes_the_file_and_compare_names_it(tmp_path):
    rng = np.random.default_rng(6)
    a, b = _pair(tmp_path, "cal", rng)
    out = tmp_path / "noise.toml"
    proc = subprocess.run(
        [sys.executable, "-m", "orchlog", "calibrate", a, b, "-o", str(out)], capture_output=True, text=True
    )
    assert proc.returncode == 0 and "grade with: orchlog compare" in proc.stderr, proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "orchlog", "compare", a, b, "--tolerances", str(out)], capture_output=True, text=True
    )
    assert proc.returncode == 0 and f"calibrated (headroom 1.5) from: {a} vs {b}" in proc.stdout, proc.stdout


def test_an_odd_number_of_traces_is_one_clear_error(tmp_path):
    a, _ = _pair(tmp_path, "cal", np.random.default_rng(7))
    proc = subprocess.run(
        [sys.executable, "-m", "orchlog", "calibrate", a, "-o", str(tmp_path / "x.toml")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "pairs of traces" in proc.stderr
