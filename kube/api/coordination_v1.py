"""coordination.k8s.io/v1 Lease: node heartbeats and leader election."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from kube.api.base import KubeModel, KubeObject
from kube.api.meta import ObjectMeta
from kube.resources import ResourceInfo, resource_for_kind

__all__ = ["Lease", "LeaseSpec"]

_FOUND = resource_for_kind("coordination.k8s.io/v1", "Lease")
assert _FOUND is not None
_LEASE: ResourceInfo = _FOUND


class LeaseSpec(KubeModel):
    holder_identity: str | None = None
    lease_duration_seconds: int | None = None
    acquire_time: str | None = None
    renew_time: str | None = None
    lease_transitions: int | None = None


class Lease(KubeObject):
    info: ClassVar[ResourceInfo] = _LEASE
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: LeaseSpec = Field(default_factory=LeaseSpec)
