"""Controller references: building them, resolving them, and indexing objects by them.

Mirrors metav1.NewControllerRef and the controllerRef handling of pkg/controller. An
object has at most one owner reference with `controller: true`; that owner alone manages
it. Two informer indexes make the common questions lookups instead of scans:
- `CONTROLLER_UID_INDEX`: the uid of an object's controller ("pods owned by this RS");
- `ORPHAN_NAMESPACE_INDEX`: the namespace of objects with no controller ("orphans that an
  owner in this namespace might adopt").
Both index functions are shared, so every controller registering them gets the same index.
"""

from __future__ import annotations

from kube.api import KubeObject, OwnerReference
from kube.api.base import T_Object
from kube.cache import Store

__all__ = [
    "CONTROLLER_UID_INDEX",
    "ORPHAN_NAMESPACE_INDEX",
    "controller_uid_index",
    "is_controlled_by",
    "new_controller_ref",
    "orphan_namespace_index",
    "resolve_controller_ref",
]

CONTROLLER_UID_INDEX = "controller-uid"
ORPHAN_NAMESPACE_INDEX = "orphan-namespace"


def controller_uid_index(obj: KubeObject) -> list[str]:
    ref = obj.metadata.controller_ref()
    return [ref.uid] if ref is not None else []


def orphan_namespace_index(obj: KubeObject) -> list[str]:
    meta = obj.metadata
    return [meta.namespace or ""] if meta.controller_ref() is None else []


def new_controller_ref(owner: KubeObject) -> OwnerReference:
    """The reference a controller puts on what it creates or adopts."""
    meta = owner.metadata
    return OwnerReference(api_version=owner.info.api_version, kind=owner.info.kind, name=meta.name or "",
                          uid=meta.uid or "", controller=True, block_owner_deletion=True)


def is_controlled_by(obj: KubeObject, owner: KubeObject) -> bool:
    ref = obj.metadata.controller_ref()
    return ref is not None and ref.uid == owner.metadata.uid


def resolve_controller_ref(store: Store[T_Object], namespace: str | None, ref: OwnerReference | None,
                           kind: str) -> T_Object | None:
    """The cached owner a controller reference points at, if it is of `kind` and the uid matches.

    A name alone is not enough: an owner deleted and recreated under the same name is a
    different object and must not inherit the old one's dependents.
    """
    if ref is None or ref.kind != kind:
        return None
    owner = store.get_by_name(namespace, ref.name)
    if owner is None or owner.metadata.uid != ref.uid:
        return None
    return owner
