"""One object the typed model refuses does not stop an informer (against a real API server).

Such an object cannot be written through the API (validation refuses it), so it is planted
in etcd directly, as an older server or a direct etcd write would have left it: a Node with
`taints: [{}]`, which kube.api.Node cannot decode.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import AsyncIterator

import pytest

from apiserver.storage import Etcd3Storage
from kube.api import Node
from kube.cache import EventHandler, SharedInformer
from kube.client import RESTClient
from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually

SKIP_MESSAGE = "Skipping an object that cannot be decoded"


def _bad_node(name: str, label: str = "a") -> bytes:
    return json.dumps({"apiVersion": "v1", "kind": "Node",
                       "metadata": {"name": name, "uid": str(uuid.uuid4()), "labels": {"v": label}},
                       "spec": {"taints": [{}]}}).encode()


@pytest.fixture
async def client(api: ApiServerHarness) -> AsyncIterator[RESTClient]:
    async with api.client("admin") as c:
        yield c


async def _create_node(client: RESTClient, name: str) -> None:
    await client.create(Node.model_validate({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}))


def _skips(caplog: pytest.LogCaptureFixture, key: str) -> int:
    return sum(1 for r in caplog.records if r.getMessage() == SKIP_MESSAGE and getattr(r, "key", None) == key)


async def test_informer_lists_and_watches_the_rest_around_an_undecodable_node(
        api: ApiServerHarness, client: RESTClient, storage: Etcd3Storage, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="kube.cache.reflector")
    run = uuid.uuid4().hex[:6]
    good, bad, late_bad, flip, late_good = (f"{run}-{n}" for n in ("good", "bad", "late-bad", "flip", "late-good"))
    await _create_node(client, good)
    await _create_node(client, flip)
    await storage.create(f"{api.prefix}/nodes/{bad}", _bad_node(bad))

    informer: SharedInformer[Node] = SharedInformer(client, Node)
    deleted: list[str] = []
    informer.add_event_handler(EventHandler(on_delete=lambda n: deleted.append(str(n.metadata.name))))
    task = asyncio.create_task(informer.run())
    try:
        await asyncio.wait_for(informer.wait_for_sync(), 10)
        names = {n.metadata.name for n in informer.store.list()}
        assert {good, flip} <= names and bad not in names

        # Watch: an undecodable ADDED and MODIFIED are skipped, the events around them are not.
        await storage.create(f"{api.prefix}/nodes/{late_bad}", _bad_node(late_bad))
        kv = await storage.get(f"{api.prefix}/nodes/{bad}")
        await storage.update(f"{api.prefix}/nodes/{bad}", _bad_node(bad, "b"), expected_revision=kv.mod_revision)
        await _create_node(client, late_good)
        await eventually(lambda: _now(informer.store.get(late_good)), message="the node created after the bad ones")
        assert informer.store.get(late_bad) is None and informer.store.get(bad) is None

        # A cached node turned undecodable keeps its last good state; its deletion still arrives.
        kv = await storage.get(f"{api.prefix}/nodes/{flip}")
        await storage.update(f"{api.prefix}/nodes/{flip}", _bad_node(flip), expected_revision=kv.mod_revision)
        await storage.delete(f"{api.prefix}/nodes/{flip}")
        await eventually(lambda: _now(flip in deleted), message="the undecodable node's deletion")
        assert informer.store.get(flip) is None and informer.store.get(good) is not None

        # Each bad object is logged once, with its key and the decoding error.
        assert _skips(caplog, bad) == 1 and _skips(caplog, late_bad) == 1
        record = next(r for r in caplog.records if getattr(r, "key", None) == bad)
        assert "spec.taints.0.key" in str(getattr(record, "error", ""))
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        for name in (bad, late_bad):
            await storage.delete(f"{api.prefix}/nodes/{name}")


async def _now(value: object) -> object:
    """`value` as an awaitable, for `eventually` checks on in-memory state."""
    return value
