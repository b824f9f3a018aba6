"""A tensor-parallel NumPy MLP and its unsharded twin, each traced through orchlog.log: the
column-parallel projections log each rank's slice, the row-parallel one each rank's partial sum, and
`orchlog compare` gathers them before comparing, by the shard layout each record gives (or, for
records that give none, by examples/tensor_parallel/shards.toml)."""
