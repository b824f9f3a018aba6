"""What each side's format lets a comparison conclude, beyond the evidence every format shares.

orchlog records grade on what is proven: a pair passes only when its
evidence shows it within tolerance. Two legacy formats bring rules of their
own, which their teams' tools apply and orchlog keeps:

  legacy trace records (name/blake3/rms/num_elements): they carry a hash and
    no values, and their own trace_diff calls any hash difference a
    divergence; so does orchlog.
  legacy checkpoint JSONL (checkpoint/team/token_idx/dtype/shape/values):
    they carry the first N values and nothing else; their spec grades "the
    values both sides carry"; orchlog does, and labels such pairs so.
  llama.cpp's eval-callback printout (and its PyTorch twin): the first and
    last values of each row, 4 decimals, and a sum; llama.cpp's own
    comparison reads the printed values, and orchlog grades the leading
    ones both sides carry, the same way.

`--exact` makes any hash difference a divergence whatever the format (for
bit-exactness checks: batch invariance, determinism).
"""

from __future__ import annotations

from orchlog.records import record

HASH_ONLY_FORMATS = frozenset({"legacy-trace"})
LEADING_ONLY_FORMATS = frozenset({"legacy-checkpoint-jsonl", "llama-debug-text"})


def _all_in(trace_format: str, kinds: frozenset[str]) -> bool:
    """Whether every file of a trace (a directory's format is its members' formats joined by '+') is of `kinds`."""
    members = [m for m in trace_format.split("+") if m]
    return bool(members) and all(m in kinds for m in members)


@record(frozen=True)
class Semantics:
    hash_decides: bool = False  # a differing BLAKE3 is a divergence
    leading_rule: bool = False  # graded on the leading values both sides carry
    exact: bool = False  # --exact: only bit-identical tensors pass

    @property
    def hash_reason(self) -> str:
        if self.exact:
            return "blake3 differs (--exact: any difference fails)"
        return "blake3 differs (legacy trace records: any hash difference is a divergence)"


def semantics(format_a: str, format_b: str, exact: bool = False) -> Semantics:
    hash_only = _all_in(format_a, HASH_ONLY_FORMATS) or _all_in(format_b, HASH_ONLY_FORMATS)
    leading = _all_in(format_a, LEADING_ONLY_FORMATS) or _all_in(format_b, LEADING_ONLY_FORMATS)
    return Semantics(hash_decides=hash_only or exact, leading_rule=leading and not hash_only, exact=exact)
