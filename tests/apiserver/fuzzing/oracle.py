"""Did a rejected request leave anything behind? Asked of etcd's own history.

Before each write the fuzzer notes etcd's revision. If the write is rejected (4xx), or was a
dry run, and the revision has not moved, nothing was stored: the common case, one cheap call.
If it moved (the API server's own background work, such as a CRD's status, may write at any
time) the key space under the server's prefix at the noted revision is compared with now
(keys and mod revisions only): a rejected request must not have created or removed any key,
nor changed the key of the object it named. Reading at an old revision needs the server's
compaction off (`--etcd-compaction-interval 0`), which the fuzz server runs with.

Talks to etcd's JSON gateway (`/v3/kv/range`) so it needs no client of its own.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

import httpx

__all__ = ["Changes", "EtcdHistory"]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _prefix_end(prefix: bytes) -> bytes:
    return prefix[:-1] + bytes([prefix[-1] + 1])


@dataclass(frozen=True)
class Changes:
    created: frozenset[str]
    deleted: frozenset[str]
    modified: frozenset[str]

    def __bool__(self) -> bool:
        return bool(self.created or self.deleted or self.modified)


class EtcdHistory:
    """Revisions and key-space diffs under one API server's etcd prefix."""

    def __init__(self, client: httpx.Client, prefix: str) -> None:
        self.client = client
        self.prefix = prefix.rstrip("/").encode() + b"/"

    def revision(self) -> int:
        resp = self.client.post("/v3/kv/range", json={"key": _b64(self.prefix), "count_only": True})
        resp.raise_for_status()
        return int(resp.json()["header"]["revision"])

    def keys_at(self, revision: int | None = None) -> dict[str, int]:
        """Every key under the prefix with its mod revision, as of `revision` (default: now)."""
        body: dict[str, object] = {"key": _b64(self.prefix), "range_end": _b64(_prefix_end(self.prefix)),
                                   "keys_only": True}
        if revision is not None:
            body["revision"] = str(revision)
        resp = self.client.post("/v3/kv/range", json=body)
        resp.raise_for_status()
        return {base64.b64decode(kv["key"]).decode(): int(kv["mod_revision"]) for kv in resp.json().get("kvs", [])}

    def changes_since(self, revision: int) -> Changes:
        before, now = self.keys_at(revision), self.keys_at()
        return Changes(created=frozenset(now.keys() - before.keys()), deleted=frozenset(before.keys() - now.keys()),
                       modified=frozenset(k for k in now.keys() & before.keys() if now[k] != before[k]))

    def key(self, root: str, namespace: str | None, name: str) -> str:
        """The key of an object: `<prefix>/<root>/[<namespace>/]<name>` (`root` is the plural, or group/plural)."""
        scope = f"{namespace}/" if namespace is not None else ""
        return f"{self.prefix.decode()}{root}/{scope}{name}"
