"""A whole cluster of real processes, started once per e2e module with `picokube up --detach`.

A module may set `CLUSTER_ARGS` (extra `picokube up` flags) to get a cluster shaped for it.
"""

from __future__ import annotations

from typing import Iterator

import pytest

from kube.testing.cluster import Cluster, start_cluster

DEFAULT_ARGS = ("--nodes", "2", "--runtime", "simulated")


@pytest.fixture(scope="module")
def cluster(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    args = getattr(request.module, "CLUSTER_ARGS", DEFAULT_ARGS)
    yield from start_cluster(tmp_path_factory.mktemp("cluster"), *args)
