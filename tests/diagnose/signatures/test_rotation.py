"""rotation_within_heads: lengths kept within heads, directions turned; the extra turn named in positions."""

from __future__ import annotations

import numpy as np

from orchlog.diagnose.signatures.rotation import rotation_within_heads, whole_positions
from tests.diagnose.synthetic import case_of, noisy

HEADS, DIM = 2, 16


def rope(x: np.ndarray, positions: np.ndarray, style: str = "neox", theta: float = 1e6) -> np.ndarray:
    """x: (tokens, heads * dim); RoPE at `positions`, NEOX (halves) or GPT-J (adjacent pairs)."""
    v = x.reshape(len(x), HEADS, DIM)
    freq = theta ** (-np.arange(DIM // 2) * 2 / DIM)
    ang = positions[:, None, None] * freq[None, None, :]
    c, s = np.cos(ang), np.sin(ang)
    a, b = (v[..., : DIM // 2], v[..., DIM // 2 :]) if style == "neox" else (v[..., 0::2], v[..., 1::2])
    ra, rb = a * c - b * s, a * s + b * c
    out = np.concatenate([ra, rb], -1) if style == "neox" else np.stack([ra, rb], -1).reshape(v.shape)
    return out.reshape(len(x), -1)


K = np.random.default_rng(5).standard_normal((6, HEADS * DIM))
POS = np.arange(6, dtype=np.float64)


def test_rope_applied_twice_turns_each_token_by_its_own_position():
    ref = rope(K, POS)
    case = case_of(ref, noisy(rope(ref, POS)), shape=(HEADS, DIM), at=1)
    found = rotation_within_heads(case)
    assert found is not None and found.evidence["pairing"] == "neox" and found.evidence["head_dim"] == DIM
    assert found.evidence["extra_positions"] == [1, 2, 3, 4, 5]  # token 0 turns by nothing: it agrees
    assert "applied twice" in found.message


def test_a_position_off_by_one_turns_every_token_by_one():
    found = rotation_within_heads(case_of(rope(K, POS), noisy(rope(K, POS + 1)), shape=(HEADS, DIM)))
    assert found is not None and set(found.evidence["extra_positions"]) == {1}
    assert "position offset" in found.message


def test_gptj_pairs_are_recognised():
    found = rotation_within_heads(case_of(rope(K, POS, "gptj"), noisy(rope(K, POS + 3, "gptj")), shape=(HEADS, DIM)))
    assert found is not None and found.evidence["pairing"] == "gptj"


def test_the_other_layout_keeps_only_head_lengths():
    ref, ours = rope(K, POS + 1, "neox"), rope(K, POS + 1, "gptj")
    found = rotation_within_heads(case_of(ref, noisy(ours), shape=(HEADS, DIM), at=2))
    assert found is not None and found.evidence["pairing"] == "none"
    assert "another pairing" in found.message


def test_flat_records_are_tried_with_common_head_sizes():
    found = rotation_within_heads(case_of(rope(K, POS), noisy(rope(K, POS + 2)), at=1))
    assert found is not None and found.evidence["head_dim"] in (16, 32)


def test_noise_a_scale_and_a_permutation_are_not_rotations():
    ref = rope(K, POS)
    assert rotation_within_heads(case_of(ref, noisy(ref), shape=(HEADS, DIM))) is None
    assert rotation_within_heads(case_of(ref, noisy(ref * 1.5), shape=(HEADS, DIM))) is None
    swapped = np.concatenate([ref[:, DIM // 2 : DIM], ref[:, : DIM // 2], ref[:, DIM:]], axis=1)
    assert rotation_within_heads(case_of(ref, swapped, shape=(HEADS, DIM))) is None


def test_whole_positions_are_unambiguous_modulo_two_pi():
    assert whole_positions(3.0) == 3
    assert whole_positions(7 - 2 * np.pi) == 7
    assert whole_positions(-2.0) == -2
    assert whole_positions(0.5) is None
