"""Compare the tensor-parallel MLP with its unsharded twin.

    python -m examples.tensor_parallel --ways 4                       # agrees once gathered: exit 0
    python -m examples.tensor_parallel --ways 2 --bug rank1_up_shard  # located at ffn_up, in rank 1's shard
    python -m examples.tensor_parallel --bug rank1_down_shard         # a wrong partial sum: found, not pinned on a rank
    python -m examples.tensor_parallel --map                          # records without shard fields, shards.toml

The sharded run's records say how they are split (their shard fields); with
--map they do not, and examples/tensor_parallel/shards.toml says it instead.
Traces go to --out (default: a temporary directory); the report ends with
the `orchlog compare` command that reproduces it.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
from pathlib import Path

from examples.tensor_parallel.mlp import Bug
from examples.tensor_parallel.traces import MAP, write_run
from orchlog.compare import CompareOptions, compare
from orchlog.report import render_text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m examples.tensor_parallel",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--ways", type=int, choices=(2, 4), default=2, help="tensor-parallel ranks (default 2)")
    parser.add_argument("--bug", choices=[b.value for b in Bug], default="none")
    parser.add_argument("--map", action="store_true", help="log no shard fields; gather by shards.toml instead")
    parser.add_argument("--out", type=Path, help="keep the traces in this directory")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        reference = write_run(out / "unsharded.bin")
        ours = write_run(out / f"tp{args.ways}-{args.bug}", args.ways, Bug(args.bug), annotate=not args.map)
        maps = [str(MAP)] if args.map else []
        report = compare(reference, ours, CompareOptions(maps_b=maps))
        print(render_text(report), end="")
        command = shlex.join(
            ["orchlog", "compare", str(reference), str(ours), *(["--map-b", str(MAP)] if maps else [])]
        )
        print(f"the same comparison: {command}" + ("" if args.out else "  (traces kept with --out DIR)"))
        return report.exit_code


if __name__ == "__main__":
    sys.exit(main())
