"""Is it accumulation or a bug? The NumPy engine grafted from llama.cpp's trace, stage by stage.

    python -m examples.hunt.graft --bug bf16_ffn_out            # a small error at every layer
    python -m examples.hunt.graft --bug last_layer_no_v_bias    # a bug in one stage of the last layer
    python -m examples.hunt.graft --layers 4 --out /tmp/graft   # a deeper tiny model; keep the traces

Three kinds of runs of the engine under test, each an orchlog trace:
  plain      no grafts: the end-to-end error of every stage
  per layer  every layer's output grafted (l_out): each layer starts from the reference's input, so a
             record in layer k measures the error made inside layer k alone
  per stage  the documented loop: one run per stage S, every other stage grafted, S logged as usual:
             S's record measures S alone, at every layer at once (kq and kq_soft_max are never grafted:
             llama.cpp's rows span its padded KV cache, so they are measured in every run)
and `orchlog graft-report` over them. docs/graft.md quotes the figures this prints.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import orchlog
from examples import cli
from examples.hunt.run import TOLERANCES, WINDOWS
from examples.hunt.traces import llama_trace
from examples.numpy_engine.bugs import Bug
from examples.numpy_engine.observe import AFTER_BLOCKS, BEFORE_BLOCKS, PER_BLOCK
from examples.numpy_engine.run import run_numpy_engine
from examples.qwen2_tiny.config import TINY
from examples.qwen2_tiny.gguf_file import write_gguf
from examples.qwen2_tiny.scenario import DEFAULT_SCENARIO
from examples.qwen2_tiny.weights import DEFAULT_SEED, make_weights
from orchlog.compare import CompareOptions
from orchlog.graft_report.result import GraftReport, graft_report

Stage = tuple[str, str | None]
STAGES: tuple[Stage, ...] = BEFORE_BLOCKS + PER_BLOCK + AFTER_BLOCKS
LAYER_INPUT: Stage = ("l_out", None)  # grafting every layer's output feeds each next layer the reference's input
# Never grafted: llama.cpp's rows of the attention scores span its KV cache padded to 256 cells, this engine's
# the positions cached so far, so no reference row fits. Computed from grafted Q and K, they are measured in
# every run, and kqv_out's local error includes what they add.
UNGRAFTABLE: frozenset[Stage] = frozenset({("kq", None), ("kq_soft_max", None)})
GRAFTABLE: tuple[Stage, ...] = tuple(s for s in STAGES if s not in UNGRAFTABLE)


def grafted_numpy_trace(
    gguf: Path, reference: Path, out: Path, bugs: Bug, grafted: Callable[[str, str | None], bool]
) -> Path:
    """The NumPy engine, each stage a graft call where `grafted(checkpoint, stage)` says so (orchlog.graft
    overwrites the engine's own array in place: `array` is a view of the stage's output), else a log call."""
    token_ids = DEFAULT_SCENARIO.prompt + DEFAULT_SCENARIO.decode
    orchlog.configure(
        path=str(out),
        mode="full",
        team="numpy-grafted",
        select="",
        graft_from=str(reference),
        graft_select="checkpoint=*",
    )

    def observe(
        checkpoint: str, layer: int | None, token_idx: int, step: int, array: np.ndarray, stage: str | None = None
    ) -> None:
        # The token id is a key part: a graft finds the reference's record only when it is given.
        keys: dict[str, Any] = {
            "token_idx": token_idx,
            "layer": layer,
            "stage": stage,
            "step": step,
            "token_id": token_ids[token_idx],
        }
        if (checkpoint, stage) not in UNGRAFTABLE and grafted(checkpoint, stage):
            orchlog.graft(checkpoint, array, **keys)
        else:
            orchlog.log(checkpoint, np.ascontiguousarray(array), **keys)

    try:
        run_numpy_engine(gguf, DEFAULT_SCENARIO, bugs=bugs, observe=observe)
    finally:
        orchlog.close()
    return out


@dataclasses.dataclass(frozen=True)
class GraftRuns:
    reference: Path
    plain: Path
    per_layer: Path
    per_stage: list[Path]

    def options(self) -> CompareOptions:
        return CompareOptions(tolerances=str(TOLERANCES), windows=WINDOWS)

    def reports(self) -> tuple[GraftReport, GraftReport]:
        """(per layer, per stage), each beside the plain run."""
        opts = self.options()
        return (
            graft_report(self.reference, [self.per_layer], self.plain, opts),
            graft_report(self.reference, self.per_stage, self.plain, opts),
        )


def model(directory: Path, layers: int) -> Path:
    gguf = directory / f"tiny-qwen2-{layers}l.gguf"
    if not gguf.exists():
        config = dataclasses.replace(TINY, n_layer=layers)
        write_gguf(gguf, make_weights(config, DEFAULT_SEED), config)
    return gguf


def prepare(
    directory: Path, bugs: Bug, layers: int = TINY.n_layer, per_stage: bool = True, program: Path | None = None
) -> GraftRuns:
    """The reference (llama.cpp's `program`, built when None; reused when there), the plain run and the
    grafted runs, in `directory`."""
    gguf = model(directory, layers)
    reference = directory / f"llama-{layers}l.bin"
    if not reference.exists():
        llama_trace(gguf, reference, program)
    tag = f"{layers}l{'-' + bugs.label if bugs else ''}"
    plain = grafted_numpy_trace(gguf, reference, directory / f"plain-{tag}.bin", bugs, lambda c, s: False)
    per_layer = grafted_numpy_trace(
        gguf, reference, directory / f"graft-l_out-{tag}.bin", bugs, lambda c, s: (c, s) == LAYER_INPUT
    )
    stages = []
    for i, stage in enumerate(GRAFTABLE if per_stage else ()):
        out = directory / f"graft-all-but-{i:02d}-{tag}.bin"
        stages.append(grafted_numpy_trace(gguf, reference, out, bugs, _all_but(stage)))
    return GraftRuns(reference, plain, per_layer, stages)


def _all_but(stage: Stage) -> Callable[[str, str | None], bool]:
    """Graft every stage but `stage`."""
    return lambda c, s: (c, s) != stage


def main(argv: list[str] | None = None) -> int:
    parser = cli.parser("examples.hunt.graft", __doc__)
    cli.bugs_option(parser)
    parser.add_argument("--layers", type=int, default=TINY.n_layer, help=f"layers (default {TINY.n_layer})")
    cli.report_options(parser)
    args = parser.parse_args(argv)
    with cli.directory(args.out) as directory:
        runs = prepare(directory, args.bug, args.layers)
        for title, report in zip(("grafted per layer (l_out)", "grafted per stage"), runs.reports()):
            print(f"# {title}\n")
            cli.show(report, args.format)
    return 0


if __name__ == "__main__":
    sys.exit(main())
