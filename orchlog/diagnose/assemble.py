"""From the records around a divergence to a `Case`: the diverging pair, the same checkpoint at nearby
tokens, the stage's inputs, and the reference's values elsewhere; plus the errors that locality and growth
read (every earlier record at the token, the same checkpoint at every layer).

Records pair up by the compare's key. Execution order is the reference's emitter counter (`seq`) where the
format has one, else its place in the file. A stage's inputs are the latest earlier record at the token with
the same checkpoint name (an earlier stage of the same tensor, such as the bias add before RoPE) and the
latest earlier record of all (the previous stage).

Memory: the tensors a case holds at once are the pair, its inputs and the same checkpoint at up to
`MAX_TOKENS` tokens, fewer when a tensor is large (`TOKEN_BUDGET` elements in all); the reference's values
elsewhere are loaded one at a time, and the errors by layer and stage are computed and dropped one by one.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from orchlog.compare.pairing.align import match
from orchlog.compare.pairing.keys import Interner, key_matrix
from orchlog.diagnose.case import Case, Pair, Reference, Side, Where
from orchlog.diagnose.locality import PairError, pair_error
from orchlog.diagnose.neighbours import Neighbourhood, Target
from orchlog.read.batch import NONE, RecordBatch
from orchlog.records import record

MAX_POOL = 4000
MAX_TOKENS = 17
TOKEN_BUDGET = 1 << 23  # elements, both sides, of the same checkpoint across tokens


def _opt(v: int) -> int | None:
    return None if v == NONE else int(v)


# The measured noise at a reference record: (its place in the trace, where it is, the reference's l2 norm
# there) -> the noise's l2 norm, or None where none was measured (compare/grading/noise.py builds one).
NoiseAt = Callable[[int, Where, float], "float | None"]


@record
class Assembled:
    case: Case
    output: PairError  # the diverging pair's
    inputs: list[tuple[str, PairError]]  # its inputs'
    earlier: list[tuple[str, PairError]]  # every earlier paired record at the token, in execution order
    layers: list[tuple[int, PairError]]  # the same checkpoint and stage at every layer of the token


class _Records:
    """One trace's kept records."""

    def __init__(self, batch: RecordBatch) -> None:
        self.batch = batch
        self.order = np.where(batch.seq >= 0, batch.seq, batch.order)

    def side(self, i: int) -> Side:
        return Side.from_batch(self.batch, i)

    def where(self, i: int) -> Where:
        b = self.batch
        return Where(b.checkpoint[i] or "", _opt(b.layer[i]), b.stage[i], _opt(b.token_idx[i]), _opt(b.step[i]))


class Assembler:
    def __init__(
        self,
        nb: Neighbourhood,
        key: tuple[str, ...],
        is_logits: Callable[[str | None], bool],
        noise_at: NoiseAt | None = None,
    ) -> None:
        self.noise_at = noise_at
        interner = Interner()
        self.a, self.b = _Records(nb.a), _Records(nb.b)
        ia, ib = match(key_matrix(nb.a, key, interner), key_matrix(nb.b, key, interner))
        self.partner = dict(zip(ia.tolist(), ib.tolist()))
        self.is_logits = is_logits

    def pair(self, i: int) -> Pair:
        return Pair(self.a.where(i), self.a.side(i), self.b.side(self.partner[i]))

    def error(self, i: int, pair: Pair | None = None) -> PairError:
        """Reference row i's pair error, with the noise measured at that record when there is one."""
        p = pair or self.pair(i)
        if self.noise_at is None or not p.full:
            return pair_error(p)
        r, _ = p.common()
        norm = float(np.linalg.norm(r))
        return pair_error(p, self.noise_at(int(self.a.batch.order[i]), p.where, norm))

    def _rows(self, **fields: str | int | None) -> np.ndarray:
        b = self.a.batch
        keep = np.ones(len(b), dtype=bool)
        for name, value in fields.items():
            if name in ("checkpoint", "stage"):
                column = getattr(b, name)
                keep &= column.equals(value) if value is not None else (column.codes < 0)
            else:
                keep &= getattr(b, name) == (NONE if value is None else value)
        return np.flatnonzero(keep)

    def target_row(self, t: Target) -> int | None:
        rows = self._rows(checkpoint=t.checkpoint, layer=t.layer, stage=t.stage, token_idx=t.token_idx, rank=t.rank)
        if t.step is not None:
            rows = rows[self.a.batch.step[rows] == t.step]
        paired = [int(i) for i in rows if int(i) in self.partner]
        return paired[0] if paired else None

    def _by_token(self, t: Target, d: int) -> dict[int, int]:
        """The target's checkpoint at the nearest tokens (one record each, the target's step first)."""
        b = self.a.batch
        same = self._rows(checkpoint=t.checkpoint, layer=t.layer, stage=t.stage, rank=t.rank)
        by_token: dict[int, int] = {}
        for i in same.tolist():
            tok = int(b.token_idx[i])
            if i not in self.partner or tok == NONE:
                continue
            if tok not in by_token or (t.step is not None and b.step[i] == t.step and b.step[by_token[tok]] != t.step):
                by_token[tok] = i
        size = max(int(b.numel[d]), 1)
        room = max(1, min(MAX_TOKENS, TOKEN_BUDGET // (2 * size)))
        here = int(b.token_idx[d]) if b.token_idx[d] != NONE else 0
        nearest = sorted(by_token, key=lambda tok: (abs(tok - here), tok))[:room]
        return {tok: by_token[tok] for tok in sorted(nearest)}

    def assemble(self, t: Target) -> Assembled | None:
        d = self.target_row(t)
        if d is None:
            return None
        b = self.a.batch
        here = self.pair(d)
        d_order = int(self.a.order[d])
        by_token = self._by_token(t, d)
        tokens = [here if i == d else self.pair(i) for i in by_token.values()]
        if d not in by_token.values():
            tokens = sorted([*tokens, here], key=lambda p: p.where.token_idx or 0)
        # Every record of the token and step, in execution order.
        at_token = self._rows(token_idx=t.token_idx, rank=t.rank)
        if t.step is not None:
            at_token = at_token[(b.step[at_token] == t.step) | (b.step[at_token] == NONE)]
        at_token = at_token[np.argsort(self.a.order[at_token], kind="stable")]
        earlier_rows = [int(i) for i in at_token if self.a.order[i] < d_order and int(i) in self.partner]
        inputs_rows = []
        same_name = [i for i in earlier_rows if b.checkpoint[i] == t.checkpoint and _opt(b.layer[i]) == t.layer]
        if same_name:
            inputs_rows.append(same_name[-1])
        if earlier_rows and earlier_rows[-1] not in inputs_rows:
            inputs_rows.append(earlier_rows[-1])
        case = Case(
            here,
            tokens=tokens,
            inputs=[self.pair(i) for i in inputs_rows],
            token_inputs=self._token_inputs(inputs_rows[0], by_token) if inputs_rows else {},
            pool=self._pool(d, t, at_token),
            is_logits=self.is_logits(t.checkpoint),
        )
        earlier = [(self.a.where(i).label(), self.error(i)) for i in earlier_rows]
        inputs = [(p.where.label(), self.error(i, p)) for i, p in zip(inputs_rows, case.inputs)]
        return Assembled(case, self.error(d, here), inputs, earlier, self._layer_errors(t))

    def _layer_errors(self, t: Target) -> list[tuple[int, PairError]]:
        b = self.a.batch
        rows = self._rows(checkpoint=t.checkpoint, stage=t.stage, token_idx=t.token_idx, rank=t.rank)
        if t.step is not None:
            rows = rows[b.step[rows] == t.step]
        kept = [int(i) for i in rows if int(i) in self.partner and b.layer[i] != NONE]
        return sorted(((int(b.layer[i]), self.error(i)) for i in kept), key=lambda x: x[0])

    def _token_inputs(self, input_row: int, by_token: dict[int, int]) -> dict[int, Side]:
        """The reference's record of the input's checkpoint at each token of the target's checkpoint."""
        b = self.a.batch
        name, layer, stage = b.checkpoint[input_row], _opt(b.layer[input_row]), b.stage[input_row]
        found: dict[int, Side] = {}
        for i in self._rows(checkpoint=name, layer=layer, stage=stage).tolist():
            tok = int(b.token_idx[i])
            if tok in by_token and tok not in found:
                found[tok] = self.a.side(i)
        return found

    def _pool(self, d: int, t: Target, at_token: np.ndarray) -> list[Reference]:
        b = self.a.batch
        numel = int(b.numel[d])
        d_order = int(self.a.order[d])
        load: Callable[[int], Callable[[], Side]] = lambda i: lambda: self.a.side(i)  # noqa: E731 - one at a time, when asked
        out: list[Reference] = []
        for i in at_token.tolist():
            if i != d and int(b.numel[i]) == numel:
                rel = "earlier" if self.a.order[i] < d_order else "later"
                out.append(Reference(self.a.where(i), load(i), rel))
        for i in self._rows(checkpoint=t.checkpoint, stage=t.stage, rank=t.rank).tolist():
            if i == d or int(b.numel[i]) != numel:
                continue
            if _opt(b.layer[i]) == t.layer and _opt(b.token_idx[i]) != t.token_idx:
                out.append(Reference(self.a.where(i), load(i), "other_token"))
            elif _opt(b.token_idx[i]) == t.token_idx and _opt(b.layer[i]) != t.layer:
                out.append(Reference(self.a.where(i), load(i), "other_layer"))
        return out[:MAX_POOL]
