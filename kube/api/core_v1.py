"""core/v1 kinds the components read and write: Namespace, Node, Pod, Binding, Event, ...

Only the fields picokube's components use are declared; everything else round-trips through
`extra="allow"`.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from kube.api.base import KubeModel, KubeObject
from kube.api.core_v1_volumes import (
    ConfigMapKeySelector,
    EnvFromSource,
    ResourceFieldSelector,
    SecretKeySelector,
    Volume,
    VolumeMount,
)
from kube.api.meta import LabelSelector, ObjectMeta
from kube.resources import ResourceInfo, resource_for_kind

__all__ = [
    "Affinity",
    "Binding",
    "ConfigMap",
    "Container",
    "ContainerImage",
    "ContainerPort",
    "ContainerState",
    "ContainerStateRunning",
    "ContainerStateTerminated",
    "ContainerStateWaiting",
    "ContainerStatus",
    "EnvVar",
    "EphemeralContainer",
    "Event",
    "EventSource",
    "ExecAction",
    "HTTPGetAction",
    "Namespace",
    "Node",
    "NodeAddress",
    "NodeAffinity",
    "NodeCondition",
    "NodeSelector",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "NodeSpec",
    "NodeStatus",
    "NodeSystemInfo",
    "ObjectReference",
    "Pod",
    "PodAffinity",
    "PodAffinityTerm",
    "PodCondition",
    "PodDNSConfig",
    "PodDNSConfigOption",
    "PodIP",
    "PodSpec",
    "PodStatus",
    "PodTemplateSpec",
    "PreferredSchedulingTerm",
    "Probe",
    "ResourceRequirements",
    "Secret",
    "ServiceAccount",
    "TCPSocketAction",
    "Taint",
    "Toleration",
    "TopologySpreadConstraint",
    "WeightedPodAffinityTerm",
]


def _info(kind: str) -> ResourceInfo:
    found = resource_for_kind("v1", kind)
    assert found is not None, kind
    return found


class ObjectReference(KubeModel):
    api_version: str | None = None
    kind: str | None = None
    name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    field_path: str | None = None


class NamespaceSpec(KubeModel):
    finalizers: list[str] | None = None


class NamespaceStatus(KubeModel):
    phase: str | None = None


class Namespace(KubeObject):
    info: ClassVar[ResourceInfo] = _info("Namespace")
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: NamespaceSpec | None = None
    status: NamespaceStatus | None = None


class Taint(KubeModel):
    key: str
    value: str | None = None
    effect: str
    time_added: str | None = None


class NodeSpec(KubeModel):
    pod_cidr: str | None = Field(default=None, alias="podCIDR")
    pod_cidrs: list[str] | None = Field(default=None, alias="podCIDRs")
    unschedulable: bool | None = None
    taints: list[Taint] | None = None
    provider_id: str | None = Field(default=None, alias="providerID")


class NodeCondition(KubeModel):
    type: str
    status: str
    last_heartbeat_time: str | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


class NodeAddress(KubeModel):
    type: str
    address: str


class NodeSystemInfo(KubeModel):
    machine_id: str = Field(default="", alias="machineID")
    system_uuid: str = Field(default="", alias="systemUUID")
    boot_id: str = Field(default="", alias="bootID")
    kernel_version: str = ""
    os_image: str = ""
    container_runtime_version: str = ""
    kubelet_version: str = ""
    kube_proxy_version: str = ""
    operating_system: str = ""
    architecture: str = ""


class ContainerImage(KubeModel):
    names: list[str] | None = None
    size_bytes: int | None = None


class NodeStatus(KubeModel):
    capacity: dict[str, str] | None = None
    allocatable: dict[str, str] | None = None
    conditions: list[NodeCondition] | None = None
    addresses: list[NodeAddress] | None = None
    node_info: NodeSystemInfo | None = None
    images: list[ContainerImage] | None = None

    def condition(self, type_: str) -> NodeCondition | None:
        return next((c for c in self.conditions or [] if c.type == type_), None)


class Node(KubeObject):
    info: ClassVar[ResourceInfo] = _info("Node")
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: NodeSpec = Field(default_factory=NodeSpec)
    status: NodeStatus = Field(default_factory=NodeStatus)

    def is_ready(self) -> bool:
        cond = self.status.condition("Ready")
        return cond is not None and cond.status == "True"


class ContainerPort(KubeModel):
    container_port: int
    name: str | None = None
    protocol: str | None = None
    host_port: int | None = None
    host_ip: str | None = Field(default=None, alias="hostIP")


class ObjectFieldSelector(KubeModel):
    field_path: str
    api_version: str | None = None


class EnvVarSource(KubeModel):
    field_ref: ObjectFieldSelector | None = None
    config_map_key_ref: ConfigMapKeySelector | None = None
    secret_key_ref: SecretKeySelector | None = None
    resource_field_ref: ResourceFieldSelector | None = None


class EnvVar(KubeModel):
    name: str
    value: str | None = None
    value_from: EnvVarSource | None = None


class ResourceRequirements(KubeModel):
    requests: dict[str, str] | None = None
    limits: dict[str, str] | None = None


class ExecAction(KubeModel):
    command: list[str] | None = None


class HTTPGetAction(KubeModel):
    path: str | None = None
    port: int | str
    host: str | None = None
    scheme: str | None = None


class TCPSocketAction(KubeModel):
    port: int | str
    host: str | None = None


class Probe(KubeModel):
    exec: ExecAction | None = None
    http_get: HTTPGetAction | None = None
    tcp_socket: TCPSocketAction | None = None
    initial_delay_seconds: int | None = None
    period_seconds: int | None = None
    timeout_seconds: int | None = None
    success_threshold: int | None = None
    failure_threshold: int | None = None


class Container(KubeModel):
    name: str
    image: str | None = None
    command: list[str] | None = None
    args: list[str] | None = None
    env: list[EnvVar] | None = None
    ports: list[ContainerPort] | None = None
    resources: ResourceRequirements | None = None
    image_pull_policy: str | None = None
    working_dir: str | None = None
    liveness_probe: Probe | None = None
    readiness_probe: Probe | None = None
    startup_probe: Probe | None = None
    restart_policy: str | None = None
    """Only on init containers: `Always` makes one a sidecar that keeps running beside the others."""
    stdin: bool | None = None
    stdin_once: bool | None = None
    tty: bool | None = None
    env_from: list[EnvFromSource] | None = None
    volume_mounts: list[VolumeMount] | None = None


class EphemeralContainer(Container):
    """A debugging container added to a running pod (pods/ephemeralcontainers); run once, never restarted."""

    target_container_name: str | None = None
    """The container whose process namespace this one joins."""


class Toleration(KubeModel):
    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None
    toleration_seconds: int | None = None


class NodeSelectorRequirement(KubeModel):
    key: str
    operator: str
    values: list[str] | None = None


class NodeSelectorTerm(KubeModel):
    match_expressions: list[NodeSelectorRequirement] | None = None
    match_fields: list[NodeSelectorRequirement] | None = None


class NodeSelector(KubeModel):
    node_selector_terms: list[NodeSelectorTerm] = Field(default_factory=list)


class PreferredSchedulingTerm(KubeModel):
    weight: int
    preference: NodeSelectorTerm


class NodeAffinity(KubeModel):
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTerm] | None = None


class PodAffinityTerm(KubeModel):
    label_selector: LabelSelector | None = None
    namespaces: list[str] | None = None
    namespace_selector: LabelSelector | None = None
    topology_key: str = ""


class WeightedPodAffinityTerm(KubeModel):
    weight: int
    pod_affinity_term: PodAffinityTerm


class PodAffinity(KubeModel):
    required_during_scheduling_ignored_during_execution: list[PodAffinityTerm] | None = None
    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTerm] | None = None


class Affinity(KubeModel):
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAffinity | None = None


class TopologySpreadConstraint(KubeModel):
    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    match_label_keys: list[str] | None = None


class PodDNSConfigOption(KubeModel):
    """One resolv.conf option (`ndots` with value "2", or `edns0` with none)."""

    name: str | None = None
    value: str | None = None


class PodDNSConfig(KubeModel):
    """What a pod adds to (or, with dnsPolicy None, is the whole of) its resolv.conf."""

    nameservers: list[str] | None = None
    searches: list[str] | None = None
    options: list[PodDNSConfigOption] | None = None


class PodSpec(KubeModel):
    containers: list[Container] = Field(default_factory=list)
    init_containers: list[Container] | None = None
    ephemeral_containers: list[EphemeralContainer] | None = None
    node_name: str | None = None
    node_selector: dict[str, str] | None = None
    scheduler_name: str | None = None
    restart_policy: str | None = None
    termination_grace_period_seconds: int | None = None
    tolerations: list[Toleration] | None = None
    service_account_name: str | None = None
    host_network: bool | None = None
    priority: int | None = None
    priority_class_name: str | None = None
    preemption_policy: str | None = None
    affinity: Affinity | None = None
    topology_spread_constraints: list[TopologySpreadConstraint] | None = None
    overhead: dict[str, str] | None = None
    hostname: str | None = None
    subdomain: str | None = None
    dns_policy: str | None = None
    dns_config: PodDNSConfig | None = None
    volumes: list[Volume] | None = None
    enable_service_links: bool | None = None


class PodTemplateSpec(KubeModel):
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: PodSpec = Field(default_factory=PodSpec)


class PodCondition(KubeModel):
    type: str
    status: str
    last_probe_time: str | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


class ContainerStateRunning(KubeModel):
    started_at: str | None = None


class ContainerStateWaiting(KubeModel):
    reason: str | None = None
    message: str | None = None


class ContainerStateTerminated(KubeModel):
    exit_code: int
    reason: str | None = None
    message: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    container_id: str | None = Field(default=None, alias="containerID")


class ContainerState(KubeModel):
    running: ContainerStateRunning | None = None
    waiting: ContainerStateWaiting | None = None
    terminated: ContainerStateTerminated | None = None


class ContainerStatus(KubeModel):
    name: str
    image: str
    image_id: str = Field(default="", alias="imageID")
    ready: bool = False
    restart_count: int = 0
    started: bool | None = None
    state: ContainerState | None = None
    last_state: ContainerState | None = None
    container_id: str | None = Field(default=None, alias="containerID")


class PodIP(KubeModel):
    ip: str


class PodStatus(KubeModel):
    phase: str | None = None
    conditions: list[PodCondition] | None = None
    message: str | None = None
    reason: str | None = None
    host_ip: str | None = Field(default=None, alias="hostIP")
    pod_ip: str | None = Field(default=None, alias="podIP")
    pod_ips: list[PodIP] | None = Field(default=None, alias="podIPs")
    start_time: str | None = None
    container_statuses: list[ContainerStatus] | None = None
    init_container_statuses: list[ContainerStatus] | None = None
    ephemeral_container_statuses: list[ContainerStatus] | None = None
    nominated_node_name: str | None = None

    def condition(self, type_: str) -> PodCondition | None:
        return next((c for c in self.conditions or [] if c.type == type_), None)


class Pod(KubeObject):
    info: ClassVar[ResourceInfo] = _info("Pod")
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: PodSpec = Field(default_factory=PodSpec)
    status: PodStatus = Field(default_factory=PodStatus)

    def is_ready(self) -> bool:
        """kube.podutil.is_pod_ready, as a method for convenience."""
        from kube.podutil import is_pod_ready  # local: kube.podutil imports this module

        return is_pod_ready(self)


class Binding(KubeObject):
    info: ClassVar[ResourceInfo] = _info("Pod")  # served as the pods/binding subresource
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    target: ObjectReference

    def model_post_init(self, context: object, /) -> None:
        self.api_version = self.api_version or "v1"
        self.kind = self.kind or "Binding"


class EventSource(KubeModel):
    component: str | None = None
    host: str | None = None


class Event(KubeObject):
    info: ClassVar[ResourceInfo] = _info("Event")
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    involved_object: ObjectReference = Field(default_factory=ObjectReference)
    reason: str | None = None
    message: str | None = None
    type: str | None = None
    count: int | None = None
    first_timestamp: str | None = None
    last_timestamp: str | None = None
    event_time: str | None = None
    source: EventSource | None = None
    reporting_component: str | None = None
    reporting_instance: str | None = None
    action: str | None = None


class ConfigMap(KubeObject):
    info: ClassVar[ResourceInfo] = _info("ConfigMap")
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    data: dict[str, str] | None = None


class Secret(KubeObject):
    info: ClassVar[ResourceInfo] = _info("Secret")
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    data: dict[str, str] | None = None
    type: str | None = None


class ServiceAccount(KubeObject):
    info: ClassVar[ResourceInfo] = _info("ServiceAccount")
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
