"""The writer's defaults, apart from the schema so that the CLI can offer them without importing pyarrow."""

# Chosen by benchmarks/parquet_bench.py on synthetic transformer activations
# (docs/parquet.md, "Codec"): zstd level 1 is as small as level 3 on float data
# and much faster; lz4 and snappy find nothing to save in float mantissas.
DEFAULT_CODEC = "zstd"
DEFAULT_LEVEL = 1
CODECS = ("zstd", "lz4", "snappy", "gzip", "none")
# A row group is the unit of reading: a tensor is read with the rest of its row group, and
# memory while packing or streaming scales with it (docs/parquet.md, "Performance"). 16 MiB
# reads one 4 MiB tensor of a 2 GiB trace in 15 MiB, packs in about 220 MiB and streams in
# about 130 MiB, with a 250 KiB footer.
DEFAULT_ROW_GROUP_BYTES = 16 << 20
