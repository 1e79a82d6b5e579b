"""What a pod asks for and what a node offers, in the integer units the scheduler accounts in.

Mirrors the scheduler's `framework.Resource` and `resource.PodRequests`:
- cpu in millicores, memory in bytes, pods as a count (only meaningful for allocatable);
- a pod's request is the sum over its containers, raised to the largest init container
  (init containers run one at a time, before the app containers), plus `spec.overhead`;
- a container that sets a limit but no request requests its limit, as the API server's
  defaulting would have written it;
- "non-zero" requests give request-less containers a nominal 100m cpu / 200Mi memory, used
  only for scoring so that best-effort pods still spread instead of piling onto one node.
Pure functions of their input; safe to call from anywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from kube.api import Container, Node, Pod
from kube.quantity import cpu_millis, to_int

__all__ = ["Resource", "pod_requests", "pod_non_zero_requests", "node_allocatable",
           "DEFAULT_MILLI_CPU_REQUEST", "DEFAULT_MEMORY_REQUEST"]

DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024


@dataclass(frozen=True)
class Resource:
    """An amount of schedulable resources; `pods` is a pod count (allocatable only)."""

    milli_cpu: int = 0
    memory: int = 0
    pods: int = 0

    def __add__(self, other: Resource) -> Resource:
        return Resource(self.milli_cpu + other.milli_cpu, self.memory + other.memory, self.pods + other.pods)

    def __sub__(self, other: Resource) -> Resource:
        return Resource(self.milli_cpu - other.milli_cpu, self.memory - other.memory, self.pods - other.pods)

    def max(self, other: Resource) -> Resource:
        return Resource(max(self.milli_cpu, other.milli_cpu), max(self.memory, other.memory),
                        max(self.pods, other.pods))

    def is_zero(self) -> bool:
        return self.milli_cpu == 0 and self.memory == 0


def _amounts(values: Mapping[str, str] | None) -> Resource:
    values = values or {}
    cpu, memory = values.get("cpu"), values.get("memory")
    return Resource(milli_cpu=cpu_millis(cpu) if cpu is not None else 0,
                    memory=to_int(memory) if memory is not None else 0)


def _container_requests(container: Container, *, non_zero: bool) -> Resource:
    res = container.resources
    requests = dict(res.limits or {}) if res else {}
    requests.update((res.requests or {}) if res else {})
    amount = _amounts(requests)
    if non_zero:
        amount = Resource(milli_cpu=amount.milli_cpu if "cpu" in requests else DEFAULT_MILLI_CPU_REQUEST,
                          memory=amount.memory if "memory" in requests else DEFAULT_MEMORY_REQUEST)
    return amount


def _requests(pod: Pod, *, non_zero: bool) -> Resource:
    total = Resource()
    for c in pod.spec.containers:
        total = total + _container_requests(c, non_zero=non_zero)
    for c in pod.spec.init_containers or []:
        total = total.max(_container_requests(c, non_zero=non_zero))
    overhead = (pod.spec.model_extra or {}).get("overhead")
    if isinstance(overhead, dict):
        total = total + _amounts(overhead)
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
    return Resource(base.milli_cpu, base.memory, to_int(pods) if pods is not None else 0)
