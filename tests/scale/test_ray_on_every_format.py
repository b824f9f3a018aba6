"""`compare --executor ray` writes the report one process writes, whatever the inputs' format: JSONL summaries
and with every value, binary streams (plain and gzipped), Parquet, and directories of ranks in mixed formats.

A walk that comes back from Ray's object store holds read-only arrays; a compare of one part (one rank, any
single file) finishes on them without the merge's fresh copies, which is where `renumber` once wrote into
them. The local instance keeps its node address on the loopback interface.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import pytest

from orchlog.compare import CompareOptions, compare
from orchlog.scale import compare_partitioned
from orchlog.scale.ray_runner import LOCAL_NODE_IP, connect, ray_runner
from tests.compare.runs import from_layer, run
from tests.scale.rank_traces import rank_trace_pair
from tests.tracegen import header, write_frames, write_jsonl, write_parquet


def _pair(tmp_path, kind: str):
    bug = from_layer(1, 1, "ffn_out", 0.5)
    if kind == "ranks":
        return rank_trace_pair(tmp_path, seed=3, ranks=3)
    values = -1 if kind == "jsonl-values" else 10
    writer = {"jsonl": write_jsonl, "jsonl-values": write_jsonl, "parquet": write_parquet}.get(kind, write_frames)
    suffix = {"parquet": "parquet", "jsonl": "jsonl", "jsonl-values": "jsonl"}.get(kind, "bin")
    paths = []
    for side, b in (("a", None), ("b", bug)):
        path = tmp_path / f"{side}.{suffix}"
        writer(path, run(tokens=3, layers=3, bug=b, values=values), header(team=side))
        if kind == "binary-gz":
            path = path.rename(path.with_suffix(".bin.gz"))
            path.write_bytes(gzip.compress(path.read_bytes(), mtime=0))
        paths.append(path)
    return paths[0], paths[1]


def _json(report) -> str:
    return json.dumps(report.to_json(), indent=1, allow_nan=False)


@pytest.fixture(scope="module")
def local_ray():
    import ray

    connect(None)
    yield ray
    ray.shutdown()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["jsonl", "jsonl-values", "binary", "binary-gz", "parquet", "ranks"])
@pytest.mark.parametrize("parts", [1, 3])
def test_ray_writes_the_one_process_report_on_every_format(local_ray, tmp_path, kind, parts):
    a, b = _pair(tmp_path, kind)
    opts = CompareOptions()
    one = compare(a, b, opts)
    assert one.status == "diverged"  # the case is not vacuous
    assert _json(compare_partitioned(str(a), str(b), opts, ray_runner(None), parts)) == _json(one)


@pytest.mark.slow
def test_a_local_instance_gives_its_nodes_a_loopback_address(local_ray):
    if LOCAL_NODE_IP is None:
        pytest.skip("a loopback node address other than 127.0.0.1 is for Linux")
    assert [n["NodeManagerAddress"] for n in local_ray.nodes() if n["Alive"]] == [LOCAL_NODE_IP]


def test_the_command_on_a_jsonl_pair_writes_the_bytes_one_process_writes(tmp_path):
    a, b = _pair(tmp_path, "jsonl")

    def orchlog(*extra: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "orchlog", "compare", str(a), str(b), "--format", "json", "-q", *extra]
        return subprocess.run(argv, capture_output=True, text=True, timeout=600)

    one, spread = orchlog(), orchlog("--executor", "ray")
    assert one.returncode == 1, one.stderr
    assert spread.returncode == 1, spread.stderr
    assert spread.stdout == one.stdout
    assert "internal error" not in spread.stderr
