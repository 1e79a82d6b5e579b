"""Faults against a whole cluster (simulated nodes) under load, then every robustness check.

Each run SIGKILLs and SIGSTOPs (then SIGCONTs) etcd, the API server, the controller-manager,
the scheduler and a kubelet in a seeded random order while a Deployment rolls out and scales,
a writer updates ConfigMaps and watchers record every event; afterwards the Deployment must
converge and the recorded histories must satisfy every check in `kube.testing.robustness`.

Short by default (CI); longer with `PICOKUBE_CHAOS_DURATION` (seconds per run),
`PICOKUBE_CHAOS_RUNS`, `PICOKUBE_CHAOS_FAULTS` (per run) and `PICOKUBE_CHAOS_SEED`
(repeat a run whose seed a failure printed).
"""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Iterator

import pytest

from kube.testing.cluster import Cluster, start_cluster
from kube.testing.robustness.runner import RunConfig, run_once

DURATION = float(os.environ.get("PICOKUBE_CHAOS_DURATION", "45"))
RUNS = int(os.environ.get("PICOKUBE_CHAOS_RUNS", "2"))
FAULTS = int(os.environ.get("PICOKUBE_CHAOS_FAULTS", str(max(6, int(DURATION / 6)))))
SEED = int(os.environ.get("PICOKUBE_CHAOS_SEED", str(random.SystemRandom().randrange(10**6))))

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(int(RUNS * (DURATION + 300) + 200))]

CLUSTER_ARGS = ("--nodes", "2", "--runtime", "simulated", "--pod-start-delay", "0.2",
                "--node-capacity", "cpu=4,memory=8Gi,pods=8")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    yield from start_cluster(tmp_path_factory.mktemp("cluster"), *CLUSTER_ARGS)


@pytest.mark.parametrize("run", range(RUNS))
def test_the_cluster_holds_under_faults(cluster: Cluster, run: int) -> None:
    seed = SEED + run
    print(f"chaos seed {seed} (repeat with PICOKUBE_CHAOS_SEED={seed} PICOKUBE_CHAOS_RUNS=1)")
    report = asyncio.run(run_once(RunConfig(cluster.data_dir, seed=seed, duration=DURATION, faults=FAULTS)))
    assert report.faults, "faults were injected"
    assert report.writes_acknowledged and report.events_checked, "the load made progress"
    assert report.violations == [], f"{report.summary()}\n" + "\n".join(report.violations[:30])
