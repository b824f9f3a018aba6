"""Partial reports merge associatively (and in any order) into the report of the whole walk."""

from __future__ import annotations

import copy
import json
import random

import pytest

from orchlog.compare import CompareOptions, compare, finish
from orchlog.compare.grading.partial import merge_all
from orchlog.read.paths import open_trace
from orchlog.report import render_html
from orchlog.scale import walk_part
from orchlog.scale.plan import PartSpec, file_ranks, side_files
from tests.scale.rank_traces import rank_trace_pair

KEY = ("checkpoint", "layer", "stage", "token_idx", "step", "rank")


def _reading(files: list[str], ranks: list[frozenset[int]], group: set[int]) -> tuple[tuple[int, str], ...]:
    """(index, file) of the files holding a rank of `group`."""
    return tuple((i, f) for i, (f, rs) in enumerate(zip(files, ranks)) if rs & group)


def _random_parts(a, b, rng: random.Random) -> list[PartSpec]:
    """Ranks dealt at random into 1-4 parts (files read by every part that needs them)."""
    files = {s: side_files(str(p)) for s, p in (("a", a), ("b", b))}
    ranks = {s: [file_ranks(f) or frozenset() for f in fs] for s, fs in files.items()}
    assert all(ranks["a"]) and all(ranks["b"])  # every file says its ranks
    every = sorted(set().union(*ranks["a"], *ranks["b"]))
    groups: list[set[int]] = [set() for _ in range(rng.randint(1, 4))]
    for r in every:
        rng.choice(groups).add(r)
    return [
        PartSpec(frozenset(g), _reading(files["a"], ranks["a"], g), _reading(files["b"], ranks["b"], g))
        for g in groups
        if g
    ]


def _report(merged, a, b, opts) -> str:
    ta, tb = open_trace(a), open_trace(b)
    strays = (list(ta.diagnostics), list(tb.diagnostics))
    return json.dumps(finish(merged, ta, tb, opts, strays).to_json(), indent=1)


@pytest.mark.parametrize("seed", range(6))
def test_merging_parts_in_any_grouping_and_order_gives_the_report_of_the_whole(tmp_path, seed):
    rng = random.Random(seed)
    a, b = rank_trace_pair(tmp_path, seed, ranks=rng.randint(2, 5))
    opts = CompareOptions(diagnose=False, top=3, max_pairs=5)
    whole = json.dumps(compare(a, b, opts).to_json(), indent=1)
    for _ in range(3):
        specs = _random_parts(a, b, rng)
        parts = [walk_part(s, str(a), str(b), opts, KEY) for s in specs]
        left = copy.deepcopy(parts)
        folded = left[0]
        for p in left[1:]:
            folded = folded.merge(p)
        right = copy.deepcopy(parts)
        unfolded = right[-1]
        for p in reversed(right[:-1]):
            unfolded = p.merge(unfolded)
        shuffled = copy.deepcopy(parts)
        rng.shuffle(shuffled)
        for merged in (folded, unfolded, merge_all(shuffled)):
            assert _report(merged, a, b, opts) == whole


def test_a_merged_report_names_the_same_first_divergence_and_growth(tmp_path):
    a, b = rank_trace_pair(tmp_path, 3, ranks=4)
    opts = CompareOptions(diagnose=False)
    whole = compare(a, b, opts)
    assert whole.first is not None, "the case has a divergence"
    parts = [walk_part(s, str(a), str(b), opts, KEY) for s in _random_parts(a, b, random.Random(1))]
    ta, tb = open_trace(a), open_trace(b)
    merged = finish(merge_all(parts), ta, tb, opts, (list(ta.diagnostics), list(tb.diagnostics)))
    assert merged.first is not None
    assert whole.first is not None
    assert merged.first.where() == whole.first.where()
    assert [(g.label, g.pairs, g.max_abs) for g in merged.growth] == [
        (g.label, g.pairs, g.max_abs) for g in whole.growth
    ]


NOT_KEPT = "Not drawn: the pair&#x27;s records were not kept (a report merged from parts does not carry them)."
WHOLE_SAYS = "Not drawn: the traces hold only leading values for this pair; log it in full mode to see its error."


def test_merged_parts_draw_the_html_page_of_the_whole(tmp_path):
    a, b = rank_trace_pair(tmp_path, 3, ranks=3)
    opts = CompareOptions(diagnose=False, heatmap=True)
    whole = render_html(compare(a, b, opts))
    assert 'id="heatmap"' in whole and 'id="stages"' in whole, "the case has a heatmap and a per-stage chart"
    rng = random.Random(5)
    for _ in range(3):
        parts = [walk_part(s, str(a), str(b), opts, KEY) for s in _random_parts(a, b, rng)]
        rng.shuffle(parts)
        ta, tb = open_trace(a), open_trace(b)
        merged = finish(merge_all(parts), ta, tb, opts, (list(ta.diagnostics), list(tb.diagnostics)))
        # Parts do not ship the records themselves, so a merged report cannot draw the error inside the
        # first divergence's tensors; it says so, and everything else is the same page.
        page = render_html(merged).replace(NOT_KEPT, WHOLE_SAYS)
        assert NOT_KEPT in render_html(merged) and page == whole
