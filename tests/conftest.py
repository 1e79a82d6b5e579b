"""Session-wide fixtures: one real etcd for the whole test run, and a storage client on it."""

from __future__ import annotations

from typing import AsyncIterator, Iterator
from uuid import uuid4

import pytest
import pytest_asyncio

from apiserver.storage import Etcd3Storage
from kube.cluster.etcd import EtcdProcess
from kube.testing.apiserver import ApiServerHarness


@pytest.fixture(scope="session")
def etcd_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The client URL of a private etcd started once per session."""
    etcd = EtcdProcess(data_dir=tmp_path_factory.mktemp("etcd")).start()
    try:
        yield etcd.endpoint
    finally:
        etcd.stop()


@pytest.fixture
def etcd_prefix() -> str:
    """A key prefix no other test uses."""
    return f"/test-{uuid4().hex[:8]}/"


@pytest_asyncio.fixture
async def storage(etcd_endpoint: str) -> AsyncIterator[Etcd3Storage]:
    """An Etcd3Storage connected to the session etcd, closed after the test."""
    s = await Etcd3Storage.connect([etcd_endpoint])
    try:
        yield s
    finally:
        await s.close()


@pytest.fixture(scope="module")
def api(etcd_endpoint: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerHarness]:
    """A real API server process (own etcd key prefix) shared by the tests of one module."""

    with ApiServerHarness(tmp_path_factory.mktemp("apiserver"), etcd_endpoint=etcd_endpoint) as harness:
        yield harness
