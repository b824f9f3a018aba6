"""Generate every language's schema tables and types from schema/orchlog.schema.yaml.

`orchlog codegen` (or `python -m orchlog.codegen`) loads the schema
(schema.py), renders the templates in templates/ (their per-language
spellings in langs.py, the JSON Schema in jsonschema_gen.py) and the
conformance vectors (vectors.py), and writes them into the checkout;
`--check` writes nothing and exits 1 when any committed file differs from
what the schema and templates produce now. docs/architecture.md lists the
generated files and the recipe for adding a record field.
"""

from __future__ import annotations

from orchlog.codegen.generate import GENERATED_MARK, generate_all, generated_paths, main, repo_root

__all__ = ["GENERATED_MARK", "generate_all", "generated_paths", "main", "repo_root"]
