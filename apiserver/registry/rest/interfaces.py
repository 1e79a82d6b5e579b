"""REST storage: the verbs one resource or subresource serves, as small protocols.

Mirrors apiserver's registry/rest interfaces (Getter, Lister, Creater, Updater,
GracefulDeleter, CollectionDeleter, Watcher, Connecter). A storage implements the verbs it
serves and nothing else; the router answers 405 for the rest, and discovery lists exactly
the verbs a storage implements, so the two cannot disagree. Storages take and return plain
JSON objects; the endpoint layer decodes bodies into them and encodes what they return
(JSON, Tables, watch lines). Every write a storage makes goes through the registry with the
request's `RequestAdmission`, so admission sees it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from starlette.requests import Request
from starlette.responses import Response

from apiserver.admission.chain import RequestAdmission
from apiserver.authn import UserInfo
from apiserver.registry.generic import DeleteOptions, ListOptions
from apiserver.registry.watch_event import WatchEvent

__all__ = ["Context", "Kind", "Obj", "UpdateFunc", "Storage", "Getter", "Lister", "Creater", "Updater",
           "GracefulDeleter", "CollectionDeleter", "Watcher", "Connecter", "verbs_of"]

Obj = dict[str, Any]
UpdateFunc = Callable[[Obj | None], Obj]
"""Given the current object as the storage presents it (None: it does not exist), the new one."""


@dataclass(frozen=True)
class Kind:
    """The group, version and kind of the objects a storage takes and returns."""

    group: str
    version: str
    kind: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


@dataclass(frozen=True)
class Context:
    """What a storage knows of the request: who asks, where, and how the write is to be made."""

    user: UserInfo
    namespace: str | None
    admission: RequestAdmission
    dry_run: bool = False
    field_manager: str | None = None


class Storage(Protocol):
    """Every storage names the kind it serves."""

    kind: Kind


@runtime_checkable
class Getter(Protocol):
    async def get(self, ctx: Context, name: str) -> Obj: ...


@runtime_checkable
class Lister(Protocol):
    async def list(self, ctx: Context, opts: ListOptions) -> Obj: ...


@runtime_checkable
class Creater(Protocol):
    async def create(self, ctx: Context, name: str | None, obj: Obj) -> Obj:
        """Store `obj`; `name` is the parent object's name for a subresource (a binding), else None."""
        ...


@runtime_checkable
class Updater(Protocol):
    async def update(self, ctx: Context, name: str, transform: UpdateFunc, *,
                     allow_create: bool = False) -> tuple[Obj, bool]:
        """Apply `transform` to the current object (created when missing and allowed); (result, created)."""
        ...


@runtime_checkable
class GracefulDeleter(Protocol):
    async def delete(self, ctx: Context, name: str, opts: DeleteOptions) -> tuple[Obj, bool]:
        """Delete `name`; (the answer to send, whether the object is gone now rather than pending)."""
        ...


@runtime_checkable
class CollectionDeleter(Protocol):
    async def delete_collection(self, ctx: Context, opts: DeleteOptions, list_opts: ListOptions) -> Obj: ...


@runtime_checkable
class Watcher(Protocol):
    async def watch(self, ctx: Context, opts: ListOptions, *,
                    allow_bookmarks: bool) -> AsyncIterator[WatchEvent]: ...


@runtime_checkable
class Connecter(Protocol):
    """A subresource that streams (logs, and later exec, attach, port-forward, proxy)."""

    connect_methods: tuple[str, ...]

    async def connect(self, ctx: Context, name: str, request: Request) -> Response: ...


_VERBS: tuple[tuple[type, tuple[str, ...]], ...] = (
    (Getter, ("get",)), (Lister, ("list",)), (Creater, ("create",)), (Updater, ("update", "patch")),
    (GracefulDeleter, ("delete",)), (CollectionDeleter, ("deletecollection",)), (Watcher, ("watch",)),
)


_CONNECT_VERBS = {"GET": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
"""The verbs discovery lists for a connect subresource's methods (HEAD and OPTIONS are not listed)."""


def verbs_of(storage: object) -> list[str]:
    """The API verbs `storage` serves, in discovery's order (sorted, as upstream lists them)."""
    verbs = {v for proto, names in _VERBS if isinstance(storage, proto) for v in names}
    if isinstance(storage, Connecter):
        verbs.update(_CONNECT_VERBS[m] for m in storage.connect_methods if m in _CONNECT_VERBS)
    return sorted(verbs)
