"""storage.k8s.io/v1 StorageClass: how volumes of a class are provisioned and when they bind.

A claim naming a class (or, through the DefaultStorageClass admission, the class annotated
`storageclass.kubernetes.io/is-default-class: "true"`) is provisioned by the class's
`provisioner`; `volumeBindingMode` WaitForFirstConsumer delays that until the scheduler has
placed a pod using the claim. `parameters`, `provisioner` and `reclaimPolicy` are immutable.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from kube.api.base import KubeObject
from kube.api.meta import ObjectMeta
from kube.resources import ResourceInfo, resource_for_kind

__all__ = ["ANN_DEFAULT_STORAGE_CLASS", "ANN_BETA_DEFAULT_STORAGE_CLASS", "BINDING_IMMEDIATE",
           "BINDING_WAIT_FOR_FIRST_CONSUMER", "StorageClass", "is_default_class"]

ANN_DEFAULT_STORAGE_CLASS = "storageclass.kubernetes.io/is-default-class"
ANN_BETA_DEFAULT_STORAGE_CLASS = "storageclass.beta.kubernetes.io/is-default-class"
BINDING_IMMEDIATE = "Immediate"
BINDING_WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"

_FOUND = resource_for_kind("storage.k8s.io/v1", "StorageClass")
assert _FOUND is not None
_STORAGE_CLASS: ResourceInfo = _FOUND


class StorageClass(KubeObject):
    info: ClassVar[ResourceInfo] = _STORAGE_CLASS
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    provisioner: str = ""
    parameters: dict[str, str] | None = None
    reclaim_policy: str | None = None
    mount_options: list[str] | None = None
    allow_volume_expansion: bool | None = None
    volume_binding_mode: str | None = None


def is_default_class(annotations: dict[str, str] | None) -> bool:
    """storageutil.IsDefaultAnnotation: either the GA or the beta annotation is "true"."""
    ann = annotations or {}
    return ann.get(ANN_DEFAULT_STORAGE_CLASS) == "true" or ann.get(ANN_BETA_DEFAULT_STORAGE_CLASS) == "true"
