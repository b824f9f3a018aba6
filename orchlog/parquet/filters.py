"""Which rows a Parquet read keeps, as a pyarrow expression plus glob patterns.

Exact values, lists and ranges of the key fields become a pyarrow dataset
expression, which is checked against each row group's min/max statistics
(and against hive partition values) before anything is read, and then
against each row. Globs (`checkpoint="attn_*"`) cannot be decided from
min/max, so they are matched in Python, once per distinct name, on the
summary columns of the row groups that survive.

The selector text of ORCH_LOG_SELECT (`layer=0-3,token=5,checkpoint=attn_*`)
is accepted as well, with the same meaning as when an emitter applies it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from orchlog.emit import selector as _selector
from orchlog.errors import OrchlogError
from orchlog.parquet.schema import FILTER_COLUMNS

_GLOB_CHARS = re.compile(r"[*?]")


@dataclasses.dataclass(frozen=True)
class Selection:
    expression: ds.Expression | None  # pushed down to statistics and partitions, then applied per row
    # (field, patterns): a row is kept when, for every pair, one of the patterns matches the field
    globs: tuple[tuple[str, tuple[re.Pattern[str], ...]], ...]

    @property
    def selects_all(self) -> bool:
        return self.expression is None and not self.globs

    def apply(self, table: pa.Table) -> pa.Table:
        """The rows of `table` (summary columns) that the selection keeps."""
        if self.expression is not None:
            table = table.filter(self.expression)
        for field, patterns in self.globs:
            names = [
                n
                for n in pc.unique(table.column(field)).to_pylist()
                if n is not None and any(p.fullmatch(n) for p in patterns)
            ]
            table = table.filter(pc.is_in(table.column(field), value_set=pa.array(names, pa.string())))
        return table


def selection(where: str | None = None, filter: ds.Expression | None = None, **fields: Any) -> Selection:
    """A Selection from selector text, a raw pyarrow expression and field=value keywords, all AND-ed.

    A keyword value is a value, a list or set of values, a `range`, or for text
    fields a glob (`*`, `?`); None means no condition on that field.
    """
    terms: list[ds.Expression] = [] if filter is None else [filter]
    globs: list[tuple[str, tuple[re.Pattern[str], ...]]] = []
    try:
        parsed = _selector.parse(where) if where else None
    except _selector.SelectorError as exc:
        raise OrchlogError(f"invalid selection {where!r}: {exc}") from None
    if parsed is not None:
        for field, ranges in parsed.numeric.items():
            terms.append(_any(_in_range(field, r.lo, r.hi) for r in ranges))
        globs.extend(parsed.globs.items())
    for field, value in fields.items():
        if field not in FILTER_COLUMNS:
            raise OrchlogError(f"cannot select on {field!r}; fields: {', '.join(FILTER_COLUMNS)}")
        if value is None:
            continue
        term, patterns = _keyword(field, value)
        if patterns:
            globs.append((field, tuple(patterns)))
        else:
            terms.append(term)
    expression = None
    for term in terms:
        expression = term if expression is None else expression & term
    return Selection(expression, tuple(globs))


def _keyword(field: str, value: Any) -> tuple[ds.Expression | None, list[re.Pattern[str]]]:
    if isinstance(value, range):
        if value.step != 1:
            raise OrchlogError(f"{field}={value!r}: only ranges with step 1 can be selected")
        return _in_range(field, value.start, value.stop - 1), []
    values = list(value) if isinstance(value, (list, tuple, set, frozenset)) else [value]
    if all(isinstance(v, str) for v in values) and any(_GLOB_CHARS.search(v) for v in values):
        return None, [_selector.glob_to_regex(v) for v in values]
    if len(values) == 1:
        return ds.field(field) == values[0], []
    return ds.field(field).isin(values), []


def _in_range(field: str, lo: int, hi: int | None) -> ds.Expression:
    term = ds.field(field) >= lo
    return term if hi is None else term & (ds.field(field) <= hi)


def _any(terms: Iterable[ds.Expression]) -> ds.Expression:
    out = None
    for term in terms:
        out = term if out is None else out | term
    return out
