"""The seed's matrix as the guardrail tests write it, with faults put into chosen runs."""

from __future__ import annotations

from examples.guardrail.artifacts import Pair, Tree

KV_ALIGNED = (0, 1)
SEEDS = (0, 1, 2)


def write_matrix(
    tree: Tree,
    faults: dict[tuple[int, int], dict] | None = None,
    kv_aligned=KV_ALIGNED,
    seeds=SEEDS,
    config: bool = True,
) -> Tree:
    """kv_aligned=1 pairs are exact copies, kv_aligned=0 pairs carry bf16-like drift; `faults[(kv, seed)]`
    sets Pair arguments of one run, e.g. {(1, 2): {"diverge_at": 1}}. With config, config.json declares the matrix."""
    faults = faults or {}
    if config:
        tree.write_config(kv_aligned=list(kv_aligned), seeds=list(seeds))
    for kv in kv_aligned:
        for seed in seeds:
            tree.write_pair(Pair({"kv_aligned": kv, "seed": seed}, **{"drift": kv == 0, **faults.get((kv, seed), {})}))
    return tree
