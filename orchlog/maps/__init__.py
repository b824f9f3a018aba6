"""Name maps and what they say about tensors: `--map NAME|FILE` for compare, weights, graft-report and
orchlog.torch.attach(names=...).

namemap (the map file: renames by pattern, views, derived tensors, shard layouts, windows; the shipped
maps are the .toml files here), views (a tensor seen in another layout: transposed, reshaped, heads
permuted), derived (a tensor made from others: hidden + residual), shards (a tensor gathered from its
ranks' pieces).
"""
