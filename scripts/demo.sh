#!/usr/bin/env bash
# Set up (first run only) and run orchlog's main job on a bundled example:
# compare a reference trace with an engine's trace and print the report.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/bootstrap.sh
exec .venv/bin/orchlog compare examples/traces/llama_reference.jsonl examples/traces/engine_under_test.jsonl "$@"
