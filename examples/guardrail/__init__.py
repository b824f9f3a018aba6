"""A bundled artifact tree for `orchlog guardrail`, and the generator that writes it (and the tests' trees)."""
