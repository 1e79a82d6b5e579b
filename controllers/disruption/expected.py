"""How many pods a PodDisruptionBudget expects, and so how many must stay healthy.

Mirrors getExpectedPodCount / getExpectedScale in pkg/controller/disruption/disruption.go:
with maxUnavailable, or a percentage minAvailable, the expected count is the sum of the
scales of the selected pods' controllers, each counted once: a ReplicaSet owned by a
Deployment counts with the Deployment's replicas, a ReplicaSet of its own with its own, and
any other controller through its `scale` subresource. Pods without a controller are listed
as unmanaged (the controller warns about them); a controller whose scale cannot be found
is an error ("found no controllers for pod ..."). With an integer minAvailable the expected
count is simply the number of selected pods.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from controllers.disruption.status import Budget, scaled_value
from kube.api import OwnerReference, Pod, PodDisruptionBudget

__all__ = ["ScaleFinder", "expected_budget"]

ScaleFinder = Callable[[str, OwnerReference], Awaitable[tuple[str, int] | None]]
"""(namespace, controllerRef) -> (uid of the controller that decides the scale, its replicas), or None."""


async def _expected_scale(pods: list[Pod], find_scale: ScaleFinder) -> tuple[int, list[str]]:
    seen: dict[str, int] = {}
    unmanaged: list[str] = []
    for pod in pods:
        ref = pod.metadata.controller_ref()
        if ref is None:
            unmanaged.append(str(pod.metadata.name))
            continue
        found = await find_scale(pod.metadata.namespace or "", ref)
        if found is None:
            raise LookupError(f'found no controllers for pod "{pod.metadata.name}"')
        uid, replicas = found
        seen[uid] = replicas
    return sum(seen.values()), unmanaged


async def expected_budget(pdb: PodDisruptionBudget, pods: list[Pod], find_scale: ScaleFinder) -> Budget:
    """The budget's expected pods and desired healthy count; raises LookupError as upstream errs."""
    spec = pdb.spec
    if spec.max_unavailable is not None:
        expected, unmanaged = await _expected_scale(pods, find_scale)
        desired = max(0, expected - scaled_value(spec.max_unavailable, expected))
        return Budget(expected, desired, unmanaged)
    if isinstance(spec.min_available, int):
        return Budget(len(pods), spec.min_available)
    if isinstance(spec.min_available, str):
        expected, unmanaged = await _expected_scale(pods, find_scale)
        return Budget(expected, scaled_value(spec.min_available, expected), unmanaged)
    return Budget(0, 0)
