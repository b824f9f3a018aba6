"""The command that reruns one record in full mode, so that an undecided pair can be decided.

An undecided pair needs the tensors themselves. Every orchlog emitter
honours ORCH_LOG_MODE and ORCH_LOG_SELECT, so each side's run can be
repeated writing just that record, whole, to a binary stream:

    ORCH_LOG_MODE=full ORCH_LOG_SELECT='checkpoint=attn_norm,layer=3,token=5,step=0' <the run>

The selector names the record as its emitter keyed it (before any --map).
Its glob keys take `*` and `?` as wildcards and split clauses at commas, so a
name holding a comma, or spaces or tabs at either end, has those characters
replaced by `?`: the selector may then match a little more, never less.
"""

from __future__ import annotations

import shlex
from typing import Any

from orchlog.knob_values import BLANKS

_NUMERIC = (("layer", "layer"), ("token", "token_idx"), ("step", "step"))


def _glob_literal(text: str) -> str:
    out = text.replace(",", "?")
    stripped = out.strip(BLANKS)
    lead = len(out) - len(out.lstrip(BLANKS))
    trail = len(out) - len(out.rstrip(BLANKS))
    return "?" * lead + stripped + "?" * trail if stripped else "?" * len(out)


def selector(keys: dict[str, Any]) -> str:
    """ORCH_LOG_SELECT text matching the record with these key fields (null fields are left out)."""
    clauses = []
    if keys.get("checkpoint"):
        clauses.append(f"checkpoint={_glob_literal(keys['checkpoint'])}")
    for knob, field in _NUMERIC:
        if keys.get(field) is not None:
            clauses.append(f"{knob}={keys[field]}")
    if keys.get("stage"):
        clauses.append(f"stage={_glob_literal(keys['stage'])}")
    if keys.get("rank"):
        clauses.append(f"rank={keys['rank']}")
    return ",".join(clauses)


def command(keys: dict[str, Any]) -> str:
    """The environment that reruns just this record in full mode, ready to put before the run's command."""
    return f"ORCH_LOG_MODE=full ORCH_LOG_SELECT={shlex.quote(selector(keys))}"


def commands(own_keys: tuple[dict[str, Any], dict[str, Any]], noise: bool = False) -> list[tuple[str, str]]:
    """(side, environment) for the reference (a) and ours (b); with `noise`, also for the second references
    ("noise"), whose records are keyed as the reference's."""
    out = [(side, command(keys)) for side, keys in zip("ab", own_keys)]
    return out + [("noise", command(own_keys[0]))] if noise else out
