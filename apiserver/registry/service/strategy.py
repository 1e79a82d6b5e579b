"""The strategies of Services, Endpoints and EndpointSlices.

Mirrors pkg/registry/core/service/strategy.go, pkg/registry/core/endpoint and
pkg/registry/discovery/endpointslice: a Service starts with an empty load-balancer status,
its server-assigned fields carry over a replace and follow a type change (`prepare`), and it
is validated as upstream validates it (`validation`). Allocation of cluster IPs and node
ports is not the strategy's: the Service store does it around the write (see `store`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from apiserver.registry.service.endpoints_validation import (
    validate_endpoint_slice,
    validate_endpoint_slice_update,
    validate_endpoints,
)
from apiserver.registry.service.prepare import (
    drop_type_dependent_fields,
    init_ip_families,
    normalize_cluster_ips,
    patch_allocated_values,
)
from apiserver.registry.service.validation import validate_service, validate_service_update
from apiserver.registry.strategy import Obj, Strategy
from kube.errors import FieldError

__all__ = ["EndpointSliceStrategy", "EndpointsStrategy", "ServiceStrategy"]


class ServiceStrategy(Strategy):
    """Services; `cluster_family` is the address family of --service-cluster-ip-range."""

    cluster_family = "IPv4"
    selectable_fields: ClassVar[Mapping[str, str]] = {"spec.clusterIP": "spec.clusterIP", "spec.type": "spec.type"}

    def default_status(self, obj: Obj) -> None:
        obj["status"] = {"loadBalancer": {}}

    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)
        normalize_cluster_ips(obj, None)
        init_ip_families(obj, None, cluster_family=self.cluster_family)

    def prepare_for_update(self, new: Obj, old: Obj, *, subresource: str | None) -> None:
        super().prepare_for_update(new, old, subresource=subresource)
        if subresource is not None:
            return
        patch_allocated_values(new, old)
        normalize_cluster_ips(new, old)
        drop_type_dependent_fields(new, old)
        init_ip_families(new, old, cluster_family=self.cluster_family)

    def validate_kind(self, obj: Obj) -> list[FieldError]:
        return validate_service(obj)

    def validate_kind_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return validate_service_update(new, old)


class EndpointsStrategy(Strategy):
    def validate_kind(self, obj: Obj) -> list[FieldError]:
        return validate_endpoints(obj)


class EndpointSliceStrategy(Strategy):
    tracks_generation = True
    """As upstream: a change of endpoints, ports or address type bumps metadata.generation, which
    lets the EndpointSlice controller tell its own writes from others' and a lagging cache."""

    def validate_kind(self, obj: Obj) -> list[FieldError]:
        return validate_endpoint_slice(obj)

    def validate_kind_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return validate_endpoint_slice_update(new, old)
