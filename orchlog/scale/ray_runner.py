"""The parts of a compare as Ray tasks, each on a node that holds its files.

`--executor ray` starts a Ray instance on this machine; `--executor
ray:ADDRESS` joins a running cluster (`ray start --head` on one node, `ray
start --address HEAD:6379` on the others; docs/scale.md). Where a part's
files are is asked, not assumed: tasks pinned to each live node, started
with the workers the parts will use, say which of the trace files that node
can read (size included), and each part runs, pinned by node affinity, on
a node that reads all its files (with the sizes this process sees), the
least loaded in bytes among them. On a shared file system every node
qualifies and the parts spread by bytes; where each node keeps its ranks'
traces on a local disk under the same path, each part goes to the node
that holds them. This process reads the
files too (the first records of each, to plan; the diagnosis reads around
the first divergence), so it must see every file: a shared or mounted file
system.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from orchlog.compare import CompareOptions, PartialReport
from orchlog.errors import OrchlogError
from orchlog.read.files import regular_files
from orchlog.records import record
from orchlog.scale.plan import PartSpec
from orchlog.scale.run import Runner, walk_part

MISSING = "--executor ray needs Ray: pip install 'orchlog[ray]'"


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise OrchlogError(MISSING) from None
    return ray


# The address a local instance gives as its node's: on the loopback interface, so that what Ray advertises,
# and each server it binds to the node's address, stays on this machine. Not 127.0.0.1, which Ray replaces by
# the machine's outward address; Linux routes all of 127.0.0.0/8 to the loopback interface.
LOCAL_NODE_IP = "127.0.0.2" if sys.platform.startswith("linux") else None


def connect(address: str | None) -> Any:
    """Ray, initialised: a new local instance (address None), else the cluster at `address`.

    A local instance's node address is on the loopback interface (LOCAL_NODE_IP): what Ray advertises, and
    each server it binds to the node's address, stays on this machine. Ray 2.60 still binds its GCS, raylet
    and worker gRPC servers to every interface whatever the node address; the token Ray requires of callers
    of a new local instance (unless RAY_AUTH_MODE says otherwise) is what guards those (docs/scale.md)."""
    ray = import_ray()
    if not ray.is_initialized():
        local: dict[str, Any] = {}
        if address is None and LOCAL_NODE_IP is not None:
            local["_node_ip_address"] = LOCAL_NODE_IP
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False, configure_logging=False, **local)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise OrchlogError(f"--executor ray:{address or ''}: cannot connect ({str(exc).splitlines()[0]})") from None
    return ray


def cluster_cpus() -> int:
    ray = import_ray()
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def warm_plan(nodes: Sequence[tuple[str, int]], parts: int) -> list[str]:
    """Which nodes (id, CPUs) to start a worker on, one entry per worker: in turn over the nodes, at most
    a node's CPUs each and `parts` in all, the nodes the parts may be placed on."""
    out: list[str] = []
    for round_ in range(max((cpus for _, cpus in nodes), default=0)):
        for node, cpus in nodes:
            if len(out) == parts:
                return out
            if round_ < cpus:
                out.append(node)
    return out


def _files(trace: str) -> list[str]:
    """Every regular file a trace may read, named as the plan names them."""
    p = Path(trace)
    return [str(f) for f in regular_files(p)[0]] if p.is_dir() else [str(p)]


@record(frozen=True)
class EarlyProbe:
    """What each node answered, or will, about which of `paths` it reads (node id -> a Ray reference)."""

    paths: frozenset[str]
    answers: dict[str, Any]


def start_workers(parts: int, traces: Sequence[str]) -> EarlyProbe:
    """Start the worker processes the parts will run in now, while this process plans, each asking which
    of the traces' files its node reads. A Ray job starts its workers on first use (1-2 s a wave); the
    probe used to start one wave and the parts, once placed, a second."""
    ray = import_ray()
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    paths = sorted({f for t in traces for f in _files(t)})
    nodes = [(n["NodeID"], int(n.get("Resources", {}).get("CPU", 0))) for n in ray.nodes() if n.get("Alive")]
    probe = ray.remote(num_cpus=1)(_readable)
    answers: dict[str, Any] = {}
    for node in warm_plan(nodes, parts):
        ref = probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False)).remote(paths)
        answers.setdefault(node, ref)
    return EarlyProbe(frozenset(paths), answers)


def _readable(paths: Sequence[str]) -> dict[str, int]:
    """Which of `paths` this node can read, with their sizes."""
    out = {}
    for p in paths:
        try:
            if os.access(p, os.R_OK):
                out[p] = os.path.getsize(p)
        except OSError:
            pass
    return out


def place(specs: Sequence[PartSpec], readable: dict[str, dict[str, int]]) -> list[str]:
    """For each part, the node (id) to run it on: one that reads all its files with the sizes the driver
    sees, the least loaded in bytes so far. OrchlogError when no node reads some part's files."""
    load = dict.fromkeys(readable, 0)
    out = []
    for k in sorted(range(len(specs)), key=lambda k: -specs[k].nbytes):
        spec = specs[k]
        need = [f for _, f in spec.files_a + spec.files_b]
        nodes = [n for n, seen in readable.items() if all(f in seen for f in need)]
        if not nodes:
            raise OrchlogError(f"no node of the Ray cluster can read every file of a part (first: {need[0]})")
        node = min(nodes, key=lambda n: (load[n], n))
        load[node] += spec.nbytes
        out.append((k, node))
    return [node for _, node in sorted(out)]


def ray_runner(address: str | None = None, early: EarlyProbe | None = None) -> Runner:
    """Walk the parts as Ray tasks (one CPU each) on the nodes that hold their files (as `early` says,
    where it asked about every file the parts read)."""

    def run(
        specs: Sequence[PartSpec], a: str, b: str, opts: CompareOptions, key: tuple[str, ...]
    ) -> list[PartialReport]:
        ray = connect(address)
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        paths = sorted({f for s in specs for _, f in s.files_a + s.files_b})
        probe = ray.remote(num_cpus=0)(_readable)
        nodes = [n["NodeID"] for n in ray.nodes() if n.get("Alive")]
        answered = early.answers if early is not None and early.paths.issuperset(paths) else {}
        seen = ray.get(
            [
                answered.get(n)
                or probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n, soft=False)).remote(paths)
                for n in nodes
            ]
        )
        here = _readable(paths)  # a copy elsewhere with another size is not the same file
        readable = {n: {p: s for p, s in got.items() if here.get(p) == s} for n, got in zip(nodes, seen)}
        task = ray.remote(num_cpus=1, max_retries=1)(walk_part)
        futures = [
            task.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False)).remote(
                spec, a, b, opts, key
            )
            for spec, node in zip(specs, place(specs, readable))
        ]
        return list(ray.get(futures))

    return run
