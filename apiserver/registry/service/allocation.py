"""Which cluster IPs and node ports a Service write takes and gives back.

Mirrors pkg/registry/core/service/storage/alloc.go for a single-stack cluster:
- create: a Service that needs a cluster IP (not ExternalName, not headless) gets the one it
  asks for if that is in range and free, else the next free one; a NodePort or LoadBalancer
  Service's ports get the node ports they ask for, or free ones (ports with the same `port`
  number, e.g. DNS over TCP and UDP, share one);
- update: moving from ExternalName takes a cluster IP, moving to ExternalName gives it back;
  node ports follow the ports (new ones taken, dropped ones given back), and moving to a
  type without node ports gives them all back;
- what an update gives back is given back only once the write is stored (`commit`), what a
  failed write took is given back at once (`revert`).
Requests that cannot be honoured raise `AllocationError` with upstream's field errors; an
exhausted range is a 500, as upstream answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from apiserver.registry.generic import WriteTransaction
from apiserver.registry.service.allocator import AlreadyAllocated, RangeAllocator, RangeFull
from apiserver.registry.service.prepare import needs_cluster_ip, needs_node_port
from apiserver.registry.service.ranges import IPRange, PortRange, parse_port_range
from apiserver.storage.interface import Storage
from apiserver.validation.field import invalid
from kube.errors import FieldError, InternalError

__all__ = ["AllocationError", "ServiceAllocators", "ServiceTransaction", "held_cluster_ips", "held_node_ports",
           "new_service_allocators"]

Obj = dict[str, Any]


class AllocationError(Exception):
    """A requested cluster IP or node port cannot be had: upstream's 422 causes."""

    def __init__(self, errors: list[FieldError]) -> None:
        super().__init__("; ".join(str(e) for e in errors))
        self.errors = errors


def _spec(svc: Obj) -> Obj:
    spec = svc.get("spec")
    return spec if isinstance(spec, dict) else {}


def _ports(svc: Obj) -> list[Obj]:
    ports = _spec(svc).get("ports")
    return [p for p in ports if isinstance(p, dict)] if isinstance(ports, list) else []


def held_cluster_ips(svc: Obj) -> list[str]:
    """The cluster IPs a stored Service holds (none for ExternalName and headless Services)."""
    ips = _spec(svc).get("clusterIPs")
    if not needs_cluster_ip(svc) or not isinstance(ips, list) or not ips or ips[0] == "None":
        return []
    return [ip for ip in ips if isinstance(ip, str) and ip]


def held_node_ports(svc: Obj) -> list[int]:
    return [p["nodePort"] for p in _ports(svc) if isinstance(p.get("nodePort"), int) and p["nodePort"]]


@dataclass
class ServiceTransaction(WriteTransaction):
    """The offsets one write took (`ips`, `ports`) and will give back on commit (`release_*`)."""

    allocators: ServiceAllocators
    dry_run: bool
    ips: list[int] = field(default_factory=list)
    ports: list[int] = field(default_factory=list)
    release_ips: list[int] = field(default_factory=list)
    release_ports: list[int] = field(default_factory=list)
    done: bool = False

    async def commit(self) -> None:
        if self.done or self.dry_run:
            self.done = True
            return
        self.done = True
        await self.allocators.ip_allocator.release(self.release_ips)
        await self.allocators.port_allocator.release(self.release_ports)

    async def revert(self) -> None:
        if self.done or self.dry_run:
            self.done = True
            return
        self.done = True
        await self.allocators.ip_allocator.release(self.ips)
        await self.allocators.port_allocator.release(self.ports)


class ServiceAllocators:
    """The cluster IP range and the node port range, each with its persisted allocation."""

    def __init__(self, *, ip_range: IPRange, port_range: PortRange, ip_allocator: RangeAllocator,
                 port_allocator: RangeAllocator) -> None:
        self.ip_range, self.port_range = ip_range, port_range
        self.ip_allocator, self.port_allocator = ip_allocator, port_allocator

    # --- create ----------------------------------------------------------------------------
    async def allocate_create(self, svc: Obj, *, dry_run: bool) -> ServiceTransaction:
        txn = ServiceTransaction(self, dry_run)
        try:
            if needs_cluster_ip(svc):
                await self._allocate_cluster_ip(svc, txn)
            if needs_node_port(svc):
                await self._allocate_node_ports(svc, [], txn)
        except BaseException:
            await txn.revert()
            raise
        return txn

    async def _allocate_cluster_ip(self, svc: Obj, txn: ServiceTransaction) -> None:
        spec = _spec(svc)
        ips = spec.get("clusterIPs") if isinstance(spec.get("clusterIPs"), list) else []
        if ips and ips[0] == "None":
            return
        families = spec.get("ipFamilies") if isinstance(spec.get("ipFamilies"), list) else []
        if families and families[0] != self.ip_range.family:
            raise AllocationError([invalid("spec.ipFamilies[0]", families[0], "not configured on this cluster")])
        requested = ips[0] if ips else ""
        if requested:
            offset = self.ip_range.offset(requested)
            if offset is None:
                raise AllocationError([invalid("spec.clusterIPs", ips, f"failed to allocate IP {requested}: "
                                               f"{self.ip_range.not_in_range(requested)}")])
            try:
                await self.ip_allocator.allocate(offset, dry_run=txn.dry_run)
            except AlreadyAllocated:
                raise AllocationError([invalid("spec.clusterIPs", ips, f"failed to allocate IP {requested}: "
                                               "provided IP is already allocated")]) from None
        else:
            try:
                offset = await self.ip_allocator.allocate_next(dry_run=txn.dry_run)
            except RangeFull:
                raise InternalError("failed to allocate a serviceIP: range is full") from None
        txn.ips.append(offset)
        ip = self.ip_range.ip(offset)
        spec["clusterIP"] = ip
        spec["clusterIPs"] = [ip]

    async def _take_port(self, port: int, path: str, txn: ServiceTransaction) -> None:
        offset = self.port_range.offset(port)
        if offset is None:
            raise AllocationError([invalid(path, port, self.port_range.not_in_range())])
        try:
            await self.port_allocator.allocate(offset, dry_run=txn.dry_run)
        except AlreadyAllocated:
            raise AllocationError([invalid(path, port, "provided port is already allocated")]) from None
        txn.ports.append(offset)

    async def _next_port(self, txn: ServiceTransaction) -> int:
        try:
            offset = await self.port_allocator.allocate_next(dry_run=txn.dry_run)
        except RangeFull:
            raise InternalError("failed to allocate a nodePort: range is full") from None
        txn.ports.append(offset)
        return self.port_range.port(offset)

    def _should_allocate(self, svc: Obj) -> bool:
        spec = _spec(svc)
        return spec.get("type") == "NodePort" or (spec.get("type") == "LoadBalancer" and
                                                  spec.get("allocateLoadBalancerNodePorts") is not False)

    async def _allocate_node_ports(self, svc: Obj, old_ports: list[int], txn: ServiceTransaction) -> None:
        """Give every port of `svc` its node port; those in `old_ports` are already held."""
        by_port: dict[Any, int] = {}
        taken: set[int] = set(old_ports)
        for i, port in enumerate(_ports(svc)):
            wanted = port.get("nodePort") or 0
            if not wanted and not self._should_allocate(svc):
                continue
            shared = by_port.get(port.get("port"))
            if not wanted and shared:
                port["nodePort"] = shared
                continue
            if not wanted:
                requested = next((p.get("nodePort") for p in _ports(svc)
                                  if p.get("port") == port.get("port") and p.get("nodePort")), 0)
                wanted = requested or 0
            if wanted and wanted not in taken:
                await self._take_port(wanted, f"spec.ports[{i}].nodePort", txn)
                taken.add(wanted)
            elif not wanted:
                wanted = await self._next_port(txn)
                taken.add(wanted)
            port["nodePort"] = wanted
            by_port.setdefault(port.get("port"), wanted)

    # --- update ----------------------------------------------------------------------------
    async def allocate_update(self, new: Obj, old: Obj, *, dry_run: bool) -> ServiceTransaction:
        txn = ServiceTransaction(self, dry_run)
        try:
            if not needs_cluster_ip(old) and needs_cluster_ip(new):
                await self._allocate_cluster_ip(new, txn)
            elif needs_cluster_ip(old) and not needs_cluster_ip(new):
                txn.release_ips += self._ip_offsets(held_cluster_ips(old))
            old_ports = held_node_ports(old)
            if needs_node_port(new):
                await self._allocate_node_ports(new, old_ports, txn)
            kept = set(held_node_ports(new)) if needs_node_port(new) else set()
            txn.release_ports += self._port_offsets(p for p in old_ports if p not in kept)
        except BaseException:
            await txn.revert()
            raise
        return txn

    # --- delete and repair -----------------------------------------------------------------
    def _ip_offsets(self, ips: list[str]) -> list[int]:
        return [o for ip in ips if (o := self.ip_range.offset(ip)) is not None]

    def _port_offsets(self, ports: Any) -> list[int]:
        return [o for p in ports if (o := self.port_range.offset(p)) is not None]

    def held_offsets(self, svc: Obj) -> tuple[list[int], list[int]]:
        """(cluster IP offsets, node port offsets) a stored Service holds within the ranges."""
        return self._ip_offsets(held_cluster_ips(svc)), self._port_offsets(held_node_ports(svc))

    async def release(self, svc: Obj) -> None:
        """Give back everything a deleted Service held."""
        ips, ports = self.held_offsets(svc)
        await self.ip_allocator.release(ips)
        await self.port_allocator.release(ports)


def new_service_allocators(storage: Storage, *, prefix: str, cluster_ip_range: str,
                           node_port_range: str) -> ServiceAllocators:
    """The allocators over upstream's keys (`<prefix>/ranges/serviceips`, `.../servicenodeports`)."""
    root = prefix.rstrip("/")
    ips, ports = IPRange(cluster_ip_range), parse_port_range(node_port_range)
    return ServiceAllocators(
        ip_range=ips, port_range=ports,
        ip_allocator=RangeAllocator(storage, f"{root}/ranges/serviceips", range_text=str(ips.network),
                                    size=ips.size, lower_band=ips.lower_band),
        port_allocator=RangeAllocator(storage, f"{root}/ranges/servicenodeports", range_text=ports.text,
                                      size=ports.size, lower_band=ports.lower_band))
