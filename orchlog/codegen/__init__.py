"""Generate every language's schema tables from schema/orchlog.schema.yaml.

`orchlog codegen` (or `python -m orchlog.codegen`) renders the templates in
templates/ and the conformance vectors, and writes them into the checkout;
`--check` writes nothing and exits 1 when any committed file differs from
what the schema and templates produce now.
"""

from __future__ import annotations

from orchlog.codegen.generate import GENERATED_MARK, generate_all, main, repo_root

__all__ = ["GENERATED_MARK", "generate_all", "main", "repo_root"]
