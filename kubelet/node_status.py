"""The Node object: register it, keep its status fresh, renew its Lease.

Mirrors kubelet_node_status.go and the nodelease controller, reduced:
- `register()` creates the Node (labels `kubernetes.io/hostname`, `kubernetes.io/os`,
  `kubernetes.io/arch`, `spec.podCIDR`) or, when it already exists (a restarted kubelet),
  leaves spec alone and only refreshes status; it retries until the API server answers.
  This happens once, at start: a Node deleted later is not created again;
- the status carries capacity/allocatable, addresses (InternalIP, Hostname), nodeInfo,
  `daemonEndpoints.kubeletEndpoint.Port` and the four conditions upstream reports, with
  `lastTransitionTime` kept while a condition's status does not change;
- the Lease `kube-node-lease/<node>` is renewed every `node_status_update_frequency`; it is
  what the node lifecycle controller watches, so it must not wait for anything else.
Every write is a merge patch or an update with the read resourceVersion, so a concurrent
writer (the node lifecycle controller setting taints) is never overwritten.
"""

from __future__ import annotations

import logging
import platform
from typing import Any

from kube.api import Lease, Node
from kube.client import RESTClient
from kube.clock import Clock, RealClock
from kube.errors import AlreadyExists, Conflict, NotFound
from kube.timeutil import now_micro_time, now_rfc3339
from kubelet.config import NODE_LEASE_NAMESPACE, KubeletConfig

__all__ = ["KUBELET_VERSION", "NodeStatusManager"]

logger = logging.getLogger(__name__)

KUBELET_VERSION = "v1.30.0-picokube"
_ARCH = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())


class NodeStatusManager:
    """Registers one Node and keeps its status and Lease current until cancelled."""

    def __init__(self, client: RESTClient, config: KubeletConfig, *, runtime_version: str,
                 clock: Clock | None = None) -> None:
        self.client = client
        self.config = config
        self.runtime_version = runtime_version
        self.clock = clock or RealClock()
        self.kubelet_port = config.port
        self._conditions: dict[str, dict[str, Any]] = {}
        self._node_uid: str | None = None
        self._lease: Lease | None = None  # the last Lease we wrote: renewals need no GET
        self._last_report = 0.0

    # --- the Node ------------------------------------------------------------------------
    def _node_body(self) -> dict[str, Any]:
        name = self.config.node_name
        return {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                                                  "kubernetes.io/arch": _ARCH, "beta.kubernetes.io/os": "linux",
                                                  "beta.kubernetes.io/arch": _ARCH, **self.config.node_labels}},
            "spec": {"podCIDR": self.config.pod_cidr, "podCIDRs": [self.config.pod_cidr],
                     **({"taints": [dict(t) for t in self.config.register_with_taints]}
                        if self.config.register_with_taints else {})},
            "status": self._status(),
        }

    def _condition(self, type_: str, status: str, reason: str, message: str, now: str) -> dict[str, Any]:
        old = self._conditions.get(type_)
        since = old["lastTransitionTime"] if old and old["status"] == status else now
        cond = {"type": type_, "status": status, "lastHeartbeatTime": now, "lastTransitionTime": since,
                "reason": reason, "message": message}
        self._conditions[type_] = cond
        return cond

    def _status(self) -> dict[str, Any]:
        now = now_rfc3339()
        capacity = dict(self.config.capacity)
        return {
            "capacity": capacity, "allocatable": dict(self.config.allocatable or capacity),
            "conditions": [
                self._condition("MemoryPressure", "False", "KubeletHasSufficientMemory",
                                "kubelet has sufficient memory available", now),
                self._condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure",
                                now),
                self._condition("PIDPressure", "False", "KubeletHasSufficientPID",
                                "kubelet has sufficient PID available", now),
                self._condition("Ready", "True", "KubeletReady", "kubelet is posting ready status", now),
            ],
            "addresses": [{"type": "InternalIP", "address": self.config.address},
                          {"type": "Hostname", "address": self.config.node_name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": self.kubelet_port}},
            "nodeInfo": {"machineID": "", "systemUUID": "", "bootID": "", "kernelVersion": platform.release(),
                         "osImage": "picokube", "containerRuntimeVersion": self.runtime_version,
                         "kubeletVersion": KUBELET_VERSION, "kubeProxyVersion": "", "operatingSystem": "linux",
                         "architecture": _ARCH},
        }

    async def register(self) -> None:
        """Create the Node, or refresh an existing one's status; retry until it works."""
        delay = 0.2
        while True:
            try:
                try:
                    await self.client.create(Node.model_validate(self._node_body()))
                    node = await self.update_status()  # the create's status is the server's, not ours
                    logger.info("Node registered", extra={"node": self.config.node_name})
                except AlreadyExists:
                    node = await self.update_status()
                    logger.info("Node already registered, status refreshed", extra={"node": self.config.node_name})
                self._node_uid = node.metadata.uid
                self._last_report = self.clock.now()
                return
            except Exception as e:  # noqa: BLE001 - the API server may not be up yet: keep trying
                logger.warning("Registering node failed, will retry", extra={"error": repr(e)})
                await self.clock.sleep(delay)
                delay = min(delay * 2, 5.0)

    async def update_status(self) -> Node:
        return await self.client.patch(Node, self.config.node_name, {"status": self._status()},
                                       subresource="status")

    # --- the Lease -----------------------------------------------------------------------
    def _lease_spec(self, lease: Lease | None) -> dict[str, Any]:
        now = now_micro_time()
        spec = {"holderIdentity": self.config.node_name,
                "leaseDurationSeconds": self.config.node_lease_duration_seconds, "renewTime": now}
        if lease is None or lease.spec.holder_identity != self.config.node_name:
            spec["acquireTime"] = now
        return spec

    async def renew_lease(self) -> None:
        """Renew from the last written Lease (one request); read it again only after a conflict."""
        name, ns = self.config.node_name, NODE_LEASE_NAMESPACE
        try:
            lease = self._lease or await self.client.get(Lease, name, ns)
        except NotFound:
            body: dict[str, Any] = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                    "metadata": {"name": name, "namespace": ns}, "spec": self._lease_spec(None)}
            if self._node_uid:
                body["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Node", "name": name,
                                                        "uid": self._node_uid}]
            try:
                self._lease = await self.client.create(Lease.model_validate(body))
            except AlreadyExists:
                pass
            return
        spec = {**lease.spec.to_dict(), **self._lease_spec(lease)}
        try:
            self._lease = await self.client.update(
                lease.model_copy(update={"spec": type(lease.spec).model_validate(spec)}))
        except (Conflict, NotFound):
            self._lease = None  # someone else wrote or removed it; the next tick reads it again
            raise

    # --- the loop ------------------------------------------------------------------------
    async def run(self) -> None:
        """Renew the Lease every period and post status every report period; errors are retried.

        As upstream: the Lease is the heartbeat the node lifecycle controller watches; the
        Node's status is rewritten only every `node_status_report_frequency` (its conditions'
        lastHeartbeatTime moves then), so a large cluster is not one status write per node
        per ten seconds.
        """
        period = self.config.node_status_update_frequency
        while True:
            steps = [("lease", self.renew_lease)]
            if self.clock.now() - self._last_report >= self.config.node_status_report_frequency:
                steps.append(("status", self._report))
            for what, step in steps:
                try:
                    await step()
                except NotFound:
                    # As upstream, the kubelet registers its Node only when it starts: a Node
                    # someone deleted stays deleted (and the pod GC removes its pods).
                    if what == "status":
                        logger.warning("Error updating node status, will retry",
                                       extra={"node": self.config.node_name,
                                              "error": f'nodes "{self.config.node_name}" not found'})
                except Conflict:
                    pass
                except Exception as e:  # noqa: BLE001 - a loop boundary: the next heartbeat retries
                    logger.warning("Heartbeat failed, will retry", extra={"what": what, "error": repr(e)})
            await self.clock.sleep(period)

    async def _report(self) -> None:
        await self.update_status()
        self._last_report = self.clock.now()
