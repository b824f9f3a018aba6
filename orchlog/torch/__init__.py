"""orchlog.torch: log what chosen modules of a PyTorch model compute, through `orchlog.log`.

    import orchlog, orchlog.torch
    orchlog.configure(path="hf.bin", mode="full", team="hf")
    with orchlog.torch.attach(model, modules=["model.embed_tokens", "model.layers.*.self_attn.q_proj",
                                              "model.layers.*", "lm_head"]) as hooks:
        model(input_ids=prompt)                            # step 0, positions 0..n-1
        model(input_ids=next_token, past_key_values=cache) # step 1, position n

Forward hooks on the modules whose paths match the globs log each output
(and, with `inputs=`, each input) as one record per token row: checkpoint =
the module path, layer = the first number in it, stage = None for outputs
and "input" for inputs, step = the model's forward call (0 first), token_idx
= the position of the row's token. Tensors are detached and copied to the
CPU before they are logged, so nothing the model does afterwards (in-place
kernels, buffer reuse) changes what was captured; a row's token id, when
the call had input_ids, goes to its meta. `attention=True` also logs the
attention probabilities per query token, `cache=True` the KV cache each call
returns. Leaving the `with` block removes every hook. docs/torch.md has the details; orchlog/maps/hf_qwen2.toml
maps these paths onto llama.cpp's names.
"""

try:
    import torch  # noqa: F401 - imported first so that a missing PyTorch gets the message below
except ModuleNotFoundError as exc:
    if exc.name != "torch":
        raise  # PyTorch is there but broken: its own error says more
    raise ModuleNotFoundError(
        "orchlog.torch needs PyTorch, which is not installed: pip install 'orchlog[torch]'", name="torch"
    ) from None

from orchlog.torch.attach import Hooks, attach

__all__ = ["Hooks", "attach"]
