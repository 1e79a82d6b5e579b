"""`python -m bench failover`: how an HA cluster rides out losing members.

Starts `picokube up --runtime simulated --etcd-members 3 --apiservers 2
--controller-managers 2 --schedulers 2` and runs the rounds of
`kube.testing.robustness.failover` (the ones `tests/e2e/test_ha.py` asserts on): SIGKILL
of the etcd leader and an API server, then SIGSTOP of the new etcd leader, the other API
server and the leading controller-manager, then SIGSTOP of an etcd follower and the first
API server. Reports, per round, the seconds from asking for a rollout plus a scale to the
Deployment having converged with those members gone, the ConfigMap writes acknowledged
(and attempted) through the balancer meanwhile and the longest stretch without an
acknowledged write; next to the floor, the same rollout with every member up.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import tempfile
from pathlib import Path
from typing import Any

from kube.testing.cluster import start_cluster
from kube.testing.robustness.failover import run_failover

__all__ = ["add_arguments", "run"]

HA_ARGS = ("--nodes", "1", "--runtime", "simulated", "--etcd-members", "3", "--apiservers", "2",
           "--controller-managers", "2", "--schedulers", "2")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--hold", type=float, default=20.0, help="seconds each round lasts at least (default 20)")


def run(opts: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, \
            contextlib.contextmanager(start_cluster)(Path(tmp) / "cluster", *HA_ARGS) as cluster:
        report = asyncio.run(run_failover(cluster.data_dir, hold=opts.hold, log=lambda line: None))
    figures: dict[str, Any] = {"floor_rollout_s": round(report.floor_rollout_seconds, 2)}
    for r in report.rounds:
        figures[f"{r.name}_rollout_s"] = round(r.rollout_seconds, 2)
        figures[f"{r.name}_writes_acknowledged"] = r.writes_acknowledged
        figures[f"{r.name}_writes_attempted"] = r.writes_attempted
        figures[f"{r.name}_longest_write_gap_s"] = round(r.longest_write_gap_seconds, 2)
    figures["standby_took_over"] = any(r.cm_leader_before != r.cm_leader_after for r in report.rounds)
    figures["violations"] = len(report.violations)
    return figures
