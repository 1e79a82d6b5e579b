"""Test builders for pods and nodes, in the scheduler's `st.MakePod().Name("p").Req(..).Obj()` style.

    make_pod().name("p").req(cpu="500m", memory="1Gi").obj()
    make_node().name("n1").capacity(cpu="2", memory="4Gi", pods=10).obj()   # Ready by default

Each call returns a fresh builder; `.obj()` returns a new model every time.
"""

from __future__ import annotations

import uuid

from kube.api import Container, Node, NodeCondition, Pod, ResourceRequirements, Toleration

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

    def toleration(self, key: str, effect: str = "NoSchedule", operator: str = "Exists") -> PodBuilder:
        self._pod.spec.tolerations = [*(self._pod.spec.tolerations or []),
                                      Toleration(key=key, operator=operator, effect=effect)]
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

    def obj(self) -> Node:
        return self._node.model_copy(deep=True)


def make_pod() -> PodBuilder:
    return PodBuilder()


def make_node() -> NodeBuilder:
    return NodeBuilder()
