"""Session-wide fixtures: one real etcd for the whole test run, and a storage client on it."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Iterator
from uuid import uuid4

import pytest
import pytest_asyncio

from apiserver.storage import Etcd3Storage
from kube.testing.apiserver import ApiServerHarness
from kube.testing.etcd import EtcdProcess


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


# --- parallel runs -------------------------------------------------------------------------
# `pytest -n N` (pytest-xdist, `--dist loadgroup` from pyproject) hands out whole files, so a
# module's cluster fixture starts once; the files that run real containers share fixed bridge
# names and one containerd per node, so they all go to the same worker, one after another.
# The default run (README, CI) is one process: on two cores a second worker gains little, and
# real-container tests that check pod networking failed while another worker ran clusters.
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        name = item.path.name
        group = "real-containers" if "cri" in name.removesuffix(".py").split("_") else str(item.path)
        item.add_marker(pytest.mark.xdist_group(group))


# --- in CI nothing may be skipped ----------------------------------------------------------
# A test that needs containerd or docker skips on a laptop without them; in CI (`CI=true`,
# set by `.ci/run`, which installs both) such a skip would hide a broken setup, so it fails
# the run instead.
_skipped: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped:
        _skipped.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes") and _skipped:
        sys.stderr.write("\nIn CI no test may be skipped; skipped:\n" + "".join(f"  {n}\n" for n in _skipped))
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
