"""Pairs checked at once, in worker processes or as Ray tasks, give the verdicts of one process, in order."""

from __future__ import annotations

import json

import pytest

from orchlog.guardrail import GuardrailOptions, guardrail
from tests.guardrail.trees import write_matrix

BUGS = {(1, 2): {"diverge_at": 1}, (0, 1): {"span_shift": 1}}


def test_worker_processes_give_the_one_process_summary(tree):
    root = write_matrix(tree, BUGS).root
    one = guardrail(root).to_json()
    assert json.dumps(guardrail(root, GuardrailOptions(jobs=3)).to_json()) == json.dumps(one)


@pytest.mark.slow
def test_ray_tasks_on_a_two_node_cluster_give_the_one_process_summary(tree):
    import ray
    from ray.cluster_utils import Cluster

    root = write_matrix(tree, BUGS).root
    one = guardrail(root).to_json()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    cluster.add_node(num_cpus=1)
    try:
        cluster.wait_for_nodes()
        spread = guardrail(root, GuardrailOptions(executor=("ray", cluster.address))).to_json()
    finally:
        ray.shutdown()
        cluster.shutdown()
    assert json.dumps(spread) == json.dumps(one)
