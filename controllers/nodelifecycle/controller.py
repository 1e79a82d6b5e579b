"""The node lifecycle controller: nodes that stop heartbeating become Unknown and lose their pods.

Mirrors pkg/controller/nodelifecycle with taint-based eviction, reduced:
- every `node_monitor_period` each Node's Lease (`kube-node-lease/<node>`) is checked. A
  Lease not renewed for `node_monitor_grace_period`, measured on this controller's own
  clock from when it last saw the renewTime change (so clock skew between machines does
  not matter), makes every node condition `Unknown` (reason NodeStatusUnknown, "Kubelet
  stopped posting node status.") and adds the `node.kubernetes.io/unreachable:NoExecute`
  taint. A node whose kubelet reports Ready=False gets `node.kubernetes.io/not-ready`
  instead. When the node is healthy again both taints are removed;
- the pods of an Unknown node are marked Ready=False.
Evicting the pods of a tainted node is the taint eviction controller's job
(controllers.tainteviction), for these taints as for any other NoExecute taint.
"""

from __future__ import annotations

import logging

from controllers.context import ControllerContext
from kube.api import Lease, Node, Pod
from kube.errors import ApiError, NotFound
from kube.podutil import is_pod_terminal
from kube.taints import TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE
from kube.timeutil import now_rfc3339

__all__ = ["NOT_READY", "UNREACHABLE", "NodeLifecycleController"]

logger = logging.getLogger(__name__)

UNREACHABLE = TAINT_NODE_UNREACHABLE
NOT_READY = TAINT_NODE_NOT_READY
LEASE_NAMESPACE = "kube-node-lease"


class NodeLifecycleController:
    def __init__(self, ctx: ControllerContext) -> None:
        self.client = ctx.client
        self.clock = ctx.clock
        self.grace = ctx.config.node_monitor_grace_period
        self.period = ctx.config.node_monitor_period
        self.nodes = ctx.informers.informer_for(Node)
        self.leases = ctx.informers.informer_for(Lease, namespace=LEASE_NAMESPACE)
        self.pods = ctx.informers.informer_for(Pod)
        self.pods.add_indexers({"node": lambda p: [p.spec.node_name] if p.spec.node_name else []})
        self._observed: dict[str, tuple[str | None, float]] = {}  # node -> (renewTime seen, when seen)

    async def run(self) -> None:
        while True:
            try:
                await self.monitor()
            except Exception as e:  # noqa: BLE001 - one bad round must not stop node monitoring
                logger.warning("Node monitoring failed, will retry", extra={"error": repr(e)})
            await self.clock.sleep(self.period)

    def _healthy(self, node: Node) -> bool:
        name = str(node.metadata.name)
        lease = self.leases.store.get(f"{LEASE_NAMESPACE}/{name}")
        renew = lease.spec.renew_time if lease is not None else None
        seen = self._observed.get(name)
        now = self.clock.now()
        if seen is None or seen[0] != renew:  # first look, or a renewal: a full grace period from now
            self._observed[name] = (renew, now)
        return now - self._observed[name][1] <= self.grace

    async def monitor(self) -> None:
        for node in self.nodes.store.list():
            healthy = self._healthy(node)
            ready = node.status.condition("Ready")
            if not healthy and (ready is None or ready.status != "Unknown"):
                await self._mark_unknown(node)
            if not healthy:
                want = UNREACHABLE
            elif ready is not None and ready.status == "False":
                want = NOT_READY
            else:
                want = None
            await self._set_taint(node, want)

    async def _mark_unknown(self, node: Node) -> None:
        name = str(node.metadata.name)
        now = now_rfc3339()
        conditions = []
        for c in node.status.conditions or []:
            d = c.to_dict()
            if d.get("status") != "Unknown":
                d.update(status="Unknown", reason="NodeStatusUnknown", message="Kubelet stopped posting node status.",
                         lastTransitionTime=now)
            conditions.append(d)
        if not conditions:
            conditions = [{"type": "Ready", "status": "Unknown", "reason": "NodeStatusNeverUpdated",
                           "message": "Kubelet never posted node status.", "lastTransitionTime": now}]
        await self.client.patch(Node, name, {"status": {"conditions": conditions}}, subresource="status")
        logger.info("Node stopped heartbeating: marked Unknown", extra={"node": name})
        for pod in self.pods.store.by_index("node", name):
            if pod.metadata.deletion_timestamp or is_pod_terminal(pod):
                continue
            conds = [c.to_dict() for c in pod.status.conditions or [] if c.type != "Ready"]
            conds.append({"type": "Ready", "status": "False", "lastTransitionTime": now})
            try:
                await self.client.patch(Pod, str(pod.metadata.name), {"status": {"conditions": conds}},
                                        pod.metadata.namespace, subresource="status")
            except NotFound:
                pass

    async def _set_taint(self, node: Node, want: str | None) -> None:
        taints = [t.to_dict() for t in node.spec.taints or []]
        ours = {UNREACHABLE, NOT_READY}
        kept = [t for t in taints if not (t.get("key") in ours and t.get("effect") == "NoExecute")]
        current = [t for t in taints if t.get("key") in ours and t.get("effect") == "NoExecute"]
        if want is None and not current:
            return
        if want is not None and [t.get("key") for t in current] == [want]:
            return
        new = kept + ([{"key": want, "effect": "NoExecute", "timeAdded": now_rfc3339()}] if want else [])
        patch = {"metadata": {"resourceVersion": node.metadata.resource_version}, "spec": {"taints": new or None}}
        try:
            await self.client.patch(Node, str(node.metadata.name), patch)
            logger.info("Node taints updated", extra={"node": node.metadata.name, "taint": want or "none"})
        except ApiError as e:
            logger.debug("Updating taints failed, next round retries", extra={"error": str(e)})
