"""kind -> model class, so generic code (informers, pkctl) can decode any served kind."""

from __future__ import annotations

from kube.api.apps_v1 import Deployment, ReplicaSet
from kube.api.base import KubeObject
from kube.api.coordination_v1 import Lease
from kube.api.core_v1 import ConfigMap, Event, Namespace, Node, Pod, Secret, ServiceAccount
from kube.resources import ResourceInfo

__all__ = ["model_for_kind", "model_for_resource"]

_MODELS: dict[str, type[KubeObject]] = {
    m.info.kind: m for m in (Namespace, Node, Pod, Event, ConfigMap, Secret, ServiceAccount, Deployment,
                             ReplicaSet, Lease)
}


def model_for_kind(kind: str) -> type[KubeObject] | None:
    return _MODELS.get(kind)


def model_for_resource(info: ResourceInfo) -> type[KubeObject] | None:
    return _MODELS.get(info.kind)
