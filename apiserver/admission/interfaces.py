"""The admission interface: what every plugin sees of a write, and the two kinds of plugin.

Mirrors apiserver's admission.Attributes, MutationInterface and ValidationInterface. Every
create, update (PUT, PATCH, server-side apply, subresource writes) and delete of every
resource passes the chain: mutating plugins first, then the kind's strategy (defaults,
validation), then validating plugins, then storage. Guarantees a plugin can rely on:
- `object` is the object about to be stored (None for a delete), `old_object` the stored one
  (None for a create); mutating plugins may change `object` in place, validating ones must not;
- for an update both run inside the registry's compare-and-swap loop, so they may run again
  when another writer got there first: plugins must be idempotent;
- a plugin rejects by raising an `ApiError` (`Forbidden`, `Invalid`, `NotFound`); nothing is
  stored then;
- `held` is closed once the write has finished (stored or failed): a validating plugin that
  must keep others out until then (ResourceQuota's per-namespace lock) enters it there.
"""

from __future__ import annotations

import contextlib
import enum
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from apiserver.authn import UserInfo
from kube.resources import ResourceInfo

__all__ = ["Operation", "Attributes", "MutationInterface", "ValidationInterface", "Obj"]

Obj = dict[str, Any]


class Operation(enum.Enum):
    CREATE = "CREATE"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    CONNECT = "CONNECT"


@dataclass
class Attributes:
    """One write as admission sees it; `object` is the only field a mutating plugin changes."""

    operation: Operation
    resource: ResourceInfo
    subresource: str
    namespace: str
    name: str
    object: Obj | None
    old_object: Obj | None
    user: UserInfo
    dry_run: bool = False
    held: contextlib.AsyncExitStack = field(default_factory=contextlib.AsyncExitStack)

    def targets(self, group: str, plural: str, subresource: str = "") -> bool:
        """True for a write to exactly this resource (and subresource; "" is the main resource)."""
        return self.resource.group == group and self.resource.plural == plural and self.subresource == subresource


@runtime_checkable
class MutationInterface(Protocol):
    """A plugin that may change the incoming object."""

    name: str

    def handles(self, operation: Operation) -> bool: ...

    async def admit(self, attrs: Attributes) -> None: ...


@runtime_checkable
class ValidationInterface(Protocol):
    """A plugin that accepts or rejects the (final) incoming object, changing nothing."""

    name: str

    def handles(self, operation: Operation) -> bool: ...

    async def validate(self, attrs: Attributes) -> None: ...
