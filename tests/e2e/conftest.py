"""A whole cluster of real processes, started once per e2e module with `picokube up --detach`.

A module may set `CLUSTER_ARGS` (extra `picokube up` flags) to get a cluster shaped for it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from kube.testing.cluster import Cluster, start_cluster

DEFAULT_ARGS = ("--nodes", "2", "--runtime", "simulated")


@pytest.fixture(scope="module")
def cluster(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    args = getattr(request.module, "CLUSTER_ARGS", DEFAULT_ARGS)
    yield from start_cluster(tmp_path_factory.mktemp("cluster"), *args)


@pytest.fixture
def ns(cluster: Cluster) -> Iterator[str]:
    """A fresh namespace, deleted (and waited for) after the test."""
    name = f"e2e-{uuid.uuid4().hex[:6]}"
    cluster.kubectl_ok("create", "namespace", name)
    try:
        yield name
    finally:
        cluster.kubectl_ok("delete", "namespace", name, "--wait=true", "--timeout=120s")
