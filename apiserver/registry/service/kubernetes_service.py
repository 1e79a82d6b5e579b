"""The `kubernetes` Service in `default`, and its Endpoints and EndpointSlice: the API server itself.

Mirrors kube-apiserver's controlplane controller (`CreateOrUpdateMasterServiceIfNeeded`) and
its endpoint reconciler: the Service has the first address of the service range, port 443
named `https` targeting the API server's port, and no selector; its Endpoints and its
EndpointSlice (`kubernetes`, labelled `kubernetes.io/service-name: kubernetes`) list the
advertised address of every API server that reconciled them with the same port. Each API
server reconciles at start and then every interval, writing only what differs, so a user who
deletes or edits them sees them come back. Writes go through the stores, validated as any.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
from typing import Any

from apiserver.registry.generic import RegistryStore
from kube.api.discovery_v1 import LABEL_SERVICE_NAME
from kube.errors import AlreadyExists, ApiError, NotFound

__all__ = ["KubernetesServiceReconciler", "default_advertise_address"]

logger = logging.getLogger(__name__)

Obj = dict[str, Any]
NAME, NAMESPACE, MANAGER = "kubernetes", "default", "kube-apiserver"


def default_advertise_address(bind_address: str) -> str:
    """The bind address when routable, else the address this host reaches the world from."""
    try:
        bound = ipaddress.ip_address(bind_address)
        if not (bound.is_loopback or bound.is_unspecified):
            return bind_address
    except ValueError:
        pass
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the outgoing interface
            return str(probe.getsockname()[0])
        except OSError:
            return "127.0.0.1"


class KubernetesServiceReconciler:
    def __init__(self, *, services: RegistryStore, endpoints: RegistryStore, slices: RegistryStore,
                 cluster_ip: str, address: str, port: int) -> None:
        self.services, self.endpoints, self.slices = services, endpoints, slices
        self.cluster_ip, self.address, self.port = cluster_ip, address, port

    def _ports(self) -> list[Obj]:
        return [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": self.port}]

    async def reconcile_once(self) -> None:
        await self._ensure_service()
        if ipaddress.ip_address(self.address).is_loopback:
            logger.warning("Not publishing the kubernetes endpoints: the advertised address is a loopback one",
                           extra={"address": self.address})
            return
        addresses = await self._addresses()
        await self._ensure(self.endpoints, self._endpoints(addresses), ("subsets",))
        await self._ensure(self.slices, self._slice(addresses), ("addressType", "endpoints", "ports"))

    async def _ensure_service(self) -> None:
        service = {"apiVersion": "v1", "kind": "Service",
                   "metadata": {"name": NAME, "namespace": NAMESPACE,
                                "labels": {"component": "apiserver", "provider": "kubernetes"}},
                   "spec": {"type": "ClusterIP", "clusterIP": self.cluster_ip, "ports": self._ports(),
                            "sessionAffinity": "None"}}
        try:
            current = await self.services.get(NAMESPACE, NAME)
        except NotFound:
            try:
                await self.services.create(NAMESPACE, service, manager=MANAGER)
                return
            except AlreadyExists:
                current = await self.services.get(NAMESPACE, NAME)
        if (current.get("spec") or {}).get("ports") != self._ports():
            def fix(svc: Obj) -> Obj:
                svc.setdefault("spec", {})["ports"] = self._ports()
                return svc
            await self.services.patch(NAMESPACE, NAME, fix, manager=MANAGER)

    async def _addresses(self) -> list[str]:
        """Ours, and those other API servers published with the same port."""
        found = {self.address}
        try:
            current = await self.endpoints.get(NAMESPACE, NAME)
        except NotFound:
            return sorted(found)
        for subset in current.get("subsets") or []:
            if [p.get("port") for p in subset.get("ports") or []] == [self.port]:
                found.update(a.get("ip") for a in subset.get("addresses") or [] if a.get("ip"))
        return sorted(found)

    def _endpoints(self, addresses: list[str]) -> Obj:
        return {"apiVersion": "v1", "kind": "Endpoints",
                "metadata": {"name": NAME, "namespace": NAMESPACE,
                             "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
                "subsets": [{"addresses": [{"ip": ip} for ip in addresses],
                             "ports": [{"name": "https", "port": self.port, "protocol": "TCP"}]}]}

    def _slice(self, addresses: list[str]) -> Obj:
        family = "IPv6" if ipaddress.ip_address(self.address).version == 6 else "IPv4"
        return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": {LABEL_SERVICE_NAME: NAME}},
                "addressType": family,
                "endpoints": [{"addresses": [ip], "conditions": {"ready": True}} for ip in addresses],
                "ports": [{"name": "https", "port": self.port, "protocol": "TCP"}]}

    async def _ensure(self, store: RegistryStore, desired: Obj, fields: tuple[str, ...]) -> None:
        try:
            await store.create(NAMESPACE, desired, manager=MANAGER)
            return
        except AlreadyExists:
            pass
        current = await store.get(NAMESPACE, NAME)
        if all(current.get(f) == desired[f] for f in fields):
            return

        def fix(obj: Obj) -> Obj:
            for f in fields:
                obj[f] = desired[f]
            return obj
        await store.patch(NAMESPACE, NAME, fix, manager=MANAGER)

    async def run(self, interval: float) -> None:
        """Reconcile every `interval` seconds until cancelled; failures are logged and retried."""
        while True:
            try:
                await self.reconcile_once()
            except (ApiError, OSError, ValueError):
                logger.exception("Reconciling the kubernetes Service failed, will retry")
            await asyncio.sleep(interval)
