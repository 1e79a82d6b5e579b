"""Test builders for the controllers' pure logic, in the `make_pod().name("p").obj()` style.

    make_pod().name("p").node("n1").ready(since="2024-01-01T00:00:00Z").obj()
    make_rs().name("web-abc").replicas(3).obj()
    make_deployment().name("web").replicas(3).obj()
    make_service().name("web").port(80, target=8080).obj()

Each call returns a fresh builder; `.obj()` returns a deep copy every time.
"""

from __future__ import annotations

import uuid
from typing import Any

from kube.api import (
    ContainerPort,
    ContainerStatus,
    Deployment,
    DeploymentStrategy,
    Pod,
    PodCondition,
    PodIP,
    ReplicaSet,
    Service,
)
from kube.api.apps_v1 import RollingUpdateDeployment

__all__ = ["DeploymentBuilder", "PodBuilder", "ReplicaSetBuilder", "ServiceBuilder", "make_deployment", "make_pod",
           "make_rs", "make_service"]

_TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}}


class PodBuilder:
    def __init__(self) -> None:
        self._pod = Pod.model_validate({"metadata": {"name": "pod", "namespace": "default", "uid": str(uuid.uuid4()),
                                                     "labels": {"app": "web"}},
                                        "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]},
                                        "status": {"phase": "Pending"}})

    def name(self, name: str) -> PodBuilder:
        self._pod.metadata.name = name
        return self

    def node(self, node_name: str) -> PodBuilder:
        self._pod.spec.node_name = node_name
        return self

    def phase(self, phase: str) -> PodBuilder:
        self._pod.status.phase = phase
        return self

    def created(self, timestamp: str) -> PodBuilder:
        self._pod.metadata.creation_timestamp = timestamp
        return self

    def ready(self, *, since: str) -> PodBuilder:
        self._pod.status.phase = "Running"
        self._pod.status.conditions = [PodCondition(type="Ready", status="True", last_transition_time=since)]
        return self

    def restarts(self, count: int) -> PodBuilder:
        self._pod.status.container_statuses = [ContainerStatus(name="web", image="nginx:1.25", restart_count=count)]
        return self

    def annotation(self, key: str, value: str) -> PodBuilder:
        self._pod.metadata.annotations = {**(self._pod.metadata.annotations or {}), key: value}
        return self

    def terminating(self) -> PodBuilder:
        self._pod.metadata.deletion_timestamp = "2024-01-01T00:00:00Z"
        return self

    def labels(self, **labels: str) -> PodBuilder:
        self._pod.metadata.labels = labels
        return self

    def ip(self, *ips: str) -> PodBuilder:
        """Scheduled and given these IPs (the first is status.podIP); not Ready unless `.ready()`."""
        self._pod.spec.node_name = self._pod.spec.node_name or "node-1"
        self._pod.status.pod_ip = ips[0]
        self._pod.status.pod_ips = [PodIP(ip=ip) for ip in ips]
        return self

    def container_port(self, port: int, *, name: str | None = None, protocol: str = "TCP") -> PodBuilder:
        container = self._pod.spec.containers[0]
        container.ports = [*(container.ports or []),
                           ContainerPort(container_port=port, name=name, protocol=protocol)]
        return self

    def obj(self) -> Pod:
        return self._pod.model_copy(deep=True)


class ReplicaSetBuilder:
    def __init__(self) -> None:
        self._rs = ReplicaSet.model_validate({
            "metadata": {"name": "web-rs", "namespace": "default", "uid": str(uuid.uuid4()), "generation": 1,
                         "creationTimestamp": "2024-01-01T00:00:00Z"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": _TEMPLATE}})

    def name(self, name: str) -> ReplicaSetBuilder:
        self._rs.metadata.name = name
        return self

    def replicas(self, spec: int, *, status: int | None = None, ready: int = 0,
                 available: int = 0) -> ReplicaSetBuilder:
        self._rs.spec.replicas = spec
        self._rs.status.replicas = spec if status is None else status
        self._rs.status.ready_replicas = ready
        self._rs.status.available_replicas = available
        return self

    def image(self, image: str) -> ReplicaSetBuilder:
        self._rs.spec.template.spec.containers[0].image = image
        return self

    def min_ready_seconds(self, seconds: int) -> ReplicaSetBuilder:
        self._rs.spec.min_ready_seconds = seconds
        return self

    def created(self, timestamp: str) -> ReplicaSetBuilder:
        self._rs.metadata.creation_timestamp = timestamp
        return self

    def annotation(self, key: str, value: str) -> ReplicaSetBuilder:
        self._rs.metadata.annotations = {**(self._rs.metadata.annotations or {}), key: value}
        return self

    def obj(self) -> ReplicaSet:
        return self._rs.model_copy(deep=True)


class DeploymentBuilder:
    def __init__(self) -> None:
        self._d = Deployment.model_validate({
            "metadata": {"name": "web", "namespace": "default", "uid": str(uuid.uuid4()), "generation": 1},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": _TEMPLATE}})

    def name(self, name: str) -> DeploymentBuilder:
        self._d.metadata.name = name
        return self

    def replicas(self, replicas: int | None) -> DeploymentBuilder:
        self._d.spec.replicas = replicas
        return self

    def rolling(self, *, max_surge: int | str | None = None,
                max_unavailable: int | str | None = None) -> DeploymentBuilder:
        self._d.spec.strategy = DeploymentStrategy(type="RollingUpdate", rolling_update=RollingUpdateDeployment(
            max_surge=max_surge, max_unavailable=max_unavailable))
        return self

    def recreate(self) -> DeploymentBuilder:
        self._d.spec.strategy = DeploymentStrategy(type="Recreate")
        return self

    def progress_deadline(self, seconds: int) -> DeploymentBuilder:
        self._d.spec.progress_deadline_seconds = seconds
        return self

    def obj(self) -> Deployment:
        return self._d.model_copy(deep=True)


class ServiceBuilder:
    def __init__(self) -> None:
        self._svc: dict[str, Any] = {
            "metadata": {"name": "web", "namespace": "default", "uid": str(uuid.uuid4())},
            "spec": {"type": "ClusterIP", "selector": {"app": "web"}, "clusterIP": "10.96.0.20",
                     "ipFamilies": ["IPv4"], "ports": []}}

    def name(self, name: str) -> ServiceBuilder:
        self._svc["metadata"]["name"] = name
        return self

    def labels(self, **labels: str) -> ServiceBuilder:
        self._svc["metadata"]["labels"] = labels
        return self

    def selector(self, selector: dict[str, str] | None) -> ServiceBuilder:
        self._svc["spec"]["selector"] = selector
        return self

    def headless(self) -> ServiceBuilder:
        self._svc["spec"]["clusterIP"] = "None"
        return self

    def publish_not_ready(self) -> ServiceBuilder:
        self._svc["spec"]["publishNotReadyAddresses"] = True
        return self

    def port(self, port: int, *, target: int | str | None = None, name: str = "",
             protocol: str = "TCP") -> ServiceBuilder:
        entry: dict[str, Any] = {"port": port, "protocol": protocol, "targetPort": port if target is None else target}
        if name:
            entry["name"] = name
        self._svc["spec"]["ports"].append(entry)
        return self

    def obj(self) -> Service:
        return Service.model_validate(self._svc)


def make_service() -> ServiceBuilder:
    return ServiceBuilder()


def make_pod() -> PodBuilder:
    return PodBuilder()


def make_rs() -> ReplicaSetBuilder:
    return ReplicaSetBuilder()


def make_deployment() -> DeploymentBuilder:
    return DeploymentBuilder()
