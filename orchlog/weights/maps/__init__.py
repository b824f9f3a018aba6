"""Shipped weight-name maps for `orchlog weights --map NAME` (see orchlog/weights/names.py for the format)."""
