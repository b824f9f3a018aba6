"""Write the tiny Qwen2 GGUF.

python -m examples.qwen2_tiny.make_model tiny-qwen2.gguf [--seed N]
"""

from __future__ import annotations

import sys
from pathlib import Path

from examples import cli
from examples.qwen2_tiny.config import TINY
from examples.qwen2_tiny.gguf_file import write_gguf
from examples.qwen2_tiny.weights import DEFAULT_SEED, make_weights


def make_tiny_model(path: str | Path, seed: int = DEFAULT_SEED) -> Path:
    return write_gguf(path, make_weights(TINY, seed), TINY)


def main(argv: list[str] | None = None) -> int:
    parser = cli.parser("examples.qwen2_tiny.make_model", __doc__)
    parser.add_argument("path", type=Path, help="GGUF file to write")
    cli.seed_option(parser)
    args = parser.parse_args(argv)
    print(make_tiny_model(args.path, args.seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
