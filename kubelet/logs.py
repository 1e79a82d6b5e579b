"""Where container logs come from: the runtime's record of what each container wrote.

`ContainerLogSource` finds a pod's container by the runtime labels (namespace, pod name,
container name) and returns its lines; `previous=True` asks for the instance before the
current one, as `kubectl logs --previous` does. A runtime that keeps no logs raises
LogNotFound with upstream's wording.
"""

from __future__ import annotations

from typing import Protocol

from kubelet.cri.interface import (
    CONTAINER_NAME_LABEL,
    POD_NAME_LABEL,
    POD_NAMESPACE_LABEL,
    ContainerState,
    NotFoundError,
    RuntimeService,
)
from kubelet.cri.logformat import LogLine

__all__ = ["ContainerLogSource", "LogNotFound", "LogReader"]


class LogNotFound(Exception):
    """No such pod or container on this node (or no previous instance)."""


class LogReader(Protocol):
    def container_logs(self, container_id: str) -> list[LogLine]: ...


class ContainerLogSource:
    def __init__(self, runtime: RuntimeService) -> None:
        self.runtime = runtime

    async def _instances(self, ns: str, pod: str, container: str) -> list:  # type: ignore[type-arg]
        found = await self.runtime.list_containers(labels={POD_NAMESPACE_LABEL: ns, POD_NAME_LABEL: pod,
                                                           CONTAINER_NAME_LABEL: container})
        return sorted(found, key=lambda c: (c.attempt, c.created_at))

    async def read(self, ns: str, pod: str, container: str, *, previous: bool) -> tuple[list[LogLine], str]:
        instances = await self._instances(ns, pod, container)
        if previous:
            if len(instances) < 2:
                raise LogNotFound(f'previous terminated container "{container}" in pod "{pod}" not found')
            target = instances[-2]
        elif not instances:
            raise LogNotFound(f'container "{container}" in pod "{pod}" is waiting to start or not found')
        else:
            target = instances[-1]
        reader = getattr(self.runtime, "container_logs", None)
        if reader is None:
            raise LogNotFound(f'the runtime keeps no logs for container "{container}" in pod "{pod}"')
        try:
            result = reader(target.id)
            if hasattr(result, "__await__"):
                result = await result
        except NotFoundError:
            raise LogNotFound(f'container "{container}" in pod "{pod}" not found') from None
        return list(result), target.id

    async def running(self, ns: str, pod: str, container: str) -> bool:
        instances = await self._instances(ns, pod, container)
        return bool(instances) and instances[-1].state == ContainerState.RUNNING
