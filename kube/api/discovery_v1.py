"""discovery.k8s.io/v1 EndpointSlice: a Service's endpoints, in slices of at most 100.

An EndpointSlice names its Service in the `kubernetes.io/service-name` label and says for
each endpoint whether it takes new connections (`ready`), answers at all (`serving`) and is
on its way out (`terminating`). Conditions are pointers upstream: a missing one means
"unknown", which consumers treat as ready (see `EndpointConditions.is_ready`).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from kube.api.base import KubeModel, KubeObject
from kube.api.core_v1 import ObjectReference
from kube.api.meta import ObjectMeta
from kube.resources import ResourceInfo, resource_for_kind

__all__ = ["Endpoint", "EndpointConditions", "EndpointHints", "EndpointSlice", "EndpointSlicePort",
           "ForZone", "LABEL_MANAGED_BY", "LABEL_SERVICE_NAME"]

LABEL_SERVICE_NAME = "kubernetes.io/service-name"
"""The label naming the Service an EndpointSlice belongs to (discoveryv1.LabelServiceName)."""
LABEL_MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
"""The label naming the controller that manages an EndpointSlice (discoveryv1.LabelManagedBy)."""

_FOUND = resource_for_kind("discovery.k8s.io/v1", "EndpointSlice")
assert _FOUND is not None
_ENDPOINT_SLICE: ResourceInfo = _FOUND


class EndpointConditions(KubeModel):
    ready: bool | None = None
    serving: bool | None = None
    terminating: bool | None = None

    @property
    def is_ready(self) -> bool:
        """Ready, with an unset condition read as true, as the API documents for consumers."""
        return self.ready is not False


class ForZone(KubeModel):
    name: str


class EndpointHints(KubeModel):
    for_zones: list[ForZone] | None = None


class Endpoint(KubeModel):
    addresses: list[str]
    conditions: EndpointConditions = Field(default_factory=EndpointConditions)
    hostname: str | None = None
    target_ref: ObjectReference | None = None
    node_name: str | None = None
    zone: str | None = None
    hints: EndpointHints | None = None


class EndpointSlicePort(KubeModel):
    """discoveryv1.EndpointPort (renamed here: core/v1 has an EndpointPort of its own)."""

    name: str | None = None
    protocol: str | None = None
    port: int | None = None
    app_protocol: str | None = None


class EndpointSlice(KubeObject):
    info: ClassVar[ResourceInfo] = _ENDPOINT_SLICE
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    address_type: str
    endpoints: list[Endpoint] | None = None
    ports: list[EndpointSlicePort] | None = None

    @property
    def service_name(self) -> str | None:
        return (self.metadata.labels or {}).get(LABEL_SERVICE_NAME)
