"""The token x layer heatmap's numbers, binned straight from the Growth table's arrays.

One row per layer (or checkpoint outside the layers) in execution order, one
column per bin of neighbouring tokens; each cell holds the worst severity
(the graded error over its rule's threshold: 1.0 at the threshold, so one
colour scale fits every rule) and the worst max_abs of the (token, layer)
rows it covers. Everything is NumPy over the table's columns: the cost
follows the number of (token, layer) rows, never one Python object per row.
The page's script bins the columns further to fit the window.
"""

from __future__ import annotations

import numpy as np

from orchlog.compare.grading.growth import Growth, run_starts
from orchlog.records import record

MAX_COLUMNS = 1024  # token bins written into the page; the script merges them further to fit its width


@record
class HeatGrid:
    labels: list[str]  # row labels, in execution order
    layers: list[int | None]  # each row's layer
    first_token: list[int]  # each column's first and last token (-1: records of no single token)
    last_token: list[int]
    severity: np.ndarray  # (rows, columns) float64, NaN where no pair
    max_abs: np.ndarray  # (rows, columns) float64, NaN where no pair
    # (rows, columns) int8: 0 every pair proven within tolerance, 1 some undecided and none failing,
    # 2 some failing (-1 where no pair). The colour follows it: an undecided cell is never drawn as a pass.
    state: np.ndarray

    @property
    def group(self) -> int:
        """Tokens per column (the last column may hold fewer)."""
        return max((b - a + 1 for a, b in zip(self.first_token, self.last_token)), default=1)

    def column_of(self, token: int | None) -> int | None:
        if token is None:
            return None
        hit = np.flatnonzero((np.asarray(self.first_token) <= token) & (np.asarray(self.last_token) >= token))
        return int(hit[0]) if len(hit) else None


def heat_grid(heat: Growth, max_columns: int = MAX_COLUMNS, window: tuple[int, int] | None = None) -> HeatGrid:
    """The binned grid of a Growth table (see the module's docstring); with `window` (first, last token),
    only those tokens' columns, with the rows of the whole table."""
    rows = heat.rows
    token, label, order = rows["token"], rows["label"], rows["first_order"]
    if not len(token):
        return HeatGrid([], [], [], [], np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 0), dtype=np.int8))
    # Rows in execution order: each label's mean rank among its token's labels.
    by = np.lexsort((order, token))
    starts = run_starts(token[by])
    rank = np.arange(len(by)) - np.repeat(starts, np.diff(np.r_[starts, len(by)]))
    labels, label_idx = np.unique(label[by], return_inverse=True)
    mean_rank = np.bincount(label_idx, weights=rank) / np.bincount(label_idx)
    row_order = np.argsort(mean_rank, kind="stable")
    row_of_label = np.empty(len(labels), dtype=np.int64)
    row_of_label[row_order] = np.arange(len(labels))
    if window is not None:
        inside = (token >= window[0]) & (token <= window[1])
        token, label = token[inside], label[inside]
        rows = {k: v[inside] for k, v in rows.items()}
        if not len(token):
            return HeatGrid([], [], [], [], np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 0), dtype=np.int8))
    # Columns: distinct tokens, `group` to a column.
    tokens, token_idx = np.unique(token, return_inverse=True)
    group = max(1, -(-len(tokens) // max_columns))
    columns = -(-len(tokens) // group)
    col = token_idx // group
    cell = row_of_label[np.searchsorted(labels, label)] * columns + col
    severity = np.full(len(labels) * columns, -np.inf)
    max_abs = np.full(len(labels) * columns, -np.inf)
    np.maximum.at(severity, cell, rows["worst_severity"])
    np.fmax.at(max_abs, cell, rows["max_abs"])
    failed = np.zeros(len(labels) * columns, dtype=np.int64)
    undecided = np.zeros(len(labels) * columns, dtype=np.int64)
    np.add.at(failed, cell, rows["failed"])
    np.add.at(undecided, cell, rows["undecided"])
    seen = np.zeros(len(labels) * columns, dtype=bool)
    seen[cell] = True
    state = np.where(failed > 0, 2, np.where(undecided > 0, 1, 0)).astype(np.int8)
    state[~seen] = -1
    severity[~seen] = np.nan
    max_abs[~seen] = np.nan
    texts = [heat.label_text(int(x)) for x in labels[row_order]]
    firsts = tokens[::group]
    lasts = tokens[np.minimum(np.arange(columns) * group + group - 1, len(tokens) - 1)]
    return HeatGrid(
        [t for t, _ in texts],
        [layer for _, layer in texts],
        firsts.tolist(),
        lasts.tolist(),
        severity.reshape(len(labels), columns),
        max_abs.reshape(len(labels), columns),
        state.reshape(len(labels), columns),
    )


def decode_start(token_steps: dict[int, int] | None) -> int | None:
    """The first decode token: the first token whose step differs from the prompt's, when the prompt (the
    first step) held more than one token; None when the trace does not say (no steps, or one token a step)."""
    if not token_steps:
        return None
    tokens = sorted(t for t in token_steps if t >= 0)
    if len(tokens) < 2:
        return None
    first_step = token_steps[tokens[0]]
    later = next((t for t in tokens if token_steps[t] != first_step), None)
    if later is None or later == tokens[1]:
        return None
    return later
