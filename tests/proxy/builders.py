"""Service and EndpointSlice dicts as the API serves them, for the proxy's tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["make_service", "make_slice"]


def make_service(name: str, *, namespace: str = "default", cluster_ip: str = "10.96.0.10", type_: str = "ClusterIP",
                 ports: list[dict[str, Any]] | None = None, **spec: Any) -> dict[str, Any]:
    """A Service; `ports` default to one TCP port 80 named http."""
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": namespace},
            "spec": {"type": type_, "clusterIP": cluster_ip,
                     "ports": ports if ports is not None else [{"name": "http", "port": 80, "protocol": "TCP",
                                                               "targetPort": 8080}], **spec}}


def make_slice(service: str, endpoints: Sequence[tuple[str, bool | None]], *, namespace: str = "default",
               name: str | None = None, port: int = 8080, port_name: str = "http", protocol: str = "TCP",
               node: str | None = None, serving: bool | None = None, terminating: bool | None = None,
               labels: dict[str, str] | None = None) -> dict[str, Any]:
    """An IPv4 EndpointSlice of `service` with (address, ready) endpoints (ready None: unset)."""
    eps = []
    for address, ready in endpoints:
        conditions = {k: v for k, v in (("ready", ready), ("serving", serving), ("terminating", terminating))
                      if v is not None}
        eps.append({"addresses": [address], "conditions": conditions, **({"nodeName": node} if node else {})})
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "addressType": "IPv4",
            "metadata": {"name": name or f"{service}-abcde", "namespace": namespace,
                         "labels": {"kubernetes.io/service-name": service, **(labels or {})}},
            "ports": [{"name": port_name, "port": port, "protocol": protocol}], "endpoints": eps}
