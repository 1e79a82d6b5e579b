"""Several API servers over one etcd, as an HA control plane runs them: both start together
(their bootstrap writes race), a write accepted by either is seen by watchers on both, in the
same order, and a token or service-account key works on every one of them."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from kube.api import ConfigMap, Namespace
from kube.client import RESTClient
from kube.testing.apiserver import ApiServerHarness

pytestmark = pytest.mark.timeout(180)


async def watch_added(client: RESTClient, ns: str, rv: str, n: int) -> list[tuple[str, str]]:
    """The first `n` ADDED ConfigMaps of `ns` after `rv`, as (name, resourceVersion)."""
    seen: list[tuple[str, str]] = []
    async for ev in client.watch_raw(ConfigMap.info, ns, resource_version=rv):
        if ev["type"] == "ADDED":
            seen.append((ev["object"]["metadata"]["name"], ev["object"]["metadata"]["resourceVersion"]))
            if len(seen) == n:
                break
    return seen


async def test_two_apiservers_share_one_ordered_history(etcd_endpoint: str, tmp_path: Path) -> None:
    first = ApiServerHarness(tmp_path / "a", etcd_endpoint=etcd_endpoint)
    second = first.peer(tmp_path / "b")
    first.process.start()
    second.process.start()
    try:
        first.process.wait_ready(first._ready, timeout=60)
        second.process.wait_ready(second._ready, timeout=60)
        async with first.client() as a, second.client() as b:
            ns = f"ha-{uuid.uuid4().hex[:6]}"
            await a.create(Namespace.model_validate({"metadata": {"name": ns}}))
            rv = (await b.list(ConfigMap, ns)).resource_version or "0"
            n = 60
            watchers = [asyncio.create_task(watch_added(c, ns, rv, n)) for c in (a, b)]

            async def write(i: int) -> str:
                client = (a, b)[i % 2]
                created = await client.create(ConfigMap.model_validate(
                    {"metadata": {"name": f"cm-{i}", "namespace": ns}, "data": {"i": str(i)}}))
                return str(created.metadata.resource_version)

            acknowledged = await asyncio.gather(*(write(i) for i in range(n)))
            on_a, on_b = await asyncio.wait_for(asyncio.gather(*watchers), 60)
            assert on_a == on_b
            assert [int(r) for _, r in on_a] == sorted(int(r) for r in acknowledged)
            assert {name for name, _ in on_a} == {f"cm-{i}" for i in range(n)}
    finally:
        second.stop()
        first.stop()
