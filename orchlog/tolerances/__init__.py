"""Tolerances: the rules that grade a pair, `--tolerances NAME|FILE`.

rules (the tolerance file: rules by name pattern, stage and layer, their metric and threshold; Tolerances
and load_tolerances), tomlfile (reading and writing the TOML), presets (the preset measured for each
weight type, picked from a trace's own header). The shipped files are the .toml files here: default,
absolute, weights, and one per quantization (f16, bf16, q8_0, q6_k, q5_k, q4_k; docs/noise.md).
"""
