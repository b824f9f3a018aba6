"""Which rows a Parquet read keeps, as a pyarrow expression plus glob patterns.

Exact values, lists and ranges of the key fields become a pyarrow dataset
expression, which is checked against each row group's min/max statistics
(and against hive partition values) before anything is read, and then
against each row. Globs (`checkpoint="attn_*"`) cannot be decided from
min/max, so they are matched in Python, once per distinct name, on the
summary columns of the row groups that survive.

The selector text of ORCH_LOG_SELECT (`layer=0-3,token=5,checkpoint=attn_*`)
is accepted as well, with the same meaning as when an emitter applies it.

Conditions name record fields (`rank`); the expression is made for the
column names of the file at hand (`tp_rank`, or `rank` in a file of the
first layout), so that one selection reads files of either layout.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from orchlog import selector as _selector
from orchlog.errors import OrchlogError
from orchlog.parquet.schema import COLUMN_OF, FILTER_FIELDS
from orchlog.records import record

_GLOB_CHARS = re.compile(r"[*?]")
# A condition on one field: the expression it makes of that field's column.
Condition = tuple[str, Callable[[ds.Expression], ds.Expression]]


@record(frozen=True)
class Selection:
    conditions: tuple[Condition, ...]  # pushed down to statistics and partitions, then applied per row
    filter: ds.Expression | None  # the caller's own expression, on this layout's column names
    # (field, patterns): a row is kept when, for every pair, one of the patterns matches the field
    globs: tuple[tuple[str, tuple[re.Pattern[str], ...]], ...]

    @property
    def selects_all(self) -> bool:
        return not self.conditions and self.filter is None and not self.globs

    def expression(self, columns: Mapping[str, str] = COLUMN_OF, own_filter: bool = True) -> ds.Expression | None:
        """The conditions as one expression on the columns named by `columns` (field -> column).

        `own_filter=False` leaves the caller's expression out (it names this layout's columns).
        """
        terms = [test(ds.field(columns[field])) for field, test in self.conditions]
        if own_filter and self.filter is not None:
            terms.insert(0, self.filter)
        return _all(terms)

    def apply(self, table: pa.Table) -> pa.Table:
        """The rows of `table` (summary columns, this layout's names) that the selection keeps."""
        expression = self.expression()
        if expression is not None:
            table = table.filter(expression)
        for field, patterns in self.globs:
            column = table.column(COLUMN_OF[field])
            names = [
                n for n in pc.unique(column).to_pylist() if n is not None and any(p.fullmatch(n) for p in patterns)
            ]
            table = table.filter(pc.is_in(column, value_set=pa.array(names, pa.string())))
        return table


def selection(where: str | None = None, filter: ds.Expression | None = None, **fields: Any) -> Selection:
    """A Selection from selector text, a raw pyarrow expression and field=value keywords, all AND-ed.

    A keyword value is a value, a list or set of values, a `range`, or for text
    fields a glob (`*`, `?`); None means no condition on that field.
    """
    conditions: list[Condition] = []
    globs: list[tuple[str, tuple[re.Pattern[str], ...]]] = []
    try:
        parsed = _selector.parse(where) if where else None
    except _selector.SelectorError as exc:
        raise OrchlogError(f"invalid selection {where!r}: {exc}") from None
    if parsed is not None:
        for field, ranges in parsed.numeric.items():
            conditions.append((field, _in_ranges([(r.lo, r.hi) for r in ranges])))
        globs.extend(parsed.globs.items())
    for field, value in fields.items():
        if field not in FILTER_FIELDS:
            raise OrchlogError(f"cannot select on {field!r}; fields: {', '.join(FILTER_FIELDS)}")
        if value is None:
            continue
        test, patterns = _keyword(field, value)
        if patterns:
            globs.append((field, tuple(patterns)))
        elif test is not None:
            conditions.append((field, test))
    return Selection(tuple(conditions), filter, tuple(globs))


def _keyword(field: str, value: Any) -> tuple[Callable[[ds.Expression], ds.Expression] | None, list[re.Pattern[str]]]:
    if isinstance(value, range):
        if value.step != 1:
            raise OrchlogError(f"{field}={value!r}: only ranges with step 1 can be selected")
        lo, hi = value.start, value.stop - 1
        return lambda col: _in_range(col, lo, hi), []
    values = list(value) if isinstance(value, (list, tuple, set, frozenset)) else [value]
    if all(isinstance(v, str) for v in values) and any(_GLOB_CHARS.search(v) for v in values):
        return None, [_selector.glob_to_regex(v) for v in values]
    if len(values) == 1:
        return lambda col: col == values[0], []
    return lambda col: col.isin(values), []


def _in_ranges(bounds: list[tuple[int, int | None]]) -> Callable[[ds.Expression], ds.Expression]:
    return lambda column: _any(_in_range(column, lo, hi) for lo, hi in bounds)


def _in_range(column: ds.Expression, lo: int, hi: int | None) -> ds.Expression:
    term = column >= lo
    return term if hi is None else term & (column <= hi)


def _any(terms: Iterable[ds.Expression]) -> ds.Expression:
    out = None
    for term in terms:
        out = term if out is None else out | term
    return out


def _all(terms: Iterable[ds.Expression]) -> ds.Expression | None:
    out = None
    for term in terms:
        out = term if out is None else out & term
    return out
