"""A tiny API server that lives inside a unit test, served to RESTClient through an httpx transport.

It stands in for the world outside the shared library, so `kube/` modules can be tested
alone, with a FakeClock, in milliseconds. It keeps just enough of the API's semantics:
- objects per collection, one global resourceVersion counter bumped by every write;
- list returns the collection and the current resourceVersion;
- watch streams every change after the requested resourceVersion, then, while `hold_watches`
  is True, waits for new ones until `end_watches()`; a resourceVersion older than the last
  `compact()` gets a 410 Gone ERROR event, as etcd compaction does;
- create (409 AlreadyExists), update (409 Conflict on a stale resourceVersion), merge patch
  and delete, with Status bodies the client turns back into ApiErrors.
Every request is recorded in `requests`. A transport may carry `before`/`after` hooks
(awaited before the request is applied and before its response is returned), which is how
tests delay one client's requests or fail them.

The components' tests never use this: they run against the real API server.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx

__all__ = ["Hook", "InProcessApi", "Recorded"]

Hook = Callable[[httpx.Request], Awaitable[None]]

_PATH = re.compile(r"^(?P<root>/api/v1|/apis/[^/]+/[^/]+)(?:/namespaces/(?P<ns>[^/]+))?/(?P<resource>[^/]+)"
                   r"(?:/(?P<name>[^/]+))?(?:/(?P<sub>[^/]+))?$")


@dataclass(frozen=True)
class Recorded:
    """One request as the server saw it."""

    method: str
    path: str
    params: dict[str, str]
    body: Any


@dataclass(frozen=True)
class _Key:
    root: str
    resource: str
    namespace: str
    name: str


def _status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code, "reason": reason,
            "message": message}


def _merge(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


class InProcessApi:
    def __init__(self) -> None:
        self.resource_version = 0
        self.compacted = 0
        self.hold_watches = True
        self.objects: dict[_Key, dict[str, Any]] = {}
        self.history: list[tuple[int, str, _Key, dict[str, Any]]] = []
        self.requests: list[Recorded] = []
        self._changed = asyncio.Event()
        self._epoch = 0

    # --- what tests call directly -------------------------------------------------------
    def transport(self, *, before: Hook | None = None, after: Hook | None = None) -> httpx.MockTransport:
        async def handle(request: httpx.Request) -> httpx.Response:
            await asyncio.sleep(0)  # a round trip always yields to the loop, as a socket would
            if before is not None:
                await before(request)
            response = self._handle(request)
            if after is not None:
                await after(request)
            return response
        return httpx.MockTransport(handle)

    def put(self, path: str, obj: dict[str, Any]) -> dict[str, Any]:
        """Create or replace the object at the object path `path` (an out-of-band write)."""
        key = self._key(path)
        assert key is not None
        return self._write("MODIFIED" if key in self.objects else "ADDED", key, obj)

    def remove(self, path: str) -> None:
        key = self._key(path)
        assert key is not None and key in self.objects
        self._write("DELETED", key, self.objects.pop(key))

    def get(self, path: str) -> dict[str, Any] | None:
        key = self._key(path)
        return self.objects.get(key) if key is not None else None

    def compact(self) -> None:
        """Forget every change up to now: watches from an older resourceVersion get 410 Gone."""
        self.compacted = self.resource_version
        self.history.clear()

    def end_watches(self) -> None:
        """Close every open watch stream, as the server's watch timeout would."""
        self._epoch += 1
        self._wake()

    def watches(self) -> list[Recorded]:
        return [r for r in self.requests if r.params.get("watch") == "true"]

    def lists(self) -> list[Recorded]:
        return [r for r in self.requests if r.method == "GET" and r.params.get("watch") != "true"
                and (k := self._key(r.path)) is not None and not k.name]

    # --- request handling ---------------------------------------------------------------
    @staticmethod
    def _key(path: str) -> _Key | None:
        m = _PATH.match(path)
        if m is None:
            return None
        return _Key(m["root"], m["resource"], m["ns"] or "", m["name"] or "")

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def _write(self, type_: str, key: _Key, obj: dict[str, Any]) -> dict[str, Any]:
        self.resource_version += 1
        meta = dict(obj.get("metadata") or {})
        meta.setdefault("name", key.name)
        if key.namespace:
            meta.setdefault("namespace", key.namespace)
        meta.setdefault("uid", f"uid-{key.name}")
        meta["resourceVersion"] = str(self.resource_version)
        stored = {**obj, "metadata": meta}
        if type_ != "DELETED":
            self.objects[key] = stored
        self.history.append((self.resource_version, type_, key, stored))
        self._wake()
        return stored

    def _handle(self, request: httpx.Request) -> httpx.Response:
        params = dict(request.url.params)
        body: dict[str, Any] = json.loads(request.content) if request.content else {}
        self.requests.append(Recorded(request.method, request.url.path, params, body))
        key = self._key(request.url.path)
        if key is None:
            return httpx.Response(404, json=_status(404, "NotFound", f"no route {request.url.path}"))
        if request.method == "GET" and not key.name:
            if params.get("watch") == "true":
                return self._watch(key, params)
            return self._list(key)
        if request.method == "POST" and not key.name:
            named = _Key(key.root, key.resource, key.namespace, str((body.get("metadata") or {}).get("name")))
            if named in self.objects:
                return httpx.Response(409, json=_status(409, "AlreadyExists", f"{named.name} already exists"))
            return httpx.Response(201, json=self._write("ADDED", named, body))
        current = self.objects.get(key)
        if current is None:
            return httpx.Response(404, json=_status(404, "NotFound", f"{key.resource} {key.name!r} not found"))
        if request.method == "GET":
            return httpx.Response(200, json=current)
        if request.method == "PUT":
            sent = str((body.get("metadata") or {}).get("resourceVersion") or "")
            if sent and sent != current["metadata"]["resourceVersion"]:
                return httpx.Response(409, json=_status(409, "Conflict", "the object has been modified"))
            return httpx.Response(200, json=self._write("MODIFIED", key, body))
        if request.method == "PATCH":
            return httpx.Response(200, json=self._write("MODIFIED", key, _merge(current, body)))
        if request.method == "DELETE":
            del self.objects[key]
            return httpx.Response(200, json=self._write("DELETED", key, current))
        return httpx.Response(405, json=_status(405, "MethodNotAllowed", request.method))

    def _matches(self, collection: _Key, key: _Key) -> bool:
        return (key.root, key.resource) == (collection.root, collection.resource) and \
            (not collection.namespace or collection.namespace == key.namespace)

    def _list(self, collection: _Key) -> httpx.Response:
        items = [o for k, o in sorted(self.objects.items(), key=lambda kv: kv[0].name) if self._matches(collection, k)]
        return httpx.Response(200, json={"kind": "List", "apiVersion": "v1", "items": items,
                                         "metadata": {"resourceVersion": str(self.resource_version)}})

    def _watch(self, collection: _Key, params: dict[str, str]) -> httpx.Response:
        since = int(params.get("resourceVersion") or self.resource_version)
        if since < self.compacted:
            gone = {"type": "ERROR", "object": _status(410, "Expired", f"too old resource version: {since}")}
            return httpx.Response(200, headers={"content-type": "application/json"},
                                  content=(json.dumps(gone) + "\n").encode())
        return httpx.Response(200, headers={"content-type": "application/json"},
                              content=self._stream(collection, since, self._epoch))

    async def _stream(self, collection: _Key, since: int, epoch: int) -> AsyncIterator[bytes]:
        sent = since
        while True:
            for rv, type_, key, obj in list(self.history):
                if rv > sent and self._matches(collection, key):
                    yield (json.dumps({"type": type_, "object": obj}) + "\n").encode()
            sent = max([sent, *(rv for rv, *_ in self.history)])
            if not self.hold_watches or self._epoch != epoch:
                return
            await self._changed.wait()
            if self._epoch != epoch:  # ended: what was written meanwhile is for the next watch
                return
