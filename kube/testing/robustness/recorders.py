"""The load's clients, each recording what the cluster acknowledged to it.

- `Watcher`: an HTTP watch through the API server with bookmarks, resumed from its last
  revision whenever the stream ends or fails, relisting (a new segment) only on 410;
- `Writer`: creates and updates ConfigMaps one at a time, recording every attempt and the
  resourceVersion of each acknowledged one (the client history of etcd's robustness tests);
- `Lister`: consistent LISTs (never older than the one before) and watch-cache LISTs
  (resourceVersion=0) paired with etcd's contents at the same revision.

All of them keep going through any failure (the faults are the point) until cancelled;
a 4xx that proves a write did not happen is not recorded as an attempt, while one
cancelled in flight is (the server may still apply it).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Coroutine
from typing import Any

import httpx

from kube.client.rest import RESTClient
from kube.errors import AlreadyExists, ApiError, NotFound, ResourceExpired
from kube.resources import ResourceInfo, resource_for_plural
from kube.testing.robustness.etcd_gateway import Compacted, EtcdGateway, Summarize
from kube.testing.robustness.history import BOOKMARK, ListObservation, ObservedEvent, WatchHistory, WatchSegment, Write

__all__ = ["resource", "summarize", "Watcher", "Writer", "Lister", "TRANSIENT"]

TRANSIENT = (ApiError, httpx.HTTPError, OSError, ValueError)
"""What a client of a cluster under faults retries: any API error, connection or decoding failure."""


def resource(group: str, plural: str) -> ResourceInfo:
    """A served resource by group and plural (LookupError for one the API does not serve)."""
    info = resource_for_plural(group, plural)
    if info is None:
        raise LookupError(f"no resource {plural}.{group}")
    return info


def summarize(type_: str, revision: int, key: str, obj: dict[str, Any]) -> ObservedEvent:
    """Reduce a ConfigMap, Pod or ReplicaSet to the fields the checks read."""
    meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
    owner = next((f"{meta.get('namespace', '')}/{r.get('name', '')}" for r in meta.get("ownerReferences") or []
                  if r.get("controller")), "")
    value = (obj.get("data") or {}).get("v", "") if obj.get("kind", "ConfigMap") == "ConfigMap" else ""
    if "replicas" in spec:
        value = str(spec["replicas"])
    return ObservedEvent(type=type_, key=key, revision=revision, uid=meta.get("uid", ""), value=value,
                         node_name=spec.get("nodeName", "") or "", owner=owner,
                         terminal=status.get("phase") in ("Succeeded", "Failed"),
                         deleting=bool(meta.get("deletionTimestamp")))


def object_key(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else str(meta.get("name", ""))


class Watcher:
    """One watcher; `history` grows while `run` goes on. Not safe to share between tasks."""

    def __init__(self, client: RESTClient, info: ResourceInfo, *, name: str, namespace: str | None = None,
                 rng: random.Random, summarize_fn: Summarize = summarize) -> None:
        self.client, self.info, self.namespace, self.rng = client, info, namespace, rng
        self.summarize = summarize_fn
        self.history = WatchHistory(name)
        self.relists = 0

    async def _relist(self) -> WatchSegment:
        listed = await self.client.list_raw(self.info, self.namespace)
        rev = int(listed["metadata"]["resourceVersion"])
        initial = [self.summarize("ADDED", int(o["metadata"]["resourceVersion"]), object_key(o), o)
                   for o in listed.get("items", [])]
        seg = WatchSegment(start_revision=rev, initial=initial)
        self.history.segments.append(seg)
        return seg

    async def run(self) -> None:
        """Watch until cancelled, resuming from the last revision seen and relisting on 410."""
        seg: WatchSegment | None = None
        while True:
            try:
                if seg is None:
                    seg = await self._relist()
                await self._watch(seg)
                seg.resumptions += 1
            except ResourceExpired:
                seg = None
                self.relists += 1
            except TRANSIENT:
                await asyncio.sleep(0.2)
                if seg is not None:
                    seg.resumptions += 1

    async def _watch(self, seg: WatchSegment) -> None:
        async for raw in self.client.watch_raw(self.info, self.namespace, resource_version=str(seg.last_revision),
                                               timeout_seconds=self.rng.randint(5, 15), allow_bookmarks=True):
            obj = raw.get("object") or {}
            rev = int((obj.get("metadata") or {}).get("resourceVersion", 0))
            if raw["type"] == BOOKMARK:
                seg.events.append(ObservedEvent(BOOKMARK, "", rev))
            else:
                seg.events.append(self.summarize(raw["type"], rev, object_key(obj), obj))

    async def watch_from(self, revision: int, *, until: int, timeout: float = 30) -> list[ObservedEvent]:
        """The events of one fresh watch from `revision` up to revision `until` (ResourceExpired on 410)."""
        seg = WatchSegment(start_revision=revision)

        async def follow() -> None:
            while seg.last_revision < until:
                try:
                    await self._watch(seg)
                except ResourceExpired:
                    raise
                except TRANSIENT:
                    await asyncio.sleep(0.2)

        await asyncio.wait_for(follow(), timeout)
        return [e for e in seg.events if e.type != BOOKMARK and e.revision <= until]


class Writer:
    """Writes `data.v` of ConfigMaps `cm-0..cm-{keys-1}` in turn, recording every attempt in `writes`."""

    def __init__(self, client: RESTClient, info: ResourceInfo, *, namespace: str, keys: int,
                 rng: random.Random) -> None:
        self.client, self.info, self.namespace, self.keys, self.rng = client, info, namespace, keys, rng
        self.writes: list[Write] = []
        self._exists: set[str] = set()

    async def run(self) -> None:
        seq = 0
        while True:
            seq += 1
            name = f"cm-{self.rng.randrange(self.keys)}"
            await self._write(name, str(seq), seq)
            await asyncio.sleep(0.02)

    async def _write(self, name: str, value: str, seq: int) -> None:
        key = f"{self.namespace}/{name}"
        try:
            if name in self._exists:
                answer = await self.client.patch_raw(self.info, name, {"data": {"v": value}}, self.namespace)
            else:
                body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"v": value}}
                answer = await self.client.create_raw(self.info, body, self.namespace)
            self._exists.add(name)
            self.writes.append(Write(key, value, seq, int(answer["metadata"]["resourceVersion"]), time.monotonic()))
        except AlreadyExists:
            self._exists.add(name)
        except NotFound:
            self._exists.discard(name)
        except ApiError as e:
            if e.code >= 500 or e.code == 429:
                self.writes.append(Write(key, value, seq, answered=time.monotonic()))
        except (httpx.HTTPError, OSError, ValueError):
            self.writes.append(Write(key, value, seq, answered=time.monotonic()))
            await asyncio.sleep(0.2)
        except asyncio.CancelledError:
            # Stopped with the request in flight: the server may still apply it.
            self.writes.append(Write(key, value, seq, answered=time.monotonic()))
            raise


class Lister:
    """Periodic LISTs of one namespace's collection: consistent ones, and watch-cache ones checked against etcd."""

    def __init__(self, client: RESTClient, info: ResourceInfo, *, namespace: str, gateway: EtcdGateway) -> None:
        self.client, self.info, self.namespace, self.gateway = client, info, namespace, gateway
        self.consistent: list[ListObservation] = []
        self.cache_pairs: list[tuple[ListObservation, ListObservation]] = []

    async def _list(self, rv: str | None, source: str) -> ListObservation:
        listed = await self.client.list_raw(self.info, self.namespace, resource_version=rv)
        items = tuple((object_key(o), int(o["metadata"]["resourceVersion"])) for o in listed.get("items", []))
        return ListObservation(int(listed["metadata"]["resourceVersion"]), items, source)

    async def compare_cache_with_etcd(self) -> None:
        """One consistency-detector probe: a resourceVersion=0 LIST against etcd at its revision."""
        cached = await self._list("0", "watch cache")
        prefix = self.gateway.resource_prefix(self.info.plural, self.namespace)
        _, items = await self.gateway.range(prefix, revision=cached.revision)
        stored = ListObservation(cached.revision, tuple((k, rev) for k, rev, _ in items),
                                 "etcd")
        self.cache_pairs.append((cached, stored))

    async def run(self) -> None:
        while True:
            try:
                self.consistent.append(await self._list(None, "consistent"))
                await self.compare_cache_with_etcd()
            except (Compacted, *TRANSIENT):
                pass
            await asyncio.sleep(0.5)


async def until_no_problems(check: Callable[[], Coroutine[Any, Any, list[str]]], timeout: float, *,
                            interval: float = 1.0) -> list[str]:
    """Poll `check` (its problems) until it reports none; its last problems at the deadline."""
    deadline, problems = time.monotonic() + timeout, ["never checked"]
    while time.monotonic() < deadline:
        try:
            problems = await check()
        except TRANSIENT as e:
            problems = [f"could not check: {e!r}"]
        if not problems:
            return []
        await asyncio.sleep(interval)
    return problems
