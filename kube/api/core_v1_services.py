"""core/v1 Service and Endpoints: a stable virtual address in front of a changing set of pods.

The fields follow k8s.io/api/core/v1 exactly (including the capitalised `clusterIP`,
`clusterIPs`, `externalIPs`, `loadBalancerIP`, whose spelling camelCase conversion would get
wrong); only the fields the components read are declared, the rest round-trips through
`extra="allow"`. Endpoints is the legacy list of addresses per Service that EndpointSlices
(`kube.api.discovery_v1`) superseded; both are still written, as upstream does.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from kube.api.base import KubeModel, KubeObject
from kube.api.core_v1 import ObjectReference
from kube.api.meta import ObjectMeta
from kube.resources import ResourceInfo, resource_for_kind

__all__ = [
    "EndpointAddress",
    "EndpointPort",
    "EndpointSubset",
    "Endpoints",
    "LoadBalancerIngress",
    "LoadBalancerStatus",
    "Service",
    "ServicePort",
    "ServiceSpec",
    "ServiceStatus",
]


def _info(kind: str) -> ResourceInfo:
    found = resource_for_kind("v1", kind)
    assert found is not None, kind
    return found


class ServicePort(KubeModel):
    """One port a Service exposes; `targetPort` is a number or a named container port."""

    port: int
    name: str | None = None
    protocol: str | None = None
    target_port: int | str | None = None
    node_port: int | None = None
    app_protocol: str | None = None


class ServiceSpec(KubeModel):
    type: str | None = None
    selector: dict[str, str] | None = None
    ports: list[ServicePort] | None = None
    cluster_ip: str | None = Field(default=None, alias="clusterIP")
    cluster_ips: list[str] | None = Field(default=None, alias="clusterIPs")
    external_ips: list[str] | None = Field(default=None, alias="externalIPs")
    external_name: str | None = None
    session_affinity: str | None = None
    ip_families: list[str] | None = None
    ip_family_policy: str | None = None
    internal_traffic_policy: str | None = None
    external_traffic_policy: str | None = None
    publish_not_ready_addresses: bool | None = None
    load_balancer_ip: str | None = Field(default=None, alias="loadBalancerIP")


class LoadBalancerIngress(KubeModel):
    ip: str | None = None
    hostname: str | None = None


class LoadBalancerStatus(KubeModel):
    ingress: list[LoadBalancerIngress] | None = None


class ServiceStatus(KubeModel):
    load_balancer: LoadBalancerStatus | None = None


class Service(KubeObject):
    info: ClassVar[ResourceInfo] = _info("Service")
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: ServiceSpec = Field(default_factory=ServiceSpec)
    status: ServiceStatus | None = None

    @property
    def is_headless(self) -> bool:
        """`clusterIP: None`: DNS answers with the endpoints' own addresses, nothing is proxied."""
        return self.spec.cluster_ip == "None"


class EndpointAddress(KubeModel):
    ip: str
    hostname: str | None = None
    node_name: str | None = None
    target_ref: ObjectReference | None = None


class EndpointPort(KubeModel):
    port: int
    name: str | None = None
    protocol: str | None = None
    app_protocol: str | None = None


class EndpointSubset(KubeModel):
    addresses: list[EndpointAddress] | None = None
    not_ready_addresses: list[EndpointAddress] | None = None
    ports: list[EndpointPort] | None = None


class Endpoints(KubeObject):
    info: ClassVar[ResourceInfo] = _info("Endpoints")
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    subsets: list[EndpointSubset] | None = None
