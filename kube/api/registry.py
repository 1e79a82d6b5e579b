"""kind -> model class, so generic code (informers, pkctl) can decode any served kind.

A kind without a model of its own (a custom resource, a built-in kind picokube has no typed
model for) decodes into a `DynamicObject` class made for its resource by `dynamic_model`:
its metadata typed, every other field kept as it came (client-go's unstructured objects,
which the garbage collector's metadata informers read the same way).
"""

from __future__ import annotations

import functools
from typing import ClassVar

from pydantic import Field

from kube.api.apps_v1 import Deployment, ReplicaSet
from kube.api.apps_v1_daemonset import ControllerRevision, DaemonSet
from kube.api.apps_v1_statefulset import StatefulSet
from kube.api.base import KubeObject
from kube.api.batch_v1 import Job
from kube.api.batch_v1_cronjob import CronJob
from kube.api.coordination_v1 import Lease
from kube.api.core_v1 import ConfigMap, Event, Namespace, Node, Pod, Secret, ServiceAccount
from kube.api.core_v1_services import Endpoints, Service
from kube.api.core_v1_storage import PersistentVolume, PersistentVolumeClaim
from kube.api.core_v1_workloads import ReplicationController
from kube.api.discovery_v1 import EndpointSlice
from kube.api.meta import ObjectMeta
from kube.api.storage_v1 import StorageClass
from kube.resources import ResourceInfo

__all__ = ["DynamicObject", "dynamic_model", "model_for_kind", "model_for_resource"]

_MODELS: dict[str, type[KubeObject]] = {
    m.info.kind: m for m in (Namespace, Node, Pod, Event, ConfigMap, Secret, ServiceAccount, Deployment,
                              ReplicaSet, Lease, Service, Endpoints, EndpointSlice, ReplicationController, StatefulSet,
                              Job)
}
_MODELS.update({m.info.kind: m for m in (DaemonSet, ControllerRevision)})
_MODELS[CronJob.info.kind] = CronJob
_MODELS.update({m.info.kind: m for m in (PersistentVolume, PersistentVolumeClaim, StorageClass)})


def model_for_kind(kind: str) -> type[KubeObject] | None:
    return _MODELS.get(kind)


def model_for_resource(info: ResourceInfo) -> type[KubeObject] | None:
    return _MODELS.get(info.kind)


class DynamicObject(KubeObject):
    """Any kind: typed metadata, the rest of the object kept as extra fields."""

    info: ClassVar[ResourceInfo]
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)


@functools.cache
def dynamic_model(info: ResourceInfo) -> type[KubeObject]:
    """The model for `info`: its own typed model if it has one of the same version, else a DynamicObject.

    One class per resource (cached), so informers and caches keyed by class stay distinct.
    """
    model = _MODELS.get(info.kind)
    if model is not None and model.info.api_version == info.api_version and model.info.plural == info.plural:
        return model
    name = "".join(part.capitalize() for part in info.group.split(".")) + info.version.capitalize() + info.kind
    return type(name, (DynamicObject,), {"info": info, "__module__": __name__})
