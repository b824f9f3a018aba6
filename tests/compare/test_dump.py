"""--dump-raw: the tensors of the first divergence (or every failing pair) as .npy, safely named."""

from __future__ import annotations

import numpy as np

from orchlog.compare import CompareOptions, compare
from orchlog.compare.dump import safe_stem
from tests.compare.runs import from_layer, run
from tests.tracegen import record, write_frames, write_jsonl


def test_the_first_divergence_is_dumped_whole_and_loads_without_pickle(tmp_path):
    a = write_frames(tmp_path / "a.bin", run())
    b = write_frames(tmp_path / "b.bin", run(bug=from_layer(1, 1, "Qcur")))
    report = compare(a, b, CompareOptions(dump_raw=str(tmp_path / "out")))
    files = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert len(files) == 2 and files[0].startswith("Qcur_L1_t1") and files[0].endswith(".a.npy")
    ta, tb = (np.load(tmp_path / "out" / f, allow_pickle=False) for f in files)
    assert ta.dtype == np.float32 and ta.shape == (24,)
    np.testing.assert_allclose(tb - ta, 0.5, rtol=1e-5)
    assert report.dumped == [str(tmp_path / "out" / f) for f in files]


def test_summaries_dump_their_leading_values_and_say_so(tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", run())
    b = write_jsonl(tmp_path / "b.jsonl", run(bug=from_layer(0, 0, "attn_norm")))
    compare(a, b, CompareOptions(dump_raw=str(tmp_path / "out")))
    assert all(p.name.endswith(".leading.npy") for p in (tmp_path / "out").iterdir())


def test_dump_all_writes_every_failing_pair(tmp_path):
    a = write_frames(tmp_path / "a.bin", run())
    b = write_frames(tmp_path / "b.bin", run(bug=from_layer(2, 2, "l_out")))
    report = compare(a, b, CompareOptions(dump_raw=str(tmp_path / "out"), dump_all=True))
    assert len(list((tmp_path / "out").iterdir())) == 2 * report.findings.failed == 2 * 2


def test_a_hostile_checkpoint_name_cannot_leave_the_directory(tmp_path):
    evil = "../../x"
    a = write_frames(tmp_path / "a.bin", [record(evil, np.zeros(3, np.float32), token_idx=0)])
    b = write_frames(tmp_path / "b.bin", [record(evil, np.ones(3, np.float32), token_idx=0)])
    out = tmp_path / "deep" / "out"
    report = compare(a, b, CompareOptions(dump_raw=str(out)))
    assert len(report.dumped) == 2
    assert all(p.parent == out for p in out.iterdir()) and not (tmp_path / "x.a.npy").exists()
    assert not any(p.name.startswith(".") for p in out.iterdir())


def test_names_that_clean_up_alike_still_get_their_own_files():
    from orchlog.compare.pairview import PairView

    def view(name):
        return PairView(
            name,
            None,
            None,
            0,
            None,
            0,
            0,
            "fail",
            1.0,
            "max_abs",
            1.0,
            "r",
            "",
            "tensor",
            None,
            {},
            (name, name),
            (None, None),
            (None, None),
            ("", ""),
            ([], []),
            (),
        )

    assert safe_stem(view("a/b")) != safe_stem(view("a:b"))
    assert "/" not in safe_stem(view("a/b"))
