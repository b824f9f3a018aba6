"""A process that puts inputs through orchlog's commands and says what went wrong, one job per line.

    python -m tests.fuzz.worker          # reads JSON jobs on stdin, writes one JSON answer per job

A job names a trace (or a weight file, for `orchlog weights`), the one it is compared with and the commands;
each command runs in this process through `orchlog.cli.main`, as a user
would run it. The answer lists the failures: an exit code other than 0, 1
or 2, an "internal error" (an exception that escaped the library), an
exception that escaped main itself, a Python warning a user would see on
stderr (NumPy's "invalid value encountered", say: noise where the reader
should word the problem or stay quiet), or an iteration of `open_trace` that
raised. An abort or a hang kills this process; the campaign that started
it notices (campaign.py). The address space is capped so that a reader
that sizes an allocation from a damaged count fails here instead of
taking the machine's memory.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import sys
import tempfile
import traceback
import warnings

from orchlog.read.trace import READER_FAILED
from tests import address_space

ADDRESS_SPACE = 8 << 30
# Warnings Python shows nobody unless asked (its default filters): not what a user would see.
_HIDDEN_BY_DEFAULT = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)


def commands(path: str, reference: str, number: int, logits: bool, scratch: str) -> list[list[str]]:
    """The commands a mutant goes through; which report formats turn with the mutant's number."""
    fmt = ("text", "md", "json", "html")[number % 4]
    out = [
        ["show", path],
        ["show", path, "--format", "json"],
        # Every third mutant without --verify-hashes: the batch path (orchlog/read/validate_batch.py).
        [
            "validate",
            path,
            *(["--verify-hashes"] if number % 3 else []),
            "--quiet",
            *(["--format", "json"] if number % 2 else []),
        ],
        ["compare", reference, path, "--quiet", "--format", fmt, "--detail"],
        ["compare", path, reference, "--quiet", "--dump-raw", os.path.join(scratch, "dump"), "--dump-all"],
    ]
    if logits:
        out.append(["compare", reference, path, "--quiet", "--per-token"])
    if number % 5 == 0:
        out.append(["pack", path, "-o", os.path.join(scratch, "packed.parquet"), "--quiet"])
    return out


def weight_commands(path: str, reference: str, number: int) -> list[list[str]]:
    """`orchlog weights` both ways against the undamaged file, in the report format the number turns to."""
    fmt = ("text", "md", "json")[number % 3]
    return [
        ["weights", reference, path, "--quiet", "--map", "none", "--format", fmt],
        ["weights", path, reference, "--quiet", "--format", fmt],
    ]


def run_command(argv: list[str]) -> str | None:
    """Run one orchlog command in this process; what went wrong, or None."""
    from orchlog.cli import main

    err, out = io.StringIO(), io.StringIO()
    try:
        with (
            contextlib.redirect_stderr(err),
            contextlib.redirect_stdout(out),
            warnings.catch_warnings(record=True) as seen,
        ):
            warnings.simplefilter("always")  # each command on its own: none hidden by an earlier one's
            code = main(argv)
    except SystemExit as exc:  # argparse
        code = exc.code if isinstance(exc.code, int) else 2
    except BaseException:
        return f"orchlog {' '.join(argv[:1])}: escaped main: {traceback.format_exc(limit=-3)}"
    shown_warnings = [w for w in seen if not issubclass(w.category, _HIDDEN_BY_DEFAULT)]
    if shown_warnings:
        w = shown_warnings[0]
        return f"orchlog {argv[0]}: a {w.category.__name__} reached stderr: {w.message} ({w.filename}:{w.lineno})"
    text = err.getvalue()
    if "internal error" in text or "Traceback" in text:
        return f"orchlog {argv[0]}: {text.strip()[-600:]}"
    if READER_FAILED in text or READER_FAILED in out.getvalue():
        shown = next(line for line in (text + out.getvalue()).splitlines() if READER_FAILED in line)
        return f"orchlog {argv[0]}: {shown.strip()[-600:]}"
    if code not in (0, 1, 2):
        return f"orchlog {argv[0]}: exit code {code}"
    shown = out.getvalue() + text
    if argv[0] == "weights" and ("\x1b" in shown or "\x07" in shown):
        return f"orchlog weights: a name reached the output unescaped: {shown[:300]!r}"
    lines = text.strip().splitlines()
    if argv[0] == "weights" and (len(lines) > 1 or (lines and not lines[0].startswith("orchlog: error: "))):
        return f"orchlog weights: more on stderr than one error line: {text[:600]!r}"
    return None


def iterate(path: str) -> str | None:
    """Walk the trace through the library; only OrchlogError may come out (when the path cannot be opened)."""
    from orchlog import open_trace
    from orchlog.errors import OrchlogError

    try:
        traces = [open_trace(path), open_trace(path)]
        for rec in traces[0]:
            if rec.has_data:
                try:
                    rec.raw_bytes()
                except OSError:  # the loader's contract: damaged or vanished bytes are an OSError
                    pass
        for batch in traces[1].batches(rows=3):
            len(batch)
    except OrchlogError:
        return None
    except BaseException:
        return f"open_trace: {traceback.format_exc(limit=-3)}"
    for d in traces[0].diagnostics + traces[1].diagnostics:
        if READER_FAILED in d.message:
            return f"open_trace: {d}"
    return None


def run_job(job: dict) -> dict:
    failures = []
    if job.get("weights"):
        for argv in weight_commands(job["path"], job["reference"], job["number"]):
            problem = run_command(argv)
            if problem:
                failures.append(problem)
        return {"id": job["id"], "failures": failures, "peak_rss": _peak()}
    with tempfile.TemporaryDirectory(prefix="orchlog-fuzz-") as scratch:
        problem = iterate(job["path"])
        if problem:
            failures.append(problem)
        for argv in commands(job["path"], job["reference"], job["number"], job.get("logits", False), scratch):
            problem = run_command(argv)
            if problem:
                failures.append(problem)
    return {"id": job["id"], "failures": failures, "peak_rss": _peak()}


def _peak() -> int:
    """This process's own peak resident memory: VmHWM starts afresh at exec, while getrusage's
    maxrss starts at the parent's peak (pytest's, gigabytes after a long session)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def main() -> None:
    address_space.cap(ADDRESS_SPACE)
    answers = sys.stdout
    sys.stdout = sys.stderr  # nothing but answers on the channel
    import orchlog.cli  # noqa: F401 - imported once, before the first job's clock starts

    answers.write(json.dumps({"ready": True}) + "\n")
    answers.flush()
    for line in sys.stdin:
        answers.write(json.dumps(run_job(json.loads(line))) + "\n")
        answers.flush()


if __name__ == "__main__":
    main()
