"""A mutation campaign: mutants of every seed through orchlog's commands in worker processes.

    result = run_campaign(seeds, mutants=200, work=tmp_path)
    assert not result.failures, result.summary()

Workers (worker.py) run the commands; this process writes the mutants,
hands them out, and watches: a worker that dies while a job is in flight
is an abort of that mutant (the signal is named), one that takes longer
than `timeout` seconds is a hang (the worker is killed), and every answer
carries the worker's peak memory so far. Failing mutants are kept under
`work/failures/` with what went wrong, ready to become regression files.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

from tests.fuzz.mutate import Mutant, make_mutant
from tests.fuzz.seeds import Seed

ROOT = Path(__file__).resolve().parent.parent.parent
MEMORY_BOUND = 2 << 30  # a worker's peak resident memory above this is a failure: inputs here are kilobytes
WEIGHT_KINDS = ("safetensors", "npz", "gguf")  # seeds of `orchlog weights` (weight_seeds.py), not traces


@dataclasses.dataclass
class Failure:
    mutant: str  # name of the kept copy under work/failures
    kind: str  # "internal", "abort", "hang", "memory"
    detail: str


@dataclasses.dataclass
class CampaignResult:
    mutants: int = 0
    failures: list[Failure] = dataclasses.field(default_factory=list)
    peak_rss: int = 0
    seconds: float = 0.0
    by_seed: collections.Counter = dataclasses.field(default_factory=collections.Counter)

    def count(self, kind: str) -> int:
        return sum(1 for f in self.failures if f.kind == kind)

    def summary(self) -> str:
        head = (
            f"{self.mutants} mutants of {len(self.by_seed)} seeds in {self.seconds:.0f} s: "
            f"{self.count('internal')} internal errors, {self.count('abort')} aborts, {self.count('hang')} hangs, "
            f"{self.count('memory')} over the memory bound; peak worker memory {self.peak_rss / 2**20:.0f} MiB"
        )
        return "\n".join([head] + [f"  {f.kind} {f.mutant}: {f.detail[:800]}" for f in self.failures[:30]])


class _Worker:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.fuzz.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=ROOT,
            env={**os.environ, "PYTHONFAULTHANDLER": ""},
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None  # both PIPE
        self.stdin: IO[bytes] = self.proc.stdin
        self.stdout: IO[bytes] = self.proc.stdout
        self.job: tuple[Mutant, float] | None = None
        self.buffer = b""
        self.ready = False

    def send(self, job: dict, mutant: Mutant) -> None:
        self.stdin.write((json.dumps(job) + "\n").encode())
        self.stdin.flush()
        self.job = (mutant, time.monotonic())

    def lines(self) -> Iterator[dict]:
        chunk = os.read(self.stdout.fileno(), 1 << 16)
        if not chunk:
            raise EOFError
        self.buffer += chunk
        while b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            yield json.loads(line)

    def kill(self) -> int:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for f in (self.stdin, self.stdout):
            try:
                f.close()
            except OSError:
                pass
        return self.proc.returncode


def _jobs(seeds: list[Seed], mutants: int, work: Path, start: int) -> Iterator[Mutant]:
    """Mutants round-robin over the seeds, written one at a time as workers ask."""
    for n in range(start, start + mutants):
        seed = seeds[n % len(seeds)]
        yield make_mutant(seed, n // len(seeds), work)


def _keep(mutant: Mutant, kind: str, detail: str, failures: Path) -> Failure:
    failures.mkdir(parents=True, exist_ok=True)
    dest = failures / f"{kind}-{mutant.path.name}"
    if mutant.path.is_dir():
        shutil.copytree(mutant.path, dest, dirs_exist_ok=True)
    elif mutant.path.exists():
        shutil.copy(mutant.path, dest)
    dest.with_name(dest.name + ".why.txt").write_text(
        f"seed {mutant.seed.name} ({mutant.reference}); damages {', '.join(mutant.damages)}\n{detail}\n"
    )
    return Failure(dest.name, kind, detail)


def _job(mutant: Mutant, ident: int) -> dict:
    return {
        "id": ident,
        "path": str(mutant.path),
        "reference": str(mutant.reference),
        "number": mutant.number,
        "logits": mutant.seed.kind == "logits-dir",
        "weights": mutant.seed.kind in WEIGHT_KINDS,
    }


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def run_inputs(
    inputs: Iterable[Mutant], work: Path, workers: int = 1, timeout: float = 60.0, keep_all: bool = False
) -> CampaignResult:
    """Put every input through a worker; see the module docstring."""
    result = CampaignResult()
    failures_dir = work / "failures"
    pending = iter(inputs)
    pool = [_Worker() for _ in range(workers)]
    sel = selectors.DefaultSelector()
    for w in pool:
        sel.register(w.stdout, selectors.EVENT_READ, w)
    started = time.monotonic()
    ident = 0
    exhausted = False

    def feed(w: _Worker) -> None:
        nonlocal ident, exhausted
        if exhausted:
            return
        mutant = next(pending, None)
        if mutant is None:
            exhausted = True
            return
        ident += 1
        result.mutants += 1
        result.by_seed[mutant.seed.name] += 1
        w.send(_job(mutant, ident), mutant)

    def replace(w: _Worker) -> _Worker:
        sel.unregister(w.stdout)
        w.kill()
        fresh = _Worker()
        sel.register(fresh.stdout, selectors.EVENT_READ, fresh)
        pool[pool.index(w)] = fresh
        return fresh

    try:
        while True:
            busy = [w for w in pool if w.job is not None or not w.ready]
            if exhausted and not busy:
                break
            for key, _ in sel.select(timeout=1.0):
                w = key.data
                try:
                    answers = list(w.lines())
                except EOFError:
                    code = w.kill()
                    if not w.ready:  # it could not start: a fresh one would not either, forever
                        raise RuntimeError(
                            f"a fuzz worker exited ({code}) before it was ready; "
                            "`python -m tests.fuzz.worker < /dev/null` shows why"
                        ) from None
                    if w.job is not None:
                        assert w.job is not None  # an answer comes only to a job sent
                        mutant = w.job[0]
                        why = f"worker died: {signal.Signals(-code).name if code < 0 else f'exit {code}'}"
                        result.failures.append(_keep(mutant, "abort", why, failures_dir))
                        if not keep_all:
                            _remove(mutant.path)
                    replace(w)
                    continue
                for answer in answers:
                    if answer.get("ready"):
                        w.ready = True
                    else:
                        mutant = w.job[0]
                        w.job = None
                        result.peak_rss = max(result.peak_rss, answer["peak_rss"])
                        for problem in answer["failures"]:
                            result.failures.append(_keep(mutant, "internal", problem, failures_dir))
                        if answer["peak_rss"] > MEMORY_BOUND:
                            detail = f"peak resident memory {answer['peak_rss'] / 2**20:.0f} MiB"
                            result.failures.append(_keep(mutant, "memory", detail, failures_dir))
                            replace(w)  # a fresh worker, so the next mutants are measured on their own
                        if not keep_all:
                            _remove(mutant.path)
                for current in pool:
                    if current.ready and current.job is None:
                        feed(current)
            now = time.monotonic()
            for w in list(pool):
                if w.job is not None and now - w.job[1] > timeout:
                    mutant = w.job[0]
                    result.failures.append(_keep(mutant, "hang", f"no answer in {timeout:.0f} s", failures_dir))
                    if not keep_all:
                        _remove(mutant.path)
                    replace(w)
    finally:
        for w in pool:
            w.kill()
    result.seconds = time.monotonic() - started
    return result


def run_campaign(
    seeds: list[Seed], mutants: int, work: Path, workers: int = 1, start: int = 0, timeout: float = 60.0
) -> CampaignResult:
    """`mutants` mutants, round-robin over the seeds, numbered from `start`."""
    mutant_dir = work / "mutants"
    mutant_dir.mkdir(parents=True, exist_ok=True)
    return run_inputs(_jobs(seeds, mutants, mutant_dir, start), work, workers, timeout)
