"""A watch cache index follows every change: creates, a change of the indexed value, deletes, relists.

A real etcd and a real cache; the index groups ConfigMaps by one label, as the Node
authorizer's groups pods by `spec.nodeName`.
"""

from __future__ import annotations

from typing import Any

from apiserver.registry.generic import DeleteOptions, RegistryStore
from apiserver.registry.watch_cache import WatchCache
from kube.testing.eventually import eventually
from tests.apiserver.test_watch_cache_window import NS, running, write


def _node(obj: dict[str, Any]) -> str | None:
    value = ((obj.get("metadata") or {}).get("labels") or {}).get("node")
    return value if isinstance(value, str) else None


async def test_the_index_follows_creates_changes_deletes_and_relists(configmaps: RegistryStore) -> None:
    await write(configmaps, "before", "0", node="a")  # there before the cache: found by the first list
    cache = WatchCache(configmaps.storage, configmaps.prefix(None), configmaps.decode)
    async with running(cache):
        cache.add_index("node", _node)
        configmaps.enable_watch_cache(cache)
        lister = configmaps.lister()

        def names(node: str) -> set[str]:
            return {o["metadata"]["name"] for o in lister.by_index("node", node)}

        async def shows(node: str, want: set[str]) -> bool:
            return names(node) == want

        assert names("a") == {"before"}
        await write(configmaps, "one", "1", node="a")
        await write(configmaps, "two", "2", node="b")
        await write(configmaps, "none", "3")
        await eventually(lambda: shows("a", {"before", "one"}))
        await eventually(lambda: shows("b", {"two"}))
        await write(configmaps, "one", "4", node="b")  # moves group
        await eventually(lambda: shows("b", {"one", "two"}))
        assert names("a") == {"before"}
        assert [o["data"]["v"] for o in lister.by_index("node", "b") if o["metadata"]["name"] == "one"] == ["4"]
        await configmaps.delete(NS, "two", DeleteOptions())
        await eventually(lambda: shows("b", {"one"}))
        await configmaps.delete(NS, "before", DeleteOptions())
        await eventually(lambda: shows("a", set()))
        await cache._relist()  # what the cache does when its etcd watch is lost
        assert names("b") == {"one"} and names("a") == set()
        assert lister.by_index("node", "nowhere") == []
