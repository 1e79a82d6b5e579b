"""An async REST client for the Kubernetes API over httpx, typed and untyped.

Two layers share one connection pool:
- the `*_raw` methods speak dicts for any served resource (pkctl, generic code);
- the typed methods (`get`, `list`, `create`, `update`, `patch`, `delete`, `watch`) take and
  return `KubeObject` models for the components.

Every write names its author: `?fieldManager=<component>` and a `User-Agent`, so the API
can record who wrote what. A write made inside a traced hop gets a client span and carries
its W3C `traceparent` header, so the API server's span (and the object it writes) continue
the trace. Failures come back as `kube.errors.ApiError` subclasses rebuilt
from the server's `Status`; transport failures surface as `httpx.TransportError`. An answer
that asks to come back later (429, or a 5xx with a `Retry-After` header, as an overloaded API
server sends) is retried after the seconds it names, up to 10 times, as client-go's
request retry does; the server refused such a request before acting on it.
Safe to use from many tasks of one event loop at once.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic

import httpx
from opentelemetry import trace

from kube.api.base import KubeObject, T_Object
from kube.client.config import ClientConfig
from kube.errors import ApiError, error_from_status
from kube.resources import ResourceInfo
from kube.tracing import TRACEPARENT, attrs, current_traceparent, object_ref, write_span

__all__ = ["PATCH_TYPES", "ObjectList", "RESTClient", "WatchEvent"]

logger = logging.getLogger(__name__)

_MAX_RETRIES = 10
"""How often a request the server asked to retry later is sent again (client-go's default)."""
_MAX_CONNECTION_RETRIES = 3
"""How often a GET whose connection broke or timed out is sent again."""
_CONNECTION_RETRY_DELAY = 1.0


def _retry_after(resp: httpx.Response) -> float | None:
    """The seconds to wait before sending again, when `resp` (a 429 or a 5xx) names them."""
    if resp.status_code != 429 and resp.status_code < 500:
        return None
    try:
        seconds = int(resp.headers.get("retry-after", ""))
    except ValueError:
        return None
    return float(seconds) if seconds > 0 else None


WATCH_IDLE_TIMEOUT = 45.0
"""Seconds of silence after which a watch that asked for bookmarks is abandoned as hung.

The API server sends a BOOKMARK after 30 s without events; client-go likewise pings an HTTP/2
connection idle for 30 s and drops it 15 s later without an answer. The caller (a reflector)
then resumes from its last resourceVersion, through a balancer on another server.
"""

PATCH_TYPES = {
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "json": "application/json-patch+json",
    "apply": "application/apply-patch+yaml",
}


@dataclass(frozen=True)
class ObjectList(Generic[T_Object]):
    """One page of a list: items plus the list's resourceVersion and continue token."""

    items: list[T_Object]
    resource_version: str
    continue_token: str | None = None


@dataclass(frozen=True)
class WatchEvent(Generic[T_Object]):
    """A decoded watch event; `object` is None for BOOKMARK events (use `resource_version`)."""

    type: str
    object: T_Object | None
    resource_version: str
    raw: dict[str, Any]


def _record_written(span: trace.Span, answer: Any) -> None:
    """Name the object a write produced and its new resourceVersion on the write's span."""
    if not isinstance(answer, dict) or not span.is_recording():
        return
    meta = answer.get("metadata") or {}
    if answer.get("kind") and meta.get("name"):
        span.set_attribute(attrs.OBJECT, object_ref(str(answer["kind"]), meta.get("namespace"), meta["name"]))
    if meta.get("resourceVersion"):
        span.set_attribute(attrs.RESOURCE_VERSION, str(meta["resourceVersion"]))


def _clean(params: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in params.items():
        if v is None or v == "":
            continue
        out[k] = ("true" if v else "false") if isinstance(v, bool) else v
    return out


class RESTClient:
    """A client bound to one API server and one identity."""

    def __init__(self, config: ClientConfig, *, user_agent: str = "picokube", field_manager: str | None = None,
                 timeout: float = 30.0, max_connections: int = 100,
                 transport: httpx.AsyncBaseTransport | None = None,
                 watch_idle_timeout: float = WATCH_IDLE_TIMEOUT) -> None:
        """`transport` replaces the network (TLS settings then do not apply); tests pass an
        in-process one that plays the API server. `timeout` bounds each ordinary request's
        silence, `watch_idle_timeout` a bookmarked watch's."""
        self.config = config
        self.watch_idle_timeout = watch_idle_timeout
        self.field_manager = field_manager
        headers = {"User-Agent": user_agent, "Accept": "application/json"}
        if config.token:
            headers["Authorization"] = f"Bearer {config.token}"
        self._http = httpx.AsyncClient(
            base_url=config.server, headers=headers, verify=config.ssl_context(),
            timeout=httpx.Timeout(timeout, connect=10.0),
            limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
            transport=transport,
        )

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> RESTClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- the raw layer -------------------------------------------------------------------
    async def request(self, method: str, path: str, *, params: Mapping[str, Any] | None = None,
                      body: Any = None, content_type: str = "application/json",
                      headers: Mapping[str, str] | None = None) -> Any:
        """Send one request; return the decoded JSON (or text) body; raise ApiError on failure."""
        if method == "GET":
            return await self._request(method, path, params=params, body=body, content_type=content_type,
                                       headers=headers)
        with write_span(method, path) as span:
            answer = await self._request(method, path, params=params, body=body, content_type=content_type,
                                         headers=headers)
            if span is not None:
                _record_written(span, answer)
            return answer

    async def _request(self, method: str, path: str, *, params: Mapping[str, Any] | None, body: Any,
                       content_type: str, headers: Mapping[str, str] | None) -> Any:
        hdrs = dict(headers or {})
        traceparent = current_traceparent() if method != "GET" else None
        if traceparent:
            hdrs[TRACEPARENT] = traceparent
        content: bytes | None = None
        if body is not None:
            content = body if isinstance(body, bytes) else json.dumps(body).encode()
            hdrs["Content-Type"] = content_type
        resp = await self._send(method, path, params=params, content=content, headers=hdrs)
        for _ in range(_MAX_RETRIES):
            delay = _retry_after(resp)
            if delay is None:
                break
            logger.debug("Server asked to retry later", extra={"path": path, "code": resp.status_code, "after": delay})
            await asyncio.sleep(delay)
            resp = await self._send(method, path, params=params, content=content, headers=hdrs)
        if resp.status_code >= 400:
            raise self._error(resp)
        if resp.headers.get("content-type", "").startswith("application/json"):
            return resp.json()
        return resp.text

    async def _send(self, method: str, path: str, *, params: Mapping[str, Any] | None, content: bytes | None,
                    headers: Mapping[str, str]) -> httpx.Response:
        """One request; a GET whose connection broke or went silent is sent again, after a second.

        As client-go does for GETs (connection reset, EOF), and for a silent server too: behind
        a balancer the next attempt reaches a healthy API server. Writes are never resent here,
        since the server may have applied them.
        """
        for attempt in range(_MAX_CONNECTION_RETRIES + 1):
            try:
                return await self._http.request(method, path, params=_clean(params or {}), content=content,
                                                headers=headers)
            except (httpx.ReadError, httpx.RemoteProtocolError, httpx.ReadTimeout) as e:
                if method != "GET" or attempt == _MAX_CONNECTION_RETRIES:
                    raise
                logger.debug("GET failed on the connection, retrying", extra={"path": path, "error": repr(e)})
                await asyncio.sleep(_CONNECTION_RETRY_DELAY)
        raise AssertionError("unreachable")

    async def stream_text(self, path: str, *, params: Mapping[str, Any] | None = None) -> AsyncIterator[str]:
        """GET `path` and yield the body as it arrives (pods/log with follow=true); ApiError on failure."""
        async with self._http.stream("GET", path, params=_clean(params or {}), timeout=None) as resp:
            if resp.status_code >= 400:
                await resp.aread()
                raise self._error(resp)
            async for chunk in resp.aiter_text():
                yield chunk

    @staticmethod
    def _error(resp: httpx.Response) -> ApiError:
        try:
            status = resp.json()
        except ValueError:
            status = None
        return error_from_status(status, http_code=resp.status_code, fallback_message=resp.text[:500])

    def _write_params(self, dry_run: bool = False, **extra: Any) -> dict[str, Any]:
        return {"fieldManager": self.field_manager, "dryRun": "All" if dry_run else None, **extra}

    async def get_raw(self, info: ResourceInfo, name: str, namespace: str | None = None,
                      subresource: str | None = None) -> dict[str, Any]:
        return dict(await self.request("GET", info.object_path(name, namespace, subresource)))

    async def list_raw(self, info: ResourceInfo, namespace: str | None = None, *,
                       label_selector: str | None = None, field_selector: str | None = None,
                       limit: int | None = None, continue_token: str | None = None,
                       resource_version: str | None = None) -> dict[str, Any]:
        params = {"labelSelector": label_selector, "fieldSelector": field_selector, "limit": limit,
                  "continue": continue_token, "resourceVersion": resource_version}
        return dict(await self.request("GET", info.base_path(namespace), params=params))

    async def create_raw(self, info: ResourceInfo, body: dict[str, Any], namespace: str | None = None, *,
                         name: str | None = None, subresource: str | None = None,
                         dry_run: bool = False) -> dict[str, Any]:
        path = info.object_path(name, namespace, subresource) if subresource and name else info.base_path(namespace)
        return dict(await self.request("POST", path, params=self._write_params(dry_run), body=body))

    async def replace_raw(self, info: ResourceInfo, body: dict[str, Any], *, name: str,
                          namespace: str | None = None, subresource: str | None = None,
                          dry_run: bool = False) -> dict[str, Any]:
        path = info.object_path(name, namespace, subresource)
        return dict(await self.request("PUT", path, params=self._write_params(dry_run), body=body))

    async def patch_raw(self, info: ResourceInfo, name: str, patch: Any, namespace: str | None = None, *,
                        subresource: str | None = None, patch_type: str = "merge", force: bool | None = None,
                        dry_run: bool = False) -> dict[str, Any]:
        path = info.object_path(name, namespace, subresource)
        params = self._write_params(dry_run, force=force)
        return dict(await self.request("PATCH", path, params=params, body=patch, content_type=PATCH_TYPES[patch_type]))

    async def delete_raw(self, info: ResourceInfo, name: str, namespace: str | None = None, *,
                         grace_period_seconds: int | None = None, propagation_policy: str | None = None,
                         preconditions: dict[str, str] | None = None, dry_run: bool = False) -> dict[str, Any]:
        options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if grace_period_seconds is not None:
            options["gracePeriodSeconds"] = grace_period_seconds
        if propagation_policy:
            options["propagationPolicy"] = propagation_policy
        if preconditions:
            options["preconditions"] = preconditions
        if dry_run:
            options["dryRun"] = ["All"]
        return dict(await self.request("DELETE", info.object_path(name, namespace), body=options))

    async def watch_raw(self, info: ResourceInfo, namespace: str | None = None, *,
                        resource_version: str | None = None, label_selector: str | None = None,
                        field_selector: str | None = None, timeout_seconds: int | None = None,
                        allow_bookmarks: bool = True) -> AsyncIterator[dict[str, Any]]:
        """Yield raw watch events until the server closes the stream.

        An `ERROR` event is raised as the ApiError its Status describes (410 -> ResourceExpired).
        """
        params = _clean({"watch": True, "resourceVersion": resource_version, "labelSelector": label_selector,
                         "fieldSelector": field_selector, "timeoutSeconds": timeout_seconds,
                         "allowWatchBookmarks": allow_bookmarks or None})
        # With bookmarks the server speaks at least every bookmark interval, so a longer silence
        # means a hung peer (a stopped process, a lost machine), not a quiet resource.
        idle = self.watch_idle_timeout if allow_bookmarks else (timeout_seconds + 30) if timeout_seconds else None
        timeout = httpx.Timeout(10.0, read=idle)
        async with self._http.stream("GET", info.base_path(namespace), params=params, timeout=timeout) as resp:
            if resp.status_code >= 400:
                await resp.aread()
                raise self._error(resp)
            async for line in resp.aiter_lines():
                if not line.strip():
                    continue
                event = json.loads(line)
                if event.get("type") == "ERROR":
                    status = event.get("object")
                    raise error_from_status(status, http_code=int((status or {}).get("code") or 500))
                yield event

    # --- the typed layer -----------------------------------------------------------------
    async def get(self, cls: type[T_Object], name: str, namespace: str | None = None) -> T_Object:
        return cls.model_validate(await self.get_raw(cls.info, name, namespace))

    async def list(self, cls: type[T_Object], namespace: str | None = None, *, label_selector: str | None = None,
                   field_selector: str | None = None, limit: int | None = None,
                   continue_token: str | None = None, resource_version: str | None = None) -> ObjectList[T_Object]:
        raw = await self.list_raw(cls.info, namespace, label_selector=label_selector, field_selector=field_selector,
                                  limit=limit, continue_token=continue_token, resource_version=resource_version)
        meta = raw.get("metadata") or {}
        return ObjectList([cls.model_validate(i) for i in raw.get("items") or []],
                          str(meta.get("resourceVersion", "")), meta.get("continue") or None)

    async def list_all(self, cls: type[T_Object], namespace: str | None = None, *, page_size: int = 500,
                       **selectors: Any) -> ObjectList[T_Object]:
        """Follow `continue` tokens until the whole list is read (one consistent snapshot)."""
        items: list[T_Object] = []
        token: str | None = None
        while True:
            page = await self.list(cls, namespace, limit=page_size, continue_token=token, **selectors)
            items.extend(page.items)
            token = page.continue_token
            if not token:
                return ObjectList(items, page.resource_version)

    @staticmethod
    def _ns(obj: KubeObject) -> str | None:
        return obj.metadata.namespace if obj.info.namespaced else None

    async def create(self, obj: T_Object, *, dry_run: bool = False) -> T_Object:
        raw = await self.create_raw(obj.info, obj.to_dict(), self._ns(obj), dry_run=dry_run)
        return type(obj).model_validate(raw)

    async def update(self, obj: T_Object) -> T_Object:
        name = obj.metadata.name or ""
        raw = await self.replace_raw(obj.info, obj.to_dict(), name=name, namespace=self._ns(obj))
        return type(obj).model_validate(raw)

    async def update_status(self, obj: T_Object) -> T_Object:
        name = obj.metadata.name or ""
        raw = await self.replace_raw(obj.info, obj.to_dict(), name=name, namespace=self._ns(obj), subresource="status")
        return type(obj).model_validate(raw)

    async def patch(self, cls: type[T_Object], name: str, patch: Any, namespace: str | None = None, *,
                    subresource: str | None = None, patch_type: str = "merge") -> T_Object:
        raw = await self.patch_raw(cls.info, name, patch, namespace, subresource=subresource, patch_type=patch_type)
        return cls.model_validate(raw)

    async def delete(self, cls: type[KubeObject], name: str, namespace: str | None = None, *,
                     grace_period_seconds: int | None = None, propagation_policy: str | None = None,
                     uid: str | None = None) -> None:
        await self.delete_raw(cls.info, name, namespace, grace_period_seconds=grace_period_seconds,
                              propagation_policy=propagation_policy, preconditions={"uid": uid} if uid else None)

    async def bind(self, *, namespace: str, name: str, node_name: str, uid: str | None = None) -> None:
        """POST pods/<name>/binding: record the scheduler's decision (sets spec.nodeName)."""
        from kube.api.core_v1 import Pod  # local: keeps the module import graph flat

        body: dict[str, Any] = {"apiVersion": "v1", "kind": "Binding",
                                "metadata": {"name": name, "namespace": namespace},
                                "target": {"apiVersion": "v1", "kind": "Node", "name": node_name}}
        if uid:
            body["metadata"]["uid"] = uid
        await self.create_raw(Pod.info, body, namespace, name=name, subresource="binding")

    async def watch(self, cls: type[T_Object], namespace: str | None = None, *,
                    resource_version: str | None = None, label_selector: str | None = None,
                    field_selector: str | None = None, timeout_seconds: int | None = None,
                    allow_bookmarks: bool = True) -> AsyncIterator[WatchEvent[T_Object]]:
        async for ev in self.watch_raw(cls.info, namespace, resource_version=resource_version,
                                       label_selector=label_selector, field_selector=field_selector,
                                       timeout_seconds=timeout_seconds, allow_bookmarks=allow_bookmarks):
            raw_obj = ev.get("object") or {}
            rv = str((raw_obj.get("metadata") or {}).get("resourceVersion", ""))
            obj = None if ev["type"] == "BOOKMARK" else cls.model_validate(raw_obj)
            yield WatchEvent(ev["type"], obj, rv, ev)
