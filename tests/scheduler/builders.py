"""Test builders for pods and nodes, in the scheduler's `st.MakePod().Name("p").Req(..).Obj()` style.

    make_pod().name("p").req(cpu="500m", memory="1Gi").obj()
    make_node().name("n1").capacity(cpu="2", memory="4Gi", pods=10).obj()   # Ready by default

Each call returns a fresh builder; `.obj()` returns a new model every time.
"""

from __future__ import annotations

import uuid
from typing import Any

from kube.api import (
    Affinity,
    Container,
    ContainerImage,
    ContainerPort,
    Node,
    NodeCondition,
    Pod,
    ResourceRequirements,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)

__all__ = ["make_pod", "make_node", "PodBuilder", "NodeBuilder"]


class PodBuilder:
    def __init__(self) -> None:
        self._pod = Pod.model_validate({"metadata": {"name": "pod", "namespace": "default",
                                                     "uid": str(uuid.uuid4())},
                                        "spec": {"containers": []}})

    def name(self, name: str) -> PodBuilder:
        self._pod.metadata.name = name
        return self

    def namespace(self, namespace: str) -> PodBuilder:
        self._pod.metadata.namespace = namespace
        return self

    def uid(self, uid: str) -> PodBuilder:
        self._pod.metadata.uid = uid
        return self

    def req(self, *, cpu: str | None = None, memory: str | None = None, limits: bool = False) -> PodBuilder:
        """Add a container requesting `cpu`/`memory` (set as limits only, with `limits=True`)."""
        amounts = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
        res = ResourceRequirements(limits=amounts) if limits else ResourceRequirements(requests=amounts)
        self._pod.spec.containers.append(Container(name=f"c{len(self._pod.spec.containers)}", image="busybox",
                                                   resources=res))
        return self

    def container(self) -> PodBuilder:
        """Add a container that requests nothing."""
        self._pod.spec.containers.append(Container(name=f"c{len(self._pod.spec.containers)}", image="busybox"))
        return self

    def init_req(self, *, cpu: str | None = None, memory: str | None = None) -> PodBuilder:
        amounts = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
        inits = self._pod.spec.init_containers or []
        inits.append(Container(name=f"init{len(inits)}", image="busybox",
                               resources=ResourceRequirements(requests=amounts)))
        self._pod.spec.init_containers = inits
        return self

    def node(self, node_name: str) -> PodBuilder:
        self._pod.spec.node_name = node_name
        return self

    def scheduler_name(self, name: str) -> PodBuilder:
        self._pod.spec.scheduler_name = name
        return self

    def phase(self, phase: str) -> PodBuilder:
        self._pod.status.phase = phase
        return self

    def terminating(self) -> PodBuilder:
        self._pod.metadata.deletion_timestamp = "2024-01-01T00:00:00Z"
        return self

    def toleration(self, key: str, effect: str = "NoSchedule", operator: str = "Exists",
                   value: str | None = None) -> PodBuilder:
        self._pod.spec.tolerations = [*(self._pod.spec.tolerations or []),
                                      Toleration(key=key, operator=operator, effect=effect, value=value)]
        return self

    def label(self, key: str, value: str) -> PodBuilder:
        self._pod.metadata.labels = {**(self._pod.metadata.labels or {}), key: value}
        return self

    def priority(self, value: int) -> PodBuilder:
        self._pod.spec.priority = value
        return self

    def preemption_policy(self, policy: str) -> PodBuilder:
        self._pod.spec.preemption_policy = policy
        return self

    def node_selector(self, **labels: str) -> PodBuilder:
        self._pod.spec.node_selector = {**(self._pod.spec.node_selector or {}), **labels}
        return self

    def _affinity(self) -> dict[str, Any]:
        return self._pod.spec.affinity.to_dict() if self._pod.spec.affinity else {}

    def _set_affinity(self, raw: dict[str, Any]) -> None:
        self._pod.spec.affinity = Affinity.model_validate(raw)

    def node_affinity_in(self, key: str, *values: str, operator: str = "In") -> PodBuilder:
        """Add a required nodeSelectorTerm with one expression (terms are ORed)."""
        raw = self._affinity()
        na = raw.setdefault("nodeAffinity", {})
        required = na.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {"nodeSelectorTerms": []})
        expr: dict[str, Any] = {"key": key, "operator": operator}
        if values:
            expr["values"] = list(values)
        required["nodeSelectorTerms"].append({"matchExpressions": [expr]})
        self._set_affinity(raw)
        return self

    def preferred_node(self, weight: int, key: str, *values: str) -> PodBuilder:
        raw = self._affinity()
        na = raw.setdefault("nodeAffinity", {})
        na.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
            {"weight": weight, "preference": {"matchExpressions": [{"key": key, "operator": "In",
                                                                   "values": list(values)}]}})
        self._set_affinity(raw)
        return self

    def pod_affinity(self, topology_key: str, *, anti: bool = False, weight: int | None = None,
                     **match_labels: str) -> PodBuilder:
        """Add a required (or, with `weight`, preferred) pod (anti-)affinity term."""
        raw = self._affinity()
        group = raw.setdefault("podAntiAffinity" if anti else "podAffinity", {})
        term = {"labelSelector": {"matchLabels": match_labels}, "topologyKey": topology_key}
        if weight is None:
            group.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(term)
        else:
            group.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                {"weight": weight, "podAffinityTerm": term})
        self._set_affinity(raw)
        return self

    def spread(self, max_skew: int, topology_key: str, *, when: str = "DoNotSchedule", min_domains: int | None = None,
               **match_labels: str) -> PodBuilder:
        constraint: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": topology_key, "whenUnsatisfiable": when,
                                      "labelSelector": {"matchLabels": match_labels}}
        if min_domains is not None:
            constraint["minDomains"] = min_domains
        self._pod.spec.topology_spread_constraints = [*(self._pod.spec.topology_spread_constraints or []),
                                                      TopologySpreadConstraint.model_validate(constraint)]
        return self

    def host_port(self, port: int, protocol: str = "TCP", host_ip: str | None = None) -> PodBuilder:
        if not self._pod.spec.containers:
            self.container()
        c = self._pod.spec.containers[-1]
        c.ports = [*(c.ports or []), ContainerPort(container_port=port, host_port=port, protocol=protocol,
                                                   host_ip=host_ip)]
        return self

    def image(self, image: str) -> PodBuilder:
        self._pod.spec.containers.append(Container(name=f"c{len(self._pod.spec.containers)}", image=image))
        return self

    def extended(self, name: str, amount: str) -> PodBuilder:
        self._pod.spec.containers.append(Container(name=f"c{len(self._pod.spec.containers)}", image="busybox",
                                                   resources=ResourceRequirements(requests={name: amount})))
        return self

    def created(self, timestamp: str) -> PodBuilder:
        self._pod.metadata.creation_timestamp = timestamp
        return self

    def obj(self) -> Pod:
        if not self._pod.spec.containers:
            self.container()
        return self._pod.model_copy(deep=True)


class NodeBuilder:
    def __init__(self) -> None:
        self._node = Node.model_validate({"metadata": {"name": "node"}})
        self.capacity(cpu="4", memory="8Gi", pods=110)
        self.ready()

    def name(self, name: str) -> NodeBuilder:
        self._node.metadata.name = name
        return self

    def capacity(self, *, cpu: str = "4", memory: str = "8Gi", pods: int = 110) -> NodeBuilder:
        """Set capacity and allocatable (equal)."""
        amounts = {"cpu": cpu, "memory": memory, "pods": str(pods)}
        self._node.status.capacity = dict(amounts)
        self._node.status.allocatable = dict(amounts)
        return self

    def ready(self, status: str = "True") -> NodeBuilder:
        others = [c for c in self._node.status.conditions or [] if c.type != "Ready"]
        self._node.status.conditions = [*others, NodeCondition(type="Ready", status=status)]
        return self

    def not_ready(self) -> NodeBuilder:
        return self.ready("False")

    def no_conditions(self) -> NodeBuilder:
        self._node.status.conditions = None
        return self

    def unschedulable(self, value: bool = True) -> NodeBuilder:
        self._node.spec.unschedulable = value
        return self

    def label(self, key: str, value: str) -> NodeBuilder:
        self._node.metadata.labels = {**(self._node.metadata.labels or {}), key: value}
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> NodeBuilder:
        self._node.spec.taints = [*(self._node.spec.taints or []), Taint(key=key, value=value or None, effect=effect)]
        return self

    def allocatable(self, name: str, amount: str) -> NodeBuilder:
        assert self._node.status.allocatable is not None
        self._node.status.allocatable[name] = amount
        return self

    def image(self, name: str, size_mb: int) -> NodeBuilder:
        self._node.status.images = [*(self._node.status.images or []),
                                    ContainerImage(names=[name], size_bytes=size_mb * 1024 * 1024)]
        return self

    def obj(self) -> Node:
        return self._node.model_copy(deep=True)


def make_pod() -> PodBuilder:
    return PodBuilder()


def make_node() -> NodeBuilder:
    return NodeBuilder()
