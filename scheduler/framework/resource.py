"""What a pod asks for and what a node offers, in the integer units the scheduler accounts in.

Mirrors the scheduler's `framework.Resource` and `resource.PodRequests`:
- cpu in millicores, memory in bytes, pods as a count (only meaningful for allocatable),
  extended resources as integers by name;
- a pod's request is the sum over its containers, raised to the largest init container
  (init containers run one at a time, before the app containers), plus `spec.overhead`;
- a container that sets a limit but no request requests its limit, as the API server's
  defaulting would have written it;
- "non-zero" requests give request-less containers a nominal 100m cpu / 200Mi memory, used
  only for scoring so that best-effort pods still spread instead of piling onto one node.
Pure functions of their input; safe to call from anywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from kube.api import Container, Node, Pod
from kube.quantity import cpu_millis, to_int

__all__ = ["Resource", "HostPort", "pod_host_ports", "is_scalar_resource", "pod_requests", "pod_non_zero_requests",
           "node_allocatable", "DEFAULT_MILLI_CPU_REQUEST", "DEFAULT_MEMORY_REQUEST"]

DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024


@dataclass(frozen=True)
class Resource:
    """An amount of schedulable resources; `pods` is a pod count (allocatable only).

    `scalar` holds extended resources (`example.com/gpu`, `hugepages-2Mi`, ...) as integers,
    only those with a non-zero amount.
    """

    milli_cpu: int = 0
    memory: int = 0
    pods: int = 0
    scalar: Mapping[str, int] = field(default_factory=dict)

    def _combine(self, other: Resource, op: Callable[[int, int], int]) -> dict[str, int]:
        names = set(self.scalar) | set(other.scalar)
        combined = {n: op(self.scalar.get(n, 0), other.scalar.get(n, 0)) for n in names}
        return {n: v for n, v in combined.items() if v}

    def __add__(self, other: Resource) -> Resource:
        return Resource(self.milli_cpu + other.milli_cpu, self.memory + other.memory, self.pods + other.pods,
                        self._combine(other, lambda a, b: a + b) if self.scalar or other.scalar else {})

    def __sub__(self, other: Resource) -> Resource:
        return Resource(self.milli_cpu - other.milli_cpu, self.memory - other.memory, self.pods - other.pods,
                        self._combine(other, lambda a, b: a - b) if self.scalar or other.scalar else {})

    def max(self, other: Resource) -> Resource:
        return Resource(max(self.milli_cpu, other.milli_cpu), max(self.memory, other.memory),
                        max(self.pods, other.pods), self._combine(other, max) if self.scalar or other.scalar else {})

    def is_zero(self) -> bool:
        return self.milli_cpu == 0 and self.memory == 0 and not self.scalar


def is_scalar_resource(name: str) -> bool:
    """Extended (`domain/name`, outside kubernetes.io), hugepages and attachable resources count as scalars."""
    if name.startswith(("hugepages-", "attachable-volumes-")):
        return True
    domain, slash, _ = name.partition("/")
    return bool(slash) and not (domain == "kubernetes.io" or domain.endswith(".kubernetes.io"))


def _amounts(values: Mapping[str, str] | None) -> Resource:
    values = values or {}
    cpu, memory = values.get("cpu"), values.get("memory")
    scalar = {name: to_int(v) for name, v in values.items() if is_scalar_resource(name)}
    return Resource(milli_cpu=cpu_millis(cpu) if cpu is not None else 0,
                    memory=to_int(memory) if memory is not None else 0,
                    scalar={n: v for n, v in scalar.items() if v})


def _container_requests(container: Container, *, non_zero: bool) -> Resource:
    res = container.resources
    requests = dict(res.limits or {}) if res else {}
    requests.update((res.requests or {}) if res else {})
    amount = _amounts(requests)
    if non_zero:
        amount = Resource(milli_cpu=amount.milli_cpu if "cpu" in requests else DEFAULT_MILLI_CPU_REQUEST,
                          memory=amount.memory if "memory" in requests else DEFAULT_MEMORY_REQUEST,
                          scalar=amount.scalar)
    return amount


def _requests(pod: Pod, *, non_zero: bool) -> Resource:
    total = Resource()
    for c in pod.spec.containers:
        total = total + _container_requests(c, non_zero=non_zero)
    for c in pod.spec.init_containers or []:
        total = total.max(_container_requests(c, non_zero=non_zero))
    if pod.spec.overhead:
        total = total + _amounts(pod.spec.overhead)
    return total


def pod_requests(pod: Pod) -> Resource:
    """The cpu and memory the pod needs on a node (what NodeResourcesFit checks)."""
    return _requests(pod, non_zero=False)


def pod_non_zero_requests(pod: Pod) -> Resource:
    """Like `pod_requests`, with nominal amounts for unset requests (for scoring only)."""
    return _requests(pod, non_zero=True)


def node_allocatable(node: Node) -> Resource:
    """`status.allocatable` of the node: cpu, memory and the pod count it accepts."""
    alloc = node.status.allocatable or {}
    base = _amounts(alloc)
    pods = alloc.get("pods")
    return Resource(base.milli_cpu, base.memory, to_int(pods) if pods is not None else 0, base.scalar)


HostPort = tuple[str, str, int]
"""(host IP, protocol, port) of one hostPort a container asks for; the IP defaults to 0.0.0.0."""


def pod_host_ports(pod: Pod) -> tuple[HostPort, ...]:
    """The host ports the pod's containers (init containers included) ask for."""
    return tuple((p.host_ip or "0.0.0.0", p.protocol or "TCP", p.host_port)
                 for c in [*(pod.spec.init_containers or []), *pod.spec.containers]
                 for p in c.ports or [] if p.host_port)
