"""Runnable examples of orchlog on real engines (importable so the tests can drive them)."""
