"""Fixtures shared by the API server tests: a plain HTTPS client with the admin's token."""

from __future__ import annotations

import ssl
from collections.abc import Iterator

import httpx
import pytest

from kube.testing.apiserver import ApiServerHarness


@pytest.fixture(scope="module")
def admin_http(api: ApiServerHarness) -> Iterator[httpx.Client]:
    """Raw requests as the admin against the module's API server, verified against the cluster CA."""
    with httpx.Client(base_url=api.server, verify=ssl.create_default_context(cafile=str(api.pki.ca_cert)),
                      headers={"Authorization": f"Bearer {api.token('admin')}"}, timeout=30) as client:
        yield client
