"""DefaultStorageClass: a claim that names no class gets the cluster's default class.

Mirrors plugin/pkg/admission/storage/storageclass/setdefault: on create, a claim whose
`spec.storageClassName` is unset (not "", which asks for no class) and which carries no beta
class annotation gets the class annotated `storageclass.kubernetes.io/is-default-class: "true"`;
of several defaults the newest wins (the name breaks ties), as upstream's GetDefaultClass
picks. Without a default class the claim is left alone. Classes are read from storage, so a
class created just before the claim is seen.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from apiserver.admission.interfaces import Attributes, Obj, Operation
from kube.api.storage_v1 import is_default_class

__all__ = ["DefaultStorageClass", "default_class_name"]

_BETA_CLASS = "volume.beta.kubernetes.io/storage-class"


def default_class_name(classes: list[Obj]) -> str | None:
    """The default among `classes`: the newest annotated one, or None."""
    defaults = [c for c in classes if is_default_class((c.get("metadata") or {}).get("annotations"))]
    if not defaults:
        return None
    newest = max(defaults, key=lambda c: (str((c.get("metadata") or {}).get("creationTimestamp") or ""),
                                          str((c.get("metadata") or {}).get("name") or "")))
    return str(newest["metadata"]["name"])


class DefaultStorageClass:
    name = "DefaultStorageClass"

    def __init__(self, list_classes: Callable[[], Awaitable[list[Obj]]]) -> None:
        self.list_classes = list_classes

    def handles(self, operation: Operation) -> bool:
        return operation is Operation.CREATE

    async def admit(self, attrs: Attributes) -> None:
        claim = attrs.object
        if not attrs.targets("", "persistentvolumeclaims") or not isinstance(claim, dict):
            return
        spec = claim.get("spec")
        annotations = (claim.get("metadata") or {}).get("annotations") or {}
        if not isinstance(spec, dict) or spec.get("storageClassName") is not None or _BETA_CLASS in annotations:
            return
        name = default_class_name(await self.list_classes())
        if name is not None:
            spec["storageClassName"] = name
