"""Shipped name maps for `orchlog compare --map NAME` (see orchlog/compare/namemap.py for the format)."""
