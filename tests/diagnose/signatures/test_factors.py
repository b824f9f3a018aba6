"""scale, per_token_scale, per_channel_scale and softmax_temperature on synthetic tensors."""

from __future__ import annotations

import numpy as np

from orchlog.diagnose.case import Side
from orchlog.diagnose.signatures.factors import per_channel_scale, per_token_scale, scale, softmax_temperature
from tests.diagnose.synthetic import case_of, noisy, reference


def test_a_constant_factor_is_named_with_its_value_and_its_meaning():
    ref = reference()
    found = scale(case_of(ref, noisy(ref / np.sqrt(128))))
    assert found is not None and found.confidence > 0.99
    assert abs(found.evidence["factor"] - 1 / np.sqrt(128)) < 1e-6
    assert found.evidence["factor_is"] == "1/sqrt(128)"
    assert "the same at 6 tokens" in found.message


def test_one_token_seen_says_that_a_per_token_factor_cannot_be_told_apart():
    ref = reference(tokens=1)
    found = scale(case_of(ref, noisy(ref * 1.7)))
    assert found is not None and "one token seen" in found.message


def test_float_noise_is_not_a_scale():
    ref = reference()
    assert scale(case_of(ref, noisy(ref))) is None


def test_factors_that_differ_by_token_are_per_token_not_scale():
    ref = reference()
    ours = noisy(ref * (1 + 0.002 * np.arange(1, 7))[:, None])
    case = case_of(ref, ours)
    assert scale(case) is None
    found = per_token_scale(case)
    assert found is not None and found.evidence["tokens"] == 6
    assert "near 1" in found.message


def test_an_epsilon_difference_is_measured_from_the_inputs():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 64)) * 0.02  # small activations: the epsilon matters
    w = 1 + 0.1 * rng.standard_normal(64)
    ms = np.mean(x**2, axis=1, keepdims=True)
    ref, ours = x * w / np.sqrt(ms + 1e-6), x * w / np.sqrt(ms)
    case = case_of(ref, noisy(ours), token_inputs={t: Side.of(x[t]) for t in range(5)})
    found = per_token_scale(case)
    assert found is not None
    assert abs(found.evidence["epsilon_difference"] - 1e-6) < 1e-8
    assert "epsilon smaller by 1e-06" in found.message


def test_the_same_vector_of_factors_at_every_token_is_per_channel():
    ref = reference()
    g = 1 + 0.1 * np.random.default_rng(1).standard_normal(64)
    case = case_of(ref, noisy(ref * g))
    found = per_channel_scale(case)
    assert found is not None and found.evidence["channels"] == 64
    assert abs(found.evidence["factor_mean"] - g.mean()) < 1e-6
    assert scale(case) is None and per_token_scale(case) is None


def test_per_channel_needs_three_tokens_and_declines_a_constant():
    ref = reference()
    g = 1 + 0.1 * np.random.default_rng(1).standard_normal(64)
    assert per_channel_scale(case_of(ref[:2], noisy(ref[:2] * g))) is None
    assert per_channel_scale(case_of(ref, noisy(ref * 2))) is None


def _softmax(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_probabilities_with_a_missing_one_over_sqrt_d_show_a_slope_of_sqrt_d():
    scores = np.random.default_rng(2).standard_normal((3, 4, 16))
    ref, ours = _softmax(scores / 4.0), _softmax(scores)  # 4 = sqrt(16)
    found = softmax_temperature(case_of(ref.reshape(3, -1), noisy(ours.reshape(3, -1)), shape=(4, 16)))
    assert found is not None and abs(found.evidence["slope"] - 4.0) < 1e-3
    assert found.evidence["slope_is"] == "sqrt(16)"


def test_scaled_logits_are_a_temperature_and_not_a_scale():
    ref = reference(n=256) * 3
    case = case_of(ref, noisy(ref * 0.5), is_logits=True)
    assert scale(case) is None
    found = softmax_temperature(case)
    assert found is not None and abs(found.evidence["slope"] - 0.5) < 1e-6


def test_clean_probabilities_and_logits_claim_no_temperature():
    scores = np.random.default_rng(2).standard_normal((3, 4, 16))
    p = _softmax(scores).reshape(3, -1)
    assert softmax_temperature(case_of(p, noisy(p), shape=(4, 16))) is None
    ref = reference(n=256) * 3
    assert softmax_temperature(case_of(ref, noisy(ref), is_logits=True)) is None


def test_on_a_summary_the_scale_claims_less_and_checks_the_rms():
    ref = reference(n=512)
    found = scale(case_of(ref, noisy(ref * 2), summary=10))
    assert found is not None and found.confidence <= 0.6 and found.evidence["rms_agrees"]
    # The leading values are scaled, but the whole tensor's rms says otherwise: no claim.
    ours = ref.copy()
    ours[:, :10] *= 2
    assert scale(case_of(ref, noisy(ours), summary=10)) is None


def test_a_temperature_is_found_in_causal_rows_of_two_cells_from_every_head_and_token():
    # The first diverging token of a causal attention has two cells a head: no row alone can show a slope,
    # but the same one in every head at every later token does.
    from orchlog.diagnose.case import Case, Pair, Where

    rng = np.random.default_rng(3)
    pairs = []
    for token in range(1, 7):
        scores = rng.standard_normal((14, token + 1)) * 4
        ref, ours = _softmax(scores / 8.0), _softmax(scores)  # 8 = sqrt(64)
        pairs.append(Pair(Where("kq_soft_max", 0, None, token), Side.of(ref), Side.of(noisy(ours))))
    found = softmax_temperature(Case(pairs[0], tokens=pairs))
    assert found is not None and found.evidence["slope_is"] == "sqrt(64)" and found.evidence["rows"] == 14 * 6
    assert softmax_temperature(Case(pairs[0], tokens=[pairs[0]])) is not None  # two cells a row still hold a slope


def test_against_a_measured_noise_a_factor_holding_most_of_the_excess_is_claimed():
    from orchlog.diagnose.stats import against_noise

    ref = reference()
    # A factor per token, 1.05 to 1.10, over a noise of 3% of each element (a quantized reference's own).
    noise = 0.03 * np.random.default_rng(4).standard_normal(ref.shape) * np.abs(ref)
    ours = ref * (1.05 + 0.01 * np.arange(6))[:, None] + noise
    case = case_of(ref, ours)
    assert per_token_scale(case) is None  # 70% explained: short of 90% of the whole difference
    share = float(np.sum(noise[0] ** 2) / np.sum((ours - ref)[0] ** 2))  # the noise's part at the diverging token
    with against_noise(share):
        found = per_token_scale(case)  # ... but most of what the noise leaves
    assert found is not None and 0.6 < found.evidence["explained_min"] < 0.9
