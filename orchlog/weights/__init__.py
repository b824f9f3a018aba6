"""orchlog.weights: compare two models' weights by name (GGUF, safetensors, .npz), with compare's metrics,
tolerance files and tiers, and name the weights that match only transposed or permuted.

    from orchlog.weights import compare_weights
    report = compare_weights("model.gguf", "hf_checkpoint/")
    print(report)                      # the verdict; orchlog.report.render_text(report), report.to_json()

Modules, one job each: source (open a file or directory, by content), formats (the GGUF, safetensors and
.npz readers), names (GGUF <-> HF name maps, shipped in maps/), layout (llama.cpp's Q/K permutation and the
other relations tried), compare (one pair at a time), result (the report as a value; orchlog/report/weights_text.py renders it).
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from orchlog.tolerances.rules import load_tolerances
from orchlog.weights.compare import WeightsOptions, compare_pair, heads_for, plan_for
from orchlog.weights.result import Input, WeightsReport
from orchlog.weights.source import open_weights
from orchlog.weights.tensors import WeightSource


def compare_weights(
    a: WeightSource | str | os.PathLike[str],
    b: WeightSource | str | os.PathLike[str],
    options: WeightsOptions | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> WeightsReport:
    """Compare b's weights against a's; `progress(done, total)` after each pair."""
    opts = options or WeightsOptions()
    src_a = a if isinstance(a, WeightSource) else open_weights(a)
    src_b = b if isinstance(b, WeightSource) else open_weights(b)
    tolerances = load_tolerances(opts.tolerances).overridden(opts.metric, opts.threshold, opts.cos_tol)
    plan = plan_for(src_a, src_b, opts.map)
    pairs, only_a, only_b = plan.pairs(src_a, src_b)
    rows = []
    for k, (name_a, name_b) in enumerate(pairs):
        # Weights that are not finite, or overflow what dequantizing or a relation computes, are measured
        # (and graded) as such; NumPy's warnings about them would only be noise on stderr.
        with np.errstate(all="ignore"):
            arr_a, arr_b = src_a.load(name_a), src_b.load(name_b)
            role = plan.name_map.is_qk(plan.gguf_name(name_a, name_b))
            n_head = heads_for(role, src_a, src_b)
            info = (src_a.tensors[name_a].dtype, src_b.tensors[name_b].dtype)
            expected = plan.expected(role, n_head, arr_b)
            quantized = (src_a.bound(name_a, arr_a), src_b.bound(name_b, arr_b))
            rows.append(compare_pair(name_a, name_b, arr_a, arr_b, info, tolerances, expected, n_head, quantized))
        if progress:
            progress(k + 1, len(pairs))
    label = plan.name_map.source if plan.name_map.pairs else plan.name_map.name
    return WeightsReport((Input.of(src_a), Input.of(src_b)), label, tolerances, rows, only_a, only_b)


__all__ = ["WeightsOptions", "WeightsReport", "compare_weights", "open_weights"]
