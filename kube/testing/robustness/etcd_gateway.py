"""etcd's own view of a key prefix, read through its JSON gateway (`/v3/kv/range`, `/v3/watch`).

The robustness checks compare what clients saw through the API server with the truth in
etcd, so this reads etcd directly and shares no code with the API server's storage layer.
Values are decoded as the JSON the API server stores; an object's payload is reduced with
the same `summarize` the watchers use, so both sides of a comparison are alike.

The history recorder survives etcd restarts and pauses: it resumes its watch from the
revision after the last event it recorded, so its history has no gaps unless etcd
compacted them, which it reports (`Compacted`).
"""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from kube.testing.robustness.history import ObservedEvent

__all__ = ["Compacted", "EtcdGateway", "Summarize", "cluster_gateway"]

Summarize = Callable[[str, int, str, dict[str, Any]], ObservedEvent]
"""(event type, revision, key, decoded object) -> the event as the checks see it."""


class Compacted(Exception):
    """The history asked for was compacted away."""


def _b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


def _prefix_end(prefix: str) -> str:
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


class EtcdGateway:
    """Range, watch and compact one etcd member over HTTP; each call opens its own connection."""

    def __init__(self, endpoint: str, *, registry_prefix: str = "/registry/",
                 ca_file: str | None = None, cert: tuple[str, str] | None = None) -> None:
        """`ca_file` and `cert` (certificate, key): for a member serving https with client certificates."""
        self.endpoint = endpoint.rstrip("/")
        self.registry_prefix = registry_prefix
        self._tls: dict[str, Any] = {}
        if endpoint.startswith("https"):
            context = ssl.create_default_context(cafile=ca_file)
            if cert is not None:
                context.load_cert_chain(*cert)
            self._tls = {"verify": context}

    def _key(self, raw: str) -> str:
        """`namespace/name` (or `name`) of `/registry/<resource>/[namespace/]name`."""
        return base64.b64decode(raw).decode()[len(self.registry_prefix):].split("/", 1)[1]

    def resource_prefix(self, plural: str, namespace: str | None) -> str:
        return f"{self.registry_prefix}{plural}/" + (f"{namespace}/" if namespace else "")

    async def range(self, prefix: str, *, revision: int = 0) -> tuple[int, list[tuple[str, int, dict[str, Any]]]]:
        """(revision read at, [(namespace/name, mod_revision, object)]); Compacted if `revision` is gone."""
        body: dict[str, Any] = {"key": _b64(prefix), "range_end": _b64(_prefix_end(prefix))}
        if revision:
            body["revision"] = revision
        async with httpx.AsyncClient(timeout=10, **self._tls) as http:
            resp = await http.post(f"{self.endpoint}/v3/kv/range", json=body)
        answer = resp.json()
        if resp.status_code != 200:
            if "compacted" in str(answer.get("message", "")):
                raise Compacted(str(answer))
            raise RuntimeError(f"etcd range failed: {answer}")
        items = [(self._key(kv["key"]), int(kv["mod_revision"]),
                  json.loads(base64.b64decode(kv.get("value", "")) or b"{}")) for kv in answer.get("kvs", [])]
        return int(answer["header"]["revision"]), items

    async def current_revision(self) -> int:
        async with httpx.AsyncClient(timeout=10, **self._tls) as http:
            resp = await http.post(f"{self.endpoint}/v3/kv/range", json={"key": _b64("\0"), "keys_only": True})
        return int(resp.json()["header"]["revision"])

    async def compact(self, revision: int) -> None:
        async with httpx.AsyncClient(timeout=30, **self._tls) as http:
            resp = await http.post(f"{self.endpoint}/v3/kv/compaction", json={"revision": revision, "physical": True})
        if resp.status_code != 200 and "compacted" not in resp.text:
            raise RuntimeError(f"etcd compaction failed: {resp.text}")

    async def record(self, prefix: str, *, after: int, summarize: Summarize, into: list[ObservedEvent],
                     stop: asyncio.Event, until: Callable[[], int] = lambda: 0) -> None:
        """Append every change below `prefix` after revision `after` to `into`, resuming across etcd restarts.

        Returns once `stop` is set and the history reached `until()` (a revision), so a
        caller can ask for the history up to a known point. Raises Compacted if etcd no
        longer has the revisions it needs.
        """
        while not (stop.is_set() and (into[-1].revision if into else after) >= until()):
            last = into[-1].revision if into else after
            try:
                await self._watch_once(prefix, start=last + 1, summarize=summarize, into=into,
                                       stop=stop, until=until)
            except (httpx.HTTPError, ValueError, KeyError):
                await asyncio.sleep(0.2)

    async def _watch_once(self, prefix: str, *, start: int, summarize: Summarize, into: list[ObservedEvent],
                          stop: asyncio.Event, until: Callable[[], int]) -> None:
        request = {"create_request": {"key": _b64(prefix), "range_end": _b64(_prefix_end(prefix)),
                                      "start_revision": start, "progress_notify": True}}
        timeout = httpx.Timeout(5.0, read=2.0)
        async with httpx.AsyncClient(timeout=timeout, **self._tls) as http, \
                http.stream("POST", f"{self.endpoint}/v3/watch", json=request) as resp:
            async for line in resp.aiter_lines():
                result = json.loads(line).get("result", {})
                if int(result.get("compact_revision", 0) or 0):
                    raise Compacted(f"etcd compacted {prefix} up to {result['compact_revision']}, needed {start}")
                for e in result.get("events", []):
                    into.append(self._event(e, prefix, summarize))
                if stop.is_set() and (into[-1].revision if into else start - 1) >= until():
                    return

    def _event(self, e: dict[str, Any], prefix: str, summarize: Summarize) -> ObservedEvent:
        kv = e["kv"]
        rev = int(kv["mod_revision"])
        key = self._key(kv["key"])
        if e.get("type") == "DELETE":
            return summarize("DELETED", rev, key, {})
        obj = json.loads(base64.b64decode(kv.get("value", "")) or b"{}")
        return summarize("ADDED" if kv.get("create_revision") == kv["mod_revision"] else "MODIFIED", rev, key, obj)


def cluster_gateway(data_dir: Path, endpoint: str) -> EtcdGateway:
    """A gateway to `endpoint`, a member of the etcd that `picokube up` runs for `data_dir`,
    with that etcd's health-check client certificate (its members serve https only)."""
    pki = data_dir / "pki" / "etcd"
    return EtcdGateway(endpoint, ca_file=str(pki / "ca.crt"),
                       cert=(str(pki / "healthcheck-client.crt"), str(pki / "healthcheck-client.key")))
