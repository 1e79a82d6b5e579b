"""Fixtures shared by the API server tests: a plain HTTPS client with the admin's token (`admin_http`,
also as `c`), a fresh namespace per module (`ns`), `causes` for reading a 422's field errors, and
a ConfigMap registry store on the session's etcd (`configmaps`)."""

from __future__ import annotations

import ssl
import uuid
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
import pytest_asyncio

from apiserver.registry.generic import RegistryStore
from apiserver.registry.kinds import strategy_for
from apiserver.storage import Etcd3Storage
from kube.resources import resource_for_plural
from kube.testing.apiserver import ApiServerHarness


@pytest.fixture(scope="module")
def admin_http(api: ApiServerHarness) -> Iterator[httpx.Client]:
    """Raw requests as the admin against the module's API server, verified against the cluster CA."""
    with httpx.Client(base_url=api.server, verify=ssl.create_default_context(cafile=str(api.pki.ca_cert)),
                      headers={"Authorization": f"Bearer {api.token('admin')}"}, timeout=30) as client:
        yield client


@pytest.fixture(scope="module")
def c(admin_http: httpx.Client) -> httpx.Client:
    return admin_http


@pytest.fixture(scope="module")
def ns(c: httpx.Client) -> str:
    """A namespace of the module's own."""
    name = f"t-{uuid.uuid4().hex[:6]}"
    assert c.post("/api/v1/namespaces", json={"metadata": {"name": name}}).status_code == 201
    return name


def causes(resp: httpx.Response) -> dict[str, str]:
    """A 422 Invalid's causes, field -> message."""
    body = resp.json()
    assert resp.status_code == 422 and body["reason"] == "Invalid", resp.text
    return {cause["field"]: cause["message"] for cause in body["details"]["causes"]}


@pytest_asyncio.fixture
async def configmaps(storage: Etcd3Storage, etcd_prefix: str) -> AsyncIterator[RegistryStore]:
    """ConfigMaps stored under a prefix of the test's own, without an API server."""
    info = resource_for_plural("", "configmaps")
    assert info is not None
    yield RegistryStore(storage, info, strategy_for(info), prefix=etcd_prefix)
