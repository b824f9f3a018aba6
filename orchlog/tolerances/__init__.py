"""Shipped tolerance files for `orchlog compare --tolerances NAME` (format: orchlog/compare/tolerances.py)."""
