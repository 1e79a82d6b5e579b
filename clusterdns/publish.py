"""How pods reach the DNS server: the `kube-dns` Service, its Endpoints and its EndpointSlice.

As on a kubeadm cluster, pods' resolv.conf names the `kube-dns` Service's cluster IP
(10.96.0.10) and the node proxies send that address's port 53 (UDP and TCP) to the DNS
server. Here the server is a process, not a pod, so the Service has no selector and the
server itself writes where it listens (as the owner of a selector-less Service
does upstream):

- the Service `kube-system/kube-dns` (created once with the wanted cluster IP, ports 53/UDP
  `dns` and 53/TCP `dns-tcp`, targetPort the listening port, which is kept current; a
  Service someone made otherwise, with a selector or other ports, is left as it is);
- the EndpointSlice `kube-system/kube-dns` (label `kubernetes.io/service-name: kube-dns`,
  managed by `picokube-dns`, so the EndpointSlice controller leaves it alone): one ready
  endpoint, `advertise_address`, with ports `dns`/UDP and `dns-tcp`/TCP at the listening port;
- the Endpoints `kube-system/kube-dns` with the same address and ports, labelled
  `endpointslice.kubernetes.io/skip-mirror` so the mirroring controller does not copy it.

`ensure()` is level-triggered and idempotent: it reads each object and writes only what
differs, so calling it on every change of those objects, and periodically, costs a few
GETs. API errors propagate; the caller retries.
"""

from __future__ import annotations

import logging
from typing import Any

from kube.client import RESTClient
from kube.errors import AlreadyExists, NotFound
from kube.resources import ResourceInfo, resource_for_kind

__all__ = ["KUBE_DNS", "KUBE_SYSTEM", "MANAGED_BY", "KubeDNSPublisher", "desired_endpoints", "desired_service",
           "desired_slice", "is_published_object"]

logger = logging.getLogger(__name__)

KUBE_DNS, KUBE_SYSTEM = "kube-dns", "kube-system"
MANAGED_BY = "picokube-dns"
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by"
SKIP_MIRROR_LABEL = "endpointslice.kubernetes.io/skip-mirror"
SERVICE_LABELS = {"k8s-app": "kube-dns", "kubernetes.io/cluster-service": "true", "kubernetes.io/name": "CoreDNS"}
DNS_PORT = 53


def _info(api_version: str, kind: str) -> ResourceInfo:
    found = resource_for_kind(api_version, kind)
    assert found is not None, kind
    return found


SERVICES, ENDPOINTS = _info("v1", "Service"), _info("v1", "Endpoints")
ENDPOINT_SLICES = _info("discovery.k8s.io/v1", "EndpointSlice")


def _ports(port: int) -> list[dict[str, Any]]:
    return [{"name": "dns", "port": port, "protocol": "UDP"}, {"name": "dns-tcp", "port": port, "protocol": "TCP"}]


def desired_service(service_ip: str, port: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": KUBE_DNS, "namespace": KUBE_SYSTEM, "labels": dict(SERVICE_LABELS)},
            "spec": {"type": "ClusterIP", "clusterIP": service_ip, "clusterIPs": [service_ip],
                     "ports": [{**p, "port": DNS_PORT, "targetPort": port} for p in _ports(port)]}}


def desired_slice(address: str, port: int) -> dict[str, Any]:
    family = "IPv6" if ":" in address else "IPv4"
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "addressType": family,
            "metadata": {"name": KUBE_DNS, "namespace": KUBE_SYSTEM,
                         "labels": {SERVICE_NAME_LABEL: KUBE_DNS, MANAGED_BY_LABEL: MANAGED_BY}},
            "endpoints": [{"addresses": [address], "conditions": {"ready": True, "serving": True,
                                                                  "terminating": False}}],
            "ports": _ports(port)}


def desired_endpoints(address: str, port: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Endpoints",
            "metadata": {"name": KUBE_DNS, "namespace": KUBE_SYSTEM, "labels": {SKIP_MIRROR_LABEL: "true"}},
            "subsets": [{"addresses": [{"ip": address}], "ports": _ports(port)}]}


def _differs(current: dict[str, Any], wanted: dict[str, Any], fields: tuple[str, ...]) -> bool:
    labels = current.get("metadata", {}).get("labels") or {}
    if any(labels.get(k) != v for k, v in wanted["metadata"].get("labels", {}).items()):
        return True
    return any(current.get(f) != wanted.get(f) for f in fields)


class KubeDNSPublisher:
    """Keeps the kube-dns Service, Endpoints and EndpointSlice pointing at this server."""

    def __init__(self, client: RESTClient, *, service_ip: str, address: str, port: int) -> None:
        self.client, self.service_ip, self.address, self.port = client, service_ip, address, port

    async def ensure(self) -> None:
        """Create or correct the three objects; ApiError when the API refuses a write."""
        await self._ensure_service()
        await self._ensure(ENDPOINT_SLICES, desired_slice(self.address, self.port), ("addressType", "endpoints",
                                                                                      "ports"))
        await self._ensure(ENDPOINTS, desired_endpoints(self.address, self.port), ("subsets",))

    async def _ensure_service(self) -> None:
        try:
            current = await self.client.get_raw(SERVICES, KUBE_DNS, KUBE_SYSTEM)
        except NotFound:
            try:
                await self.client.create_raw(SERVICES, desired_service(self.service_ip, self.port), KUBE_SYSTEM)
                logger.info("Created the kube-dns Service", extra={"clusterIP": self.service_ip})
            except AlreadyExists:
                pass
            return
        spec = current.get("spec") or {}
        if spec.get("clusterIP") != self.service_ip:
            logger.warning("The kube-dns Service has another cluster IP; pods' resolv.conf may not reach it",
                           extra={"clusterIP": spec.get("clusterIP"), "wanted": self.service_ip})
        wanted = desired_service(self.service_ip, self.port)["spec"]["ports"]
        ports = spec.get("ports") or []
        ours = not spec.get("selector") and {p.get("name") for p in ports} == {p["name"] for p in wanted}
        if ours and any(p.get("targetPort") != self.port for p in ports):
            # A restarted server may listen elsewhere: the Service says where, as `describe svc` shows.
            patch = {"spec": {"ports": [{**p, "targetPort": self.port} for p in ports]}}
            await self.client.patch_raw(SERVICES, KUBE_DNS, patch, KUBE_SYSTEM)
            logger.info("Updated the kube-dns Service's target port", extra={"port": self.port})

    async def _ensure(self, info: ResourceInfo, wanted: dict[str, Any], fields: tuple[str, ...]) -> None:
        try:
            current = await self.client.get_raw(info, KUBE_DNS, KUBE_SYSTEM)
        except NotFound:
            try:
                await self.client.create_raw(info, wanted, KUBE_SYSTEM)
                logger.info("Published where the DNS server listens",
                            extra={"kind": info.kind, "address": f"{self.address}:{self.port}"})
            except AlreadyExists:
                pass
            return
        if not _differs(current, wanted, fields):
            return
        labels = {**(current["metadata"].get("labels") or {}), **wanted["metadata"]["labels"]}
        body = {**wanted, "metadata": {**current["metadata"], "labels": labels}}
        await self.client.replace_raw(info, body, name=KUBE_DNS, namespace=KUBE_SYSTEM)
        logger.info("Updated where the DNS server listens",
                    extra={"kind": info.kind, "address": f"{self.address}:{self.port}"})


def is_published_object(obj: Any) -> bool:
    """True for the Service or EndpointSlice `kube-system/kube-dns` (a change there needs `ensure()`)."""
    meta = getattr(obj, "metadata", None)
    return meta is not None and meta.namespace == KUBE_SYSTEM and meta.name == KUBE_DNS

