"""pods/binding: one compare-and-swap from the watch cache's copy, exact when that copy is stale.

The binding storage runs here on a real etcd with a real watch cache that is stopped after
its first list, so it holds a snapshot that later writes do not reach: every answer must
still be the one etcd's current pod calls for (bound once, 409 when already bound, 404 when
gone, the UID a precondition).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from apiserver.admission.chain import AdmissionChain, RequestAdmission
from apiserver.authn.authenticator import UserInfo
from apiserver.registry.generic import RegistryStore
from apiserver.registry.kinds import strategy_for
from apiserver.registry.rest.binding import BindingStorage
from apiserver.registry.rest.interfaces import Context
from apiserver.registry.watch_cache import WatchCache
from apiserver.storage import Etcd3Storage
from kube.errors import Conflict, NotFound
from kube.resources import resource_for_plural

NS = "default"
_PODS = resource_for_plural("", "pods")
assert _PODS is not None
PODS = _PODS


@pytest_asyncio.fixture
async def pods(storage: Etcd3Storage, etcd_prefix: str) -> AsyncIterator[RegistryStore]:
    yield RegistryStore(storage, PODS, strategy_for(PODS), prefix=etcd_prefix)


async def freeze_cache(store: RegistryStore) -> None:
    """Give `store` a real watch cache holding what etcd has now, then stop it following etcd."""
    cache = WatchCache(store.storage, store.prefix(None), store.decode)
    task = asyncio.create_task(cache.run())
    await cache.wait_ready()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    store.enable_watch_cache(cache)


def ctx() -> Context:
    user = UserInfo(name="system:kube-scheduler")
    return Context(user=user, namespace=NS, admission=RequestAdmission(AdmissionChain(), user))


def binding(name: str, node: str, uid: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": NS}
    if uid:
        meta["uid"] = uid
    return {"apiVersion": "v1", "kind": "Binding", "metadata": meta, "target": {"kind": "Node", "name": node}}


async def create_pod(store: RegistryStore, name: str, **labels: str) -> dict[str, Any]:
    return await store.create(NS, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels},
                                   "spec": {"containers": [{"name": "c", "image": "busybox"}]}})


async def stored(store: RegistryStore, name: str) -> dict[str, Any]:
    kv = await store.storage.get(store.key(NS, name))
    return dict(json.loads(kv.value))


async def test_binding_from_a_stale_cached_copy_keeps_the_later_write(pods: RegistryStore) -> None:
    await create_pod(pods, "p")
    await freeze_cache(pods)
    await pods.patch(NS, "p", lambda o: {**o, "metadata": {**o["metadata"], "labels": {"later": "yes"}}})
    await BindingStorage(pods).create(ctx(), "p", binding("p", "n1"))
    pod = await stored(pods, "p")
    assert pod["spec"]["nodeName"] == "n1"
    assert pod["metadata"]["labels"] == {"later": "yes"}  # the CAS failed on the stale copy and retried on etcd's
    assert [c["status"] for c in pod["status"]["conditions"] if c["type"] == "PodScheduled"] == ["True"]


async def test_a_pod_bound_since_the_cache_saw_it_is_409(pods: RegistryStore) -> None:
    await create_pod(pods, "p")
    await freeze_cache(pods)
    await BindingStorage(pods).create(ctx(), "p", binding("p", "n1"))
    with pytest.raises(Conflict, match='pod p is already assigned to node "n1"'):
        await BindingStorage(pods).create(ctx(), "p", binding("p", "n2"))
    assert (await stored(pods, "p"))["spec"]["nodeName"] == "n1"


async def test_concurrent_bindings_of_one_pod_bind_it_once(pods: RegistryStore) -> None:
    await create_pod(pods, "p")
    await freeze_cache(pods)
    outcomes = await asyncio.gather(*(BindingStorage(pods).create(ctx(), "p", binding("p", f"n{i}"))
                                      for i in range(8)), return_exceptions=True)
    assert sum(1 for o in outcomes if not isinstance(o, BaseException)) == 1
    assert all(isinstance(o, Conflict) for o in outcomes if isinstance(o, BaseException))


async def test_missing_and_deleted_pods_are_404(pods: RegistryStore) -> None:
    await create_pod(pods, "gone")
    await freeze_cache(pods)
    await pods.storage.delete(pods.key(NS, "gone"))
    with pytest.raises(NotFound, match='pods "gone" not found'):
        await BindingStorage(pods).create(ctx(), "gone", binding("gone", "n1"))
    with pytest.raises(NotFound, match='pods "never" not found'):
        await BindingStorage(pods).create(ctx(), "never", binding("never", "n1"))


async def test_uid_is_a_precondition_judged_on_the_current_pod(pods: RegistryStore) -> None:
    old = await create_pod(pods, "p")
    await freeze_cache(pods)
    await pods.storage.delete(pods.key(NS, "p"))
    new = await create_pod(pods, "p")  # same name, new uid; the cache still has the old pod
    with pytest.raises(Conflict, match="UID"):
        await BindingStorage(pods).create(ctx(), "p", binding("p", "n1", uid=old["metadata"]["uid"]))
    await BindingStorage(pods).create(ctx(), "p", binding("p", "n1", uid=new["metadata"]["uid"]))
    assert (await stored(pods, "p"))["spec"]["nodeName"] == "n1"
