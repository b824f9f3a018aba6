"""Measuring: the figures of each pair.

metrics (every metric of a round's pairs, columnar), tensor_metrics (of two whole tensors), logits (of two
logits vectors), bounds (what a summary's stats and sketch prove about a metric, as an interval),
noise_ratio (the error over the noise, with the interval its sketches allow).
"""
