"""The error inside the first divergence's tensor: its histogram, by index, and per head for attention."""

from __future__ import annotations

import numpy as np

from orchlog.report.error_shape import is_attention, of_difference


def test_histogram_counts_every_positive_difference_and_sets_zeros_and_nonfinite_apart():
    rng = np.random.default_rng(0)
    diff = np.abs(rng.standard_normal(1000)) * 10.0 ** rng.integers(-6, 0, 1000)
    diff[:100] = 0
    diff[100:105] = np.nan
    diff[105] = np.inf
    s = of_difference(diff, None, "ffn_out")
    assert s.zeros == 100 and s.nonfinite == 6 and sum(s.hist_counts) == 1000 - 106
    assert s.hist_edges[0] <= np.nanmin(diff[diff > 0]) and s.hist_edges[-1] >= diff[np.isfinite(diff)].max() * 0.999


def test_error_by_index_keeps_each_bins_worst_and_shows_nonfinite_as_infinite():
    diff = np.zeros(2048)
    diff[1000] = 5.0
    diff[2047] = np.nan
    s = of_difference(diff, None, "x")
    assert s.index_group == 4 and len(s.index_max) == 512
    assert s.index_max[250] == 5.0 and s.index_max[-1] == np.inf and max(s.index_max[:250]) == 0


def test_attention_tensors_are_drawn_per_head_over_their_other_axes():
    diff = np.zeros((3, 8, 64))  # tokens, heads, head_dim
    diff[1, 5, 7] = 2.0
    s = of_difference(diff.ravel(), diff.shape, "blk.0.attn_q")
    assert s.head_axis == (8, 64) and s.heads is not None and np.array(s.heads).shape == (8, 64)
    assert s.heads[5][7] == 2.0 and np.count_nonzero(s.heads) == 1


def test_many_heads_share_rows_showing_their_worst():
    diff = np.zeros((128, 16))
    diff[127, 2] = 1.0
    s = of_difference(diff.ravel(), diff.shape, "Kcur")
    assert s.heads is not None and len(s.heads) == 64 and s.heads[63][2] == 1.0


def test_only_attention_names_with_a_head_sized_last_axis_are_split_into_heads():
    assert is_attention("Qcur", (4, 8, 64)) and is_attention("model.layers.0.self_attn.q_proj", (1, 14, 64))
    assert not is_attention("ffn_out", (4, 64))  # not attention
    assert not is_attention("Qcur", (896,))  # one axis: heads unknown
    assert not is_attention("attn_out", (1, 896))  # last axis too wide for one head
