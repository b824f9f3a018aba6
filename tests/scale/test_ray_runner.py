"""On a two-node Ray cluster (ray.cluster_utils.Cluster, this machine), `compare --executor ray:ADDRESS`
writes the bytes one process writes; without Ray installed it says so in one line."""

from __future__ import annotations

import subprocess
import sys

import pytest

from orchlog.scale.plan import PartSpec
from orchlog.scale.ray_runner import MISSING, place, warm_plan
from tests.absent import run_without
from tests.scale.rank_traces import rank_trace_pair


def _orchlog(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "orchlog", *args], capture_output=True, text=True, timeout=600, check=False
    )


@pytest.fixture(scope="module")
def two_nodes():
    import ray  # the ray extra is part of the test environment (scripts/bootstrap.sh installs it)
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    yield cluster
    ray.shutdown()
    cluster.shutdown()


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 3, 6])
def test_a_two_node_cluster_writes_the_report_one_process_writes(tmp_path, two_nodes, seed):
    a, b = rank_trace_pair(tmp_path, seed, ranks=4)
    one = _orchlog("compare", str(a), str(b), "--format", "json", "-q")
    spread = _orchlog(
        "compare", str(a), str(b), "--format", "json", "-q", "--executor", f"ray:{two_nodes.address}", "--parts", "2"
    )
    assert one.returncode in (0, 1), one.stderr
    assert spread.returncode == one.returncode, spread.stderr
    assert spread.stdout == one.stdout


@pytest.mark.slow
def test_one_rank_of_parquet_split_by_token_range_on_two_nodes_writes_the_same_report(tmp_path, two_nodes):
    from tests.scale.test_token_ranges import _pair

    a, b = _pair(tmp_path, 2, tokens=16)
    one = _orchlog("compare", a, b, "--format", "json", "-q")
    spread = _orchlog(
        "compare", a, b, "--format", "json", "-q", "--executor", f"ray:{two_nodes.address}", "--parts", "3"
    )
    assert one.returncode in (0, 1), one.stderr
    assert spread.returncode == one.returncode, spread.stderr
    assert spread.stdout == one.stdout


def test_without_ray_the_executor_says_how_to_get_it_in_one_line(tmp_path):
    a, b = rank_trace_pair(tmp_path, 1, ranks=2)
    code = "import sys; from orchlog.cli import main; sys.exit(main())"
    done = run_without(["ray"], code, "compare", str(a), str(b), "--executor", "ray", "-q")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"orchlog: error: {MISSING}"]


def test_each_part_runs_on_the_least_loaded_node_that_reads_all_its_files():
    parts = [
        PartSpec(frozenset([0]), ((0, "/d/a0"),), ((0, "/d/b0"),), nbytes=100),
        PartSpec(frozenset([1]), ((1, "/d/a1"),), ((1, "/d/b1"),), nbytes=90),
        PartSpec(frozenset([2]), ((2, "/d/a2"),), ((2, "/d/b2"),), nbytes=10),
    ]
    shared = {"/d/a0": 1, "/d/b0": 1, "/d/a1": 1, "/d/b1": 1, "/d/a2": 1, "/d/b2": 1}
    assert place(parts, {"n1": shared, "n2": shared}) == ["n1", "n2", "n2"]
    local = {"n1": {"/d/a0": 1, "/d/b0": 1}, "n2": {"/d/a1": 1, "/d/b1": 1, "/d/a2": 1, "/d/b2": 1}}
    assert place(parts, local) == ["n1", "n2", "n2"]
    with pytest.raises(Exception, match="no node of the Ray cluster can read every file of a part"):
        place(parts, {"n1": {"/d/a0": 1}})


def test_workers_start_in_turn_over_the_nodes_up_to_each_nodes_cpus_and_the_parts():
    assert warm_plan([("n1", 4), ("n2", 4)], 6) == ["n1", "n2", "n1", "n2", "n1", "n2"]
    assert warm_plan([("n1", 1), ("n2", 3)], 8) == ["n1", "n2", "n2", "n2"]
    assert warm_plan([("n1", 2), ("n2", 0)], 1) == ["n1"]
    assert warm_plan([], 4) == []
    assert warm_plan([("n1", 2)], 0) == []
